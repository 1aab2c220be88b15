"""The episodic exploration learners (``tabular/explore/``) against the same algorithms
written as plain Python loops.

Reported, from one run of this process, on RiverSwim (6 states, ``H = 20``):

- each learner's steps per second on one thread, and the same algorithm as the Python
  loop a user would write without the zoo (the house's reference: Python over
  ``gymnasium.make("tabzoo/RiverSwim-v0").step``, statistics in lists, planning by
  nested loops, draws from :mod:`random`);
- the ratio, the best of ``ROUNDS`` rounds of each, the two alternated so that a busy
  machine slows both alike.
"""

from __future__ import annotations

import math
import random
import time

import gymnasium as gym
import numba
import numpy as np

from benchmarks.timing import Headline
from tabular.envs import RiverSwim  # also registers tabzoo/
from tabular.explore import (
    delayed_q_learning,
    epsilon_greedy_q_learning,
    mbie_eb,
    optimistic_q_learning,
    psrl,
    rlsvi,
    rmax,
    ucbvi,
    ucrl2,
)

H = 20
#: Episodes of one kernel call and of one Python-loop call.
KERNEL_EPISODES, PYTHON_EPISODES = 20_000, 100
ROUNDS = 3


class PythonModel:
    """What the Python loops know in advance (``S``, ``A``, the reward range, as the
    kernels do) and the env they step: ``gymnasium.make("tabzoo/RiverSwim-v0")``."""

    def __init__(self, mdp) -> None:
        self.S, self.A = mdp.n_states, mdp.n_actions
        self.rewards = mdp.reward[mdp.prob > 0]
        self.env = gym.make("tabzoo/RiverSwim-v0")
        self.env.reset(seed=0)

    def reset(self) -> int:
        """Start an episode: the env's start state."""
        return int(self.env.reset()[0])

    def step(self, s, a, rng):
        """One step of the env from the state it is in (``s``: where the loop thinks it
        is, the same state); returns ``(s', r)``."""
        s_next, r, _, _, _ = self.env.step(a)
        return s_next, r


def play_greedy(model: PythonModel, greedy, counts, visits, rsum, rng) -> None:
    """One episode of ``H`` steps, action ``greedy[h][s]`` at step ``h``, counted into the
    statistics of the model-based loops: ``counts[s][a][s']``, ``visits[s][a]``, and the
    summed rewards ``rsum[s][a]``."""
    s = model.reset()
    for h in range(H):
        a = greedy[h][s]
        s2, r = model.step(s, a, rng)
        counts[s][a][s2] += 1
        visits[s][a] += 1
        rsum[s][a] += r
        s = s2


def python_ucbvi(model: PythonModel, episodes: int, seed: int = 0) -> int:
    """UCBVI with the Bernstein bonus of :func:`tabular.explore.ucbvi`, as Python loops."""
    rng = random.Random(seed)
    S, A = model.S, model.A
    r_max, span = float(model.rewards.max()), float(np.ptp(model.rewards))
    L = math.log(5 * S * A * H * episodes / 0.1)
    counts = [[[0.0] * S for _ in range(A)] for _ in range(S)]
    visits = [[0.0] * A for _ in range(S)]
    rsum = [[0.0] * A for _ in range(S)]
    for _ in range(episodes):
        V = [0.0] * S
        greedy = [[0] * S for _ in range(H)]
        for h in range(H - 1, -1, -1):
            cap = (H - h) * r_max
            new = [0.0] * S
            for s in range(S):
                best, best_a = -math.inf, 0
                for a in range(A):
                    n = visits[s][a]
                    q = cap
                    if n > 0:
                        mean = sum(c * v for c, v in zip(counts[s][a], V, strict=True)) / n
                        second = sum(c * v * v for c, v in zip(counts[s][a], V, strict=True)) / n
                        b = (math.sqrt(8 * L * max(second - mean * mean, 0.0) / n)
                             + 14 * H * span * L / (3 * n))
                        q = min(cap, rsum[s][a] / n + mean + b)
                    if q > best:
                        best, best_a = q, a
                new[s], greedy[h][s] = best, best_a
            V = new
        play_greedy(model, greedy, counts, visits, rsum, rng)
    return episodes * H


def python_psrl(model: PythonModel, episodes: int, seed: int = 0) -> int:
    """PSRL with the posterior of :func:`tabular.explore.psrl`, as Python loops."""
    rng = random.Random(seed)
    S, A = model.S, model.A
    r_max, span = float(model.rewards.max()), float(np.ptp(model.rewards))
    tau, alpha = 4 / span ** 2, 1 / (S + 1)
    counts = [[[0.0] * (S + 1) for _ in range(A)] for _ in range(S)]
    visits = [[0.0] * A for _ in range(S)]
    rsum = [[0.0] * A for _ in range(S)]
    for _ in range(episodes):
        P, R = [], []
        for s in range(S):
            P.append([]), R.append([])
            for a in range(A):
                g = [rng.gammavariate(alpha + c, 1.0) for c in counts[s][a]]
                total = sum(g)
                P[s].append([x / total for x in g])
                precision = tau + visits[s][a] * tau
                mean = (tau * r_max + tau * rsum[s][a]) / precision
                R[s].append(rng.gauss(mean, 1 / math.sqrt(precision)))
        V = [0.0] * (S + 1)
        greedy = [[0] * S for _ in range(H)]
        for h in range(H - 1, -1, -1):
            new = [0.0] * (S + 1)
            for s in range(S):
                qs = [R[s][a] + sum(p * v for p, v in zip(P[s][a], V, strict=True))
                      for a in range(A)]
                greedy[h][s] = max(range(A), key=qs.__getitem__)
                new[s] = qs[greedy[h][s]]
            V = new
        play_greedy(model, greedy, counts, visits, rsum, rng)
    return episodes * H


def python_q_learning(model: PythonModel, episodes: int, optimistic: bool = True,
                      epsilon: float = 0.1, bonus: str = "hoeffding", seed: int = 0) -> int:
    """Optimistic (Jin et al., with the ``bonus`` of :func:`tabular.explore.optimistic_q_learning`)
    or epsilon-greedy Q-learning on time-indexed tables, as Python loops; UCB-Bernstein
    keeps the paper's sums ``mu`` and ``sigma`` of the next-state values."""
    rng = random.Random(seed)
    S, A = model.S, model.A
    r_max, span = float(model.rewards.max()), float(np.ptp(model.rewards))
    iota = math.log(S * A * H * episodes / 0.1)
    Q = [[[(H - h) * r_max if optimistic else 0.0] * A for _ in range(S)] for h in range(H)]
    N = [[[0] * A for _ in range(S)] for _ in range(H)]
    mu, sigma, beta = ([[[0.0] * A for _ in range(S)] for _ in range(H)] for _ in range(3))
    for _ in range(episodes):
        s = model.reset()
        for h in range(H):
            row = Q[h][s]
            a = max(range(A), key=row.__getitem__)
            if not optimistic and rng.random() < epsilon:
                a = rng.randrange(A)
            s2, r = model.step(s, a, rng)
            N[h][s][a] += 1
            t = N[h][s][a]
            v = 0.0
            if h + 1 < H:
                v = max(Q[h + 1][s2])
                if optimistic:
                    v = min(v, (H - h - 1) * r_max)
            target = r + v
            if optimistic and bonus == "bernstein":
                mu[h][s][a] += v
                sigma[h][s][a] += v * v
                W = max(sigma[h][s][a] / t - (mu[h][s][a] / t) ** 2, 0.0)
                width = 2 * min(math.sqrt(H * iota / t * (W + H * span ** 2))
                                + span * math.sqrt(H ** 7 * S * A) * iota / t,
                                span * math.sqrt(H ** 3 * iota / t))
                alpha = (H + 1) / (H + t)
                target += (width - (1 - alpha) * beta[h][s][a]) / (2 * alpha)
                beta[h][s][a] = width
            elif optimistic:
                target += span * math.sqrt(H ** 3 * iota / t)
            row[a] += (H + 1) / (H + t) * (target - row[a])
            s = s2
    return episodes * H


def python_rlsvi(model: PythonModel, episodes: int, noise_sd: float = 0.1,
                 prior_sd: float = 1.0, seed: int = 0) -> int:
    """RLSVI with the tabular posterior of :func:`tabular.explore.rlsvi`, as Python loops."""
    rng = random.Random(seed)
    S, A = model.S, model.A
    tau, tau0 = 1 / noise_sd ** 2, 1 / prior_sd ** 2
    counts = [[[[0.0] * S for _ in range(A)] for _ in range(S)] for _ in range(H)]
    rsum = [[[0.0] * A for _ in range(S)] for _ in range(H)]
    visits = [[[0.0] * A for _ in range(S)] for _ in range(H)]
    for _ in range(episodes):
        greedy = [[0] * S for _ in range(H)]
        v_next = [0.0] * S
        for h in range(H - 1, -1, -1):
            v = [0.0] * S
            for s in range(S):
                best = -math.inf
                for a in range(A):
                    total = rsum[h][s][a]
                    if h + 1 < H:
                        total += sum(c * x for c, x in zip(counts[h][s][a], v_next, strict=True))
                    precision = tau0 + visits[h][s][a] * tau
                    q = rng.gauss(tau * total / precision, 1 / math.sqrt(precision))
                    if q > best:
                        best, greedy[h][s] = q, a
                v[s] = best
            v_next = v
        s = model.reset()
        for h in range(H):
            a = greedy[h][s]
            s2, r = model.step(s, a, rng)
            visits[h][s][a] += 1
            rsum[h][s][a] += r
            counts[h][s][a][s2] += 1
            s = s2
    return episodes * H


def python_ucrl2(model: PythonModel, steps: int, seed: int = 0) -> int:
    """UCRL2 with the extended value iteration of :func:`tabular.explore.ucrl2` (the
    aperiodic transform, tau = 1/2), as Python loops over one continuing trajectory."""
    rng = random.Random(seed)
    S, A = model.S, model.A
    r_max, span = float(model.rewards.max()), float(np.ptp(model.rewards))
    counts = [[[0.0] * S for _ in range(A)] for _ in range(S)]
    visits = [[0.0] * A for _ in range(S)]
    rsum = [[0.0] * A for _ in range(S)]
    s, t = model.reset(), 0
    while t < steps:
        tk = t + 1
        width_r = span * math.sqrt(7 * math.log(2 * S * A * tk / 0.1) / 2)
        width_p = math.sqrt(14 * S * math.log(2 * A * tk / 0.1))
        u, policy = [0.0] * S, [0] * S
        while True:
            order = sorted(range(S), key=lambda x: -u[x])
            new = [0.0] * S
            for x in range(S):
                best = -math.inf
                for a in range(A):
                    n = max(1.0, visits[x][a])
                    mean = rsum[x][a] / n if visits[x][a] else r_max
                    value = min(r_max, mean + width_r / math.sqrt(n))
                    if visits[x][a]:
                        p = [c / n for c in counts[x][a]]
                        p[order[0]] = min(1.0, p[order[0]] + width_p / math.sqrt(n) / 2)
                        total, j = sum(p), S - 1
                        while total > 1.0 and j >= 0:
                            if order[j] != order[0]:
                                cut = min(total - 1.0, p[order[j]])
                                p[order[j]] -= cut
                                total -= cut
                            j -= 1
                        value += sum(pi * ui for pi, ui in zip(p, u, strict=True))
                    else:
                        value += u[order[0]]
                    if value > best:
                        best, policy[x] = value, a
                new[x] = 0.5 * best + 0.5 * u[x]
            change = [a - b for a, b in zip(new, u, strict=True)]
            u = [v - new[0] for v in new]
            if max(change) - min(change) < 0.5 / math.sqrt(tk):
                break
        before = [row[:] for row in visits]
        episode = [[0.0] * A for _ in range(S)]
        while t < steps:
            a = policy[s]
            if episode[s][a] >= max(1.0, before[s][a]):
                break
            s2, r = model.step(s, a, rng)
            episode[s][a] += 1
            visits[s][a] += 1
            counts[s][a][s2] += 1
            rsum[s][a] += r
            s, t = s2, t + 1
    return steps


def python_discounted(model: PythonModel, steps: int, rmax: bool, gamma: float = 0.95,
                      known: int = 10, seed: int = 0) -> int:
    """MBIE-EB (``rmax=False``: re-plan after every step, bonus ``beta / sqrt(n)``) or
    R-max (re-plan when a pair becomes known) as :func:`tabular.explore.mbie_eb` and
    :func:`tabular.explore.rmax` do it, in Python loops."""
    rng = random.Random(seed)
    S, A = model.S, model.A
    top = float(model.rewards.max()) / (1 - gamma)
    beta, tol = 0.1 * top, 1e-8 * max(top, 1.0)
    counts = [[[0.0] * S for _ in range(A)] for _ in range(S)]
    visits = [[0.0] * A for _ in range(S)]
    rsum = [[0.0] * A for _ in range(S)]
    Q = [[top] * A for _ in range(S)]
    V = [top] * S
    greedy = [0] * S
    s = model.reset()
    for _ in range(steps):
        a = greedy[s]
        s2, r = model.step(s, a, rng)
        visits[s][a] += 1
        counts[s][a][s2] += 1
        rsum[s][a] += r
        if not rmax or visits[s][a] == known:
            while True:
                change = 0.0
                for x in range(S):
                    for b in range(A):
                        n = visits[x][b]
                        q = top
                        if (not rmax and n > 0) or (rmax and n >= known):
                            q = rsum[x][b] / n + gamma * sum(
                                c / n * v for c, v in zip(counts[x][b], V, strict=True))
                            if not rmax:
                                q += beta / math.sqrt(n)
                        change = max(change, abs(q - Q[x][b]))
                        Q[x][b] = q
                    V[x] = max(Q[x])
                if change < tol:
                    break
            greedy = [max(range(A), key=row.__getitem__) for row in Q]
        s = s2
    return steps


def python_delayed_q(model: PythonModel, steps: int, gamma: float = 0.95, m: int = 5,
                     seed: int = 0) -> int:
    """Delayed Q-learning as :func:`tabular.explore.delayed_q_learning` does it, in Python."""
    rng = random.Random(seed)
    S, A = model.S, model.A
    top = float(model.rewards.max()) / (1 - gamma)
    epsilon1 = 0.01 * top
    Q = [[top] * A for _ in range(S)]
    U = [[0.0] * A for _ in range(S)]
    taken = [[0] * A for _ in range(S)]
    attempted = [[0] * A for _ in range(S)]
    learn = [[True] * A for _ in range(S)]
    changed = 0
    s = model.reset()
    for t in range(1, steps + 1):
        a = max(range(A), key=Q[s].__getitem__)
        s2, r = model.step(s, a, rng)
        if learn[s][a]:
            U[s][a] += r + gamma * max(Q[s2])
            taken[s][a] += 1
            if taken[s][a] == m:
                if Q[s][a] - U[s][a] / m >= 2 * epsilon1:
                    Q[s][a] = U[s][a] / m + epsilon1
                    changed = t
                elif attempted[s][a] >= changed:
                    learn[s][a] = False
                attempted[s][a], U[s][a], taken[s][a] = t, 0.0, 0
        elif attempted[s][a] < changed:
            learn[s][a] = True
        s = s2
    return steps


LEARNERS = {
    "ucbvi": (lambda m, k: ucbvi(m, horizon=H, episodes=k), python_ucbvi),
    "psrl": (lambda m, k: psrl(m, horizon=H, episodes=k), python_psrl),
    "rlsvi": (lambda m, k: rlsvi(m, horizon=H, episodes=k), python_rlsvi),
    "optimistic_q_learning": (lambda m, k: optimistic_q_learning(m, horizon=H, episodes=k),
                              python_q_learning),
    "optimistic_q_learning bernstein": (
        lambda m, k: optimistic_q_learning(m, horizon=H, episodes=k, bonus="bernstein"),
        lambda model, k: python_q_learning(model, k, bonus="bernstein")),
    "epsilon_greedy_q_learning": (
        lambda m, k: epsilon_greedy_q_learning(m, horizon=H, episodes=k),
        lambda model, k: python_q_learning(model, k, optimistic=False)),
    # steps, not episodes: T = H x the episodes of the others
    "ucrl2": (lambda m, k: ucrl2(m, steps=k * H), lambda model, k: python_ucrl2(model, k * H)),
    # MBIE-EB re-plans after every step: steps = the others' episodes, not H times more
    "mbie_eb": (lambda m, k: mbie_eb(m, steps=k),
                lambda model, k: python_discounted(model, k, rmax=False)),
    "rmax": (lambda m, k: rmax(m, steps=k * H),
             lambda model, k: python_discounted(model, k * H, rmax=True)),
    "delayed_q_learning": (lambda m, k: delayed_q_learning(m, steps=k * H),
                           lambda model, k: python_delayed_q(model, k * H)),
}


def rates(kernel, python_loop, mdp, model) -> tuple[float, float]:
    """Best steps per second of the kernel and of the Python loop over alternated rounds."""
    kernel(mdp, 10)  # compile (or load from the cache)
    best_kernel = best_python = 0.0
    for _ in range(ROUNDS):
        t = time.perf_counter()
        result = kernel(mdp, KERNEL_EPISODES)
        seconds = time.perf_counter() - t
        steps = (result.rewards.size if hasattr(result, "rewards")
                 else int(result.episode_lengths.sum()))
        best_kernel = max(best_kernel, steps / seconds)
        t = time.perf_counter()
        steps = python_loop(model, PYTHON_EPISODES)
        best_python = max(best_python, steps / (time.perf_counter() - t))
    return best_kernel, best_python


def main() -> list[Headline]:
    mdp = RiverSwim().to_mdp()
    model = PythonModel(mdp)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    headlines = []
    try:
        for name, (kernel, python_loop) in LEARNERS.items():
            ours, theirs = rates(kernel, python_loop, mdp, model)
            print(f"{name:>26}: {ours:12,.0f} steps/s on 1 thread, its Python loop "
                  f"{theirs:9,.0f}: {ours / theirs:6.0f}x (RiverSwim, H = {H}, best of "
                  f"{ROUNDS} alternated rounds)")
            headlines.append(Headline(f"{name}, RiverSwim H = {H}, 1 thread",
                                      f"{ours / 1e6:.2f}M steps/s",
                                      f"Python loop {theirs / 1e3:.1f}k steps/s",
                                      f"{ours / theirs:.0f}x"))
    finally:
        numba.set_num_threads(threads)
    return headlines


if __name__ == "__main__":
    main()
