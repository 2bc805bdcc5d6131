"""The pitree Django app: views, templates and live updates over session files."""
