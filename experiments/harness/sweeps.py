"""Reading a step-size sweep: the figures that plot an error against alpha for each of
several settings (Figure 7.2's n-step TD, Figure 9.2 right's n-step aggregation) report
each setting's best step size alike."""

from __future__ import annotations


def best_step_sizes(results: dict):
    """The table of each n's best step size and its error: ``results["errors"]`` is
    ``[n, alpha, run]`` over ``results["n_steps"]`` and ``results["alphas"]``; the best
    alpha is the one of least mean error over the runs (the first on a tie)."""
    mean = results["errors"].mean(axis=2)
    best = mean.argmin(axis=1)
    return (["n", "best alpha", "RMS error"],
            [[int(n), float(results["alphas"][b]), round(float(mean[i, b]), 4)]
             for i, (n, b) in enumerate(zip(results["n_steps"], best, strict=True))])
