"""Figure 9.10: gradient Monte Carlo with one tiling and with 50 tilings of 200-state
tiles on the 1000-state random walk, sqrt(VE) against episodes, above each feature
set's exact minimum.

The book's settings (Sutton & Barto 2018, Figure 9.10's caption): "The space of 1000
states was treated as a single continuous dimension, covered with tiles each 200 states
wide. The multiple tilings were offset from each other by 4 states. The step-size
parameter was set so that the initial learning rate in the two cases was the same,
alpha = 0.0001 for the single tiling and alpha = 0.0001/50 for the 50 tilings."

The tiles are the library's :func:`~tabular.linear.tile_coding` over each state's
centre ``(s - 1/2) / 1000`` (a tile of width 1/5 is exactly 200 states, an offset of
1/50 of a tile exactly 4, and no state lies on a boundary). Over ``(s - 1) / 1000``,
the states on the boundaries, rounding moved some across them (tiles of 199 and 201
states, another feature set whose VE minimum is 0.002116 where the book's tiles' is
0.002098). The check :func:`tiles_are_the_books` builds the book's tiles again,
independently, and holds the figure's to them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.book.ch09.walk_curves import (
    K_SE,
    TILE_STATES,
    above_floors,
    close_most_of_the_gap,
    draw,
    ends_below,
    features,
    final,
    learn,
    nested_floors,
)
from tabular.experiments.book.ch09.walk_setup import walk
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, standard_error, within
from tabular.experiments.harness.settings import Settings
from tabular.linear import reward_process, value_error, ve_minimiser

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("Sutton & Barto (2018), Figure 9.10 (one tiling against 50 tilings on the "
              "1000-state walk, gradient MC), with each feature set's exact VE minimum")


@dataclass(frozen=True)
class Config(Settings):
    """Section 9.5.4's example: the 1000 states as one continuous dimension, tiles 200
    states wide; the multiple tilings are offset from each other by 200 / tilings (4)
    states; w = 0 at first, gamma = 1."""

    tilings: int = 50
    """Tilings of the multiple-tiling learner (the book's)."""
    alpha: float = 1e-4
    """Gradient MC's step size with one tiling (the book's); the multiple tilings use
    alpha / tilings, the same initial learning rate (every state has one active
    feature per tiling)."""
    episodes: int = 5000
    """Episodes per run (the book's)."""
    runs: int = 30
    """Independent runs averaged (the book's; ``--quick`` keeps the book's episodes, which
    the findings need, with fewer runs)."""
    seed: int = 0
    """Seed of the runs' random streams (both learners see the same episodes)."""

    QUICK = {"runs": 10}


def labels(results: dict) -> list[str]:
    return ["one tiling (state aggregation)", f"{int(results['tilings'])} tilings"]


def run(config: Config, executor) -> dict:
    mdp, policy, _ = walk()
    process = reward_process(mdp, policy, gamma=1.0)
    specs = [("tilings", 1, config.alpha),
             ("tilings", config.tilings, config.alpha / config.tilings)]
    results = learn(process, specs, config.episodes, config.runs, config.seed, executor)
    built = features("tilings", config.tilings)
    book = book_tiles(config.tilings)
    inner = slice(1, -1)  # the end states' rows are never read
    rank = [np.linalg.matrix_rank(m) for m in (built[inner], book[inner],
                                                np.hstack([built[inner], book[inner]]))]
    return {**results, "tilings": np.array(config.tilings),
            "active": built[inner].sum(axis=1), "widths": tile_widths(built[inner]),
            "spans": np.array(rank),
            "book_floor": np.array(np.sqrt(value_error(process, book,
                                                       ve_minimiser(process, book))))}


def book_tiles(tilings: int) -> np.ndarray:
    """The caption's tiles built directly, not by :func:`~tabular.linear.tile_coding`:
    in tiling ``j`` (of ``tilings``) state ``s`` (1 to 1000) lies in tile ``(s - 1 + o
    j) // 200``, ``o = 200 / tilings`` (4) states of offset between tilings, six tiles
    per tiling of 200 states each (the first and last cut by the walk's ends); ``[1002,
    6 tilings]`` (the end states' rows all 0, never read)."""
    offset = TILE_STATES // tilings
    per = 1000 // TILE_STATES + 1
    X = np.zeros((1002, tilings * per))
    s = np.arange(1, 1001)
    for j in range(tilings):
        X[s, j * per + (s - 1 + offset * j) // TILE_STATES] = 1.0
    return X


def tile_widths(X: np.ndarray) -> np.ndarray:
    """The number of states each feature covers, over the features some state has."""
    counts = X.sum(axis=0)
    return counts[counts > 0]


def plot(results: dict, out_dir, config: Config) -> list:
    fig = draw(results, labels(results), [style.PALETTE[0], style.PALETTE[1]], ["-", "-"],
               title="Figure 9.10: one tiling against many, gradient MC on the 1000-state walk",
               settings=f"tiles of 200 states; alpha = {config.alpha:g} and {config.alpha:g} / "
                        f"{config.tilings}")
    return [style.save(fig, out_dir / "tile_coding_walk.png")]


@check()
def above_the_exact_minima(results: dict) -> list[Measure]:
    """No run ever has a value error below the exact VE minimum of its features (a hard
    bound), and the tilings' exact minimum is at most one tiling's: the first tiling,
    not offset, is the single one."""
    names = labels(results)
    return above_floors(results, names) + [nested_floors(results, 0, 1, names)]


@check("tilings", "alpha", "episodes")
def many_tilings_end_lower(results: dict) -> list[Measure]:
    """Figure 9.10's finding: the multiple tilings end with the lower value error
    (averaged over the last tenth of the episodes), by more than 4 standard errors of
    the paired difference; and below the exact minimum of one tiling, which no learner
    with one tiling can reach, by more than 4 standard errors."""
    names = labels(results)
    many = final(results["curves"][1])
    floor = float(results["floor"][0])
    se = standard_error(many)
    return [ends_below(results, 1, 0, names),
            below(f"{names[1]}: final sqrt(VE)", measured=many.mean(), bound=floor - K_SE * se,
                  failure=f"{names[1]} end at {many.mean():.4f}, not below one tiling's exact "
                  f"minimum {floor:.4f}", why=f"one tiling's exact minimum - {K_SE:g} standard "
                  "errors")]


@check("tilings", "alpha", "episodes")
def curves_approach_their_minima(results: dict) -> list[Measure]:
    """Both curves end nearer their exact floors than their start: each has closed more
    than half the gap, by more than 4 standard errors."""
    return close_most_of_the_gap(results, labels(results))


@check("tilings")
def tiles_are_the_books(results: dict) -> list[Measure]:
    """The caption's feature set: every state has one active tile per tiling (50); no
    tile is wider than 200 states, and those not cut by the ends of the walk are exactly
    200; the tiles span the same estimates as the caption's tiles built independently
    (:func:`book_tiles`: the rank of both together is each one's), so the figure's exact
    floor is the VE minimum of the book's tiles (within float64's rounding)."""
    active, widths = results["active"], results["widths"]
    n = int(results["tilings"])
    rank_built, rank_book, rank_both = (int(r) for r in results["spans"])
    floor, book = float(results["floor"][1]), float(results["book_floor"])
    return [
        fact(
            "active tiles per state",
            passed=bool((active == n).all()),
            expected=str(n),
            measured=f"{int(active.min())} to {int(active.max())}",
            failure=f"a state has {int(active.min())} to {int(active.max())} active tiles, not {n}",
            tolerance="one per tiling",
        ),
        fact(
            "tile widths in states",
            passed=widths.max() == TILE_STATES and int((widths == TILE_STATES).sum()) >= 4 * n,
            expected=f"<= {TILE_STATES}, at least 4 per tiling exactly {TILE_STATES}",
            measured=f"{int(widths.min())} to {int(widths.max())}",
            failure="the tiles are not 200 states wide",
            tolerance="the caption's",
        ),
        fact(
            "rank of the figure's tiles, the book's, both",
            passed=rank_built == rank_book == rank_both,
            expected="equal",
            measured=f"{rank_built}, {rank_book}, {rank_both}",
            failure="the figure's tiles span other estimates than the book's",
            tolerance="same span",
        ),
        within(
            "exact floor against the book's tiles' VE minimum",
            measured=floor,
            expected=book,
            tolerance=1e-9 * book,
            failure=f"the figure's floor {floor:.6f} is not the book's tiles' {book:.6f}",
            why="rounding",
        ),
    ]
