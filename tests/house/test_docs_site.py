"""The documentation site in a real browser: headless Chromium through selenium.

The site is ``make docs``'s build in ``docs/_build/html``, reused when it is newer than
every page and module it is built from, else built here the same way (warnings as
errors, every reference resolved) into a temporary directory. The index, the gallery
and one API page must render (title, body text), every image on them must decode, and
every link into the site must reach an existing page and, for ``#fragment``, an
element with that id.
Skipped, saying why, where Sphinx (with no fresh build), selenium, Chromium or its
driver is missing (``make docs`` installs the ``[docs]`` extra; ``make browser``
Debian's ``chromium`` and ``chromium-driver``).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import headless_chromium, needs_chromium

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SITE = DOCS / "_build" / "html"
#: What the site is built from: a change to any of these makes a build stale.
SOURCES = ("README.md", "docs/**/*.md", "docs/**/*.rst", "docs/**/*.py", "docs/figures/*",
           "tabular/**/*.py", "envs/**/*.py", "experiments/**/*.py")
#: The pages opened, and a text each must show.
PAGES = {"index.html": "A tour", "gallery.html": "cliff walking",
         "api/solve.html": "value_iteration"}

pytest.importorskip("selenium.webdriver",
                    reason="selenium is not installed: pip install -e '.[docs]'")
pytestmark = needs_chromium


def _stale() -> bool:
    index = SITE / "index.html"
    if not index.exists():
        return True
    built = index.stat().st_mtime
    return any(path.stat().st_mtime > built for pattern in SOURCES
               for path in ROOT.glob(pattern) if path.is_file() and SITE not in path.parents)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if not _stale():
        return SITE
    if importlib.util.find_spec("sphinx") is None or importlib.util.find_spec(
            "myst_parser") is None:
        pytest.skip("no fresh build in docs/_build/html and Sphinx is not installed: "
                    "make docs")
    # built apart, so that two test workers never write one directory
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-b", "html", "-W",
                            "--keep-going", "-n", "-q", str(DOCS), str(out)],
                           capture_output=True, text=True, cwd=ROOT)
    assert build.returncode == 0, build.stderr
    return out


@pytest.fixture(scope="module")
def browser():
    driver = headless_chromium("1280,1000")
    yield driver
    driver.quit()


class _Ids(HTMLParser):
    """Every ``id`` (and ``name`` of an ``<a>``) in a page: the fragments it offers."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key == "id" or (tag == "a" and key == "name"):
                self.ids.add(value)


def _ids(page: Path, cache: dict) -> set[str]:
    if page not in cache:
        parser = _Ids()
        parser.feed(page.read_text(encoding="utf-8"))
        cache[page] = parser.ids
    return cache[page]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_renders_with_images_and_links_that_resolve(site, browser, page):
    browser.get((site / page).as_uri())
    assert "tabular-zoo" in browser.title
    body = browser.execute_script("return document.body.innerText")
    assert PAGES[page] in body and len(body) > 500

    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.currentSrc || i.src, i.complete, "
        "i.naturalWidth])")
    broken = [src for src, complete, width in images if not (complete and width > 0)]
    assert not broken, f"{page}: images that do not decode: {broken}"
    if page in ("index.html", "gallery.html"):
        assert len(images) >= 4, f"{page}: the figures are missing"

    hrefs = browser.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    assert hrefs
    cache: dict = {}
    unresolved = []
    for href in hrefs:
        url = urlsplit(href)
        if url.scheme in ("http", "https", "mailto"):
            continue
        assert url.scheme == "file", f"{page}: a link of scheme {url.scheme!r}: {href}"
        target = Path(unquote(url.path))
        if site.resolve() not in target.resolve().parents:
            unresolved.append(f"{href} (outside the site)")
        elif not target.is_file():
            unresolved.append(f"{href} (no such page)")
        elif url.fragment and unquote(url.fragment) not in _ids(target, cache):
            unresolved.append(f"{href} (no such anchor)")
    assert not unresolved, f"{page}: links that do not resolve:\n" + "\n".join(unresolved)


def test_api_page_documents_the_family(site, browser):
    """The API page of a family holds each public function once, with its parameters."""
    browser.get((site / "api" / "learn.html").as_uri())
    entries = browser.execute_script(
        "return Array.from(document.querySelectorAll('dt.sig[id]')).map(d => d.id)")
    import tabular.learn

    for name in tabular.learn.__all__:
        obj = getattr(tabular.learn, name)
        assert entries.count(f"{obj.__module__}.{name}") == 1, name
    sarsa = browser.find_element("id", "tabular.learn.td.sarsa").find_element(
        "xpath", "following-sibling::dd")
    assert re.search(r"mdp\s+[–-]+\s+a TabularMDP", sarsa.text), sarsa.text[:300]
