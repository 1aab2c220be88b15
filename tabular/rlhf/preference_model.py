"""A general preference model ``P(y > y' | x)`` on a token MDP and its regularised Nash
equilibrium (Munos et al., 2024, "Nash learning from human feedback").

A :class:`PreferenceModel` holds, for each prompt, the responses it compares and the
matrix ``P[i, j] = P(y_i > y_j | x)``, with ``P[i, j] + P[j, i] = 1`` and ``P[i, i] = 1/2``.
:func:`bradley_terry_preference` builds it from a reward, ``P = sigma(r_i - r_j)`` (a
transitive preference); :func:`preference_table` takes any table, intransitive
included (rock-paper-scissors: no response is preferred to every other).

The regularised game (Munos et al., 2024, section 3): two policies play
``f(pi, pi') = P(pi > pi') - beta KL(pi || ref) + beta KL(pi' || ref)``, the first
maximising, the second minimising. It is concave-convex and ``beta``-strongly so in the
entropic geometry, its equilibrium is unique and symmetric, and per prompt it is the
fixed point ``pi(y) ∝ ref(y) exp(P(y > pi) / beta)`` (each player's best response to
the other, in closed form). Its duality gap at a symmetric pair ``(pi, pi)`` is also in
closed form: the best response to ``pi`` earns ``beta log Z(pi)`` with
``Z(pi) = sum_y ref(y) exp(P(y > pi) / beta)``, so

    gap(pi) = 2 beta log Z(pi) + 2 beta KL(pi || ref) - 1        (>= 0, 0 only at Nash).

:func:`nash_equilibrium` solves the game by mirror-prox (extragradient with the
entropy's mirror map; Nemirovski, 2004), which converges linearly on a strongly
monotone game, until that exact gap is below ``tol`` (default ``1e-12``), then polishes
the point by Newton's method on the fixed point (a gap ``g`` only places the policy
within about ``sqrt(g / beta)``: the gap is quadratic near the equilibrium), which
leaves ``|pi - T(pi)|`` at rounding level (about ``1e-16``). Where the
preference is Bradley-Terry the equilibrium is not the RLHF optimum
``pi* ∝ ref exp(r / beta)`` in general; as ``beta -> 0`` both concentrate on the best
response, and with a strictly best (Condorcet) response the unregularised game's
equilibrium is that response alone (gap 0 at ``beta = 0``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from tabular.checks import check_nonnegative, check_positive, check_positive_int, policy_matrix
from tabular.model.policy import SoftmaxPolicy, as_softmax_policy
from tabular.rlhf.preference import response_path
from tabular.rlhf.results import NashEquilibrium, NashMDResult, PreferenceModel
from tabular.solve.tree import as_token_env, ending_probabilities, path_returns
from tabular.types import PolicyLike, TokenEnv


def _model(env: TokenEnv, states, actions, matrices) -> PreferenceModel:
    """The :class:`PreferenceModel` of endings given prompt by prompt (``states``,
    ``actions``: one array per prompt, in ``env.prompts``' order)."""
    mdp = env.to_mdp()
    prompt = np.concatenate([np.full(len(s), x, dtype=np.int64) for x, s in enumerate(states)])
    s = np.concatenate(states).astype(np.int64)
    a = np.concatenate(actions).astype(np.int64)
    nxt = mdp.next_state[s, a, 0]
    texts = tuple((env.prompts[x], env.text(int(t))) for x, t in zip(prompt, nxt, strict=True))
    lengths = np.array([len(env.state_response[int(q)]) + 1 for q in s], dtype=np.int64)
    bounds = np.cumsum([0] + [len(q) for q in states]).astype(np.int64)
    probs = np.array([mdp.start[env.state_of(x)] for x in range(len(env.prompts))])
    return PreferenceModel(s, a, prompt, bounds, lengths, texts,
                           tuple(np.asarray(m, dtype=float) for m in matrices), probs)


def bradley_terry_preference(mdp: TokenEnv, policy: PolicyLike,
                             reward: np.ndarray | None = None) -> PreferenceModel:
    """The Bradley-Terry preference ``P(y > y' | x) = sigma(r(x, y) - r(x, y'))`` over the
    responses ``policy`` gives positive probability (Bradley & Terry, 1952).

    ``mdp``: the token MDP (an ``envs.TokenMDP``); ``reward``: ``[S, A]``, the reward of
    the response ending with ``(s, a)``; default ``None``: the MDP's own return
    (:func:`~tabular.rlhf.path_returns`)."""
    env = as_token_env(mdp, "mdp")
    model = env.to_mdp()
    ends = ending_probabilities(model, as_softmax_policy(model, policy, "policy"))
    R = path_returns(model) if reward is None else np.asarray(reward, dtype=float)
    if R.shape != ends.shape or not np.isfinite(R[ends > 0.0]).all():
        raise ValueError(f"reward must be a finite [S, A] = {ends.shape} array on the "
                         "policy's responses")
    states, actions, matrices = [], [], []
    for x in range(len(env.prompts)):
        s, a = np.nonzero((ends > 0.0) & (env.state_prompt[:, None] == x))
        r = R[s, a]
        states.append(s)
        actions.append(a)
        matrices.append(1.0 / (1.0 + np.exp(-(r[:, None] - r[None, :]))))
    return _model(env, states, actions, matrices)


def preference_table(mdp: TokenEnv, table: Mapping[str, tuple[Sequence[str], object]]
                     ) -> PreferenceModel:
    """Any preference: ``table[prompt] = (responses, P)`` with ``P[i, j] = P(y_i > y_j)``
    in ``[0, 1]``, ``P + P^T = 1`` (to 1e-9; so ``P[i, i] = 1/2``), for every prompt of the
    token MDP ``mdp``; the responses are texts of ``mdp``."""
    env = as_token_env(mdp, "mdp")
    missing = [x for x in env.prompts if x not in table]
    if missing or len(table) != len(env.prompts):
        raise ValueError(f"table must give every prompt of the mdp {env.prompts!r} and no "
                         f"other, got {list(table)!r}")
    states, actions, matrices = [], [], []
    for x in env.prompts:
        responses, P = table[x]
        if isinstance(responses, str) or len(set(responses)) != len(responses) or not len(
                responses):
            raise ValueError(f"table[{x!r}] must list distinct responses, got {responses!r}")
        P = np.asarray(P, dtype=float) if not isinstance(P, str) else np.array([])
        n = len(responses)
        if P.shape != (n, n) or not (np.all(P >= 0.0) and np.all(P <= 1.0)) or np.abs(
                P + P.T - 1.0).max() > 1e-9:
            raise ValueError(f"table[{x!r}] must hold a {n} x {n} matrix of probabilities "
                             f"with P + P^T = 1, got {P!r}")
        ends = [response_path(env, x, y) for y in responses]
        states.append(np.array([s[-1] for s, _ in ends]))
        actions.append(np.array([a[-1] for _, a in ends]))
        matrices.append(P)
    return _model(env, states, actions, matrices)


# ------------------------------------------------------------------ the game
def nash_gap(pi: np.ndarray, ref: np.ndarray, P: np.ndarray, beta: float) -> float:
    """The duality gap of the regularised game at ``(pi, pi)`` on one prompt (``pi``,
    ``ref``: ``[n]`` distributions over its responses, ``ref > 0``; ``P`` its matrix):
    ``2 beta log Z(pi) + 2 beta KL(pi || ref) - 1``; at ``beta = 0``, ``2 max_y P(y > pi)
    - 1`` (see the module)."""
    win = P @ pi  # P(y > pi)
    if beta == 0.0:
        return float(2.0 * win.max() - 1.0)
    logits = np.log(ref) + win / beta
    top = logits.max()
    log_z = top + np.log(np.exp(logits - top).sum())
    on = pi > 0.0
    kl = float(pi[on] @ (np.log(pi[on]) - np.log(ref[on])))
    return float(2.0 * beta * log_z + 2.0 * beta * kl - 1.0)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def _mirror_prox(ref: np.ndarray, P: np.ndarray, beta: float, tol: float, max_iter: int
                 ) -> tuple[np.ndarray, int, float]:
    """The regularised equilibrium on one prompt by mirror-prox on the symmetric game (one
    player's iterate serves both: the second player's gradient ``P^T pi = 1 - P pi`` is
    the first's up to a constant). Each step is the entropic proximal step of the
    regularised payoff, ``log pi' = (log pi + eta beta log ref + eta P q) / (1 + eta beta)``
    normalised, taken first with ``q = pi`` (the extrapolation) and then, from ``pi``
    again, with ``q`` that half step's policy; step ``eta = 1 / max|P|`` (the payoff's
    Lipschitz constant in the l1 / l-infinity pair). Returns ``(pi, iterations, gap)``,
    the gap checked every 16 iterations."""
    eta = 1.0 / np.abs(P).max()
    log_ref = np.log(ref)
    z, pi = log_ref.copy(), ref.copy()
    gap = nash_gap(pi, ref, P, beta)
    it = 0

    def prox(q):
        w = (z + eta * beta * log_ref + eta * (P @ q)) / (1.0 + eta * beta)
        return w - (w.max() + np.log(np.exp(w - w.max()).sum()))

    while gap > tol and it < max_iter:
        half = np.exp(prox(pi))
        z = prox(half)
        pi = np.exp(z)
        it += 1
        if it % 16 == 0 or it == max_iter:
            gap = nash_gap(pi, ref, P, beta)
    pi = _polish(pi, ref, P, beta)
    return pi, it, nash_gap(pi, ref, P, beta)


def _best_response(pi: np.ndarray, ref: np.ndarray, P: np.ndarray, beta: float) -> np.ndarray:
    """``T(pi) ∝ ref exp(P pi / beta)``: the regularised best response to ``pi``."""
    z = np.log(ref) + (P @ pi) / beta
    return _softmax(z)


def _polish(pi: np.ndarray, ref: np.ndarray, P: np.ndarray, beta: float) -> np.ndarray:
    """Newton's method on the fixed point ``pi = T(pi)`` from mirror-prox's ``pi`` (a gap
    ``g`` leaves ``pi`` only within ``sqrt(g / beta)`` of the equilibrium: the gap is
    quadratic there), with the Jacobian ``I - (diag T - T T^T) P / beta``, while the
    residual ``|pi - T(pi)|`` falls."""
    res = np.abs(pi - _best_response(pi, ref, P, beta)).max()
    for _ in range(20):
        t = _best_response(pi, ref, P, beta)
        J = np.eye(pi.size) - (np.diag(t) - np.outer(t, t)) @ P / beta
        new = pi - np.linalg.lstsq(J, pi - t, rcond=None)[0]
        if (new < 0.0).any():
            break
        new /= new.sum()
        new_res = np.abs(new - _best_response(new, ref, P, beta)).max()
        if not new_res < res:
            break
        pi, res = new, new_res
    return pi


def nash_equilibrium(mdp: TokenEnv, ref_policy: PolicyLike, preference: PreferenceModel, *,
                     beta: float, tol: float = 1e-12, max_iter: int = 10**6
                     ) -> NashEquilibrium:
    """The equilibrium of the ``beta``-regularised preference game of ``preference``
    against ``ref_policy`` (Munos et al., 2024, eq. 4), prompt by prompt, by mirror-prox
    to an exact duality gap of at most ``tol`` (see the module).

    ``mdp``: the token MDP of ``preference``; ``ref_policy`` must put all its mass on
    the model's responses; ``beta > 0``; ``tol > 0`` (default ``1e-12``; the gap is
    computed in float64, whose rounding is about ``1e-15``); ``max_iter`` (default
    ``10**6``): a ``RuntimeError`` if the gap is still above ``tol`` after it."""
    beta = check_positive("beta", beta)
    tol = check_positive("tol", tol)
    max_iter = check_positive_int("max_iter", max_iter, high=10**8)
    env = as_token_env(mdp, "mdp")
    model = env.to_mdp()
    ref = preference.conditional(ending_probabilities(
        model, as_softmax_policy(model, ref_policy, "ref_policy")), "ref_policy")
    if not (ref > 0.0).all():
        i = int(np.argmin(ref))
        raise ValueError(f"ref_policy gives response {preference.texts[i]!r} probability 0: "
                         "the regularised game needs every compared response possible")
    probs = np.zeros_like(ref)
    X = len(preference.matrices)
    gaps, iters = np.zeros(X), np.zeros(X, dtype=np.int64)
    for x in range(X):
        lo, hi = preference.bounds[x], preference.bounds[x + 1]
        probs[lo:hi], iters[x], gaps[x] = _mirror_prox(ref[lo:hi], preference.matrices[x],
                                                       beta, tol, max_iter)
        if not gaps[x] <= tol:
            raise RuntimeError(f"mirror-prox left a duality gap of {gaps[x]:.3g} > tol={tol} "
                               f"on prompt {env.prompts[x]!r} after {max_iter} iterations: "
                               "raise max_iter or tol")
    endings = np.zeros((model.n_states, model.n_actions))
    endings[preference.states, preference.actions] = (
        probs * preference.prompt_probs[preference.prompt])
    return NashEquilibrium(endings, probs, gaps, iters)


def preference_gap(mdp: TokenEnv, policy: PolicyLike, ref_policy: PolicyLike,
                   preference: PreferenceModel, *, beta: float) -> float:
    """``E_x gap_x(pi)``: the regularised game's duality gap at ``(pi, pi)``, averaged
    over the prompts (0 exactly at the Nash equilibrium; ``beta = 0``: the unregularised
    game, where ``pi`` is an equilibrium iff no response beats it with probability
    above 1/2)."""
    beta = check_nonnegative("beta", beta)
    env = as_token_env(mdp, "mdp")
    model = env.to_mdp()

    def conditional(p, name):
        p = (as_softmax_policy(model, p, name) if isinstance(p, SoftmaxPolicy)
             else policy_matrix(model, p, name))
        return preference.conditional(ending_probabilities(model, p), name)

    pi = conditional(policy, "policy")
    ref = conditional(ref_policy, "ref_policy")
    return float(sum(
        preference.prompt_probs[x] * nash_gap(pi[lo:hi], ref[lo:hi], preference.matrices[x],
                                              beta)
        for x, (lo, hi) in enumerate(zip(preference.bounds[:-1], preference.bounds[1:],
                                         strict=True))))


def nash_md(mdp: TokenEnv, ref_policy: PolicyLike, preference: PreferenceModel, *,
            beta: float, iterations: int = 100, alpha: float | None = None,
            policy: PolicyLike | None = None) -> NashMDResult:
    """Nash mirror descent (Munos et al., 2024, section 6), its exact (expected) update on
    the response distributions, prompt by prompt: the geometric mixture
    ``pi_t^mu ∝ pi_t^(1 - eta beta) ref^(eta beta)``, then
    ``pi_{t+1} ∝ pi_t^mu exp(eta P(y > pi_t^mu))``: the best regularised response to the
    mixture within a KL step of it.

    ``beta`` (> 0): the game's regularisation (``tau`` in the paper); ``alpha``: a constant
    step ``eta`` with ``eta beta <= 1`` (TRL's ``mixture_coef`` is ``eta beta``), or
    ``None`` (default): the paper's ``eta_t = 1 / (beta (t + 2))``, under which the last
    iterate converges to :func:`nash_equilibrium` (theorem 1, ``KL(pi*, pi_t) <= 8 /
    (beta^2 (t + 1))``); a constant step stops at a point biased by ``O(eta / beta)``.
    ``policy``: the start, default the reference. Every iterate's exact gap is recorded."""
    beta = check_positive("beta", beta)
    iterations = check_positive_int("iterations", iterations, high=10**6)
    if alpha is not None:
        alpha = check_positive("alpha", alpha)
        if alpha * beta > 1.0:
            raise ValueError(f"alpha * beta must be at most 1 (the mixture's weight on the "
                             f"reference), got {alpha * beta}")
    env = as_token_env(mdp, "mdp")
    model = env.to_mdp()

    def conditional(p, name):
        q = preference.conditional(ending_probabilities(model, as_softmax_policy(model, p, name)),
                                   name)
        if not (q > 0.0).all():
            raise ValueError(f"{name} gives response {preference.texts[int(np.argmin(q))]!r} "
                             "probability 0: Nash-MD needs every compared response possible")
        return q

    ref = conditional(ref_policy, "ref_policy")
    pi = ref.copy() if policy is None else conditional(policy, "policy")
    probs = np.empty((iterations + 1, ref.size))
    gap = np.empty(iterations + 1)
    blocks = list(zip(preference.bounds[:-1], preference.bounds[1:], strict=True))

    def expected_gap(p):
        return sum(preference.prompt_probs[x] * nash_gap(p[lo:hi], ref[lo:hi],
                                                         preference.matrices[x], beta)
                   for x, (lo, hi) in enumerate(blocks))

    probs[0], gap[0] = pi, expected_gap(pi)
    for t in range(iterations):
        eta = 1.0 / (beta * (t + 2)) if alpha is None else alpha
        new = np.empty_like(pi)
        for x, (lo, hi) in enumerate(blocks):
            mix = _softmax((1.0 - eta * beta) * np.log(pi[lo:hi]) + eta * beta * np.log(ref[lo:hi]))
            new[lo:hi] = _softmax(np.log(mix) + eta * (preference.matrices[x] @ mix))
        pi = new
        probs[t + 1], gap[t + 1] = pi, expected_gap(pi)
    return NashMDResult(probs, gap)
