"""The shared core: random streams, the runs drivers, the results' base, the softmax
policy, argument checks."""

import os
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from numba.core.cpu_options import ParallelOptions
from numba.core.errors import NumbaPerformanceWarning

from tabular import (
    BanditResult,
    ControlResult,
    DifferentialResult,
    PredictionResult,
    SoftmaxPolicy,
    TabularMDP,
    q_learning,
    seed_states,
)
from tabular._numba.frame import local_stream
from tabular._numba.rng import bernoulli, categorical, randint, uniform
from tabular._numba.runs import SIMPLIFYING_PIPELINE
from tabular.checks import check_gamma, check_positive, check_positive_int, policy_matrix
from tabular.model.policy import as_softmax_policy
from tabular.model.sampling import count_at_most
from tabular.results import RunsResult
from tabular.rules.policy_gradient import log_softmax, sample_softmax, softmax


@njit(cache=True)
def _draw_uniforms(state, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = uniform(state)
    return out


@njit(cache=True)
def _draw_categorical(state, p, n):
    counts = np.zeros(p.shape[0], dtype=np.int64)
    for _ in range(n):
        counts[categorical(state, p)] += 1
    return counts


@njit(cache=True)
def _draw_ints(state, k, n):
    counts = np.zeros(k, dtype=np.int64)
    for _ in range(n):
        counts[randint(state, k)] += 1
    return counts


def test_streams_are_reproducible_and_prefix_stable():
    a = seed_states(42, 3)
    b = seed_states(42, 5)
    np.testing.assert_array_equal(a, b[:3])  # run i does not depend on how many runs
    assert len({tuple(row) for row in b}) == 5  # independent streams differ
    x = _draw_uniforms(a[0].copy(), 1000)
    y = _draw_uniforms(b[0].copy(), 1000)
    np.testing.assert_array_equal(x, y)


@njit(cache=True)
def _bernoulli_against_uniform(state, p, n):
    """Decisions of :func:`bernoulli` and of ``uniform < p`` on two copies of one stream."""
    other = state.copy()
    agree = 0
    for _ in range(n):
        agree += bernoulli(state, p) == (uniform(other) < p)
    return agree


@settings(max_examples=60, deadline=None)
@given(p=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 2.0**-53, 0.5, 1 - 2.0**-53, 1.0])),
       seed=st.integers(0, 2**32))
def test_bernoulli_decides_as_uniform_below_p(p, seed):
    """The integer threshold of ``bernoulli`` takes the decision ``uniform < p`` takes
    on the same draw, bit for bit."""
    assert _bernoulli_against_uniform(seed_states(seed)[0], p, 2_000) == 2_000


@njit(cache=True)
def _local_draws(states, n):
    out = np.empty((states.shape[0], n))
    for run in range(states.shape[0]):
        rng = local_stream(states[run])
        for i in range(n):
            out[run, i] = uniform(rng)
    return out


def test_a_local_stream_draws_what_the_state_array_draws_and_leaves_it():
    states = seed_states(5, 3)
    kept = states.copy()
    local = _local_draws(states, 100)
    np.testing.assert_array_equal(states, kept)  # the caller's states are not advanced
    for run in range(3):
        np.testing.assert_array_equal(local[run], _draw_uniforms(kept[run].copy(), 100))


def test_uniform_is_uniform_on_unit_interval():
    u = _draw_uniforms(seed_states(0)[0], 200_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    # mean 1/2 and variance 1/12; standard errors ~0.00065 and ~0.0002 at this n
    assert abs(u.mean() - 0.5) < 0.004
    assert abs(u.var() - 1 / 12) < 0.0015
    hist = np.histogram(u, bins=10, range=(0, 1))[0] / u.size
    assert np.all(np.abs(hist - 0.1) < 0.005)  # 5 standard errors (sd ~0.00067)


def test_categorical_and_randint_frequencies():
    p = np.array([0.0, 0.2, 0.5, 0.0, 0.3])
    n = 100_000
    counts = _draw_categorical(seed_states(1)[0], p, n)
    assert counts[0] == 0 and counts[3] == 0  # zero-probability outcomes never drawn
    np.testing.assert_allclose(counts / n, p, atol=0.008)  # > 5 sd (sd <= 0.0016)
    ints = _draw_ints(seed_states(2)[0], 7, n)
    np.testing.assert_allclose(ints / n, 1 / 7, atol=0.006)


@settings(max_examples=60, deadline=None)
@given(seed=st.one_of(st.none(), st.integers(0, 2**140)), runs=st.integers(1, 40))
def test_seed_states_are_numpys_spawned_seed_sequences(seed, runs):
    """The vectorised states are those of ``SeedSequence(seed).spawn(runs)``, word for
    word (seeds of one to five 32-bit words; ``None``: fresh OS entropy)."""
    entropy = np.random.SeedSequence(seed).entropy
    children = np.random.SeedSequence(entropy).spawn(runs)
    expected = np.array([c.generate_state(4, dtype=np.uint64) for c in children])
    np.testing.assert_array_equal(seed_states(entropy, runs), expected)


def test_seed_states_rejects_bad_runs():
    with pytest.raises(ValueError, match="runs"):
        seed_states(0, 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-50, 50), st.just(-np.inf)), min_size=1, max_size=8)
       .filter(lambda xs: any(np.isfinite(xs))))
def test_softmax_kernels_match_numpy(logits):
    logits = np.array(logits)
    probs = np.empty_like(logits)
    logp = np.empty_like(logits)
    softmax(logits, probs)
    log_softmax(logits, logp)
    finite = np.isfinite(logits)
    expected = np.where(finite, np.exp(logits - logits[finite].max()), 0.0)
    expected /= expected.sum()
    np.testing.assert_allclose(probs, expected, rtol=1e-12, atol=1e-300)
    assert np.all(np.isneginf(logp[~finite]))
    np.testing.assert_allclose(np.exp(logp[finite]), probs[finite], rtol=1e-10)
    assert not np.isnan(probs).any() and not np.isnan(logp).any()


def test_sample_softmax_never_picks_masked_action():
    @njit
    def draw(logits, state, n):
        buf = np.empty(logits.shape[0])
        counts = np.zeros(logits.shape[0], dtype=np.int64)
        for _ in range(n):
            counts[sample_softmax(logits, buf, state)] += 1
        return counts

    counts = draw(np.array([0.0, -np.inf, np.log(3.0)]), seed_states(3)[0], 40_000)
    assert counts[1] == 0
    assert abs(counts[2] / counts.sum() - 0.75) < 0.012  # sd ~0.0022


def test_softmax_policy_shares_rows_and_validates():
    pol = SoftmaxPolicy(np.array([[0.0, np.log(3.0)], [0.0, 0.0]]), np.array([0, 0, 1]))
    np.testing.assert_allclose(pol.probs(), [[0.25, 0.75], [0.25, 0.75], [0.5, 0.5]])
    np.testing.assert_allclose(np.exp(pol.log_probs()), pol.probs())
    tab = SoftmaxPolicy.tabular(4, 3)
    np.testing.assert_allclose(tab.probs(), np.full((4, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"row_of_state\[1\] = 5"):
        SoftmaxPolicy(np.zeros((2, 2)), np.array([0, 5]))
    with pytest.raises(ValueError, match="row 1 is -inf everywhere"):
        SoftmaxPolicy(np.array([[0.0, 1.0], [-np.inf, -np.inf]]), np.array([0, 1]))
    with pytest.raises(ValueError, match="NaN"):
        SoftmaxPolicy(np.array([[np.nan, 1.0]]), np.array([0]))


def _two_state_mdp():
    ns = np.array([[[1], [0]], [[1], [1]]])
    one = np.ones((2, 2, 1))
    return TabularMDP(ns, one, -one, np.zeros((2, 2, 1), bool), np.array([1.0, 0.0]),
                      state_labels=("left", "right"))


def test_policy_matrix_forms_and_errors():
    mdp = _two_state_mdp()
    np.testing.assert_array_equal(policy_matrix(mdp, np.array([1, 0])), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(policy_matrix(mdp, SoftmaxPolicy.tabular(2, 2)),
                                  np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match=r"policy\[1\] = 2 is not an action.*right"):
        policy_matrix(mdp, np.array([0, 2]))
    with pytest.raises(ValueError, match=r"policy\[0\].*not a probability distribution.*left"):
        policy_matrix(mdp, np.array([[0.5, 0.6], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="shape"):
        policy_matrix(mdp, np.ones((3, 2)) / 2)
    with pytest.raises(ValueError, match="policy covers 3 states and 2 actions; the MDP has 2"):
        policy_matrix(mdp, SoftmaxPolicy.tabular(3, 2))
    with pytest.raises(ValueError, match=r"policy of shape \[2\] must hold integer actions"):
        policy_matrix(mdp, np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="must hold numbers"):
        policy_matrix(mdp, np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match=r"ref\[1\] = -1 is not an action.*right"):
        policy_matrix(mdp, [0, -1], "ref")


def test_policy_matrix_returns_a_new_matrix_and_takes_a_shape_for_a_model():
    mdp = _two_state_mdp()
    given = np.array([[0.25, 0.75], [1.0, 0.0]])
    pi = policy_matrix(mdp, given)
    np.testing.assert_array_equal(pi, given)
    assert pi.dtype == np.float64 and pi.flags.c_contiguous and not np.shares_memory(pi, given)
    np.testing.assert_array_equal(policy_matrix((2, 2), [1, 0]), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(policy_matrix((2, 2), [[1, 0], [0, 1]]), np.eye(2))
    with pytest.raises(ValueError, match=r"policy\[1\] = 2 is not an action in \[0, 2\) "
                                         r"\(state 1\)"):
        policy_matrix((2, 2), [0, 2])


def test_both_converters_agree_on_every_policy_form():
    mdp = _two_state_mdp()
    for policy in (np.array([1, 0]), np.array([[0.25, 0.75], [1.0, 0.0]]),
                   SoftmaxPolicy(np.array([[0.0, np.log(3.0)]]), np.array([0, 0]))):
        np.testing.assert_allclose(policy_matrix(mdp, as_softmax_policy(mdp, policy)),
                                   policy_matrix(mdp, policy), rtol=0, atol=1e-15)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_check_gamma_rejects(bad):
    with pytest.raises(ValueError, match="gamma must be in"):
        check_gamma(bad)


def test_positive_checks_name_the_parameter():
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        check_positive("alpha", 0.0)
    with pytest.raises(ValueError, match="episodes must be an integer >= 1"):
        check_positive_int("episodes", 0)
    with pytest.raises(ValueError, match="episodes"):
        check_positive_int("episodes", 2.5)
    assert check_positive_int("episodes", 3) == 3


# --------------------------------------------------------------------- runs drivers


#: The head of a probe script: records the name of every function numba compiles.
COUNT_COMPILES = """
import numpy as np
from numba.core import event

compiled = []


class Compiles(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


event.register("numba:compile", Compiles())
"""

CACHE_PROBE = COUNT_COMPILES + """
from tabular import mc_prediction, q_learning, td0
from tabular.testing import random_mdp

mdp = random_mdp(np.random.default_rng(0), 4, 2, 2, done_rate=0.3)
pi = np.full((4, 2), 0.5)
q_learning(mdp, episodes=3, runs=2)
td0(mdp, pi, episodes=3)
mc_prediction(mdp, pi, episodes=3)
print(sorted(set(compiled)))
"""


def compiled_in_two_processes(probe: str, env: dict) -> tuple[str, str]:
    """What ``probe`` prints last, the functions numba compiled, in a first process and
    in a second one on the disk cache the first left."""
    first, second = (subprocess.run([sys.executable, "-c", probe], env=env, check=True,
                                    capture_output=True, text=True).stdout.split("\n")[-2]
                     for _ in range(2))
    return first, second


def test_the_disk_cache_serves_the_runs_drivers_in_a_new_process(tmp_path):
    """The runs drivers (with a method constant, or plain over a run function inlined or
    compiled on its own) are served by numba's disk cache: a second process compiles
    nothing."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    first, second = compiled_in_two_processes(CACHE_PROBE, env)
    assert "_q_learning" in first and "_mc_prediction" in first
    assert second == "[]"


ROLLOUT_DRIVER = """
from numba import njit

from tabular._numba.rng import uniform
from tabular._numba.runs import run_keeping_stream, runs_kernel


@njit(cache=True, inline="always")
def _draw_run(model, params, rollout, rng, out, run):
    out[run] = uniform(rng)


@runs_kernel
def _draws(model, params, rollout, rng_states, out):
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_draw_run, model, params, rollout, rng_states, out, run)
"""

ROLLOUT_PROBE = COUNT_COMPILES + """
from rollout_driver import _draws

from tabular._numba.rng import seed_states, uniform

states, out = seed_states(7, 3), np.empty(3)
fresh = states.copy()
_draws(0, 0, 0, states, out)
_draws(0, 0, 0, states, out)  # the kept streams continue: each run's second draw
second = [(uniform(fresh[run]), uniform(fresh[run]))[1] for run in range(3)]
assert out.tolist() == second, (out, second)
print(sorted(set(compiled)))
"""


def test_a_rollout_driver_keeps_each_stream_and_is_served_by_the_disk_cache(tmp_path):
    """``run_keeping_stream`` takes the run function its driver names, writes each run's
    advanced stream back (a second call continues it), and is inlined before typing:
    the driver caches, and a second process compiles nothing."""
    (tmp_path / "rollout_driver.py").write_text(ROLLOUT_DRIVER)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                       os.environ.get("PYTHONPATH")]))}
    first, second = compiled_in_two_processes(ROLLOUT_PROBE, env)
    assert "_draws" in first
    assert second == "[]"


def test_the_simplifying_pipeline_stays_simplifying():
    """numba pops the keys of a ``parallel=`` dict as it compiles: a dict would give
    every later compile (another signature, another kernel) the whole parallel
    pipeline, 40x slower per call on a loaded machine."""
    @njit(parallel=SIMPLIFYING_PIPELINE)
    def twice(x):
        return x * 2

    twice(1), twice(1.0)
    assert len(twice.overloads) == 2
    # what the next compile reads: a dict would be {} by now, ParallelOptions(True)
    assert ParallelOptions(twice.targetoptions["parallel"]) == SIMPLIFYING_PIPELINE
    assert not SIMPLIFYING_PIPELINE.prange and not SIMPLIFYING_PIPELINE.fusion


def test_only_the_simplifying_pipelines_report_is_silenced():
    """numba reports that a ``parallel=`` kernel made no parallel loop. The report is
    ignored while a kernel of the simplifying pipeline compiles (it is not meant to make
    one), and then only: a user's ``parallel=True`` kernel keeps it, and the warning
    filters are as they were."""
    @njit(parallel=SIMPLIFYING_PIPELINE)
    def ours(x):
        return x + 1

    @njit(parallel=True)
    def users(x):
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        filters = list(warnings.filters)
        ours(1)
        assert warnings.filters == filters
        users(1)
    reports = [w for w in caught if "no transformation for parallel" in str(w.message)]
    assert len(reports) == 1 and reports[0].category is NumbaPerformanceWarning


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.integers(-1, 40))
def test_count_at_most_is_searchsorted_right(steps, u):
    """``sample_start``'s binary search gives ``np.searchsorted(side="right")``'s index,
    ties and the ends included."""
    cdf = np.cumsum(np.array(steps, dtype=float)) / 4.0
    assert count_at_most(cdf, u / 4.0) == np.searchsorted(cdf, u / 4.0, side="right")


# --------------------------------------------------------------------- results


def test_a_result_prints_as_a_short_summary():
    mdp = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    res = q_learning(mdp, episodes=20, runs=50)
    text = repr(res)
    assert len(text) < 600
    assert text == ("ControlResult(episode_returns=float64[50, 20], "
                    "episode_lengths=int64[50, 20], Q=float64[50, 48, 4])")
    assert repr(res.run(0)).startswith("ControlResult(episode_returns=float64[20], ")
    for kind in (PredictionResult, ControlResult, BanditResult, DifferentialResult):
        assert kind.__repr__ is RunsResult.__repr__, kind  # @dataclass(repr=False)
        assert kind.__dataclass_params__.frozen
