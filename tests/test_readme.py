"""The README cannot rot: every ```python block runs, in order, in one namespace; the zoo
table names every public learner, solver and RLHF function, and only real ones; the
paths, modules and links it names exist. The walkthrough blocks of
``docs/rl_for_llms.md`` run too."""

import importlib
import inspect
import re
from pathlib import Path

import tabular
import tabular.linear
import tabular.rlhf

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LLM_DOC = ROOT / "docs" / "rl_for_llms.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`([^`\n]+)`")


def python_blocks(text: str | None = None) -> list[str]:
    return BLOCK.findall(README.read_text() if text is None else text)


def run_blocks(blocks: list[str], where: str) -> None:
    """Run ``blocks`` in order in one namespace; a failure names its block."""
    namespace: dict = {"__name__": "readme_tour"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{where} block {i + 1}", "exec"), namespace)
        except Exception as err:  # name the block that broke
            raise AssertionError(f"{where} block {i + 1} failed:\n{block}") from err


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


def test_readme_tour_runs(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) >= 4, "the tour lost its code blocks"
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    run_blocks(blocks, "README.md")


def zoo_names() -> list[str]:
    """The names in the function column of the zoo table."""
    rows = [line for line in section("The zoo").splitlines() if line.startswith("| ")]
    assert len(rows) > 20, "the zoo table lost its rows"
    return [name for row in rows[1:] for name in CODE.findall(row.split("|")[2])]


def test_zoo_table_names_only_public_functions():
    for name in zoo_names():
        found = (getattr(tabular, name, None) or getattr(tabular.rlhf, name, None)
                 or getattr(tabular.linear, name, None))
        assert callable(found) and not inspect.isclass(found), name


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


def test_your_own_token_mdp_walkthrough_runs():
    walkthrough = LLM_DOC.read_text().split("## Your own token MDP", 1)[1]
    blocks = python_blocks(walkthrough)
    assert len(blocks) >= 4, "the walkthrough lost its code blocks"
    run_blocks(blocks, "docs/rl_for_llms.md, your own token MDP,")
