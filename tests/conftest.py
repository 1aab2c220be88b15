"""Hypothesis for the whole suite: the same examples on every run of one commit, so a run
passes or fails on the code, not on the draw. ``HYPOTHESIS_PROFILE=explore`` draws fresh
examples (and keeps failures in the local database) for hunting new counterexamples.

Also the helpers the tests share (``from conftest import ...``): :func:`slow_examples`,
:func:`on_one_and_two_threads`."""

import os

import numba
from hypothesis import HealthCheck, settings

settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def slow_examples(max_examples: int) -> settings:
    """The settings of a property test whose examples each run a learner: ``max_examples``
    derandomised examples (the same on every run), no deadline, and no health check
    for slow data generation (a drawn MDP can be large)."""
    return settings(max_examples=max_examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def on_one_and_two_threads(learn):
    """``learn()`` computed on one of numba's threads, then on two (at most the threads
    numba has): the two results, which must be the same numbers."""
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = learn()
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = learn()
    finally:
        numba.set_num_threads(threads)
    return one, two
