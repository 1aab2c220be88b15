"""Counter-free random streams for kernels: xoshiro256** over a ``uint64[4]`` state.

Every stochastic kernel receives its randomness as a small state array instead of
numba's global generator, so that (i) independent runs get independent streams
spawned from one ``np.random.SeedSequence`` and (ii) the numbers a run draws do
not depend on which thread executes it. Same seed, same numbers, bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

_MASK53 = 1.0 / 9007199254740992.0  # 2**-53


def seed_states(seed: int | None, runs: int = 1) -> np.ndarray:
    """``uint64[runs, 4]`` xoshiro states, one independent stream per run.

    The streams come from ``np.random.SeedSequence(seed).spawn(runs)``, so run ``i``
    of ``runs=n`` is the same whatever ``n`` is (for ``i < n``).
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)
                             or seed < 0):
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
    children = np.random.SeedSequence(seed).spawn(runs)
    states = np.empty((runs, 4), dtype=np.uint64)
    for i, child in enumerate(children):
        state = child.generate_state(4, dtype=np.uint64)
        if not state.any():  # the all-zero state is xoshiro's one fixed point
            state[0] = 1
        states[i] = state
    return states


@njit(inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True, inline="always")
def next_u64(state):
    """Advance the xoshiro256** state in place and return 64 random bits."""
    result = _rotl(state[1] * uint64(5), 7) * uint64(9)
    t = state[1] << uint64(17)
    state[2] ^= state[0]
    state[3] ^= state[1]
    state[1] ^= state[2]
    state[0] ^= state[3]
    state[2] ^= t
    state[3] = _rotl(state[3], 45)
    return result


@njit(cache=True, inline="always")
def uniform(state):
    """A float in ``[0, 1)`` with 53 random bits."""
    return float(next_u64(state) >> uint64(11)) * _MASK53


@njit(cache=True, inline="always")
def normal_pair(state):
    """Two independent standard normal draws (Box-Muller on two uniforms; ``1 - u`` keeps
    the log finite)."""
    radius = np.sqrt(-2.0 * np.log(1.0 - uniform(state)))
    angle = 2.0 * np.pi * uniform(state)
    return radius * np.cos(angle), radius * np.sin(angle)


@njit(cache=True, inline="always")
def normal(state):
    """A standard normal draw (the first of :func:`normal_pair`)."""
    return normal_pair(state)[0]


@njit(cache=True, inline="always")
def next_normal(state, spare, have_spare):
    """``(z, spare, have_spare)``: a standard normal draw, taken from ``spare`` when a
    previous :func:`normal_pair` left one, so that each pair serves two draws."""
    if have_spare:
        return spare, 0.0, False
    z, other = normal_pair(state)
    return z, other, True


@njit(cache=True, inline="always")
def randint(state, n):
    """An integer in ``[0, n)`` (Lemire-free multiply-shift on 53 bits; bias < n / 2**53)."""
    return int(uniform(state) * n)


@njit(cache=True, inline="always")
def categorical(state, p):
    """An index drawn from the probability vector ``p`` (inverse CDF)."""
    u = uniform(state)
    acc = 0.0
    last = 0
    for i in range(p.shape[0]):
        if p[i] > 0.0:
            acc += p[i]
            last = i
            if u < acc:
                return i
    return last  # u fell in the rounding gap above sum(p)
