"""The README cannot rot: the zoo table names every public learner, solver and RLHF
function, each importable from where it says; the paths, modules and links it names
exist. Its code blocks (and ``docs/rl_for_llms.md``'s) run, their printed values
checked, in ``tests/house/test_documented_values.py``."""

import importlib
import inspect
import re
from pathlib import Path

import tabular
import tabular.linear
import tabular.rlhf

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`([^`\n]+)`")


def section(title: str) -> str:
    """The README's text from the heading ``## title`` to the next ``## ``."""
    return README.read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def prose() -> str:
    """The README without its code blocks."""
    return BLOCK.sub("", README.read_text())


def test_readme_opens_with_the_two_commands():
    head = README.read_text().splitlines()[:12]
    assert any("make experiments" in line for line in head)
    assert any("make test" in line for line in head)


def test_readme_is_a_short_guide():
    assert len(README.read_text().splitlines()) < 300


def zoo_names() -> list[str]:
    """The names in the function column of the zoo table."""
    rows = [line for line in section("The zoo").splitlines() if line.startswith("| ")]
    assert len(rows) > 20, "the zoo table lost its rows"
    return [name for row in rows[1:] for name in CODE.findall(row.split("|")[2])]


def test_zoo_table_names_import_from_where_it_says():
    """The table says: every function ``from tabular import NAME`` (the RLHF ones also
    from ``tabular.rlhf``), the linear ones ``from tabular.linear import NAME``."""
    for name in zoo_names():
        where = tabular.linear if name in tabular.linear.__all__ else tabular
        assert name in where.__all__, f"from {where.__name__} import {name} fails"
        found = getattr(where, name)
        assert callable(found) and not inspect.isclass(found), name
        if name in tabular.rlhf.__all__:
            assert getattr(tabular.rlhf, name) is found, name


def test_zoo_table_covers_every_public_function():
    public = {name for module in (tabular, tabular.rlhf, tabular.linear)
              for name in module.__all__
              if callable(obj := getattr(module, name)) and not inspect.isclass(obj)}
    assert public - set(zoo_names()) == set(), "functions missing from the zoo table"


def test_readme_paths_modules_and_links_exist():
    text = prose()
    for target in re.findall(r"\]\(([^)#:]+)\)", text):  # relative links and images
        assert (ROOT / target).exists(), target
    for token in CODE.findall(text):
        if re.fullmatch(r"(tabular|envs|experiments|benchmarks|tests|docs)/[\w/.]*", token):
            assert (ROOT / token).exists(), token
        elif re.fullmatch(r"tabular(\.\w+)+", token):
            parent, _, name = token.rpartition(".")
            try:
                importlib.import_module(token)
            except ModuleNotFoundError:
                assert hasattr(importlib.import_module(parent), name), token


def test_readme_counts_every_experiment():
    """The Figures section says how many experiments ``make experiments`` runs."""
    from tabular.experiments.harness.registry import EXPERIMENTS

    said = re.search(r"`make experiments` runs (\d+) experiments", section("Figures"))
    assert said, "the Figures section no longer says how many experiments run"
    assert int(said.group(1)) == len(EXPERIMENTS), (said.group(1), len(EXPERIMENTS))
