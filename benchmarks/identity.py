"""Identity harness: a SHA-256 digest of every output of every public entry point.

Each case calls one public learner, solver or RLHF function (``tabular.<__all__>``,
``tabular.rlhf.<__all__>``, a few public methods) with small fixed arguments and fixed
seeds, on models built from public names only (``envs``, ``gymnasium.make("tabzoo/...")``,
``tabular.schedules``), and digests its result field by field: dataclass and NamedTuple
fields, dict entries and list items recursively; an array by its dtype, shape and raw
bytes, a float by ``repr``, an int by ``str``. Attributes that hold no number
(``method="sync"``, a vocabulary), callables and Gymnasium envs are metadata and left out;
strings inside numeric data (preference tuples, dict keys) and a case's own named outputs
(generated text) are kept. So two versions of the library agree on a case exactly when
every number it returns is bit-identical, whatever classes hold them.

    python -m benchmarks.identity save FILE    # write {case: {field: sha256}} as JSON
    python -m benchmarks.identity check FILE   # recompute; print every difference, exit 1
    ... -k TEXT                                # only the cases whose name contains TEXT
    ... -v                                     # and the seconds each case takes

To record another tree (e.g. a ``git worktree`` of the commit before a refactor), run
this file by its path with that tree first on ``sys.path``, then check this tree:

    cd /path/to/old && PYTHONPATH=$PWD python /path/to/this/benchmarks/identity.py save /tmp/id.json
    python -m benchmarks.identity check /tmp/id.json

``check`` reports a field of the baseline that the result no longer has as ``missing``
(after looking for it among the result's properties too, so a field that became a
property still compares), a field the result gained as a note only, and a case that
raises as an error. From an empty numba cache (as after moving a module) the harness
takes about 4-6 minutes, all but seconds of it compilation; from a warm one, ~10 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
import types
from functools import cache, partial

import gymnasium as gym
import numpy as np

import tabular
import tabular.rlhf as rlhf
from tabular import SoftmaxPolicy, TabularMDP, envs, schedules
from tabular.envs.mazes import BLOCKING_MAZE, DYNA_MAZE, changing_maze, maze


# ------------------------------------------------------------------ digests
def _is_record(x) -> bool:
    """A dataclass instance, a NamedTuple or a SimpleNamespace: digested field by field."""
    return ((dataclasses.is_dataclass(x) and not isinstance(x, type))
            or (isinstance(x, tuple) and hasattr(type(x), "_fields"))
            or isinstance(x, types.SimpleNamespace))


def _record_fields(x) -> list[tuple[str, object]]:
    if isinstance(x, types.SimpleNamespace):
        names = list(vars(x))
    elif isinstance(x, tuple):
        names = list(type(x)._fields)
    else:
        names = [f.name for f in dataclasses.fields(x)]
    out = []
    for name in names:
        if name.startswith("_"):
            continue
        try:
            out.append((name, getattr(x, name)))
        except Exception:  # noqa: BLE001 - an unreadable field is not an output
            continue
    return out


def _property_fields(x) -> list[tuple[str, object]]:
    """The public properties of ``x`` that can be read (for ``check``'s second look)."""
    out = []
    for name in dir(type(x)):
        if name.startswith("_") or not isinstance(getattr(type(x), name, None), property):
            continue
        try:
            out.append((name, getattr(x, name)))
        except Exception:  # noqa: BLE001 - e.g. ``policy`` of a multi-run result
            continue
    return out


def _skipped(x) -> bool:
    """Metadata and machinery: envs, modules, classes, functions."""
    return (isinstance(x, gym.Env | types.ModuleType | type)
            or (callable(x) and not _is_record(x) and not isinstance(x, np.ndarray)))


def _is_plain(x) -> bool:
    """Scalars, strings, and containers of them: digested as one value."""
    if x is None or isinstance(x, bool | int | float | str | np.generic):
        return True
    if isinstance(x, list | tuple | set | frozenset) and not _is_record(x):
        return all(_is_plain(v) for v in x)
    if isinstance(x, dict):
        return all(_is_plain(k) and _is_plain(v) for k, v in x.items())
    return False


def _numeric(x) -> bool:
    """Whether the plain value ``x`` holds a number (``None`` counts: an absent array)."""
    if x is None or isinstance(x, bool | int | float | complex | np.generic):
        return True
    if isinstance(x, dict):
        return any(_numeric(k) or _numeric(v) for k, v in x.items())
    return isinstance(x, list | tuple | set | frozenset) and any(_numeric(v) for v in x)


def _canon(x) -> bytes:
    """The canonical bytes of a value (what its digest is the SHA-256 of)."""
    if x is None:
        return b"N"
    if isinstance(x, bool | np.bool_):
        return b"b1" if x else b"b0"
    if isinstance(x, int | np.integer):
        return b"i" + str(int(x)).encode()
    if isinstance(x, float | np.floating):
        return b"f" + repr(float(x)).encode()
    if isinstance(x, complex | np.complexfloating):
        return b"c" + repr(complex(x)).encode()
    if isinstance(x, str):
        data = x.encode()
        return b"s%d:" % len(data) + data
    if isinstance(x, np.ndarray):
        head = f"a{x.dtype.str}{x.shape}:".encode()
        if x.dtype.hasobject:
            return head + b"".join(_canon(v) for v in x.ravel().tolist())
        return head + np.ascontiguousarray(x).tobytes()
    if isinstance(x, list | tuple):  # a list and a tuple of the same values agree
        return b"(%d:" % len(x) + b"".join(_canon(v) for v in x) + b")"
    if isinstance(x, set | frozenset):
        return b"{%d:" % len(x) + b"".join(sorted(_canon(v) for v in x)) + b"}"
    if isinstance(x, dict):  # order-free: equal dicts have equal digests
        items = sorted(_canon(k) + b"=" + _canon(v) for k, v in x.items())
        return b"<%d:" % len(x) + b"".join(items) + b">"
    raise TypeError(f"cannot digest a {type(x).__name__}")


def _sha(x) -> str:
    return hashlib.sha256(_canon(x)).hexdigest()


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def digest(x, path: str = "", out: dict | None = None, *, properties: bool = False,
           depth: int = 0) -> dict[str, str]:
    """``{field path: sha256}`` of ``x``: records field by field (``a.b``), non-plain
    lists and dicts item by item (``a[0]``, ``a['key']``), every other value as one
    digest (``value`` at the top). ``properties=True`` adds the public properties of
    records (``check`` looks there for a field that has become a property)."""
    out = {} if out is None else out
    if depth > 12:
        return out
    if _is_record(x):
        fields = _record_fields(x)
        if properties and not isinstance(x, types.SimpleNamespace):
            fields += _property_fields(x)
            if isinstance(x, tuple):
                fields += [(f"[{i}]", v) for i, v in enumerate(x)]
        mine = isinstance(x, types.SimpleNamespace)  # a case's own outputs: all kept
        for name, value in fields:
            if _skipped(value) or (not mine and _is_plain(value) and not _numeric(value)):
                continue  # non-numeric attributes are metadata (``method``, ``eos``)
            sub = f"{path}{name}" if name.startswith("[") else _join(path, name)
            digest(value, sub, out, properties=properties, depth=depth + 1)
    elif _skipped(x):
        pass
    elif isinstance(x, dict) and not _is_plain(x):
        for key in sorted(x, key=repr):
            digest(x[key], f"{path}[{key!r}]", out, properties=properties, depth=depth + 1)
    elif isinstance(x, list | tuple) and not _is_plain(x):
        for i, value in enumerate(x):
            digest(value, f"{path}[{i}]", out, properties=properties, depth=depth + 1)
    else:
        out[path or "value"] = _sha(x)
    return out


# ------------------------------------------------------------------ models
@cache
def _model(env_id: str) -> TabularMDP:
    """The model of a gymnasium environment id, made once per process."""
    return TabularMDP.from_gymnasium(gym.make(env_id))


cliff = partial(_model, "tabzoo/CliffWalking-v0")
frozen = partial(_model, "FrozenLake-v1")  # slippery 4x4: three outcomes per move
walk = partial(_model, "tabzoo/RandomWalk-v0")
grid = partial(_model, "tabzoo/Gridworld4x4-v0")


@cache
def continuing() -> TabularMDP:
    """A random continuing MDP where every transition may reach every state."""
    rng = np.random.default_rng(0)
    S, A = 6, 3
    return TabularMDP.from_dense(rng.dirichlet(np.ones(S), size=(S, A)),
                                 np.round(rng.uniform(-1, 1, (S, A)), 3))


@cache
def dyna_maze() -> TabularMDP:
    return maze(DYNA_MAZE).to_mdp()


@cache
def branching() -> TabularMDP:
    return tabular.branching_task(30, 2, seed=1)


@cache
def trap() -> TabularMDP:
    """The trap/treasure grid (a -inf reward), started left of the trap."""
    env = gym.make("tabzoo/TrapTreasure-v0").unwrapped
    mdp = env.to_mdp()
    start = np.zeros(mdp.n_states)
    start[env.left_of_trap] = 1.0
    return dataclasses.replace(mdp, start=start)


def uniform(mdp: TabularMDP) -> np.ndarray:
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)


def random_policy(mdp: TabularMDP, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).dirichlet(np.ones(mdp.n_actions), size=mdp.n_states)


def random_values(mdp: TabularMDP, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=mdp.n_states)


@cache
def token():
    """A small token MDP: two prompts, every response over {a, b} up to 3 tokens, a
    fixed reward, and a random softmax reference."""
    def reward(prompt, response):
        return 0.3 * len(response) - 0.7 * response.count("b") + (0.5 if prompt == "a" else 0.0)

    env = envs.TokenMDP(["a", "a b"], reward, vocab=["a", "b"], max_len=3,
                        prompt_probs=[0.4, 0.6])
    rng = np.random.default_rng(0)
    ref = SoftmaxPolicy(rng.normal(size=(env.n_states, len(env.vocab))), np.arange(env.n_states))
    return env, env.to_mdp(), ref


@cache
def pipeline():
    """The running example trained end to end (``train_pipeline`` with its defaults)."""
    return tabular.train_pipeline(tabular.envs.load_scenario())


def preferences():
    ex = pipeline()
    return [(c, ex.scenario.prompt, w, lo) for c, w, lo in ex.scenario.preferences]


def kto_feedback():
    """Expected labels of 1000 responses of the reference: desirable with probability
    sigma(2 r_gold)."""
    ex = pipeline()
    gold = dict(zip(ex.scenario.replies, ex.scenario.gold, strict=True))
    feedback = []
    for (x, y), mass in rlhf.response_distribution(ex.gold_env, ex.reference).items():
        p = 1.0 / (1.0 + np.exp(-2.0 * gold.get(y, -1.0)))
        feedback += [(1000 * mass * p, x, y, True), (1000 * mass * (1 - p), x, y, False)]
    return [f for f in feedback if f[0] > 0]


CORPUS = ["a b a", "a b b", "b a", "a a b a", "b b b", "a b"]


@cache
def small_lm():
    return tabular.pretrain(tabular.NGramLM.create(["a", "b"], 2), CORPUS, epochs=30,
                            seed=1).lm


# ------------------------------------------------------------------ cases
CASES: dict = {}


def case(name: str, runs3: bool = False):
    """Register ``fn(runs=None)`` as case ``name``; ``runs3`` registers it with ``runs=3``
    too, as ``name.runs3``."""
    def register(fn):
        CASES[name] = fn
        if runs3:
            CASES[f"{name}.runs3"] = lambda: fn(runs=3)
        return fn
    return register


def ns(**fields):
    return types.SimpleNamespace(**fields)


# models (the inputs every case builds on)
case("model.cliff")(cliff)
case("model.frozen_lake")(frozen)
case("model.random_walk")(walk)
case("model.continuing")(continuing)
case("model.dyna_maze")(dyna_maze)
case("model.branching_task")(branching)
case("model.token")(lambda: token()[1])
case("model.capital_of_france")(lambda: gym.make("tabzoo/CapitalOfFrance-v0").unwrapped.to_mdp())
case("seed_states")(lambda: ns(one=tabular.seed_states(0), three=tabular.seed_states(7, 3)))
case("schedules")(lambda: ns(constant=schedules.constant(0.1).params,
                             inverse=schedules.inverse(1.0, 0.6).params,
                             exponential=schedules.exponential(0.5, 0.99, 0.05).params,
                             linear=schedules.linear(1.0, 0.05, 100).params))

# dynamic programming
for _method in ("sync", "inplace", "blocked"):
    case(f"value_iteration.{_method}")(
        lambda m=_method: tabular.value_iteration(frozen(), 0.95, method=m))
case("value_iteration.not_converged")(
    lambda: tabular.value_iteration(frozen(), 0.99, max_iter=5, strict=False))
case("value_iteration.gamma1")(lambda: tabular.value_iteration(cliff(), 1.0))
for _method in ("exact", "sync", "inplace"):
    case(f"policy_evaluation.{_method}")(
        lambda m=_method: tabular.policy_evaluation(frozen(), uniform(frozen()), 0.9, method=m))
case("policy_evaluation.greedy")(
    lambda: tabular.policy_evaluation(cliff(), np.full(48, 1), 0.9, method="exact"))
case("policy_iteration")(lambda: tabular.policy_iteration(frozen(), 0.9))
case("policy_iteration.modified")(lambda: tabular.policy_iteration(frozen(), 0.9, eval_sweeps=3))
for _method in ("sync", "inplace"):
    case(f"soft_value_iteration.{_method}")(
        lambda m=_method: tabular.soft_value_iteration(frozen(), 0.9, 0.5, method=m))
case("soft_value_iteration.ref_token")(
    lambda: tabular.soft_value_iteration(token()[1], 1.0, 0.7, ref_policy=token()[2]))
case("bellman_expectation")(lambda: tabular.bellman_expectation(
    frozen(), random_values(frozen()), random_policy(frozen()), 0.9))
case("bellman_optimality")(lambda: tabular.bellman_optimality(frozen(), random_values(frozen()),
                                                              0.9))
case("soft_bellman_optimality")(lambda: tabular.soft_bellman_optimality(
    frozen(), random_values(frozen()), 0.9, 0.5, ref_policy=random_policy(frozen(), 1)))
case("q_from_v")(lambda: tabular.q_from_v(frozen(), random_values(frozen()), 0.9))


@case("policies_from_q")
def _policies_from_q():
    Q = tabular.value_iteration(cliff(), 1.0).Q
    Q_ties = np.round(tabular.q_from_v(frozen(), random_values(frozen()), 0.9), 1)
    return ns(greedy_policy=tabular.greedy_policy(Q_ties),
              optimal_actions=tabular.optimal_actions(Q_ties, tol=0.05),
              terminating_greedy_policy=tabular.terminating_greedy_policy(cliff(), Q),
              soft_policy=tabular.soft_policy(Q_ties, 0.5),
              soft_policy_ref=tabular.soft_policy(Q_ties, 0.5, ref_policy=random_policy(frozen())))


# average reward and finite horizons
case("relative_value_iteration")(lambda: tabular.relative_value_iteration(continuing()))
case("average_reward_solve")(lambda: tabular.average_reward_solve(continuing(),
                                                                  random_policy(continuing())))
case("finite_horizon")(lambda: tabular.finite_horizon(continuing(), 8, gamma=0.9))
case("finite_horizon.terminal")(lambda: tabular.finite_horizon(
    frozen(), 10, terminal_values=random_values(frozen())))
case("differential_sarsa", runs3=True)(lambda runs=None: tabular.differential_sarsa(
    continuing(), steps=5000, alpha=0.05, alpha_average=schedules.inverse(), epsilon=0.05,
    seed=1, runs=runs))
case("r_learning", runs3=True)(lambda runs=None: tabular.r_learning(
    continuing(), steps=5000, alpha=0.05, epsilon=0.2, seed=2, runs=runs))

# bandits
case("epsilon_greedy_bandit", runs3=True)(
    lambda runs=None: tabular.epsilon_greedy_bandit(steps=300, seed=0, runs=runs))
case("epsilon_greedy_bandit.drifting_alpha")(lambda: tabular.epsilon_greedy_bandit(
    tabular.BanditTestbed(spread=0.0, walk_sd=0.01), epsilon=schedules.exponential(0.5, 0.99),
    alpha=0.1, steps=300, runs=3, seed=2))
case("ucb_bandit", runs3=True)(lambda runs=None: tabular.ucb_bandit(
    tabular.BanditTestbed(k=6), c=2.0, steps=300, seed=1, runs=runs))
case("gradient_bandit", runs3=True)(
    lambda runs=None: tabular.gradient_bandit(alpha=0.1, steps=300, seed=3, runs=runs))
case("gradient_bandit.no_baseline")(lambda: tabular.gradient_bandit(
    tabular.BanditTestbed(mean=4.0), alpha=0.1, baseline=False, steps=300, runs=3, seed=3))


# prediction (the random walk under its one action; the 4x4 gridworld off-policy)
def _walk_policy():
    return np.ones((walk().n_states, walk().n_actions))


case("td0", runs3=True)(lambda runs=None: tabular.td0(walk(), _walk_policy(), episodes=100,
                                                      seed=0, runs=runs))
case("td0.n_step3_history")(lambda: tabular.td0(walk(), _walk_policy(), episodes=50, n_step=3,
                                                alpha=schedules.inverse(1.0, 0.6),
                                                history=True, seed=1))
case("td0.max_steps")(lambda: tabular.td0(grid(), uniform(grid()), gamma=0.9, episodes=50,
                                           n_step=2, max_steps=10, seed=2, runs=2))
case("mc_prediction", runs3=True)(lambda runs=None: tabular.mc_prediction(
    walk(), _walk_policy(), episodes=100, seed=0, runs=runs))
case("mc_prediction.every_visit_alpha")(lambda: tabular.mc_prediction(
    grid(), uniform(grid()), gamma=0.9, episodes=50, alpha=0.05, first_visit=False,
    history=True, seed=2))
for _sampling in ("weighted", "ordinary"):
    case(f"off_policy_mc_prediction.{_sampling}", runs3=True)(
        lambda runs=None, s=_sampling: tabular.off_policy_mc_prediction(
            grid(), random_policy(grid(), 3), uniform(grid()), importance_sampling=s,
            gamma=0.9, episodes=60, seed=4, runs=runs))
case("off_policy_mc_prediction.every_visit")(lambda: tabular.off_policy_mc_prediction(
    grid(), random_policy(grid(), 3), uniform(grid()), first_visit=False, gamma=0.9,
    episodes=60, history=True, seed=5))
for _method in ("td0", "mc"):
    case(f"batch_prediction.{_method}", runs3=True)(
        lambda runs=None, m=_method: tabular.batch_prediction(
            walk(), _walk_policy(), method=m, episodes=20, seed=5, runs=runs))
case("batch_prediction.not_settled")(lambda: tabular.batch_prediction(
    walk(), _walk_policy(), episodes=40, alpha=0.01, max_sweeps=3, strict=False, history=True))
case("offline_lambda_return", runs3=True)(lambda runs=None: tabular.offline_lambda_return(
    walk(), _walk_policy(), lam=0.8, episodes=60, seed=6, runs=runs))
for _trace in ("accumulating", "replacing", "dutch"):
    case(f"td_lambda.{_trace}", runs3=_trace == "accumulating")(
        lambda runs=None, t=_trace: tabular.td_lambda(walk(), _walk_policy(), lam=0.8, trace=t,
                                                      episodes=60, seed=7, runs=runs))
case("true_online_td_lambda", runs3=True)(lambda runs=None: tabular.true_online_td_lambda(
    grid(), uniform(grid()), lam=0.8, gamma=0.9, episodes=40, seed=8, runs=runs))

# control (the cliff; FrozenLake for Monte Carlo; the 4x4 gridworld for traces)
_CONTROL = ("sarsa", "expected_sarsa", "q_learning", "double_q_learning")
for _name in _CONTROL:
    case(_name, runs3=True)(lambda runs=None, n=_name: getattr(tabular, n)(
        cliff(), episodes=100, seed=0, runs=runs))
case("q_learning.schedules_mask")(lambda: tabular.q_learning(
    grid(), gamma=0.9, episodes=100, alpha=schedules.inverse(1.0, 0.6),
    epsilon=schedules.linear(1.0, 0.05, 50), action_mask=np.arange(64).reshape(16, 4) % 3 > 0,
    seed=3))
case("q_learning.max_steps")(lambda: tabular.q_learning(cliff(), episodes=50, max_steps=20,
                                                          seed=6, runs=3))
case("sarsa.exponential_alpha")(lambda: tabular.sarsa(
    frozen(), gamma=0.9, episodes=200, alpha=schedules.exponential(0.5, 0.99, 0.05),
    initial_Q=0.5, seed=4))
case("double_q_learning.maximization_bias")(lambda: tabular.double_q_learning(
    _model("tabzoo/MaximizationBias-v0"), episodes=100, alpha=0.1, runs=3, seed=5))
case("mc_control", runs3=True)(lambda runs=None: tabular.mc_control(
    frozen(), gamma=0.9, episodes=300, seed=0, runs=runs))
case("mc_control.every_visit_alpha")(lambda: tabular.mc_control(
    frozen(), gamma=0.9, episodes=300, first_visit=False, alpha=0.1, seed=1))
case("mc_control.max_steps")(lambda: tabular.mc_control(
    grid(), gamma=0.9, episodes=100, max_steps=15, seed=4, runs=2))
case("mc_control.exploring_starts")(lambda: tabular.mc_control(
    frozen(), method="exploring_starts", gamma=0.9, episodes=300, seed=2))
for _sampling in ("weighted", "ordinary"):
    case(f"mc_control.off_policy_{_sampling}")(lambda s=_sampling: tabular.mc_control(
        frozen(), method="off_policy", importance_sampling=s, epsilon=0.5, gamma=0.9,
        episodes=300, seed=3))
_NSTEP = ("n_step_sarsa", "n_step_expected_sarsa", "off_policy_n_step_sarsa", "tree_backup",
          "q_sigma")
for _name in _NSTEP:
    case(_name, runs3=True)(lambda runs=None, n=_name: getattr(tabular, n)(
        cliff(), n_step=3, episodes=100, seed=1, runs=runs))
case("off_policy_n_step_sarsa.soft_target")(lambda: tabular.off_policy_n_step_sarsa(
    grid(), n_step=2, epsilon=0.3, target_epsilon=0.1, gamma=0.9, episodes=100, seed=2))
case("tree_backup.soft_target")(lambda: tabular.tree_backup(
    grid(), n_step=2, epsilon=0.3, target_epsilon=0.1, gamma=0.9, episodes=100, seed=2))
case("q_sigma.sigma0_target")(lambda: tabular.q_sigma(
    grid(), n_step=2, sigma=0.0, target_epsilon=0.05, gamma=0.9, episodes=100, seed=2))
for _trace in ("accumulating", "replacing", "dutch"):
    for _name in ("sarsa_lambda", "watkins_q_lambda"):
        case(f"{_name}.{_trace}", runs3=_trace == "accumulating")(
            lambda runs=None, n=_name, t=_trace: getattr(tabular, n)(
                grid(), lam=0.8, trace=t, gamma=0.9, episodes=80, seed=3, runs=runs))
case("true_online_sarsa_lambda", runs3=True)(lambda runs=None: tabular.true_online_sarsa_lambda(
    grid(), lam=0.8, gamma=0.9, episodes=80, seed=4, runs=runs))

# planning
for _name in ("dyna_q", "dyna_q_plus", "prioritized_sweeping"):
    case(_name, runs3=True)(lambda runs=None, n=_name: getattr(tabular, n)(
        dyna_maze(), planning_steps=5, gamma=0.95, episodes=20, seed=0, runs=runs))
case("dyna_q.counts_model")(lambda: tabular.dyna_q(
    frozen(), planning_steps=3, model="counts", gamma=0.9, episodes=100, seed=1))
case("dyna_q_plus.switch")(lambda: tabular.dyna_q_plus(
    changing_maze(*BLOCKING_MAZE)[0], switch=(300, changing_maze(*BLOCKING_MAZE)[1]),
    planning_steps=5, kappa=0.01, gamma=0.95, episodes=40, runs=2, seed=2))
case("prioritized_sweeping.switch")(lambda: tabular.prioritized_sweeping(
    changing_maze(*BLOCKING_MAZE)[0], switch=(300, changing_maze(*BLOCKING_MAZE)[1]),
    planning_steps=5, theta=1e-3, gamma=0.95, episodes=40, seed=3))
case("uniform_expected_updates")(lambda: tabular.uniform_expected_updates(
    branching(), updates=20 * 60, evaluate_every=5 * 60, initial_Q=0.5))
case("trajectory_sampling", runs3=True)(lambda runs=None: tabular.trajectory_sampling(
    branching(), updates=3000, epsilon=0.5, evaluate_every=1000, seed=1, runs=runs))

# policy gradients (the 4x4 gridworld; the short corridor with one shared row; the trap)
case("reinforce", runs3=True)(lambda runs=None: tabular.reinforce(
    grid(), gamma=0.9, episodes=200, alpha=0.1, seed=0, runs=runs))
case("reinforce.baseline")(lambda: tabular.reinforce(
    grid(), gamma=0.9, episodes=200, alpha=0.1, baseline=True, alpha_value=0.2, seed=1))
case("reinforce.shared_row")(lambda: tabular.reinforce(
    _model("tabzoo/ShortCorridor-v0"),
    SoftmaxPolicy(np.zeros((1, 2)), np.zeros(4, dtype=np.int64)), episodes=200, alpha=0.05,
    seed=7, runs=3))
case("reinforce.trap_floor")(lambda: tabular.reinforce(
    trap(), gamma=0.95, episodes=100, reward_floor=-10.0, runs=2, seed=3))
case("reinforce.max_steps")(lambda: tabular.reinforce(
    grid(), gamma=0.9, episodes=100, baseline=True, max_steps=10, seed=4))
case("actor_critic", runs3=True)(lambda runs=None: tabular.actor_critic(
    grid(), gamma=0.9, episodes=200, alpha=0.1, alpha_value=0.2, lam=0.9, seed=0, runs=runs))
case("ppo.clip", runs3=True)(lambda runs=None: tabular.ppo(
    grid(), gamma=0.9, iterations=20, episodes_per_batch=4, seed=0, runs=runs))
case("ppo.adaptive_kl")(lambda: tabular.ppo(
    grid(), gamma=0.9, iterations=20, episodes_per_batch=4, objective="adaptive_kl",
    kl_target=0.02, seed=1))
case("ppo.minibatches")(lambda: tabular.ppo(
    grid(), gamma=0.9, iterations=15, episodes_per_batch=4, epochs=3, minibatches=2,
    normalise=True, value_coef=0.5, entropy_coef=0.01, seed=2))
case("ppo.trap_floor")(lambda: tabular.ppo(
    trap(), gamma=0.95, iterations=10, episodes_per_batch=4, reward_floor=-10.0, seed=3))
case("trpo", runs3=True)(lambda runs=None: tabular.trpo(
    grid(), gamma=0.9, iterations=10, episodes_per_batch=4, seed=0, runs=runs))

# the language model
case("pretrain")(lambda: tabular.pretrain(tabular.NGramLM.create(["a", "b"], 2), CORPUS,
                                          epochs=30, seed=1))
case("pretrain.full_prefix")(lambda: tabular.pretrain(tabular.NGramLM.create(["a", "b"], None),
                                                      CORPUS, epochs=20, alpha=0.3, seed=2))
case("sft")(lambda: tabular.sft(small_lm(), [(3, "a", "b"), (1, "a b", "a"), ("b", "b a")],
                                epochs=20, seed=3))


@case("ngram_lm.methods")
def _lm_methods():
    lm = small_lm()
    env = envs.TokenMDP(["a"], {}, vocab=lm.vocab, max_len=3)
    return ns(policy=lm.policy(env), policy_per_state=lm.policy(env, per_state=True),
              log_prob=lm.log_prob("a", "b a"),
              generated=[lm.generate("a", max_len=4, seed=s) for s in range(5)],
              greedy=lm.generate("a", max_len=4, greedy=True),
              next_token_probs=lm.next_token_probs(lm.encode("a b")))


# RLHF: the pipeline, the reward model and the exact sums
case("train_pipeline")(pipeline)


@case("train_pipeline.duck_typed")
def _duck_typed_pipeline():
    def env(reward=None):
        return envs.TokenMDP(["Q"], reward or {"yes": 1.0, "no": 0.0}, vocab=["Q", "no", "yes"],
                             max_len=2, grammar=["yes", "no"])

    scenario = types.SimpleNamespace(
        prompt="Q", replies=("yes", "no"), correct=(True, False), corpus=("Q no", "Q yes", "Q no"),
        n=2, env=env, sft=((3, "yes"), (1, "no")), preferences=((9, "yes", "no"), (1, "no", "yes")))
    ex = rlhf.train_pipeline(scenario, pretrain_epochs=30, sft_epochs=30, reward_steps=2000)
    return ns(base=ex.base, sft=ex.sft, reward_model=ex.reward_model, mdp=ex.mdp,
              gold_mdp=ex.gold_mdp, reference=ex.reference)


@case("pipeline.methods")
def _pipeline_methods():
    ex = pipeline()
    return ns(frontier=ex.frontier([4.0, 1.0, 0.25]), optimum=ex.optimum(1.0),
              measure=ex.measure(ex.reference), correct_rate=ex.correct_rate(ex.reference),
              answers=ex.answer_distribution(ex.policy(ex.base)),
              gold_value=ex.value(ex.reference, "gold"),
              learner_frontier=ex.learner_frontier(tabular.ppo, [2.0, 0.5], iterations=10,
                                                   episodes_per_batch=8, seed=1))


@case("sample_preferences")
def _sample_preferences():
    return rlhf.sample_preferences("p", ["u", "v", "w"], [1.0, 0.0, -0.5], 500, seed=3)


@case("train_reward_model")
def _train_reward_model():
    prefs = rlhf.sample_preferences("p", ["u", "v", "w"], [1.0, 0.0, -0.5], 500, seed=3)
    return tabular.train_reward_model(prefs, reference=[("p", "u"), ("p", "v")], steps=3000)


case("bradley_terry_loss")(lambda: rlhf.bradley_terry_loss(
    np.array([1.0, -0.5, 0.3, 2.0]), [0, 1, 2, 3], [1, 0, 3, 2], [3.0, 1.0, 2.0, 5.0]))


@case("group_relative_advantages")
def _group_relative_advantages():
    returns = np.random.default_rng(0).normal(size=7)
    return ns(centred=rlhf.group_relative_advantages(returns, False),
              normalised=rlhf.group_relative_advantages(returns, True))


@case("exact_sums.token")
def _exact_sums_token():
    env, mdp, ref = token()
    pi = SoftmaxPolicy(np.random.default_rng(1).normal(size=ref.logits.shape) * 2,
                       np.arange(env.n_states))
    return ns(ending_probabilities=rlhf.ending_probabilities(mdp, pi),
              visit_probabilities=rlhf.visit_probabilities(mdp, pi.probs()),
              expected_return=rlhf.expected_return(mdp, pi),
              path_returns=rlhf.path_returns(mdp),
              sequence_kl=tabular.sequence_kl(mdp, pi, ref),
              kl_objective=tabular.kl_objective(mdp, pi, ref, 0.7),
              kl_optimum=tabular.kl_optimum(mdp, ref, 0.7),
              response_distribution=rlhf.response_distribution(env, pi),
              response_path=rlhf.response_path(env, "a b", "b a"))


@case("exact_sums.pipeline")
def _exact_sums_pipeline():
    ex = pipeline()
    star = ex.optimum(1.0)
    return ns(kl_optimum=rlhf.kl_optimum(ex.mdp, ex.reference, 1.0),
              kl_optimum_gold=rlhf.kl_optimum(ex.gold_mdp, ex.reference.probs(), 0.5),
              kl_objective=rlhf.kl_objective(ex.mdp, star, ex.reference, 1.0),
              sequence_kl=rlhf.sequence_kl(ex.mdp, ex.reference, star),
              sequence_kl_greedy=rlhf.sequence_kl(ex.mdp, star.argmax(axis=1), ex.reference),
              expected_return=rlhf.expected_return(ex.mdp, ex.reference),
              visit_probabilities=rlhf.visit_probabilities(ex.mdp, ex.reference),
              ending_probabilities=rlhf.ending_probabilities(ex.gold_mdp, ex.reference))


# RLHF: the learners
case("dpo")(lambda: tabular.dpo(pipeline().env, pipeline().reference, preferences(), beta=1.0,
                                steps=300))
case("dpo.ipo")(lambda: rlhf.dpo(pipeline().env, pipeline().reference, preferences(), beta=0.5,
                                 loss="ipo", steps=300, alpha=0.1))


@case("dpo.matrix_policy")
def _dpo_matrix_policy():
    env, _, ref = token()
    prefs = [(3, "a", "a", "b"), (1, "a b", "", "a b"), ("a", "b a", "")]
    return rlhf.dpo(env, ref.probs(), prefs, beta=0.5, ref_policy=ref.probs(), steps=50)


case("iterated_dpo", runs3=True)(lambda runs=None: tabular.iterated_dpo(
    pipeline().gold_env, pipeline().reference, beta=1.0, rounds=2, pairs=16, steps=5, seed=4,
    runs=runs))
case("iterated_dpo.ipo")(lambda: rlhf.iterated_dpo(
    pipeline().gold_env, pipeline().reference, beta=1.0, rounds=2, pairs=16, steps=5,
    loss="ipo", alpha=0.5, seed=5))
case("kto", runs3=True)(lambda runs=None: tabular.kto(
    pipeline().gold_env, pipeline().reference, kto_feedback(), beta=0.5, steps=100, alpha=2.0,
    seed=7, runs=runs))
case("kto.lambdas")(lambda: rlhf.kto(
    pipeline().gold_env, pipeline().reference, kto_feedback(), beta=0.3, lambda_d=1.0,
    lambda_u=0.8, steps=100, alpha=2.0, kl_samples=4, seed=8))
case("kto_optimum")(lambda: tabular.kto_optimum(pipeline().gold_env, pipeline().reference,
                                                kto_feedback(), beta=0.5))
for _advantage in ("grpo", "rloo", "remax"):
    case(f"grpo.{_advantage}", runs3=_advantage == "grpo")(
        lambda runs=None, a=_advantage: tabular.grpo(
            pipeline().mdp, pipeline().reference, ref_policy=pipeline().reference, beta=1.0,
            iterations=40, group_size=4, alpha=0.2, advantage=a, seed=0, runs=runs))
for _aggregation in ("sequence", "token"):
    case(f"grpo.{_aggregation}")(lambda g=_aggregation: rlhf.grpo(
        token()[1], token()[2], iterations=40, alpha=0.5, aggregation=g, normalise=False,
        seed=3))
case("grpo.matrix_policy")(lambda: rlhf.grpo(
    token()[1], token()[2].probs(), ref_policy=token()[2].probs(), iterations=20, group_size=3,
    alpha=0.3, beta=0.5, seed=2))
case("rlhf.reinforce", runs3=True)(lambda runs=None: tabular.reinforce(
    pipeline().mdp, pipeline().reference, ref_policy=pipeline().reference, beta=1.0,
    episodes=300, alpha=0.1, baseline=True, seed=0, runs=runs))
case("rlhf.actor_critic")(lambda: tabular.actor_critic(
    pipeline().mdp, pipeline().reference, ref_policy=pipeline().reference, beta=1.0,
    episodes=300, alpha=0.1, alpha_value=0.2, lam=0.9, seed=0))
case("rlhf.ppo", runs3=True)(lambda runs=None: tabular.ppo(
    pipeline().mdp, pipeline().reference, ref_policy=pipeline().reference, beta=1.0,
    iterations=20, episodes_per_batch=8, alpha_value=0.2, seed=0, runs=runs))
case("rlhf.ppo.ngram_rows")(lambda: tabular.ppo(
    pipeline().mdp, pipeline().sft.policy(pipeline().env),
    ref_policy=pipeline().sft.policy(pipeline().env), beta=1.0, iterations=20,
    episodes_per_batch=8, seed=0))
case("rlhf.trpo", runs3=True)(lambda runs=None: tabular.trpo(
    token()[1], token()[2], ref_policy=token()[2], beta=0.5, iterations=10,
    episodes_per_batch=8, seed=0, runs=runs))
case("best_of_n")(lambda: rlhf.best_of_n(pipeline().mdp, pipeline().reference, 4))
case("best_of_n.reward")(lambda: rlhf.best_of_n(token()[1], token()[2], 3,
                                                reward=rlhf.path_returns(token()[1]) ** 2))
for _learner in ("reinforce", "actor_critic", "ppo"):
    case(f"distill.{_learner}", runs3=_learner == "reinforce")(
        lambda runs=None, n=_learner: rlhf.distill(
            pipeline().mdp, pipeline().reference, pipeline().optimum(0.5), learner=n, seed=0,
            runs=runs, **({"iterations": 10} if n == "ppo" else {"episodes": 200})))
case("fit_process_reward_model", runs3=True)(lambda runs=None: rlhf.fit_process_reward_model(
    pipeline().mdp, pipeline().reference, responses=20, completions=2, seed=1, runs=runs))


@case("process_rewards")
def _process_rewards():
    ex = pipeline()
    phi = rlhf.prefix_values(ex.mdp, ex.reference)
    return ns(prefix_values=phi, shaped=rlhf.process_rewards(ex.mdp, phi))


# ------------------------------------------------------------------ driver
def compute(names, verbose: bool = False) -> tuple[dict, dict, dict]:
    """``(digests, results, errors)`` of the cases ``names``, each run once."""
    digests, results, errors = {}, {}, {}
    for name in names:
        start = time.perf_counter()
        try:
            result = CASES[name]()
        except Exception as e:  # noqa: BLE001 - a case that fails is reported, not fatal
            errors[name] = f"{type(e).__name__}: {e}"
            continue
        results[name] = result
        digests[name] = digest(result)
        if verbose:
            print(f"{time.perf_counter() - start:7.2f} s  {name}", file=sys.stderr, flush=True)
    return digests, results, errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.identity",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("save", "check", "list"))
    parser.add_argument("file", nargs="?")
    parser.add_argument("-k", dest="only", default="",
                        help="only the cases whose name contains this text")
    parser.add_argument("-v", dest="verbose", action="store_true",
                        help="print the seconds each case takes")
    args = parser.parse_args(argv)
    names = [n for n in CASES if args.only in n]
    if args.command == "list":
        print("\n".join(names))
        return 0
    if args.file is None:
        parser.error(f"{args.command} needs a FILE")
    print(f"identity: {len(names)} cases, tabular from {tabular.__file__}", file=sys.stderr)
    start = time.perf_counter()
    if args.command == "save":
        digests, _, errors = compute(names, args.verbose)
        for name, message in errors.items():
            print(f"ERROR    {name}: {message}")
        with open(args.file, "w") as f:
            json.dump(digests, f, indent=1, sort_keys=True)
            f.write("\n")
        fields = sum(len(d) for d in digests.values())
        print(f"identity: saved {len(digests)} cases, {fields} fields to {args.file} "
              f"in {time.perf_counter() - start:.0f} s")
        return 1 if errors else 0
    with open(args.file) as f:
        baseline = json.load(f)
    if args.only:
        baseline = {n: d for n, d in baseline.items() if args.only in n}
    digests, results, errors = compute([n for n in names if n in baseline], args.verbose)
    bad = 0
    for name in baseline:
        if name not in CASES:
            print(f"NO CASE  {name} (in the baseline, not in this harness)")
            bad += 1
        elif name in errors:
            print(f"ERROR    {name}: {errors[name]}")
            bad += 1
            continue
        if name not in digests:
            continue
        now, deep = digests[name], None
        for field, sha in baseline[name].items():
            if field not in now:
                if deep is None:  # a field that became a property still compares
                    deep = digest(results[name], properties=True)
                if field not in deep:
                    print(f"MISSING  {name} {field}")
                    bad += 1
                    continue
                got = deep[field]
            else:
                got = now[field]
            if got != sha:
                print(f"MISMATCH {name} {field}")
                bad += 1
        extra = sorted(set(now) - set(baseline[name]))
        if extra:
            print(f"note     {name}: new fields {', '.join(extra)} (not in the baseline)")
    new = [n for n in names if n not in baseline]
    if new:
        print(f"note     cases not in the baseline: {', '.join(new)}")
    fields = sum(len(d) for d in baseline.values())
    elapsed = time.perf_counter() - start
    if bad:
        print(f"identity: {bad} differences in {len(baseline)} cases ({elapsed:.0f} s)")
        return 1
    print(f"identity: {len(baseline)} cases, {fields} fields bit-identical ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
