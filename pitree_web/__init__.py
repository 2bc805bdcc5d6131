"""Django project package for pitree: settings, URLs and the ASGI entry point."""
