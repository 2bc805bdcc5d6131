"""How many examples a property test runs: what the test asks for, at least the profile's.

A cheap property may ask for more than the ``ci`` profile's 25; the ``thorough`` profile still raises
every test to its 1,000 (``HYPOTHESIS_PROFILE=thorough``). The quick tier's ``quick`` profile (what
``./scripts/test --quick`` sets) runs every property at the profile's own count: the edit-test loop
checks each property on a few examples, the whole suite on as many as the test asks for."""

from __future__ import annotations

import os

from hypothesis import settings

QUICK = os.environ.get("HYPOTHESIS_PROFILE") == "quick"


def examples(wanted: int) -> int:
    return settings.default.max_examples if QUICK else max(wanted, settings.default.max_examples)
