"""Every value a document prints is the value the code prints now.

The README and the guides show results as a comment on the line that prints them,
``print(x, y)  # 0.4146 0.0011: what they are`` (or, for a long line, on the comment
line right below it). The *claim* is the comment's text up to its first ``": "`` outside brackets;
a claim that starts with a word (``# the layout, with @ on the start cell``) is prose
and is not checked. The rule a claim is checked by:

- the claim and the printed line are compared after collapsing runs of blanks (and
  the blanks NumPy pads an array's brackets with);
- every number in the claim stands for the printed number at the same place, rounded
  to the claim's decimals (``0.4146`` claims ``round(x, 4) == 0.4146``); a number
  written with a trailing ``...`` is truncated instead (``-11.204...`` claims that the
  printed number starts with ``-11.204``);
- everything else (words, brackets, commas) must be printed as written;
- a claim of numbers only (``# 0.0074``) beside a print that also prints words is
  compared with the printed numbers alone.

Each block runs as a user runs it: in order, in one namespace, from a scratch folder.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:\.\.\.)?")


def claim_of(comment: str) -> str | None:
    """The claim of a ``# ...`` comment, or None for prose."""
    text = comment.lstrip("#").strip()
    depth = 0
    for i, char in enumerate(text):  # the first ": " outside brackets ends the claim
        depth += (char in "([{") - (char in ")]}")
        if depth == 0 and text.startswith(": ", i):
            text = text[:i]
            break
    if not text or re.match(r"[a-z]", text):  # a word first: prose
        return None
    return text


def squeeze(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r"\[ ", "[", re.sub(r" \]", "]", text))


def matches(claim: str, printed: str) -> bool:
    """Whether ``printed`` is what ``claim`` says, by the module's rule."""
    claim, printed = squeeze(claim), squeeze(printed)
    if not re.sub(NUMBER, "", claim).replace(" ", ""):  # numbers only
        if squeeze(re.sub(NUMBER, "", printed)):  # beside words: the numbers alone
            printed = " ".join(NUMBER.findall(printed))
    pattern, pos, parts = "", 0, []
    for number in NUMBER.finditer(claim):
        pattern += re.escape(claim[pos:number.start()]) + r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
        parts.append(number.group())
        pos = number.end()
    pattern += re.escape(claim[pos:])
    found = re.fullmatch(pattern, printed)
    if found is None:
        return False
    return all(number_matches(said, shown) for said, shown in zip(parts, found.groups(),
                                                                   strict=True))


def number_matches(said: str, shown: str) -> bool:
    if said.endswith("..."):
        return shown.startswith(said[:-3])
    decimals = len(said.split(".")[1]) if "." in said and "e" not in said else 0
    if "e" in said:
        return float(said) == float(shown)
    rounded = Decimal(shown).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_EVEN)
    return rounded == Decimal(said)


def claims(source: str) -> dict[int, str]:
    """``{line number of a print: its claim}`` of a block (1-based lines)."""
    lines = source.splitlines()
    found = {}
    for stmt in ast.parse(source).body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and getattr(stmt.value.func, "id", None) == "print"):
            continue
        end = stmt.end_lineno
        line = lines[end - 1]
        comment = line[line.index("#"):] if "#" in line.split(")")[-1] else None
        if comment is None and end < len(lines) and lines[end].lstrip().startswith("#"):
            comment = lines[end].strip()
        if comment is not None and (claim := claim_of(comment)) is not None:
            found[stmt.lineno] = claim
    return found


def check_blocks(blocks: list[str], where: str) -> int:
    """Run ``blocks`` as a user does; every claim is checked; returns how many were."""
    namespace: dict = {"__name__": "documented_example"}
    checked, wrong = 0, []
    for i, block in enumerate(blocks):
        wanted = claims(block)
        for stmt in ast.parse(block).body:
            code = compile(ast.Module([stmt], type_ignores=[]), f"{where} block {i + 1}", "exec")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)
            if stmt.lineno in wanted:
                printed, claim = out.getvalue().strip(), wanted[stmt.lineno]
                if not matches(claim, printed):
                    wrong.append(f"{where} block {i + 1}, line {stmt.lineno}: the comment "
                                 f"says {claim!r}, the code prints {printed!r}")
                checked += 1
    assert not wrong, "\n".join(wrong)
    return checked


def test_the_rule():
    assert matches("0.4146 0.0011", "0.41455 0.00110")
    assert not matches("0.4146 0.0011", "0.41466 0.0011")
    assert matches("-11.204...", "-11.2049")
    assert not matches("-11.204...", "-11.2059")
    assert matches("[529 38 16 17] 14", "[529  38  16  17] 14")
    assert matches("TabularMDP(S=48, A=4, K=1)", "TabularMDP(S=48, A=4, K=1)")
    assert not matches("TabularMDP(S=48, A=4, K=1)", "TabularMDP(S=48, A=4, K=2)")
    assert matches("0.0074", "PPO is 0.0074 below the optimum")
    assert not matches("10000 200", "10000 100")
    assert claim_of("# the layout, with @ on the start cell") is None
    assert claim_of("# -13.0 15: the shortest path") == "-13.0 15"
    assert claim_of("# {'a': 0.5}: a dict") == "{'a': 0.5}"
    assert matches("{'a': 0.5, 'b': 0.25}", "{'a': 0.5, 'b': 0.25}")


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here


def test_readme_prints_what_it_says(scratch):
    blocks = BLOCK.findall((ROOT / "README.md").read_text())
    assert check_blocks(blocks, "README.md") >= 12, "the README lost its printed values"


def test_rl_for_llms_prints_what_it_says(scratch):
    blocks = BLOCK.findall((ROOT / "docs" / "rl_for_llms.md").read_text())
    assert check_blocks(blocks, "docs/rl_for_llms.md") >= 1


def docstring_modules() -> list[str]:
    """The modules of ``tabular`` whose docstrings hold ``>>>`` examples."""
    return sorted(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(
        ".__init__") for path in (ROOT / "tabular").rglob("*.py") if ">>>" in path.read_text())


@pytest.mark.parametrize("name", docstring_modules())
def test_docstring_examples_run(name, scratch):
    """The ``>>>`` examples of the docstrings, by :mod:`doctest` (printed values too)."""
    import doctest
    import importlib

    import matplotlib
    matplotlib.use("Agg")
    from tabular import envs  # the examples make tabzoo/ envs, as a user who imported them
    assert envs
    failed, tried = doctest.testmod(importlib.import_module(name), verbose=False)
    assert tried > 0 and failed == 0, f"{name}: {failed} of {tried} examples failed"


def test_own_rule_guide_prints_what_it_says(scratch):
    blocks = BLOCK.findall((ROOT / "docs" / "own_rule.md").read_text())
    assert check_blocks(blocks, "docs/own_rule.md") >= 2


TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))


@pytest.mark.parametrize("page", TUTORIALS, ids=[page.stem for page in TUTORIALS])
def test_tutorial_runs_top_to_bottom_and_prints_what_it_says(page, scratch):
    """Each tutorial, as a student runs it: every block in order, every printed value
    checked."""
    blocks = BLOCK.findall(page.read_text())
    assert check_blocks(blocks, f"docs/tutorials/{page.name}") >= 1


#: Modules whose docstring's ``::`` blocks are whole programs a user copies.
PROGRAMS = ("tabular.envs", "tabular.learn.custom", "tabular.testing")


def literal_blocks(doc: str) -> list[str]:
    """The indented blocks after each ``::`` of a docstring, dedented."""
    import textwrap
    return [textwrap.dedent(block) for block in re.findall(r"::\n\n((?:    .*\n|\n)+)", doc)]


@pytest.mark.parametrize("name", PROGRAMS)
def test_docstring_programs_run(name, scratch):
    """The ``::`` examples of these modules run as written (tabular.testing's defines a
    property test: it is defined here and run in a user's project by
    ``test_testing_example.py``), their printed values checked."""
    import importlib
    blocks = literal_blocks(importlib.import_module(name).__doc__)
    assert blocks, f"{name}'s docstring lost its example"
    check_blocks(blocks, f"{name}'s docstring")
