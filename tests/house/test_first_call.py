"""The first call: the compile notice, ``tabular-warm``'s coverage of the public API,
and the optional parts of the install (extras)."""

import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest

import tabular
import tabular.rlhf
from tabular import warm
from tabular._numba import notice

ROOT = Path(__file__).resolve().parents[2]


def run(code: str, cache_dir: Path, **env) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter on the numba cache ``cache_dir``, with the notice
    on unless ``env`` says otherwise."""
    env = {**{k: v for k, v in os.environ.items() if k != notice.QUIET_VARIABLE},
           "NUMBA_CACHE_DIR": str(cache_dir), **env}
    return subprocess.run([sys.executable, "-c", code], env=env, check=True,
                          capture_output=True, text=True, cwd=ROOT)


# --------------------------------------------------------------------- the notice
Q_LEARNING = """
import numpy as np
from tabular import q_learning
from tabular.testing import random_mdp

mdp = random_mdp(np.random.default_rng(0), 4, 2, 2, done_rate=0.3)
q_learning(mdp, episodes=3, runs=4)  # runs over threads: the kernel compiles on a worker
q_learning(mdp, episodes=3)
"""

#: A public function whose one kernel is a rule, compiled on its own.
ADVANTAGES = """
import numpy as np
from tabular._numba import notice
from tabular.rlhf import group_relative_advantages
if {quiet}:
    notice.set_quiet()
group_relative_advantages(np.zeros(3))
"""


def notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("tabular: ")]


def test_a_first_compile_is_announced_once_and_a_cached_call_not_at_all(tmp_path):
    cold = run(Q_LEARNING, tmp_path)
    low = notice.reference_seconds()["q_learning"]
    assert notices(cold.stderr) == [
        f"tabular: compiling q_learning (first use, cached afterwards; {low:.0f}-"
        f"{low * notice.BUSY_FACTOR:.0f} s)", notice.WARM_HINT]
    warm_run = run(Q_LEARNING, tmp_path)
    assert notices(warm_run.stderr) == []
    # a new variant compiles in a later process: the entry point was announced already
    masked = run("import numpy as np\n" + Q_LEARNING.replace(
        "episodes=3)", "episodes=3, action_mask=np.ones((4, 2), dtype=bool))"), tmp_path)
    assert notices(masked.stderr) == []
    assert "q_learning" in json.loads((tmp_path / notice.RECORD_NAME).read_text())["announced"]


def test_a_public_function_over_one_rule_is_announced(tmp_path):
    got = run(ADVANTAGES.format(quiet=False), tmp_path)
    assert notices(got.stderr) == [notice.message("group_relative_advantages", {}),
                                   notice.WARM_HINT]


@pytest.mark.parametrize("how", ["variable", "function"])
def test_the_notice_can_be_switched_off(tmp_path, how):
    env = {notice.QUIET_VARIABLE: "1"} if how == "variable" else {}
    got = run(ADVANTAGES.format(quiet=how == "function"), tmp_path, **env)
    assert notices(got.stderr) == []
    assert list(tmp_path.rglob("*.nbi")), "it compiled all the same"


def test_an_entry_point_is_named_by_its_outermost_public_frame():
    """A compile inside ``train_pipeline``'s call of ``pretrain`` is announced as
    ``train_pipeline``, the call the user waits for."""
    names = notice._code_names()
    outer, inner = tabular.train_pipeline.__code__, tabular.pretrain.__code__

    class Frame:
        def __init__(self, code, back):
            self.f_code, self.f_back = code, back

    stack = Frame(notice.entry_point.__code__, Frame(inner, Frame(outer, None)))
    assert notice._outermost(stack, names) == "train_pipeline"
    assert notice._outermost(Frame(inner, None), names) == "pretrain"


def test_the_measured_seconds_cover_the_warmed_entry_points_and_ship_with_the_package():
    assert set(notice.reference_seconds()) == set(warm.CALLS)
    assert all(seconds > 0 for seconds in notice.reference_seconds().values())
    assert notice.message("no_such_entry_point", {}).endswith(
        "cached afterwards; a few seconds)")
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert notice.DATA_FILE.name in cfg["options.package_data"]["tabular._numba"]


def test_the_notice_states_this_machines_seconds_once_measured(tmp_path, monkeypatch):
    """Without a measurement of this machine, the reference's range; with one of the
    entry point, that; with others only, the reference scaled by their median ratio."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    reference = notice.reference_seconds()
    low = reference["sarsa"]
    assert notice.expected_seconds("sarsa") == f"{low:.0f}-{low * notice.BUSY_FACTOR:.0f} s"
    notice.write_record(seconds={"sarsa": 12.4})
    assert notice.expected_seconds("sarsa") == "~12 s on this machine"
    ratio = 12.4 / low
    assert notice.expected_seconds("ppo") == f"~{reference['ppo'] * ratio:.0f} s on this machine"
    notice.write_record(announced=["ppo"])
    assert notice.read_record() == {"announced": ["ppo"], "seconds": {"sarsa": 12.4}}


def test_tabular_warm_measure_writes_the_data_file_the_notice_reads(tmp_path, monkeypatch):
    data = tmp_path / "compile_seconds.json"
    data.write_text(notice.DATA_FILE.read_text())
    monkeypatch.setattr(notice, "DATA_FILE", data)
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    notice.reference_seconds.cache_clear()
    try:
        warm.write_measurements({"q_learning": 3.21, "ppo": 10.07}, jobs=1)
        assert notice.reference_seconds()["q_learning"] == 3.3  # rounded up to a tenth
        assert notice.reference_seconds()["ppo"] == 10.1
        assert set(notice.reference_seconds()) == set(warm.CALLS)  # the others kept
        assert notice.read_record()["seconds"] == {"q_learning": 3.2, "ppo": 10.1}
    finally:
        monkeypatch.undo()
        notice.reference_seconds.cache_clear()


# --------------------------------------------------------------------- tabular-warm
def test_tabular_warm_covers_the_public_api():
    """Every public function and method is warmed or has a reason not to be, so a new
    entry point cannot be forgotten."""
    public = set(notice.public_functions([tabular, tabular.rlhf, tabular.linear]))
    warmed, excluded = set(warm.CALLS), set(warm.NO_KERNEL)
    assert not warmed & excluded
    assert public - warmed - excluded == set(), "neither warmed nor excluded"
    assert (warmed | excluded) - public == set(), "not public"
    grouped = [name for group in warm.FAMILIES + warm.LATER for name in group]
    assert len(grouped) == len(set(grouped)) and set(grouped) <= warmed
    jobs = [name for phase in warm.jobs() for group in phase for name in group]
    assert sorted(jobs) == sorted(warmed)


def test_tabular_warm_is_a_console_script_and_the_install_step_runs_it():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"]
    assert "tabular-warm = tabular.warm:main" in scripts
    assert "tabular-warm" in (ROOT / "Makefile").read_text()
    listed = subprocess.run([sys.executable, "-m", "tabular.warm", "--list"], check=True,
                            capture_output=True, text=True, cwd=ROOT).stdout.split()
    assert listed == list(warm.CALLS)


def test_make_docs_compiles_nothing_and_make_test_warms(tmp_path):
    """Sphinx imports the package and runs no kernel: the docs' install is not
    ``tabular-warm``'s (seven of ``make docs``' ten minutes were)."""
    def plan(target):
        return subprocess.run(["make", "-n", target, f"VENV={tmp_path / 'venv'}"], check=True,
                              capture_output=True, text=True, cwd=ROOT).stdout
    docs, test = plan("docs"), plan("test")
    assert "sphinx" in docs and "pip install" in docs and "tabular-warm" not in docs
    assert "tabular-warm" in test


# --------------------------------------------------------------------- extras
def test_hypothesis_is_an_extra_not_a_requirement():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert "hypothesis" not in cfg["options"]["install_requires"]
    extras = cfg["options.extras_require"]
    assert "hypothesis" in extras["testing"]
    assert "tabular-zoo[testing]" in extras["dev"]
    assert {"sphinx", "selenium"} <= {line.split(">")[0].strip()
                                     for line in extras["docs"].split("\n") if line}


def test_tabular_testing_without_hypothesis_names_the_extra():
    """As documented: ``random_mdp`` and ``random_policy`` work without hypothesis; a
    strategy, asked for without it, names the extra that brings it."""
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "import numpy as np\n"
            "from tabular.testing import mdps, random_mdp, random_policy\n"
            "rng = np.random.default_rng(0)\n"
            "print(random_mdp(rng, 5, 2, 3).n_states, random_policy(rng, 5, 2).shape)\n"
            "try:\n    mdps()\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=ROOT).stdout
    assert out.startswith("5 (5, 2)\n"), out
    assert "pip install 'tabular-zoo[testing]'" in out
