"""Blackjack (Examples 5.1, 5.3 and 5.4: Figures 5.1-5.3) and Example 5.5's one-state
MDP (Figure 5.4), each against the exact values."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from matplotlib.colors import ListedColormap

from tabular import (
    TabularMDP,
    mc_prediction,
    off_policy_mc_prediction,
    policy_evaluation,
    value_iteration,
)
from tabular.envs.blackjack import HIT, N_HANDS, NATURAL, STICK, blackjack_model, state_id
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, within
from tabular.experiments.harness.settings import Settings

#: Figure 5.2's optimal policy: the smallest player sum that sticks, per dealer card A-10.
BOOK_STICK_FROM = {"usable ace": (19, 18, 18, 18, 18, 18, 18, 18, 19, 19),
                   "no usable ace": (17, 13, 13, 12, 12, 12, 17, 17, 17, 17)}
#: Example 5.4's state and the book's estimate of its value (10^8 episodes).
FIGURE_5_3_STATE, BOOK_VALUE = (13, True, 2), -0.27726


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Examples 5.1 and 5.3-5.5, Figures 5.1-5.4"


@dataclass(frozen=True)
class Config(Settings):
    """The book's blackjack (infinite deck, dealer stands on 17, sab rules)."""

    prediction_episodes: tuple[int, ...] = (10_000, 500_000)
    """Figure 5.1: episodes of first-visit MC prediction of the stick-on-20 policy."""
    sampling_episodes: int = 10_000
    """Figure 5.3: episodes per run of off-policy prediction."""
    runs: int = 100
    """Figure 5.3: runs averaged (the book's 100)."""
    infinite_variance_episodes: int = 100_000
    """Figure 5.4: episodes of each of its ten runs."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"prediction_episodes": (10_000, 100_000), "sampling_episodes": 1000, "runs": 50,
             "infinite_variance_episodes": 10_000}


def stick_on_20(n_states: int) -> np.ndarray:
    """Example 5.1's policy: stick on 20 or 21 (and on a natural), else hit."""
    policy = np.full(n_states, HIT)
    policy[[state_id(total, usable, d) for usable in (False, True) for total in (20, 21)
            for d in range(1, 11)]] = STICK
    policy[NATURAL:] = STICK
    return policy


def one_state() -> TabularMDP:
    """Example 5.5 (Figure 5.4's inset): left (0) comes back with probability 0.9 and
    reward 0, or ends with probability 0.1 and reward +1; right (1) ends with 0."""
    return TabularMDP(np.zeros((1, 2, 2), dtype=int), [[[0.9, 0.1], [1.0, 0.0]]],
                      [[[0.0, 1.0], [0.0, 0.0]]], [[[False, True], [True, False]]], [1.0])


def hands(values: np.ndarray) -> np.ndarray:
    """``[usable ace, player sum 12-21, dealer card A-10]`` of the 200 hand states."""
    return values[:N_HANDS].reshape(2, 10, 10)


def run(config: Config, executor) -> dict:
    mdp = blackjack_model()
    target = stick_on_20(mdp.n_states)
    exact_v = policy_evaluation(mdp, target, 1.0).V
    estimates = [mc_prediction(mdp, target, episodes=n, seed=config.seed).V
                 for n in config.prediction_episodes]
    best = value_iteration(mdp, 1.0)
    s = state_id(*FIGURE_5_3_STATE)
    start_there = replace(mdp, start=np.eye(mdp.n_states)[s])
    behaviour = np.full((mdp.n_states, mdp.n_actions), 0.5)
    checkpoints = np.unique(np.geomspace(1, config.sampling_episodes, 25).astype(int))
    mse = {}
    for sampling in ("ordinary", "weighted"):  # a run's stream does not depend on its length
        mse[sampling] = np.array([
            ((off_policy_mc_prediction(start_there, target, behaviour, episodes=int(n),
                                       importance_sampling=sampling, runs=config.runs,
                                       seed=config.seed).V[:, s] - exact_v[s]) ** 2).mean()
            for n in checkpoints])
    ordinary = off_policy_mc_prediction(one_state(), np.array([0]), np.array([[0.5, 0.5]]),
                                        importance_sampling="ordinary",
                                        episodes=config.infinite_variance_episodes, runs=10,
                                        seed=config.seed, history=True).V_history[:, :, 0]
    return {"one_state_ordinary": ordinary, "exact_v": hands(exact_v),
            "estimates": np.array([hands(v) for v in estimates]),
            "prediction_episodes": np.array(config.prediction_episodes),
            "v_star": hands(best.V), "pi_star": hands(best.policy),
            "state_value": np.array(exact_v[s]), "checkpoints": checkpoints,
            "mse_ordinary": mse["ordinary"], "mse_weighted": mse["weighted"]}


#: The policy panels' two colours: stick (0) blue, hit (1) red.
STICK_HIT = ListedColormap(["#2166AC", "#B2182B"])


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(4, 2, width=3.5, height=3.3,
                             title="Blackjack: Figures 5.1 (MC prediction), 5.2 (optimal "
                                   "policy and v*), 5.3 (ordinary vs weighted IS)")
    for row, usable in enumerate((1, 0)):
        label = "usable ace" if usable else "no usable ace"
        for col, (name, grid) in enumerate([
                (f"{results['prediction_episodes'][-1]:,} episodes",
                 results["estimates"][-1][usable]),
                ("exact v_pi (stick on 20)", results["exact_v"][usable]),
                ("v*", results["v_star"][usable]),
                ("pi* (1 = hit)", results["pi_star"][usable].astype(float))]):
            ax = axes[row, col]
            image = style.heatmap(ax, grid, annotate=False, vmin=-1 if col < 3 else 0, vmax=1,
                                  cmap="viridis" if col < 3 else STICK_HIT,
                                  colorbar_label="value" if col < 3 else None)
            if col == 3:  # the policy: a two-entry key instead of a scale
                key = fig.colorbar(image, ax=ax, shrink=0.8, ticks=[0.25, 0.75])
                key.ax.set_yticklabels(["stick", "hit"])
            ax.set_title(f"{name}, {label}", fontsize=9)
            ax.set_xticks(range(10), ["A", *map(str, range(2, 11))], fontsize=7)
            ax.set_yticks(range(10), [str(v) for v in range(12, 22)], fontsize=7)
            ax.invert_yaxis()  # player sum grows upward, as in the book's figures
            ax.set_xlabel("dealer showing")
            ax.set_ylabel("player sum")
    fig2, axes2 = style.figure(1, 1, width=5.4, height=3.8,
                               title=f"Figure 5.3: off-policy estimates of one state "
                                     f"({config.runs} runs)")
    ax = axes2[0, 0]
    for name, color in (("ordinary", style.PALETTE[1]), ("weighted", style.PALETTE[2])):
        ax.plot(results["checkpoints"], results[f"mse_{name}"], label=f"{name} importance "
                "sampling", color=color)
    ax.set_xscale("log")
    ax.set_ylim(0, 5)
    ax.set_xlabel("episodes (log scale)")
    ax.set_ylabel(f"mean square error (over {config.runs} runs)")
    ax.legend()
    fig3, axes3 = style.figure(1, 1, width=5.4, height=3.8,
                               title="Figure 5.4: ordinary importance sampling, 10 runs "
                                     "(v_pi = 1)")
    ax = axes3[0, 0]
    episodes = np.arange(1, results["one_state_ordinary"].shape[1] + 1)
    for i, run in enumerate(results["one_state_ordinary"]):
        ax.plot(episodes, run, color=style.PALETTE[i % len(style.PALETTE)], lw=0.8)
    ax.axhline(1.0, color="black", linestyle=":")
    ax.set_xscale("log")
    ax.set_ylim(0, 3)
    ax.set_xlabel("episodes (log scale)")
    ax.set_ylabel("Monte Carlo estimate of v_pi(s)")
    return [style.save(fig, out_dir / "blackjack.png"),
            style.save(fig2, out_dir / "blackjack_importance_sampling.png"),
            style.save(fig3, out_dir / "one_state_infinite_variance.png")]


@check()
def book_policy(results: dict) -> list[Measure]:
    """Figure 5.2's optimal policy, exactly (value iteration: no setting changes it)."""
    measures = []
    for usable, key in ((1, "usable ace"), (0, "no usable ace")):
        policy = results["pi_star"][usable]  # [sum 12-21, dealer]
        stick_from = [12 + int(np.argmax(policy[:, d] == STICK)) for d in range(10)]
        measures.append(fact(f"pi* with {key}: smallest sum it sticks on, dealer A-10",
                             passed=tuple(stick_from) == BOOK_STICK_FROM[key],
                             expected=str(list(BOOK_STICK_FROM[key])), measured=str(stick_from),
                             failure=f"pi* with {key} sticks from {stick_from}, the book's "
                                     f"{list(BOOK_STICK_FROM[key])}"))
    return measures


@check()
def example_5_4_value(results: dict) -> list[Measure]:
    """Example 5.4's state is worth the book's estimate to its sampling error (the
    exact linear solve: no setting changes it)."""
    value = float(results["state_value"])
    return [within("value of Example 5.4's state", measured=value, expected=BOOK_VALUE,
                   tolerance=2e-4 - 1e-12,
                   failure=f"Example 5.4's state is worth {value:.6f}, the book's {BOOK_VALUE} "
                           "(+- 1e-4)", why="the book's sampling error")]


@check("prediction_episodes")
def prediction_converges(results: dict) -> list[Measure]:
    """Figure 5.1: first-visit MC prediction after its longest run is near the exact
    values."""
    error = np.abs(results["estimates"][-1] - results["exact_v"]).mean()
    # rare hands (a usable ace and a low sum) are seen rarely
    return [below(f"MC prediction after {results['prediction_episodes'][-1]:,} episodes: "
                  "mean |v - exact|", measured=error, bound=0.05 - 1e-12,
                  failure=f"MC prediction after {results['prediction_episodes'][-1]:,} episodes is "
                          f"{error:.3f} from the exact values on average",
                  why="rare hands are seen rarely")]


@check("sampling_episodes")
def weighted_beats_ordinary(results: dict) -> list[Measure]:
    """Figure 5.3: weighted importance sampling starts far below ordinary, and both end
    near the exact value."""
    ordinary, weighted = results["mse_ordinary"], results["mse_weighted"]
    failure = (f"weighted IS's first MSE {weighted[0]:.3f} is not far below ordinary's "
               f"{ordinary[0]:.3f}, or they end at {ordinary[-1]:.3f}, {weighted[-1]:.3f}")
    return [fact("first MSE: ordinary / weighted importance sampling",
                 passed=ordinary[0] > 10 * weighted[0], expected="> 10",
                 measured=f"{ordinary[0] / weighted[0]:.3g}", failure=failure,
                 tolerance="far below"),
            below("final MSE, ordinary importance sampling", measured=ordinary[-1],
                  bound=0.05 - 1e-12, failure=failure, why="near the exact value"),
            below("final MSE, weighted importance sampling", measured=weighted[-1],
                  bound=0.05 - 1e-12, failure=failure, why="near the exact value")]


@check("infinite_variance_episodes")
def infinite_variance(results: dict) -> list[Measure]:
    """Figure 5.4: ordinary importance sampling on the one-state MDP never settles."""
    late = results["one_state_ordinary"][:, -1]
    return [fact("ordinary IS on Figure 5.4's state: final estimates' median, spread",
                 passed=np.median(late) < 0.95 or late.std() > 0.2,
                 expected="median < 0.95 or spread > 0.2 (unsettled)",
                 measured=f"{np.median(late):.3f}, {late.std():.3f}",
                 failure=f"ordinary IS on Figure 5.4's state ends at {np.round(late, 2)}: settled, "
                         "not the unending spread of infinite variance",
                 tolerance="infinite variance")]
