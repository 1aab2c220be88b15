"""Counter-free random streams for kernels: xoshiro256** over a ``uint64[4]`` state.

Every stochastic kernel receives its randomness as a small state array instead of
numba's global generator, so that (i) independent runs get independent streams
spawned from one ``np.random.SeedSequence`` and (ii) the numbers a run draws do
not depend on which thread executes it. Same seed, same numbers, bit for bit.

The draws are plain jitted functions, compiled once and inlined by LLVM into each
kernel; :func:`normal` alone is inlined into numba's IR (``docs/internals.md`` says why).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from tabular.checks import check_positive_int, check_seed

_MASK53 = 1.0 / 9007199254740992.0  # 2**-53


def seed_states(seed: int | None, runs: int = 1) -> np.ndarray:
    """``uint64[runs, 4]`` xoshiro states, one independent stream per run.

    Run ``i``'s state is ``np.random.SeedSequence(seed).spawn(runs)[i]
    .generate_state(4, np.uint64)``, so run ``i`` of ``runs=n`` is the same whatever
    ``n`` is (for ``i < n``); it is computed for all runs at once (``_spawned_states``),
    not one ``SeedSequence`` object per run.
    """
    runs = check_positive_int("runs", runs)
    entropy = np.random.SeedSequence(check_seed(seed)).entropy
    assert isinstance(entropy, int)  # SeedSequence(int or None) draws or keeps an int
    states = _spawned_states(entropy, runs)
    states[~states.any(axis=1), 0] = 1  # the all-zero state is xoshiro's one fixed point
    return states


# The constants of NumPy's SeedSequence (O'Neill's seed_seq, with her hash mixing).
_M32 = 0xFFFFFFFF
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715


def _spawned_states(entropy: int, runs: int) -> np.ndarray:
    """The 4-word uint64 states that ``SeedSequence(entropy).spawn(runs)``'s children
    generate, vectorised over the children: they share the entropy words and differ
    only in the last word mixed in, their spawn key ``i`` (uint32 arithmetic wraps)."""
    words = []
    entropy = int(entropy)
    while True:
        words.append(entropy & _M32)
        entropy >>= 32
        if entropy == 0:
            break
    words += [0] * (4 - len(words))  # padded to the pool size before a spawn key
    multiplier = _INIT_A

    def hashmix(value):
        nonlocal multiplier
        value = value ^ np.uint32(multiplier)
        multiplier = (multiplier * _MULT_A) & _M32
        value = value * np.uint32(multiplier)
        return value ^ (value >> np.uint32(16))

    def mix(x, y):
        result = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
        return result ^ (result >> np.uint32(16))

    with np.errstate(over="ignore"):
        pool = [hashmix(np.full(runs, w, dtype=np.uint32)) for w in words[:4]]
        for src in range(4):
            for dst in range(4):
                if src != dst:
                    pool[dst] = mix(pool[dst], hashmix(pool[src]))
        for word in [*(np.full(runs, w, dtype=np.uint32) for w in words[4:]),
                     np.arange(runs, dtype=np.uint32)]:
            for dst in range(4):
                pool[dst] = mix(pool[dst], hashmix(word))
        state = np.empty((runs, 8), dtype=np.uint32)
        multiplier = _INIT_B
        for i in range(8):
            value = pool[i % 4] ^ np.uint32(multiplier)
            multiplier = (multiplier * _MULT_B) & _M32
            value = value * np.uint32(multiplier)
            state[:, i] = value ^ (value >> np.uint32(16))
    return state.view("<u8").astype(np.uint64)


@njit(inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True)
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


@njit(cache=True)
def uniform(state):
    """A float in ``[0, 1)`` with 53 random bits."""
    return float(next_u64(state) >> uint64(11)) * _MASK53


def _ziggurat_layers(n_layers: int = 128, tail: float = 3.442619855899,
                     area: float = 9.91256303526217e-3) -> tuple[np.ndarray, np.ndarray]:
    """The layers of the ziggurat over the standard normal density (Marsaglia and Tsang,
    2000, in the layout of Doornik, 2005): ``x[i]`` the right edge of layer ``i``
    (``x[0]`` the base's width including the tail beyond ``tail``, ``x[n] = 0``),
    ``ratio[i] = x[i + 1] / x[i]``; every layer has the same ``area``."""
    x = np.zeros(n_layers + 1)
    f = np.exp(-0.5 * tail * tail)
    x[0], x[1] = area / f, tail
    for i in range(2, n_layers):
        x[i] = np.sqrt(-2.0 * np.log(area / x[i - 1] + f))
        f = np.exp(-0.5 * x[i] * x[i])
    return x, x[1:] / x[:-1]


_ZIG_X, _ZIG_RATIO = _ziggurat_layers()
_ZIG_TAIL = _ZIG_X[1]


@njit(cache=True)
def _normal_tail(state, negative):
    """A draw from the normal density beyond ``+-_ZIG_TAIL`` (Marsaglia, 1964)."""
    while True:
        x = -np.log(1.0 - uniform(state)) / _ZIG_TAIL
        y = -np.log(1.0 - uniform(state))
        if 2.0 * y > x * x:
            return -(_ZIG_TAIL + x) if negative else _ZIG_TAIL + x


@njit(cache=True, inline="always")  # LLVM would leave a call per draw
def normal(state):
    """A standard normal draw by the ziggurat method (Marsaglia and Tsang, 2000): one
    64-bit draw gives the layer (low 7 bits) and a uniform in ``(-1, 1)`` (high 53
    bits); ~99% of draws end at the first comparison, the rest are decided under the
    density's curve or in its tail."""
    while True:
        bits = next_u64(state)
        i = int(bits & uint64(127))
        u = 2.0 * (float(bits >> uint64(11)) * _MASK53) - 1.0
        if abs(u) < _ZIG_RATIO[i]:
            return u * _ZIG_X[i]
        if i == 0:
            return _normal_tail(state, u < 0.0)
        x = u * _ZIG_X[i]
        top = np.exp(-0.5 * (_ZIG_X[i] * _ZIG_X[i] - x * x))
        bottom = np.exp(-0.5 * (_ZIG_X[i + 1] * _ZIG_X[i + 1] - x * x))
        if bottom + uniform(state) * (top - bottom) < 1.0:
            return x


@njit(cache=True)
def randint(state, n):
    """An integer in ``[0, n)`` (Lemire-free multiply-shift on 53 bits; bias < n / 2**53)."""
    return int(uniform(state) * n)


@njit(cache=True)
def shuffle(state, a):
    """Permute the array ``a`` in place, uniformly (Fisher-Yates, from the last entry)."""
    for i in range(a.shape[0] - 1, 0, -1):
        j = randint(state, i + 1)
        a[i], a[j] = a[j], a[i]


@njit(cache=True)
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
