"""Example 11.1 Baird's counterexample: off-policy semi-gradient TD and semi-gradient DP
diverge, exactly and in samples (S&B Fig. 11.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.envs import BairdCounterexample
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import check
from tabular.experiments.harness.settings import Settings
from tabular.linear import (
    expected_td_update,
    off_policy_semi_gradient_td,
    reward_process,
    ve_minimiser,
)

REPRODUCES = ("Sutton & Barto (2018), Example 11.1: Figure 11.2 (off-policy semi-gradient "
              "TD, left; semi-gradient DP, right), with the exact expected update")
#: The steps at which the sampled mean is compared with the exact expected iterate.
COMPARED = (100, 500, 1000)


@dataclass(frozen=True)
class Config(Settings):
    """Example 11.1: seven states, gamma 0.99, alpha 0.01, the book's features and
    starting weights; behaviour dashed with probability 6/7, target always solid."""

    steps: int = 1000
    """Steps of TD, and sweeps of DP (the book's 1000)."""
    alpha: float = 0.01
    """Step size of both (the book's)."""
    gamma: float = 0.99
    """Discount (the book's)."""
    runs: int = 200
    """Independent runs of sampled TD, whose mean follows the exact expected update."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"runs": 50}


def run(config: Config, executor) -> dict:
    B = BairdCounterexample
    mdp, X = B.model(), B.features()
    target = reward_process(mdp, B.TARGET, gamma=config.gamma)
    behaviour_mu = reward_process(mdp, B.BEHAVIOUR, gamma=config.gamma).mu  # uniform
    # every step starts from the behaviour's stationary (uniform) distribution, so the
    # steps are independent draws of the stationary transitions, and the mean weight
    # after t steps is exactly the t-th expected iterate
    sampled = off_policy_semi_gradient_td(
        mdp, B.TARGET, B.BEHAVIOUR, X, gamma=config.gamma, episodes=config.steps,
        max_steps=1, alpha=config.alpha, initial_w=B.INITIAL_WEIGHTS, runs=config.runs,
        seed=config.seed, history=True)
    expected = np.zeros((config.steps + 1, X.shape[1]))
    expected[0] = B.INITIAL_WEIGHTS
    for t in range(config.steps):  # semi-gradient DP (section 11.2)
        expected[t + 1] = expected[t] + config.alpha * expected_td_update(
            target, X, expected[t], mu=behaviour_mu)
    jacobian = np.column_stack([expected_td_update(target, X, e, mu=mu)
                                for mu in (behaviour_mu, target.mu) for e in np.eye(8)])
    radii = [np.abs(np.linalg.eigvals(np.eye(8) + config.alpha * jacobian[:, 8 * i:8 * i + 8]))
             .max() for i in range(2)]
    history = np.concatenate([np.repeat(B.INITIAL_WEIGHTS[None, None], config.runs, axis=0),
                              sampled.w_history], axis=1)
    compared = [t for t in COMPARED if t <= config.steps]
    return {"compared": np.array(compared, dtype=np.int64),
            "sampled": history[:, compared], "sampled_run0": history[0],
            "sampled_mean": history.mean(axis=0), "expected": expected,
            "radius": np.array(radii), "w_ve": ve_minimiser(target, X), "v": target.v}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.4, height=4.0,
                             title="Example 11.1 Baird's counterexample: the weights diverge")
    names = [f"$w_{i}$" for i in range(1, 9)]
    steps = np.arange(results["expected"].shape[0])
    for i, name in enumerate(names):
        c = style.PALETTE[i % len(style.PALETTE)]
        axes[0, 0].plot(steps, results["sampled_run0"][:, i], color=c, label=name, lw=1.0)
        axes[0, 1].plot(steps, results["expected"][:, i], color=c, label=name)
    axes[0, 0].set_title("off-policy semi-gradient TD (one run)")
    axes[0, 0].set_xlabel("steps")
    axes[0, 1].set_title("semi-gradient DP (the exact expected update)")
    axes[0, 1].set_xlabel("sweeps")
    for ax in axes[0]:
        ax.set_ylabel("weight")
        ax.legend(ncol=2, fontsize=9, loc="upper left")
    return [style.save(fig, out_dir / "baird.png")]


@check()
def representable(results: dict) -> list[str]:
    """v_pi = 0 and w = 0 represents it exactly: the VE minimiser is 0 (Example 11.1)."""
    failures = []
    if np.abs(results["v"]).max() != 0.0 or np.abs(results["w_ve"]).max() > 1e-12:
        failures.append(f"v_pi = {results['v']}, w_VE = {results['w_ve']}")
    return failures


@check("alpha", "gamma")
def expected_update_diverges(results: dict) -> list[str]:
    """Off-policy (uniform state distribution) the expected update's iteration matrix has
    spectral radius above 1, so it diverges from almost every start (section 11.2); on
    the target's own distribution it is at most 1."""
    off, on = results["radius"]
    failures = []
    if not off > 1.0:
        failures.append(f"the off-policy iteration's spectral radius is {off:.6f}, not > 1")
    if not on <= 1.0 + 1e-12:
        failures.append(f"the on-policy iteration's spectral radius is {on:.6f}, above 1")
    return failures


@check("alpha", "gamma", "steps")
def dp_weights_grow_tenfold(results: dict) -> list[str]:
    """Over the book's 1000 sweeps semi-gradient DP's weights grow more than tenfold
    (Figure 11.2 right); fewer sweeps need not get there."""
    if not np.abs(results["expected"][-1]).max() > 10 * np.abs(results["expected"][0]).max():
        return ["semi-gradient DP's weights did not grow tenfold"]
    return []


@check()
def sampled_mean_follows_expected(results: dict) -> list[str]:
    """The mean over runs of sampled off-policy TD's weights after t steps equals the
    t-th exact expected iterate (each step is an independent draw from the stationary
    behaviour), within 5 standard errors, at steps 100, 500 and 1000."""
    failures = []
    sampled = results["sampled"]  # [runs, compared, 8]
    for k, t in enumerate(results["compared"]):
        se = sampled[:, k].std(axis=0, ddof=1) / np.sqrt(sampled.shape[0])
        z = np.abs(sampled[:, k].mean(axis=0) - results["expected"][t]) / se
        if z.max() > 5.0:
            failures.append(f"after {t} steps weight {int(np.argmax(z)) + 1}'s mean is "
                            f"{z.max():.1f} standard errors from the expected iterate")
    return failures
