"""Planning with a learned model (tabular/plan/dyna.py, Sutton & Barto chapter 8) against exact
ground truth and the chapter's measured claims.

The mazes are those of envs/mazes.py (reward 1 on reaching the goal, 0 otherwise).
Learned models of a deterministic maze are exact once every pair has been tried, so
with uniform exploration (``epsilon = 1``, all three learners learn off-policy) and
``alpha = 1`` Dyna-Q and prioritized sweeping reach Q* exactly, not just within a
tolerance. The chapter's comparisons (Figures 8.2 and 8.5, Example 8.4) were measured
over seeds first; each assertion below leaves a wide margin to what was measured,
which its docstring gives.
"""

import gymnasium as gym
import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    ControlResult,
    TabularMDP,
    policy_evaluation,
    q_learning,
    value_iteration,
)
from tabular._numba.rng import seed_states
from tabular.envs import GridWorld
from tabular.envs.mazes import (
    BLOCKING_MAZE,
    DYNA_MAZE,
    SHORTCUT_MAZE,
    changing_maze,
    finer_maze,
    greedy_steps,
    maze,
)
from tabular.plan import model as plan_model
from tabular.plan.dyna import PlanningResult, dyna_q, dyna_q_plus, prioritized_sweeping
from tabular.rules.planning import exploration_bonus, priority
from tabular.schedules import inverse, linear
from tabular.testing import mdps, property_settings

PROPERTY = property_settings(12)
PLANNERS = {"dyna_q": dyna_q, "dyna_q_plus": dyna_q_plus,
            "prioritized_sweeping": prioritized_sweeping}
GAMMA = 0.95  # Example 8.1
DYNA = maze(DYNA_MAZE).to_mdp()


def start_state(mdp):
    return int(np.flatnonzero(mdp.start)[0])


def value_scale(mdp, gamma):
    return max(np.abs(mdp.reward[mdp.prob > 0]).max(), 1e-12) / (1.0 - gamma)


# --------------------------------------------------------------------- the mazes


def test_the_mazes_are_the_books():
    """Example 8.1's maze is 6 x 9 with 7 wall cells, and its shortest path takes 14
    steps (V*(start) = gamma^13); the blocking maze's path goes from 10 to 16 steps when
    the gap moves, the shortcut maze's from 16 to 10 (Figures 8.4 and 8.5)."""
    assert maze(DYNA_MAZE).grid_shape == (6, 9) and DYNA.n_states == 6 * 9 - 7
    vi = value_iteration(DYNA, GAMMA)
    np.testing.assert_allclose(vi.V[start_state(DYNA)], GAMMA**13, rtol=1e-12)
    assert greedy_steps(DYNA, vi.Q, 200) == 14
    for layouts, lengths in ((BLOCKING_MAZE, (10, 16)), (SHORTCUT_MAZE, (16, 10))):
        before, after = changing_maze(*layouts)
        assert before.n_states == after.n_states == 6 * 9 - 7  # one numbering for both
        for mdp, length in zip((before, after), lengths, strict=True):
            assert greedy_steps(mdp, value_iteration(mdp, GAMMA).Q, 200) == length


@pytest.mark.parametrize("factor", [1, 2, 3])
def test_finer_mazes_scale_the_dyna_maze(factor):
    """Example 8.4's mazes: ``47 factor^2`` states (every cell a block of open cells or
    walls, one start, one goal), and the shortest path ``14 factor`` steps long."""
    layout = finer_maze(DYNA_MAZE, factor)
    if factor == 1:
        assert layout.split() == DYNA_MAZE.split()
    assert layout.count("S") == layout.count("G") == 1
    mdp = maze(layout).to_mdp()
    assert mdp.n_states == 47 * factor**2
    assert greedy_steps(mdp, value_iteration(mdp, GAMMA).Q, 1000) == 14 * factor


def test_changing_maze_refuses_layouts_that_differ_in_more_than_walls():
    with pytest.raises(ValueError, match="same size"):
        changing_maze("S.G", "S..G")
    with pytest.raises(ValueError, match="only in walls"):
        changing_maze("S.G", "SG.")


# --------------------------------------------------------------------- exact identities


@pytest.mark.parametrize("env", ["FrozenLake-v1", "tabzoo/CliffWalking-v0"])
def test_dyna_q_without_planning_is_q_learning_bit_for_bit(env):
    """planning_steps=0: the same random draws in the same order as Q-learning, so the
    same numbers, on a stochastic env (counts model) and a deterministic one."""
    mdp = TabularMDP.from_gymnasium(gym.make(env))
    kwargs = dict(gamma=0.95, episodes=300, alpha=inverse(1.0, 0.6),
                  epsilon=linear(1.0, 0.05, 200), initial_Q=0.5, runs=3, seed=21)
    q = q_learning(mdp, **kwargs)
    for model in ("auto", "last", "counts"):
        d = dyna_q(mdp, planning_steps=0, model=model, **kwargs)
        np.testing.assert_array_equal(d.Q, q.Q)
        np.testing.assert_array_equal(d.episode_returns, q.episode_returns)
        np.testing.assert_array_equal(d.episode_lengths, q.episode_lengths)
        np.testing.assert_array_equal(d.episode_updates, q.episode_lengths)


def test_a_switch_changes_the_dynamics_at_its_time_step():
    """A switch to the same model, or one after the last step, changes nothing; a
    switch at step 1 out of the shortcut maze's start (the same first step in both
    layouts) is learning on the new maze from the start."""
    before, after = changing_maze(*SHORTCUT_MAZE)
    kwargs = dict(gamma=GAMMA, episodes=40, planning_steps=5, runs=2, seed=22)
    for learn in PLANNERS.values():
        plain = learn(before, **kwargs)
        for switch in ((1, before), (10**9, after)):
            same = learn(before, switch=switch, **kwargs)
            np.testing.assert_array_equal(same.Q, plain.Q)
            np.testing.assert_array_equal(same.episode_updates, plain.episode_updates)
        np.testing.assert_array_equal(learn(before, switch=(1, after), **kwargs).Q,
                                      learn(after, **kwargs).Q)


# --------------------------------------------------------------------- ground truth


@pytest.mark.parametrize("name", PLANNERS)
def test_every_planner_reaches_the_optimum_of_the_dyna_maze(name):
    """Uniform exploration (the learners are off-policy), alpha = 1, 10 planned updates
    per step, 30 episodes: Dyna-Q and prioritized sweeping learn Q* exactly (the
    learned model of the deterministic maze is exact), and Dyna-Q+'s greedy path is the
    shortest, 14 steps, in every run (its bonus, kappa = 1e-4, keeps its Q within 0.03
    of Q* in a trial; 0.1 is allowed)."""
    vi = value_iteration(DYNA, GAMMA)
    kwargs = {"kappa": 1e-4} if name == "dyna_q_plus" else {}
    res = PLANNERS[name](DYNA, gamma=GAMMA, episodes=30, alpha=1.0, epsilon=1.0,
                         planning_steps=10, runs=8, seed=23, **kwargs)
    live = ~DYNA.done.all(axis=(1, 2))  # the goal's actions are never taken
    for Q in res.Q:
        assert greedy_steps(DYNA, Q, 200) == 14
        np.testing.assert_allclose(policy_evaluation(DYNA, Q.argmax(axis=1), GAMMA).V,
                                   vi.V, atol=1e-12)
        np.testing.assert_allclose(Q[live], vi.Q[live],
                                   atol=0.1 if name == "dyna_q_plus" else 1e-12)


@PROPERTY
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.5, 0.8]))
def test_dyna_q_with_a_counts_model_converges_on_random_mdps(mdp, gamma):
    """Stochastic random MDPs: the counts model converges to the true one, and planning
    on it with step sizes 1/n**0.6 to its Q*; Dyna-Q+ with kappa = 0 as well. Uniform
    exploration, 500 episodes of at most 20 steps: over 40 MDPs drawn in a trial the
    mean of 8 runs was within 0.025 * scale of Q* (tolerance 0.1 * scale)."""
    q_star = value_iteration(mdp, gamma).Q
    tol = 0.1 * value_scale(mdp, gamma)
    for learn, kwargs in ((dyna_q, {}), (dyna_q_plus, {"kappa": 0.0})):
        res = learn(mdp, gamma=gamma, episodes=500, alpha=inverse(1.0, 0.6), epsilon=1.0,
                    planning_steps=5, model="counts", max_steps=20, runs=8, seed=24,
                    **kwargs)
        np.testing.assert_allclose(res.Q.mean(axis=0), q_star, atol=tol, rtol=0,
                                   err_msg=learn.__name__)


def test_a_counts_model_reaches_v_star_on_a_slippery_gridworld():
    """slip = 0.2 (three outcomes per move): the automatic model keeps counts, and
    Dyna-Q's V = max Q reaches V*: over 4 seeds in a trial each run was within 0.03 and
    the mean of 8 runs within 0.007 (tolerances 0.06 and 0.015). The last-outcome
    model plans on one sample per pair: its runs were 0.065-0.10 off, 3-4 times the
    counts model's (asserted: at least twice, on average over the runs)."""
    mdp = GridWorld("""
        S...
        .#..
        ...G
        """, step_reward=0.0, goal_reward=1.0, slip=0.2).to_mdp()
    v_star = value_iteration(mdp, 0.9).V
    live = ~mdp.done.all(axis=(1, 2))
    errors = {}
    for model in ("auto", "last"):
        res = dyna_q(mdp, gamma=0.9, episodes=300, alpha=inverse(1.0, 0.6), epsilon=1.0,
                     planning_steps=10, model=model, max_steps=50, runs=8, seed=25)
        errors[model] = np.abs(res.V - v_star)[:, live].max(axis=1)
        if model == "auto":
            assert np.abs(res.V.mean(axis=0) - v_star)[live].max() <= 0.015
    assert errors["auto"].max() <= 0.06
    assert errors["auto"].mean() * 2 < errors["last"].mean()


# --------------------------------------------------------------------- the chapter's claims


def test_more_planning_reaches_the_optimal_path_in_fewer_episodes():
    """Figure 8.2 (alpha = 0.1, epsilon = 0.1, gamma = 0.95): mean steps per episode over
    episodes 2-10 of 10 runs. Measured over four seeds: n = 0 took 250-330 steps, n = 5
    34-41, n = 50 19-21; asserted: n = 5 at least halves n = 0's steps, n = 50 is at
    least 1.5x below n = 5 and within 10 steps of the 14-step path (the rest is
    epsilon's exploration)."""
    steps = {}
    for n in (0, 5, 50):
        res = dyna_q(DYNA, planning_steps=n, gamma=GAMMA, episodes=10, alpha=0.1,
                     epsilon=0.1, runs=10, seed=26)
        steps[n] = res.episode_lengths[:, 1:].mean()
        assert (res.episode_lengths[:, 0] > 14).all()  # nothing to plan before the goal
    assert steps[5] * 2 < steps[0]
    assert steps[50] * 1.5 < steps[5]
    assert steps[50] < 24


def test_dyna_q_plus_finds_the_shortcut_and_dyna_q_does_not():
    """Figure 8.5: the shortcut opens after 3000 steps (n = 10, alpha = 1, epsilon = 0.1,
    kappa = 1e-3). Mean length of the episodes that end between steps 4500 and 6000,
    over 20 runs in a trial: Dyna-Q 17.6-20.8 (it keeps the 16-step path: its greedy
    path is still 16 steps long at the end in every run), Dyna-Q+ 12.2-13.1 (it takes
    the 10-step shortcut). Asserted in each of 6 runs: Dyna-Q+ below 14.5, Dyna-Q above
    16, and Dyna-Q+ completes more episodes by step 6000 (Figure 8.5's cumulative
    reward)."""
    before, after = changing_maze(*SHORTCUT_MAZE)
    kwargs = dict(planning_steps=10, gamma=GAMMA, alpha=1.0, epsilon=0.1, episodes=600,
                  switch=(3000, after), runs=6, seed=27)
    plain = dyna_q(before, **kwargs)
    plus = dyna_q_plus(before, kappa=1e-3, **kwargs)

    def late_length(lengths):
        end = np.cumsum(lengths)
        return lengths[(end > 4500) & (end <= 6000)].mean()

    def reward_by(lengths, t):
        return (np.cumsum(lengths) <= t).sum()

    assert (plain.episode_lengths.sum(axis=1) > 6000).all()
    assert (plus.episode_lengths.sum(axis=1) > 6000).all()
    for i in range(6):
        assert late_length(plus.episode_lengths[i]) < 14.5
        assert late_length(plain.episode_lengths[i]) > 16
        assert reward_by(plus.episode_lengths[i], 6000) > reward_by(plain.episode_lengths[i],
                                                                     6000)
        assert greedy_steps(after, plain.Q[i], 200) == 16


def test_the_blocked_path_is_relearned():
    """Figure 8.4: after 1000 steps the 10-step path is blocked and a 16-step one opens
    on the other side; the last-outcome model sees the change, and Dyna-Q's and
    Dyna-Q+'s greedy paths at the end go around the new way. Over 40 runs in a trial
    (300 episodes, 5,400-18,000 steps) the greedy path reached the goal in every run,
    in 16 steps in 37 (Dyna-Q) and 39 (Dyna-Q+, kappa = 1e-4) of them (18 or 20 with a
    detour otherwise). Asserted over 8 runs: every path reaches the goal (through
    the new gap: the old one is closed), most in 16 steps. (Prioritized sweeping,
    not in the figure, can stall: the values below the barrier decay until their TD
    errors fall under theta, and then stay above those of the unexplored left side.)"""
    before, after = changing_maze(*BLOCKING_MAZE)
    for learn, kwargs in ((dyna_q, {}), (dyna_q_plus, {"kappa": 1e-4})):
        res = learn(before, planning_steps=10, gamma=GAMMA, alpha=1.0, epsilon=0.1,
                    episodes=300, switch=(1000, after), runs=8, seed=28, **kwargs)
        paths = [greedy_steps(after, Q, 200) for Q in res.Q]
        assert None not in paths, learn.__name__
        assert paths.count(16) > len(paths) // 2, learn.__name__


def test_prioritized_sweeping_needs_far_fewer_updates_than_dyna_q():
    """Example 8.4: updates until the greedy path is optimal (14 steps) on the Dyna maze,
    n = 5 planned updates per step, alpha = 1, epsilon = 0.1; the learners are run for
    k = 1, 2, ... episodes with one seed (the first k episodes do not depend on how many
    follow). In a trial over 10 runs prioritized sweeping needed 160-190 updates,
    Dyna-Q 2,300-15,500 (each missed the optimum within the horizon in some runs,
    counted as never). Asserted: the median for prioritized sweeping is a tenth of
    Dyna-Q's or less."""
    runs, horizon = 10, 40
    needed = {}
    for learn in (dyna_q, prioritized_sweeping):
        found = np.full(runs, np.inf)
        for k in range(1, horizon + 1):
            res = learn(DYNA, planning_steps=5, gamma=GAMMA, alpha=1.0, epsilon=0.1,
                        episodes=k, runs=runs, seed=29)
            for i in range(runs):
                if found[i] == np.inf and greedy_steps(DYNA, res.Q[i], 200) == 14:
                    found[i] = res.episode_updates[i].sum()
        needed[learn.__name__] = np.median(found)
    assert np.isfinite(needed["prioritized_sweeping"])
    assert needed["prioritized_sweeping"] * 10 <= needed["dyna_q"]


def chain(length):
    """States 0 .. length in a row, one action moving right; the step into ``length``
    pays 1 and ends the episode."""
    S = length + 1
    next_state = np.minimum(np.arange(S) + 1, length)[:, None, None]
    next_state[length] = length
    reward = np.zeros((S, 1, 1))
    reward[length - 1] = 1.0
    done = np.zeros((S, 1, 1), dtype=bool)
    done[length - 1:] = True
    start = np.zeros(S)
    start[0] = 1.0
    return TabularMDP(next_state, np.ones((S, 1, 1)), reward, done, start)


@pytest.mark.parametrize("theta, learned", [(0.125, 3), (0.1, 4), (1.0, 0), (0.0, 6)])
def test_prioritized_sweeping_never_updates_a_pair_below_theta(theta, learned):
    """A chain of 6 steps to a reward of 1, gamma = 0.5, alpha = 1 (powers of two are
    exact). Every TD error is 0 until the goal pays; then the last pair's priority is
    1, and each update queues the pair before with priority 0.5^k: a pair is updated
    only while 0.5^k > theta, so the first episode makes exactly ``learned`` updates
    (a priority equal to theta, 0.125 or 1, is not above it) and the other pairs stay
    at 0. The second episode's priorities are all 0 or at most theta: no update."""
    res = prioritized_sweeping(chain(6), theta=theta, planning_steps=100, gamma=0.5,
                               alpha=1.0, episodes=2, seed=30)
    np.testing.assert_array_equal(res.episode_updates, [learned, 0])
    expected = np.zeros(7)
    expected[6 - learned:6] = 0.5 ** np.arange(learned)[::-1]
    np.testing.assert_array_equal(res.Q[:, 0], expected)


def test_prioritized_sweeping_leaves_every_td_error_within_theta():
    """With a planning budget that empties the queue, every pair whose TD error exceeds
    theta is queued (the real step queues its pair, each update its predecessors), so
    after every step the learned Q is a fixed point of the model to within theta. On
    the Dyna maze with uniform exploration (every pair tried, the model exact), alpha =
    1 and theta = 0.5: every |R + gamma max Q(S') - Q(S, A)| is at most 0.5. From Q =
    0 the backups stay below Q*, so a pair's priority ``gamma max Q(S')`` never exceeds
    its Q*: the pairs with Q* <= theta are never updated and stay exactly 0."""
    theta = 0.5
    res = prioritized_sweeping(DYNA, theta=theta, planning_steps=10**6, gamma=GAMMA,
                               alpha=1.0, epsilon=1.0, episodes=30, runs=4, seed=30)
    q_star = value_iteration(DYNA, GAMMA).Q
    live = ~DYNA.done.all(axis=(1, 2))
    low = live[:, None] & (q_star <= theta)
    assert low.any() and (live[:, None] & (q_star > theta)).any()
    for Q in res.Q:
        target = DYNA.reward[..., 0] + GAMMA * np.where(DYNA.done[..., 0], 0.0,
                                                        Q.max(axis=1)[DYNA.next_state[..., 0]])
        assert np.abs(target - Q)[live].max() <= theta
        assert (Q <= q_star + 1e-12).all()
        assert (Q[low] == 0.0).all()


def test_update_counts():
    """Dyna-Q and Dyna-Q+ make 1 + n updates per step; prioritized sweeping at most n,
    none in the first episode until the goal pays (every TD error is 0 before)."""
    for learn in (dyna_q, dyna_q_plus):
        res = learn(DYNA, planning_steps=7, gamma=GAMMA, episodes=5, runs=2, seed=31)
        np.testing.assert_array_equal(res.episode_updates, 8 * res.episode_lengths)
    res = prioritized_sweeping(DYNA, planning_steps=7, gamma=GAMMA, episodes=5, runs=2,
                               seed=31)
    assert (res.episode_updates <= 7 * res.episode_lengths).all()
    assert (res.episode_updates[:, 0] <= 7).all()


# --------------------------------------------------------------------- kernels and rules


def test_rules_follow_the_book():
    assert exploration_bonus(0.5, 0.01, 16.0) == 0.5 + 0.01 * 4.0        # section 8.3
    assert exploration_bonus(-np.inf, 0.01, 16.0) == -np.inf
    assert priority(1.0, 0.25) == 0.75 and priority(0.0, 0.25) == 0.25   # section 8.4
    assert priority(5.0, -np.inf) == 0.0                                 # exact, absorbing
    assert priority(-np.inf, 0.0) == np.inf


def test_the_priority_queue_pops_in_order_and_keeps_the_higher_priority():
    """Against a dict: random pushes (a queued item keeps its higher priority) and pops
    (the highest priority first, each item once)."""
    rng = np.random.default_rng(32)
    n = 40
    queue = plan_model.priority_queue(n)
    reference = {}
    for _ in range(2000):
        if rng.random() < 0.6 or not reference:
            x, p = int(rng.integers(n)), float(rng.integers(0, 50))
            plan_model.queue_push(queue, x, p)
            reference[x] = max(p, reference.get(x, -np.inf))
        else:
            x, p = plan_model.queue_pop(queue)
            assert p == max(reference.values()) and reference.pop(x) == p
        assert queue.size[0] == len(reference)
        assert all(queue.position[x] >= 0 for x in reference)
        assert (queue.position >= 0).sum() == len(reference)


def test_predecessor_lists_move_a_pair_when_its_successor_changes():
    lists = plan_model.predecessors(3, 6)

    def members(s):
        out, x = [], lists.head[s]
        while x >= 0:
            out.append(int(x))
            x = lists.next[x]
        return sorted(out)

    for x, s in ((0, 1), (3, 1), (5, 1), (2, 2)):
        plan_model.link(lists, x, s)
    assert members(1) == [0, 3, 5] and members(2) == [2] and members(0) == []
    plan_model.unlink(lists, 3, 1)
    plan_model.link(lists, 3, 0)
    plan_model.unlink(lists, 5, 1)
    assert members(1) == [0] and members(0) == [3]
    plan_model.unlink(lists, 0, 1)
    assert members(1) == []


def test_the_counts_model_samples_outcomes_in_proportion():
    """Three outcomes seen 1, 2 and 5 times: planning draws them 1/8, 2/8 and 5/8 of the
    time (20,000 draws: binomial sd at most 71, 5 sd = 355); the last-outcome model
    keeps only the latest."""
    counts = plan_model.learned_model(2, 1, 3)
    last = plan_model.learned_model(2, 1, 1)
    for outcome, times in (((0, 1.0, False), 1), ((1, 0.0, False), 2), ((1, 0.0, True), 5)):
        for t in range(times):
            plan_model.record_outcome(counts, 0, 0, outcome, True, t + 1)
            plan_model.record_outcome(last, 0, 0, outcome, False, t + 1)
    assert counts.outcomes[0, 0] == 3 and counts.tries[0, 0] == 8
    assert counts.n_pairs[0] == 1 and counts.n_states[0] == 1
    rng = seed_states(33)[0]
    seen = [plan_model.sample_model(counts, 0, 0, rng) for _ in range(20_000)]
    tally = [sum(o == key for o in seen) for key in ((0, 1.0, False), (1, 0.0, False),
                                                       (1, 0.0, True))]
    np.testing.assert_allclose(tally, np.array([1, 2, 5]) * 20_000 / 8, atol=355)
    assert plan_model.sample_model(last, 0, 0, rng) == (1, 0.0, True) and last.tries[0, 0] == 8


# --------------------------------------------------------------------- -inf, seeds, shapes


@pytest.mark.parametrize("name", PLANNERS)
def test_minus_infinity_rewards_never_make_nans(name):
    mdp = TabularMDP.from_gymnasium(gym.make("tabzoo/TrapTreasure-v0"))
    res = PLANNERS[name](mdp, gamma=0.9, episodes=200, planning_steps=5, runs=2, seed=34)
    assert not np.isnan(res.Q).any()
    assert (res.Q == -np.inf).any()  # the trap is learned, exactly
    assert (value_iteration(mdp, 0.9).Q[res.Q[0] == -np.inf] == -np.inf).all()


@pytest.mark.parametrize("name", PLANNERS)
def test_same_seed_same_numbers_whatever_the_threads(name):
    before, after = changing_maze(*BLOCKING_MAZE)
    learn = PLANNERS[name]
    kwargs = dict(gamma=GAMMA, episodes=60, planning_steps=5, switch=(500, after), seed=35)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = learn(before, runs=3, **kwargs)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = learn(before, runs=3, **kwargs)
    finally:
        numba.set_num_threads(threads)
    for field in ("Q", "episode_returns", "episode_lengths", "episode_updates"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field))
    alone = learn(before, **kwargs)  # run 0 of any runs=
    np.testing.assert_array_equal(alone.Q, one.Q[0])
    np.testing.assert_array_equal(alone.episode_updates, one.episode_updates[0])
    assert not np.array_equal(learn(before, **{**kwargs, "seed": 36}).Q, alone.Q)


@pytest.mark.parametrize("name", PLANNERS)
def test_run_axis_follows_numpy_size_convention(name):
    learn = PLANNERS[name]
    single = learn(DYNA, episodes=5, seed=37)
    assert isinstance(single, PlanningResult) and single.runs is None
    assert single.Q.shape == (47, 4) and single.policy.shape == single.V.shape == (47,)
    assert single.episode_updates.shape == single.episode_lengths.shape == (5,)
    assert single.episodes == 5
    three = learn(DYNA, episodes=5, seed=37, runs=3)
    assert three.runs == 3 and three.Q.shape == (3, 47, 4)
    assert three.episode_updates.shape == (3, 5)
    picked = three.run(0)
    for field in ("Q", "episode_returns", "episode_lengths", "episode_updates"):
        np.testing.assert_array_equal(getattr(picked, field), getattr(single, field))
    np.testing.assert_array_equal(three.control.policy, three.policy)
    assert isinstance(three, ControlResult) and isinstance(picked, PlanningResult)
    assert repr(three) == ("PlanningResult(episode_returns=float64[3, 5], episode_lengths="
                           "int64[3, 5], Q=float64[3, 47, 4], episode_updates=int64[3, 5])")
    with pytest.raises(ValueError, match="single run"):
        single.run(0)


def test_a_gymnasium_env_is_accepted_as_model():
    env = gym.make("tabzoo/CliffWalking-v0")
    a = dyna_q(env, episodes=10, seed=38)
    b = dyna_q(TabularMDP.from_gymnasium(env), episodes=10, seed=38)
    np.testing.assert_array_equal(a.Q, b.Q)


# --------------------------------------------------------------------- bad input


SMALL = maze("S.G").to_mdp()


@pytest.mark.parametrize("kwargs, fragment", [
    ({"planning_steps": -1}, "planning_steps must be an integer in [0,"),
    ({"planning_steps": 2.5}, "planning_steps"), ({"planning_steps": "5"}, "planning_steps"),
    ({"planning_steps": None}, "planning_steps"), ({"planning_steps": np.nan}, "planning_steps"),
    ({"model": "exact"}, "model must be one of"), ({"model": None}, "model"),
    ({"switch": "x"}, "switch must be None or (step, mdp)"),
    ({"switch": (0, SMALL)}, "switch step must be an integer >= 1"),
    ({"switch": (5, DYNA)}, "switch mdp has 47 states"),
    ({"gamma": 1.5}, "gamma"), ({"alpha": 0.0}, "alpha"), ({"epsilon": -0.1}, "epsilon"),
    ({"episodes": 0}, "episodes"), ({"runs": 0}, "runs"), ({"max_steps": 0}, "max_steps"),
    ({"initial_Q": np.zeros(3)}, "initial_Q"), ({"seed": -1}, "seed"),
])
@pytest.mark.parametrize("name", ["dyna_q", "dyna_q_plus"])
def test_bad_dyna_arguments_are_named(name, kwargs, fragment):
    with pytest.raises(ValueError) as info:
        PLANNERS[name](SMALL, **kwargs)
    assert fragment in str(info.value)


@pytest.mark.parametrize("learn, kwargs, error, fragment", [
    (dyna_q_plus, {"kappa": -1.0}, ValueError, "kappa must be a finite number >= 0"),
    (dyna_q_plus, {"kappa": np.nan}, ValueError, "kappa"),
    (prioritized_sweeping, {"theta": np.nan}, ValueError, "theta must be a finite number"),
    (prioritized_sweeping, {"theta": -0.1}, ValueError, "theta"),
    (prioritized_sweeping, {"planning_steps": 0}, ValueError,
     "planning_steps must be an integer in [1,"),
    (prioritized_sweeping, {"switch": (5, "maze")}, TypeError, "switch mdp must be"),
    (prioritized_sweeping, {"alpha": 2.0}, ValueError, "alpha"),
    (dyna_q, {"switch": (5, SMALL, 1)}, ValueError, "switch must be None or (step, mdp)"),
])
def test_bad_method_arguments_are_named(learn, kwargs, error, fragment):
    with pytest.raises(error) as info:
        learn(SMALL, **kwargs)
    assert fragment in str(info.value)


def test_a_string_is_not_a_model():
    with pytest.raises(TypeError, match="mdp"):
        dyna_q("DynaMaze")
