"""The parameter paragraphs that sibling learners share, written once.

A learner's docstring names the paragraphs it shares on a line of their own,
``{gamma episodes alpha seed runs}``, and :func:`shares_paragraphs` puts them there at
import, indented as that line (``help()`` and Sphinx read the filled ``__doc__``). A
paragraph's ``{default}`` is the default of its parameter in the learner's signature,
so one paragraph serves learners whose defaults differ. A key names a paragraph, not a
parameter: ``max_steps_Q`` is the ``max_steps`` paragraph of the learners that
bootstrap a cut episode from ``Q(S_T, A_T)``.
"""

import inspect
import re

#: The shared paragraphs by key; each begins with the parameter's name and a colon,
#: continuation lines are indented by four spaces.
#:
#: :meta hide-value:
PARAGRAPHS = {
    "mdp": "mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.",
    "policy": (
        "policy : the policy evaluated, any form: greedy ``int [S]``, stochastic\n"
        "    ``[S, A]`` or a :class:`~tabular.SoftmaxPolicy`."),
    "gamma": "gamma : discount in [0, 1], default {default}.",
    "episodes": "episodes : episodes per run, default {default}.",
    "alpha": (
        "alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the\n"
        "    visits of each pair ``(s, a)``, default {default}."),
    "epsilon": (
        "epsilon : exploration in [0, 1], or a schedule over episodes (GLIE when it\n"
        "    decays to 0), default {default}."),
    "epsilon_behaviour": (
        "epsilon : the behaviour's exploration in [0, 1], or a schedule over episodes (GLIE\n"
        "    when it decays to 0), default {default}."),
    "n_step": "n_step : the n of the return, an integer in ``[1, max_steps]``, default {default}.",
    "initial_Q": (
        "initial_Q : the initial estimate, a finite number or ``[S, A]`` array,\n"
        "    default {default}."),
    "initial_V": (
        "initial_V : the initial estimate, a finite number or ``[S]`` array, default {default}."),
    "initial_w": (
        "initial_w : the initial weights, a finite number or ``[d]`` array, default {default}."),
    "seed": "seed : seed of the runs' random streams (same seed, same numbers), default {default}.",
    "runs": (
        "runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs, a\n"
        "    leading run axis of length ``n`` (also for ``n = 1``)."),
    "max_steps": (
        "max_steps : the step limit per episode (a cut episode still bootstraps from the\n"
        "    state reached), default ``None``: the env's time limit\n"
        "    (``mdp.max_episode_steps``), else 10,000."),
    "max_steps_Q": (
        "max_steps : the step limit per episode (a cut episode still bootstraps from\n"
        "    ``Q(S_T, A_T)``), default ``None``: the env's time limit\n"
        "    (``mdp.max_episode_steps``), else 10,000."),
    "max_steps_V": (
        "max_steps : the step limit per episode (a cut episode's return bootstraps from\n"
        "    ``V(S_T)``), default ``None``: the env's time limit (``mdp.max_episode_steps``),\n"
        "    else 10,000."),
    "action_mask": (
        "action_mask : bool ``[S, A]``, the actions available in each state (Gymnasium's\n"
        "    ``action_mask``; at least one per state), default ``None``: all of them. The\n"
        "    learner never takes, explores or bootstraps from an unavailable action, and its\n"
        "    ``Q`` is ``-inf``."),
    "lam": "lam : trace decay in [0, 1], default {default}.",
    "trace": (
        'trace : ``"accumulating"`` (default, eq. 12.5), ``"replacing"`` (eq. 12.12),\n'
        '    ``"dutch"`` (eq. 12.11) or ``"clearing"``: replacing, and the traces of the\n'
        "    other actions of the state, ``z(S, a)`` for ``a != A``, set to 0 (section 12.7,\n"
        "    Figure 12.11; Singh and Sutton 1996)."),
    "alpha_trace": (
        "alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the visits of\n"
        "    each pair ``(s, a)``, default {default} (a trace spreads a TD error over earlier\n"
        "    steps)."),
    "as_sarsa": (
        "gamma, episodes (default 500), initial_Q, seed, runs, max_steps :\n"
        "    as for :func:`~tabular.sarsa`."),
    "mdp_continuing": (
        "mdp : a continuing :class:`~tabular.TabularMDP` (no outcome ends the episode; finite\n"
        "    rewards), or a Gymnasium env with a transition table."),
    "steps": "steps : time steps per run, default 100,000.",
    "alpha_differential": (
        "alpha : the step size of ``Q`` in (0, 1], or a :mod:`tabular.schedules` schedule over\n"
        "    the visits of each pair, default {default}."),
    "alpha_average": (
        "alpha_average : the step size of ``Rbar`` (the book's beta), a number in (0, 1] or a\n"
        "    schedule over time steps, default {default}."),
    "epsilon_blocks": (
        "epsilon : exploration in [0, 1], or a schedule over blocks of ``epsilon_block``\n"
        "    time steps, default {default}."),
    "epsilon_block": (
        "epsilon_block : the time steps per unit of the epsilon schedule, default {default}."),
    "seed_plain": "seed : seed of the runs' random streams, default {default}.",
    "runs_plain": "runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.",
    "arms": "arms : a :class:`~tabular.learn.bandit_arms.BanditArms`.",
    "arms_changing": (
        "arms : a :class:`~tabular.learn.bandit_arms.BanditArms`, ``changes`` allowed."),
    "horizon": "steps : the horizon ``T``, pulls per run, default {default}.",
    "tol_bisection": "tol : the bisection's tolerance, in [1e-12, 0.1], default 1e-6.",
    "history_V": "history : also return ``V`` after every episode, default False.",
    "history_w": "history : also return ``w`` after every episode, default False.",
    "control_result": (
        "Returns a :class:`~tabular.learn.results.ControlResult`: ``Q`` ``[S, A]``; ``policy``, "
        "its\n"
        "greedy policy (int64 ``[S]``); ``V = max_a Q``; ``episode_returns`` (undiscounted\n"
        "sum of rewards) and ``episode_lengths`` (steps) of the epsilon-greedy behaviour,\n"
        "``[episodes]``; each with a leading run axis when ``runs=n``."),
    "regret_result": "Returns a :class:`BanditRegretResult`.",
    "control_result_as_sarsa": (
        "Returns a :class:`~tabular.learn.results.ControlResult`, as :func:`~tabular.sarsa` does."),
}

_PLACEHOLDER = re.compile(r"^( *)\{([\w ]+)\}$", re.MULTILINE)


def shares_paragraphs(func):
    """Fill each placeholder line ``{key key ...}`` of ``func``'s docstring with the
    paragraphs ``PARAGRAPHS[key]``, in order, and return ``func`` itself (its signature
    and name untouched). An unknown key, or a ``{default}`` whose parameter has none,
    raises at import."""
    defaults = {name: p.default for name, p in inspect.signature(func).parameters.items()}

    def fill(match):
        indent, keys = match.group(1), match.group(2).split()
        lines = []
        for key in keys:
            text = PARAGRAPHS[key]
            if "{default}" in text:
                default = defaults[text.split(" : ", 1)[0]]
                if default is inspect.Parameter.empty:
                    raise ValueError(f"{func.__qualname__}: paragraph {key!r} wants a default")
                text = text.replace("{default}", str(default))
            lines.extend(indent + line for line in text.split("\n"))
        return "\n".join(lines)

    func.__doc__ = _PLACEHOLDER.sub(fill, func.__doc__)
    return func
