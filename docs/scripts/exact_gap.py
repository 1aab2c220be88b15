"""docs/exact_gap.png: the exact gap J* - J(pi_t) of PPO, GRPO and DPO on the running
example, from their training histories (``history=True``).

    python docs/scripts/exact_gap.py [OUT]      # default: docs/exact_gap.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from tabular import ppo  # noqa: E402
from tabular.envs import load_scenario  # noqa: E402
from tabular.rlhf import dpo, grpo, train_pipeline  # noqa: E402

BETA, RUNS, ITERATIONS, DPO_STEPS = 0.5, 16, 200, 2000


def main(out: Path) -> None:
    ex = train_pipeline(load_scenario())
    ref = ex.reference
    rl = {"ref_policy": ref, "beta": BETA, "runs": RUNS, "history": True, "eval_every": 2}
    sc = ex.scenario
    curves = {
        "PPO (batches of 8 replies, 4 epochs)": ppo(ex.mdp, ref, iterations=ITERATIONS, **rl),
        "GRPO (groups of 8 replies)": grpo(ex.mdp, ref, iterations=ITERATIONS, **rl),
        "DPO (full-batch steps on the comparisons)": dpo(
            ex.env, ref, [(c, sc.prompt, w, lo) for c, w, lo in sc.preferences], beta=BETA,
            ref_policy=ref, steps=DPO_STEPS, history=True, eval_every=10),
    }
    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    for (label, res), color in zip(curves.items(), ("#0072B2", "#D55E00", "#009E73"),
                                   strict=True):
        h = res.history
        gap = np.atleast_2d(h["exact/gap"])
        x = np.maximum(h.iteration, 0.5)  # the start at iteration 0, on a log axis
        mean = gap.mean(axis=0)
        ax.plot(x, mean, color=color, label=label + (f", mean of {RUNS} runs"
                                                      if len(gap) > 1 else ""))
        if len(gap) > 1:
            lo, hi = np.quantile(gap, [0.1, 0.9], axis=0)
            ax.fill_between(x, lo, hi, color=color, alpha=0.15, linewidth=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("iteration (PPO: batch, GRPO: group, DPO: gradient step; 0 drawn at 0.5)")
    ax.set_ylabel("J* - J(pi_t), exact on the prefix tree")
    ax.set_title(f"Capital of France, beta = {BETA:g}: the exact gap to the KL-regularised "
                 "optimum\n(history=True; bands: 10-90% of runs)", fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "exact_gap.png")
