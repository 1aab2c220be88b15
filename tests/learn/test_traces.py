"""Eligibility-trace learners (tabular/learn/traces.py) and their rules (tabular/rules/traces.py).

Identities first, to rounding, on random MDPs: each learner is replayed here in plain
Python on the very episodes it saw (drawn again from the same seed with the same kernel
calls), and compared with what chapter 12 says it computes:

- TD(lambda = 0) is TD(0) and Sarsa(lambda = 0) is SARSA, bit for bit, for every trace;
  Watkins's Q(lambda = 0) is Q-learning;
- Sarsa(lambda) with the replacing trace that clears the other actions' (Figure 12.11)
  is its update written out, step by step;
- the offline lambda-return algorithm is eq. 12.4 with the lambda-returns of eq. 12.3
  written out as weighted sums of n-step returns; with lambda = 1 it is constant-alpha
  every-visit Monte Carlo (bit for bit against tabular.mc_prediction where no state
  repeats within an episode, as its updates run backwards);
- true online TD(lambda) and true online Sarsa(lambda) are the online lambda-return
  algorithm of section 12.4 (written out naively, O(T^3) per episode), after every
  episode (sections 12.4-12.5).

Then ground truth: the prediction methods approach policy_evaluation on the 19-state
random walk, the control methods reach value_iteration's optimal policy on a small
gridworld, and -inf rewards stay exact (no NaN, a -inf estimate only where it is exact).
"""

import numpy as np
import pytest
from conftest import (
    on_one_and_two_threads,
    online_by_definition,
    random_walk,
    replay_episodes,
    slow_examples,
    truncated_lambda_return,
)
from hypothesis import given
from hypothesis import strategies as st

from tabular import (
    TabularMDP,
    envs,
    mc_prediction,
    offline_lambda_return,
    optimal_actions,
    policy_evaluation,
    q_learning,
    sarsa,
    sarsa_lambda,
    td0,
    td_lambda,
    true_online_sarsa_lambda,
    true_online_td_lambda,
    value_iteration,
    watkins_q_lambda,
)
from tabular._numba.rng import seed_states
from tabular.model.sampling import sample_start, sample_step
from tabular.rules.traces import (
    accumulating_trace,
    dutch_trace,
    lambda_returns,
    replacing_trace,
    traced_update,
    true_online_gap,
)
from tabular.rules.values import epsilon_greedy_action
from tabular.schedules import inverse, linear
from tabular.testing import acyclic_mdps, gammas, mdps, random_mdp, random_policy

IDENTITY = slow_examples(25)
TRACES = ["accumulating", "replacing", "dutch"]
#: Control's traces: those of prediction and the replacing trace that clears the
#: state's other actions (Figure 12.11).
CONTROL_TRACES = [*TRACES, "clearing"]
PREDICTION = {
    "offline_lambda_return": offline_lambda_return,
    "td_lambda": td_lambda,
    "td_lambda replacing": lambda *a, **k: td_lambda(*a, trace="replacing", **k),
    "td_lambda dutch": lambda *a, **k: td_lambda(*a, trace="dutch", **k),
    "true_online_td_lambda": true_online_td_lambda,
}
CONTROL = {
    "sarsa_lambda": sarsa_lambda,
    "sarsa_lambda replacing": lambda *a, **k: sarsa_lambda(*a, trace="replacing", **k),
    "sarsa_lambda dutch": lambda *a, **k: sarsa_lambda(*a, trace="dutch", **k),
    "sarsa_lambda clearing": lambda *a, **k: sarsa_lambda(*a, trace="clearing", **k),
    "true_online_sarsa_lambda": true_online_sarsa_lambda,
    "watkins_q_lambda": watkins_q_lambda,
    "watkins_q_lambda replacing": lambda *a, **k: watkins_q_lambda(*a, trace="replacing", **k),
    "watkins_q_lambda clearing": lambda *a, **k: watkins_q_lambda(*a, trace="clearing", **k),
}
GRID = envs.GridWorld("S..\n.#.\n..G", step_reward=-1.0, goal_reward=0.0)
TRAP_GRID = envs.GridWorld("S.T\n...\n..G", step_reward=-1.0, goal_reward=0.0)




SMALL_MDPS = mdps(max_states=6, max_actions=3, max_outcomes=3)


@st.composite
def cases(draw, mdp_strategy=SMALL_MDPS):
    """``(mdp, policy, gamma, lam, alpha, seed)`` with a stochastic policy."""
    mdp = draw(mdp_strategy)
    policy = random_policy(np.random.default_rng(draw(st.integers(0, 2**32 - 1))),
                           mdp.n_states, mdp.n_actions)
    lam = draw(st.sampled_from([0.0, 0.5, 0.9, 1.0]) | st.floats(0.0, 1.0))
    alpha = draw(st.sampled_from([0.1, 0.5, 1.0]) | st.floats(0.01, 1.0))
    return mdp, policy, draw(gammas()), lam, alpha, draw(st.integers(0, 2**16))


# --------------------------------------------------------------------- replays




def replay_uniform_pairs(mdp, seed, episodes, max_steps):
    """The episodes a control learner sees with ``seed`` and ``epsilon = 1`` (then no draw
    depends on Q): the flat pair indices ``s * A + a`` of ``(S_0, A_0) .. (S_T, A_T)``."""
    model, rng = mdp.arrays, seed_states(seed)[0].copy()
    A = mdp.n_actions
    row = np.zeros(A)
    out = []
    for _ in range(episodes):
        s = sample_start(model, rng)
        pairs, rewards = [s * A + epsilon_greedy_action(row, 1.0, rng)], []
        done = False
        while not done and len(rewards) < max_steps:
            s, r, done = sample_step(model, pairs[-1] // A, pairs[-1] % A, rng)
            pairs.append(s * A + epsilon_greedy_action(row, 1.0, rng))
            rewards.append(r)
        out.append((pairs, rewards, done))
    return out




def offline_by_definition(table, episode, gamma, lam, alpha):
    """The offline lambda-return algorithm (eq. 12.4): lambda-returns of the estimate
    the episode started with, updates forwards."""
    keys, rewards, terminated = episode
    start = table.copy()
    T = len(rewards)
    for t in range(T):
        G = truncated_lambda_return(keys, rewards, terminated, t, T, gamma, lam,
                                    lambda k: start[keys[k]])
        table[keys[t]] += alpha * (G - table[keys[t]])


def sweep_by_definition(table, episode, gamma, lam, alpha):
    """The offline lambda-return algorithm in the reference code's reading: each
    lambda-return of the estimate as the sweep has left it, updates forwards."""
    keys, rewards, terminated = episode
    for t in range(len(rewards)):
        G = truncated_lambda_return(keys, rewards, terminated, t, len(rewards), gamma, lam,
                                    lambda k: table[keys[k]])
        table[keys[t]] += alpha * (G - table[keys[t]])


# --------------------------------------------------------------------- rules


def test_trace_rules_follow_the_book():
    assert accumulating_trace(0.5) == 1.5          # gamma lam z + 1 (eq. 12.5)
    assert replacing_trace(0.5) == 1.0             # eq. 12.12
    assert dutch_trace(0.5, 0.2) == 0.8 * 0.5 + 1  # (1 - alpha) gamma lam z + 1 (eq. 12.11)
    assert dutch_trace(0.5, 1.0) == replacing_trace(0.5)
    V, z = np.array([1.0, -np.inf, 2.0]), np.array([0.5, 1.0, 0.0])
    traced_update(V, z, np.full(3, 0.1), -np.inf)
    assert V[0] == V[1] == -np.inf and V[2] == 2.0  # off the trace: no 0 * -inf
    assert true_online_gap(-np.inf, -np.inf) == 0.0 and true_online_gap(3.0, 1.0) == 2.0


@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_lambda_returns_weigh_the_n_step_returns(lam):
    """The backward recursion equals eq. 12.9's weighted sum, for a finished episode and
    for one cut at T (whose last state bootstraps)."""
    rng = np.random.default_rng(0)
    rewards, values = rng.normal(size=6), rng.normal(size=7)
    out = np.zeros(6)
    for terminated in (True, False):
        dones = np.zeros(6, dtype=bool)
        dones[-1] = terminated
        lambda_returns(rewards, values, dones, 0.9, lam, out)
        keys = list(range(7))
        expected = [truncated_lambda_return(keys, rewards, terminated, t, 6, 0.9, lam,
                                            lambda k: values[k]) for t in range(6)]
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------- identities


@IDENTITY
@given(cases())
def test_td_lambda_0_is_td0_bit_for_bit(case):
    mdp, policy, gamma, _, alpha, seed = case
    kw = {"gamma": gamma, "alpha": alpha, "episodes": 30, "max_steps": 20, "seed": seed}
    expected = td0(mdp, policy, history=True, **kw)
    for trace in TRACES:
        got = td_lambda(mdp, policy, lam=0.0, trace=trace, history=True, **kw)
        np.testing.assert_array_equal(got.V_history, expected.V_history, err_msg=trace)
        np.testing.assert_array_equal(got.episode_lengths, expected.episode_lengths)
    got = true_online_td_lambda(mdp, policy, lam=0.0, history=True, **kw)
    np.testing.assert_allclose(got.V_history, expected.V_history, rtol=1e-12, atol=1e-12)


@IDENTITY
@given(cases(), st.sampled_from(CONTROL_TRACES))
def test_sarsa_lambda_0_is_sarsa_and_watkins_0_is_q_learning(case, trace):
    mdp, _, gamma, _, alpha, seed = case
    kw = {"gamma": gamma, "alpha": alpha, "epsilon": 0.3, "episodes": 30, "max_steps": 20,
          "seed": seed}
    for mine, theirs in ((sarsa_lambda, sarsa), (watkins_q_lambda, q_learning)):
        got, expected = mine(mdp, lam=0.0, trace=trace, **kw), theirs(mdp, **kw)
        np.testing.assert_array_equal(got.Q, expected.Q, err_msg=mine.__name__)
        np.testing.assert_array_equal(got.episode_returns, expected.episode_returns)


@IDENTITY
@given(cases(acyclic_mdps(max_states=8, max_actions=3, max_outcomes=3)))
def test_offline_lambda_1_is_every_visit_constant_alpha_mc(case):
    """No state repeats within an episode of an acyclic MDP, so the order of the updates
    (forwards here, backwards in mc_prediction) does not matter: bit for bit."""
    mdp, policy, gamma, _, alpha, seed = case
    kw = {"gamma": gamma, "alpha": alpha, "episodes": 30, "seed": seed, "history": True}
    got = offline_lambda_return(mdp, policy, lam=1.0, **kw)
    expected = mc_prediction(mdp, policy, first_visit=False, **kw)
    np.testing.assert_array_equal(got.V_history, expected.V_history)


@IDENTITY
@given(cases())
def test_offline_sweep_targets_at_lambda_0_are_td0_bit_for_bit(case):
    """With lam = 0 each sweep target ``R + gamma V(S_{t+1})`` reads V as TD(0) would at
    step t: the earlier updates of the episode are in, the later ones not yet."""
    mdp, policy, gamma, _, alpha, seed = case
    kw = {"gamma": gamma, "alpha": alpha, "episodes": 30, "max_steps": 20, "seed": seed,
          "history": True}
    got = offline_lambda_return(mdp, policy, lam=0.0, targets="sweep", **kw)
    np.testing.assert_array_equal(got.V_history, td0(mdp, policy, **kw).V_history)


@IDENTITY
@given(cases(acyclic_mdps(max_states=8, max_actions=3, max_outcomes=3)))
def test_offline_targets_agree_where_no_state_recurs(case):
    """The sweep moves only states already passed; without a recurrence no target reads
    one of them, so the two readings agree bit for bit at every lambda."""
    mdp, policy, gamma, lam, alpha, seed = case
    kw = {"lam": lam, "gamma": gamma, "alpha": alpha, "episodes": 30, "seed": seed,
          "history": True}
    np.testing.assert_array_equal(
        offline_lambda_return(mdp, policy, targets="sweep", **kw).V_history,
        offline_lambda_return(mdp, policy, **kw).V_history)


def test_offline_targets_agree_at_lambda_1_on_the_walk():
    """With lam = 1 nothing is bootstrapped from a finished episode (the walk's end in
    time): both readings are every-visit constant-alpha MC, bit for bit, though states
    recur."""
    mdp = random_walk()
    walk = np.ones((mdp.n_states, mdp.n_actions))
    kw = {"lam": 1.0, "alpha": 0.3, "episodes": 20, "initial_V": 0.2, "seed": 2,
          "history": True}
    sweep = offline_lambda_return(mdp, walk, targets="sweep", **kw)
    assert (sweep.episode_lengths < mdp.max_episode_steps).all()  # every episode finished
    np.testing.assert_array_equal(sweep.V_history,
                                  offline_lambda_return(mdp, walk, **kw).V_history)


def test_offline_targets_differ_by_alpha_squared_on_the_walk():
    """On the walk states recur, and one episode's readings differ by ``alpha^2 c +
    O(alpha^3)``: each target moves by ``O(alpha)``, and its update is scaled by
    ``alpha``. Dividing ``alpha`` by 10 divides the difference by 100, to 1%."""
    mdp = random_walk()
    walk = np.ones((mdp.n_states, mdp.n_actions))

    def gap(alpha):
        kw = {"lam": 0.8, "alpha": alpha, "episodes": 1, "initial_V": 0.3, "seed": 5}
        return np.abs(offline_lambda_return(mdp, walk, targets="sweep", **kw).V
                      - offline_lambda_return(mdp, walk, **kw).V).max()

    assert gap(0.5) > 1e-3  # visibly apart at the figure's step sizes
    assert gap(1e-3) / gap(1e-4) == pytest.approx(100.0, rel=0.01)


@pytest.mark.parametrize("learn, by_definition, initial_V, episodes", [
    (offline_lambda_return, offline_by_definition, 0.5, 5),
    (lambda *a, **k: offline_lambda_return(*a, targets="sweep", **k), sweep_by_definition,
     0.5, 5),
    (true_online_td_lambda, online_by_definition, -0.3, 4),
])
@IDENTITY
@given(case=cases())
def test_prediction_follows_its_definition(learn, by_definition, initial_V, episodes, case):
    """Eq. 12.4 (the offline lambda-return; lam = 1 is constant-alpha every-visit MC
    with forward updates) and sections 12.4-12.5 (true online TD(lambda) computes the
    online lambda-return algorithm's estimates exactly), after every episode of random
    MDPs with cycles and cut episodes."""
    mdp, policy, gamma, lam, alpha, seed = case
    got = learn(mdp, policy, lam=lam, gamma=gamma, alpha=alpha, episodes=episodes,
                max_steps=15, initial_V=initial_V, seed=seed, history=True)
    V = np.full(mdp.n_states, initial_V)
    for i, episode in enumerate(replay_episodes(mdp, policy, seed, episodes, 15)):
        by_definition(V, episode, gamma, lam, alpha)
        np.testing.assert_allclose(got.V_history[i], V, rtol=1e-10, atol=1e-10)


@IDENTITY
@given(cases())
def test_true_online_sarsa_lambda_is_the_online_lambda_return(case):
    """The same identity for action values; epsilon = 1 makes the episodes independent
    of Q, so they can be replayed."""
    mdp, _, gamma, lam, alpha, seed = case
    episodes = 4
    got = true_online_sarsa_lambda(mdp, lam=lam, gamma=gamma, alpha=alpha, epsilon=1.0,
                                   episodes=episodes, max_steps=15, seed=seed)
    Q = np.zeros(mdp.n_states * mdp.n_actions)
    for episode in replay_uniform_pairs(mdp, seed, episodes, 15):
        online_by_definition(Q, episode, gamma, lam, alpha)
    np.testing.assert_allclose(got.Q.ravel(), Q, rtol=1e-10, atol=1e-10)


def clearing_sarsa_lambda_by_definition(table, episode, n_actions, gamma, lam, alpha):
    """Sarsa(lambda) with replacing traces that clear the other actions' (Figure 12.11,
    section 12.7), one episode of flat pairs written out: ``delta``, then ``z <- gamma
    lam z``, ``z(S, a) <- 0`` for every action of ``S``, ``z(S, A) <- 1``, ``Q <- Q +
    alpha delta z``; a cut episode's last step bootstraps from ``Q(S_T, A_T)``."""
    keys, rewards, terminated = episode
    z = np.zeros_like(table)
    for t, r in enumerate(rewards):
        last = t == len(rewards) - 1 and terminated
        delta = r + (0.0 if last else gamma * table[keys[t + 1]]) - table[keys[t]]
        z *= gamma * lam
        state = keys[t] - keys[t] % n_actions
        z[state:state + n_actions] = 0.0
        z[keys[t]] = 1.0
        table += alpha * delta * z


@IDENTITY
@given(cases())
def test_clearing_sarsa_lambda_follows_its_definition(case):
    """Sarsa(lambda) with trace="clearing" replayed on its episodes (epsilon = 1 makes
    them independent of Q): the kernel's Q is the written-out update's, to rounding."""
    mdp, _, gamma, lam, alpha, seed = case
    got = sarsa_lambda(mdp, lam=lam, trace="clearing", gamma=gamma, alpha=alpha,
                       epsilon=1.0, episodes=4, max_steps=15, seed=seed)
    Q = np.zeros(mdp.n_states * mdp.n_actions)
    for episode in replay_uniform_pairs(mdp, seed, 4, 15):
        clearing_sarsa_lambda_by_definition(Q, episode, mdp.n_actions, gamma, lam, alpha)
    np.testing.assert_allclose(got.Q.ravel(), Q, rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------- ground truth


@pytest.mark.parametrize("name", PREDICTION)
@pytest.mark.parametrize("lam", [0.5, 0.8])
def test_prediction_converges_on_the_19_state_walk(name, lam):
    """v(k) = -1 + 2k/20. With alpha = 1/n**0.6 and 2000 episodes, the mean of 8 runs was
    within 0.016 of it in a trial (the worst single run 0.08); tolerance 0.03."""
    mdp = random_walk()
    policy = np.zeros(mdp.n_states, dtype=int)
    v_pi = policy_evaluation(mdp, policy, 1.0).V
    res = PREDICTION[name](mdp, policy, lam=lam, episodes=2000, alpha=inverse(1.0, 0.6),
                           runs=8, seed=1)
    np.testing.assert_allclose(res.V.mean(axis=0), v_pi, atol=0.03)


@pytest.mark.parametrize("name", CONTROL)
def test_control_reaches_the_optimal_policy_on_a_gridworld(name):
    """-1 per step, gamma = 1, lam = 0.9, alpha = 0.1, exploration decaying linearly to 0
    (GLIE): every run's greedy policy is optimal in every state (16 of 16 runs of each
    method in a trial). Watkins's Q(lambda) learns Q* itself."""
    mdp = TabularMDP.from_gymnasium(GRID)
    vi = value_iteration(mdp, 1.0)
    best = optimal_actions(vi.Q)
    res = CONTROL[name](GRID, lam=0.9, episodes=500, alpha=0.1,
                        epsilon=linear(1.0, 0.0, 400), runs=8, seed=2)
    for Q in res.Q:
        assert best[np.arange(mdp.n_states), Q.argmax(axis=1)].all()
    if name.startswith("watkins"):
        np.testing.assert_allclose(res.V, np.broadcast_to(vi.V, res.V.shape), atol=1e-6)


# --------------------------------------------------------------------- -inf rewards


@slow_examples(15)
@given(mdps(max_states=6, max_actions=3, max_outcomes=3, traps=True),
       st.sampled_from([0.5, 0.9]), st.integers(0, 2**16))
def test_prediction_minus_infinity_is_exact(mdp, gamma, seed):
    """A -inf estimate only where v_pi is -inf; no NaN."""
    policy = random_policy(np.random.default_rng(seed), mdp.n_states, mdp.n_actions)
    v_pi = policy_evaluation(mdp, policy, gamma).V
    for name, learn in PREDICTION.items():
        V = learn(mdp, policy, lam=0.8, gamma=gamma, episodes=200, alpha=0.3, max_steps=20,
                  seed=seed, runs=2).V
        assert not np.isnan(V).any(), name
        assert (v_pi[(V == -np.inf).any(axis=0)] == -np.inf).all(), name


def test_prediction_learns_every_minus_infinity_it_meets():
    """On random MDPs with traps (gamma = 0.9, 300 episodes), every method's -inf
    estimates are exactly v_pi's (sound, and complete once the trap paths are sampled)."""
    for k in range(10):
        rng = np.random.default_rng(k)
        mdp = random_mdp(rng, 5, 2, 3, done_rate=0.1, trap_rate=0.05)
        policy = random_policy(rng, 5, 2)
        trapped = policy_evaluation(mdp, policy, 0.9).V == -np.inf
        for name, learn in PREDICTION.items():
            V = learn(mdp, policy, lam=0.8, gamma=0.9, episodes=300, alpha=0.3, max_steps=20,
                      seed=k).V
            np.testing.assert_array_equal(V == -np.inf, trapped, err_msg=name)


@pytest.mark.parametrize("name", CONTROL)
def test_control_minus_infinity_is_exact(name):
    """The trap pays -inf. SARSA-like methods value the epsilon-soft policy, for which a
    pair is -inf exactly when exploration can reach the trap from it (as for the uniform
    policy); Watkins's Q(lambda) values the greedy policy: -inf only where Q* is, and its
    greedy policy is optimal from the start."""
    mdp = TabularMDP.from_gymnasium(TRAP_GRID)
    res = CONTROL[name](TRAP_GRID, gamma=0.9, episodes=1000, alpha=0.2, epsilon=0.3, runs=4,
                        seed=3)
    assert not np.isnan(res.Q).any()
    assert (res.episode_returns == -np.inf).any()  # exploration does hit the trap
    uniform = np.full((mdp.n_states, mdp.n_actions), 1 / mdp.n_actions)
    exact = value_iteration(mdp, 0.9) if name.startswith("watkins") else policy_evaluation(
        mdp, uniform, 0.9)
    for Q in res.Q:
        assert (exact.Q[Q == -np.inf] == -np.inf).all()
    if name.startswith("watkins"):
        start = np.flatnonzero(mdp.start)
        for Q in res.Q:
            v = policy_evaluation(mdp, Q.argmax(axis=1), 0.9).V
            np.testing.assert_allclose(v[start], exact.V[start], atol=1e-9)


# --------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("learn", [td_lambda, true_online_td_lambda, offline_lambda_return])
def test_prediction_same_seed_same_numbers_and_run_axis(learn):
    mdp = random_walk(7)
    policy = np.zeros(mdp.n_states, dtype=int)
    one, two = on_one_and_two_threads(lambda: learn(mdp, policy, episodes=20, runs=3, seed=4,
                                                    history=True))
    np.testing.assert_array_equal(one.V_history, two.V_history)
    assert one.V.shape == (3, 9) and one.V_history.shape == (3, 20, 9)
    assert one.episode_returns.shape == one.episode_lengths.shape == (3, 20)
    single = learn(mdp, policy, episodes=20, seed=4)
    assert single.runs is None and single.V.shape == (9,) and single.V_history is None
    assert single.episode_lengths.shape == (20,)
    np.testing.assert_array_equal(single.V, one.V[0])
    np.testing.assert_array_equal(one.V_history[0, -1], single.V)
    assert learn(mdp, policy, episodes=20, seed=4, runs=1).V.shape == (1, 9)
    assert not np.array_equal(learn(mdp, policy, episodes=20, seed=5).V, single.V)


@pytest.mark.parametrize("name", CONTROL)
def test_control_same_seed_same_numbers_and_run_axis(name):
    learn = CONTROL[name]
    one, two = on_one_and_two_threads(lambda: learn(GRID, episodes=30, runs=3, seed=6))
    np.testing.assert_array_equal(one.Q, two.Q)
    np.testing.assert_array_equal(one.episode_lengths, two.episode_lengths)
    assert one.Q.shape == (3, 8, 4) and one.policy.shape == (3, 8)
    single = learn(GRID, episodes=30, seed=6)
    assert single.runs is None and single.Q.shape == (8, 4)
    assert single.episode_returns.shape == (30,)
    np.testing.assert_array_equal(single.Q, one.Q[0])
    np.testing.assert_array_equal(one.run(0).episode_lengths, single.episode_lengths)
    assert learn(GRID, episodes=30, seed=6, runs=1).Q.shape == (1, 8, 4)


# --------------------------------------------------------------------- bad input


BAD = [({"lam": 1.5}, "lam must be in [0, 1]"), ({"lam": float("nan")}, "lam"),
       ({"lam": "0.9"}, "lam must be a number"), ({"lam": None}, "lam"),
       ({"alpha": 0.0}, "alpha"), ({"gamma": 1.5}, "gamma"), ({"episodes": 0}, "episodes"),
       ({"runs": 0}, "runs"), ({"max_steps": 0}, "max_steps")]
BAD_TRACE = [({"trace": "fancy"}, "trace must be one of"), ({"trace": None}, "trace"),
             ({"trace": ["dutch"]}, "trace")]
#: Prediction has no actions to clear.
BAD_PREDICTION_TRACE = BAD_TRACE + [
    ({"trace": "clearing"}, "trace must be one of 'accumulating', 'replacing', 'dutch', "
                            "got 'clearing'")]
BAD_PREDICTION = BAD + [({"initial_V": np.zeros(3)}, "initial_V"),
                        ({"policy": np.zeros(3, dtype=int)}, "policy")]
BAD_CONTROL = BAD + [({"epsilon": 1.5}, "epsilon"), ({"initial_Q": np.inf}, "initial_Q")]


def bad_calls():
    """Each learner with each bad argument it takes, and the fragment its error must say."""
    walk, policy = random_walk(7), np.zeros(9, dtype=int)
    for learn in (offline_lambda_return, td_lambda, true_online_td_lambda):
        traces = BAD_PREDICTION_TRACE if learn is td_lambda else []
        for kwargs, fragment in BAD_PREDICTION + traces:
            call = {"policy": policy, **kwargs}
            yield pytest.param(lambda call=call, learn=learn: learn(walk, **call), fragment,
                               id=f"{learn.__name__} {kwargs!r}"[:60])
    for learn in (sarsa_lambda, true_online_sarsa_lambda, watkins_q_lambda):
        bad = BAD_CONTROL + ([] if learn is true_online_sarsa_lambda else BAD_TRACE)
        for kwargs, fragment in bad:
            yield pytest.param(lambda kwargs=kwargs, learn=learn: learn(GRID, **kwargs),
                               fragment, id=f"{learn.__name__} {kwargs!r}"[:60])


@pytest.mark.parametrize("call, fragment", list(bad_calls()))
def test_bad_arguments_are_named(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert fragment in str(info.value)
