"""``tabular.testing``'s documented property test, copied verbatim into a user's own
pytest file, passes in a fresh process under hypothesis's default settings (its 200 ms
deadline included) and outside the repository's test configuration."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import tabular.testing


def documented_example() -> str:
    """The code block of the module docstring (the text after its ``::``)."""
    doc = tabular.testing.__doc__
    block = re.search(r"::\n\n((?:    .*\n|\n)+)", doc)
    assert block, "tabular.testing's docstring lost its example"
    return textwrap.dedent(block.group(1))


def test_documented_property_test_passes_in_a_users_project(tmp_path):
    (tmp_path / "test_user.py").write_text(documented_example())
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--rootdir", str(tmp_path), str(tmp_path / "test_user.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
