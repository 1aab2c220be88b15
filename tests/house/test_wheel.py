"""The wheel installs one import package, ``tabular``: the repository's ``envs/`` and
``experiments/`` folders go in as ``tabular.envs`` and ``tabular.experiments``, with the
layout and data files, ``py.typed`` and nothing else at the top level."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLED_AS = {"tabular": "tabular", "envs": "tabular/envs", "experiments": "tabular/experiments"}


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory) -> list[str]:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                            "-w", str(out), str(ROOT)], capture_output=True, text=True)
    if build.returncode != 0:
        pytest.fail(f"pip wheel failed:\n{build.stderr[-2000:]}")
    (wheel,) = out.glob("tabular_zoo-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_has_one_top_level_package(wheel_files):
    tops = {name.split("/")[0] for name in wheel_files}
    dist_info = {top for top in tops if top.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert tops - dist_info == {"tabular"}


def test_every_tracked_source_and_data_file_is_in_the_wheel(wheel_files):
    tracked = subprocess.run(["git", "ls-files", *INSTALLED_AS], cwd=ROOT, text=True,
                             capture_output=True, check=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    expected = {INSTALLED_AS[path.split("/")[0]] + path[path.index("/"):] for path in tracked}
    assert expected - set(wheel_files) == set()
    assert "tabular/py.typed" in wheel_files
    assert any(name.startswith("tabular/envs/layouts/") for name in wheel_files)
    assert any(name.startswith("tabular/envs/data/") for name in wheel_files)
