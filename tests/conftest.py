"""Hypothesis for the whole suite: the same examples on every run of one commit, so a run
passes or fails on the code, not on the draw. ``HYPOTHESIS_PROFILE=explore`` draws fresh
examples (and keeps failures in the local database) for hunting new counterexamples.

Also the helpers the tests share (``from conftest import ...``): :func:`slow_examples`,
:func:`on_one_and_two_threads`."""

import os
import shutil

import numba
import pytest
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


#: Chromium and its driver for the browser tests (``None`` where missing).
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)
CHROMEDRIVER = shutil.which("chromedriver")
#: Skips a browser test, saying why, where Chromium or its driver is missing.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="headless Chromium needs chromium and chromedriver on PATH: "
           "apt-get install chromium chromium-driver (make browser does it)")


def headless_chromium(window: str, capabilities: dict | None = None):
    """A headless Chromium session through selenium, with a ``window`` of ``"W,H"``
    pixels and the given capabilities (skips where selenium is missing)."""
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed: pip install -e '.[dev]'")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", f"--window-size={window}"):
        options.add_argument(argument)
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(120)
    return driver
