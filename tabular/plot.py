"""Drawing helpers for the library's objects: value maps with policy arrows, learning
curves with confidence bands, and the reward-KL frontier of a token MDP.

Every function takes the library's objects directly (a :class:`~tabular.TabularMDP`
of a grid env, a learner's result, a value vector or ``Q`` table), draws on the
matplotlib ``Axes`` it is given (a new figure when ``ax`` is ``None``) and returns
that ``Axes``. Grids are drawn with row 0 at the top; a band is the 95% confidence
interval of the mean over runs. This is the one module of :mod:`tabular` that
imports matplotlib.

>>> import gymnasium as gym
>>> from tabular import TabularMDP, value_iteration, plot
>>> mdp = TabularMDP.from_gymnasium(gym.make("tabzoo/Gridworld5x5-v0"))
>>> best = value_iteration(mdp, gamma=0.9)
>>> ax = plot.value_map(mdp, best.V, Q=best.Q)     # v* with every optimal action
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.rcsetup import cycler

from tabular.model.mdp import TabularMDP
from tabular.results import RunsResult
from tabular.types import BoolArray, FloatArray, IntArray, PolicyLike

#: Okabe-Ito colours: distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
           "#F0E442", "#000000")

#: Action arrows (dx, dy) in plot coordinates where y grows downwards, by action name.
ARROWS = {"up": (0.0, -1.0), "down": (0.0, 1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0),
          "U": (0.0, -1.0), "D": (0.0, 1.0), "L": (-1.0, 0.0), "R": (1.0, 0.0),
          "N": (0.0, -1.0), "S": (0.0, 1.0), "W": (-1.0, 0.0), "E": (1.0, 0.0)}

#: z for a two-sided 95% normal confidence interval.
Z95 = 1.959963984540054

#: The matplotlib settings of every figure (rcParams).
STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.prop_cycle": cycler(color=PALETTE),
    "lines.linewidth": 1.6,
    "image.cmap": "viridis",
}


def figure(ncols: int = 1, nrows: int = 1, width: float = 5.0, height: float = 3.8,
           title: str | None = None, **kwargs: Any) -> tuple[Figure, np.ndarray]:
    """``(fig, axes)``: a figure in the house style (:data:`STYLE`) with ``nrows x ncols``
    panels of ``width x height`` inches; ``axes`` is always a 2-D array
    ``[nrows, ncols]`` of ``Axes`` (``squeeze=False``); ``title`` is the figure's title."""
    plt.rcParams.update(STYLE)  # type: ignore[arg-type]  # STYLE's keys are rcParams names
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             squeeze=False, layout="constrained", **kwargs)
    if title:
        fig.suptitle(title, fontsize=12, fontweight="bold")
    return fig, axes


def _axes(ax: Axes | None) -> Axes:
    return figure()[1][0, 0] if ax is None else ax


# ------------------------------------------------------------------ grids
def _grid_of(mdp):
    if mdp.grid_shape is None or mdp.state_cells is None:
        raise ValueError("this model has no grid (grid_shape and state_cells are None): "
                         "value maps need a grid env's model")
    return tuple(mdp.grid_shape), np.asarray(mdp.state_cells)


def grid_image(values: npt.ArrayLike, cells: npt.ArrayLike, shape: tuple[int, int],
               fill: float = np.nan) -> FloatArray:
    """Per-state ``values [S]`` scattered onto a ``shape`` grid by their ``cells``
    (``int [S, 2]`` row, column); cells of no state hold ``fill``."""
    image = np.full(shape, fill, dtype=np.float64)
    cells = np.asarray(cells)
    image[cells[:, 0], cells[:, 1]] = values
    return image


def heatmap(ax: Axes, image: np.ndarray, *, fmt: str = "{:.1f}", cmap: str = "viridis",
            annotate: bool = True, colorbar_label: str | None = None,
            vmin: float | None = None, vmax: float | None = None) -> AxesImage:
    """An annotated image of a 2-D array (NaN cells blank, e.g. walls); returns the
    ``AxesImage``. ``fmt`` formats each annotation; ``colorbar_label`` adds a colour bar."""
    masked = np.ma.masked_invalid(image)
    im = ax.imshow(masked, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(image.shape[1]))
    ax.set_yticks(range(image.shape[0]))
    ax.grid(False)
    if annotate:
        for (r, c), v in np.ndenumerate(image):
            if np.isfinite(v):
                red, green, blue, _ = im.cmap(im.norm(v))
                light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5
                ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
    if colorbar_label is not None:
        ax.figure.colorbar(im, ax=ax, shrink=0.8, label=colorbar_label)
    return im


def grid_axes(ax: Axes, shape: tuple[int, int], title: str | None = None) -> Axes:
    """Cell-centred axes for a ``shape`` grid: column on x, row on y (row 0 on top),
    cell borders drawn; returns ``ax``."""
    ax.set_xlim(-0.5, shape[1] - 0.5)
    ax.set_ylim(shape[0] - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks(range(shape[1]))
    ax.set_yticks(range(shape[0]))
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.grid(False)
    ax.set_xticks(np.arange(-0.5, shape[1]), minor=True)
    ax.set_yticks(np.arange(-0.5, shape[0]), minor=True)
    ax.grid(True, which="minor", color="0.8", linewidth=0.6)
    ax.tick_params(which="minor", length=0)
    if title:
        ax.set_title(title)
    return ax


def best_actions(policy: PolicyLike, n_actions: int, tol: float = 1e-12) -> BoolArray:
    """Bool ``[S, A]``: the actions a policy takes with the highest probability (every
    one of them on ties). ``policy``: greedy ``int [S]``, stochastic ``[S, A]`` or a
    :class:`~tabular.SoftmaxPolicy`."""
    if hasattr(policy, "probs"):
        policy = policy.probs()
    policy = np.asarray(policy)
    if policy.ndim == 1:
        chosen = np.zeros((policy.shape[0], n_actions), dtype=bool)
        chosen[np.arange(policy.shape[0]), policy.astype(np.int64)] = True
        return chosen
    return policy >= policy.max(axis=1, keepdims=True) - tol


def policy_arrows(ax: Axes, cells: npt.ArrayLike, actions: np.ndarray,
                  action_names: Sequence[str], *, color: str = "black",
                  mask: np.ndarray | None = None, scale: float = 0.35) -> Axes:
    """Arrows of the chosen actions: ``actions`` is ``int [S]`` or a bool ``[S, A]`` of
    the actions to draw in each state (ties drawn together). ``mask [S]`` skips the
    states where it is False; ``action_names`` pick the arrow directions
    (:data:`ARROWS`). Returns ``ax``."""
    chosen = best_actions(actions, len(action_names)) if np.ndim(actions) == 1 else actions
    for s, (r, c) in enumerate(np.asarray(cells)):
        if mask is not None and not mask[s]:
            continue
        for a in np.flatnonzero(chosen[s]):
            dx, dy = ARROWS[action_names[int(a)]]
            ax.annotate("", xy=(c + scale * dx, r + scale * dy), xytext=(c, r),
                        arrowprops=dict(arrowstyle="->", color=color, lw=1.3))
    return ax


def terminal_states(mdp: TabularMDP) -> BoolArray:
    """Bool ``[S]``: absorbing states whose every action ends the episode (no arrow)."""
    loops = mdp.next_state == np.arange(mdp.n_states)[:, None, None]
    return np.all((mdp.prob == 0) | (loops & mdp.done), axis=(1, 2))


def value_map(mdp: TabularMDP, V: npt.ArrayLike, *, Q: npt.ArrayLike | None = None,
              policy: PolicyLike | None = None, ax: Axes | None = None, fmt: str = "{:.1f}",
              cmap: str = "viridis", colorbar_label: str | None = "state value",
              title: str | None = None, tol: float = 1e-8) -> Axes:
    """The values ``V [S]`` of a grid env's model as an annotated heatmap, with arrows.

    ``Q [S, A]`` draws every optimal action of each state (all actions within ``tol``
    of the best, ties included, as Sutton & Barto draw ``pi*`` in Figure 3.5);
    ``policy`` (``int [S]``, ``[S, A]`` or ``SoftmaxPolicy``) draws the actions it
    takes most. Terminal states get no arrow. Returns the ``Axes``.
    """
    shape, cells = _grid_of(mdp)
    ax = _axes(ax)
    heatmap(ax, grid_image(np.asarray(V, dtype=np.float64), cells, shape), fmt=fmt,
            cmap=cmap, colorbar_label=colorbar_label)
    if Q is not None and policy is not None:
        raise ValueError("give Q (every optimal action) or policy, not both")
    chosen = None
    if Q is not None:
        Q = np.asarray(Q, dtype=np.float64)
        chosen = Q >= Q.max(axis=1, keepdims=True) - tol
    elif policy is not None:
        chosen = best_actions(policy, mdp.n_actions)
    if chosen is not None:
        names = mdp.action_names or ("up", "right", "down", "left")
        policy_arrows(ax, cells, chosen, names, color="white", mask=~terminal_states(mdp))
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    if title:
        ax.set_title(title)
    return ax


# ------------------------------------------------------------------ curves
def mean_band(ax: Axes, x: npt.ArrayLike | None, runs: npt.ArrayLike,
              label: str | None = None, color: str | None = None, *, smooth: int = 1,
              band_alpha: float = 0.2, **line_style: Any) -> Line2D:
    """The mean over runs (``runs [n, T]``, axis 0) with its 95% confidence band
    (mean +- 1.96 standard errors); ``smooth > 1`` first averages each run over a
    trailing window of that many points; ``band_alpha`` is the band's opacity and
    ``line_style`` goes to ``ax.plot`` (``marker=``, ``linestyle=``...). Returns the
    mean's ``Line2D``."""
    runs = np.atleast_2d(np.asarray(runs, dtype=np.float64))
    x = np.arange(1, runs.shape[1] + 1) if x is None else np.asarray(x)
    if smooth > 1:
        kernel = np.ones(smooth) / smooth
        runs = np.array([np.convolve(r, kernel, mode="valid") for r in runs])
        x = x[smooth - 1:]
    mean = runs.mean(axis=0)
    line, = ax.plot(x, mean, label=label, color=color, **line_style)
    if runs.shape[0] > 1:
        half = Z95 * runs.std(axis=0, ddof=1) / np.sqrt(runs.shape[0])
        ax.fill_between(x, mean - half, mean + half, color=line.get_color(),
                        alpha=band_alpha, linewidth=0)
    return line


def learning_curve(result: RunsResult | npt.ArrayLike, *, ax: Axes | None = None,
                   label: str | None = None, color: str | None = None, smooth: int = 1,
                   field: str = "episode_returns") -> Axes:
    """A learner's ``episode_returns`` (or another per-episode ``field``) against the
    episode number: the mean over runs with its 95% band when the result has a run
    axis (``runs=n``), the single curve otherwise. ``result`` may also be an array
    ``[T]`` or ``[runs, T]``. Returns the ``Axes``."""
    ax = _axes(ax)
    values: Any = getattr(result, field) if hasattr(result, field) else result
    mean_band(ax, None, values, label=label, color=color, smooth=smooth)
    ax.set_xlabel("episode")
    ax.set_ylabel("sum of rewards during episode" if field == "episode_returns" else field)
    if label:
        ax.legend()
    return ax


def frontier(kl: npt.ArrayLike, reward: npt.ArrayLike, *, ax: Axes | None = None,
             label: str | None = None, color: str | None = None, marker: str = "",
             **kwargs: Any) -> Axes:
    """Reward against ``KL(pi || pi_ref)`` (nats): the exact KL-regularised frontier of
    a token MDP, or learners' points on it. ``kl`` and ``reward`` are arrays (e.g. the
    ``kl`` and ``gold`` or ``proxy`` fields of a pipeline's frontier); other keyword
    arguments go to ``Axes.plot``. Returns the ``Axes``."""
    ax = _axes(ax)
    ax.plot(np.asarray(kl), np.asarray(reward), marker=marker, label=label, color=color,
            **kwargs)
    ax.set_xlabel(r"KL($\pi$ || $\pi_{ref}$) (nats)")
    ax.set_ylabel("reward")
    if label:
        ax.legend()
    return ax


def draw_path(ax: Axes, cells: npt.ArrayLike, color: str, label: str | None = None,
              offset: float = 0.0) -> Axes:
    """A path through grid cells (``[T, 2]`` rows, columns) as a line with a start dot."""
    cells = np.asarray(cells, dtype=np.float64)
    ax.plot(cells[:, 1] + offset, cells[:, 0] + offset, "-", color=color, label=label,
            linewidth=2.2, alpha=0.9)
    ax.plot(cells[0, 1] + offset, cells[0, 0] + offset, "o", color=color, markersize=6)
    return ax


def greedy_path(mdp: TabularMDP, policy: np.ndarray, max_steps: int = 200) -> IntArray:
    """The cells ``[T, 2]`` visited by a greedy ``policy [S]`` from the most likely start
    state, following each action's most likely outcome until the episode ends (or
    ``max_steps`` steps, for a policy that loops)."""
    _, cells_of = _grid_of(mdp)
    s = int(np.argmax(mdp.start))
    cells = [cells_of[s]]
    for _ in range(max_steps):
        a = int(policy[s])
        k = int(np.argmax(mdp.prob[s, a]))
        done = bool(mdp.done[s, a, k])
        s = int(mdp.next_state[s, a, k])
        cells.append(cells_of[s])
        if done:
            break
    return np.array(cells)
