"""SMPyBandits (0.9.7, the last release, 2019) as a peer of Thompson sampling and KL-UCB.

SMPyBandits' ``Thompson`` (Beta posterior) and ``klUCB`` (Bernoulli KL, ``c = 1``, its
bisection to 1e-4) on the same Bernoulli instance, run in a virtual environment of its
own that this bench builds once under ``.peers/smpybandits`` (:mod:`benchmarks.peers`;
SMPyBandits imports ``scipy.special.btdtri``, removed from SciPy 1.12+, and is never
installed into the project's environment). Reported:

- the mean final pseudo-regret of each side with its standard error, and whether they
  agree within 4 standard errors of the difference (independent random streams: the
  same instance, not the same draws);
- pulls per second of each side (the peer's loop is Python; the zoo's, one thread) in
  alternated rounds, and their ratio.

No network, or a failed build: the bench says why and reports nothing for the peer.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import numpy as np

from benchmarks.peers import call_peer, peer_python
from benchmarks.timing import Headline, numba_threads, spread, versus
from tabular import BanditArms, kl_ucb, thompson_sampling

REQUIREMENTS = ("smpybandits==0.9.7", "scipy<1.12", "pandas<2.2")
MEANS = (0.9, 0.8, 0.7, 0.5)
STEPS, RUNS, PEER_RUNS, ROUNDS = 2000, 400, 40, 3

#: What the peer's interpreter runs: ``RUNS`` runs of each policy on the instance, each
#: run's rewards from its own NumPy stream; prints the final pseudo-regrets and seconds.
PEER_SCRIPT = """
import json, sys, time
import numpy as np
from SMPyBandits.Policies import Thompson, klUCB
job = json.loads(sys.stdin.read())
means = np.array(job["means"]); best = means.max(); k = means.size
policy_class = {"thompson_sampling": Thompson, "kl_ucb": klUCB}[job["policy"]]
regrets, start = [], time.perf_counter()
for run in range(job["runs"]):
    rng = np.random.default_rng([job["seed"], run])
    policy = policy_class(k)
    policy.startGame()
    pseudo = 0.0
    for t in range(job["steps"]):
        a = policy.choice()
        policy.getReward(a, float(rng.random() < means[a]))
        pseudo += best - means[a]
    regrets.append(pseudo)
print(json.dumps({"regret": regrets, "seconds": time.perf_counter() - start}))
"""


def run_peer(python: Path, policy: str, runs: int, seed: int) -> dict:
    return call_peer(python, PEER_SCRIPT, {"means": MEANS, "steps": STEPS, "runs": runs,
                                           "policy": policy, "seed": seed})


def main() -> list[Headline]:
    python = peer_python("smpybandits", REQUIREMENTS)
    if python is None:
        return []
    arms = BanditArms(MEANS)
    headlines = []
    with numba_threads(1):
        for name, ours in (("thompson_sampling", thompson_sampling),
                           ("kl_ucb", partial(kl_ucb, tol=1e-4))):  # SMPyBandits' tolerance
            ours(arms, steps=10, runs=2)  # compile
            mine = ours(arms, steps=STEPS, runs=RUNS, seed=0).pseudo_regret[:, -1]
            theirs = np.array(run_peer(python, name, PEER_RUNS, 0)["regret"])
            diff = mine.mean() - theirs.mean()
            se = np.sqrt(mine.var(ddof=1) / mine.size + theirs.var(ddof=1) / theirs.size)
            verdict = "agree" if abs(diff) < 4 * se else "DISAGREE"
            print(f"{name:>18}: pseudo-regret at T = {STEPS}: zoo {mine.mean():.2f} "
                  f"({RUNS} runs), SMPyBandits {theirs.mean():.2f} ({PEER_RUNS} runs), "
                  f"difference {diff:+.2f}, s.e. {se:.2f}: {verdict} (4 s.e.)")

            def zoo(ours=ours) -> float:
                t = time.perf_counter()
                ours(arms, steps=STEPS, runs=RUNS, seed=1)
                return RUNS * STEPS / (time.perf_counter() - t)

            def peer(name=name) -> float:
                out = run_peer(python, name, 2, 1)
                return 2 * STEPS / out["seconds"]

            zoo_rates, peer_rates, ratio = versus(zoo, peer, ROUNDS)
            print(f"{name:>18}: zoo {spread(zoo_rates, '{:,.0f}')} pulls/s, SMPyBandits "
                  f"{spread(peer_rates, '{:,.0f}')}: {spread(ratio, '{:.0f}')}x "
                  f"({ROUNDS} alternated rounds)")
            headlines.append(Headline(f"{name} vs SMPyBandits, 4 Bernoulli arms",
                                      f"{np.median(zoo_rates) / 1e6:.2f}M pulls/s",
                                      f"SMPyBandits {np.median(peer_rates) / 1e3:.1f}k "
                                      f"pulls/s", f"{np.median(ratio):.0f}x"))
    return headlines


if __name__ == "__main__":
    main()
