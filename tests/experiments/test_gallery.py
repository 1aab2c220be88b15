"""The gallery (``OUT/index.html`` and ``OUT/checks.md``) written from the runs' records,
the checks' comparisons it shows, and ``--backend ray`` without Ray."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tabular.experiments.harness import checks, cli, gallery, provenance, registry, storage
from tabular.experiments.harness.executor import RAY_MISSING, RayExecutor

ROOT = Path(__file__).resolve().parents[2]
CHEAP = ("gridworld_values", "policy_evaluation")  # deterministic, a few seconds each


class Page(HTMLParser):
    """The parts of the page the tests read: cards, their tables and their links."""

    def __init__(self, text: str):
        super().__init__()
        self.cards: dict[str, dict] = {}
        self.card: dict | None = None
        self.tags: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "section" and "card" in attrs.get("class", ""):
            self.card = self.cards[attrs["id"]] = {"tables": [], "links": [], "images": [],
                                                   "overrides": 0, "text": []}
        elif self.card is not None:
            if tag == "table":
                self.card["tables"].append(attrs.get("class", ""))
            elif tag == "a":
                self.card["links"].append(attrs["href"])
            elif tag == "img":
                self.card["images"].append(attrs["src"])
            elif tag == "tr" and attrs.get("class") == "override":
                self.card["overrides"] += 1

    def handle_endtag(self, tag):
        self.tags.pop()
        if tag == "section":
            self.card = None

    def handle_data(self, data):
        if self.card is not None:
            self.card["text"].append(data)


def page(out: Path) -> Page:
    return Page((out / gallery.INDEX).read_text())


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A quick run of two cheap experiments through the command line."""
    out = tmp_path_factory.mktemp("gallery")
    assert cli.main(["--quick", "--out", str(out), *CHEAP]) == 0
    return out


def test_the_gallery_has_a_card_per_run_with_its_checks_settings_and_files(two_runs):
    cards = page(two_runs).cards
    assert list(cards) == list(CHEAP)
    for name, card in cards.items():
        stored = json.loads((two_runs / name / storage.CONFIG).read_text())
        text = " ".join(card["text"])
        assert "checks" in card["tables"], name
        for verdict in stored["checks"]:
            assert verdict["name"] in text, (name, verdict["name"])
            for measure in verdict["measures"]:
                assert measure["quantity"] in text and measure["measured"] in text
        assert registry.load(name).REPRODUCES in text
        pngs = [f for f in stored["files"] if f.endswith(".png")]
        assert card["images"] == [f"{name}/{png}" for png in pngs]
        for link in card["links"]:  # every link leads to a file that is there
            assert (two_runs / link).resolve().is_file(), link
        assert f"{name}/numbers.npz" in card["links"] and f"{name}/config.json" in card["links"]
        source = f"experiments/{gallery.source_file(name)}"
        assert any(link.endswith(source) for link in card["links"])
        assert card["overrides"] == 0
    summary = (two_runs / gallery.INDEX).read_text().split('<section class="card"')[0]
    passed = sum(len(json.loads((two_runs / n / storage.CONFIG).read_text())["checks"])
                 for n in CHEAP)
    assert re.search(rf"checks passed</span>{passed}<", summary), summary
    assert "checks failed</span>0<" in summary and (provenance.commit() or "unknown") in summary


def test_the_page_loads_nothing_from_outside(two_runs):
    text = (two_runs / gallery.INDEX).read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert "@import" not in text and "url(" not in text


def test_checks_md_holds_the_same_tables(two_runs):
    text = (two_runs / gallery.CHECKS).read_text()
    for name in CHEAP:
        stored = json.loads((two_runs / name / storage.CONFIG).read_text())
        assert f"## {name}: passed" in text
        for verdict in stored["checks"]:
            assert f"| {verdict['name']} |" in text
        for png in (f for f in stored["files"] if f.endswith(".png")):
            assert f"]({name}/{png})" in text


def test_a_run_of_one_experiment_keeps_the_others_and_marks_its_overrides(two_runs, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(two_runs, out)
    assert cli.main(["gridworld_values", "--quick", "--out", str(out),
                        "--set", "gamma=0.95"]) == 0
    cards = page(out).cards
    assert list(cards) == list(CHEAP)
    text = " ".join(cards["gridworld_values"]["text"])
    assert "not run: gamma = 0.95, the book uses 0.9" in text
    assert cards["gridworld_values"]["overrides"] == 1
    assert "checks not applicable</span>1<" in (out / gallery.INDEX).read_text()
    assert "**0.95** (--set) | 0.9 |" in (out / gallery.CHECKS).read_text()


def test_the_gallery_escapes_every_text_of_a_record(tmp_path):
    hostile = '<script>alert("x")</script> & | pipe'
    (tmp_path / "bandits").mkdir()
    record = {"experiment": "bandits", "description": hostile, "reproduces": hostile,
              "config": {"steps": hostile}, "overrides": {"steps": hostile}, "seed": 0,
              "files": ["numbers.npz", 'a"b.png'], "seconds": 1.0,
              "checks": [{"name": "book_figures", "doc": hostile, "status": "failed",
                          "failures": [hostile], "changed": [],
                          "measures": [{"quantity": hostile, "expected": hostile,
                                        "measured": hostile, "tolerance": hostile,
                                        "passed": False, "failure": hostile}]}]}
    (tmp_path / "bandits" / storage.CONFIG).write_text(json.dumps(record))
    gallery.write(tmp_path, registry.EXPERIMENTS)
    text = (tmp_path / gallery.INDEX).read_text()
    assert "<script>alert" not in text and "&lt;script&gt;alert(&quot;x&quot;)" in text
    assert 'a"b.png' not in text and "a%22b.png" in text
    assert text.count("<script>") == 1  # the page's own
    cards = Page(text).cards
    assert list(cards) == ["bandits"] and cards["bandits"]["overrides"] == 1
    assert "failed" in " ".join(cards["bandits"]["text"])
    md = (tmp_path / gallery.CHECKS).read_text()
    assert "\\| pipe" in md and "## bandits: failed" in md


def test_gallery_module_rewrites_the_page_from_the_records(two_runs, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(two_runs, out)
    (out / gallery.INDEX).unlink()
    (out / gallery.CHECKS).unlink()
    done = subprocess.run([sys.executable, "-m", "tabular.experiments.harness.gallery", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert list(page(out).cards) == list(CHEAP)
    assert gallery.main([str(tmp_path / "missing")]) == 2


def test_a_measure_that_fails_is_a_failure_of_its_check():
    module = registry.load("gridworld_values")

    @checks.check()
    def words_and_numbers(results):
        """Two comparisons and a failure in words."""
        return [checks.within("x", measured=1.0, expected=1.05, tolerance=0.1, failure="x is off"),
                checks.inside("y", measured=3.0, low=0.0, high=2.0, failure="y is outside"),
                "z went wrong"]

    fake = type(module)("tabular.experiments.fake")
    fake.Config, fake.words_and_numbers = module.Config, words_and_numbers
    [verdict] = checks.judge(fake, {})
    assert verdict.status == checks.FAILED
    assert verdict.failures == ("y is outside", "z went wrong")
    assert [m.passed for m in verdict.measures] == [True, False]
    back = checks.Verdict.from_record(json.loads(json.dumps(verdict.record())))
    assert back.failures == verdict.failures and back.status == verdict.status
    assert [(m.quantity, m.measured, m.passed) for m in back.measures] == [
        ("x", "1", True), ("y", "3", False)]
    rows = gallery.check_rows(back)
    assert [row[-1] for row in rows] == ["passed", "failed: y is outside", "failed"]


def test_every_experiment_says_what_it_reproduces():
    for name in registry.EXPERIMENTS:
        reproduces = registry.load(name).REPRODUCES
        assert isinstance(reproduces, str) and len(reproduces) > 20, name
        # a published source: the book, a paper's year or its arXiv number (the labs')
        cites = ("Sutton & Barto" in reproduces or "arXiv" in reproduces
                 or re.search(r"\b(19|20)\d\d\b", reproduces))
        assert cites or reproduces.startswith("no published"), name


# ---------------------------------------------------------------- --backend ray without Ray
def test_ray_backend_without_ray_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, find_spec finds none
    with pytest.raises(SystemExit) as stop:
        cli.main(["policy_evaluation", "--backend", "ray", "--out", str(tmp_path)])
    assert stop.value.code == 2
    log = capsys.readouterr()
    assert log.out == ""
    assert log.err.splitlines() == [f"python -m tabular.experiments: error: {RAY_MISSING}"]
    assert "pip install 'tabular-zoo[ray]'" in log.err
    with pytest.raises(ImportError, match=re.escape("pip install 'tabular-zoo[ray]'")):
        RayExecutor()


def test_ray_backend_without_ray_prints_no_traceback():
    code = ("import sys; sys.modules['ray'] = None; "
            "from tabular.experiments.harness.cli import main; "
            "sys.exit(main(['policy_evaluation', '--backend', 'ray', '--list']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr == f"python -m tabular.experiments: error: {RAY_MISSING}\n"
