"""Every ```python block of the README runs, in order, in one namespace: the tour cannot
rot; so do the walkthrough blocks of ``docs/rl_for_llms.md``."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
LLM_DOC = README.parent / "docs" / "rl_for_llms.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


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


def test_readme_opens_with_the_two_commands():
    head = README.read_text().splitlines()[:12]
    assert any("make experiments" in line for line in head)
    assert any("make test" in line for line in head)


def test_readme_tour_runs(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) >= 4, "the tour lost its code blocks"
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    run_blocks(blocks, "README.md")


def test_your_own_token_mdp_walkthrough_runs():
    section = LLM_DOC.read_text().split("## Your own token MDP", 1)[1]
    blocks = python_blocks(section)
    assert len(blocks) >= 4, "the walkthrough lost its code blocks"
    run_blocks(blocks, "docs/rl_for_llms.md, your own token MDP,")
