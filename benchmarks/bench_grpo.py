"""The GRPO family on the RLHF examples (``tabular.rlhf.grpo`` and
``tabular.rlhf.expected_update``).

Reported, from one run of this process, on one thread:

- seconds per sampled response of a GRPO iteration with ``num_iterations=4`` epochs
  (DAPO's loss, clip-higher) against today's one on-policy step (``num_iterations=1``),
  on the running example (capital of France), in alternated rounds (each round times
  both, best of 3 calls each), and their ratio round by round (the target: at most 2);
- the same with GSPO's sequence-level ratio;
- seconds of one exact expected update on the grammar scenario (108,276 prefixes,
  59,808 responses) for estimators in closed form (target: under 2 s), and one whose
  group statistics need Monte Carlo draws (stated).
"""

from __future__ import annotations

import time

import numba

from benchmarks.timing import Headline, alternated, ratios, spread
from tabular.envs import load_grammar_scenario, load_scenario
from tabular.rlhf import expected_update, grpo
from tabular.rlhf.pipeline import train_pipeline

ITERATIONS = 4000
GROUP = 8
ROUNDS = 7


def per_response(ex, **options) -> float:
    """Best of 3 calls: seconds per sampled response of ``grpo`` with ``options``."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=1.0, iterations=ITERATIONS,
             group_size=GROUP, alpha=0.1, **options)
        best = min(best, time.perf_counter() - t)
    return best / (ITERATIONS * GROUP)


def main() -> list[Headline]:
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    ex = train_pipeline(load_scenario())
    variants = {
        "one step (today)": {},
        "mu=4, dapo, clip-higher": dict(num_iterations=4, loss_type="dapo", epsilon_high=0.28),
        "mu=4, GSPO sequence ratio": dict(num_iterations=4, loss_type="dapo",
                                          importance_sampling_level="sequence"),
    }
    for options in variants.values():  # compile
        grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=1.0, iterations=2, **options)
    figures = alternated({name: (lambda o=o: per_response(ex, **o))
                          for name, o in variants.items()}, ROUNDS)
    headlines = []
    base = figures["one step (today)"]
    for name, values in figures.items():
        print(f"{name:>28}: {spread([v * 1e6 for v in values])} us per sampled response")
        if values is not base:
            r = ratios(values, base)
            print(f"{'':>28}  ratio to one step: {spread(r)} ({ROUNDS} alternated rounds)")
            headlines.append(Headline(f"GRPO {name} per sampled response",
                                      f"{sorted(values)[ROUNDS // 2] * 1e6:.2f} us",
                                      f"one step {sorted(base)[ROUNDS // 2] * 1e6:.2f} us",
                                      f"{sorted(r)[ROUNDS // 2]:.2f}x the time"))
    big = train_pipeline(load_grammar_scenario("assistant"))
    for name, options in {"RLOO, k1 in the reward (closed form)": dict(advantage="rloo"),
                          "Dr. GRPO, k3 as a loss (closed form)": dict(
                              scale_rewards="none", loss_type="dr_grpo", kl_placement="loss",
                              kl_estimator="k3"),
                          "GRPO, group std (Monte Carlo)": dict(samples=256)}.items():
        expected_update(big.mdp, big.reference, ref_policy=big.reference, beta=1.0, **options)
        seconds = []
        for _ in range(3):
            t = time.perf_counter()
            u = expected_update(big.mdp, big.reference, ref_policy=big.reference, beta=1.0,
                                **options)
            seconds.append(time.perf_counter() - t)
        print(f"exact expected update, 108,276 prefixes, {name}: {spread(seconds)} s "
              f"({u.method}{f', {u.samples} draws per prompt' if u.samples else ''})")
        headlines.append(Headline(f"exact expected update, 108,276 prefixes, {name}",
                                  f"{min(seconds):.2f} s", "target 2 s", "-"))
    numba.set_num_threads(threads)
    return headlines


if __name__ == "__main__":
    main()
