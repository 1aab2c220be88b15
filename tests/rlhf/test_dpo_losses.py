"""DPO's loss family: each loss's gradient against finite differences of its loss, and
each loss's population optimum (loss_optimum) against closed forms and, as a
hypothesis property, against the learner's own expected gradient, which must vanish
there."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabular.envs import TokenMDP
from tabular.rlhf import (
    bradley_terry_preference,
    dpo,
    ending_probabilities,
    kl_optimum,
    loss_optimum,
    preference_table,
)
from tabular.rlhf.best_of_n import token_policy
from tabular.rlhf.losses import LOSSES, loss_spec
from tabular.rlhf.preference import (
    exploration_bonus,
    preference_data,
    preference_loss_grad,
    rows_on_paths,
)
from tabular.testing import property_settings

ENV = TokenMDP(("Say hello.", "Hi."), {"hello": 1.0, "Hi": 0.4}, max_len=2)
MDP = ENV.to_mdp()
PAIRS = [(2.0, "Say hello.", "hello", "Say"), (1.0, "Say hello.", "Say Hi", "hello"),
         (1.5, "Hi.", "Hi", ""), (0.5, "Hi.", "hello hello", "Hi")]


def _policy(rng):
    """A random per-prefix policy (logits ``[S, A]``, row = state) and a random reference."""
    return rng.normal(size=(MDP.n_states, MDP.n_actions)), rng.dirichlet(
        np.ones(MDP.n_actions), size=MDP.n_states)


def _loss_and_grad(logits, data, spec):
    grad = np.zeros_like(logits)
    A = logits.shape[1]
    rows = rows_on_paths(logits.shape[0], data.winners, data.losers)
    loss = preference_loss_grad(logits, data, spec, rows, grad, np.empty(A), np.empty(A))
    return loss, grad


OPTIONS = [{"loss": name} for name in LOSSES] + [
    {"loss": "sigmoid", "label_smoothing": 0.2}, {"loss": "robust", "label_smoothing": 0.1},
    {"loss": "exo_pair", "label_smoothing": 0.05},
    {"loss": ("sigmoid", "sft"), "loss_weights": (1.0, 0.3)},
    {"loss": ("ipo", "bco_pair", "apo_down"), "loss_weights": (0.5, 1.0, 2.0)},
    {"loss": "sigmoid", "f_divergence_type": "forward_kl"},
    {"loss": "sigmoid", "f_divergence_type": "js_divergence"},
    {"loss": "nca_pair", "f_divergence_type": "alpha_divergence",
     "f_alpha_divergence_coef": 0.3},
    {"loss": "ipo", "average_log_prob": True}, {"loss": "sigmoid", "ld_alpha": 0.4},
    {"loss": "discopop", "discopop_tau": 0.5}, {"loss": "simpo", "simpo_gamma": 1.3},
    {"loss": "cpo", "cpo_alpha": 0.4}, {"loss": ("orpo", "sigmoid"), "ld_alpha": 0.5},
    {"loss": ("aot", "aot_unpaired", "ipo"), "loss_weights": (1.0, 0.5, 0.3),
     "label_smoothing": 0.1, "average_log_prob": True},
    {"loss": "aot_unpaired", "ld_alpha": 0.3},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(
    f"{v}" for v in o.values()))
def test_gradient_matches_finite_differences(options):
    """Central differences of the mean loss, one logit at a time: their error is
    ``h^2 f''' / 6 + eps |f| / h``, below 1e-8 for ``h = 1e-5`` at these scales (the
    losses' derivatives are O(1) here)."""
    rng = np.random.default_rng(3)
    logits, ref = _policy(rng)
    spec = loss_spec(beta=0.7, **options)
    data = preference_data(ENV, PAIRS, np.arange(MDP.n_states),
                           {"ref_policy": np.log(ref)}, options.get("ld_alpha"))
    _, ascent = _loss_and_grad(logits, data, spec)
    h = 1e-5
    rows = rows_on_paths(MDP.n_states, data.winners, data.losers)
    for r in rows:
        for a in range(MDP.n_actions):
            up, down = logits.copy(), logits.copy()
            up[r, a] += h
            down[r, a] -= h
            fd = (_loss_and_grad(up, data, spec)[0] - _loss_and_grad(down, data, spec)[0]) / (2 * h)
            assert -ascent[r, a] == pytest.approx(fd, abs=1e-8)


def test_aot_pairs_the_sorted_log_ratios_as_trl_does():
    """With unit counts, ``aot_unpaired`` is the mean over ranks ``k`` of
    ``-log sigma(beta (u_w,(k) - u_l,(k)))`` of the separately sorted log-ratios, and
    ``aot`` the same on the sorted policy and reference gaps (TRL's ``dpo_trainer``),
    to rounding."""
    rng = np.random.default_rng(5)
    logits, ref = _policy(rng)
    pairs = [(1, *p[1:]) for p in PAIRS]
    data = preference_data(ENV, pairs, np.arange(MDP.n_states), {"ref_policy": np.log(ref)})
    lp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))

    def log_pi(paths, table):
        on = np.arange(paths.rows.shape[1]) < paths.lengths[:, None]
        return np.where(on, table[paths.rows, paths.actions], 0.0).sum(axis=1)

    lw, ll = log_pi(data.winners, lp), log_pi(data.losers, lp)
    rw, rl = data.winners.ref_log_probs, data.losers.ref_log_probs
    beta = 0.7
    for loss, (a, b) in (("aot_unpaired", (lw - rw, ll - rl)), ("aot", (lw - ll, rw - rl))):
        x = beta * (np.sort(a) - np.sort(b))
        trl = np.mean(np.log1p(np.exp(-x)))
        assert _loss_and_grad(logits, data, loss_spec(loss, beta))[0] == pytest.approx(
            trl, abs=1e-14)


def test_default_loss_is_dpo_and_ipo_sums_by_default():
    """``loss="ipo"`` regresses the summed log-ratio gap to 1/(2 beta) (the zoo's, and Azar
    et al.'s on whole responses); ``average_log_prob=True`` (TRL's IPO) the per-token one:
    with responses of 2 and 1 tokens the two optima differ."""
    ref = np.full((MDP.n_states, MDP.n_actions), 1.0 / MDP.n_actions)
    prefs = [("Hi.", "Hi", "")]  # 2 tokens ("Hi", eos) against 1 (eos)
    beta = 2.0
    summed = dpo(ENV, ref, prefs, beta=beta, loss="ipo", alpha=0.1, steps=2000)
    per_token = dpo(ENV, ref, prefs, beta=beta, loss="ipo", alpha=0.1, steps=2000,
                    average_log_prob=True)
    lp = np.log(ref)

    def gap(policy, scale):
        log_pi = np.log(policy.probs())
        sw, aw = ENV.state_of("Hi."), ENV.token_id["Hi"]
        s2 = ENV.state_of("Hi.", "Hi")
        uw = (log_pi[sw, aw] - lp[sw, aw] + log_pi[s2, ENV.eos_id] - lp[s2, ENV.eos_id])
        ul = log_pi[sw, ENV.eos_id] - lp[sw, ENV.eos_id]
        return uw / scale[0] - ul / scale[1]

    assert gap(summed.policy, (1, 1)) == pytest.approx(1 / (2 * beta), abs=1e-9)
    assert gap(per_token.policy, (2, 1)) == pytest.approx(1 / (2 * beta), abs=1e-9)
    assert gap(per_token.policy, (1, 1)) != pytest.approx(1 / (2 * beta), abs=1e-3)


# --------------------------------------------------------------- the optima
SMALL = TokenMDP(("Say hello.",), {"hello": 1.0, "Say": 0.2}, max_len=2,
                 grammar=["hello", "Say", "Say hello", "hello hello"])


def _ref(seed, env=SMALL):
    m = env.to_mdp()
    rng = np.random.default_rng(seed)
    return np.where(env.legal, rng.dirichlet(np.ones(m.n_actions), size=m.n_states), 0.0) + (
        ~env.legal.any(axis=1))[:, None] / m.n_actions


def _normalise(p):
    return p / p.sum(axis=1, keepdims=True)


def test_dpo_optimum_is_pi_star_and_ipo_its_least_squares_point():
    """With every pair of the reference's responses compared under Bradley-Terry, DPO's
    population optimum is ``pi*`` of the reward; IPO's is ``ref exp(P(y > ref) / beta)``
    (Azar et al., 2024, proposition 4)."""
    ref = _normalise(_ref(1))
    pref = bradley_terry_preference(SMALL, ref)
    beta = 0.6
    star = kl_optimum(SMALL.to_mdp(), ref, beta).endings
    assert np.abs(loss_optimum(SMALL, ref, pref, beta=beta).endings - star).max() < 1e-12
    mu = pref.conditional(ending_probabilities(SMALL.to_mdp(), ref))
    target = mu * np.exp(pref.matrices[0] @ mu / beta)
    got = loss_optimum(SMALL, ref, pref, beta=beta, loss="ipo").probs
    assert np.abs(got - target / target.sum()).max() < 1e-12


def test_sft_optimum_is_the_chosen_frequencies():
    """``sft`` alone: ``pi(y) ∝ data(y) P(y > data)`` over the other responses (the
    maximum-likelihood fit of the chosen responses)."""
    ref = _normalise(_ref(2))
    pref = bradley_terry_preference(SMALL, ref)
    mu = pref.conditional(ending_probabilities(SMALL.to_mdp(), ref))
    P = pref.matrices[0] - 0.5 * np.eye(len(mu))  # no comparison of a response with itself
    target = mu * (P @ mu)
    got = loss_optimum(SMALL, ref, pref, beta=1.0, loss="sft").probs
    assert np.abs(got - target / target.sum()).max() < 1e-12


def test_cdpo_and_rdpo_optima_on_two_responses():
    """Two responses, ``P(y_1 > y_2) = p``: cDPO's optimum has ``sigma(beta h) = (1 - eps) p
    + eps (1 - p)``, rDPO's ``sigma(beta h) = (p - eps) / (1 - 2 eps)`` (h: the log-ratio
    gap)."""
    env = TokenMDP(("Q",), {"a": 1.0}, max_len=1, grammar=["a", ""])
    ref = _normalise(_ref(0, env) * 0.0 + env.legal + (~env.legal.any(axis=1))[:, None])
    p, eps, beta = 0.8, 0.1, 0.5
    pref = preference_table(env, {"Q": (["a", ""], [[0.5, p], [1 - p, 0.5]])})
    for loss, target in (("sigmoid", (1 - eps) * p + eps * (1 - p)),
                         ("robust", (p - eps) / (1 - 2 * eps))):
        pi = loss_optimum(env, ref, pref, beta=beta, loss=loss, label_smoothing=eps).probs
        h = np.log(pi[0] / 0.5) - np.log(pi[1] / 0.5)
        assert 1 / (1 + np.exp(-beta * h)) == pytest.approx(target, abs=1e-12)


OPTIMA = [{"loss": "sigmoid"}, {"loss": "sigmoid", "label_smoothing": 0.15},
          {"loss": "robust", "label_smoothing": 0.05}, {"loss": "ipo"},
          {"loss": "exo_pair", "label_smoothing": 0.2}, {"loss": "discopop"},
          {"loss": ("sigmoid", "ipo"), "loss_weights": (1.0, 0.5)},
          {"loss": "sigmoid", "f_divergence_type": "js_divergence"}, {"loss": "nca_pair"},
          {"loss": "bco_pair"}, {"loss": "sppo_hard"}, {"loss": "sft"},
          {"loss": ("sigmoid", "sft"), "loss_weights": (1.0, 0.2)}, {"loss": "cpo"},
          {"loss": "orpo"}]


@property_settings(max_examples=6)
@given(seed=st.integers(0, 2**32 - 1), beta=st.floats(0.3, 3.0),
       which=st.integers(0, len(OPTIMA) - 1), transitive=st.booleans())
def test_expected_gradient_vanishes_at_the_optimum(seed, beta, which, transitive):
    """At loss_optimum's point, the learner's own gradient on per-prefix logits, over the
    population's comparisons (fractional counts), is 0 to 1e-9: the solver and the kernel
    agree on the loss, and the point is stationary for the learner."""
    rng = np.random.default_rng(seed)
    ref = _normalise(_ref(seed))
    texts = ["hello", "Say", "Say hello", "hello hello"]
    if transitive:
        pref = bradley_terry_preference(SMALL, ref, reward=rng.normal(size=ref.shape))
    else:
        raw = rng.uniform(0.05, 0.95, size=(4, 4))
        P = np.triu(raw, 1) + np.tril(1 - raw.T, -1) + 0.5 * np.eye(4)
        pref = preference_table(SMALL, {"Say hello.": (texts, P)})
    options = OPTIMA[which]
    opt = loss_optimum(SMALL, ref, pref, beta=beta, **options)
    m = SMALL.to_mdp()
    mu = pref.conditional(ending_probabilities(m, ref))
    records = [(mu[i] * mu[j] * pref.matrices[0][i, j], "Say hello.", pref.texts[i][1],
                pref.texts[j][1]) for i in range(4) for j in range(4) if i != j]
    pi = token_policy(m, opt.endings, ref)
    with np.errstate(divide="ignore"):  # the tokens no response takes: probability 0
        data = preference_data(SMALL, records, np.arange(m.n_states),
                               {"ref_policy": np.log(ref)})
        logits = np.log(pi)
    _, grad = _loss_and_grad(logits, data, loss_spec(beta=beta, **options))
    assert np.abs(grad).max() <= 1e-9


def test_exploration_bonus_gradient_matches_finite_differences():
    """XPO's term ``xpo_alpha * mean log pi(y~)`` over the reference-drawn responses: its
    ascent direction is minus the central differences of its value (error below 1e-8 for
    ``h = 1e-5``)."""
    rng = np.random.default_rng(5)
    logits, ref = _policy(rng)
    data = preference_data(ENV, PAIRS, np.arange(MDP.n_states), {"ref_policy": np.log(ref)})
    explore = np.array([0, 1, -1, 1])  # pair 2's responses are both the policy's
    A = MDP.n_actions

    def value(theta, grad):
        return exploration_bonus(theta, data, explore, 0.3, grad, np.empty(A), np.empty(A))

    ascent = np.zeros_like(logits)
    value(logits, ascent)
    h = 1e-5
    for r in rows_on_paths(MDP.n_states, data.winners, data.losers):
        for a in range(A):
            up, down = logits.copy(), logits.copy()
            up[r, a] += h
            down[r, a] -= h
            fd = (value(up, np.zeros_like(logits)) - value(down, np.zeros_like(logits))) / (2 * h)
            assert -ascent[r, a] == pytest.approx(fd, abs=1e-8)
