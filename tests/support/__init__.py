"""Helpers several test folders share (on the path through ``pythonpath`` in pyproject.toml)."""
