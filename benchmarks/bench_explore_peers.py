"""rlberry-scool (0.7.3) as a peer of UCBVI: the same algorithm on the same RiverSwim.

rlberry-scool's ``UCBVIAgent`` runs in a virtual environment of its own under
``.peers/rlberry`` (:mod:`benchmarks.peers`; rlberry 0.7.3 pins ``gymnasium<0.30``, and is
never installed into the project's environment), on rlberry's ``FiniteMDP`` built from
the zoo's RiverSwim (``H = 20``, start at the left bank; the same ``P`` and the same mean
rewards, which on RiverSwim are the rewards: they depend on the pair only).

The zoo's side is ``ucbvi(bonus="simplified_bernstein", scale=c)``, rlberry's algorithm
(its default ``bonus_type``) in full: the stage bonus ``min(c / sqrt(n) + v_h / n,
v_h)`` refreshed only at the stage of a visit, ``V`` capped at ``H``, the uniform law
for an unvisited pair; both sides use rlberry's default ``c = 1``. Two checks:

- the instance is the same: rlberry's greedy table of every episode (``argmax_a Q[h, s,
  a]`` before the episode, the lowest action on ties, as its agent acts) is evaluated
  exactly by :func:`tabular.regret`, and the returns rlberry's episodes collected
  average to those exact values within 4 standard errors;
- the algorithm is the same: the mean exact regret of each side after 100 episodes (the
  young counts: the first bonuses and the uniform law) and after 1000 (independent
  random streams: the same instance, not the same draws) agree within ``z = 4``
  standard errors of their difference, ``se = sqrt(s_zoo^2 / n_zoo + s_rlberry^2 /
  n_rlberry)`` from the spread over runs (a two-sided level of 6e-5 under the normal
  approximation of each mean, as ``bench_bandit_peers``).

Also reported: episodes per second of each side (one thread) in alternated rounds, with
their ratio. No network, or a failed build: the bench says why and reports nothing.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.peers import call_peer, peer_python
from benchmarks.timing import Headline, numba_threads, spread, versus
from tabular.envs import RiverSwim
from tabular.explore import regret, ucbvi
from tabular.explore.communication import continuing_kernel

REQUIREMENTS = ("rlberry-scool==0.7.3", "rlberry==0.7.3")
H, EPISODES, RUNS, PEER_RUNS, ROUNDS = 20, 1000, 256, 32, 3
#: rlberry's ``bonus_scale_factor`` (its default), the zoo's ``scale``.
C = 1.0
#: Standard errors within which the two sides must agree.
Z = 4.0
#: The episodes after which the cumulative regrets are compared.
CHECKPOINTS = (100, EPISODES)

#: What the peer's interpreter runs: ``runs`` agents on the FiniteMDP, each seeded
#: ``seed + run``; with ``record``, the greedy table before each episode and the
#: episode's return; prints them and the seconds the episodes took.
PEER_SCRIPT = """
import json, sys, time
import numpy as np
from rlberry.envs.finite_mdp import FiniteMDP
from rlberry_scool.agents import UCBVIAgent
job = json.loads(sys.stdin.read())
R, P = np.array(job["R"]), np.array(job["P"])
tables, returns, seconds = [], [], 0.0
for run in range(job["runs"]):
    env = FiniteMDP(R, P.copy(), initial_state_distribution=job["start"])
    agent = UCBVIAgent(env, horizon=job["horizon"], gamma=1.0,
                       bonus_scale_factor=job["c"], seeder=job["seed"] + run)
    run_tables, run_returns = [], []
    for k in range(job["episodes"]):
        if job["record"]:
            run_tables.append(agent.Q.argmax(axis=2).tolist())
        start = time.perf_counter()
        run_returns.append(float(agent._run_episode()))
        seconds += time.perf_counter() - start
    tables.append(run_tables)
    returns.append(run_returns)
print(json.dumps({"tables": tables, "returns": returns, "seconds": seconds}))
"""


def instance() -> tuple:
    """RiverSwim's model and the job fields that make rlberry's ``FiniteMDP`` of it."""
    mdp = RiverSwim().to_mdp()
    P, R = continuing_kernel(mdp)
    P = P / P.sum(axis=2, keepdims=True)  # rlberry checks each row sums to 1 within 1e-15
    return mdp, {"R": R.tolist(), "P": P.tolist(), "start": int(np.argmax(mdp.start)),
                 "horizon": H, "c": C, "episodes": EPISODES}


def zoo_ucbvi(mdp, runs: int, seed: int):
    """The zoo's run of rlberry's algorithm: UCBVI with the simplified Bernstein bonus."""
    return ucbvi(mdp, horizon=H, episodes=EPISODES, bonus="simplified_bernstein", scale=C,
                 runs=runs, seed=seed)


def mean_and_se(x: np.ndarray) -> tuple[float, float]:
    """The mean of ``x`` and its standard error ``s / sqrt(n)``."""
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))


def check_instance(mdp, peer: dict):
    """rlberry's exact regret, after checking that its returns average to the exact
    values of the tables it followed (the same instance) within 4 standard errors."""
    theirs = regret(mdp, np.array(peer["tables"], dtype=np.int64))
    drift, se = mean_and_se((np.array(peer["returns"]) - theirs.values).ravel())
    verdict = "same instance" if abs(drift) < 4 * se else "DIFFERENT INSTANCE"
    print(f"rlberry UCBVI: returns - exact values of its policies {drift:+.4f} "
          f"(s.e. {se:.4f}): {verdict} (4 s.e.)")
    return theirs


def check_agreement(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Print the exact cumulative regrets of both sides (``[runs, K]``) at each of
    :data:`CHECKPOINTS` and whether they agree within ``Z`` standard errors of the
    difference."""
    for k in CHECKPOINTS:
        (a, se_a), (b, se_b) = mean_and_se(ours[:, k - 1]), mean_and_se(theirs[:, k - 1])
        diff, se = a - b, float(np.hypot(se_a, se_b))
        verdict = "agree" if abs(diff) <= Z * se else "DISAGREE"
        print(f"exact regret after {k} episodes (T = {k * H}), simplified Bernstein c = "
              f"{C:g}: zoo {a:.2f} ± {se_a:.2f} ({len(ours)} runs), rlberry {b:.2f} ± "
              f"{se_b:.2f} ({len(theirs)} runs), difference {diff:+.2f}, s.e. {se:.2f}: "
              f"{verdict} ({Z:g} s.e.)")


def main() -> list[Headline]:
    python = peer_python("rlberry", REQUIREMENTS)
    if python is None:
        return []
    mdp, job = instance()
    with numba_threads(1):
        ours = regret(mdp, zoo_ucbvi(mdp, RUNS, 0)).cumulative
        peer = call_peer(python, PEER_SCRIPT, {**job, "runs": PEER_RUNS, "seed": 0,
                                               "record": True})
        check_agreement(ours, check_instance(mdp, peer).cumulative)

        def zoo() -> float:
            t = time.perf_counter()
            zoo_ucbvi(mdp, RUNS, 1)
            return RUNS * EPISODES / (time.perf_counter() - t)

        def rlberry() -> float:
            out = call_peer(python, PEER_SCRIPT, {**job, "runs": 1, "seed": 1,
                                                  "record": False})
            return EPISODES / out["seconds"]

        zoo_rates, peer_rates, ratio = versus(zoo, rlberry, ROUNDS)
    print(f"UCBVI episodes/s (H = {H}): zoo {spread(zoo_rates, '{:,.0f}')}, rlberry "
          f"{spread(peer_rates, '{:,.0f}')}: {spread(ratio, '{:.0f}')}x "
          f"({ROUNDS} alternated rounds)")
    return [Headline("UCBVI (simplified Bernstein) vs rlberry-scool, RiverSwim H = 20",
                     f"{np.median(zoo_rates) / 1e3:.1f}k episodes/s",
                     f"rlberry {np.median(peer_rates):.0f} episodes/s",
                     f"{np.median(ratio):.0f}x")]


if __name__ == "__main__":
    main()
