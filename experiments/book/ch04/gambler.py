"""Example 4.3 gambler's problem: value iteration sweeps and the final policy (S&B Fig. 4.3)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    bellman_optimality,
    q_from_v,
    value_iteration,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact, within
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/Gambler-v0"


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 4.3, Figure 4.3"


@dataclass(frozen=True)
class Config(Settings):
    """Example 4.3: goal $100, heads with probability p_h, reward +1 on reaching the goal."""

    p_h: float = 0.4
    """Probability that the coin comes up heads (the book's 0.4)."""
    sweeps: tuple[int, ...] = (1, 2, 3, 32)
    """Value iteration sweeps drawn (the book's)."""
    tol: float = 1e-12
    """Sup-norm change at which value iteration stops for the final values."""

    QUICK = {"tol": 1e-9}


def smallest_optimal_stake(Q: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """The smallest stake >= 1 within ``tol`` of the best (stake 0 only where nothing else is
    allowed): one of the many optimal policies, the one the book draws."""
    stakes = Q[:, 1:]
    best = stakes >= stakes.max(axis=1, keepdims=True) - tol
    return np.argmax(best, axis=1) + 1


def run(config: Config, executor) -> dict:
    """Synchronous sweeps ``V <- T* V`` from 0 (eq. 4.10), then value iteration to ``tol``."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID, p_h=config.p_h))
    V = np.zeros(mdp.n_states)
    snapshots = []
    for k in range(1, max(config.sweeps) + 1):
        V = bellman_optimality(mdp, V, 1.0)
        if k in config.sweeps:
            snapshots.append(V)
    final = value_iteration(mdp, gamma=1.0, tol=config.tol)
    Q = q_from_v(mdp, final.V, 1.0)
    capital = np.arange(mdp.n_states)
    inner = (capital > 0) & (capital < mdp.n_states - 1)
    return {
        "capital": capital[inner],
        "sweeps": np.array(config.sweeps),
        "V_sweeps": np.array(snapshots)[:, inner],
        "V_final": final.V[inner],
        "stake": smallest_optimal_stake(Q)[inner],
        "iterations": np.array(final.iterations),
        "p_h": np.array(config.p_h),
    }


def plot(results: dict, out_dir, config: Config) -> list:
    p_h = float(results["p_h"])
    fig, axes = style.figure(1, 2, width=7.0, height=3.3,
                             title=f"Example 4.3 gambler's problem (p_h = {p_h:g})")
    ax = axes[0, 0]
    x = results["capital"]
    for i, (k, V) in enumerate(zip(results["sweeps"], results["V_sweeps"], strict=True)):
        ax.plot(x, V, color=style.PALETTE[i + 1], label=f"sweep {k}", linewidth=1.2)
    ax.plot(x, results["V_final"], color="black", linewidth=1.0, linestyle="--",
            label=f"final ($v_*$, {int(results['iterations'])} sweeps)")
    ax.set(xlabel="capital ($)", ylabel="value estimate\n(probability of winning)",
           title="value iteration sweeps")
    ax.legend(loc="upper left")
    ax = axes[1, 0]
    ax.step(x, results["stake"], where="mid", color=style.PALETTE[0])
    ax.set(xlabel="capital ($)", ylabel="final policy (stake, $)",
           title="an optimal policy: the smallest optimal stake")
    return [style.save(fig, out_dir / "gambler.png")]


@check()
def known_values(results: dict) -> list[Measure]:
    """The exact v* for any p_h: with an unfair coin (p_h < 1/2) bold play is optimal,
    so v(50) = p_h, v(25) = p_h^2, v(75) = p_h + (1 - p_h) p_h, and the smallest optimal
    stakes at 25 and 50 are everything needed; with a fair one v(s) = s / 100; with a
    favourable one staking 1 each time is optimal, so v(s) is the gambler's-ruin
    probability (1 - r^s) / (1 - r^100), r = (1 - p_h) / p_h (Dubins and Savage, 1965)."""
    p = float(results["p_h"])
    capital = results["capital"]
    V = dict(zip(capital.tolist(), results["V_final"], strict=True))
    stake = dict(zip(capital.tolist(), results["stake"], strict=True))
    measures, tol = [], 1e-8
    if p < 0.5:
        expected = {50: p, 25: p * p, 75: p + (1 - p) * p}
        measures.append(fact(
            "smallest optimal stakes at 25 and 50", passed=stake[50] == 50 and stake[25] == 25,
            expected="25 and 50 (bold play)", measured=f"{stake[25]} and {stake[50]}",
            failure=f"stakes at 25 and 50 are {stake[25]} and {stake[50]}; bold play "
                    "stakes everything needed (25 and 50)"))
        why = "value iteration's tolerance"
    else:
        goal = len(capital) + 1
        r = (1 - p) / p
        timid = capital / goal if p == 0.5 else (1 - r ** capital) / (1 - r ** goal)
        expected = dict(zip(capital.tolist(), timid, strict=True))
        tol = 1e-6  # long games: value iteration's stopping change leaves a larger error
        why = "value iteration's stopping change over long games"
        worst = max(expected, key=lambda s: abs(V[s] - expected[s]))
        expected = {worst: expected[worst]}  # one row: the capital farthest from its value
    for s, value in expected.items():
        measures.append(within(f"v*({s})", measured=V[s], expected=value, tolerance=tol,
                               failure=f"v({s}) = {V[s]:.10f}, expected {value:.10f}", why=why))
    return measures


@check()
def values_rise_with_capital(results: dict) -> list[Measure]:
    """v* increases with the capital: more money can play as the less would, and more."""
    fall = float(-np.min(np.diff(results["V_final"])))
    return [fact("largest fall of v* from one capital to the next", passed=fall <= 1e-12,
                 expected="<= 1e-12 (none)", measured=f"{fall:.3g}",
                 failure="v* is not increasing in the capital", tolerance="float rounding")]
