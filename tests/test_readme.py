"""Every ```python block of the README runs, in order, in one namespace: the tour cannot rot."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[str]:
    return BLOCK.findall(README.read_text())


def test_readme_opens_with_the_two_commands():
    head = README.read_text().splitlines()[:12]
    assert any("make experiments" in line for line in head)
    assert any("make test" in line for line in head)


def test_readme_tour_runs(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) >= 4, "the tour lost its code blocks"
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    namespace: dict = {"__name__": "readme_tour"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"README.md block {i + 1}", "exec"), namespace)
        except Exception as err:  # name the block that broke
            raise AssertionError(f"README block {i + 1} failed:\n{block}") from err
