"""Every experiment end to end in --quick mode, the runner's bookkeeping, and the executors.

Each experiment's quick run is computed once per test session, by whichever xdist
worker first needs it (a lock file per experiment in the session's shared temp
directory), so ``pytest -n 2`` spreads the experiments over both workers and pays
for each once.
"""

from __future__ import annotations

import ast
import dataclasses
import fcntl
import functools
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import tabular
from tabular.experiments.book.ch06 import random_walk
from tabular.experiments.harness import checks, cli, provenance, registry, runner, storage
from tabular.experiments.harness.executor import LocalExecutor, make_executor
from tabular.experiments.harness.settings import parse_value, shown

ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHEAPEST = "policy_evaluation"  # for the bookkeeping tests that recompute one experiment
SEEDED = "cliff_walking"  # a cheap stochastic experiment, for the same-seed-same-numbers test

#: A small seeded sweep that every executor must reproduce bit for bit.
SWEEP_FN = random_walk.value_history
SWEEP_JOBS = [{"method": method, "alpha": alpha, "episodes": 20, "runs": 3, "seed": seed}
              for method, alpha, seed in (("TD(0)", 0.1, 1), ("MC", 0.02, 2), ("TD(0)", 0.05, 3))]


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory):
    """This session's directory, the same for every xdist worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def quick_run(shared_dir, name):
    """``python -m tabular.experiments --quick NAME`` into the shared directory, once per
    session."""
    out = shared_dir / "experiments-quick"
    out.mkdir(exist_ok=True)
    with open(shared_dir / f"experiments-quick-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            runner.run_experiment(name, out, LocalExecutor(progress=False), quick=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out


@pytest.fixture
def quick_results(shared_dir):
    """The quick-run directory with every experiment finished."""
    for name in registry.EXPERIMENTS:
        out = quick_run(shared_dir, name)
    return out


def record(out, name) -> dict:
    return json.loads((out / name / storage.CONFIG).read_text())


@pytest.mark.parametrize("name", registry.EXPERIMENTS)
def test_quick_run_writes_its_files_and_passes_its_checks(shared_dir, name):
    quick_results = quick_run(shared_dir, name)
    meta = record(quick_results, name)
    assert meta["experiment"] == name and meta["quick"] is True
    assert meta["version"] == tabular.__version__
    assert "seed" in meta and meta["config"]
    numbers = storage.load_numbers(quick_results / name / storage.NUMBERS)
    assert numbers, f"{name} stored no numbers"
    missing = [f for f in meta["files"] if not (quick_results / name / f).is_file()]
    assert not missing, f"{name} lists files it did not write: {missing}"
    pngs = [f for f in meta["files"] if f.endswith(".png")]
    assert pngs, f"{name} drew no figure"
    for png in pngs:
        data = (quick_results / name / png).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 5000, f"{name}/{png} is not a drawn PNG"
    leftovers = [p.name for p in (quick_results / name).iterdir() if p.name.endswith(".tmp")]
    assert not leftovers, f"temporary files left behind: {leftovers}"
    assert meta["failed_checks"] == [], f"{name} failed its own checks"


def test_command_line_rerun_skips_everything_and_exits_0(quick_results, tmp_path, capsys):
    out = tmp_path / "copy"
    shutil.copytree(quick_results, out)
    assert cli.main(["--quick", "--out", str(out)]) == 0
    log = capsys.readouterr()
    assert (log.out + log.err).count("skipped (finished before)") == len(registry.EXPERIMENTS)


def test_rerun_skips_finished_experiments(quick_results, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(quick_results, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    outcomes = [runner.run_experiment(name, out, LocalExecutor(progress=False), quick=True)
                for name in registry.EXPERIMENTS]
    assert all(o.skipped for o in outcomes)
    after = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    assert after == before


def test_force_recomputes_the_same_numbers(shared_dir, tmp_path):
    name = SEEDED
    quick_results = quick_run(shared_dir, name)
    out = tmp_path / "copy"
    shutil.copytree(quick_results / name, out / name)
    stamp = (out / name / storage.NUMBERS).stat().st_mtime_ns
    outcome = runner.run_experiment(name, out, LocalExecutor(progress=False), quick=True,
                                    force=True)
    assert not outcome.skipped and outcome.failures == []
    assert (out / name / storage.NUMBERS).stat().st_mtime_ns != stamp
    again = storage.load_numbers(out / name / storage.NUMBERS)
    first = storage.load_numbers(quick_results / name / storage.NUMBERS)
    assert again.keys() == first.keys()
    for key in first:  # same seed, same numbers, bit for bit
        np.testing.assert_array_equal(again[key], first[key], err_msg=key)


def test_a_different_config_is_not_skipped(shared_dir, tmp_path):
    name = CHEAPEST
    quick_results = quick_run(shared_dir, name)
    out = tmp_path / "copy"
    shutil.copytree(quick_results / name, out / name)
    module = registry.load(name)
    stored = storage.finished(out / name, provenance.metadata(name, module.Config.quick(), True))
    assert stored is not None
    assert storage.finished(out / name, provenance.metadata(name, module.Config(), False)) is None


def test_interrupted_run_keeps_what_finished(tmp_path, monkeypatch):
    first, second = registry.EXPERIMENTS[0], registry.EXPERIMENTS[1]
    module = registry.load(second)

    def interrupted(config, executor):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["--quick", "--out", str(tmp_path), first, second])
    assert (tmp_path / first / storage.CONFIG).exists()
    assert not (tmp_path / second).exists()
    outcome = runner.run_experiment(first, tmp_path, LocalExecutor(progress=False), quick=True)
    assert outcome.skipped


def test_replot_redraws_from_stored_numbers(shared_dir, tmp_path, monkeypatch):
    name = CHEAPEST
    quick_results = quick_run(shared_dir, name)
    out = tmp_path / "copy"
    shutil.copytree(quick_results / name, out / name)
    pngs = sorted(out.glob(f"{name}/*.png"))
    for png in pngs:
        png.unlink()
    monkeypatch.setattr(registry.load(name), "run", None)  # any recomputation would fail
    assert cli.main(["--replot", "--out", str(out), name]) == 0
    assert sorted(out.glob(f"{name}/*.png")) == pngs


def test_list_prints_whole_descriptions_wrapped_to_the_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    assert cli.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 60 for line in lines), max(lines, key=len)
    starts = [i for i, line in enumerate(lines) if not line.startswith(" ")]
    assert [lines[i].split()[0] for i in starts] == list(registry.EXPERIMENTS)
    for i, j, name in zip(starts, [*starts[1:], len(lines)], registry.EXPERIMENTS, strict=True):
        described = " ".join(" ".join(lines[i:j]).split()[1:])
        assert described == registry.summary(name) != ""
        first_paragraph = registry.load(name).__doc__.strip().split("\n\n")[0]
        assert described == " ".join(first_paragraph.split())  # the whole sentence


def test_a_closed_pipe_ends_the_listing_quietly(tmp_path):
    err = tmp_path / "stderr"
    for reader in ("head -1", "true"):  # true: the pipe closes before anything is written
        done = subprocess.run(
            ["sh", "-c", f'"{sys.executable}" -m tabular.experiments --list 2>"{err}" | {reader}'],
            capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert err.read_text() == "", reader
        assert done.returncode == 0, reader  # the pipeline's status is the reader's
        assert done.stdout.startswith("bandits ") == (reader == "head -1"), done.stdout


def test_a_closed_pipe_exits_with_sigpipes_status():
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "tabular.experiments", "--list"], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300, cwd=ROOT)
    finally:
        os.close(write)
    assert done.stderr == ""
    assert done.returncode == cli.PIPE_CLOSED


def test_every_setting_can_be_set_from_the_command_line():
    for name in registry.EXPERIMENTS:
        module = registry.load(name)
        full = module.Config()
        for key, (kind, _) in registry.config_fields(module).items():
            value = getattr(full, key)
            assert parse_value(key, kind, shown(value)) == value, (name, key)
    walk = registry.make_config(random_walk, settings={"td_alphas": "0.05,0.1",
                                                     "mc_alphas": "[0.02]"})
    assert walk.td_alphas == (0.05, 0.1) and walk.mc_alphas == (0.02,)
    leaderboard = registry.load("rlhf_leaderboard")
    assert registry.make_config(leaderboard, settings={"grammar_budgets": ""}).grammar_budgets == ()
    assert parse_value("ns", list[int], "1, 2") == [1, 2]


@pytest.mark.parametrize("setting, named", [("td_alphas=0.05,x", "td_alphas"),
                                            ("runs=many", "runs"), ("episodes=1.5", "episodes")])
def test_a_bad_setting_value_is_an_error_that_names_the_setting(capsys, setting, named):
    with pytest.raises(SystemExit) as stop:
        cli.main(["random_walk", "--quick", "--set", setting])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {named} takes" in err and "Traceback" not in err, err


def test_every_config_documents_its_fields_and_has_a_quick_variant():
    for name in registry.EXPERIMENTS:
        module = registry.load(name)
        quick, full = module.Config.quick(), module.Config()
        assert type(quick) is type(full), name
        assert module.Config.__doc__, name
        body = ast.parse(textwrap.dedent(inspect.getsource(module.Config))).body[0].body
        documented = {
            node.target.id for node, after in zip(body, body[1:], strict=False)
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)
        }
        fields = {f.name for f in dataclasses.fields(full)}
        assert fields <= documented, f"{name}: undocumented fields {fields - documented}"


def test_bad_arguments_are_rejected(capsys):
    with pytest.raises(SystemExit):
        cli.main(["no-such-experiment"])
    assert "unknown experiment" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["--runs", "0"])
    with pytest.raises(ValueError, match="backend"):
        make_executor("slurm")
    with pytest.raises(ValueError, match="workers"):
        LocalExecutor(workers=0)


def test_thread_pool_gives_the_same_numbers_as_serial():
    jobs = SWEEP_JOBS
    serial = LocalExecutor(progress=False).map(SWEEP_FN, jobs)
    threaded = LocalExecutor(workers=2, progress=False).map(SWEEP_FN, jobs)
    assert_same(serial, threaded)


@pytest.fixture(scope="module")
def ray_executor():
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install '.[ray]'")
    try:
        executor = make_executor("ray", progress=False)
    except Exception as error:  # pragma: no cover - depends on the machine
        pytest.skip(f"Ray cannot start here: {error}")
    yield executor
    executor.close()
    assert not ray.is_initialized()


def test_ray_gives_the_same_numbers_as_local(ray_executor):
    local = LocalExecutor(progress=False).map(SWEEP_FN, SWEEP_JOBS)
    remote = ray_executor.map(SWEEP_FN, SWEEP_JOBS)
    assert_same(local, remote)


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for key in x:
            np.testing.assert_array_equal(x[key], y[key], err_msg=key)


@settings(max_examples=30, deadline=None)
@given(arrays=st.dictionaries(
    st.text("abcdefghij_", min_size=1, max_size=8),
    hnp.arrays(st.sampled_from([np.float64, np.int64, np.bool_]),
               hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)),
    max_size=4))
def test_numbers_round_trip_bit_for_bit(tmp_path_factory, arrays):
    path = tmp_path_factory.mktemp("npz") / storage.NUMBERS
    storage.save_numbers(path, arrays)
    back = storage.load_numbers(path)
    assert back.keys() == arrays.keys()
    for key, value in arrays.items():
        assert back[key].dtype == value.dtype and back[key].shape == value.shape
        np.testing.assert_array_equal(back[key], value)  # NaN == NaN here


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / storage.NUMBERS
    storage.save_numbers(path, {"x": np.arange(3)})

    def broken(f):
        f.write(b"half a file")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        storage.atomic_write(path, broken)
    np.testing.assert_array_equal(storage.load_numbers(path)["x"], np.arange(3))
    assert [p.name for p in tmp_path.iterdir()] == [storage.NUMBERS]
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    with pytest.raises(TypeError, match="object dtype"):
        storage.save_numbers(path, {"bad": np.array([{}, 1], dtype=object)})


# ---------------------------------------------------------------- the checks can fail
def quick_numbers(shared_dir, name) -> dict:
    """The numbers of ``name``'s quick run, to perturb in front of its checks."""
    return storage.load_numbers(quick_run(shared_dir, name) / name / storage.NUMBERS)


def failures(name: str, numbers: dict) -> list[str]:
    """What every check of experiment ``name`` says is wrong with ``numbers``."""
    return checks.failures_of(checks.judge(registry.load(name), numbers))


def changed(array: np.ndarray, where, value) -> np.ndarray:
    """A copy of ``array`` with ``array[where] = value``."""
    copy = np.array(array)
    copy[where] = value
    return copy


def ppo_runs_stuck(numbers: dict, stuck: int) -> dict:
    """``stuck`` PPO runs at the smallest beta ending 0.3 below the optimum."""
    proxy = numbers["ppo_proxy"]
    return {"ppo_proxy": changed(proxy, np.s_[0, :stuck], proxy[0, :stuck] - 0.3)}


#: (experiment, the numbers a run that misses the finding would store instead, a pattern
#: one of the failures must match; None: the change is within what the checks allow).
BROKEN = [
    ("windy_gridworld", lambda n: {"greedy_steps": changed(
        np.full_like(n["greedy_steps"], 100), 0, 15)}, "within 2 steps"),  # one run optimal
    ("windy_gridworld", lambda n: {"greedy_steps": n["greedy_steps"] + 1}, "optimal"),
    ("short_corridor", lambda n: {"returns": changed(n["returns"], np.s_[0, :2], -1000.0)},
     None),  # two stuck runs: left out of the mean, within the allowance
    ("short_corridor", lambda n: {"returns": changed(
        n["returns"], np.s_[0, : n["returns"].shape[1] // 4], -1000.0)}, "runs stuck"),
    ("short_corridor", lambda n: {"returns": changed(  # the smallest step size ends 8 below
        n["returns"], np.s_[2, :, -100:], float(n["v_star"]) - 8.0)}, "not within 5"),
    ("short_corridor", lambda n: {"returns": changed(  # late mean 0.8 above v*, same spread
        n["returns"], np.s_[1, :, -100:], n["returns"][1, :, -100:] + float(n["v_star"])
        + 0.8 - n["returns"][1, :, -100:].mean())}, "ground truth is wrong"),
    ("short_corridor_baseline", lambda n: {"returns": changed(  # a quarter of runs stuck
        n["returns"], np.s_[1, : n["returns"].shape[1] // 4], -1000.0)}, "runs stuck"),
    ("short_corridor_baseline", lambda n: {"p_final": changed(  # centred 0.1 off p*
        n["p_final"], 1, n["p_final"][1] - 0.1)}, "not centred on p\\*"),
    ("short_corridor_baseline", lambda n: {"returns": changed(  # late returns off by 3
        n["returns"], np.s_[1, :, -100:], n["returns"][1, :, -100:] - 3.0)},
     "is not the exact value"),
    ("short_corridor_baseline", lambda n: {"returns": changed(  # as slow as plain REINFORCE
        n["returns"], 1, n["returns"][0])}, "not more than plain"),
    ("short_corridor_baseline", lambda n: {"returns": changed(
        n["returns"], np.s_[0, :, -100:], -5.0)}, "beats v\\*"),
    ("tic_tac_toe", lambda n: {"positions": np.array(5477)}, "not 5,478"),
    ("tic_tac_toe", lambda n: {"empty_value": np.array(1)}, "not a draw"),
    ("tic_tac_toe", lambda n: {"perfect_random": np.array([0.9, 0.09, 0.01])},
     "the perfect player loses"),
    ("tic_tac_toe", lambda n: {"learning_curve": changed(  # as if it had not learnt
        n["learning_curve"], -1, n["learning_curve"][0])}, "still loses"),
    ("tic_tac_toe", lambda n: {"learning_curve": changed(  # wins more than any player can
        n["learning_curve"], np.s_[-1, 0], 1.0)}, "more than the best response"),
    ("tic_tac_toe", lambda n: {"best_response_random": np.array([0.99, 0.0, 0.01])},
     "the two recursions disagree"),
    ("gradient_td", lambda n: {"tdc_errors": changed(  # sqrt(PBE) 1% above its bound
        n["tdc_errors"], np.s_[-1, 1], 1.01 * n["tdc_shares"][1].sum())}, "PBE did not fall"),
    ("gradient_td", lambda n: {"tdc_errors": changed(  # sqrt(VE) fell to 1
        n["tdc_errors"], np.s_[-1, 0], 1.0)}, "VE fell below its slow mode's share"),
    ("gradient_td", lambda n: {"emphatic_errors": changed(  # stopped at 1e-9
        n["emphatic_errors"], np.s_[-1, 0], 1e-9)}, "VE did not fall to 0"),
    ("gradient_td", lambda n: {"mu": np.eye(7)[6]}, "not uniform"),  # the target's mu
    ("trap_treasure", lambda n: {"p_right": np.full_like(n["p_right"], 0.25)}, "below 0.05"),
    ("trap_treasure", lambda n: {"p_right": np.full_like(n["p_right"], 0.25)}, "0.15"),
    ("likelihood_displacement", lambda n: {"curves": changed(  # shared rows as per-prefix
        n["curves"], np.s_[1, 0], n["curves"][1, 1])}, "no displacement with shared rows"),
    ("likelihood_displacement", lambda n: {"curves": changed(  # per-prefix as shared rows
        n["curves"], np.s_[1, 1], n["curves"][1, 0])}, "displacement without shared rows"),
    ("likelihood_displacement", lambda n: {"ches": changed(n["ches"], np.s_[1, 0], -1.0)},
     "CHES sign"),
    ("likelihood_displacement", lambda n: {"curves": changed(  # mass off by 1e-9
        n["curves"], np.s_[1, 0, 2], n["curves"][1, 0, 2] + 1e-9)}, "computations disagree"),
    ("likelihood_displacement", lambda n: {"curves": changed(  # the capital's chosen falls
        n["curves"], np.s_[0, 0, 0, -1], n["curves"][0, 0, 0, 0] - 0.1)}, "displacement$"),
    ("likelihood_displacement", lambda n: {"first_step": changed(  # a step of 1e-3 more
        n["first_step"], np.s_[1, 0, 0], n["first_step"][1, 0, 0] + 1e-3)},
     "not first-order"),
    ("token_rlhf", lambda n: ppo_runs_stuck(n, 3), None),
    ("token_rlhf", lambda n: ppo_runs_stuck(n, n["ppo_proxy"].shape[1] // 2 + 1),
     "PPO's median run"),
    ("n_step_walk", lambda n: {"errors": np.broadcast_to(n["errors"][:1], n["errors"].shape)},
     "lowest error|clearly above"),  # every n as good as n = 1
    ("car_rental", lambda n: {"improvements": np.array(3)}, "improvements"),
    ("cliff_alpha", lambda n: {"settled": n["settled"] - 2.0}, "epsilon-soft optimum"),
    ("cliff_alpha", lambda n: {"settled": changed(n["settled"], np.s_[0, -1],
                                                  n["settled"][0, 0])}, "not below"),
    ("cliff_alpha", lambda n: {"interim": changed(n["interim"], 1, n["interim"][0])},
     "not above SARSA's"),  # Expected SARSA's interim no better than SARSA's
    ("blackjack", lambda n: {"pi_star": 1 - n["pi_star"]}, "sticks from"),
    ("mountain_car", lambda n: {"refined_steps": changed(  # the finest grid moves it most
        n["refined_steps"], -1, n["refined_steps"][-2] - 10.0)}, "moved the optimum more"),
    ("mountain_car", lambda n: {"episode_lengths": np.full_like(n["episode_lengths"], 50)},
     "shorter than the optimum allows"),
    ("mountain_car", lambda n: {"greedy_steps": n["greedy_steps"] * 0.5}, "beats the optimum"),
    ("mountain_car", lambda n: {"episode_lengths": n["episode_lengths"][::-1]},
     "does not learn faster"),
    ("mountain_car", lambda n: {"n_step_lengths": 2 * n["episode_lengths"][-1]},
     "learns slower"),
    ("lambda_walk", lambda n: {"errors": changed(  # lambda = 0 with the frozen targets
        n["errors"], np.s_[0, 0, -1], n["errors"][0, 0, -1] + 0.006)}, "from TD\\(0\\)"),
    ("mountain_car", lambda n: {"lambda_steps": changed(  # one setting below the optimum
        n["lambda_steps"], np.s_[-1, 0], 0.5 * n["optimal_steps"])},
     "Sarsa.*shorter than the optimum allows"),
    ("mountain_car", lambda n: {"lambda_steps": n["lambda_steps"][::-1]},  # lambda = 0 best
     "no lambda > 0 beats lambda = 0"),
    ("mountain_car", lambda n: {"online_returns": changed(  # true online above the optimum
        n["online_returns"], np.s_[0, 0], -0.5 * n["optimal_steps"])},
     "true online.*shorter than the optimum allows"),
    ("mountain_car", lambda n: {"online_returns": changed(  # true online as accumulating
        n["online_returns"], 0, n["accumulating_returns"].mean())},
     "true online Sarsa\\(lambda\\) does not beat accumulating"),
    ("mountain_car", lambda n: {"online_returns": changed(  # clearing as accumulating
        n["online_returns"], 2, n["accumulating_returns"].mean())},
     "clearing does not beat accumulating"),
    ("mountain_car", lambda n: {"online_returns": changed(  # true online 100 steps slower
        n["online_returns"], 0, n["online_returns"][0] - 100.0)},
     "true online Sarsa\\(lambda\\) learns slower than Sarsa\\(lambda\\), replacing"),
    ("mountain_car", lambda n: {"online_returns": changed(  # clearing 100 steps slower
        n["online_returns"], 2, n["online_returns"][1] - 100.0)},
     "clearing the other actions' traces changes"),
    ("lambda_walk", lambda n: {"errors": changed(  # as if accumulating traces stayed bounded
        n["errors"], 1, np.minimum(n["errors"][1], 0.5))}, "blow up"),
    ("maximization_bias", lambda n: {"q_learning": n["double_q_learning"]},
     "maximization bias"),
    ("maximization_bias", lambda n: {"double_q_learning": n["q_learning"]},
     "Double Q-learning's % left ends"),
    ("maximization_bias", lambda n: {  # 3 points more left over episodes 11-20
        "q_learning_blocks": changed(n["q_learning_blocks"], np.s_[:, 3],
                                     n["q_learning_blocks"][:, 3] + 0.03)},
     "not the reference's"),
    ("prioritized_sweeping", lambda n: {"prioritized_sweeping": n["dyna_q"]}, "2/3 of Dyna-Q"),
    ("prioritized_sweeping", lambda n: {"prioritized_sweeping": np.full_like(
        n["dyna_q"], np.inf)}, "did not find the path"),
    ("dyna_maze", lambda n: {"lengths": np.broadcast_to(n["lengths"][:1], n["lengths"].shape)},
     "planning"),
    ("dyna_maze", lambda n: {"blocking_dyna_q_plus": n["blocking_dyna_q"]}, "new path sooner"),
    ("dyna_maze", lambda n: {"blocking_dyna_q": np.zeros_like(n["blocking_dyna_q"])},
     "no run found the new path"),
    ("gridworld_values", lambda n: {"V_random": n["V_star"] + 1.0}, "exceeds v\\*"),
    ("random_walk", lambda n: {"rms": changed(n["rms"], np.s_[0, 0, 0], 0.0)}, "start at"),
    ("n_step_aggregation", lambda n: {"errors": changed(n["errors"], np.s_[3, 5, 0], 0.01)},
     "below the exact least RMS error"),  # one run better than any weights can be
    ("n_step_aggregation", lambda n: {"group_sizes": np.full(10, 100.0)},
     "not the book's 20"),  # Figure 9.1's ten groups of 100 states
    ("n_step_aggregation", lambda n: {"errors": np.broadcast_to(n["errors"][:1],
                                                                n["errors"].shape)},
     "n = 1 has the lowest error"),  # every n as good as n = 1
    ("n_step_aggregation", lambda n: {"errors": changed(n["errors"], np.s_[:, -1],
                                                        n["errors"][0, 0, 0] - 0.01)},
     "does not blow up"),  # as if the largest step stayed below the initial error
    ("fourier_polynomial", lambda n: {"curves": changed(n["curves"], np.s_[3, 0, -1], 0.0)},
     "below the exact minimum"),
    ("fourier_polynomial", lambda n: {"floor": n["floor"][::-1]}, "whose estimates it contains"),
    ("fourier_polynomial", lambda n: {"curves": changed(n["curves"], np.s_[3:], n["curves"][:3])},
     "fourier order 5 does not end below polynomial order 5"),  # Fourier no better
    ("fourier_polynomial", lambda n: {"curves": np.broadcast_to(n["curves"][:, :, :1],
                                                                n["curves"].shape)},
     "not nearer its exact floor"),  # stuck after the first points
    ("tile_coding_walk", lambda n: {"curves": changed(n["curves"], np.s_[1, 0, 5], 0.0)},
     "below the exact minimum"),
    ("tile_coding_walk", lambda n: {"floor": n["floor"][::-1]}, "whose estimates it contains"),
    ("tile_coding_walk", lambda n: {"spans": np.array([250, 250, 272])},
     "span other estimates than the book's"),  # tiles of 199 and 201 states
    ("tile_coding_walk", lambda n: {"curves": changed(n["curves"], 1, n["curves"][0])},
     "does not end below"),  # many tilings no better than one
    ("tile_coding_walk", lambda n: {"curves": changed(n["curves"], 1, n["curves"][0])},
     "not below one tiling's exact minimum"),
    ("tile_coding_walk", lambda n: {"curves": np.broadcast_to(n["curves"][:, :, :1],
                                                              n["curves"].shape)},
     "not nearer its exact floor"),
    ("exploration_regret", lambda n: {"RiverSwim_ucrl2_paper": n["RiverSwim_ucrl2_bound"] * 1.01},
     "exceeds Jaksch et al.'s Theorem 2 bound"),  # a regret above the published bound
    ("pac_exploration", lambda n: {"Garnet_changes": n["Garnet_changes"] + n["Garnet_pairs"]},
     "more often than it has pairs"),  # R-max re-planning without a newly known pair
    ("pac_exploration", lambda n: {"RiverSwim_gap_low": n["RiverSwim_gap_low"] - 1e-6},
     "a policy beats V\\*"),  # a gap below 0: V* not optimal
    ("pac_exploration", lambda n: {"RiverSwim_audit": n["RiverSwim_audit"] + 1e-6},
     "independent evaluation"),  # the linear solve and the iteration disagree
]


@pytest.mark.parametrize("name, change, message", BROKEN,
                         ids=[f"{name}-{message}" for name, _, message in BROKEN])
def test_a_check_fails_on_numbers_that_miss_its_finding(shared_dir, name, change, message):
    numbers = quick_numbers(shared_dir, name)
    assert failures(name, numbers) == []
    found = failures(name, {**numbers, **change(numbers)})
    if message is None:
        assert found == []
    else:
        assert any(re.search(message, f) for f in found), found


def test_random_walk_first_visit_mc_misses_the_book(monkeypatch):
    module = registry.load("random_walk")
    every = module.run(module.Config.quick(), LocalExecutor(progress=False))
    assert failures("random_walk", every) == []
    monkeypatch.setitem(module.METHODS, "MC",
                        functools.partial(module.mc_prediction, first_visit=True))
    first = module.run(module.Config.quick(), LocalExecutor(progress=False))
    assert any("MC's best late RMS error" in f for f in failures("random_walk", first))


# ---------------------------------------------------------------- checks know their settings
def test_book_checks_do_not_apply_at_other_settings(tmp_path, capsys):
    """gridworld_values --set gamma=0.95: the book's gamma = 0.9 numbers are not
    compared, the invariant still runs, and the run exits 0."""
    assert cli.main(["gridworld_values", "--quick", "--out", str(tmp_path),
                        "--set", "gamma=0.95"]) == 0
    log = capsys.readouterr()
    assert "book_values: not applicable (gamma = 0.95, the book uses 0.9)" in log.out + log.err
    stored = record(tmp_path, "gridworld_values")
    verdicts = {c["name"]: c for c in stored["checks"]}
    assert verdicts["book_values"]["status"] == "not applicable"
    assert verdicts["book_values"]["changed"] == ["gamma = 0.95, the book uses 0.9"]
    assert verdicts["optimal_beats_random"]["status"] == "passed"
    assert stored["failed_checks"] == []
    skipped = runner.run_experiment("gridworld_values", tmp_path, quick=True,
                                    settings={"gamma": 0.95})  # the record says the same
    assert skipped.skipped and [v.name for v in skipped.not_applicable] == ["book_values"]


def test_an_invariant_still_fails_at_other_settings(shared_dir):
    module = registry.load("gridworld_values")
    numbers = quick_numbers(shared_dir, "gridworld_values")
    broken = {**numbers, "V_random": numbers["V_star"] + 1.0}
    config = dataclasses.replace(module.Config.quick(), gamma=0.95)
    verdicts = {v.name: v for v in checks.judge(module, broken, config, quick=True)}
    assert verdicts["book_values"].status == "not applicable"
    assert verdicts["optimal_beats_random"].status == "failed"


def test_a_setting_that_quick_changes_is_compared_with_its_quick_value():
    module = registry.load(SEEDED)
    quick = module.Config.quick()
    assert checks.changes(module, ("episodes",), quick, quick=True) == ()
    config = dataclasses.replace(quick, episodes=40, epsilon=0.2)
    assert checks.changes(module, ("episodes", "epsilon", "runs"), config, quick=True) == (
        f"episodes = 40, --quick uses {quick.episodes}", "epsilon = 0.2, the book uses 0.1")


def test_every_check_is_documented_and_depends_on_settings_its_config_has():
    for name in registry.EXPERIMENTS:
        found = checks.checks_of(registry.load(name))  # raises on a setting it lacks
        assert found, f"{name} has no checks"
        for fn in found:
            assert fn.__doc__, f"{name}.{fn.__name__} has no docstring"


def test_a_check_on_a_setting_the_config_lacks_is_an_error():
    @checks.check("no_such_setting")
    def wrong(results):
        return []

    module = SimpleNamespace(__name__="tabular.experiments.fake", Config=random_walk.Config,
                             wrong=wrong)
    with pytest.raises(ValueError, match="no_such_setting"):
        checks.checks_of(module)


def test_set_on_the_command_line_reaches_the_record_and_the_title(tmp_path, monkeypatch):
    titles = []
    real_save = registry.load(SEEDED).style.save

    def save(fig, path):
        titles.append(fig.get_suptitle())
        return real_save(fig, path)

    monkeypatch.setattr(registry.load(SEEDED).style, "save", save)
    assert cli.main(["--quick", "--out", str(tmp_path), SEEDED, "--set", "epsilon=0.2",
                        "--set", "runs=3", "--set", "episodes=40"]) == 0
    stored = record(tmp_path, SEEDED)
    assert stored["config"]["epsilon"] == 0.2 and stored["config"]["runs"] == 3
    assert [c["status"] for c in stored["checks"]] == ["not applicable"]  # the book's epsilon
    assert titles and all("0.2" in title for title in titles), titles
    # the Python entry point writes the same files
    python = tmp_path / "python"
    runner.run_experiment(SEEDED, python, quick=True,
                          settings={"epsilon": 0.2, "runs": 3, "episodes": 40})
    for name in stored["digests"]:
        if not name.endswith(".png"):  # PNGs carry matplotlib's metadata, not our numbers
            assert (python / SEEDED / name).read_bytes() == (tmp_path / SEEDED / name).read_bytes()


def test_help_of_an_experiment_lists_its_settings_with_their_docstrings(capsys):
    with pytest.raises(SystemExit):
        cli.main([SEEDED, "--help"])
    out = capsys.readouterr().out
    assert "epsilon (float, default 0.1)" in out
    assert "Exploration rate" in out


def test_importing_the_experiments_main_module_runs_nothing(monkeypatch):
    import importlib
    import sys

    def refuse(*args, **kwargs):
        raise AssertionError("importing tabular.experiments.__main__ started a run")

    monkeypatch.setattr(cli, "main", refuse)
    monkeypatch.delitem(sys.modules, "tabular.experiments.__main__", raising=False)
    # pydoc, Sphinx and walk_packages do this
    importlib.import_module("tabular.experiments.__main__")


def test_leaderboard_check_states_each_learners_gap(shared_dir):
    """The quick leaderboard passes its checks; a learner that stops short at the checked
    budget, IPO landing on pi*, a gap that is not beta KL(pi || pi*) and a best-of-N KL
    above log N - (N-1)/N each fail them."""
    numbers = quick_numbers(shared_dir, "rlhf_leaderboard")

    def check(numbers):
        return failures("rlhf_leaderboard", numbers)

    assert check(numbers) == []
    methods, betas = list(numbers["methods"]), numbers["betas"][:, None, None, None]
    j = list(numbers["capital_budgets"]).index(1024)

    def with_gap(method, value):
        gap = numbers["capital_gap"].copy()
        gap[0, methods.index(method), j] = value
        return {**numbers, "capital_gap": gap, "capital_kl_opt": gap / betas}

    assert any("PPO's mean gap" in f for f in check(with_gap("PPO", 0.2)))
    assert any("IPO's mean gap" in f for f in check(with_gap("IPO", 1e-3)))
    assert check(with_gap("PPO", 0.5 * numbers["capital_gap"][0, methods.index("PPO"), j]))\
        == []
    skewed = {**numbers, "capital_kl_opt": numbers["capital_kl_opt"] * 1.01}
    assert any("beta KL" in f for f in check(skewed))
    loose = numbers["capital_bon_kl"].copy()
    loose[-1] = numbers["capital_bon_kl_bound"][-1] + 0.1
    assert any("best-of-N's exact KL" in f
               for f in check({**numbers, "capital_bon_kl": loose}))
