"""Your own TD control rule, in the zoo's shape: write the target, get the learner.

A one-step TD control method is its target: SARSA's ``R + gamma Q(S', A')`` (eq. 6.7),
Q-learning's ``R + gamma max_a Q(S', a)`` (eq. 6.8), expected SARSA's (eq. 6.9). The
rest is the same for all of them and is written once, here: the episode loop of
section 6.5's box (epsilon-greedy behaviour on ``Q``, ``Q(S, A) <- Q(S, A) + alpha
[target - Q(S, A)]``, eq. 2.4, exact at ``-inf``), the checks of every argument, the
step-size and exploration schedules, the action mask, the runs driver with one random
stream per run, and the :class:`~tabular.learn.results.ControlResult`. So a rule of
your own is a small Numba function, and :func:`td_control` makes it a learner with
:func:`tabular.q_learning`'s signature::

    import gymnasium as gym
    import numpy as np
    from numba import njit
    from tabular import TabularMDP, envs, q_learning
    from tabular.learn.custom import max_value, td_control

    @td_control
    @njit(inline="always")
    def my_q_learning(reward, gamma, q_next, done, next_action, epsilon, legal):
        if done:
            return reward
        return reward + gamma * max_value(q_next, legal)

    mdp = TabularMDP.from_gymnasium(gym.make("tabzoo/CliffWalking-v0"))
    res = my_q_learning(mdp, episodes=500, alpha=0.5, epsilon=0.1, seed=0, runs=50)
    same = q_learning(mdp, episodes=500, alpha=0.5, epsilon=0.1, seed=0, runs=50)
    print(np.array_equal(res.Q, same.Q))    # True

``res`` is, bit for bit, ``q_learning(mdp, ...)``'s with the same arguments: the loop
draws what :func:`tabular.q_learning` draws, in the same order, from the same
streams (run ``i`` of ``runs=n`` is run ``i`` of ``runs=m``), and runs at its speed
(``benchmarks/bench_own_rule.py``). docs/own_rule.md walks through it.

Why a target and not a whole loop: the target is what differs between the methods
(rlax and the book factor them the same way), and the loop's draws are what a user
gets wrong when copying it (the order of the draws decides every number after the
first step). Why ``on_policy=``: SARSA's target needs the next action before the
update, Q-learning draws it after the update (from the updated row when ``S' = S``);
the two orders give different numbers, so the driver offers both.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from functools import wraps

import numpy as np
import numpy.typing as npt
from numba import njit
from numba.core.dispatcher import Dispatcher

from tabular._numba.frame import borrowed, local_stream
from tabular._numba.optional import row
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_flag
from tabular.learn.outputs import control_result
from tabular.learn.results import ControlResult
from tabular.learn.td import control_inputs
from tabular.model.sampling import sample_start, sample_step
from tabular.rules.values import (
    epsilon_greedy_action,
    epsilon_greedy_expectation,
    max_value,
    update_toward,
)
from tabular.schedules import (
    counts_visits,
    read_schedule,
    schedule_value,
    value_at_visit,
)
from tabular.types import MDPLike, StepSize

__all__ = ["TARGET_ARGUMENTS", "epsilon_greedy_expectation", "max_value", "td_control"]

#: The arguments of a target, in order: the reward ``R``; the discount ``gamma``; the
#: row ``Q(S', .)`` (float64 ``[A]``); whether the episode ended at ``S'``; the next
#: action ``A'`` (drawn epsilon-greedily before the update when ``on_policy=True``,
#: else -1); this episode's epsilon; the actions legal in ``S'`` (bool ``[A]``, or
#: ``None`` without an action mask: write the target for both, as :func:`max_value`
#: and :func:`epsilon_greedy_expectation` are).
TARGET_ARGUMENTS = ("reward", "gamma", "q_next", "done", "next_action", "epsilon", "legal")


def _rule_control_runs(model, params, rng_states, out):
    """Every run of one-step TD control with the bound ``target`` (section 6.5's box;
    ``ON_POLICY``, a constant of the binding, draws ``A'`` before the update, as SARSA
    does): the kernel, run ``run`` drawing from its own stream ``rng_states[run]``. Its
    draws are those of :mod:`tabular.learn.td`'s loop, in the same order."""
    for run in range(rng_states.shape[0]):
        rng = local_stream(rng_states[run])
        Q, returns, lengths = borrowed(out.Q[run]), out.returns[run], out.lengths[run]
        gamma, max_steps, mask = params.gamma, params.max_steps, borrowed(params.action_mask)
        alpha, epsilon = read_schedule(params.alpha), read_schedule(params.epsilon)
        visits = np.zeros(Q.shape if counts_visits(alpha) else (0, 0), dtype=np.int64)
        for episode in range(params.episodes):
            eps = schedule_value(epsilon, episode + 1)
            s = sample_start(model, rng)
            a = epsilon_greedy_action(Q[s], eps, rng, row(mask, s))
            total = 0.0
            steps = 0
            while True:
                steps += 1
                s_next, r, is_done = sample_step(model, s, a, rng)
                total += r
                legal_next = row(mask, s_next)
                a_next = -1
                if ON_POLICY:  # noqa: F821 (bound by td_control)
                    a_next = epsilon_greedy_action(Q[s_next], eps, rng, legal_next)
                value = target(r, gamma, Q[s_next], is_done, a_next, eps,  # noqa: F821
                               legal_next)
                Q[s, a] = update_toward(Q[s, a], value, value_at_visit(alpha, visits, (s, a)))
                if is_done or steps == max_steps:
                    break
                if not ON_POLICY:  # noqa: F821
                    a_next = epsilon_greedy_action(Q[s_next], eps, rng, legal_next)
                s, a = s_next, a_next
            returns[episode] = total
            lengths[episode] = steps


#: The drivers made, by (source file, name): one per distinct rule and order.
_DRIVERS: dict[tuple[str, str], Dispatcher] = {}


def _driver(target: Dispatcher, on_policy: bool) -> Dispatcher:
    """The kernel of ``target``: :func:`_rule_control_runs` with its globals ``target`` and
    ``ON_POLICY`` bound, made once per process and cached on disk beside the rule's
    source file when it has one (not for a rule typed at a prompt).

    It is made from the template's code object, given the rule's file and a name of its
    own, because the rule is known only at run time: a closure over the rule would
    inline it as well, but numba's cache key hashes a closure's cells, which pickle the
    rule's dispatcher with a per-process uuid, so it would compile again in every process
    (docs/decisions/2026-12-06-plain-runs-drivers.md). The kernel is named for the rule
    and a digest of its code, so two rules of one name (a notebook cell run twice,
    edited between) never share numba's cache entry, whose key holds the kernel's bytes
    and not the rule it calls."""
    code = target.py_func.__code__
    digest = hashlib.sha256(code.co_code + repr(code.co_consts).encode()
                            + repr(code.co_names).encode()).hexdigest()[:12]
    name = f"{target.py_func.__name__}_{'on' if on_policy else 'off'}_policy_{digest}"
    cache = _has_source_file(target.py_func)
    # a rule with no file is kept by its code alone: the same rule typed twice compiles once
    key = (code.co_filename if cache else "<memory>", name)
    if key not in _DRIVERS:
        template = _rule_control_runs.__code__.replace(
            co_filename=code.co_filename, co_name=name, co_qualname=name,
            co_firstlineno=code.co_firstlineno)
        kernel = type(_rule_control_runs)(  # type: ignore[misc]  # a FunctionType built from a code object
            template, {**globals(), "target": target, "ON_POLICY": on_policy}, name)
        kernel.__module__ = target.py_func.__module__
        _DRIVERS[key] = runs_kernel(kernel, cache=cache)
    return _DRIVERS[key]


def _has_source_file(function: Callable) -> bool:
    try:
        return inspect.getsourcefile(function) is not None and bool(
            inspect.getsource(function))
    except (OSError, TypeError):
        return False


def td_control(target: Callable | None = None, *, on_policy: bool = False) -> Callable:
    """The one-step TD control learner of your own ``target`` (a decorator, with or
    without ``on_policy=``).

    ``target(reward, gamma, q_next, done, next_action, epsilon, legal) -> float`` is
    the value ``Q(S, A)`` moves toward (:data:`~tabular.learn.custom.TARGET_ARGUMENTS`
    says what each argument is): a ``numba.njit`` function (``inline="always"`` lets
    numba compile it into the loop), or a plain Python function, which is jitted so.
    When ``done``, no value may flow from ``S'``: return ``reward`` alone, as every
    target of the zoo does (``Q(S', .)`` of a terminal state is a number the loop
    never updates).

    ``on_policy``: ``False`` (default) draws the next action ``A'`` after the update,
    as Q-learning and expected SARSA do (``next_action`` is then -1); ``True`` draws it
    before, and passes it, as SARSA does, whose target is ``R + gamma Q(S', A')``.

    Returns ``learner(mdp, *, gamma=1.0, episodes=500, alpha=0.5, epsilon=0.1,
    initial_Q=0.0, seed=0, runs=None, max_steps=None, action_mask=None)``, taking and
    checking its arguments as :func:`tabular.q_learning` does and returning a
    :class:`~tabular.learn.results.ControlResult` (``Q``, greedy ``policy``,
    ``episode_returns`` and ``episode_lengths`` of the behaviour, a leading run axis
    when ``runs=n``). Behaviour: epsilon-greedy on ``Q`` (ties broken at random), an
    episode cut after ``max_steps`` steps still bootstraps; ``-inf`` estimates are
    absorbing (eq. 2.4 made exact, :mod:`tabular.rules.values`).
    """
    on_policy = check_flag("on_policy", on_policy)
    if target is None:
        return lambda target: td_control(target, on_policy=on_policy)
    target = _as_kernel(target)
    driver = _driver(target, on_policy)

    @wraps(target.py_func, assigned=("__module__", "__name__", "__qualname__"))
    def learner(mdp: MDPLike, *, gamma: float = 1.0, episodes: int = 500,
                alpha: StepSize = 0.5, epsilon: StepSize = 0.1,
                initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
                runs: int | None = None, max_steps: int | None = None,
                action_mask: npt.ArrayLike | None = None) -> ControlResult:
        ep, params, out = control_inputs(mdp, gamma=gamma, episodes=episodes, runs=runs,
                                        max_steps=max_steps, alpha=alpha, epsilon=epsilon,
                                        initial_Q=initial_Q, action_mask=action_mask)
        over_runs(driver, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
        return control_result(out, runs, ep.mdp, action_mask=params.action_mask)

    learner.__doc__ = (f"One-step TD control toward the target ``{target.py_func.__name__}``"
                       f" ({'on' if on_policy else 'off'}-policy order of draws), made by "
                       f":func:`tabular.learn.custom.td_control`; its arguments and result "
                       f"are :func:`tabular.q_learning`'s.\n\n"
                       f"The target: {inspect.getdoc(target.py_func) or '(undocumented)'}")
    learner.target = target  # type: ignore[attr-defined]  # the rule kept on the learner
    return learner


def _as_kernel(target: object) -> Dispatcher:
    """``target`` as a numba function of the seven arguments, or a TypeError naming it."""
    if isinstance(target, Dispatcher):
        function = target.py_func
    elif inspect.isfunction(target):
        function = target
    else:
        raise TypeError(f"td_control: target must be a function (numba.njit or plain "
                        f"Python), got {type(target).__name__}")
    try:
        inspect.signature(function).bind(*TARGET_ARGUMENTS)
    except TypeError:
        raise TypeError(
            f"td_control: target {function.__name__} must take the seven arguments "
            f"{', '.join(TARGET_ARGUMENTS)}; it takes "
            f"({', '.join(inspect.signature(function).parameters)})") from None
    return target if isinstance(target, Dispatcher) else njit(inline="always")(target)
