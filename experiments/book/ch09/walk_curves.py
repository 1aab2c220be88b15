"""Learning curves of gradient Monte Carlo on Example 9.1's 1000-state walk, against the
exact VE minimiser of each feature set (shared by the experiments of Figures 9.5 and
9.10; Figure 9.2 right's uses its paired standard error).

A curve is ``sqrt(VE(w))`` (eq. 9.1, the on-policy distribution ``mu``) after each
episode. For any weights ``VE(w) >= VE(w_VE)``, the minimiser's, so every point of
every run lies above that exact floor; gradient MC at a constant step approaches it
(to within a band set by the step size).
The walk's episodes do not depend on the weights (the policy is fixed), so every
feature set with the same seed sees the same episodes: comparisons between feature
sets are paired by run, with the standard errors of the per-run differences.
"""

from __future__ import annotations

import numpy as np

from tabular.experiments.book.ch09.walk_setup import walk
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, fact, standard_error
from tabular.linear import (
    RewardProcess,
    fourier,
    gradient_mc,
    polynomial,
    state_coordinates,
    tile_coding,
    value_error,
    ve_minimiser,
)

#: Standard errors a measured difference must exceed (a normal mean lies beyond 4 of
#: them with probability 6e-5).
K_SE = 4.0
#: Points of each stored curve (evenly spaced episodes, the last one included).
POINTS = 250
#: Runs of one executor job: a job keeps its runs' weights after every episode, at
#: most 5 x 5000 x 300 floats (60 MB) for 50 tilings.
RUNS_PER_JOB = 5
#: The width of a tile, in states (section 9.5.4's 1000-state example).
TILE_STATES = 200


def tile_positions(n_states: int) -> np.ndarray:
    """Each state's position for tile coding, the centre of its unit of the line,
    ``(s - 1/2) / 1000`` (states 1..1000; the two end states, whose rows are never read,
    clipped to 0 and 1), so that a tile of width 1/5 is exactly 200 states and an offset
    of 1/50 of a tile exactly 4: tiling ``t`` puts state ``s`` in tile ``floor((s - 1/2 +
    4 t) / 200)``, whose argument is never within 1/400 of a whole number, so rounding
    cannot move a state across a boundary (at ``(s - 1) / 1000``, on the boundaries
    themselves, it moved some: tiles of 199 and 201 states)."""
    return np.clip((np.arange(n_states) - 0.5) / (n_states - 2), 0.0, 1.0)


def features(kind: str, size: int) -> np.ndarray:
    """The walk's feature matrix: ``"polynomial"`` or ``"fourier"`` of order ``size``
    over each state's position in ``[0, 1]`` (eq. 9.17 and 9.18), or ``"tilings"``:
    ``size`` tilings of 200-state tiles, each offset from the last by ``200 / size``
    states (one tiling is state aggregation into five groups of 200)."""
    mdp, _, _ = walk()
    if kind == "polynomial":
        return polynomial(state_coordinates(mdp), size)
    if kind == "fourier":
        return fourier(state_coordinates(mdp), size)
    if kind == "tilings":
        return tile_coding(tile_positions(mdp.n_states), tilings=size,
                           tiles=(mdp.n_states - 2) // TILE_STATES)
    raise ValueError(f"unknown feature kind {kind!r}")


def marks(episodes: int) -> np.ndarray:
    """The episodes after which a curve is stored: ``POINTS`` evenly spaced ones ending
    at the last (every one when there are fewer)."""
    points = min(POINTS, episodes)
    return episodes * np.arange(1, points + 1) // points


def ve_curves(kind: str, size: int, alpha: float, episodes: int, runs: int, seed: int,
              v: np.ndarray, mu: np.ndarray) -> dict:
    """``sqrt(VE)`` after each episode of :func:`marks` of ``runs`` runs of gradient MC
    with the features ``(kind, size)``, ``v`` and ``mu`` the walk's ``v_pi`` and
    on-policy distribution: ``curve [runs, points]`` (an executor job)."""
    mdp, policy, _ = walk()
    X = features(kind, size)
    history = gradient_mc(mdp, policy, X, episodes=episodes, alpha=alpha, runs=runs,
                          seed=seed, history=True).w_history
    at = marks(episodes) - 1
    on = mu > 0.0
    curve = np.array([np.sqrt(((history[r, at] @ X[on].T - v[on]) ** 2) @ mu[on])
                      for r in range(runs)])
    return {"curve": curve}


def learn(process: RewardProcess, specs: list[tuple[str, int, float]], episodes: int,
          runs: int, seed: int, executor) -> dict:
    """Every feature set ``(kind, size, alpha)`` of ``specs`` learnt by ``runs`` runs of
    ``episodes`` episodes (the same seeds for each): ``curves [sets, runs, points]``,
    ``episodes_at [points]``, and per set the exact ``floor`` (``sqrt(VE)`` of the VE
    minimiser) and ``initial`` (``sqrt(VE(0))``)."""
    blocks = range(0, runs, RUNS_PER_JOB)
    jobs = [{"kind": kind, "size": size, "alpha": alpha, "episodes": episodes,
             "runs": min(RUNS_PER_JOB, runs - start), "seed": seed + b, "v": process.v,
             "mu": process.mu}
            for kind, size, alpha in specs for b, start in enumerate(blocks)]
    out = executor.map(ve_curves, jobs, desc="features x runs")
    per_set = len(blocks)
    curves = np.array([np.concatenate([o["curve"] for o in out[i * per_set:(i + 1) * per_set]])
                       for i in range(len(specs))])
    floor, initial = [], []
    for kind, size, _ in specs:
        X = features(kind, size)
        floor.append(np.sqrt(value_error(process, X, ve_minimiser(process, X))))
        initial.append(np.sqrt(value_error(process, X, np.zeros(X.shape[1]))))
    return {"curves": curves, "episodes_at": marks(episodes), "floor": np.array(floor),
            "initial": np.array(initial)}


def draw(results: dict, labels: list[str], colors: list[str], styles: list[str], *, title: str,
         settings: str):
    """The figure of ``results``, one panel titled ``title``: each set's mean curve with
    its band, from ``sqrt(VE(0))`` at episode 0, and its exact floor dashed in the same
    colour; the panel's own title names the runs and the ``settings``."""
    fig, axes = style.figure(1, 1, width=7.4, height=4.6, title=title)
    ax = axes[0, 0]
    x = np.r_[0, results["episodes_at"]]
    for i, (label, color, line) in enumerate(zip(labels, colors, styles, strict=True)):
        runs = results["curves"][i]
        start = np.full((runs.shape[0], 1), results["initial"][i])
        style.mean_band(ax, x, np.hstack([start, runs]), label, color, linestyle=line)
        ax.axhline(results["floor"][i], color=color, linestyle=(0, (2, 3)), linewidth=1)
    ax.plot([], [], color="0.3", linestyle=(0, (2, 3)), linewidth=1,
            label="exact floor: sqrt(VE) of the VE minimiser")
    ax.set_xlabel("episodes")
    ax.set_ylabel(r"$\sqrt{\overline{VE}}$ averaged over runs")
    ax.set_ylim(0.0, 0.45)
    ax.set_title(f"{results['curves'].shape[1]} runs (band: 95% CI); {settings}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def paired_se(a: np.ndarray, b: np.ndarray) -> float:
    """The standard error of ``mean(a - b)`` over runs (``a[i]`` and ``b[i]`` from the
    same run's episodes)."""
    return standard_error(a - b)


def above_floors(results: dict, labels: list[str]) -> list[Measure]:
    """Every set's lowest point of any run is above its exact floor (float64's rounding
    of ``VE`` allowed)."""
    measures = []
    for label, runs, floor in zip(labels, results["curves"], results["floor"], strict=True):
        lowest = float(runs.min())
        measures.append(above(f"{label}: lowest sqrt(VE) of any run and episode", measured=lowest,
                              bound=floor * (1.0 - 1e-9) - 1e-12,
                              failure=f"{label} reaches sqrt(VE) {lowest:.6f}, below the exact "
                                      f"minimum {floor:.6f} of its features",
                              why="exact: the VE minimiser's"))
    return measures


def final(curves: np.ndarray) -> np.ndarray:
    """Each run's final value error ``[runs]``: ``sqrt(VE)`` averaged over the last tenth
    of its stored points (the curves are nearly flat there, and one episode's value
    moves with that episode's returns)."""
    return curves[:, -max(curves.shape[1] // 10, 1):].mean(axis=1)


def ends_below(results: dict, low: int, high: int, labels: list[str]) -> Measure:
    """Set ``low``'s final value error (:func:`final`) is below set ``high``'s, by more
    than ``K_SE`` paired standard errors."""
    a, b = final(results["curves"][low]), final(results["curves"][high])
    gap = float(b.mean() - a.mean())
    return above(f"final sqrt(VE): {labels[high]} - {labels[low]}", measured=gap,
                 bound=K_SE * paired_se(b, a),
                 failure=f"{labels[low]} does not end below {labels[high]} "
                         f"({a.mean():.4f} against {b.mean():.4f})",
                 why=f"{K_SE:g} standard errors of the paired difference")


def close_most_of_the_gap(results: dict, labels: list[str]) -> list[Measure]:
    """Every set ends nearer its exact floor than its start ``sqrt(VE(0))``: of the gap
    between them it has closed more than half, by more than ``K_SE`` standard errors."""
    measures = []
    for label, runs, floor, start in zip(labels, results["curves"], results["floor"],
                                         results["initial"], strict=True):
        end = final(runs)
        margin = float((start - end.mean()) - (end.mean() - floor))
        se = 2.0 * standard_error(end)
        measures.append(above(f"{label}: (start - end) - (end - exact floor)", measured=margin,
                              bound=K_SE * se,
                              failure=f"{label} ends at {end.mean():.4f}, not nearer its "
                                      f"exact floor {floor:.4f} than its start {start:.4f}",
                              why=f"{K_SE:g} standard errors"))
    return measures


def nested_floors(results: dict, smaller: int, larger: int, labels: list[str]) -> Measure:
    """The exact floor of set ``larger`` is at most set ``smaller``'s: its features span
    every estimate the smaller set's do."""
    a, b = float(results["floor"][smaller]), float(results["floor"][larger])
    return fact(f"exact floors: {labels[larger]} <= {labels[smaller]}", passed=b <= a * (1 + 1e-9),
                expected=f"<= {a:.6f}", measured=f"{b:.6f}",
                failure=f"{labels[larger]}'s exact floor {b:.6f} is above "
                        f"{labels[smaller]}'s {a:.6f}, whose estimates it contains",
                tolerance="exact (nested classes)")
