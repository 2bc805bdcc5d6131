"""pitree's settings with one more URL, used only by ``load.py``: a minimal view to compare with."""

from pitree_web.settings import *  # noqa: F403

ROOT_URLCONF = "_load_urls"
