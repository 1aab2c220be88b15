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

from tabular.checks import (
    check_finite,
    check_flag,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_unit_interval,
    first_bad,
    policy_matrix,
    real_array,
)
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.results import RunsResult
from tabular.types import BoolArray, FloatArray, IntArray, PolicyLike

#: Okabe-Ito colours: distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
           "#F0E442", "#000000")

#: Action arrows (dx, dy) in plot coordinates where y grows downwards, by action name.
ARROWS = {"up": (0.0, -1.0), "down": (0.0, 1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0),
          "U": (0.0, -1.0), "D": (0.0, 1.0), "L": (-1.0, 0.0), "R": (1.0, 0.0),
          "N": (0.0, -1.0), "S": (0.0, 1.0), "W": (-1.0, 0.0), "E": (1.0, 0.0)}
#: Actions that move nothing drawn as a marker in the cell instead (Taxi's).
MARKS = {"pickup": "o", "dropoff": "x"}

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


#: The most panels along one side of a figure, and the largest panel side in inches: a
#: figure beyond them would take minutes and gigabytes to draw.
MAX_PANELS, MAX_INCHES = 50, 50.0


def figure(ncols: int = 1, nrows: int = 1, width: float = 5.0, height: float = 3.8,
           title: str | None = None, **kwargs: Any) -> tuple[Figure, np.ndarray]:
    """``(fig, axes)``: a figure in the house style (:data:`STYLE`) with ``nrows x ncols``
    panels of ``width x height`` inches; ``axes`` is always a 2-D array
    ``[nrows, ncols]`` of ``Axes`` (``squeeze=False``); ``title`` is the figure's title.
    At most :data:`MAX_PANELS` panels a side, each at most :data:`MAX_INCHES` a side."""
    ncols = check_positive_int("ncols", ncols, high=MAX_PANELS)
    nrows = check_positive_int("nrows", nrows, high=MAX_PANELS)
    for name, inches in (("width", width), ("height", height)):
        if check_positive(name, inches) > MAX_INCHES:
            raise ValueError(f"{name} must be at most {MAX_INCHES:g} inches, got {inches:g}")
    _check_text("title", title)
    plt.rcParams.update(STYLE)  # type: ignore[arg-type]  # STYLE's keys are rcParams names
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             squeeze=False, layout="constrained", **kwargs)
    if title:
        fig.suptitle(title, fontsize=12, fontweight="bold")
    return fig, axes


def _axes(ax: Axes | None) -> Axes:
    """``ax``, or a new figure's one panel for ``None``."""
    if ax is None:
        return figure()[1][0, 0]
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax


def _check_text(name: str, value: object) -> None:
    """A label, title or colour: text or ``None``."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be text or None, got {value!r}")


def _values(name: str, value: object, ndims: tuple[int, ...], *, nan: bool = False
            ) -> FloatArray:
    """A float64 array with one of ``ndims`` dimensions; ``-inf`` (a trap's value or
    return) is kept, ``+inf`` refused, NaN refused unless ``nan`` (a blank cell)."""
    arr = real_array(name, value)
    if arr.ndim not in ndims:
        raise ValueError(f"{name} must have {' or '.join(map(str, ndims))} dimension(s), got "
                         f"shape {list(arr.shape)}")
    bad = arr == np.inf
    if not nan:
        bad |= np.isnan(arr)
    if bad.any():
        raise ValueError(f"{name}{first_bad(bad)} = {arr[bad][0]}: "
                         f"{'+inf is' if nan else 'NaN and +inf are'} not a value to draw")
    return arr


# ------------------------------------------------------------------ grids
def _grid_of(mdp):
    """``(shape, cells [S, 2])`` of a grid env's model."""
    mdp = as_mdp(mdp)
    if mdp.grid_shape is None or mdp.state_cells is None:
        raise ValueError("this model has no grid (grid_shape and state_cells are None): "
                         "value maps need a grid env's model")
    return tuple(mdp.grid_shape), np.asarray(mdp.state_cells)


def grid_image(values: npt.ArrayLike, cells: npt.ArrayLike, shape: tuple[int, int],
               fill: float = np.nan) -> FloatArray:
    """Per-state ``values [S]`` scattered onto a ``shape`` grid by their ``cells``
    (``int [S, 2]`` row, column); cells of no state hold ``fill``."""
    shape = _check_shape(shape)
    cells = _check_cells("cells", cells, shape)
    values = _values("values", values, (1,), nan=True)
    if values.shape[0] != cells.shape[0]:
        raise ValueError(f"values has {values.shape[0]} entries and cells {cells.shape[0]}: "
                         "one value per cell")
    image = np.full(shape, _fill_value("fill", fill), dtype=np.float64)
    image[cells[:, 0], cells[:, 1]] = values
    return image


def _fill_value(name: str, value: object) -> float:
    """A fill value: a real number, NaN (blank) allowed."""
    return float(real_array(name, value, ()))


def _check_shape(shape: object) -> tuple[int, int]:
    """A grid's ``(rows, columns)``, each an integer in ``[1, 10^4]``."""
    if not isinstance(shape, tuple | list) or len(shape) != 2:
        raise ValueError(f"shape must be (rows, columns), got {shape!r}")
    return (check_positive_int("shape rows", shape[0], high=10_000),
            check_positive_int("shape columns", shape[1], high=10_000))


def _check_cells(name: str, cells: object, shape: tuple[int, int]) -> IntArray:
    """``int [T, 2]`` (row, column) cells inside a ``shape`` grid."""
    arr = np.asarray(cells)
    if arr.dtype.kind not in "iu" or arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must be an int [n, 2] array of (row, column), got "
                         f"{arr.dtype} shape {list(arr.shape)}")
    outside = (arr < 0) | (arr >= np.array(shape))
    if outside.any():
        i = int(np.argmax(outside.any(axis=1)))
        raise ValueError(f"{name}[{i}] = {arr[i].tolist()} is outside the {shape[0]} x "
                         f"{shape[1]} grid")
    return arr.astype(np.int64, copy=False)


def heatmap(ax: Axes, image: np.ndarray, *, fmt: str = "{:.1f}", cmap: str = "viridis",
            annotate: bool = True, colorbar_label: str | None = None,
            vmin: float | None = None, vmax: float | None = None) -> AxesImage:
    """An annotated image of a 2-D array (NaN cells blank, e.g. walls; a ``-inf`` cell, a
    trap's value, blank and marked ``-inf``); returns the ``AxesImage``. ``fmt`` formats
    each annotation; ``colorbar_label`` adds a colour bar."""
    ax = _axes(ax)
    image = _values("image", image, (2,), nan=True)
    annotate = check_flag("annotate", annotate)
    _check_text("colorbar_label", colorbar_label)
    _check_format(fmt)
    vmin, vmax = (None if v is None else check_finite(name, v)
                  for name, v in (("vmin", vmin), ("vmax", vmax)))
    if vmin is not None and vmax is not None and vmin > vmax:
        raise ValueError(f"vmin={vmin:g} is above vmax={vmax:g}")
    masked = np.ma.masked_invalid(image)
    im = ax.imshow(masked, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(image.shape[1]))
    ax.set_yticks(range(image.shape[0]))
    ax.grid(False)
    if annotate:
        for (r, c), v in np.ndenumerate(image):
            if np.isfinite(v):
                red, green, blue, _ = im.cmap(im.norm(np.asarray(v)))
                light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5
                ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
            elif v == -np.inf:
                ax.text(c, r, "$-\\infty$", ha="center", va="center", fontsize=8)
    if colorbar_label is not None:
        ax.figure.colorbar(im, ax=ax, shrink=0.8, label=colorbar_label)
    return im


def _check_format(fmt: object) -> None:
    """An annotation format: text with one ``{}`` field that formats a number."""
    try:
        assert isinstance(fmt, str)
        fmt.format(1.5)
    except (AssertionError, ValueError, IndexError, KeyError) as error:
        raise ValueError(f"fmt must be a format string for one number such as '{{:.1f}}', "
                         f"got {fmt!r}") from error


def grid_axes(ax: Axes, shape: tuple[int, int], title: str | None = None) -> Axes:
    """Cell-centred axes for a ``shape`` grid: column on x, row on y (row 0 on top),
    cell borders drawn; returns ``ax``."""
    ax, shape = _axes(ax), _check_shape(shape)
    _check_text("title", title)
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
    n_actions = check_positive_int("n_actions", n_actions)
    tol = check_nonnegative("tol", tol)
    n_states = len(policy.probs()) if hasattr(policy, "probs") else len(
        np.atleast_1d(real_array("policy", policy)))
    pi = policy_matrix((n_states, n_actions), policy)
    return pi >= pi.max(axis=1, keepdims=True) - tol


def policy_arrows(ax: Axes, cells: npt.ArrayLike, actions: np.ndarray,
                  action_names: Sequence[str], *, color: str = "black",
                  mask: np.ndarray | None = None, scale: float = 0.35) -> Axes:
    """Arrows of the chosen actions: ``actions`` is ``int [S]`` or a bool ``[S, A]`` of
    the actions to draw in each state (ties drawn together). ``mask [S]`` skips the
    states where it is False; ``action_names`` pick the arrow directions
    (:data:`ARROWS`; the actions of :data:`MARKS` are drawn as a marker). Returns
    ``ax``."""
    ax = _axes(ax)
    unknown = [n for n in action_names if n not in ARROWS and n not in MARKS] if not isinstance(
        action_names, str) else [action_names]
    if unknown:
        raise ValueError(f"action_names {unknown!r} have no arrow; known: "
                         f"{sorted(ARROWS) + sorted(MARKS)}")
    cells = np.asarray(cells)
    if cells.ndim != 2 or cells.shape[1] != 2 or cells.dtype.kind not in "iuf":
        raise ValueError(f"cells must be an [S, 2] array of (row, column), got shape "
                         f"{list(cells.shape)}")
    chosen = (best_actions(actions, len(action_names)) if np.ndim(actions) == 1
              else np.asarray(actions))
    if chosen.shape != (cells.shape[0], len(action_names)) or chosen.dtype != np.bool_:
        raise ValueError(f"actions must be int [{cells.shape[0]}] or bool "
                         f"[{cells.shape[0]}, {len(action_names)}], got {chosen.dtype} "
                         f"shape {list(chosen.shape)}")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.shape != (cells.shape[0],) or mask.dtype != np.bool_:
            raise ValueError(f"mask must be bool [{cells.shape[0]}], got {mask.dtype} shape "
                             f"{list(mask.shape)}")
    scale = check_positive("scale", scale)
    for s, (r, c) in enumerate(cells):
        if mask is not None and not mask[s]:
            continue
        for a in np.flatnonzero(chosen[s]):
            if action_names[int(a)] in MARKS:
                ax.plot(c, r, marker=MARKS[action_names[int(a)]], color=color, markersize=4)
                continue
            dx, dy = ARROWS[action_names[int(a)]]
            ax.annotate("", xy=(c + scale * dx, r + scale * dy), xytext=(c, r),
                        arrowprops=dict(arrowstyle="->", color=color, lw=1.3))
    return ax


def terminal_states(mdp: TabularMDP) -> BoolArray:
    """Bool ``[S]``: absorbing states whose every action ends the episode (no arrow)."""
    mdp = as_mdp(mdp)
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
    mdp = as_mdp(mdp)
    shape, cells = _grid_of(mdp)
    ax = _axes(ax)
    V = _values("V", V, (1,))
    if V.shape != (mdp.n_states,):
        raise ValueError(f"V must have shape [{mdp.n_states}], got {list(V.shape)}")
    if Q is not None and policy is not None:
        raise ValueError("give Q (every optimal action) or policy, not both")
    _check_text("title", title)
    tol = check_nonnegative("tol", tol)
    chosen = None
    if Q is not None:
        Q = _values("Q", Q, (2,))
        if Q.shape != (mdp.n_states, mdp.n_actions):
            raise ValueError(f"Q must have shape [{mdp.n_states}, {mdp.n_actions}], got "
                             f"{list(Q.shape)}")
        chosen = Q >= Q.max(axis=1, keepdims=True) - tol  # -inf rows: every action ties
    elif policy is not None:
        chosen = best_actions(policy, mdp.n_actions)
    heatmap(ax, grid_image(V, cells, shape), fmt=fmt, cmap=cmap, colorbar_label=colorbar_label)
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
    mean's ``Line2D``.

    A ``-inf`` entry (an episode that fell into a trap) makes that point's mean ``-inf``:
    the line is drawn where the mean is finite, and the trap points are marked by
    triangles along the bottom of the axes (labelled in the legend)."""
    ax = _axes(ax)
    runs = np.atleast_2d(_values("runs", runs, (1, 2)))
    T = runs.shape[1]
    if T == 0:
        raise ValueError("runs holds no points")
    if x is None:
        x = np.arange(1, T + 1)
    else:
        x = real_array("x", x)
        if x.shape != (T,) or not np.isfinite(x).all():
            raise ValueError(f"x must be {T} finite numbers (one per point of runs), got "
                             f"shape {list(x.shape)}")
    smooth = check_positive_int("smooth", smooth, high=T)
    band_alpha = check_unit_interval("band_alpha", band_alpha)
    _check_text("label", label)
    trapped = ~np.isfinite(runs)
    if smooth > 1:
        kernel = np.ones(smooth) / smooth
        trapped = np.array([np.convolve(r, kernel, mode="valid") > 0 for r in trapped])
        runs = np.array([np.convolve(r, kernel, mode="valid")
                         for r in np.where(np.isfinite(runs), runs, 0.0)])
        x = x[smooth - 1:]
    trap = trapped.any(axis=0)
    finite = np.where(trapped, 0.0, runs)  # no -inf arithmetic: no RuntimeWarning
    mean = np.where(trap, np.nan, finite.mean(axis=0))
    line, = ax.plot(x, mean, label=label, color=color, **line_style)
    if runs.shape[0] > 1:
        half = Z95 * finite.std(axis=0, ddof=1) / np.sqrt(runs.shape[0])
        ax.fill_between(x, mean - half, mean + half, color=line.get_color(),
                        alpha=band_alpha, linewidth=0, where=~trap)
    if trap.any():
        ax.plot(x[trap], np.zeros(int(trap.sum())), "v", color=line.get_color(),
                transform=ax.get_xaxis_transform(), clip_on=False, markersize=5,
                label=f"{label or 'mean'}: a run's return is $-\\infty$")
    return line


def learning_curve(result: RunsResult | npt.ArrayLike, *, ax: Axes | None = None,
                   label: str | None = None, color: str | None = None, smooth: int = 1,
                   field: str = "episode_returns") -> Axes:
    """A learner's ``episode_returns`` (or another per-episode ``field``) against the
    episode number: the mean over runs with its 95% band when the result has a run
    axis (``runs=n``), the single curve otherwise. ``result`` may also be an array
    ``[T]`` or ``[runs, T]``. Returns the ``Axes``."""
    ax = _axes(ax)
    if not isinstance(field, str):
        raise TypeError(f"field must be text, got {field!r}")
    if isinstance(result, RunsResult) and not hasattr(result, field):
        raise ValueError(f"the result has no field {field!r}")
    name = field if isinstance(result, RunsResult) else "result"
    values = _values(name, getattr(result, field) if hasattr(result, field) else result, (1, 2))
    if values.size == 0:
        raise ValueError(f"{name} holds no episodes (shape {list(values.shape)})")
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
    kl, reward = _values("kl", kl, (0, 1)), _values("reward", reward, (0, 1))
    if kl.shape != reward.shape:
        raise ValueError(f"kl and reward must be numbers or 1-D arrays of one length, got "
                         f"shapes {list(kl.shape)} and {list(reward.shape)}")
    if (kl < 0).any():
        raise ValueError(f"kl{first_bad(np.atleast_1d(kl < 0))} is negative: a KL is >= 0")
    _check_text("label", label)
    ax.plot(kl, reward, marker=marker, label=label, color=color, **kwargs)
    ax.set_xlabel(r"KL($\pi$ || $\pi_{ref}$) (nats)")
    ax.set_ylabel("reward")
    if label:
        ax.legend()
    return ax


def draw_path(ax: Axes, cells: npt.ArrayLike, color: str, label: str | None = None,
              offset: float = 0.0) -> Axes:
    """A path through grid cells (``[T, 2]`` rows, columns) as a line with a start dot."""
    ax = _axes(ax)
    cells = real_array("cells", cells)
    if cells.ndim != 2 or cells.shape[0] == 0 or cells.shape[1] != 2 \
            or not np.isfinite(cells).all():
        raise ValueError(f"cells must be a finite [T, 2] array of (row, column), T >= 1, got "
                         f"shape {list(cells.shape)}")
    offset = check_finite("offset", offset)
    _check_text("label", label)
    ax.plot(cells[:, 1] + offset, cells[:, 0] + offset, "-", color=color, label=label,
            linewidth=2.2, alpha=0.9)
    ax.plot(cells[0, 1] + offset, cells[0, 0] + offset, "o", color=color, markersize=6)
    return ax


def greedy_path(mdp: TabularMDP, policy: np.ndarray, max_steps: int = 200) -> IntArray:
    """The cells ``[T, 2]`` visited by a greedy ``policy [S]`` from the most likely start
    state, following each action's most likely outcome until the episode ends (or
    ``max_steps`` steps, for a policy that loops)."""
    mdp = as_mdp(mdp)
    _, cells_of = _grid_of(mdp)
    policy_matrix(mdp, policy)  # an action per state, each in range
    policy = np.asarray(policy)
    if policy.shape != (mdp.n_states,):
        raise ValueError(f"policy must be a greedy int [{mdp.n_states}] policy, got shape "
                         f"{list(policy.shape)}")
    max_steps = check_positive_int("max_steps", max_steps, high=10**6)
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
