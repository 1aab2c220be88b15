"""Counter-free random streams for kernels: xoshiro256** over a ``uint64[4]`` state.

Every stochastic kernel receives its randomness as a small state array instead of
numba's global generator, so that (i) independent runs get independent streams
spawned from one ``np.random.SeedSequence`` and (ii) the numbers a run draws do
not depend on which thread executes it. Same seed, same numbers, bit for bit.

The draws are plain jitted functions, compiled once and inlined by LLVM into each
kernel; :func:`normal` and the gamma and Beta draws are inlined into numba's IR
(``docs/decisions/2026-12-02-inlining-of-rules.md`` says why; the Beta draw of Thompson
sampling took twice as long as a call: ``docs/decisions/2026-12-06-explore-speed-2.md``).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, uint64

from tabular.checks import check_positive_int, check_seed

_MASK53 = 1.0 / 9007199254740992.0  # 2**-53


def seed_states(seed: int | None, runs: int = 1) -> np.ndarray:
    """``uint64[runs, 4]`` xoshiro states, one independent stream per run.

    Run ``i``'s state is ``np.random.SeedSequence(seed).spawn(runs)[i]
    .generate_state(4, np.uint64)``, so run ``i`` of ``runs=n`` is the same whatever
    ``n`` is (for ``i < n``). It is computed without ``SeedSequence`` objects: the
    entropy is mixed once, then each run's spawn key, in Python integers for a few runs
    (their words kept for the next call) and in NumPy arrays, all runs at once, for
    more (NumPy's fixed cost per operation would dominate a call of a single run; the
    private helpers beside it in ``tabular/_numba/rng.py`` say how).
    """
    runs, seed = check_positive_int("runs", runs), check_seed(seed)
    entropy = np.random.SeedSequence().entropy if seed is None else seed  # an int's is itself
    assert isinstance(entropy, int)  # SeedSequence() draws an int
    if runs <= _FEW_RUNS:
        return np.array([_run_state(entropy, key) for key in range(runs)], dtype=np.uint64)
    states = np.stack(_spawned_states(_entropy_pool(entropy), np.arange(runs, dtype=np.uint64)),
                      axis=1)
    states[~states.any(axis=1), 0] = 1  # the all-zero state is xoshiro's one fixed point
    return states


#: Up to this many runs, :func:`seed_states` mixes each run's key in Python integers.
_FEW_RUNS = 8

# The constants of NumPy's SeedSequence (O'Neill's seed_seq, with her hash mixing).
_M32 = 0xFFFFFFFF
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715

# The arithmetic below is on 32-bit words held in Python integers or in uint64 arrays,
# reduced modulo 2**32 by masks: every product of two words fits in 64 bits.


def _hashmix(value, multiplier: int):
    """``(hashed value, the next multiplier)`` of O'Neill's hash."""
    value = value ^ multiplier
    multiplier = (multiplier * _MULT_A) & _M32
    value = (value * multiplier) & _M32
    return value ^ (value >> 16), multiplier


def _mix(x, y):
    result = (_MIX_L * x - _MIX_R * y) & _M32
    return result ^ (result >> 16)


@functools.lru_cache(maxsize=64)  # most calls pass one of a few seeds
def _entropy_pool(entropy: int) -> tuple[tuple[int, ...], int]:
    """``(pool, multiplier)``: the four-word pool of ``SeedSequence(entropy)`` mixed with
    every entropy word, and the hash's multiplier after them; what its children share
    before each mixes in its spawn key."""
    words = []
    while True:
        words.append(entropy & _M32)
        entropy >>= 32
        if entropy == 0:
            break
    words += [0] * (4 - len(words))  # padded to the pool size before a spawn key
    pool, multiplier = [], _INIT_A
    for word in words[:4]:
        hashed, multiplier = _hashmix(word, multiplier)
        pool.append(hashed)
    for src in range(4):
        for dst in range(4):
            if src != dst:
                hashed, multiplier = _hashmix(pool[src], multiplier)
                pool[dst] = _mix(pool[dst], hashed)
    for word in words[4:]:
        for dst in range(4):
            hashed, multiplier = _hashmix(word, multiplier)
            pool[dst] = _mix(pool[dst], hashed)
    return tuple(pool), multiplier


@functools.lru_cache(maxsize=256)  # a call of a few runs reads them in microseconds
def _run_state(entropy: int, key: int) -> tuple[int, ...]:
    """The four words of run ``key``'s state from ``entropy``, as :func:`seed_states`
    gives them (the all-zero state replaced)."""
    words = _spawned_states(_entropy_pool(entropy), key)
    return tuple(words) if any(words) else (1, *words[1:])


def _spawned_states(pool: tuple[tuple[int, ...], int], key) -> list:
    """The four uint64 words that the child of spawn key ``key`` (an int, or a uint64
    array of keys) generates from the shared ``pool`` of :func:`_entropy_pool`."""
    words, multiplier = list(pool[0]), pool[1]
    for dst in range(4):
        hashed, multiplier = _hashmix(key, multiplier)
        words[dst] = _mix(words[dst], hashed)
    multiplier = _INIT_B
    halves = []
    for i in range(8):
        value = words[i % 4] ^ multiplier
        multiplier = (multiplier * _MULT_B) & _M32
        value = (value * multiplier) & _M32
        halves.append(value ^ (value >> 16))
    return [halves[2 * j] | (halves[2 * j + 1] << 32) for j in range(4)]  # little-endian


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


@njit(cache=True)
def bernoulli(state, p):
    """``uniform(state) < p``, the same decision from the same draw, taken in integers:
    the 53 bits ``m`` of the uniform ``m / 2**53`` against ``ceil(p 2**53)``, a threshold
    the compiler computes once outside a loop where ``p`` does not change."""
    return (next_u64(state) >> uint64(11)) < uint64(np.ceil(p * 9007199254740992.0))


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


@njit(cache=True, inline="always")
def marsaglia_tsang_constants(shape):
    """``(d, c)`` of :func:`marsaglia_tsang`'s draw of ``Gamma(shape, 1)``: ``d = shape -
    1/3``, ``c = 1 / sqrt(9 d)``; a kernel drawing the same shape again keeps them."""
    d = shape - 1.0 / 3.0
    return d, 1.0 / np.sqrt(9.0 * d)


@njit(cache=True, inline="always")  # a call per draw would cost a third more
def marsaglia_tsang_given(state, d, c):
    """:func:`marsaglia_tsang` given its constants (:func:`marsaglia_tsang_constants`)."""
    while True:
        x = normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - uniform(state)  # in (0, 1]: its log is finite
        if u < 1.0 - 0.0331 * x * x * x * x or np.log(u) < 0.5 * x * x + d * (1.0 - v + np.log(v)):
            return d * v


@njit(cache=True, inline="always")
def marsaglia_tsang(state, shape):
    """A draw from ``Gamma(shape, 1)``, ``shape >= 1`` (Marsaglia and Tsang, 2000): ``d v``
    with ``d = shape - 1/3`` and ``v = (1 + c x)^3`` of a normal ``x``, ``c = 1 / sqrt(9 d)``,
    accepted when ``log u < x^2 / 2 + d (1 - v + log v)``; the squeeze
    ``u < 1 - 0.0331 x^4`` (inside that region) skips the two logarithms. Smaller shapes
    take their boost, ``G(a) = G(a + 1) U^(1/a)`` (their section 6): :func:`gamma` and
    :func:`tabular.rules.exploration.log_gamma_draw` apply it."""
    d, c = marsaglia_tsang_constants(shape)
    return marsaglia_tsang_given(state, d, c)


@njit(cache=True, inline="always")  # a call per Beta draw cost half its time
def gamma(state, shape):
    """A draw from ``Gamma(shape, 1)``, ``shape > 0`` (:func:`marsaglia_tsang`; for
    ``shape < 1`` the draw of ``shape + 1`` times ``U^(1 / shape)``, their section 6)."""
    if shape < 1.0:
        return marsaglia_tsang(state, shape + 1.0) * (1.0 - uniform(state)) ** (1.0 / shape)
    return marsaglia_tsang(state, shape)


@njit(cache=True, inline="always")  # inlined, its draws share the caller's registers
def beta(state, a, b):
    """A draw from ``Beta(a, b)``, ``a, b > 0``: ``X / (X + Y)`` of independent
    ``X ~ Gamma(a, 1)``, ``Y ~ Gamma(b, 1)``."""
    x = gamma(state, a)
    return x / (x + gamma(state, b))
