"""One look for every figure: the drawing helpers of :mod:`tabular.plot`, one colour per
algorithm, and atomic PNG files.

Every experiment draws through these helpers, so a reader who has learnt one
figure can read the next: the same algorithm always has the same colour, a band
is always a 95% confidence interval of the mean over runs, a grid is always
drawn with row 0 at the top.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from tabular.experiments.harness.storage import atomic_write  # noqa: E402
from tabular.plot import (  # noqa: E402,F401  (the helpers every figure uses)
    PALETTE,
    Z95,
    draw_path,
    figure,
    greedy_path,
    grid_axes,
    grid_image,
    heatmap,
    mean_band,
    policy_arrows,
    terminal_states,
    value_map,
)

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


def color(name: str, index: int = 0) -> str:
    """An algorithm's colour, or the ``index``-th palette colour for anything else."""
    return ALGORITHM_COLORS.get(name, PALETTE[index % len(PALETTE)])


def window(smooth: int, curves) -> int:
    """A figure's smoothing window (in episodes) for ``curves`` (``[..., episodes]``): at
    most their length, so that a run shorter than the window (``--set episodes=5``) is
    averaged over all its episodes rather than refused by :func:`mean_band`."""
    return max(1, min(smooth, np.shape(curves)[-1]))


def label(ax, x: str, y: str, *, log: str = "", title: str | None = None,
          legend: float | None = None) -> None:
    """Name a panel the house way: log scales on the axes ``log`` names (``"x"``, ``"y"``
    or ``"xy"``), the axes' labels ``x`` and ``y``, a ``title`` in small type (9 points,
    under the figure's bold one) and a legend in ``legend`` points (``None``: none)."""
    if not isinstance(log, str) or log not in ("", "x", "y", "xy"):
        raise ValueError(f"log names the axes on a log scale: '', 'x', 'y' or 'xy'; got {log!r}")
    for axis in log:
        getattr(ax, f"set_{axis}scale")("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if title is not None:
        ax.set_title(title, fontsize=9)
    if legend is not None:
        ax.legend(fontsize=legend)


def save(fig, path: Path) -> Path:
    """Write ``fig`` as a PNG atomically (temp file + ``os.replace``) and close it."""
    path = Path(path)
    try:
        atomic_write(path, lambda f: fig.savefig(f, format="png"))
    finally:
        plt.close(fig)
    return path
