"""The gallery of a quick run in a real browser: headless Chromium through selenium.

Every image decodes, every card holds its check table, a click enlarges a figure,
and the console shows no errors. Skipped, saying why, where Chromium, its driver or
selenium is missing (``make`` installs them: Debian's ``chromium`` and
``chromium-driver``, and selenium from the ``[dev]`` extra).
"""

from __future__ import annotations

import json

import pytest
from conftest import headless_chromium, needs_chromium

from tabular.experiments.harness import cli, gallery, storage

#: Cheap experiments with one figure or more each: two deterministic, one sampled.
RUN = ("gridworld_values", "policy_evaluation", "cliff_walking")

pytest.importorskip("selenium.webdriver",
                    reason="selenium is not installed: pip install -e '.[dev]'")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser():
    driver = headless_chromium("1400,1000", {"goog:loggingPrefs": {"browser": "ALL"}})
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def quick_gallery(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser-gallery")
    assert cli.main(["--quick", "--out", str(out), *RUN]) == 0
    return out


def test_the_gallery_renders_in_headless_chromium(browser, quick_gallery):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((quick_gallery / gallery.INDEX).as_uri())
    WebDriverWait(browser, 60).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && "
        "[...document.images].every(img => img.complete)"))

    sizes = browser.execute_script(
        "return [...document.images].map(img => [img.getAttribute('src'), img.naturalWidth])")
    pngs = [f"{name}/{png}" for name in RUN
            for png in json.loads((quick_gallery / name / storage.CONFIG).read_text())["files"]
            if png.endswith(".png")]
    assert sorted(src for src, _ in sizes) == sorted(pngs)
    assert all(width > 0 for _, width in sizes), sizes  # every image decoded

    cards = browser.find_elements(By.CSS_SELECTOR, "section.card")
    assert [card.get_attribute("id") for card in cards] == list(RUN)
    for name, card in zip(RUN, cards, strict=True):
        stored = json.loads((quick_gallery / name / storage.CONFIG).read_text())
        table = card.find_elements(By.CSS_SELECTOR, "table.checks")
        assert len(table) == 1, f"{name}'s card has no check table"
        shown = [cell.text for cell in table[0].find_elements(By.CSS_SELECTOR, "td.check")]
        assert shown == [verdict["name"] for verdict in stored["checks"]], name

    first = browser.find_element(By.CSS_SELECTOR, "a.zoom")
    first.click()  # enlarges the figure over the page
    box = browser.find_element(By.ID, "lightbox")
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "const img = document.querySelector('#lightbox img');"
        "return img !== null && img.complete && img.naturalWidth > 0"))
    assert box.is_displayed()
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    assert not box.is_displayed()

    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == [], errors
