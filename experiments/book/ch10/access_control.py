"""Example 10.2 access-control queuing: differential semi-gradient SARSA with tabular
features, against the exact average-reward solution (S&B Fig. 10.5).

The book's caption gives the learned Rbar as about 2.31 for its one run. Rbar is an
exponential average with beta = 0.01, whose exact standard deviation here is about 0.21
(:func:`average_noise`), and it estimates the gain of the epsilon-greedy behaviour, not
rho*; the checks therefore hold each run's Rbar against its own behaviour's exact gain,
and judge the learned policy by its exact gain against rho* (relative value iteration
on the same model). The book's drop of the values at many free servers, states that
are rarely or never visited, shows here too."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import average_reward_solve, bellman_optimality, relative_value_iteration
from tabular.envs import AccessControl
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import below, check, within
from tabular.experiments.harness.settings import Settings
from tabular.linear import differential_semi_gradient_sarsa, one_hot, state_action_features

REPRODUCES = ("Sutton & Barto (2018), Example 10.2: Figure 10.5 (the policy and the value of "
              "the best action learned by differential semi-gradient SARSA), with the exact "
              "optimal gain and the exact gains of the learned policies")
#: Standard deviations of Rbar's noise allowed around the behaviour's exact gain.
Z = 4.0


@dataclass(frozen=True)
class Config(Settings):
    """Example 10.2: ten servers, priorities 1, 2, 4, 8, a busy server frees with
    probability 0.06 per step; one-hot state-action features (the tabular case)."""

    steps: int = 2_000_000
    """Time steps of each run (the book's 2 million)."""
    alpha: float = 0.01
    """Step size of the weights (the book's)."""
    beta: float = 0.01
    """Step size of the average-reward estimate Rbar (the book's)."""
    epsilon: float = 0.1
    """Exploration of the epsilon-greedy behaviour (the book's)."""
    runs: int = 4
    """Independent runs; the figure shows the first, the checks every one."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"steps": 200_000, "runs": 2}


def epsilon_greedy(Q: np.ndarray, epsilon: float) -> np.ndarray:
    """The behaviour's probabilities ``[S, A]`` on ``Q``: ``epsilon / A`` each, plus
    ``1 - epsilon`` split among the greedy actions (section 5.4)."""
    best = Q == Q.max(axis=1, keepdims=True)
    return epsilon / Q.shape[1] + (1.0 - epsilon) * best / best.sum(axis=1, keepdims=True)


def average_noise(mdp, pi: np.ndarray, beta: float) -> float:
    """The standard deviation of ``beta sum_k (1 - beta)^k R_{T-k}``, the exponential
    average that ``Rbar`` makes of the rewards, in the stationary chain of ``pi``: with
    ``M`` the chain of state-action pairs, ``nu`` its stationary distribution, ``c = 1 -
    beta`` and ``C(m) = nu . (r~ M^m r~)`` the reward's autocovariance (``r~ = r -
    rho``), the variance is ``beta^2 / (1 - c^2) [C(0) + 2 sum_{m >= 1} c^m C(m)]``, the
    sum ``nu . (r~ (I - c M)^{-1} r~) - C(0)`` exactly."""
    S, A = pi.shape
    P = mdp.transition_matrix().reshape(S * A, S)
    M = (P[:, :, None] * pi[None]).reshape(S * A, S * A)  # (s, a) -> (s', a')
    r = mdp.expected_reward().ravel()
    nu = np.linalg.lstsq(np.vstack([np.eye(S * A) - M.T, np.ones(S * A)]),
                         np.r_[np.zeros(S * A), 1.0], rcond=None)[0]
    centred = r - nu @ r
    c = 1.0 - beta
    c0 = nu @ centred**2
    later = nu @ (centred * np.linalg.solve(np.eye(S * A) - c * M, centred)) - c0
    return float(np.sqrt(beta**2 / (1.0 - c**2) * (c0 + 2.0 * later)))


def run(config: Config, executor) -> dict:
    env = AccessControl()
    mdp = env.model()
    features = state_action_features(one_hot(mdp.n_states), mdp.n_actions)
    learned = differential_semi_gradient_sarsa(
        mdp, features, steps=config.steps, alpha=config.alpha, beta=config.beta,
        epsilon=config.epsilon, runs=config.runs, seed=config.seed)
    exact = relative_value_iteration(mdp, tol=1e-10)
    Q = learned.Q  # [runs, S, A]
    greedy_gain, behaviour_gain, noise, certified = [], [], [], []
    for i in range(config.runs):
        greedy_gain.append(average_reward_solve(mdp, learned.policy[i]).rho)
        pi = epsilon_greedy(Q[i], config.epsilon)
        behaviour_gain.append(average_reward_solve(mdp, pi).rho)
        noise.append(average_noise(mdp, pi, config.beta))
        h = Q[i].max(axis=1)  # rho* and the greedy policy's gain lie in [min, max] of T h - h
        gap = bellman_optimality(mdp, h, 1.0) - h
        certified.append(gap.max() - gap.min())
    optimal_behaviour = average_reward_solve(mdp, epsilon_greedy(exact.Q, config.epsilon)).rho
    shape = (env.n_servers + 1, len(env.PRIORITIES), mdp.n_actions)
    return {
        "Q": Q.reshape(config.runs, *shape),
        "policy": learned.policy.reshape(config.runs, *shape[:2]),
        "average_reward": learned.average_reward, "reward_rate": learned.reward_rate,
        "greedy_gain": np.array(greedy_gain), "behaviour_gain": np.array(behaviour_gain),
        "noise": np.array(noise), "certified": np.array(certified),
        "span_Q": np.ptp(Q.reshape(config.runs, -1), axis=1), "beta": np.array(config.beta),
        "optimal_gain": np.array(exact.rho), "optimal_policy": exact.policy.reshape(shape[:2]),
        "optimal_h": exact.h.reshape(shape[:2]),
        "optimal_policy_gain": np.array(average_reward_solve(mdp, exact.policy).rho),
        "optimal_behaviour_gain": np.array(optimal_behaviour),
    }


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.6, height=4.0, title=(
        "Example 10.2: access control by differential semi-gradient SARSA "
        f"({config.steps:,} steps)"))
    policy, optimal = results["policy"][0], results["optimal_policy"]
    n_free = policy.shape[0]
    ax = axes[0, 0]
    free = np.arange(1, n_free)  # with no free server accepting is rejecting
    ax.imshow(policy[1:].T, origin="lower", cmap="Greys", vmin=-0.5, vmax=1.5, aspect="auto",
              extent=(0.5, n_free - 0.5, -0.5, 3.5))
    differ = np.argwhere(policy[1:] != optimal[1:])
    ax.plot(free[differ[:, 0]], differ[:, 1], "x", color=style.PALETTE[1],
            label="differs from the exact optimum")
    ax.set_xticks(free)
    ax.set_yticks(range(4), [f"{p:g}" for p in AccessControl.PRIORITIES])
    ax.set_xlabel("number of free servers")
    ax.set_ylabel("priority")
    ax.set_title("learned policy (dark: accept)")
    ax.legend(loc="upper left", fontsize=8)
    ax = axes[0, 1]
    best = results["Q"][0].max(axis=2)  # [free, priority]
    h = results["optimal_h"]
    h = h - h.mean() + best.mean()  # differential values are defined up to a constant
    for i, p in enumerate(AccessControl.PRIORITIES):
        c = style.PALETTE[i]
        ax.plot(np.arange(n_free), best[:, i], color=c, label=f"priority {p:g}")
        ax.plot(np.arange(n_free), h[:, i], "--", color=c, lw=1.0)
    ax.plot([], [], "--", color="#999999", label="exact optimal (shifted)")
    ax.set_xlabel("number of free servers")
    ax.set_ylabel("differential value of the best action")
    ax.set_title(f"learned Rbar = {results['average_reward'][0]:.3f}, "
                 f"exact rho* = {float(results['optimal_gain']):.3f}")
    ax.legend(fontsize=8)
    return [style.save(fig, out_dir / "access_control.png")]


@check()
def exact_gain(results: dict) -> list:
    """Relative value iteration's gain rho* (stopped at a span of 1e-10, so within 5e-11)
    is the exact gain of its own policy by the linear solve of the evaluation equations."""
    return [within("rho* vs the exact gain of its policy", measured=results["optimal_policy_gain"],
                   expected=results["optimal_gain"], tolerance=1e-10,
                   failure="relative value iteration's gain is not "
                           "its policy's", why="the span at which it stopped")]


@check("alpha", "beta")
def average_reward_tracks_the_behaviour(results: dict) -> list:
    """On-policy, Rbar estimates the gain of the epsilon-greedy behaviour: it is an
    exponential average (weight beta) of R + q(S', A') - q(S, A), so it differs from the
    exact gain of the final behaviour by the average of the rewards' noise (Z = 4 of its
    exact standard deviations in the behaviour's stationary chain) plus the average of
    the q differences, which telescopes to at most beta times the span of q. (With
    alpha = 0.01 the policy moves too little over the 1 / beta steps averaged for the
    behaviour's change to count.)"""
    measures = []
    for i, (rbar, gain) in enumerate(zip(results["average_reward"], results["behaviour_gain"],
                                         strict=True)):
        tol = Z * results["noise"][i] + results["span_Q"][i] * float(results["beta"])
        measures.append(within(f"run {i}: Rbar vs the behaviour's exact gain", measured=rbar,
                               expected=gain, tolerance=tol,
                               failure=f"run {i}'s Rbar is off its behaviour's gain",
                               why="4 sd of the average + beta span(q)"))
    return measures


@check("alpha", "beta", "epsilon", "steps")
def learned_policy_is_near_optimal(results: dict) -> list:
    """Each run's greedy policy, evaluated exactly, earns at most rho* and loses less
    gain than exploring with epsilon costs the optimal policy (rho* minus the gain of
    epsilon-greedy on the exact optimum): the learning error is smaller than the price
    the book's setting pays for exploring. Its loss is also within the certified bound
    span(T h - h) of h = max_a q (Puterman, section 8.5), a consequence of the model
    alone."""
    rho = float(results["optimal_gain"])
    exploring = rho - float(results["optimal_behaviour_gain"])
    measures = []
    for i, gain in enumerate(results["greedy_gain"]):
        loss = rho - gain
        measures.append(below(f"run {i}: rho* - gain of the greedy policy", measured=loss,
                              bound=exploring,
                              failure=f"run {i}'s policy loses more than exploring costs",
                              why="the cost of exploring"))
        measures.append(below(f"run {i}: the loss vs span(T h - h)", measured=loss,
                              bound=results["certified"][i] + 1e-10,
                              failure=f"run {i}'s loss is above its certified bound",
                              why="Puterman 8.5"))
        measures.append(below(f"run {i}: gain of the greedy policy vs rho*", measured=gain,
                              bound=rho + 1e-10, failure=f"run {i}'s policy beats the optimum",
                              why="optimality"))
    return measures
