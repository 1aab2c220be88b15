"""Many independent runs of Q-learning at once: ``q_learning(runs=256)`` against JAX.

An experiment averages hundreds of runs; the way a JAX user writes that is one run as
a ``lax.scan`` over steps, ``vmap``-ed over runs and ``jit``-ed. :func:`jax_q_learning`
is that program, written as its users would: the same model arrays (``[S, A, K]``,
dense), epsilon-greedy with random tie-breaking, an outcome drawn by inverse CDF,
an episode restarted from a start state drawn from the start distribution when it
ends or reaches the step limit, float64. Its uniform numbers are drawn in one batch
per run before the scan, which is the fastest way we found to feed a scan (a key
split per step is several times slower).

The task is CliffWalking-v1 (48 states, deterministic), ``alpha = 0.5``, ``epsilon =
0.1``, ``gamma = 1``, 256 runs. Both sides are counted in environment steps per
second: ours runs ``EPISODES`` episodes per run and counts their steps; JAX runs that
many steps per run (the mean of ours) as one scan, so the two do the same work.
JAX's thread pool is held to one thread (as in ``bench_dp``), and ours is timed on
one thread and on two.

Each of ``ROUNDS`` rounds times every side once (best of two calls, after a warm-up
call before the rounds that also compiles); the ratios of the rounds are printed as
median [min-max] (:func:`benchmarks.timing.spread`). JAX's compile time is the first
call's. Without JAX installed (the optional ``[bench]`` extra), the bench says so and
reports ours alone.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np

from benchmarks.bench_dp import import_jax
from benchmarks.timing import Headline, alternated, best_seconds, numba_threads, ratios, spread
from tabular import TabularMDP, q_learning

RUNS = 256
EPISODES = 500
ALPHA, EPSILON, GAMMA = 0.5, 0.1, 1.0
ROUNDS = 5


def jax_q_learning(mdp: TabularMDP, jax_modules, steps: int, max_steps: int):
    """A jitted ``run(keys) -> (Q [runs, S, A], episodes finished per run)``: Q-learning
    (eq. 6.8) for ``steps`` environment steps per run, one run per key."""
    jax, jnp = jax_modules
    next_state, reward = jnp.asarray(mdp.next_state), jnp.asarray(mdp.reward)
    done = jnp.asarray(mdp.done)
    S, A, K = mdp.prob.shape

    start_cdf = jnp.cumsum(jnp.asarray(mdp.start))
    prob_cdf = jnp.cumsum(jnp.asarray(mdp.prob), axis=2)

    def step(carry, u):
        # u: this step's uniforms, drawn in one batch before the scan (cheaper than a
        # key split per step): explore, random action, outcome, restart, A tie-breakers
        Q, s, t, episodes = carry
        q_row = Q[s]
        greedy = jnp.argmax(jnp.where(q_row == q_row.max(), u[4:], -1.0))
        random = jnp.minimum((u[1] * A).astype(jnp.int32), A - 1)
        a = jnp.where(u[0] < EPSILON, random, greedy)
        k = jnp.minimum(jnp.searchsorted(prob_cdf[s, a], u[2], side="right"), K - 1)
        s_next, r, ends = next_state[s, a, k], reward[s, a, k], done[s, a, k]
        target = r + GAMMA * jnp.where(ends, 0.0, Q[s_next].max())
        Q = Q.at[s, a].add(ALPHA * (target - Q[s, a]))
        restart = ends | (t + 1 >= max_steps)
        fresh = jnp.minimum(jnp.searchsorted(start_cdf, u[3], side="right"), S - 1)
        s = jnp.where(restart, fresh, s_next).astype(jnp.int64)
        t = jnp.where(restart, 0, t + 1)
        return (Q, s, t, episodes + restart), None

    def one_run(key):
        start_key, noise_key = jax.random.split(key)
        s0 = jnp.minimum(jnp.searchsorted(start_cdf, jax.random.uniform(start_key),
                                          side="right"), S - 1).astype(jnp.int64)
        noise = jax.random.uniform(noise_key, (steps, A + 4))
        carry = (jnp.zeros((S, A)), s0, jnp.int64(0), jnp.int64(0))
        (Q, _, _, episodes), _ = jax.lax.scan(step, carry, noise)
        return Q, episodes

    return jax.jit(jax.vmap(one_run))


def ours_seconds(mdp: TabularMDP, threads: int) -> float:
    with numba_threads(threads):
        return best_seconds(lambda: q_learning(mdp, gamma=GAMMA, episodes=EPISODES,
                                               alpha=ALPHA, epsilon=EPSILON, runs=RUNS), 2)


def main() -> list[Headline]:
    jax_modules = import_jax()
    mdp = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    result = q_learning(mdp, gamma=GAMMA, episodes=EPISODES, alpha=ALPHA, epsilon=EPSILON,
                        runs=RUNS)
    total = int(result.episode_lengths.sum())
    per_run = total // RUNS
    measures = {"ours_1t": lambda: ours_seconds(mdp, 1), "ours_2t": lambda: ours_seconds(mdp, 2)}
    if jax_modules is not None:
        jax, jnp = jax_modules
        run = jax_q_learning(mdp, jax_modules, per_run, mdp.max_episode_steps or 10_000)
        keys = jax.random.split(jax.random.PRNGKey(0), RUNS)
        t = time.perf_counter()
        Q, episodes = jax.block_until_ready(run(keys))
        compile_s = time.perf_counter() - t
        greedy_ok = _learned_the_cliff(mdp, np.asarray(Q))
        measures["jax"] = lambda: best_seconds(lambda: jax.block_until_ready(run(keys)), 2)
    rounds = alternated(measures, ROUNDS)
    print(f"Q-learning, CliffWalking-v1, {RUNS} runs x {EPISODES} episodes "
          f"({total:,} steps; JAX: {per_run:,} steps per run), best of 2 calls per round, "
          f"{ROUNDS} alternated rounds, median [min-max]:")
    for name, seconds in rounds.items():
        rates = [RUNS * per_run / s if name == "jax" else total / s for s in seconds]
        print(f"  {name:>8}: {spread([r / 1e6 for r in rates], '{:.1f}')}M steps/s")
    headlines = []
    if jax_modules is not None:
        # per-step times: JAX ran RUNS * per_run steps, ours `total`
        jax_per_step = [s / (RUNS * per_run) for s in rounds["jax"]]
        for threads in (1, 2):
            ours_per_step = [s / total for s in rounds[f"ours_{threads}t"]]
            ratio = ratios(jax_per_step, ours_per_step)
            print(f"  ours on {threads} thread(s) against JAX (vmap + lax.scan, 1 thread): "
                  f"{spread(ratio)}x")
            headlines.append(Headline(
                f"Q-learning, {RUNS} runs, CliffWalking-v1, {threads} thread(s)",
                f"{total / min(rounds[f'ours_{threads}t']) / 1e6:.1f}M steps/s",
                f"JAX vmap + lax.scan {RUNS * per_run / min(rounds['jax']) / 1e6:.1f}M steps/s",
                f"{spread(ratio, '{:.1f}')}x"))
        print(f"  JAX: first call (compile + run) {compile_s:.2f} s; its greedy policies "
              f"reach the goal in {greedy_ok} of {RUNS} runs; episodes per run "
              f"{int(np.median(np.asarray(episodes)))} (median; ours {EPISODES})")
    else:
        print("  JAX is not installed (pip install 'tabular-zoo[bench]'): no peer")
    return headlines


def _learned_the_cliff(mdp: TabularMDP, Q: np.ndarray) -> int:
    """How many runs' greedy policies reach the goal from the start (a check that the JAX
    program learns what Q-learning learns, not only that it runs)."""
    start = int(np.argmax(mdp.start))
    reached = 0
    for run in range(Q.shape[0]):
        s, seen = start, set()
        while s not in seen:
            seen.add(s)
            a = int(np.argmax(Q[run, s]))
            if mdp.done[s, a, 0] and mdp.reward[s, a, 0] > -100:
                reached += 1
                break
            s = int(mdp.next_state[s, a, 0])
    return reached


if __name__ == "__main__":
    main()
