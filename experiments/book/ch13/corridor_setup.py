"""Example 13.1's short corridor as both chapter-13 figures use it: the model, the
shared policies (one pair of logits for every state, since the states look alike) with
their exact values, the exact optimum as a check of both figures, and their panel of
returns per episode with the stuck runs left out."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import SoftmaxPolicy, TabularMDP, policy_evaluation
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, standard_error, within

ENV_ID = "tabzoo/ShortCorridor-v0"


#: A run whose last 100 episodes average below this is stuck near p(right) = 0 or 1
#: (episodes run to the step limit): the book's code floors each probability at 0.05,
#: the library's REINFORCE has no floor, so a large step size can get there; runs that
#: are not stuck average far above this line.
STUCK = -100.0


#: The largest fraction of stuck runs the check accepts at any step size: a few percent
#: get stuck at 2^-12, so more than 15% of 50 runs is a binomial tail of about 3e-4.
MAX_STUCK = 0.15


#: Standard errors a measured mean may lie from its reference (a normal mean falls
#: outside 4 of them with probability 6e-5).
K_SE = 4.0


def stuck_runs(returns: np.ndarray) -> np.ndarray:
    """The runs stuck near p(right) = 0 or 1, ``[runs]`` of ``returns [runs, episodes]``:
    their last 100 episodes average below :data:`STUCK`."""
    return returns[:, -100:].mean(axis=1) < STUCK


def draw_returns(ax, returns: np.ndarray, labels: list[str], v_star: float) -> None:
    """The return of each episode ``returns [curves, runs, episodes]``, each curve's runs
    that are not :func:`stuck_runs` averaged over 10 episodes with the 95% band (its label
    ``labels[i]`` then says how many runs it leaves out), against ``v_star`` dashed."""
    runs, episodes = returns.shape[1:]
    x = np.arange(1, episodes + 1)
    for i, (label, curve) in enumerate(zip(labels, returns, strict=True)):
        out = stuck_runs(curve)
        note = f" ({out.sum()} of {runs} runs stuck, not averaged)" if out.any() else ""
        style.mean_band(ax, x, curve[~out], label + note, style.PALETTE[i],
                        smooth=style.window(10, curve))
    ax.axhline(v_star, color="black", linestyle="--", label=f"$v_*(s_0)$ = {v_star:.2f}")
    ax.set_ylim(-90, -5)
    ax.set_xlabel("episode")
    ax.set_ylabel(f"total reward on episode\n(mean of {runs} runs, 10-episode average)")


def model() -> TabularMDP:
    return TabularMDP.from_gymnasium(gym.make(ENV_ID))


def shared_policy(mdp: TabularMDP, p_right: float) -> SoftmaxPolicy:
    """One row of logits for every state, giving ``p_right`` to "right" (action 1)."""
    logits = np.array([[0.0, np.log(p_right / (1.0 - p_right))]])
    return SoftmaxPolicy(logits, np.zeros(mdp.n_states, dtype=np.int64))


def start_value(p_right: float) -> float:
    """``v_pi(s0)`` of the shared policy, by the exact linear solve."""
    mdp = model()
    return float(policy_evaluation(mdp, shared_policy(mdp, p_right), gamma=1.0).V[0])


def shared_policy_values() -> dict:
    """``v_pi(s0)`` of the shared policies on a grid of ``p(right)`` (step 0.001), each by
    the exact linear solve, with the best of them (``v_star``, ``p_star``)."""
    grid = np.linspace(0.01, 0.99, 981)
    values = np.array([start_value(p) for p in grid])
    return {"p_grid": grid, "v_grid": values, "v_star": np.array(values.max()),
            "p_star": np.array(grid[np.argmax(values)])}


@check()
def exact_optimum(results: dict) -> list[Measure]:
    """v*(s0) = -(6 + 4 sqrt 2) = -11.66 at p(right) = 2 - sqrt 2 = 0.59 (the book prints
    -11.6), by exact evaluation of the shared policies: no setting changes it."""
    v_star, p_star = float(results["v_star"]), float(results["p_star"])
    exact_v, exact_p = -(6.0 + 4.0 * np.sqrt(2.0)), 2.0 - np.sqrt(2.0)
    failure = (f"best shared policy p = {p_star:.4f}, v = {v_star:.4f}; exact: "
               f"p = {exact_p:.4f}, v = {exact_v:.4f}")
    return [within("v*(s0) = -(6 + 4 sqrt 2)", measured=v_star, expected=exact_v, tolerance=1e-4,
                   failure=failure, why="the p grid"),
            within("best p(right) = 2 - sqrt 2", measured=p_star, expected=exact_p, tolerance=1e-3,
                   failure=failure, why="the p grid's step")]


def mean_se(x: np.ndarray) -> tuple[float, float]:
    """The mean of the per-run values ``x`` and its standard error."""
    return float(x.mean()), standard_error(x)

