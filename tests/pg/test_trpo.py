"""TRPO against exact ground truth: the natural gradient of a softmax table, every step's
KL and surrogate recomputed from the sampled episodes, the monotonic-improvement bound
of Schulman et al. (2015) on random MDPs, and the KL-regularised optimum of the token
scenario (PPO's variants are measured there too)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabular import SoftmaxPolicy, TabularMDP, policy_evaluation, ppo, trpo
from tabular.envs import load_scenario
from tabular.envs.token import TokenMDP
from tabular.pg.trpo import Fisher, conjugate_gradient, fisher_product
from tabular.rlhf import kl_objective, kl_optimum, sequence_kl, visit_probabilities
from tabular.rlhf.pipeline import train_pipeline
from tabular.schedules import exponential
from tabular.testing import acyclic_mdps, gammas, mdps


def softmax(logits):
    with np.errstate(invalid="ignore"):
        z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def kl_rows(p, q):
    """``KL(p || q)`` row by row (0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0).sum(axis=-1)


# ------------------------------------------------------------ natural gradient
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_conjugate_gradient_finds_the_tabular_natural_gradient(n_rows, A, seed):
    """For a softmax table the Fisher is block diagonal, ``F_r = w_r (diag pi_r - pi_r
    pi_r^T)``, and the natural gradient of ``g_r = sum_k A_k (e_{a_k} - pi_r) / M`` has
    the closed form ``x_r = g_r / (w_r pi_r)`` up to a constant per row (Kakade, 2001).
    Conjugate gradient from 0 stays in ``F``'s range (rows summing to 0), so with enough
    steps it returns exactly that closed form centred per row; masked actions stay 0."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n_rows, A)) * 2
    logits[rng.random((n_rows, A)) < 0.2] = -np.inf
    logits[np.arange(n_rows), rng.integers(0, A, n_rows)] = 0.0  # every row keeps an action
    probs = softmax(logits)
    weights = rng.integers(1, 5, n_rows) / 4.0
    g = np.zeros((n_rows, A))
    for i in range(n_rows):  # a batch of samples in row i with random advantages
        for a in rng.choice(A, size=4, p=probs[i] / probs[i].sum()):
            g[i] += rng.normal() * (np.eye(A)[a] - probs[i]) / 4.0
    x, work = np.empty_like(g), np.empty((3, n_rows, A))
    fisher = Fisher(probs, weights, n_rows)
    # n steps suffice in exact arithmetic; in floating point an ill-conditioned F (a
    # probability near 0) loses conjugacy, and a few times n steps converge
    conjugate_gradient(fisher, g, 4 * n_rows * A, x, work)
    on = probs > 0
    closed = np.where(on, g / (weights[:, None] * np.where(on, probs, 1.0)), 0.0)
    centred = np.where(on, closed - (closed * on).sum(1, keepdims=True) / on.sum(1, keepdims=True),
                       0.0)
    scale = np.abs(centred).max() + 1e-300
    np.testing.assert_allclose(x / scale, centred / scale, atol=1e-8)
    Fx = np.empty_like(x)
    fisher_product(fisher, x, Fx)
    # ||F_r|| <= w_r, so x's error above (1e-8 scale) bounds the residual F x - g
    np.testing.assert_allclose(Fx, g, atol=2e-8 * scale * weights.max())


def test_one_step_on_a_bandit_is_the_natural_gradient_scaled_to_the_kl_limit():
    """One TRPO iteration on a 3-armed bandit from uniform logits, with a critic of 0 and
    lam = 1 (advantage = reward): the step is ``0.5^k s x`` with ``x`` the natural
    gradient of the batch (centred), ``s = sqrt(2 delta / x^T F x)``, ``k`` the recorded
    backtracks; the batch is read off the rewards (1, 2, 4 for arms 0, 1, 2)."""
    P = {0: {a: [(1.0, 1, float(2**a), True)] for a in range(3)},
         1: {a: [(1.0, 1, 0.0, True)] for a in range(3)}}
    bandit = TabularMDP.from_transitions(P, start=np.array([1.0, 0.0]))
    M, delta = 12, 0.05
    res = trpo(bandit, iterations=1, episodes_per_batch=M, max_kl=delta, lam=1.0, seed=3)
    arms = np.log2(res.episode_returns).astype(int)
    pi = np.full(3, 1 / 3)
    g = sum(r * (np.eye(3)[a] - pi) for a, r in zip(arms, res.episode_returns, strict=True)) / M
    x = g / pi
    x -= x.mean()
    F = (np.diag(pi) - np.outer(pi, pi))  # one state, visited once per episode: weight 1
    full = np.sqrt(2 * delta / (x @ F @ x)) * x
    k = res.backtracks[0]
    assert k >= 0
    np.testing.assert_allclose(res.logits[0], 0.5**k * full, rtol=1e-10, atol=1e-13)
    assert res.step_kl[0] == pytest.approx(kl_rows(pi, softmax(res.logits[0])), rel=1e-10)
    assert res.step_kl[0] <= delta


# ------------------------------------------------- every step, recomputed
def random_token_mdp(seed, max_len=3):
    """Two prompts, every response over {a, b} up to ``max_len`` tokens, a distinct random
    reward per response (so an episode's return names its response)."""
    rng = np.random.default_rng(seed)
    table = {}

    def reward(prompt, response):
        return table.setdefault((prompt, response), float(rng.normal()))

    env = TokenMDP(["a", "b"], reward, vocab=["a", "b"], max_len=max_len,
                   prompt_probs=rng.dirichlet(np.ones(2)))
    return env.to_mdp()


def responses_by_return(mdp):
    """``{return: (states, actions)}`` of every response of a deterministic token MDP whose
    reward is paid on the last token."""
    paths, stack = {}, [(int(s), [], []) for s in np.flatnonzero(mdp.start > 0)]
    while stack:
        s, states, actions = stack.pop()
        for a in range(mdp.n_actions):
            if mdp.done[s, a, 0]:
                paths[float(mdp.reward[s, a, 0])] = (states + [s], actions + [a])
            else:
                stack.append((int(mdp.next_state[s, a, 0]), states + [s], actions + [a]))
    return paths


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_every_accepted_step_keeps_the_kl_limit_and_improves_the_surrogate(beta):
    """Each iteration's batch is read back from the recorded returns (each response pays
    its own reward), the policies and critics before and after from shorter runs with
    the same seed (iteration i draws the same numbers whatever comes after). From them,
    in NumPy: the batch's KL per episode ``(1/M) sum_t KL(pi_old(.|s_t) || pi_new(.|s_t))``
    is at most ``max_kl`` and equals the recorded ``step_kl``; the surrogate
    ``(1/M) sum_t (rho_t - 1) A_t``, with GAE advantages of the KL-shaped rewards and
    the critic of the time, is > 0 for every accepted step; a refused step leaves the
    policy as it was."""
    mdp = random_token_mdp(1)
    paths = responses_by_return(mdp)
    assert len(paths) == 2 * 15  # 15 responses per prompt, each with its own reward
    rng = np.random.default_rng(2)
    ref = SoftmaxPolicy(rng.normal(size=(mdp.n_states, mdp.n_actions)), np.arange(mdp.n_states))
    M, K, lam = 6, 12, 0.9
    kw = dict(episodes_per_batch=M, max_kl=exponential(0.2, 0.8), lam=lam, alpha_value=0.5,
              ref_policy=ref, beta=beta, seed=4)
    runs = [trpo(mdp, ref, iterations=i, **kw) for i in range(1, K + 1)]
    final = runs[-1]
    assert (final.backtracks >= 0).sum() >= K // 2 and (final.backtracks > 0).any()
    log_ref = np.log(ref.probs())
    for i, res in enumerate(runs):
        np.testing.assert_array_equal(res.episode_returns, final.episode_returns[:(i + 1) * M])
        old = ref.logits if i == 0 else runs[i - 1].logits
        V = np.zeros(mdp.n_states) if i == 0 else runs[i - 1].V
        p_old, p_new = softmax(old), softmax(res.logits)
        kl, gain = 0.0, 0.0
        for G in res.episode_returns[i * M:]:
            states, actions = paths[G]
            T = len(states)
            rewards = np.zeros(T)
            rewards[-1] = G
            rewards -= beta * (np.log(p_old[states, actions]) - log_ref[states, actions])
            values = np.append(V[states], 0.0)  # the episode ends: nothing to bootstrap
            deltas = rewards + values[1:] - values[:-1]
            adv = np.array([sum(lam**j * d for j, d in enumerate(deltas[t:])) for t in range(T)])
            kl += kl_rows(p_old[states], p_new[states]).sum() / M
            ratio = p_new[states, actions] / p_old[states, actions]
            gain += ((ratio - 1.0) * adv).sum() / M
        limit = exponential(0.2, 0.8)(i + 1)
        if final.backtracks[i] >= 0:
            assert kl <= limit + 1e-12 and gain > 0.0
            assert final.step_kl[i] == pytest.approx(kl, rel=1e-9, abs=1e-15)
        else:
            np.testing.assert_array_equal(res.logits, old)
            assert final.step_kl[i] == 0.0


# ------------------------------------------- the monotonic-improvement bound
def exact_terms(mdp, pi, gamma):
    """``eta(pi)``, the visitation ``rho_pi(s) = sum_t gamma^t P(s_t = s)`` and ``A_pi``."""
    ev = policy_evaluation(mdp, pi, gamma=gamma)
    live = np.where(mdp.done, 0.0, mdp.prob)
    P = np.zeros((mdp.n_states, mdp.n_states))
    for s, a, k in zip(*np.nonzero(live), strict=True):
        P[s, mdp.next_state[s, a, k]] += pi[s, a] * live[s, a, k]
    rho = np.linalg.solve((np.eye(mdp.n_states) - gamma * P).T, mdp.start)
    return mdp.start @ ev.V, rho, ev.Q - ev.V[:, None]


def surrogate_and_bounds(mdp, logits, new_logits, gamma):
    """``(eta(pi_new), L_pi(pi_new), eps, max KL, max TV)`` (Schulman et al., 2015, eq. 9)."""
    pi, new = softmax(logits), softmax(new_logits)
    eta, rho, adv = exact_terms(mdp, pi, gamma)
    eta_new = exact_terms(mdp, new, gamma)[0]
    L = eta + rho @ (new * adv).sum(axis=1)
    return (eta_new, L, np.abs(adv).max(), kl_rows(pi, new).max(),
            0.5 * np.abs(pi - new).sum(axis=1).max())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mdps(max_states=8, max_actions=4, max_outcomes=3), gammas(0.95),
       st.integers(0, 2**32 - 1), st.floats(0.01, 3.0))
def test_theorem_1_bounds_the_true_improvement_on_random_mdps(mdp, gamma, seed, size):
    """Theorem 1 of Schulman et al. (2015), both sides exact (policy evaluation, the
    discounted visitation by a linear solve): for any two policies,
    ``eta(pi_new) >= L_pi(pi_new) - C max_s KL(pi(.|s) || pi_new(.|s))`` with
    ``C = 4 eps gamma / (1 - gamma)^2``, ``eps = max_{s,a} |A_pi(s, a)|``."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(mdp.n_states, mdp.n_actions))
    new_logits = logits + size * rng.normal(size=logits.shape)
    eta_new, L, eps, max_kl, _ = surrogate_and_bounds(mdp, logits, new_logits, gamma)
    C = 4 * eps * gamma / (1 - gamma) ** 2
    assert eta_new >= L - C * max_kl - 1e-9 * (1 + abs(L))


def horizon_bounds(eps, max_kl, max_tv, H):
    """The finite-horizon forms of the bound (gamma = 1, at most ``H`` decisions): with
    ``alpha = max TV``, ``|eta(pi_new) - L_pi(pi_new)| <= 4 eps (alpha H - 1 + (1 -
    alpha)^H)``, and, from ``1 - (1 - alpha)^t <= t alpha`` and ``alpha^2 <= max KL``,
    ``<= 2 eps H (H - 1) max KL``."""
    return 4 * eps * (max_tv * H - 1 + (1 - max_tv) ** H), 2 * eps * H * (H - 1) * max_kl


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.floats(0.01, 3.0))
def test_the_finite_horizon_bound_holds_on_random_token_mdps(seed, max_len, size):
    """The token MDP is undiscounted with at most ``H = max_len`` decisions, where the
    discounted constant ``4 eps gamma / (1 - gamma)^2`` is infinite. Lemma 3 of the
    paper summed over ``t = 0 .. H-1`` instead of weighted by ``gamma^t`` gives
    ``|eta(pi_new) - L_pi(pi_new)| <= 4 eps (alpha H - 1 + (1 - alpha)^H)
    <= 2 eps H (H - 1) max KL``; both hold, with both sides exact on the prefix tree (and
    ``H = 1``, a bandit, makes the surrogate exact)."""
    mdp = random_token_mdp(seed, max_len)
    rng = np.random.default_rng(seed + 1)
    logits = rng.normal(size=(mdp.n_states, mdp.n_actions))
    new_logits = logits + size * rng.normal(size=logits.shape)
    eta_new, L, eps, max_kl, max_tv = surrogate_and_bounds(mdp, logits, new_logits, 1.0)
    tv_bound, kl_bound = horizon_bounds(eps, max_kl, max_tv, max_len)
    slack = 1e-9 * (1 + abs(L))
    assert abs(eta_new - L) <= tv_bound + slack
    assert tv_bound <= kl_bound + slack
    assert eta_new >= L - kl_bound - slack
    # on the tree the undiscounted visitation is the probability of passing through s
    rho = exact_terms(mdp, softmax(logits), 1.0)[1]
    np.testing.assert_allclose(rho, visit_probabilities(mdp, softmax(logits)), atol=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(acyclic_mdps(max_states=6, max_actions=3, max_outcomes=3), st.integers(0, 2**32 - 1),
       st.floats(0.01, 3.0))
def test_the_finite_horizon_bound_holds_on_random_stochastic_episodes(mdp, seed, size):
    """The same forms on random episodic MDPs with stochastic transitions (every episode
    ends within ``H = S`` steps): the coupling argument does not need a tree."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(mdp.n_states, mdp.n_actions))
    new_logits = logits + size * rng.normal(size=logits.shape)
    eta_new, L, eps, max_kl, max_tv = surrogate_and_bounds(mdp, logits, new_logits, 1.0)
    tv_bound, kl_bound = horizon_bounds(eps, max_kl, max_tv, mdp.n_states)
    slack = 1e-9 * (1 + abs(L))
    assert abs(eta_new - L) <= tv_bound + slack
    assert eta_new >= L - kl_bound - slack


# --------------------------------------------- the token scenario's optimum
@pytest.fixture(scope="module")
def ex():
    return train_pipeline(load_scenario())


LEARNERS = {
    "trpo": (trpo, dict(iterations=200, episodes_per_batch=16,
                        max_kl=exponential(0.02, 0.97), alpha_value=0.2, lam=0.95)),
    "ppo minibatches": (ppo, dict(iterations=200, episodes_per_batch=16, epochs=4,
                                  minibatches=4, alpha=0.125, alpha_value=0.2, lam=0.95)),
    "ppo adaptive_kl": (ppo, dict(iterations=200, episodes_per_batch=16, epochs=4,
                                  objective="adaptive_kl", kl_target=0.01, alpha=0.5,
                                  alpha_value=0.2, lam=0.95)),
    "ppo normalise": (ppo, dict(iterations=200, episodes_per_batch=16, epochs=4,
                                normalise=True, alpha=exponential(0.5, 0.98),
                                alpha_value=0.2, lam=0.95)),
    "ppo value_coef": (ppo, dict(iterations=200, episodes_per_batch=16, epochs=4,
                                 value_coef=0.5, alpha=0.5, lam=0.95)),
}
#: Largest gap allowed in any run, about twice the largest measured over 4 runs (seed 0;
#: beta = 0.5, the far optimum, sets it): PPO with 4 minibatches (alpha / 4 per step)
#: 2.2e-3, adaptive KL 1.6e-3, normalised advantages 2.9e-3, value_coef 2.3e-3 (PPO's
#: full-batch default: 2.6e-3). TRPO: most runs end below 1e-3, but a run still behind
#: when the decaying trust region closes stays behind: over seeds 0-3 (beta 1 and 2) and
#: 0-13 (beta 0.5), 4 runs each, the largest gaps were 9.6e-3 with the random streams
#: before K = 1 outcomes stopped drawing and 9.7e-3 after (seed 0 alone: 6.4e-4 and
#: 9.7e-3), so twice 9.7e-3.
GAP = {"trpo": 2e-2, "ppo minibatches": 5e-3, "ppo adaptive_kl": 5e-3,
       "ppo normalise": 6e-3, "ppo value_coef": 5e-3}


@pytest.mark.parametrize("name", list(LEARNERS))
def test_learners_reach_the_kl_regularised_optimum(ex, name):
    """Started at SFT with the KL penalty to SFT folded into the reward, each learner ends
    near the exact optimum ``pi*_beta`` for every beta, in all of 4 runs: the objective
    gap ``J* - J(pi) = beta KL(pi || pi*)`` below ``GAP[name]``. TRPO moves every
    iteration by a KL near its limit, noise included, so its limit decays
    (``0.02 * 0.97^i``); normalised advantages keep unit scale at the optimum, where
    the true ones vanish, so that step size decays too (``0.5 * 0.98^i``); four
    minibatches take steps of ``alpha / 4`` (the full batch's ``alpha = 0.5`` per epoch:
    with ``alpha / 2`` per step the clipped updates cycle around ``pi*_2``, a gap of
    1.7e-2)."""
    fn, kwargs = LEARNERS[name]
    for beta in (0.5, 1.0, 2.0):
        star = ex.optimum(beta)
        res = fn(ex.mdp, ex.reference, ref_policy=ex.reference, beta=beta, seed=0, runs=4,
                 **kwargs)
        best = kl_objective(ex.mdp, star, ex.reference, beta)
        assert best == pytest.approx(kl_optimum(ex.mdp, ex.reference, beta).value, abs=1e-10)
        for i in range(4):
            pi = res.run(i).policy
            gap = best - kl_objective(ex.mdp, pi, ex.reference, beta)
            assert -1e-12 <= gap < GAP[name], (beta, i, gap)  # 0 up to rounding
            assert sequence_kl(ex.mdp, pi, star) == pytest.approx(gap / beta, rel=1e-6,
                                                                   abs=1e-12)
