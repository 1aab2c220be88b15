"""One look for every figure: colours, fonts, and the few drawing helpers figures share.

Every experiment draws through these helpers, so a reader who has learnt one
figure can read the next: the same algorithm always has the same colour, a band
is always a 95% confidence interval of the mean over runs, a grid is always
drawn with row 0 at the top.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .runner import atomic_write  # noqa: E402

#: Okabe-Ito colours: distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
           "#F0E442", "#000000")

#: The colour of each algorithm, the same in every figure.
ALGORITHM_COLORS = {
    "TD(0)": "#0072B2",
    "MC": "#D55E00",
    "SARSA": "#0072B2",
    "Expected SARSA": "#56B4E9",
    "Q-learning": "#D55E00",
    "Double Q-learning": "#E69F00",
    "MC control": "#882255",
    "REINFORCE": "#009E73",
    "Actor-critic": "#000000",
    "PPO": "#CC79A7",
    "DPO": "#E69F00",
    "Exact optimum": "#000000",
    "Python + Gymnasium": "#999999",
}

#: Action arrows (dx, dy) in plot coordinates where y grows downwards.
ARROWS = {"up": (0.0, -1.0), "down": (0.0, 1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0),
          "U": (0.0, -1.0), "D": (0.0, 1.0), "L": (-1.0, 0.0), "R": (1.0, 0.0),
          "N": (0.0, -1.0), "S": (0.0, 1.0), "W": (-1.0, 0.0), "E": (1.0, 0.0)}

#: z for a two-sided 95% normal confidence interval.
Z95 = 1.959963984540054


def apply() -> None:
    """Set the house style on matplotlib's global parameters."""
    plt.rcParams.update({
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
        "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        "lines.linewidth": 1.6,
        "image.cmap": "viridis",
    })


def color(name: str, index: int = 0) -> str:
    """An algorithm's colour, or the ``index``-th palette colour for anything else."""
    return ALGORITHM_COLORS.get(name, PALETTE[index % len(PALETTE)])


def figure(ncols: int = 1, nrows: int = 1, width: float = 5.0, height: float = 3.8,
           title: str | None = None, **kwargs):
    """A figure with ``nrows x ncols`` panels of ``width x height`` inches each."""
    apply()
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             squeeze=False, layout="constrained", **kwargs)
    if title:
        fig.suptitle(title, fontsize=12, fontweight="bold")
    return fig, axes


def save(fig, path: Path) -> Path:
    """Write ``fig`` as a PNG atomically (temp file + ``os.replace``) and close it."""
    path = Path(path)
    try:
        atomic_write(path, lambda f: fig.savefig(f, format="png"))
    finally:
        plt.close(fig)
    return path


def mean_band(ax, x, runs, label: str, color_: str | None = None, smooth: int = 1):
    """Mean over runs (axis 0) with its 95% confidence band (mean +- 1.96 s.e.).

    ``smooth`` > 1 first averages each run over a trailing window of that many
    points, which is how the book's per-episode curves are drawn.
    """
    runs = np.atleast_2d(np.asarray(runs, dtype=np.float64))
    if smooth > 1:
        kernel = np.ones(smooth) / smooth
        runs = np.array([np.convolve(r, kernel, mode="valid") for r in runs])
        x = np.asarray(x)[smooth - 1:]
    mean = runs.mean(axis=0)
    line, = ax.plot(x, mean, label=label, color=color_)
    if runs.shape[0] > 1:
        half = Z95 * runs.std(axis=0, ddof=1) / np.sqrt(runs.shape[0])
        ax.fill_between(x, mean - half, mean + half, color=line.get_color(), alpha=0.2,
                        linewidth=0)
    return line


def grid_image(values, cells, shape, fill=np.nan) -> np.ndarray:
    """Scatter per-state ``values`` onto a ``shape`` grid by their ``cells`` (row, col)."""
    image = np.full(shape, fill, dtype=np.float64)
    cells = np.asarray(cells)
    image[cells[:, 0], cells[:, 1]] = values
    return image


def heatmap(ax, image, fmt: str = "{:.1f}", cmap: str = "viridis", annotate: bool = True,
            colorbar_label: str | None = None, vmin=None, vmax=None):
    """An annotated grid of numbers (NaN cells are left blank, e.g. walls)."""
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


def grid_axes(ax, shape, title: str | None = None):
    """Cell-centred axes for a ``shape`` grid: column on x, row on y (row 0 on top)."""
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


def policy_arrows(ax, cells, actions, action_names, color_: str = "black", mask=None,
                  scale: float = 0.35):
    """Arrows of a deterministic policy (or several best actions per cell).

    ``actions`` is ``[S]`` ints, or a bool ``[S, A]`` of the actions to draw in
    each state (ties drawn together, as the book does for v*).
    """
    actions = np.asarray(actions)
    if actions.ndim == 1:
        chosen = np.zeros((actions.shape[0], len(action_names)), dtype=bool)
        chosen[np.arange(actions.shape[0]), actions] = True
    else:
        chosen = actions
    for s, (r, c) in enumerate(np.asarray(cells)):
        if mask is not None and not mask[s]:
            continue
        for a in np.flatnonzero(chosen[s]):
            dx, dy = ARROWS[action_names[a]]
            ax.annotate("", xy=(c + scale * dx, r + scale * dy), xytext=(c, r),
                        arrowprops=dict(arrowstyle="->", color=color_, lw=1.3))


def draw_path(ax, cells, color_: str, label: str, offset: float = 0.0):
    """A visited path through grid cells, drawn as a line with a start dot."""
    cells = np.asarray(cells, dtype=np.float64)
    ax.plot(cells[:, 1] + offset, cells[:, 0] + offset, "-", color=color_, label=label,
            linewidth=2.2, alpha=0.9)
    ax.plot(cells[0, 1] + offset, cells[0, 0] + offset, "o", color=color_, markersize=6)


def greedy_path(mdp, policy, max_steps: int = 200) -> np.ndarray:
    """The cells visited by a deterministic ``policy [S]`` from the most likely start,
    following each action's most likely outcome until the episode ends (``[T, 2]``).

    A policy that loops is cut after ``max_steps`` steps.
    """
    s = int(np.argmax(mdp.start))
    cells = [mdp.state_cells[s]]
    for _ in range(max_steps):
        a = int(policy[s])
        k = int(np.argmax(mdp.prob[s, a]))
        done = bool(mdp.done[s, a, k])
        s = int(mdp.next_state[s, a, k])
        cells.append(mdp.state_cells[s])
        if done:
            break
    return np.array(cells)


def terminal_states(mdp) -> np.ndarray:
    """Bool ``[S]``: absorbing states whose every action ends the episode (nothing to draw)."""
    loops = mdp.next_state == np.arange(mdp.n_states)[:, None, None]
    return np.all((mdp.prob == 0) | (loops & mdp.done), axis=(1, 2))
