"""Figure 8.8: trajectory sampling against uniform expected updates on random branching tasks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact
from tabular.experiments.harness.settings import Settings
from tabular.plan.expected_updates import (
    branching_task,
    trajectory_sampling,
    uniform_expected_updates,
)

METHODS = ("on_policy", "uniform")
LABELS = {"on_policy": "on-policy (trajectory sampling)", "uniform": "uniform"}
#: Tasks per executor job.
BLOCK = 25


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), section 8.6, Figure 8.8"


@dataclass(frozen=True)
class Config(Settings):
    """Section 8.6: random tasks (:func:`tabular.plan.expected_updates.branching_task`) with 2
    actions per state, b random next states per pair, a 0.1 chance of ending on every
    transition and N(0, 1) expected rewards, from start state 0, undiscounted; Q = 0 at
    first; on-policy trajectories are epsilon-greedy. After every few expected updates,
    the greedy policy's value of the start state is computed from the model."""

    states: int = 1000
    """States of the upper panel's tasks (the book's)."""
    branchings: tuple[int, ...] = (1, 3, 10)
    """Branching factors b of the upper panel (the book's)."""
    updates: int = 20_000
    """Expected updates per task in the upper panel (the book's x range: 10 sweeps)."""
    evaluate_every: int = 500
    """Expected updates between two evaluations in the upper panel."""
    tasks: int = 100
    """Tasks averaged per curve in the upper panel (the book's 200 take twice as long)."""
    large_states: int = 10_000
    """States of the lower panel's tasks (the book's)."""
    large_branchings: tuple[int, ...] = (1,)
    """Branching factors of the lower panel (the book's)."""
    large_updates: int = 200_000
    """Expected updates per task in the lower panel (the book's x range: 10 sweeps)."""
    large_evaluate_every: int = 5_000
    """Expected updates between two evaluations in the lower panel."""
    large_tasks: int = 100
    """Tasks averaged per curve in the lower panel."""
    epsilon: float = 0.1
    """Exploration of the simulated trajectories (the book's)."""
    seed: int = 0
    """Seed of the tasks and of the trajectories (each task its own streams)."""

    QUICK = {"tasks": 12, "updates": 10_000, "large_tasks": 20, "large_updates": 100_000}

    def panels(self) -> list[tuple[int, tuple, int, int, int]]:
        """``(states, branchings, updates, evaluate_every, tasks)`` of each panel."""
        return [(self.states, self.branchings, self.updates, self.evaluate_every, self.tasks),
                (self.large_states, self.large_branchings, self.large_updates,
                 self.large_evaluate_every, self.large_tasks)]


def task_seeds(seed: int, n_states: int, branching: int, task: int) -> tuple[int, int]:
    """The seeds of one task's model and of its trajectories."""
    entropy = np.random.SeedSequence([seed, n_states, branching, task])
    model_seed, run_seed = entropy.generate_state(2, dtype=np.uint32)
    return int(model_seed), int(run_seed)


def start_values(n_states: int, branching: int, first_task: int, tasks: int, updates: int,
                 evaluate_every: int, epsilon: float, seed: int) -> dict:
    """The greedy policy's value of the start state at each evaluation, ``[tasks, E]`` for
    each method, on tasks ``first_task ..`` (an executor job)."""
    values = {method: [] for method in METHODS}
    for task in range(first_task, first_task + tasks):
        model_seed, run_seed = task_seeds(seed, n_states, branching, task)
        mdp = branching_task(n_states, branching, seed=model_seed)
        on_policy = trajectory_sampling(mdp, updates=updates, epsilon=epsilon,
                                        evaluate_every=evaluate_every, seed=run_seed)
        uniform = uniform_expected_updates(mdp, updates=updates, evaluate_every=evaluate_every)
        values["on_policy"].append(on_policy.start_values)
        values["uniform"].append(uniform.start_values)
    return {"updates": uniform.updates, **{m: np.array(v) for m, v in values.items()}}


def run(config: Config, executor) -> dict:
    curves = [(n, b, updates, every, tasks) for n, branchings, updates, every, tasks
              in config.panels() for b in branchings]
    jobs = [{"n_states": n, "branching": b, "first_task": first,
             "tasks": min(BLOCK, tasks - first), "updates": updates, "evaluate_every": every,
             "epsilon": config.epsilon, "seed": config.seed}
            for n, b, updates, every, tasks in curves for first in range(0, tasks, BLOCK)]
    blocks = iter(executor.map(start_values, jobs, desc="task blocks"))
    results = {"curve_states": np.array([c[0] for c in curves]),
               "curve_branching": np.array([c[1] for c in curves])}
    for c, (_, _, _, _, tasks) in enumerate(curves):
        mine = [next(blocks) for _ in range(0, tasks, BLOCK)]
        results[f"updates_{c}"] = mine[0]["updates"]
        for method in METHODS:
            results[f"{method}_{c}"] = np.concatenate([m[method] for m in mine])
    return results


# --------------------------------------------------------------------- reading the numbers


def lead(results: dict, c: int):
    """Trajectory sampling's lead over uniform updates on curve ``c``: the mean over tasks
    of the paired difference at each evaluation, and its standard error."""
    diff = results[f"on_policy_{c}"] - results[f"uniform_{c}"]
    return diff.mean(axis=0), diff.std(axis=0, ddof=1) / np.sqrt(diff.shape[0])


def sweeps(results: dict, c: int) -> np.ndarray:
    """The evaluations' update counts in full sweeps over the ``2 |S|`` pairs."""
    return results[f"updates_{c}"] / (2.0 * results["curve_states"][c])


def head_start(results: dict, c: int, within: float = 2.0) -> float:
    """Trajectory sampling's mean lead over the evaluations of the first ``within``
    sweeps (after the start)."""
    mean, _ = lead(results, c)
    first = (sweeps(results, c) > 0.0) & (sweeps(results, c) <= within)
    return float(mean[first].mean())


def catch_up(results: dict, c: int) -> float:
    """The first evaluation (in sweeps) after the start at which uniform updates are level
    with or ahead of trajectory sampling (``inf``: never within the run)."""
    mean, _ = lead(results, c)
    behind = np.flatnonzero(mean[1:] <= 0.0)
    return float(sweeps(results, c)[behind[0] + 1]) if behind.size else np.inf


def plot(results: dict, out_dir, config: Config) -> list:
    states = results["curve_states"]
    panels = list(dict.fromkeys(states.tolist()))
    fig, axes = style.figure(1, len(panels), width=7.0, height=4.0,
                             title="Figure 8.8: trajectory sampling vs uniform expected "
                                   f"updates (epsilon = {config.epsilon:g})")
    for ax, n in zip(axes[:, 0], panels, strict=True):
        for i, c in enumerate(np.flatnonzero(states == n)):
            b = int(results["curve_branching"][c])
            color = style.PALETTE[i % len(style.PALETTE)]
            x = results[f"updates_{c}"]
            tasks = results[f"uniform_{c}"].shape[0]
            for method, line in (("on_policy", "-"), ("uniform", "--")):
                style.mean_band(ax, x, results[f"{method}_{c}"],
                                f"b = {b}, {LABELS[method]}", color, linestyle=line)
        ax.set_title(f"{n:,} states ({tasks} tasks per curve; band: 95% CI)")
        ax.set_xlabel("computation time, in expected updates")
        ax.set_ylabel("value of start state\nunder greedy policy")
        ax.legend(fontsize=7, loc="center right", bbox_to_anchor=(1.0, 0.58))
    return [style.save(fig, out_dir / "trajectory_sampling.png")]


def table(results: dict):
    """Each curve's lead of trajectory sampling at the first evaluation and over the first
    two sweeps, the catch-up point of uniform updates, and the final values."""
    rows = []
    for c in range(results["curve_states"].shape[0]):
        mean, se = lead(results, c)
        rows.append([int(results["curve_states"][c]), int(results["curve_branching"][c]),
                     int(results[f"updates_{c}"][1]), round(float(mean[1]), 3),
                     round(float(se[1]), 3), round(head_start(results, c), 3),
                     catch_up(results, c),
                     round(float(results[f"on_policy_{c}"][:, -1].mean()), 3),
                     round(float(results[f"uniform_{c}"][:, -1].mean()), 3)])
    return (["states", "b", "first evaluation (updates)", "on-policy lead there",
             "standard error", "mean lead over 2 sweeps", "uniform level after (sweeps)",
             "on-policy value at the end", "uniform value at the end"], rows)


@check("states", "branchings", "updates", "evaluate_every", "large_states",
       "large_branchings", "large_updates", "large_evaluate_every", "epsilon")
def book_findings(results: dict) -> list[Measure]:
    """Section 8.6's findings: in every case sampling the on-policy distribution plans
    faster at first and slower in the long run; its head start lasts longer at smaller b,
    and is larger and longer-lasting with more states."""
    measures = []
    states, branching = results["curve_states"], results["curve_branching"]
    for c in range(states.shape[0]):
        name = f"{states[c]:,} states, b = {branching[c]}"
        mean, se = lead(results, c)
        early, late = results[f"updates_{c}"][1], results[f"updates_{c}"][-1]
        measures += [
            # paired differences over tasks: 3 standard errors is not luck
            fact(f"{name}: trajectory sampling's lead after {early:,} updates",
                 passed=mean[1] > 3.0 * se[1], expected=f"> 3 standard errors ({3.0 * se[1]:.3f})",
                 measured=f"{mean[1]:.3f}",
                 failure=f"{name}: after {early:,} updates trajectory "
                         f"sampling leads by {mean[1]:.3f} (standard error {se[1]:.3f}); "
                         "the book's on-policy planning is faster initially",
                 tolerance="3 standard errors"),
            fact(f"{name}: trajectory sampling's lead after {late:,} updates",
                 passed=mean[-1] < 0.0, expected="< 0 (uniform ahead)", measured=f"{mean[-1]:.3f}",
                 failure=f"{name}: after {late:,} updates trajectory "
                         f"sampling still leads by {mean[-1]:.3f}; the book's uniform "
                         "updates do better in the long run", tolerance="sign"),
        ]
    for n in np.unique(states):
        mine = np.flatnonzero(states == n)
        order = mine[np.argsort(branching[mine])]
        level = [catch_up(results, c) for c in order]
        measures.append(fact(
            f"{n:,} states: sweeps until uniform draws level, b = "
            f"{branching[order].tolist()}",
            passed=not any(later > sooner for later, sooner in zip(level[1:], level, strict=False))
            and not (len(level) > 1 and not level[0] > level[-1]),
            expected="falling with b", measured=str(level),
            failure=f"{n:,} states: uniform updates draw level after {level} sweeps "
                    f"for b = {branching[order].tolist()}; the head start of "
                    "trajectory sampling should last longer at smaller b", tolerance="ordering"))
    for b in np.unique(branching):
        mine = np.flatnonzero(branching == b)
        if mine.size < 2:
            continue
        small, large = mine[np.argmin(states[mine])], mine[np.argmax(states[mine])]
        measures += [
            _grows_with_states(b, states, (large, small), "mean lead over the first two sweeps",
                               [head_start(results, c) for c in (large, small)], ".3f",
                               "larger", "trajectory sampling's mean lead over the first two "
                               "sweeps is {}"),
            _grows_with_states(b, states, (large, small), "sweeps until uniform draws level",
                               [catch_up(results, c) for c in (large, small)], "", "later",
                               "uniform updates draw level after {} sweeps"),
        ]
    return measures


def _grows_with_states(b, states, tasks, quantity: str, values, digits: str, more: str,
                       said: str) -> Measure:
    """Section 8.6's finding at branching ``b`` for one ``quantity``: its ``values`` on the
    ``tasks`` (the one with the most states, the one with the fewest) are ``more`` (larger,
    later) with more states. ``digits`` formats a value; ``said`` is the failure's
    sentence about the larger task's value (``{}``)."""
    (large, small), (high, low) = tasks, (format(v, digits) for v in values)
    return fact(f"b = {b}: {quantity}, {states[large]:,} against {states[small]:,} states",
                passed=values[0] > values[1], expected=f"{more} with more states",
                measured=f"{high} vs {low}",
                failure=f"b = {b}: {said.format(high)} with {states[large]:,} states, not "
                        f"{more} than the {low} with {states[small]:,}", tolerance="ordering")
