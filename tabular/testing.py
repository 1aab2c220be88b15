"""Hypothesis strategies for property-testing tabular RL code: random MDPs, policies
and gridworld layouts (the strategies need ``hypothesis``: ``pip install
'tabular-zoo[testing]'``; :func:`random_mdp` and :func:`random_policy` do not).

Hypothesis draws the sizes and structural knobs (sparsity, done rate, traps) plus a
seed; NumPy fills the arrays from that seed, so examples are cheap to draw and still
shrink towards small sizes.

- :func:`mdps`: general random MDPs (cycles allowed); ``gamma < 1`` is safe.
- :func:`acyclic_mdps`: transitions only go to higher-numbered states and the last
  state always ends the episode, like a token prefix tree: safe with ``gamma = 1``.
- :func:`token_mdps`: small random token MDPs (prompt trees with random response
  rewards, ties included), the RLHF learners' models.
- :func:`gammas`: discounts in ``[0, 0.99]``.
- :func:`policies`: stochastic ``[S, A]`` policies for a given MDP.
- :func:`layouts`: valid ASCII gridworld layouts with :class:`~tabular.envs.GridWorld` options.
- :func:`random_policy`, :func:`random_mdp`: the same without hypothesis, for sizes
  too large to draw.
- :func:`property_settings`: the settings of a property test that compiles kernels.

The Bellman optimality operator is a ``gamma``-contraction in the sup norm (Sutton &
Barto, section 4.4; Puterman, Theorem 6.2.3); in your own test suite::

    import numpy as np
    from hypothesis import given, settings, strategies as st
    from tabular import bellman_optimality
    from tabular.testing import gammas, mdps

    @settings(deadline=None)  # the first example loads or compiles a kernel
    @given(mdps(), gammas(), st.integers(0, 2**32 - 1))
    def test_bellman_optimality_contracts(mdp, gamma, seed):
        rng = np.random.default_rng(seed)
        U, V = rng.normal(size=(2, mdp.n_states))
        gap = np.abs(bellman_optimality(mdp, U, gamma) - bellman_optimality(mdp, V, gamma))
        assert gap.max() <= gamma * np.abs(U - V).max() + 1e-12

Why ``deadline=None``: hypothesis fails an example that takes longer than 200 ms, and
the first call of a kernel in a process loads it from numba's disk cache (0.3 s on a
busy 2-core machine) or, before ``tabular-warm`` or a first use, compiles it (seconds);
later examples take microseconds. (:func:`property_settings` gives the same with no
health check on slow examples and a number of examples.)
"""

from __future__ import annotations

import numpy as np

try:
    from hypothesis import HealthCheck, settings
    from hypothesis import strategies as st
except ImportError:  # an optional part: random_mdp and random_policy work without it
    HealthCheck = settings = st = None  # type: ignore[misc, assignment]

from tabular import TabularMDP
from tabular.checks import (
    check_fits,
    check_flag,
    check_nonnegative,
    check_positive_int,
    check_unit_interval,
)
from tabular.model.mdp import MAX_REWARD, as_mdp
from tabular.types import FloatArray

#: The most states, actions, outcomes, rows or columns a strategy draws: hypothesis
#: shrinks by redrawing, and larger models make a property test take minutes.
MAX_DRAWN = 1000


def _need_hypothesis(what: str) -> None:
    """An ImportError naming the extra that brings hypothesis, when it is missing."""
    if st is None:
        raise ImportError(f"tabular.testing.{what} needs hypothesis: pip install "
                          "'tabular-zoo[testing]' (random_mdp and random_policy do not)",
                          name="hypothesis")


def _composite(function):
    """``hypothesis.strategies.composite``; without hypothesis, the function itself (the
    public strategy that calls it raises :func:`_need_hypothesis`'s error first)."""
    return function if st is None else st.composite(function)


def property_settings(max_examples: int) -> settings:
    """Hypothesis settings for a property test of kernels: ``max_examples`` examples, no
    deadline and no health check on slow examples (the first example compiles the numba
    kernels it calls). Whether the draws are derandomised is the profile's (the test
    suite's ``conftest.py`` makes them repeatable)."""
    _need_hypothesis("property_settings")
    max_examples = check_positive_int("max_examples", max_examples, high=10**6)
    return settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def gammas(max_gamma: float = 0.99) -> st.SearchStrategy[float]:
    """Discounts in ``[0, max_gamma]`` (default ``max_gamma=0.99``, itself in ``[0, 1]``),
    with the edges 0 and ``max_gamma`` drawn often."""
    _need_hypothesis("gammas")
    max_gamma = check_unit_interval("max_gamma", max_gamma)
    return st.one_of(st.just(0.0), st.just(max_gamma),
                     st.floats(0.0, max_gamma, allow_nan=False))


def random_policy(rng: np.random.Generator, S: int, A: int, zero_rate: float = 0.3
                  ) -> FloatArray:
    """A stochastic ``[S, A]`` policy drawn with ``rng``; about ``zero_rate`` (default 0.3)
    of its entries are 0, never a whole row."""
    _check_rng(rng)
    S, A = _check_size("S", S, 10**8), _check_size("A", A, 10**8)
    check_fits("S", 24 * S * A, f"{S:,} x {A:,} probabilities")
    zero_rate = check_unit_interval("zero_rate", zero_rate)
    weights = rng.random((S, A)) * (rng.random((S, A)) >= zero_rate)
    weights[np.arange(S), rng.integers(0, A, S)] += 0.1  # every row keeps an action
    return weights / weights.sum(axis=1, keepdims=True)


def random_mdp(rng: np.random.Generator, S: int, A: int, K: int, *, done_rate: float = 0.1,
               trap_rate: float = 0.0, reward_scale: float = 1.0) -> TabularMDP:
    """A random MDP straight from NumPy (for models too large for hypothesis to draw).

    ``S`` states, ``A`` actions, up to ``K`` outcomes per pair (each pair uses 1..K),
    successors uniform over the states; each outcome ends the episode with probability
    ``done_rate`` (default 0.1) and pays ``-inf`` with probability ``trap_rate``
    (default 0); other rewards are uniform in ``[-reward_scale, reward_scale]``
    (default 1, at most the model's ``MAX_REWARD``), rounded to 3 decimals. The start
    distribution is uniform.
    """
    _check_rng(rng)
    S, A, K = (_check_size(name, n, 10**8) for name, n in (("S", S), ("A", A), ("K", K)))
    # the arrays and their temporaries peak at 104-138 bytes a slot (tracemalloc)
    check_fits("S", 144 * S * A * K, f"{S:,} x {A:,} x {K:,} outcomes")
    done_rate, trap_rate, reward_scale = _check_rates(done_rate, trap_rate, reward_scale)
    arrays = _arrays(rng, S, A, K, lambda rng, shape: rng.integers(0, S, shape),
                     done_rate=done_rate, trap_rate=trap_rate, reward_scale=reward_scale)
    return TabularMDP(*arrays, np.full(S, 1.0 / S))


def _check_rng(rng: object) -> None:
    """A NumPy ``Generator`` (``np.random.default_rng(seed)``)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), "
                        f"got {type(rng).__name__}")


def _check_size(name: str, value: int, high: int = MAX_DRAWN) -> int:
    """A number of states, actions, outcomes, rows or columns: an integer in ``[1, high]``."""
    return check_positive_int(name, value, high=high)


def _check_rates(done_rate: float, trap_rate: float, reward_scale: float
                 ) -> tuple[float, float, float]:
    """The two rates in ``[0, 1]`` and the reward scale in ``[0, MAX_REWARD]``."""
    scale = check_nonnegative("reward_scale", reward_scale)
    if scale > MAX_REWARD:
        raise ValueError(f"reward_scale must be at most {MAX_REWARD:g} (a reward's bound), got "
                         f"{scale:g}")
    return (check_unit_interval("done_rate", done_rate),
            check_unit_interval("trap_rate", trap_rate), scale)


def _arrays(rng, S, A, K, successor, *, done_rate, trap_rate, reward_scale
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(next_state, prob, reward, done)`` of a random model; ``successor(rng, shape)``
    draws the next states."""
    outcomes = rng.integers(1, K + 1, size=(S, A))  # outcomes actually used per pair
    used = np.arange(K)[None, None, :] < outcomes[:, :, None]
    prob = np.where(used, rng.random((S, A, K)) + 0.05, 0.0)
    prob /= prob.sum(axis=2, keepdims=True)
    next_state = np.where(used, successor(rng, (S, A, K)), np.arange(S)[:, None, None])
    reward = np.round(rng.uniform(-reward_scale, reward_scale, (S, A, K)), 3)
    done = used & (rng.random((S, A, K)) < done_rate)
    traps = used & (rng.random((S, A, K)) < trap_rate)
    reward[traps] = -np.inf
    reward[~used] = 0.0
    return next_state, prob, reward, done


def _check_model_args(max_states, max_actions, max_outcomes, traps, reward_scale
                      ) -> tuple[int, int, int, bool, float]:
    """The arguments of :func:`mdps` and :func:`acyclic_mdps`, checked when the strategy
    is made (not at its first draw, deep inside hypothesis)."""
    return (_check_size("max_states", max_states), _check_size("max_actions", max_actions),
            _check_size("max_outcomes", max_outcomes), check_flag("traps", traps),
            _check_rates(0.0, 0.0, reward_scale)[2])


def mdps(max_states: int = 30, max_actions: int = 5, max_outcomes: int = 4,
         traps: bool = False, reward_scale: float = 1.0) -> st.SearchStrategy[TabularMDP]:
    """Random MDPs: ``S <= max_states`` (default 30), ``A <= max_actions`` (default 5),
    ``K <= max_outcomes`` (default 4), each at most :data:`MAX_DRAWN`.

    Random sparsity (pairs use 1..K outcomes), random ``done`` flags; with
    ``traps=True`` (default ``False``) some outcomes pay ``-inf``; rewards in
    ``[-reward_scale, reward_scale]`` (default 1).
    """
    _need_hypothesis("mdps")
    return _mdps(*_check_model_args(max_states, max_actions, max_outcomes, traps,
                                    reward_scale))


def _draw_sizes(draw, max_states, max_actions, max_outcomes, traps, done_rates):
    """``(S, A, K, done_rate, trap_rate, rng)`` of a random model: its sizes, the share of
    outcomes that end the episode (one of ``done_rates``), the share of ``-inf`` traps
    and the generator of its arrays, all drawn by hypothesis (so that they shrink)."""
    S = draw(st.integers(1, max_states))
    A = draw(st.integers(1, max_actions))
    K = draw(st.integers(1, max_outcomes))
    done_rate = draw(st.sampled_from(done_rates))
    trap_rate = draw(st.sampled_from([0.02, 0.1])) if traps else 0.0
    return S, A, K, done_rate, trap_rate, np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


@_composite
def _mdps(draw, max_states, max_actions, max_outcomes, traps, reward_scale):
    S, A, K, done_rate, trap_rate, rng = _draw_sizes(
        draw, max_states, max_actions, max_outcomes, traps, done_rates=[0.0, 0.05, 0.3, 1.0])
    return random_mdp(rng, S, A, K, done_rate=done_rate, trap_rate=trap_rate,
                      reward_scale=reward_scale)


def acyclic_mdps(max_states: int = 30, max_actions: int = 5, max_outcomes: int = 4,
                 traps: bool = False, reward_scale: float = 1.0
                 ) -> st.SearchStrategy[TabularMDP]:
    """Random episodic MDPs without cycles: ``s -> s' > s``, and the last state ends.

    Every policy terminates within ``S`` steps, so ``gamma = 1`` is well defined. The
    arguments are those of :func:`mdps`; the episode starts in state 0.
    """
    _need_hypothesis("acyclic_mdps")
    return _acyclic_mdps(*_check_model_args(max_states, max_actions, max_outcomes, traps,
                                            reward_scale))


@_composite
def _acyclic_mdps(draw, max_states, max_actions, max_outcomes, traps, reward_scale):
    S, A, K, done_rate, trap_rate, rng = _draw_sizes(
        draw, max_states, max_actions, max_outcomes, traps, done_rates=[0.0, 0.1, 0.5])
    here = np.arange(S)[:, None, None]

    def later_state(rng, shape):
        return np.minimum(here + rng.integers(1, 4, shape), S - 1)

    next_state, prob, reward, done = _arrays(rng, S, A, K, later_state, done_rate=done_rate,
                                             trap_rate=trap_rate, reward_scale=reward_scale)
    done[S - 1] = True
    done |= next_state == here  # only the last state can point to itself: it ends there
    start = np.zeros(S)
    start[0] = 1.0
    return TabularMDP(next_state, prob, reward, done, start)


def token_mdps(max_prompts: int = 2, max_words: int = 2, max_len: int = 3
               ) -> st.SearchStrategy:
    """Random token MDPs (:class:`tabular.envs.TokenMDP` envs): 1 to ``max_prompts``
    prompts with random probabilities, 1 to ``max_words`` words plus ``eos``, responses of
    1 to ``max_len`` tokens, every response's reward drawn from a seed (from a few values
    half of the time, so that groups of equal rewards occur). Defaults 2, 2, 3: at most
    30 prefixes per prompt."""
    _need_hypothesis("token_mdps")
    return _token_mdps(_check_size("max_prompts", max_prompts, 10),
                       _check_size("max_words", max_words, 10),
                       _check_size("max_len", max_len, 6))


@_composite
def _token_mdps(draw, max_prompts, max_words, max_len):
    from tabular.envs import TokenMDP

    P = draw(st.integers(1, max_prompts))
    words = tuple(f"w{i}" for i in range(draw(st.integers(1, max_words))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ties = draw(st.booleans())
    scores: dict = {}

    def reward(prompt: str, response: str) -> float:
        if (prompt, response) not in scores:
            scores[prompt, response] = float(rng.choice([0.0, 1.0]) if ties else rng.normal())
        return scores[prompt, response]

    probs = rng.dirichlet(np.ones(P)) if P > 1 else None
    prompts = tuple(" ".join([words[0]] * (i + 1)) for i in range(P))  # words of the vocab
    return TokenMDP(prompts, reward, vocab=words,
                    max_len=draw(st.integers(1, max_len)), prompt_probs=probs)


def policies(mdp: TabularMDP, zero_rate: float = 0.3) -> st.SearchStrategy[FloatArray]:
    """Stochastic ``[S, A]`` policies for ``mdp``; about ``zero_rate`` (default 0.3, in
    ``[0, 1]``) of the entries are 0, never a whole row."""
    _need_hypothesis("policies")
    mdp = as_mdp(mdp)
    return _policies(mdp.n_states, mdp.n_actions, check_unit_interval("zero_rate", zero_rate))


@_composite
def _policies(draw, S, A, zero_rate):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return random_policy(rng, S, A, zero_rate)


def layouts(max_rows: int = 5, max_cols: int = 5) -> st.SearchStrategy[tuple[str, dict]]:
    """``(layout, options)``: a valid gridworld layout (one start ``S``; floor ``.``, walls
    ``#``, goals ``G``, traps ``T``, cliff ``C``, maybe a teleport ``A -> a``) of at most
    ``max_rows x max_cols`` cells (default 5 x 5), and keyword options of
    :class:`~tabular.envs.GridWorld` (slip, step and bump rewards, trap reward, wind, a cell
    reward); ``envs.GridWorld(layout, **options)`` builds it. Each side is at most
    :data:`MAX_DRAWN`."""
    _need_hypothesis("layouts")
    return _layouts(_check_size("max_rows", max_rows), _check_size("max_cols", max_cols))


@_composite
def _layouts(draw, max_rows, max_cols):
    H, W = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
    cells = draw(st.lists(st.sampled_from(".......##GTCS"), min_size=H * W, max_size=H * W))
    rows = [cells[r * W:(r + 1) * W] for r in range(H)]
    n = H * W
    sr, sc = divmod(draw(st.integers(0, n - 1)), W)
    rows[sr][sc] = "S"
    options = {"slip": draw(st.sampled_from([0.0, 0.1, 1 / 3, 2 / 3, 1.0])),
               "step_reward": draw(st.sampled_from([0.0, -1.0])),
               "bump_reward": draw(st.sampled_from([None, -2.0])),
               "trap_reward": draw(st.sampled_from([-np.inf, -5.0]))}
    if draw(st.booleans()):
        options["wind"] = draw(st.lists(st.integers(-2, 2), min_size=W, max_size=W))
    free_cells = [i for i in range(n) if rows[i // W][i % W] not in "S#"]
    if len(free_cells) >= 2 and draw(st.booleans()):
        src, dst = draw(st.lists(st.sampled_from(free_cells), min_size=2, max_size=2,
                                 unique=True))
        if rows[dst // W][dst % W] != "C":
            rows[src // W][src % W] = "A"
            rows[dst // W][dst % W] = "a"
            options["teleports"] = {"A": ("a", 4.0)}
    if draw(st.booleans()):
        options["cell_rewards"] = {(sr, sc): 0.5}
    return "\n".join("".join(row) for row in rows), options
