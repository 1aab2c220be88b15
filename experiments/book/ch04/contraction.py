"""Bellman contraction: value iteration error vs gamma^k; policy iteration steps (S&B 4.3-4.4)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    bellman_optimality,
    policy_iteration,
    value_iteration,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/Gridworld5x5-v0"


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "Sutton & Barto (2018), sections 4.3-4.4: value iteration's gamma-contraction and "
    "policy iteration (Theorem 4.1), against the exact v*"
)


@dataclass(frozen=True)
class Config(Settings):
    """Value iteration from V_0 = 0 on the Example 3.5 gridworld, for several discounts."""

    gammas: tuple[float, ...] = (0.5, 0.8, 0.9, 0.95)
    """Discount rates, one curve each."""
    sweeps: int = 300
    """Synchronous Bellman optimality sweeps per curve."""
    pi_gamma: float = 0.9
    """Discount rate of the policy iteration run."""

    QUICK = {"sweeps": 60}


def error_curve(gamma: float, sweeps: int) -> dict:
    """``||V_k - V*||_inf`` for ``V_{k+1} = T* V_k``, ``V_0 = 0`` (one executor job)."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    V_star = value_iteration(mdp, gamma=gamma, tol=1e-13).V
    V = np.zeros(mdp.n_states)
    errors = np.empty(sweeps + 1)
    for k in range(sweeps + 1):
        errors[k] = np.max(np.abs(V - V_star))
        V = bellman_optimality(mdp, V, gamma)
    return {"errors": errors}


def run(config: Config, executor) -> dict:
    """The error curves (one job per gamma) and one exact policy iteration run."""
    curves = executor.map(error_curve, [{"gamma": g, "sweeps": config.sweeps}
                                        for g in config.gammas], desc="gammas")
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    pi = policy_iteration(mdp, gamma=config.pi_gamma)
    V_star = value_iteration(mdp, gamma=config.pi_gamma, tol=1e-13).V
    return {
        "gammas": np.array(config.gammas),
        "errors": np.array([c["errors"] for c in curves]),
        "pi_values": pi.values,
        "pi_V_star": V_star,
        "pi_gamma": np.array(config.pi_gamma),
    }


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.4, height=4.0,
                             title="Bellman optimality operator: a gamma-contraction in "
                                   "the sup norm (Example 3.5 gridworld)")
    ax = axes[0, 0]
    k = np.arange(results["errors"].shape[1])
    for i, (gamma, errors) in enumerate(zip(results["gammas"], results["errors"], strict=True)):
        c = style.color("", i)
        ax.semilogy(k, errors[0] * gamma ** k, color=c, linewidth=6, alpha=0.25)
        shown = errors > 0
        ax.semilogy(k[shown], errors[shown], color=c, label=f"$\\gamma$ = {gamma:g}")
    ax.plot([], [], color="0.5", linewidth=6, alpha=0.3,
            label="bound $\\gamma^k\\|V_0 - V_*\\|_\\infty$")
    ax.set_ylim(bottom=1e-12)
    ax.set_xlabel("value iteration sweep k")
    ax.set_ylabel("$\\|V_k - V_*\\|_\\infty$ (return units, log scale)")
    ax.set_title("value iteration error vs the $\\gamma^k$ bound")
    ax.legend()

    ax = axes[0, 1]
    gap = np.max(results["pi_V_star"][None, :] - results["pi_values"], axis=1)
    mean = results["pi_values"].mean(axis=1)
    steps = np.arange(len(mean))
    ax.plot(steps, mean, "o-", color=style.PALETTE[0], label="mean over states of $v_{\\pi_i}$")
    ax.axhline(results["pi_V_star"].mean(), color="black", linestyle=":",
               label="mean over states of $v_*$")
    ax.set_xlabel("policy iteration step i (evaluation + improvement)")
    ax.set_ylabel("state value (return units)")
    ax.set_xticks(steps)
    ax.set_title(f"policy iteration, $\\gamma$ = {float(results['pi_gamma']):g}")
    for i, g in zip(steps, gap, strict=True):
        text = "= $v_*$" if abs(g) < 1e-9 else f"{g:.2g} below $v_*$ (worst state)"
        ax.annotate(text, (i, mean[i]), textcoords="offset points", xytext=(6, -14), fontsize=8)
    ax.legend(loc="lower right")
    return [style.save(fig, out_dir / "contraction.png")]


@check()
def contraction_bound(results: dict) -> list[Measure]:
    """``||V_k - V*|| <= gamma^k ||V_0 - V*||`` at every sweep, for every gamma."""
    measures = []
    for gamma, errors in zip(results["gammas"], results["errors"], strict=True):
        bound = errors[0] * gamma ** np.arange(len(errors))
        over = errors > bound * (1 + 1e-12) + 1e-12  # float slack only
        measures.append(fact(f"gamma {gamma:g}: largest ||V_k - V*|| - gamma^k ||V_0 - V*|| "
                             "over sweeps",
                             passed=not over.any(), expected="<= 0 at every sweep",
                             measured=f"{np.max(errors - bound):.3g}",
                             failure=f"gamma {gamma}: ||V_k - V*|| exceeds gamma^k ||V_0 - V*|| "
                                     f"at k = {int(np.argmax(over))}",
                             tolerance="float slack 1e-12"))
    return measures


@check()
def policy_iteration_improves(results: dict) -> list[Measure]:
    """Policy iteration never makes a state worse (Theorem 4.1) and ends at v*."""
    values = results["pi_values"]
    fall = float(-np.min(np.diff(values, axis=0), initial=0.0))
    gap = float(np.max(np.abs(values[-1] - results["pi_V_star"])))
    return [below("largest fall of a state's value from one policy to the next", measured=fall,
                  bound=1e-9,
                  failure="policy iteration made some state's value worse (Theorem 4.1)",
                  why="float rounding"),
            below("policy iteration's final values: largest |v - v*|", measured=gap, bound=1e-6,
                  failure=f"policy iteration ends {gap:.2g} away from value iteration's v*",
                  why="the solvers' tolerance")]


@check("pi_gamma")
def policy_iteration_is_quick(results: dict) -> list[Measure]:
    """Policy iteration takes a handful of steps on the 25-state grid (section 4.3)."""
    steps = len(results["pi_values"])
    return [fact("policy iteration's steps on the 25-state grid", passed=steps <= 10,
                 expected="<= 10", measured=str(steps),
                 failure=f"policy iteration took {steps} steps on a 25-state grid",
                 tolerance="a handful")]
