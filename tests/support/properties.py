"""How many examples a property test runs: what the test asks for, at least the profile's.

A cheap property may ask for more than the quick ``ci`` profile's 25; the ``thorough`` profile still
raises every test to its 1,000 (``HYPOTHESIS_PROFILE=thorough``)."""

from __future__ import annotations

from hypothesis import settings


def examples(wanted: int) -> int:
    return max(wanted, settings.default.max_examples)
