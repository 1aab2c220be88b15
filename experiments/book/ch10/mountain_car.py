"""Example 10.1 Mountain Car: episodic semi-gradient SARSA with tile coding, on a grid
of positions and velocities whose exact optimum is known (S&B Figs. 10.1-10.3), and
Sarsa(lambda) and true online Sarsa(lambda) on the same features (Figs. 12.10, 12.11).

The task's state is continuous; :class:`~tabular.envs.MountainCar` replaces it by a
grid and moves the car to the grid points around its landing point with bilinear
weights. The learner runs on that finite MDP, so its episodes are held against the
grid's exact optimal number of steps (value iteration), and its final greedy policy is
evaluated exactly. How close the grid is to the continuous task is measured, not
assumed: the optimum on finer and finer grids converges (``refinements``), and the
figure shows the finest one beside the learner's grid's. The features are the book's:
eight tilings of 8 x 8 tiles over position and velocity, one set per action (binary, so
the replacing trace of section 12.7 is defined on them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import policy_evaluation, value_iteration
from tabular.envs import MountainCar
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import above, below, check, standard_error, within
from tabular.experiments.harness.settings import Settings
from tabular.linear import (
    n_step_semi_gradient_sarsa,
    semi_gradient_sarsa,
    semi_gradient_sarsa_lambda,
    state_action_features,
    state_coordinates,
    tile_coding,
    true_online_linear_sarsa_lambda,
)

REPRODUCES = ("Sutton & Barto (2018), Example 10.1: Figure 10.1 (the cost-to-go learned "
              "by semi-gradient SARSA with tile coding), Figure 10.2 (steps per episode "
              "against alpha) and Figure 10.3 (one-step against 8-step SARSA), on a grid "
              "with an exact optimum; Figure 12.10 (left: Sarsa(lambda) with replacing "
              "traces, early steps per episode against alpha, the book's seven lambdas) and "
              "Figure 12.11 (true online Sarsa(lambda) against replacing traces, with and "
              "without clearing the other actions' traces, and accumulating traces)")
#: Standard errors of the mean over runs allowed in the statistical comparisons.
Z = 4.0
#: Figure 10.1's earlier snapshots of the learned cost-to-go (episodes).
SNAPSHOTS = (12, 104)


@dataclass(frozen=True)
class Config(Settings):
    """Example 10.1 on a 51 x 51 grid, the book's tile coding and step sizes, epsilon 0
    (the zero initial weights are optimistic against rewards of -1, which explores)."""

    positions: int = 51
    """Grid points along the position axis of the learner's MDP."""
    velocities: int = 51
    """Grid points along the velocity axis (odd, so that 0 is one)."""
    tilings: int = 8
    """Tilings of the tile coder (the book's 8)."""
    tiles: int = 8
    """Tiles per dimension of each tiling (the book's 8 x 8)."""
    alphas: tuple[float, ...] = (0.1, 0.2, 0.5)
    """Step sizes times the number of tilings: alpha = 0.1/8, 0.2/8, 0.5/8 (the book's)."""
    n_step: int = 8
    """Figure 10.3's n of semi-gradient n-step SARSA (the book's 8), beside one-step
    SARSA at the largest of ``alphas``."""
    n_step_alpha: float = 0.3
    """Its step size times the number of tilings (the book's 0.3/8)."""
    epsilon: float = 0.0
    """Exploration (the book's 0)."""
    episodes: int = 500
    """Episodes per run (the book's 500)."""
    runs: int = 10
    """Independent runs per step size (the book averages 100; 10 keep the run short and
    the standard errors of the checks below a tenth of the means)."""
    lams: tuple[float, ...] = (0.0, 0.68, 0.84, 0.92, 0.96, 0.98, 0.99)
    """Figure 12.10's trace decays of Sarsa(lambda) with replacing traces (the book's
    seven)."""
    lambda_alphas: tuple[float, ...] = (0.2, 0.6, 1.0, 1.4)
    """Their step sizes times the number of tilings (the book's axis runs 0 to ~1.8)."""
    lambda_episodes: int = 50
    """Episodes per Sarsa(lambda) run, all of them measured (the book's first 50)."""
    lambda_runs: int = 8
    """Independent Sarsa(lambda) runs per (lambda, alpha) (the book averages 100; 8 keep
    the 12 settings short and resolve the book's finding at 4 standard errors: see the
    checks)."""
    online_lam: float = 0.9
    """Figure 12.11's trace decay (the book's 0.9)."""
    online_alphas: tuple[float, ...] = (0.2, 0.5, 1.0, 1.5)
    """Figure 12.11's step sizes times the number of tilings for true online Sarsa(lambda)
    and Sarsa(lambda) with replacing traces, with and without clearing the traces of
    the other actions."""
    accumulating_alphas: tuple[float, ...] = (0.1, 0.2, 0.3)
    """Those for accumulating traces, which diverge from about 1/8 on (the book's curve
    also stops early)."""
    online_episodes: int = 20
    """Episodes per Figure 12.11 run, all of them measured (the book's first 20)."""
    online_runs: int = 16
    """Independent runs per Figure 12.11 setting (the book averages 100; 16 resolve its
    lead of every other trace over the accumulating one at 4 standard errors, not its
    smaller lead of true online Sarsa(lambda) over the replacing traces: see the
    checks)."""
    refinements: tuple[int, ...] = (51, 101, 201, 401)
    """Grid points per axis of the grids whose exact optima measure the convergence."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"episodes": 120, "runs": 3, "refinements": (51, 101, 201), "lams": (0.0, 0.96),
             "lambda_alphas": (0.6, 1.4), "online_alphas": (1.0, 1.5),
             "accumulating_alphas": (0.2,)}


def features(mdp, config: Config) -> np.ndarray:
    """The book's tile coding of ``(velocity, position)``, one block of weights per
    action (:func:`~tabular.linear.state_action_features`)."""
    X = tile_coding(state_coordinates(mdp), tilings=config.tilings, tiles=config.tiles)
    return state_action_features(X, mdp.n_actions)


def grid_optimum(positions: int, velocities: int) -> float:
    """The exact optimal return from the start distribution on a grid (value iteration
    to 1e-9)."""
    mdp = MountainCar(positions, velocities).model()
    return float(mdp.start @ value_iteration(mdp, gamma=1.0, tol=1e-9).V)


def run(config: Config, executor) -> dict:
    mdp = MountainCar(config.positions, config.velocities).model()
    X = features(mdp, config)
    optimum = value_iteration(mdp, gamma=1.0, tol=1e-9)
    lengths, greedy_steps = [], []
    for scaled in config.alphas:
        learned = semi_gradient_sarsa(mdp, X, alpha=scaled / config.tilings,
                                      epsilon=config.epsilon, episodes=config.episodes,
                                      runs=config.runs, seed=config.seed)
        lengths.append(learned.episode_lengths)
        greedy_steps.append([-mdp.start @ policy_evaluation(mdp, learned.policy[i], 1.0).V
                             for i in range(config.runs)])
        if scaled == max(config.alphas):
            final_cost = -learned.V[0]
    n_step = n_step_semi_gradient_sarsa(mdp, X, n_step=config.n_step,
                                        alpha=config.n_step_alpha / config.tilings,
                                        epsilon=config.epsilon, episodes=config.episodes,
                                        runs=config.runs, seed=config.seed)
    snapshots = []  # run 0 of the largest step again, stopped earlier: the same episodes
    for episodes in (e for e in SNAPSHOTS if e < config.episodes):
        early = semi_gradient_sarsa(mdp, X, alpha=max(config.alphas) / config.tilings,
                                    epsilon=config.epsilon, episodes=episodes, runs=1,
                                    seed=config.seed)
        snapshots.append(-early.V[0])
    lambda_steps = [[semi_gradient_sarsa_lambda(  # [run, episode] -> mean per run
        mdp, X, lam=lam, trace="replacing", alpha=scaled / config.tilings,
        epsilon=config.epsilon, episodes=config.lambda_episodes, runs=config.lambda_runs,
        seed=config.seed).episode_lengths.mean(axis=1) for scaled in config.lambda_alphas]
        for lam in config.lams]
    online = {"epsilon": config.epsilon, "episodes": config.online_episodes,
              "runs": config.online_runs, "seed": config.seed, "lam": config.online_lam}
    online_returns = [[learner(mdp, X, alpha=scaled / config.tilings, **online, **options)
                       .episode_returns.mean(axis=1) for scaled in config.online_alphas]
                      for learner, options in [(true_online_linear_sarsa_lambda, {}),
                                               (semi_gradient_sarsa_lambda,
                                                {"trace": "replacing"}),
                                               (semi_gradient_sarsa_lambda,
                                                {"trace": "clearing"})]]
    accumulating_returns = [semi_gradient_sarsa_lambda(
        mdp, X, alpha=scaled / config.tilings, **online).episode_returns.mean(axis=1)
        for scaled in config.accumulating_alphas]
    shown = [e for e in SNAPSHOTS if e < config.episodes] + [config.episodes]
    grid = (config.velocities, config.positions)
    return {
        "alphas": np.array(config.alphas) / config.tilings,
        "episode_lengths": np.array(lengths),  # [alpha, run, episode]
        "n_step_lengths": n_step.episode_lengths,  # [run, episode]
        "n_step": np.array(config.n_step),
        "greedy_steps": np.array(greedy_steps),  # [alpha, run]
        "optimal_steps": np.array(-float(mdp.start @ optimum.V)),
        "optimal_cost": (-optimum.V).reshape(grid),
        "cost_to_go": np.array([*snapshots, final_cost]).reshape(len(shown), *grid),
        "snapshot_episodes": np.array(shown),
        "refinements": np.array(config.refinements),
        "refined_steps": np.array([-grid_optimum(n, n | 1) for n in config.refinements]),
        "lams": np.array(config.lams),
        "lambda_alphas": np.array(config.lambda_alphas) / config.tilings,
        "lambda_steps": np.array(lambda_steps),  # [lam, alpha, run]: mean steps per episode
        "online_alphas": np.array(config.online_alphas) / config.tilings,
        # [true online/replacing/clearing, alpha, run]
        "online_returns": np.array(online_returns),
        "accumulating_alphas": np.array(config.accumulating_alphas) / config.tilings,
        "accumulating_returns": np.array(accumulating_returns),  # [alpha, run]
    }


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(4, 3, width=3.4, height=3.2, title=(
        "Example 10.1: Mountain Car, semi-gradient SARSA and Sarsa(lambda) with tile coding on a "
        f"{config.positions} x {config.velocities} grid"))
    positions, velocities = MountainCar(config.positions, config.velocities).grid()
    extent = (positions[0], positions[-1], velocities[0], velocities[-1])
    costs = [*results["cost_to_go"], results["optimal_cost"]]
    top = max(float(np.max(c)) for c in costs)
    titles = [f"after {e} episodes" for e in results["snapshot_episodes"]]
    panels = list(axes[0, :len(costs)])
    for ax in axes[0, len(costs):]:
        ax.set_visible(False)
    for ax, cost, title in zip(panels, costs, [*titles, "exact optimum"], strict=True):
        image = ax.imshow(cost, origin="lower", aspect="auto", extent=extent, vmin=0.0,
                          vmax=top, cmap="viridis")
        ax.set_title(f"cost-to-go, {title}")
        ax.set_xlabel("position")
        ax.set_ylabel("velocity")
        ax.grid(False)
    fig.colorbar(image, ax=panels, label="steps to go: -max_a q(s, a)", shrink=0.85)
    grid = axes[1, 0].get_gridspec()
    for ax in axes[1]:
        ax.remove()
    ax = fig.add_subplot(grid[1, :2])
    episodes = np.arange(1, config.episodes + 1)
    optimal = float(results["optimal_steps"])
    for k, scaled in enumerate(config.alphas):
        style.mean_band(ax, episodes, results["episode_lengths"][k],
                        label=f"alpha = {scaled:g}/{config.tilings}", color=style.PALETTE[k])
    ax.axhline(optimal, color="black", ls="--", lw=1.0, label="exact optimum of this grid")
    ax.set_yscale("log")
    ax.set_xlabel("episode")
    ax.set_ylabel(f"steps per episode (mean of {config.runs} runs)")
    ax.set_title("Figure 10.2: steps per episode")
    ax.legend(fontsize=9)
    ax = fig.add_subplot(grid[1, 2])
    style.mean_band(ax, episodes, results["episode_lengths"][-1], color=style.PALETTE[2],
                    label=f"n = 1, alpha = {max(config.alphas):g}/{config.tilings}",
                    smooth=style.window(10, episodes))
    style.mean_band(ax, episodes, results["n_step_lengths"], color=style.PALETTE[3],
                    label=f"n = {config.n_step}, alpha = {config.n_step_alpha:g}/{config.tilings}",
                    smooth=style.window(10, episodes))
    ax.axhline(optimal, color="black", ls="--", lw=1.0, label="exact optimum")
    ax.set_yscale("log")
    ax.set_xlabel("episode")
    ax.set_title("Figure 10.3 (10-episode means)")
    ax.legend(fontsize=9)
    ax = fig.add_subplot(grid[1, 3])
    ax.plot(results["refinements"], results["refined_steps"], "o-", color="black")
    ax.axvline(config.positions, color=style.PALETTE[2], ls=":", label="the learner's grid")
    ax.set_xticks(results["refinements"])
    ax.set_xlabel("grid points per axis")
    ax.set_ylabel("exact optimal steps from the start")
    ax.set_title("the grid's optimum as the grid is refined")
    ax.legend(fontsize=9)
    for ax in axes[2]:
        ax.remove()
    ax = fig.add_subplot(grid[2, :2])
    steps = results["lambda_steps"]
    for k, lam in enumerate(results["lams"]):
        se = steps[k].std(axis=1, ddof=1) / np.sqrt(steps.shape[2])
        ax.errorbar(results["lambda_alphas"] * config.tilings, steps[k].mean(axis=1),
                    yerr=style.Z95 * se, marker="o", capsize=3, color=style.PALETTE[k],
                    label=f"lambda = {lam:g}")
    ax.axhline(optimal, color="black", ls="--", lw=1.0, label="exact optimum")
    ax.set_xlabel(f"alpha x {config.tilings} (number of tilings)")
    ax.set_ylabel(f"steps per episode, first {config.lambda_episodes} episodes")
    ax.set_title(f"Figure 12.10: Sarsa(lambda), replacing traces (mean of "
                 f"{config.lambda_runs} runs, 95% CI)")
    ax.legend(fontsize=8, ncol=2, loc="upper right")
    ax = fig.add_subplot(grid[2, 2:])
    online = results["online_alphas"]
    curves = [("true online Sarsa(lambda)", online, results["online_returns"][0]),
              ("replacing traces", online, results["online_returns"][1]),
              ("replacing, clearing the other actions' traces", online,
               results["online_returns"][2]),
              ("accumulating traces", results["accumulating_alphas"],
               results["accumulating_returns"])]
    for k, (label, alphas, returns) in enumerate(curves):
        se = returns.std(axis=1, ddof=1) / np.sqrt(returns.shape[1])
        ax.errorbar(alphas * config.tilings, returns.mean(axis=1), yerr=style.Z95 * se,
                    marker="o", capsize=3, color=style.PALETTE[(4, 5, 2, 3)[k]], label=label)
    ax.axhline(-optimal, color="black", ls="--", lw=1.0, label="exact optimum")
    ax.set_xlabel(f"alpha x {config.tilings} (number of tilings)")
    ax.set_ylabel(f"return per episode, first {config.online_episodes} episodes")
    ax.set_title(f"Figure 12.11: lambda = {config.online_lam:g} (mean of "
                 f"{config.online_runs} runs, 95% CI)")
    ax.legend(fontsize=9, loc="lower right")
    return [style.save(fig, out_dir / "mountain_car.png")]


def first_episodes_gap(slower: np.ndarray, faster: np.ndarray,
                       episodes: int = 100) -> tuple[float, float]:
    """The difference of the mean steps per episode over the first ``episodes``
    episodes, of ``[runs, episodes]`` each, and its standard error (independent runs)."""
    slow, fast = slower[:, :episodes].mean(axis=1), faster[:, :episodes].mean(axis=1)
    return (slow.mean() - fast.mean(),
            float(np.hypot(standard_error(slow), standard_error(fast))))


def lambda_best(steps: np.ndarray) -> tuple[float, float, int]:
    """The fewest mean steps over step sizes of ``steps [alpha, run]``, its standard error
    over the runs and the step size's index."""
    means = steps.mean(axis=1)
    k = int(np.argmin(means))
    return float(means[k]), standard_error(steps[k]), k


@check("refinements")
def grid_optimum_converges(results: dict) -> list:
    """The grid's optimum converges as the grid is refined: each refinement moves it
    less than the one before (the interpolation error shrinks with the spacing)."""
    steps = results["refined_steps"]
    moves = np.abs(np.diff(steps))
    grids = results["refinements"]
    return [below(f"change from {grids[k + 1]} to {grids[k + 2]} points vs the change before",
                  measured=moves[k + 1], bound=moves[k],
                  failure=f"refining to {grids[k + 2]} points moved the "
                          "optimum more than the refinement before", why="the change before")
            for k in range(len(moves) - 1)]


@check()
def no_run_beats_the_optimum(results: dict) -> list:
    """No policy takes fewer expected steps than the optimum: the mean length of the
    second half of the episodes, over runs, is at least the exact optimal steps less
    Z = 4 standard errors of that mean (the runs are independent); each run's final
    greedy policy, evaluated exactly, takes at least as many (to 1e-9)."""
    optimal = float(results["optimal_steps"])
    measures = []
    learners = [f"alpha {alpha:.4g}" for alpha in results["alphas"]]
    for name, lengths in [*zip(learners, results["episode_lengths"], strict=True),
                          (f"{int(results['n_step'])}-step SARSA", results["n_step_lengths"])]:
        late = lengths[:, lengths.shape[1] // 2:].mean(axis=1)
        se = standard_error(late) if late.size > 1 else 0.0
        measures.append(above(f"{name}: mean steps, second half of the episodes",
                              measured=late.mean(), bound=optimal - Z * se,
                              failure=f"{name}'s episodes are shorter "
                                      "than the optimum allows", why="optimum - 4 standard errors"))
    for name, greedy in zip(learners, results["greedy_steps"], strict=True):
        measures.append(above(f"{name}: fewest exact steps of a final greedy policy",
                              measured=greedy.min(), bound=optimal - 1e-9,
                              failure=f"a final greedy policy of "
                                      f"{name} beats the optimum", why="optimality"))
    return measures


@check("alphas", "episodes", "tilings", "tiles", "epsilon")
def larger_steps_learn_faster(results: dict) -> list:
    """Figure 10.2: over the first 100 episodes the largest step size (0.5/8) takes
    fewer steps per episode than the smallest (0.1/8), by more than Z = 4 standard
    errors of the difference of the two means over independent runs."""
    gap, se = first_episodes_gap(results["episode_lengths"][0], results["episode_lengths"][-1])
    return [above("mean steps, first 100 episodes: smallest alpha - largest", measured=gap,
                  bound=Z * se, failure="the largest step size does not learn faster",
                  why="4 standard errors of the difference")]

@check("alphas", "n_step", "n_step_alpha", "episodes", "tilings", "tiles", "epsilon")
def n_step_is_no_slower(results: dict) -> list:
    """Figure 10.3: 8-step SARSA (alpha 0.3/8) learns faster than one-step SARSA at its
    best step size (0.5/8). At 10 runs its lead over the first 50 episodes is 17.6
    steps per episode with a standard error of 7.5, short of Z = 4 standard errors, so
    the check holds the claim the runs resolve: n-step SARSA is not slower, its mean
    steps per episode over the first 50 episodes at most Z standard errors above
    one-step SARSA's (a broken n-step return, which learns from wrong targets, fails
    it)."""
    gap, se = first_episodes_gap(results["episode_lengths"][-1], results["n_step_lengths"], 50)
    return [above("mean steps, first 50 episodes: one-step - n-step", measured=gap, bound=-Z * se,
                  failure="n-step SARSA learns slower than one-step SARSA",
                  why="-4 standard errors of the difference")]


#: Figure 12.11's learners at ``online_alphas``, in the order of ``online_returns``.
ONLINE_LEARNERS = ("true online Sarsa(lambda)", "Sarsa(lambda), replacing",
                   "Sarsa(lambda), replacing and clearing")


def trace_settings(results: dict):
    """``(name, alphas, steps [alpha, run])`` of every Sarsa(lambda) curve of Figures 12.10
    and 12.11, in steps per episode (a return of -1 per step is minus the steps)."""
    for lam, steps in zip(results["lams"], results["lambda_steps"], strict=True):
        yield f"Sarsa(lambda = {lam:g})", results["lambda_alphas"], steps
    for name, returns in zip(ONLINE_LEARNERS, results["online_returns"], strict=True):
        yield name, results["online_alphas"], -returns
    yield ("Sarsa(lambda), accumulating", results["accumulating_alphas"],
           -results["accumulating_returns"])


@check()
def sarsa_lambda_beats_no_optimum(results: dict) -> list:
    """No Sarsa(lambda) setting takes fewer steps per episode than the optimum: each
    setting's mean over runs of the first episodes' mean steps (Figures 12.10 and 12.11)
    is at least the grid's exact optimal steps less Z = 4 standard errors of that mean
    (independent runs)."""
    optimal = float(results["optimal_steps"])
    measures = []
    for learner, alphas, steps in trace_settings(results):
        for alpha, per_run in zip(alphas, steps, strict=True):
            se = standard_error(per_run) if per_run.size > 1 else 0.0
            name = f"{learner}, alpha {alpha:.4g}"
            measures.append(above(f"{name}: mean steps per episode", measured=per_run.mean(),
                                  bound=optimal - Z * se,
                                  failure=f"{name}'s episodes are shorter than the "
                                          "optimum allows", why="optimum - 4 standard errors"))
    return measures


@check("lams", "lambda_alphas", "lambda_episodes", "tilings", "tiles", "epsilon")
def some_lambda_beats_lambda_0(results: dict) -> list:
    """Figure 12.10: Sarsa(lambda) with some lambda > 0 learns faster than lambda = 0 at
    its best step size: some setting (lambda > 0, alpha) takes fewer mean steps per
    episode over the first 50 episodes than lambda = 0 at its best alpha, by more than Z
    = 4 standard errors of the difference (independent runs). Each of the m settings
    with lambda > 0 is compared as it was measured, not selected by its mean (the
    minimum of noisy means favours the noisiest setting); so if no setting beat lambda
    = 0, each comparison would pass with probability below 3.2e-5 (a normal tail at 4)
    and the largest with probability below m times that (the union bound: 7.6e-4 for
    the 24 settings). Lambda = 0's best is the minimum of its means, biased low, which
    only makes the comparison harder to pass. At 8 runs the largest lead is 6.3
    standard errors (lambda = 0.92 at alpha 0.6/8, 34.5 steps ahead of lambda = 0 at
    1.4/8, with a standard error of 5.5)."""
    lams, steps = results["lams"], results["lambda_steps"]
    zero_mean, zero_se, _ = lambda_best(steps[list(lams).index(0.0)])
    leads = []
    for lam, per_lam in zip(lams, steps, strict=True):
        for alpha, per_run in zip(results["lambda_alphas"], per_lam, strict=True):
            if lam > 0.0:
                se = np.hypot(zero_se, standard_error(per_run))
                leads.append(((zero_mean - per_run.mean()) / se, zero_mean - per_run.mean(),
                              se, lam, alpha))
    z, gap, se, lam, alpha = max(leads)
    return [above(f"mean steps, first episodes: lambda = 0 (best alpha) - lambda = {lam:g} "
                  f"at alpha {alpha:.4g} (the largest lead in standard errors of "
                  f"{len(leads)})", measured=gap, bound=Z * se,
                  failure="no lambda > 0 beats lambda = 0 at its "
                          "best step size", why="4 standard errors of the difference")]


def online_best(results: dict, name: str) -> tuple[float, float, int]:
    """The best mean return per episode over Figure 12.11's step sizes of learner
    ``name`` (one of :data:`ONLINE_LEARNERS`, or ``"accumulating"``), as steps per
    episode: :func:`lambda_best` of minus the returns."""
    returns = (results["accumulating_returns"] if name == "accumulating"
               else results["online_returns"][ONLINE_LEARNERS.index(name)])
    return lambda_best(-returns)


@check("online_lam", "online_alphas", "accumulating_alphas", "online_episodes", "tilings",
       "tiles", "epsilon")
def accumulating_traces_learn_slowest(results: dict) -> list:
    """Figure 12.11: true online Sarsa(lambda), and Sarsa(lambda) with replacing traces
    with or without clearing the other actions' traces, each learn faster than
    Sarsa(lambda) with accumulating traces, each at its best step size: its best mean
    return per episode over the first 20 episodes exceeds theirs by more than Z = 4
    standard errors of the difference (independent runs; selecting each best from the
    runs that measure it biases both sides low, the side with more step sizes by at most
    about 1 standard error, the expected minimum of 4 equal normal means). At 16 runs
    the leads are 86, 75 and 66 with standard errors of 12, 13 and 12 (true online and
    replacing at alpha 1.0/8, clearing at 1.5/8, against accumulating at 0.3/8): 7.0,
    5.8 and 5.4 standard errors."""
    accumulating = online_best(results, "accumulating")
    measures = []
    for name in ONLINE_LEARNERS:
        best = online_best(results, name)
        measures.append(above(f"mean return, first episodes: {name} - accumulating (best "
                              "alphas)", measured=accumulating[0] - best[0],
                              bound=Z * np.hypot(best[1], accumulating[1]),
                              failure=f"{name} does not beat accumulating traces",
                              why="4 standard errors of the difference"))
    return measures


@check("online_lam", "online_alphas", "online_episodes", "tilings", "tiles", "epsilon")
def true_online_is_no_worse_than_replacing(results: dict) -> list:
    """Figure 12.11: the book's true online Sarsa(lambda) learns faster than Sarsa(lambda)
    with replacing traces, with or without clearing. Here its lead is small against its
    noise: at 16 runs 11 steps per episode ahead of replacing with a standard error of
    11, 20 ahead of clearing with 10 (true online at alpha 1.0/8, the others at 1.0/8 and
    1.5/8), and 4 runs showed a lead of 5.9 standard errors that 8 did not keep (four
    runs estimate their own spread poorly). So the check holds what the runs resolve: at
    its best step size true online Sarsa(lambda)'s mean return is no worse than either's
    at theirs, above it less Z = 4 standard errors of the difference."""
    online = online_best(results, ONLINE_LEARNERS[0])
    measures = []
    for name in ONLINE_LEARNERS[1:]:
        other = online_best(results, name)
        measures.append(above(f"mean return, first episodes: true online - {name} (best "
                              "alphas)", measured=other[0] - online[0],
                              bound=-Z * np.hypot(online[1], other[1]),
                              failure=f"true online Sarsa(lambda) learns slower than {name}",
                              why="-4 standard errors of the difference"))
    return measures


@check("online_lam", "online_alphas", "online_episodes", "tilings", "tiles", "epsilon")
def clearing_is_like_replacing(results: dict) -> list:
    """Figure 12.11: clearing the traces of the other actions changes Sarsa(lambda) with
    replacing traces little (the book's two curves lie together): the difference of
    their best mean returns per episode is within Z = 4 standard errors of 0 (at 16
    runs clearing is 8.9 behind, with a standard error of 10.7). The two differ only where
    the trace still holds features of the state just left under another action: a
    state near it, recently left by another action."""
    replacing = online_best(results, ONLINE_LEARNERS[1])
    clearing = online_best(results, ONLINE_LEARNERS[2])
    se = np.hypot(replacing[1], clearing[1])
    return [within("mean return, first episodes: clearing - replacing (best alphas)",
                   measured=replacing[0] - clearing[0], expected=0.0, tolerance=Z * se,
                   failure="clearing the other actions' traces changes the replacing traces' "
                           "learning by more than the runs' noise", why="4 standard errors of the "
                                                                        "difference")]
