"""Hypothesis for the whole suite: the same examples on every run of one commit, so a run
passes or fails on the code, not on the draw. ``HYPOTHESIS_PROFILE=explore`` draws fresh
examples (and keeps failures in the local database) for hunting new counterexamples."""

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
