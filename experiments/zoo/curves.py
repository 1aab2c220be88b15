"""The algorithm zoo on one environment: success probability of the learned policy vs steps.

Shared by the FrozenLake and trap/treasure experiments. A learning curve is built
from checkpoints: the learner is run for ``e`` episodes with the same seed for each
checkpoint ``e`` (run ``i`` of a longer call repeats the shorter one's episodes, since
each run draws from its own stream), and the policy it holds is scored exactly by
policy evaluation on a success-reward copy of the model (reward 1 on reaching the
goal, 0 otherwise, gamma = 1), so the curves carry no evaluation noise.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import tabular
import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    policy_evaluation,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check

#: name -> (learner, keyword arguments). PPO's unit is a batch of 8 episodes.
ALGORITHMS = {
    "SARSA": (tabular.sarsa, {"alpha": 0.1, "epsilon": 0.1}),
    "Expected SARSA": (tabular.expected_sarsa, {"alpha": 0.1, "epsilon": 0.1}),
    "Q-learning": (tabular.q_learning, {"alpha": 0.1, "epsilon": 0.1}),
    "Double Q-learning": (tabular.double_q_learning, {"alpha": 0.1, "epsilon": 0.1}),
    "MC control": (tabular.mc_control, {"epsilon": 0.1}),
    "REINFORCE": (tabular.reinforce, {"alpha": 0.1}),
    "Actor-critic": (tabular.actor_critic, {"alpha": 0.1, "alpha_value": 0.1}),
    "PPO": (tabular.ppo, {}),
}
PPO_BATCH = 8


def make_model(env_id: str, env_kwargs: dict) -> TabularMDP:
    return TabularMDP.from_gymnasium(gym.make(env_id, **env_kwargs))


def success_model(mdp: TabularMDP) -> TabularMDP:
    """The same dynamics paying 1 on every transition that reaches a positive-reward end."""
    reward = np.where(mdp.done & (mdp.reward > 0), 1.0, 0.0)
    return TabularMDP(mdp.next_state, mdp.prob, reward, mdp.done, mdp.start)


#: Discount of the fallback scoring of a policy that (almost) never ends an episode:
#: success within about 1 / (1 - gamma) = 10^9 steps.
HORIZON_GAMMA = 1.0 - 1e-9


def success_probability(success: TabularMDP, policy) -> float:
    """``P(reach the goal)`` from the start distribution under ``policy``, exactly.

    A softmax policy can put all but ~1e-30 of its mass on a loop (REINFORCE on the
    trap grid does): float64 cannot resolve when such an episode ends, and the exact
    solve refuses it (``ValueError``); then the policy is scored by its success within
    about 10^9 steps (discount ``HORIZON_GAMMA``), which differs from the undiscounted
    value by at most 1e-9 times the expected episode length.
    """
    try:
        V = policy_evaluation(success, policy, gamma=1.0).V
    except ValueError:
        V = policy_evaluation(success, policy, gamma=HORIZON_GAMMA).V
    return float(success.start @ V)


def learning_curve(algorithm: str, env_id: str, env_kwargs: dict, checkpoints: list,
                   gamma: float, runs: int, seed: int, options: dict | None = None) -> dict:
    """Steps taken and success probability of each run at each checkpoint (an executor
    job): ``steps [runs, C]``, ``success [runs, C]``; and the return and length of every
    episode of the longest call, ``returns [runs, E]``, ``lengths [runs, E]``.
    ``options``: keyword arguments that replace the algorithm's defaults here."""
    mdp = make_model(env_id, env_kwargs)
    success = success_model(mdp)
    fn, kwargs = ALGORITHMS[algorithm]
    kwargs = {**kwargs, **(options or {})}
    if algorithm in ("REINFORCE", "Actor-critic", "PPO") and np.isneginf(mdp.reward).any():
        kwargs = {**kwargs, "reward_floor": -1.0}
    steps = np.zeros((runs, len(checkpoints)))
    rate = np.zeros((runs, len(checkpoints)))
    for c, episodes in enumerate(checkpoints):
        if algorithm == "PPO":
            size = {"iterations": max(1, episodes // PPO_BATCH), "episodes_per_batch": PPO_BATCH}
        else:
            size = {"episodes": episodes}
        result = fn(mdp, gamma=gamma, seed=seed, runs=runs, **size, **kwargs)
        steps[:, c] = result.episode_lengths.sum(axis=1)
        rate[:, c] = [success_probability(success, result.run(i).policy) for i in range(runs)]
    return {"steps": steps, "success": rate, "returns": result.episode_returns,
            "lengths": result.episode_lengths}


def optimal_success(env_id: str, env_kwargs: dict, gamma: float) -> tuple[float, float]:
    """The best achievable success probability (value iteration on the success model),
    and the success probability of the policy that is optimal for the learners' own
    objective (discount ``gamma``), which is what they converge to."""
    mdp = make_model(env_id, env_kwargs)
    success = success_model(mdp)
    best = float(success.start @ tabular.value_iteration(success, gamma=1.0, tol=1e-12).V)
    target = tabular.value_iteration(mdp, gamma=gamma, tol=1e-12).policy
    return best, success_probability(success, target)


def sweep(executor, env_id: str, env_kwargs: dict, checkpoints: list, gamma: float,
          runs: int, seed: int, algorithms=tuple(ALGORITHMS),
          options: dict[str, dict] | None = None) -> dict:
    """Every algorithm's learning curve, as arrays keyed by algorithm index;
    ``options``: per algorithm name, keyword arguments that replace its defaults."""
    options = options or {}
    unknown = sorted(set(options) - set(algorithms))
    if unknown:
        raise ValueError(f"options name algorithms the sweep does not run: {unknown}")
    jobs = [{"algorithm": a, "env_id": env_id, "env_kwargs": env_kwargs,
             "checkpoints": list(checkpoints), "gamma": gamma, "runs": runs, "seed": seed,
             "options": options.get(a, {})}
            for a in algorithms]
    curves = executor.map(learning_curve, jobs, desc="algorithms")
    best, target = optimal_success(env_id, env_kwargs, gamma)
    online = {}
    for i, c in enumerate(curves):  # PPO's episode count can differ: one key each
        online[f"returns_{i}"] = c["returns"]
        online[f"lengths_{i}"] = c["lengths"]
    return {
        **online,
        "algorithms": np.array(algorithms),
        "steps": np.array([c["steps"] for c in curves]),      # [algorithm, run, checkpoint]
        "success": np.array([c["success"] for c in curves]),
        "optimal_success": np.array(best),
        "target_success": np.array(target),
        "gamma": np.array(gamma),
    }


@check()
def nobody_beats_the_optimum(results: dict) -> list[Measure]:
    """No learned policy, nor the policy optimal for the learners' own discount, reaches
    the goal more often than the best achievable success probability (any setting)."""
    best = float(results["optimal_success"])
    return [below("best learned policy's success probability", measured=results["success"].max(),
                  bound=best + 1e-9,
                  failure="a learned policy beats the optimal success probability",
                  why="the optimum + 1e-9"),
            below("gamma-optimal policy's success probability", measured=results["target_success"],
                  bound=best + 1e-9, failure="the gamma-optimal policy beats the optimal success "
                                             "probability", why="the optimum + 1e-9")]


def plot_online(ax, results: dict, smooth: int) -> None:
    """The return of each training episode (exploration included) against the mean
    number of environment steps taken by its end; mean and 95% band over runs."""
    for i, name in enumerate(results["algorithms"]):
        name = str(name)
        returns, lengths = results[f"returns_{i}"], results[f"lengths_{i}"]
        x = np.cumsum(lengths, axis=1).mean(axis=0)
        line = style.mean_band(ax, x, returns, name, style.color(name, i),
                               smooth=style.window(smooth, returns))
        line.set_linestyle("--" if i % 2 else "-")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(style.matplotlib.ticker.NullFormatter())
    ax.set(xlabel="environment steps (log scale)", title="return while learning (with exploration)",
           ylabel=f"return per training episode\n(mean over runs, {smooth}-episode average)")


def plot_curves(ax, results: dict) -> None:
    """Mean success probability vs mean steps, with 95% bands over runs."""
    for i, name in enumerate(results["algorithms"]):
        name = str(name)
        style.mean_band(ax, results["steps"][i].mean(axis=0), results["success"][i], name,
                        style.color(name, i), band_alpha=0.12, marker="o", markersize=3,
                        linestyle="--" if i % 2 else "-")
    best, target = float(results["optimal_success"]), float(results["target_success"])
    ax.axhline(best, color="black", linestyle=":", label=f"optimal ({best:.2f})")
    if abs(target - best) > 1e-6:
        ax.axhline(target, color="0.4", linestyle="-.",
                   label=f"optimal for gamma = {float(results['gamma']):g} ({target:.2f})")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(style.matplotlib.ticker.NullFormatter())
    ax.set(ylim=(-0.02, 1.05), xlabel="environment steps (log scale)",
           ylabel="success probability of the learned policy\n(exact; mean over runs)",
           title="the learned policy, scored exactly")
