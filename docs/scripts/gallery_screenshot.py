"""docs/gallery.png: the top of a run's gallery (its summary and first cards), as headless
Chromium draws it.

    python -m tabular.experiments --out results       # the full run the picture shows
    python docs/scripts/gallery_screenshot.py results [OUT]   # default: docs/gallery.png

Needs Debian's ``chromium`` and ``chromium-driver`` and selenium (``make`` installs them).
"""

import shutil
import sys
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

#: The window, in CSS pixels: wide enough for a card's figure and check table side by
#: side, tall enough for the summary and the first cards.
WIDTH, HEIGHT = 1400, 2200


def main(results: Path, out: Path) -> None:
    index = (results / "index.html").resolve()
    if not index.is_file():
        raise SystemExit(f"{index} does not exist: run python -m tabular.experiments "
                         f"--out {results} first")
    browser_path = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))),
                        None)
    driver_path = shutil.which("chromedriver")
    if browser_path is None or driver_path is None:
        raise SystemExit("needs chromium and chromedriver: apt-get install chromium "
                         "chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = browser_path
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", f"--window-size={WIDTH},{HEIGHT}",
                     "--hide-scrollbars"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        driver.get(index.as_uri())
        WebDriverWait(driver, 120).until(lambda d: d.execute_script(
            "return document.readyState === 'complete' && "
            "[...document.images].every(img => img.complete && img.naturalWidth > 0)"))
        driver.save_screenshot(str(out))
    finally:
        driver.quit()
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else
         Path(__file__).resolve().parents[1] / "gallery.png")
