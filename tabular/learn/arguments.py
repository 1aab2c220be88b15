"""The argument checks every model-free learner makes first: the model, ``gamma``, the
episode counts (:func:`episode_args`), and the initial estimates and per-run tables
(:func:`initial_values`, :func:`per_run`). Every error names the parameter.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tabular.checks import check_fits, check_gamma, check_positive_int, real_array
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.results import check_runs

#: The longest episode a learner accepts: Monte Carlo and the policy-gradient learners
#: keep a whole episode in buffers of ``max_steps`` entries per run (tens of bytes
#: each), so a longer limit would ask for gigabytes before the first step.
MAX_STEPS = 10**8


#: The step limit of a value-based learner's episode when neither the call nor the
#: model (its env's time limit) sets one.
DEFAULT_MAX_STEPS = 10_000


def check_episode_args(mdp, episodes: int, runs: int | None, max_steps: int | None,
                       default: int = DEFAULT_MAX_STEPS, made_by: str | None = None
                       ) -> tuple[int, int, int]:
    """``(episodes, n, max_steps)``: ``episodes`` is an int >= 1; ``n`` is the number of
    runs the kernel computes (:func:`~tabular.results.check_runs`: 1 for
    ``runs=None``); ``max_steps``, the step limit per episode, is an int in
    ``[1, MAX_STEPS]``, and ``None`` means the model's time limit
    (:attr:`TabularMDP.max_episode_steps <tabular.model.mdp.TabularMDP>`, Gymnasium's
    ``max_episode_steps`` of the env it was read from) or, without one, ``default``.

    Before anything is allocated, the runs' episode records and ``[S, A]`` tables are
    checked to fit (:func:`~tabular.checks.check_fits`); the error names the arguments
    the user passed: ``runs``, and ``episodes`` or, when another count makes the
    episodes, ``made_by`` (e.g. ``"iterations=100 x episodes_per_batch=8"``)."""
    if max_steps is None:
        max_steps = default if mdp.max_episode_steps is None else mdp.max_episode_steps
    if made_by is None:  # else a product of counts checked already, maybe beyond int64
        episodes = check_positive_int("episodes", episodes)
    n = check_runs(runs)
    counts = ([] if runs is None else [f"runs={n:,}"]) + [made_by or f"episodes={episodes:,}"]
    table = mdp.n_states * mdp.n_actions
    check_fits(" x ".join(counts), n * (16 * episodes + 8 * table),
               f"{n:,} run(s) of {episodes:,} episode returns and lengths and an "
               f"[{mdp.n_states:,}, {mdp.n_actions:,}] table")
    return episodes, n, check_positive_int("max_steps", max_steps, high=MAX_STEPS)


class EpisodeArgs(NamedTuple):
    """The arguments every episodic learner checks first (:func:`episode_args`)."""

    mdp: TabularMDP
    gamma: float
    episodes: int
    n_runs: int
    max_steps: int


def episode_args(mdp, *, gamma: float, episodes: int, runs: int | None,
                 max_steps: int | None, default_max_steps: int = DEFAULT_MAX_STEPS
                 ) -> EpisodeArgs:
    """``mdp`` as a :class:`~tabular.TabularMDP` (:func:`~tabular.model.mdp.as_mdp`: a
    Gymnasium env is read through its transition table), ``gamma`` checked
    (:func:`~tabular.checks.check_gamma`) and the episode counts of
    :func:`check_episode_args`, in one record."""
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    episodes, n_runs, max_steps = check_episode_args(mdp, episodes, runs, max_steps,
                                                     default_max_steps)
    return EpisodeArgs(mdp=mdp, gamma=gamma, episodes=episodes, n_runs=n_runs, max_steps=max_steps)


def initial_values(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """The initial estimate: a finite number or a finite array of ``shape``."""
    arr = real_array(name, value)
    if arr.ndim == 0:
        arr = np.full(shape, float(arr))
    if arr.shape != shape:
        raise ValueError(f"{name} must be a number or an array of shape {list(shape)}, "
                         f"got shape {list(arr.shape)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (a -inf value is learned, not given), "
                         f"got {arr[~np.isfinite(arr)][0]!r}")
    return np.ascontiguousarray(arr)


def per_run(values: np.ndarray, runs: int) -> np.ndarray:
    """``runs`` copies of ``values`` along a new leading axis (each run's own table)."""
    return np.repeat(values[None], runs, axis=0)
