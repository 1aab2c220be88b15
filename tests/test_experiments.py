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
import shutil
import textwrap

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from experiments import random_walk, runner, storage
from experiments.executor import LocalExecutor, make_executor

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
    """``python -m experiments --quick NAME`` into the shared directory, once per session."""
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
    for name in runner.EXPERIMENTS:
        out = quick_run(shared_dir, name)
    return out


def record(out, name) -> dict:
    return json.loads((out / name / runner.CONFIG).read_text())


@pytest.mark.parametrize("name", runner.EXPERIMENTS)
def test_quick_run_writes_its_files_and_passes_its_checks(shared_dir, name):
    quick_results = quick_run(shared_dir, name)
    meta = record(quick_results, name)
    assert meta["experiment"] == name and meta["quick"] is True
    assert meta["version"] == runner.tabular.__version__
    assert "seed" in meta and meta["config"]
    numbers = runner.load_numbers(quick_results / name / runner.NUMBERS)
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
    assert runner.main(["--quick", "--out", str(out)]) == 0
    log = capsys.readouterr()
    assert (log.out + log.err).count("skipped (finished before)") == len(runner.EXPERIMENTS)


def test_rerun_skips_finished_experiments(quick_results, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(quick_results, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    outcomes = [runner.run_experiment(name, out, LocalExecutor(progress=False), quick=True)
                for name in runner.EXPERIMENTS]
    assert all(o.skipped for o in outcomes)
    after = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    assert after == before


def test_force_recomputes_the_same_numbers(shared_dir, tmp_path):
    name = SEEDED
    quick_results = quick_run(shared_dir, name)
    out = tmp_path / "copy"
    shutil.copytree(quick_results / name, out / name)
    stamp = (out / name / runner.NUMBERS).stat().st_mtime_ns
    outcome = runner.run_experiment(name, out, LocalExecutor(progress=False), quick=True,
                                    force=True)
    assert not outcome.skipped and outcome.failures == []
    assert (out / name / runner.NUMBERS).stat().st_mtime_ns != stamp
    again = runner.load_numbers(out / name / runner.NUMBERS)
    first = runner.load_numbers(quick_results / name / runner.NUMBERS)
    assert again.keys() == first.keys()
    for key in first:  # same seed, same numbers, bit for bit
        np.testing.assert_array_equal(again[key], first[key], err_msg=key)


def test_a_different_config_is_not_skipped(shared_dir, tmp_path):
    name = CHEAPEST
    quick_results = quick_run(shared_dir, name)
    out = tmp_path / "copy"
    shutil.copytree(quick_results / name, out / name)
    module = runner.load(name)
    stored = runner.finished(out / name, runner.metadata(name, module.Config.quick(), True))
    assert stored is not None
    assert runner.finished(out / name, runner.metadata(name, module.Config(), False)) is None


def test_interrupted_run_keeps_what_finished(tmp_path, monkeypatch):
    first, second = runner.EXPERIMENTS[0], runner.EXPERIMENTS[1]
    module = runner.load(second)

    def interrupted(config, executor):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.main(["--quick", "--out", str(tmp_path), first, second])
    assert (tmp_path / first / runner.CONFIG).exists()
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
    monkeypatch.setattr(runner.load(name), "run", None)  # any recomputation would fail
    assert runner.main(["--replot", "--out", str(out), name]) == 0
    assert sorted(out.glob(f"{name}/*.png")) == pngs


def test_list_prints_one_line_per_experiment(capsys):
    assert runner.main(["--list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(runner.EXPERIMENTS)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_every_config_documents_its_fields_and_has_a_quick_variant():
    for name in runner.EXPERIMENTS:
        module = runner.load(name)
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
        runner.main(["no-such-experiment"])
    assert "unknown experiment" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        runner.main(["--runs", "0"])
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
    path = tmp_path_factory.mktemp("npz") / runner.NUMBERS
    runner.save_numbers(path, arrays)
    back = runner.load_numbers(path)
    assert back.keys() == arrays.keys()
    for key, value in arrays.items():
        assert back[key].dtype == value.dtype and back[key].shape == value.shape
        np.testing.assert_array_equal(back[key], value)  # NaN == NaN here


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / runner.NUMBERS
    runner.save_numbers(path, {"x": np.arange(3)})

    def broken(f):
        f.write(b"half a file")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        storage.atomic_write(path, broken)
    np.testing.assert_array_equal(runner.load_numbers(path)["x"], np.arange(3))
    assert [p.name for p in tmp_path.iterdir()] == [runner.NUMBERS]
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    with pytest.raises(TypeError, match="object dtype"):
        runner.save_numbers(path, {"bad": np.array([{}, 1], dtype=object)})


# ---------------------------------------------------------------- the checks can fail
def quick_numbers(shared_dir, name) -> dict:
    """The numbers of ``name``'s quick run, to perturb in front of its ``check``."""
    return runner.load_numbers(quick_run(shared_dir, name) / name / runner.NUMBERS)


def test_windy_check_wants_the_optimal_path_and_many_near_optimal_runs(shared_dir):
    check = runner.load("windy_gridworld").check
    numbers = quick_numbers(shared_dir, "windy_gridworld")
    steps = numbers["greedy_steps"]
    assert steps.min() == 15 and check(numbers) == []
    looping = np.full_like(steps, 100)
    looping[0] = 15  # one optimal run, every other one loops
    assert any("within 2 steps" in f for f in check(dict(numbers, greedy_steps=looping)))
    assert any("optimal" in f for f in check(dict(numbers, greedy_steps=steps + 1)))


def test_short_corridor_check_counts_stuck_runs_and_judges_the_rest(shared_dir):
    check = runner.load("short_corridor").check
    numbers = quick_numbers(shared_dir, "short_corridor")
    v_star = float(numbers["v_star"])
    returns = numbers["returns"].copy()
    returns[0, :2] = -1000.0  # two stuck runs: left out of the mean, within the allowance
    assert check(dict(numbers, returns=returns)) == []
    returns[0, : returns.shape[1] // 4] = -1000.0  # a quarter of the runs stuck
    assert any("runs stuck" in f for f in check(dict(numbers, returns=returns)))
    slow = numbers["returns"].copy()
    slow[2, :, -100:] = v_star - 8.0  # the smallest step size ends 8 below v*
    assert any("not within 5" in f for f in check(dict(numbers, returns=slow)))


def test_trap_check_wants_pi_right_to_fall_from_the_prior(shared_dir):
    check = runner.load("trap_treasure").check
    numbers = quick_numbers(shared_dir, "trap_treasure")
    flat = np.full_like(numbers["p_right"], 0.25)
    failures = check(dict(numbers, p_right=flat))
    assert any("below 0.05" in f for f in failures) and any("0.15" in f for f in failures)


def test_token_check_judges_the_median_ppo_run(shared_dir):
    check = runner.load("token_rlhf").check
    numbers = quick_numbers(shared_dir, "token_rlhf")
    runs = numbers["ppo_proxy"].shape[1]
    for stuck, fails in ((3, False), (runs // 2 + 1, True)):  # runs 0.3 below the optimum
        proxy = numbers["ppo_proxy"].copy()
        proxy[0, :stuck] -= 0.3
        failures = check(dict(numbers, ppo_proxy=proxy))
        assert any("PPO's median run" in f for f in failures) == fails, stuck


def test_random_walk_first_visit_mc_misses_the_book(monkeypatch):
    module = runner.load("random_walk")
    every = module.run(module.Config.quick(), LocalExecutor(progress=False))
    assert module.check(every) == []
    monkeypatch.setitem(module.METHODS, "MC",
                        functools.partial(module.mc_prediction, first_visit=True))
    first = module.run(module.Config.quick(), LocalExecutor(progress=False))
    assert any("MC's best late RMS error" in f for f in module.check(first))


def test_set_on_the_command_line_reaches_the_record_and_the_title(tmp_path, monkeypatch):
    titles = []
    real_save = runner.load(SEEDED).style.save

    def save(fig, path):
        titles.append(fig.get_suptitle())
        return real_save(fig, path)

    monkeypatch.setattr(runner.load(SEEDED).style, "save", save)
    assert runner.main(["--quick", "--out", str(tmp_path), SEEDED, "--set", "epsilon=0.2",
                        "--set", "runs=3", "--set", "episodes=40"]) in (0, 1)
    stored = record(tmp_path, SEEDED)
    assert stored["config"]["epsilon"] == 0.2 and stored["config"]["runs"] == 3
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
        runner.main([SEEDED, "--help"])
    out = capsys.readouterr().out
    assert "epsilon (float, default 0.1)" in out
    assert "Exploration rate" in out


def test_importing_the_experiments_main_module_runs_nothing(monkeypatch):
    import importlib
    import sys

    def refuse(*args, **kwargs):
        raise AssertionError("importing experiments.__main__ started a run")

    monkeypatch.setattr(runner, "main", refuse)
    monkeypatch.delitem(sys.modules, "experiments.__main__", raising=False)
    importlib.import_module("experiments.__main__")  # pydoc, Sphinx and walk_packages do this


def test_n_step_check_wants_an_intermediate_n_best(shared_dir):
    numbers = quick_numbers(shared_dir, "n_step_walk")
    assert runner.load("n_step_walk").check(numbers) == []
    flattened = dict(numbers)
    flattened["errors"] = np.broadcast_to(numbers["errors"][:1], numbers["errors"].shape)
    failures = runner.load("n_step_walk").check(flattened)  # every n as good as n = 1
    assert any("lowest error" in f or "clearly above" in f for f in failures)


def test_car_rental_check_wants_four_improvements_and_the_book_policy(shared_dir):
    numbers = quick_numbers(shared_dir, "car_rental")
    assert runner.load("car_rental").check(numbers) == []
    short = {**numbers, "improvements": np.array(3)}
    assert any("improvements" in f for f in runner.load("car_rental").check(short))


def test_blackjack_check_wants_the_book_policy(shared_dir):
    numbers = quick_numbers(shared_dir, "blackjack")
    assert runner.load("blackjack").check(numbers) == []
    flipped = {**numbers, "pi_star": 1 - numbers["pi_star"]}
    assert any("sticks from" in f for f in runner.load("blackjack").check(flipped))


def test_lambda_check_wants_accumulating_traces_to_blow_up(shared_dir):
    numbers = quick_numbers(shared_dir, "lambda_walk")
    assert runner.load("lambda_walk").check(numbers) == []
    tame = numbers["errors"].copy()
    tame[1] = np.minimum(tame[1], 0.5)  # as if accumulating traces stayed bounded
    failures = runner.load("lambda_walk").check({**numbers, "errors": tame})
    assert any("blow up" in f for f in failures)


def test_maximization_bias_check_wants_q_learning_biased_and_double_q_not(shared_dir):
    numbers = quick_numbers(shared_dir, "maximization_bias")
    check = runner.load("maximization_bias").check
    assert check(numbers) == []
    unbiased = {**numbers, "q_learning": numbers["double_q_learning"]}
    assert any("maximization bias" in f for f in check(unbiased))
    biased = {**numbers, "double_q_learning": numbers["q_learning"]}
    assert any("Double Q-learning's % left ends" in f for f in check(biased))


def test_prioritized_sweeping_check_wants_fewer_updates_than_dyna_q(shared_dir):
    numbers = quick_numbers(shared_dir, "prioritized_sweeping")
    check = runner.load("prioritized_sweeping").check
    assert check(numbers) == []
    level = {**numbers, "prioritized_sweeping": numbers["dyna_q"]}
    assert any("2/3 of Dyna-Q" in f for f in check(level))
    stalled = {**numbers, "prioritized_sweeping": np.full_like(numbers["dyna_q"], np.inf)}
    assert any("did not find the path" in f for f in check(stalled))


def test_dyna_check_wants_planning_to_pay(shared_dir):
    numbers = quick_numbers(shared_dir, "dyna_maze")
    assert runner.load("dyna_maze").check(numbers) == []
    no_planning = {**numbers, "lengths": np.broadcast_to(numbers["lengths"][:1],
                                                         numbers["lengths"].shape)}
    assert any("planning" in f for f in runner.load("dyna_maze").check(no_planning))


def test_leaderboard_check_states_each_learners_gap(shared_dir):
    """The quick leaderboard passes its checks; a learner that stops short at the checked
    budget, IPO landing on pi*, a gap that is not beta KL(pi || pi*) and a best-of-N KL
    above log N - (N-1)/N each fail them."""
    check = runner.load("rlhf_leaderboard").check
    numbers = quick_numbers(shared_dir, "rlhf_leaderboard")
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
