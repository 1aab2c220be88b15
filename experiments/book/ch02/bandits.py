"""The 10-armed testbed: epsilon-greedy, optimism, UCB, gradient bandit (S&B Figs. 2.2-2.6).

Figure 2.2 (epsilon-greedy), 2.3 (optimistic initial values), 2.4 (UCB), 2.5 (the
gradient bandit with and without baseline) and 2.6 (the parameter study).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact, inside
from tabular.experiments.harness.settings import Settings
from tabular.learn.bandits import BanditTestbed, epsilon_greedy_bandit, gradient_bandit, ucb_bandit

#: Figure 2.6's methods and their parameter (the book's grid: powers of 2).
STUDY = {
    "epsilon-greedy": ("epsilon", tuple(2.0**i for i in range(-7, -1))),
    "gradient bandit": ("alpha", tuple(2.0**i for i in range(-5, 2))),
    "UCB": ("c", tuple(2.0**i for i in range(-4, 3))),
    "greedy, optimistic (alpha = 0.1)": ("initial", tuple(2.0**i for i in range(-2, 3))),
}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), sections 2.3-2.7, Figures 2.2-2.6 (the 10-armed testbed)"


@dataclass(frozen=True)
class Config(Settings):
    """Section 2.3: 10 arms, q*(a) ~ N(0, 1), rewards N(q*(a), 1), 1000 steps."""

    runs: int = 2000
    """Independent testbeds averaged (the book's 2000)."""
    steps: int = 1000
    """Pulls per run."""
    seed: int = 0
    """Seed of the runs' random streams (every curve uses the same seed: the same testbeds)."""

    QUICK = {"runs": 300}


def study_job(method: str, value: float, runs: int, steps: int, seed: int) -> dict:
    """Figure 2.6: the average reward over all ``steps`` of one method and parameter."""
    name = STUDY[method][0]
    if method == "epsilon-greedy":
        res = epsilon_greedy_bandit(epsilon=value, steps=steps, runs=runs, seed=seed)
    elif method == "gradient bandit":
        res = gradient_bandit(alpha=value, steps=steps, runs=runs, seed=seed)
    elif method == "UCB":
        res = ucb_bandit(c=value, steps=steps, runs=runs, seed=seed)
    else:
        res = epsilon_greedy_bandit(epsilon=0.0, alpha=0.1, initial=value, steps=steps,
                                    runs=runs, seed=seed)
    return {"mean": np.array(res.rewards.mean()), "parameter": np.array(name)}


def run(config: Config, executor) -> dict:
    common = {"steps": config.steps, "runs": config.runs, "seed": config.seed}
    curves = {
        "greedy": epsilon_greedy_bandit(epsilon=0.0, **common),
        "epsilon = 0.01": epsilon_greedy_bandit(epsilon=0.01, **common),
        "epsilon = 0.1": epsilon_greedy_bandit(epsilon=0.1, **common),
        "optimistic, greedy, Q1 = 5, alpha = 0.1": epsilon_greedy_bandit(
            epsilon=0.0, alpha=0.1, initial=5.0, **common),
        "realistic, epsilon = 0.1, Q1 = 0, alpha = 0.1": epsilon_greedy_bandit(
            epsilon=0.1, alpha=0.1, **common),
        "UCB, c = 2": ucb_bandit(c=2.0, **common),
    }
    shifted = BanditTestbed(mean=4.0)  # Figure 2.5: q*(a) ~ N(4, 1)
    for alpha in (0.1, 0.4):
        for baseline in (True, False):
            curves[f"gradient, alpha = {alpha}, {'with' if baseline else 'without'} baseline"] = (
                gradient_bandit(shifted, alpha=alpha, baseline=baseline, **common))
    jobs = [{"method": method, "value": value, **common}
            for method, (_, values) in STUDY.items() for value in values]
    study = executor.map(study_job, jobs, desc="parameter study")
    return {
        "curves": np.array(list(curves)),
        "reward": np.array([r.rewards.mean(axis=0) for r in curves.values()]),
        "optimal": np.array([r.optimal.mean(axis=0) for r in curves.values()]),
        "study_method": np.array([j["method"] for j in jobs]),
        "study_value": np.array([j["value"] for j in jobs]),
        "study_reward": np.array([float(s["mean"]) for s in study]),
    }


def _curves(ax, results, names, field, ylabel):
    steps = np.arange(1, results[field].shape[1] + 1)
    for i, name in enumerate(names):
        row = list(results["curves"]).index(name)
        ax.plot(steps, results[field][row], label=name, color=style.PALETTE[i + 1], lw=1)
    ax.set_xlabel("steps")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=9)


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(3, 2, width=4.6, height=3.4,
                             title=f"The 10-armed testbed ({config.runs} runs, "
                                   f"{config.steps} steps): Figures 2.2-2.6")
    greedy = ["greedy", "epsilon = 0.01", "epsilon = 0.1"]
    _curves(axes[0, 0], results, greedy, "reward", "average reward")
    axes[0, 0].set_title("Figure 2.2")
    _curves(axes[0, 1], results, greedy, "optimal", "% optimal action")
    axes[0, 1].set_title("Figure 2.2")
    _curves(axes[0, 2], results, ["optimistic, greedy, Q1 = 5, alpha = 0.1",
                                  "realistic, epsilon = 0.1, Q1 = 0, alpha = 0.1"],
            "optimal", "% optimal action")
    axes[0, 2].set_title("Figure 2.3: optimistic initial values")
    _curves(axes[1, 0], results, ["UCB, c = 2", "epsilon = 0.1"], "reward", "average reward")
    axes[1, 0].set_title("Figure 2.4: UCB")
    _curves(axes[1, 1], results, [n for n in results["curves"] if n.startswith("gradient")],
            "optimal", "% optimal action")
    axes[1, 1].set_title("Figure 2.5: gradient bandit, q* ~ N(4, 1)")
    ax = axes[1, 2]
    for i, method in enumerate(STUDY):
        rows = results["study_method"] == method
        ax.plot(results["study_value"][rows], results["study_reward"][rows], "o-",
                label=f"{method} ({STUDY[method][0]})", color=style.PALETTE[i + 1],
                markersize=3)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("epsilon, alpha, c, Q1")
    ax.set_ylabel(f"average reward over the first {config.steps} steps")
    ax.set_title("Figure 2.6: parameter study")
    ax.legend(fontsize=9)
    return [style.save(fig, out_dir / "bandits.png")]


def table(results: dict):
    """Figure 2.6: the best parameter of each method and its average reward."""
    rows = []
    for method, (name, _) in STUDY.items():
        mask = results["study_method"] == method
        best = int(np.argmax(results["study_reward"][mask]))
        rows.append([method, name, float(results["study_value"][mask][best]),
                     round(float(results["study_reward"][mask][best]), 3)])
    return ["method", "parameter", "best value", "average reward"], rows


@check("steps")
def book_figures(results: dict) -> list[Measure]:
    """The book's numbers at the end of 1000 steps, read from its figures (2000 runs;
    bands for fewer runs), and its orderings of the methods."""
    late = {name: (results["reward"][i, -100:].mean(), results["optimal"][i, -100:].mean())
            for i, name in enumerate(results["curves"])}

    def want(name, low, high, what=0):
        value = late[name][what]
        label = "average reward" if what == 0 else "% optimal"
        return inside(f"Figure 2.2, {name}: {label}, last 100 steps", measured=value, low=low,
                      high=high,
                      failure=f"{name}: {label} at the end {value:.3f} is outside the book's "
                              f"({low}, {high})", why="read from the book's figure")

    measures = [want("greedy", 0.9, 1.15), want("greedy", 0.28, 0.45, what=1),
                want("epsilon = 0.1", 1.28, 1.47), want("epsilon = 0.1", 0.72, 0.88, what=1)]
    ends = [late[name][0] for name in ("greedy", "epsilon = 0.01", "epsilon = 0.1")]
    optimistic = late["optimistic, greedy, Q1 = 5, alpha = 0.1"][1]
    realistic = late["realistic, epsilon = 0.1, Q1 = 0, alpha = 0.1"][1]
    gradient = {name: late[name][1] for name in late if name.startswith("gradient")}
    order = sorted(gradient, key=gradient.get, reverse=True)
    best = {m: results["study_reward"][results["study_method"] == m].max() for m in STUDY}
    measures += [
        fact("Figure 2.2: final reward, greedy < epsilon 0.01 < epsilon 0.1",
             passed=ends[0] < ends[1] < ends[2], expected="in that order",
             measured=", ".join(f"{v:.3f}" for v in ends),
             failure="Figure 2.2: epsilon = 0.1 should end above 0.01, and 0.01 above greedy",
             tolerance="ordering"),
        fact("Figure 2.3: % optimal, optimistic greedy against realistic epsilon-greedy",
             passed=optimistic > realistic, expected="optimistic above",
             measured=f"{optimistic:.3f} vs {realistic:.3f}",
             failure="Figure 2.3: optimistic greedy should end above realistic epsilon-greedy",
             tolerance="ordering"),
        fact("Figure 2.4: final reward, UCB against epsilon-greedy",
             passed=late["UCB, c = 2"][0] > late["epsilon = 0.1"][0], expected="UCB above",
             measured=f"{late['UCB, c = 2'][0]:.3f} vs {late['epsilon = 0.1'][0]:.3f}",
             failure="Figure 2.4: UCB should end above epsilon-greedy",
             tolerance="ordering"),
        fact("Figure 2.5: gradient bandits by % optimal",
             passed=order[0].startswith("gradient, alpha = 0.1, with")
             and all("without" in name for name in order[2:]),
             expected="alpha = 0.1 with baseline first, both without baseline last",
             measured="; ".join(order),
             failure=f"Figure 2.5: the baseline should matter most, alpha = 0.1 best; got {order}",
             tolerance="ordering"),
        fact("Figure 2.6: best method of the parameter study",
             passed=max(best, key=best.get) == "UCB", expected="UCB",
             measured=max(best, key=best.get),
             failure=f"Figure 2.6: UCB should be best, got {best}"),
    ]
    for method in STUDY:
        rewards = results["study_reward"][results["study_method"] == method]
        measures.append(fact(f"Figure 2.6: {method}'s best parameter",
                             passed=rewards.argmax() not in (0, len(rewards) - 1)
            or method.startswith("greedy"), expected="inside the range (greedy: anywhere)",
                             measured=f"index {int(rewards.argmax())} of {len(rewards)}",
                             failure=f"Figure 2.6: {method}'s curve has no interior maximum",
                             tolerance="shape"))
    return measures
