"""Figure 6.3: interim and asymptotic performance of SARSA, Expected SARSA and Q-learning
on the cliff as a function of the step size, against their exact limits.

On the cliff every transition is deterministic, so Expected SARSA's and Q-learning's
targets are exact functions of ``Q`` and both converge for every step size: Expected
SARSA to the best epsilon-greedy policy (the epsilon-soft optimum of section 5.4),
Q-learning to ``q*``, whose epsilon-greedy behaviour walks the edge and falls. SARSA's
target samples the next action, so a large step keeps its ``Q`` moving.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    expected_sarsa,
    policy_evaluation,
    q_from_v,
    q_learning,
    sarsa,
    value_iteration,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, below, check, standard_error, within
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/CliffWalking-v0"
METHODS = {"SARSA": sarsa, "Expected SARSA": expected_sarsa, "Q-learning": q_learning}

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("Sutton & Barto (2018), Figure 6.3 (interim and asymptotic performance "
              "against alpha on the cliff), with the exact limits of Expected SARSA and "
              "Q-learning")
#: Standard errors a measured mean may lie from its exact value (a normal mean falls
#: outside 4 of them with probability 6e-5).
K_SE = 4.0


@dataclass(frozen=True)
class Config(Settings):
    """Figure 6.3: epsilon-greedy (0.1), undiscounted, step sizes 0.1 to 1."""

    alphas: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    """Step sizes (the book's axis)."""
    epsilon: float = 0.1
    """Exploration rate of every method (the book's)."""
    interim_episodes: int = 100
    """Episodes of the interim average (the book's first 100)."""
    interim_runs: int = 2000
    """Runs of the interim average (the book: 50,000; 2,000 put its standard error
    under 1)."""
    asymptotic_episodes: int = 20_000
    """Episodes of the asymptotic average (the book: 100,000; Q settles within a few
    thousand here, and SARSA's 1000-step episodes at alpha = 1 make the book's count
    the most expensive part of ``make experiments``)."""
    asymptotic_runs: int = 10
    """Runs of the asymptotic average (the book's 10)."""
    seed: int = 0
    """Seed of the runs' random streams (every method and step size gets the same)."""

    QUICK = {"interim_runs": 500, "asymptotic_episodes": 5000, "asymptotic_runs": 4}


def performance(method: str, alpha: float, epsilon: float, interim_episodes: int,
                interim_runs: int, asymptotic_episodes: int, asymptotic_runs: int,
                seed: int) -> dict:
    """One method at one step size (an executor job): the mean return per episode over
    the first episodes (``interim``, with the standard error over runs), over every
    episode of the long runs (``asymptotic``, the book's measure), and over their second
    half (``settled``, with its standard error), where the policy has stopped moving."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    learn = METHODS[method]
    common = {"gamma": 1.0, "alpha": alpha, "epsilon": epsilon, "seed": seed}
    interim = learn(mdp, episodes=interim_episodes, runs=interim_runs, **common)
    per_run = interim.episode_returns.mean(axis=1)
    long = learn(mdp, episodes=asymptotic_episodes, runs=asymptotic_runs, **common)
    settled = long.episode_returns[:, asymptotic_episodes // 2:]
    return {"interim": per_run.mean(), "interim_se": standard_error(per_run),
            "asymptotic": long.episode_returns.mean(), "settled": settled.mean(),
            # once Q has settled the episodes are independent draws of one policy
            "settled_se": standard_error(settled)}


def epsilon_greedy(Q: np.ndarray, epsilon: float) -> np.ndarray:
    """The epsilon-greedy policy on ``Q``, ties split evenly, as the learners act."""
    best = Q == Q.max(axis=1, keepdims=True)
    return epsilon / Q.shape[1] + (1.0 - epsilon) * best / best.sum(axis=1, keepdims=True)


def exact_limits(epsilon: float) -> tuple[float, float]:
    """The expected return from the start of Expected SARSA's limit, the epsilon-soft
    optimum (epsilon-soft policy iteration, section 5.4), and of Q-learning's behaviour
    in its limit, epsilon-greedy on ``q*``."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))

    def value(policy):
        return policy_evaluation(mdp, policy, gamma=1.0).V

    policy = np.full(mdp.next_state.shape[:2], 1.0 / mdp.next_state.shape[1])
    while True:  # policy iteration among epsilon-soft policies ends in finitely many steps
        better = epsilon_greedy(q_from_v(mdp, value(policy), 1.0), epsilon)
        if np.array_equal(better, policy):
            break
        policy = better
    soft = float(mdp.start @ value(policy))
    q_star = q_from_v(mdp, value_iteration(mdp, gamma=1.0).V, 1.0)
    # q* is integer-valued here (-1 per step); rounding makes its ties exact, as the
    # learners' converged Q has them
    behaviour = float(mdp.start @ value(epsilon_greedy(np.round(q_star, 6), epsilon)))
    return soft, behaviour


def run(config: Config, executor) -> dict:
    jobs = [{"method": m, "alpha": a, "epsilon": config.epsilon,
             "interim_episodes": config.interim_episodes, "interim_runs": config.interim_runs,
             "asymptotic_episodes": config.asymptotic_episodes,
             "asymptotic_runs": config.asymptotic_runs, "seed": config.seed}
            for m in METHODS for a in config.alphas]
    out = executor.map(performance, jobs, desc="method x alpha")
    shape = (len(METHODS), len(config.alphas))
    results = {key: np.array([o[key] for o in out]).reshape(shape)
               for key in ("interim", "interim_se", "asymptotic", "settled", "settled_se")}
    soft, behaviour = exact_limits(config.epsilon)
    results.update({"methods": np.array(list(METHODS)), "alphas": np.array(config.alphas),
                    "epsilon_soft_optimum": np.array(soft),
                    "q_learning_limit": np.array(behaviour)})
    return results


#: The book's vertical axis: a point below it is drawn on its edge and labelled.
FLOOR = -160.0


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=6.4, height=4.6,
                             title="Figure 6.3: TD control on the cliff against the step size "
                                   f"(epsilon = {config.epsilon:g})")
    ax = axes[0, 0]
    alphas = results["alphas"]
    for i, name in enumerate(results["methods"]):
        name = str(name)
        marker = "os^"[i % 3]  # SARSA's two blues need a second cue
        for key, line in (("asymptotic", "-"), ("interim", "--")):
            y = results[key][i]
            ax.plot(alphas, np.maximum(y, FLOOR), line, marker=marker, markersize=4,
                    color=style.color(name, i), label=f"{name}, {key}")
            for a, v in zip(alphas, y, strict=True):
                if v < FLOOR:
                    ax.annotate(f"{v:.0f}", (a, FLOOR), textcoords="offset points",
                                xytext=(-5, 4), ha="right", fontsize=7,
                                color=style.color(name, i))
    for key, label, line in (("epsilon_soft_optimum", "exact: best epsilon-greedy policy",
                              ":"),
                             ("q_learning_limit", "exact: epsilon-greedy on $q_*$", "-.")):
        value = float(results[key])
        ax.axhline(value, color="0.3", linestyle=line, linewidth=1,
                   label=f"{label} ({value:.2f})")
    ax.set(xlabel="step size alpha", ylabel="sum of rewards per episode",
           ylim=(FLOOR, 0), xlim=(alphas.min() - 0.03, alphas.max() + 0.03),
           title=f"interim: first {config.interim_episodes} episodes, "
                 f"{config.interim_runs:,} runs; asymptotic: "
                 f"{config.asymptotic_episodes:,} episodes, {config.asymptotic_runs} runs")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return [style.save(fig, out_dir / "cliff_alpha.png")]


def _row(results: dict, name: str) -> int:
    return list(results["methods"]).index(name)


def _settles_at(results: dict, method: str, limit: str, named: str) -> list[Measure]:
    """At every step size, ``method``'s settled return is the exact value
    ``results[limit]`` (which the failure names ``named``), within :data:`K_SE` standard
    errors of the runs' mean."""
    i, exact = _row(results, method), float(results[limit])
    return [within(f"{method}'s settled return, alpha = {a:g}", measured=m, expected=exact,
                   tolerance=K_SE * se,
                   failure=f"{method} at alpha = {a:g} settles at {m:.3f}, not at {named} "
                           f"{exact:.3f}", why=f"{K_SE:g} standard errors")
            for a, m, se in zip(results["alphas"], results["settled"][i],
                                results["settled_se"][i], strict=True)]


@check("epsilon")
def expected_sarsa_reaches_the_epsilon_soft_optimum(results: dict) -> list[Measure]:
    """At every step size, Expected SARSA's settled return is the exact value of the best
    epsilon-greedy policy: its target is exact on the cliff, so no step size is too
    large (the book: it "can safely set alpha = 1")."""
    return _settles_at(results, "Expected SARSA", "epsilon_soft_optimum",
                       "the epsilon-soft optimum")


@check("epsilon")
def q_learning_reaches_its_exact_limit(results: dict) -> list[Measure]:
    """At every step size, Q-learning's settled return is the exact value of acting
    epsilon-greedily on ``q*``: it learns the edge path and falls off it while
    exploring."""
    return _settles_at(results, "Q-learning", "q_learning_limit", "the exact")


@check("epsilon")
def sarsa_degrades_with_the_step_size(results: dict) -> list[Measure]:
    """SARSA never settles above the best epsilon-greedy policy, and settles lower at the
    largest step size than at the smallest: its sampled target keeps ``Q`` moving (the
    book: it "can only perform well in the long run at a small value of alpha")."""
    i, best = _row(results, "SARSA"), float(results["epsilon_soft_optimum"])
    settled, se = results["settled"][i], results["settled_se"][i]
    top = int(np.argmax(settled))
    gap = float(settled[0] - settled[-1])
    return [below("SARSA's best settled return", measured=settled[top], bound=best + K_SE * se[top],
                  failure=f"SARSA settles at {settled[top]:.3f}, above the epsilon-soft optimum "
                          f"{best:.3f}", why=f"the optimum + {K_SE:g} standard errors"),
            above("SARSA's settled return: smallest alpha - largest", measured=gap,
                  bound=K_SE * float(np.hypot(se[0], se[-1])),
                  failure=f"SARSA at the largest step size is not below the smallest ({gap:.3f})",
                  why=f"{K_SE:g} standard errors of the difference")]


@check("epsilon", "interim_episodes")
def expected_sarsa_learns_faster_than_sarsa(results: dict) -> list[Measure]:
    """Expected SARSA's interim return is above SARSA's at every step size but the
    smallest, where both move slowly (the book: "a significant improvement over Sarsa
    over a wide range of values for the step-size parameter")."""
    e, s = _row(results, "Expected SARSA"), _row(results, "SARSA")
    diff = results["interim"][e] - results["interim"][s]
    # as if independent; the shared seed correlates the two positively, so this is wider
    se = np.hypot(results["interim_se"][e], results["interim_se"][s])
    return [above(f"interim return, Expected SARSA - SARSA, alpha = {a:g}", measured=d,
                  bound=K_SE * u,
                  failure=f"Expected SARSA's interim return is not above SARSA's at alpha = {a:g} "
                          f"({d:.2f})", why=f"{K_SE:g} standard errors of the difference")
            for a, d, u in zip(results["alphas"][1:], diff[1:], se[1:], strict=True)]
