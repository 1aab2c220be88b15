"""rlberry-scool (0.7.3) as a peer of UCBVI, on the same RiverSwim.

rlberry-scool's ``UCBVIAgent`` runs in a virtual environment of its own under
``.peers/rlberry`` (:mod:`benchmarks.peers`; rlberry 0.7.3 pins ``gymnasium<0.30``, and is
never installed into the project's environment), on rlberry's ``FiniteMDP`` built from
the zoo's RiverSwim (``H = 20``, start at the left bank; the same ``P`` and the same mean
rewards, which on RiverSwim are the rewards: they depend on the pair only).

The two are not the same algorithm, so their regrets are reported side by side, not
tested for agreement. rlberry's UCBVI (``bonus_type="simplified_bernstein"``) adds
``min(c / sqrt(n) + v_max / n, v_max)`` to the reward, refreshes the bonus of a pair only
at the stage ``h`` it was visited (the other stages keep the previous value, at first
``v_max``), clips ``V`` at ``v_max = H`` (the reward range times ``H``) at every stage
and gives an unvisited pair the uniform law; the zoo's UCBVI-CH adds ``7 H L / sqrt(n)``
(times ``scale``) and caps ``Q_h`` at ``(H - h) r_max``. The bench sets rlberry's ``c``
to the zoo's leading coefficient ``7 H L scale`` so that the ``1 / sqrt(n)`` terms match.

What is checked is the measure: rlberry's greedy table of every episode (``argmax_a
Q[h, s, a]`` before the episode, the lowest action on ties, as its agent acts) is
evaluated exactly by :func:`tabular.regret`, and the returns rlberry's episodes
collected average to those exact values within 4 standard errors: the instance is the
same. Reported: the mean final exact regret of each side with its standard error, and
episodes per second of each (one thread) in alternated rounds, with their ratio.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from benchmarks.peers import call_peer, peer_python
from benchmarks.timing import Headline, alternated, ratios, spread
from tabular.envs import RiverSwim
from tabular.explore import regret, ucbvi
from tabular.explore.communication import continuing_kernel

REQUIREMENTS = ("rlberry-scool==0.7.3", "rlberry==0.7.3")
H, EPISODES, RUNS, PEER_RUNS, ROUNDS = 20, 1000, 64, 8, 3
#: The zoo's UCBVI-CH bonus scale (as in the exploration_regret figure).
SCALE = 0.01
DELTA = 0.1

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
                 "horizon": H}


def leading_coefficient(mdp) -> float:
    """The zoo's UCBVI-CH ``1 / sqrt(n)`` coefficient, ``scale 7 H L`` with ``L = ln(5 S A
    T / delta)`` and the reward span 1: rlberry's ``bonus_scale_factor``."""
    L = np.log(5.0 * mdp.n_states * mdp.n_actions * H * EPISODES / DELTA)
    return SCALE * 7.0 * H * float(np.ptp(mdp.reward)) * L


def main() -> list[Headline]:
    python = peer_python("rlberry", REQUIREMENTS)
    if python is None:
        return []
    mdp, job = instance()
    job |= {"c": leading_coefficient(mdp), "episodes": EPISODES}
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        ours = regret(mdp, ucbvi(mdp, horizon=H, episodes=EPISODES, bonus="hoeffding",
                                 scale=SCALE, delta=DELTA, runs=RUNS, seed=0))
        peer = call_peer(python, PEER_SCRIPT, {**job, "runs": PEER_RUNS, "seed": 0,
                                               "record": True})
        theirs = regret(mdp, np.array(peer["tables"], dtype=np.int64))
        drift = (np.array(peer["returns"]) - theirs.values).ravel()
        mean, se = drift.mean(), drift.std(ddof=1) / np.sqrt(drift.size)
        verdict = "same instance" if abs(mean) < 4 * se else "DIFFERENT INSTANCE"
        print(f"rlberry UCBVI: returns - exact values of its policies {mean:+.4f} "
              f"(s.e. {se:.4f}): {verdict} (4 s.e.)")
        a, b = ours.cumulative[:, -1], theirs.cumulative[:, -1]
        print(f"exact regret after {EPISODES} episodes (T = {EPISODES * H}): zoo UCBVI-CH "
              f"x {SCALE:g} {a.mean():.1f} ± {a.std(ddof=1) / np.sqrt(a.size):.1f} "
              f"({RUNS} runs), rlberry simplified Bernstein c = {job['c']:.3g} "
              f"{b.mean():.1f} ± {b.std(ddof=1) / np.sqrt(b.size):.1f} ({PEER_RUNS} runs); "
              f"not the same algorithm (bench_explore_peers' docstring): no agreement test")

        def zoo() -> float:
            t = time.perf_counter()
            ucbvi(mdp, horizon=H, episodes=EPISODES, bonus="hoeffding", scale=SCALE,
                  delta=DELTA, runs=RUNS, seed=1)
            return RUNS * EPISODES / (time.perf_counter() - t)

        def rlberry() -> float:
            out = call_peer(python, PEER_SCRIPT, {**job, "runs": 1, "seed": 1,
                                                  "record": False})
            return EPISODES / out["seconds"]

        figures = alternated({"zoo": zoo, "peer": rlberry}, ROUNDS)
        ratio = ratios(figures["zoo"], figures["peer"])
        print(f"UCBVI episodes/s (H = {H}): zoo {spread(figures['zoo'], '{:,.0f}')}, rlberry "
              f"{spread(figures['peer'], '{:,.0f}')}: {spread(ratio, '{:.0f}')}x "
              f"({ROUNDS} alternated rounds)")
    finally:
        numba.set_num_threads(threads)
    return [Headline("UCBVI vs rlberry-scool, RiverSwim H = 20",
                     f"{np.median(figures['zoo']) / 1e3:.1f}k episodes/s",
                     f"rlberry {np.median(figures['peer']):.0f} episodes/s",
                     f"{np.median(ratio):.0f}x")]


if __name__ == "__main__":
    main()
