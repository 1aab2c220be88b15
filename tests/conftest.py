"""Hypothesis for the whole suite: the same examples on every run of one commit, so a run
passes or fails on the code, not on the draw. ``HYPOTHESIS_PROFILE=explore`` draws fresh
examples (and keeps failures in the local database) for hunting new counterexamples.

Also what the tests of several modules share (``from conftest import ...``; no test module
imports another): :func:`slow_examples`, :func:`on_one_and_two_threads`, the browser
helpers, :func:`clear_error_test` and :func:`option_rows` (the bad-input catalogue's), a
user's own rule (:func:`own_q_learning`), and the models and by-definition references of the
traces and linear tests. This is the suite's one ``conftest.py``: a second one in a
subfolder would be imported under the same module name, and ``from conftest import`` would
then depend on the order of collection."""

import os
import shutil

import gymnasium as gym
import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import TabularMDP, policy_evaluation, value_iteration
from tabular._numba.rng import categorical, seed_states
from tabular.envs import RandomWalk
from tabular.learn.custom import max_value, td_control
from tabular.linear import (
    one_hot,
    state_action_features,
    state_aggregation,
    state_coordinates,
    tile_coding,
)
from tabular.model.sampling import sample_start, sample_step

settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def slow_examples(max_examples: int) -> settings:
    """The settings of a property test whose examples each run a learner: ``max_examples``
    derandomised examples (the same on every run), no deadline, and no health check
    for slow data generation (a drawn MDP can be large)."""
    return settings(max_examples=max_examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def on_one_and_two_threads(learn):
    """``learn()`` computed on one of numba's threads, then on two (at most the threads
    numba has): the two results, which must be the same numbers."""
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = learn()
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = learn()
    finally:
        numba.set_num_threads(threads)
    return one, two


#: Chromium and its driver for the browser tests (``None`` where missing).
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)
CHROMEDRIVER = shutil.which("chromedriver")
#: Skips a browser test, saying why, where Chromium or its driver is missing.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="headless Chromium needs chromium and chromedriver on PATH: "
           "apt-get install chromium chromium-driver (make browser does it)")


def headless_chromium(window: str, capabilities: dict | None = None):
    """A headless Chromium session through selenium, with a ``window`` of ``"W,H"``
    pixels and the given capabilities (skips where selenium is missing)."""
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed: pip install -e '.[dev]'")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", f"--window-size={window}"):
        options.add_argument(argument)
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(120)
    return driver


# ---------------------------------------------- a user's own rule (tabular/learn/custom.py)
@numba.njit(inline="always")
def own_q_learning_target(reward, gamma, q_next, done, next_action, epsilon, legal):
    """A user's Q-learning target, ``R + gamma max_a Q(S', a)`` (eq. 6.8), written by hand
    and jitted as docs/own_rule.md shows."""
    return reward if done else reward + gamma * max_value(q_next, legal)


#: :func:`own_q_learning_target` made a learner with :func:`tabular.q_learning`'s signature.
own_q_learning = td_control(own_q_learning_target)


# ------------------------------------------------------------- the bad-input catalogue
def clear_error_test(rows, after=None):
    """The test of a block of the bad-input catalogue: for each row ``(id, call, exception
    type, fragment of the message)``, ``call()`` raises that type with the fragment in its
    message (one test per row, named by its id). ``after()``, if given, runs once the
    call has raised (the plot rows close their figures)."""
    @pytest.mark.parametrize("call, error, fragment", [row[1:] for row in rows],
                             ids=[row[0] for row in rows])
    def test(call, error, fragment):
        with pytest.raises(error) as info:
            call()
        if after is not None:
            after()
        assert fragment in str(info.value), str(info.value)
    return test


def option_rows(table, callable_named):
    """The catalogue rows of a table of options, each wrong in one way: ``(id, the options,
    fragment)``, calling ``callable_named(first word of the id)(**options)``, a
    ValueError with the fragment in its message."""
    for row_id, options, fragment in table:
        call = callable_named(row_id.split()[0])
        yield (row_id, lambda call=call, kw=options: call(**kw), ValueError, fragment)


# ------------------------------------------------- the traces tests' walk and references
def random_walk(n_states=19):
    """Example 7.1's walk (rewards -1 / +1), the task of Figures 12.3, 12.6 and 12.8."""
    return TabularMDP.from_gymnasium(gym.make("tabzoo/RandomWalk-v0", n_states=n_states,
                                              left_reward=-1.0))


def replay_episodes(mdp, policy, seed, episodes, max_steps):
    """The episodes a prediction learner sees with ``seed``: ``(states, rewards,
    terminated)`` each, ``states`` holding ``S_0 .. S_T``."""
    model, rng = mdp.arrays, seed_states(seed)[0].copy()
    out = []
    for _ in range(episodes):
        states, rewards = [sample_start(model, rng)], []
        done = False
        while not done and len(rewards) < max_steps:
            a = categorical(rng, policy[states[-1]])
            s, r, done = sample_step(model, states[-1], a, rng)
            states.append(s)
            rewards.append(r)
        out.append((states, rewards, done))
    return out


def truncated_lambda_return(keys, rewards, terminated, t, h, gamma, lam, value_at):
    """``G^lam_{t:h}`` (eq. 12.9) as the weighted sum of the n-step returns ``G_{t:t+n}``
    (eq. 12.1), ``value_at(k)`` the estimate that ``G_{t:k}`` bootstraps from."""
    G, rewards_so_far = 0.0, 0.0
    for n in range(1, h - t + 1):
        rewards_so_far += gamma ** (n - 1) * rewards[t + n - 1]
        end = t + n
        tail = 0.0 if (end == len(rewards) and terminated) else gamma ** n * value_at(end)
        weight = (1 - lam) * lam ** (n - 1) if n < h - t else lam ** (h - t - 1)
        G += weight * (rewards_so_far + tail)
    return G


def linear_online_lambda_return(w0, X, episode, gamma, lam, alpha):
    """The online lambda-return algorithm (section 12.4) with linear features, written
    out: at every horizon h redo the episode's updates from its start, ``w <- w + alpha
    [G^lam_{t:h} - w . x_t] x_t``, ``G_{t:t+n}`` bootstrapping from ``w_{t+n-1}``, the
    weights at the end of horizon ``t + n - 1``. Returns the weights after the episode."""
    states, rewards, terminated = episode
    w = [w0.copy()]  # w[h]: the weights at the end of horizon h
    for h in range(1, len(rewards) + 1):
        v = w[0].copy()
        for t in range(h):
            G = truncated_lambda_return(states, rewards, terminated, t, h, gamma, lam,
                                        lambda k: w[k - 1] @ X[states[k]])
            v += alpha * (G - v @ X[states[t]]) * X[states[t]]
        w.append(v)
    return w[-1]


def online_by_definition(table, episode, gamma, lam, alpha):
    """The tabular online lambda-return algorithm: :func:`linear_online_lambda_return`
    with one-hot features (the episode's ``keys`` index ``table``), ``table`` updated in
    place. A one-hot dot product and update touch one entry and add exact zeros to the
    others, so this is the tabular algorithm's arithmetic (estimates finite)."""
    table[:] = linear_online_lambda_return(table, np.eye(table.size), episode, gamma, lam,
                                           alpha)


# ----------------------------------------------------- the linear tests' models and helpers
WALK = RandomWalk(100, jump=10, left_reward=-1.0).model()  # Example 9.1, scaled down 10x
WALK_POLICY = np.zeros(WALK.n_states, dtype=np.int64)
WALK_GROUPS = state_aggregation(np.r_[0, np.arange(100) // 10, 9])


def mean_update_z(learner, w0, alpha=1e-9, runs=100, episodes=2000):
    """The mean over runs of each run's summed update direction at ``w0``, in standard
    errors: the weights move by at most ``alpha`` times the summed errors, so the
    update is taken at ``w0`` throughout."""
    result = learner(WALK, WALK_POLICY, WALK_GROUPS, episodes=episodes, alpha=alpha,
                     runs=runs, initial_w=w0, seed=11)
    g = (result.w - w0) / alpha
    return g.mean(axis=0) / (g.std(axis=0, ddof=1) / np.sqrt(runs))


def pairs(mdp):
    """One-hot state-action features of ``mdp``: the tabular case."""
    return state_action_features(one_hot(mdp.n_states), mdp.n_actions)


def corridor(S: int = 6) -> TabularMDP:
    """A corridor of ``S - 1`` states and a goal, -1 per step, left or right, right reaching
    the goal from state ``S - 2``; the optimum goes right, ``v*(0) = -(S - 1)``."""
    nxt = np.stack([np.maximum(np.arange(S) - 1, 0), np.minimum(np.arange(S) + 1, S - 1)],
                   axis=1)[:, :, None]
    done = np.zeros((S, 2, 1), dtype=bool)
    done[S - 2, 1] = done[S - 1] = True  # the goal S - 1 is absorbing
    reward = np.full((S, 2, 1), -1.0)
    reward[S - 1] = 0.0
    start = np.zeros(S)
    start[0] = 1.0
    return TabularMDP(nxt, np.ones((S, 2, 1)), reward, done, start)


def corridor_features(mdp: TabularMDP) -> list[np.ndarray]:
    """One-hot and tile-coded (shared, binary) state-action features of :func:`corridor`."""
    return [pairs(mdp), state_action_features(
        tile_coding(state_coordinates(mdp), tilings=2, tiles=2), 2)]


def assert_learns_the_corridor(mdp: TabularMDP, result, runs: int) -> None:
    """Every run's greedy policy is value iteration's (go right), and its exact value from
    the start is v*(0) = -5."""
    optimum = value_iteration(mdp, 1.0)
    S = mdp.n_states
    for i in range(runs):
        policy = result.run(i).policy
        v = policy_evaluation(mdp, policy, 1.0, method="exact").V
        assert np.array_equal(policy[:S - 1], optimum.policy[:S - 1])
        assert v[0] == pytest.approx(optimum.V[0], abs=1e-9) and optimum.V[0] == -5.0
