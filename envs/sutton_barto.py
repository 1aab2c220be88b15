"""Examples of Sutton & Barto, *Reinforcement Learning: An Introduction* (2nd ed., 2018).

Gridworlds are :class:`GridWorld` layouts (actions 0 = up, 1 = right, 2 = down,
3 = left); the others are small :class:`ModelEnv` classes whose model is written
out as arrays. Every env's exact model is ``env.unwrapped.to_mdp()``.
"""

from __future__ import annotations

import math

import numpy as np

from tabular import TabularMDP
from tabular.checks import check_count, check_positive_int, check_size, check_unit_interval

from .base import MAX_OUTCOME_SLOTS, OUTCOME_BYTES, ModelEnv, constant
from .grid_options import reward_option
from .gridworld import GridWorld


class Gridworld5x5(GridWorld):
    """Example 3.5 (Figures 3.2 and 3.5): a continuing 5x5 gridworld.

    ## Description
    Every action in cell A (row 0, column 1) moves the agent to A' (row 4, column 1);
    every action in B (row 0, column 3) moves it to B' (row 2, column 3). With
    ``gamma = 0.9`` the equiprobable random policy has ``v(A) = 8.8`` (Figure 3.2) and
    the optimal value is ``v*(A) = 24.4`` (Figure 3.5, Example 3.8).

    ## Action Space
    ``Discrete(4)``: 0 = up, 1 = right, 2 = down, 3 = left. A move off the grid leaves
    the agent in place.

    ## Observation Space
    ``Discrete(25)``: state id = ``row * 5 + col``.

    ## Starting State
    The centre cell (row 2, column 2; state 12), which has no role in the book.

    ## Rewards
    +10 for every action in A, +5 in B, -1 for a move off the grid, 0 for every other
    move.

    ## Episode End
    Termination: never; no state is terminal (the task is continuing). Truncation:
    ``tabzoo/Gridworld5x5-v0`` is registered with ``max_episode_steps=100``.

    ## Arguments
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/Gridworld5x5-v0``; the
      ``tabular/Gridworld5x5-v0`` id of earlier releases now raises an error naming
      the new id).
    """

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__("gridworld_3_5", bump_reward=-1.0,
                         teleports={"A": ("a", 10.0), "B": ("b", 5.0)}, render_mode=render_mode)


class Gridworld4x4(GridWorld):
    """Example 4.1 (Figure 4.1): the 4x4 gridworld with two terminal corners.

    ## Description
    Cells 0 (top-left) and 15 (bottom-right) are terminal (absorbing). Under the
    equiprobable random policy (``gamma = 1``) the values are 0, -14, -20, -22 along
    the first row.

    ## Action Space
    ``Discrete(4)``: 0 = up, 1 = right, 2 = down, 3 = left. Moves off the grid leave
    the state unchanged.

    ## Observation Space
    ``Discrete(16)``: all 16 cells are states, state id = ``row * 4 + col``.

    ## Starting State
    Uniform on the 14 non-terminal cells.

    ## Rewards
    Every move pays -1, including a move off the grid and the one into a terminal
    corner.

    ## Episode End
    Termination: entering cell 0 or 15. Truncation: ``tabzoo/Gridworld4x4-v0`` is
    registered with ``max_episode_steps=1000``.

    ## Arguments
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/Gridworld4x4-v0``; the
      ``tabular/Gridworld4x4-v0`` id of earlier releases now raises an error naming
      the new id).
    """

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__("gridworld_4_1", step_reward=-1.0, goal_reward=-1.0,
                         render_mode=render_mode)


class WindyGridworld(GridWorld):
    """Example 6.5 (Figure 6.3): the 7x10 windy gridworld.

    ## Description
    Start (row 3, column 0), goal (row 3, column 7); a crosswind pushes the agent up
    by ``0 0 0 1 1 1 2 2 1 0`` cells (``WIND``), the strength of the column it leaves,
    stopping at the top edge. The shortest path takes 15 steps.

    ## Action Space
    ``Discrete(4)``: 0 = up, 1 = right, 2 = down, 3 = left. A move off the grid leaves
    the agent in place (the wind still blows).

    ## Observation Space
    ``Discrete(70)``: state id = ``row * 10 + col``.

    ## Starting State
    Row 3, column 0 (state 30).

    ## Rewards
    Every step pays -1, the one into the goal included.

    ## Episode End
    Termination: reaching the goal (state 37). Truncation:
    ``tabzoo/WindyGridworld-v0`` is registered with ``max_episode_steps=10000``.

    ## Arguments
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/WindyGridworld-v0``; the
      ``tabular/WindyGridworld-v0`` id of earlier releases now raises an error naming
      the new id).
    """

    WIND = (0, 0, 0, 1, 1, 1, 2, 2, 1, 0)

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__("windy_gridworld", step_reward=-1.0, goal_reward=-1.0,
                         wind=self.WIND, render_mode=render_mode)


class CliffWalking(GridWorld):
    """Example 6.6 (Figure 6.4): cliff walking on a 4x12 grid.

    ## Description
    Start bottom-left, goal bottom-right, the cells between them along the bottom
    (row 3, columns 1-10) are the cliff. The safe path (up, 11 x right, down) takes
    13 steps.

    ## Action Space
    ``Discrete(4)``: 0 = up, 1 = right, 2 = down, 3 = left. A move off the grid leaves
    the agent in place.

    ## Observation Space
    ``Discrete(48)``: all 48 cells are states (state id = ``row * 12 + col``, as in
    Gymnasium's ``CliffWalking-v1``; the cliff cells are never occupied).

    ## Starting State
    Bottom-left, row 3, column 0 (state 36).

    ## Rewards
    Every step pays -1 (the one into the goal included); stepping into the cliff
    pays -100 and sends the agent back to the start without ending the episode.

    ## Episode End
    Termination: reaching the goal (state 47). Truncation:
    ``tabzoo/CliffWalking-v0`` is registered with ``max_episode_steps=10000``.

    ## Arguments
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/CliffWalking-v0``). Unlike the
      other envs' old ids, ``tabular/CliffWalking-v0`` is not an error: it is
      Gymnasium's own (JAX) CliffWalking, which this project leaves untouched.
    """

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__("cliff_walking", step_reward=-1.0, goal_reward=-1.0,
                         cliff_reward=-100.0, render_mode=render_mode)


def absorbing(next_state, prob, reward, done, states) -> None:
    """Make ``states`` (a list of ids) absorbing in the model arrays ``next_state, prob,
    reward, done`` (changed in place): every action loops back with reward 0, done."""
    next_state[states] = np.asarray(states)[:, None, None]
    prob[states] = 0.0
    prob[states, :, 0] = 1.0
    reward[states] = 0.0
    done[states] = True


class Gambler(ModelEnv):
    """Example 4.3 (Figure 4.3): the gambler's problem.

    ## Description
    The coin comes up heads with probability ``p_h``: the gambler wins the stake,
    otherwise loses it.

    ## Action Space
    ``Discrete(goal // 2 + 1)``: action ``a`` in ``0..goal // 2`` stakes ``a`` dollars;
    a stake above what the state allows, ``min(s, goal - s)``, is clipped to that
    maximum (so every state has the same action count; the clipped actions duplicate
    the largest stake, which leaves ``v*`` unchanged and only adds ties between
    optimal actions). Stake 0 leaves the capital unchanged.

    ## Observation Space
    ``Discrete(goal + 1)``: the capital ``s`` in ``0..goal``.

    ## Starting State
    A capital drawn uniformly from ``1..goal - 1``.

    ## Rewards
    +1 on reaching ``goal``, 0 otherwise.

    ## Episode End
    Termination: the capital reaches 0 or ``goal`` (both terminal). Truncation:
    ``tabzoo/Gambler-v0`` is registered with ``max_episode_steps=10000``.

    ## Arguments
    * ``p_h``: the probability of heads (default 0.4, the book's).
    * ``goal``: the capital that wins (default 100; at least 2).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/Gambler-v0``; the
      ``tabular/Gambler-v0`` id of earlier releases now raises an error naming the
      new id).
    """

    def __init__(self, p_h: float = 0.4, goal: int = 100, render_mode: str | None = None) -> None:
        p_h = check_unit_interval("p_h", p_h)
        goal = check_positive_int("goal", goal)
        if goal < 2:
            raise ValueError(f"goal must be >= 2 (a non-terminal capital must exist), got {goal}")
        check_size(f"goal={goal}", (goal + 1) * (goal // 2 + 1) * 2, MAX_OUTCOME_SLOTS,
                   OUTCOME_BYTES)
        self.p_h, self.goal = p_h, goal
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model of this ``p_h`` and ``goal``."""
        goal = self.goal
        s = np.arange(goal + 1)[:, None]
        stake = np.minimum(np.arange(goal // 2 + 1)[None, :], np.minimum(s, goal - s))
        win, lose = s + stake, s - stake
        shape = stake.shape
        next_state = np.stack([win, np.where(stake > 0, lose, s)], axis=2)
        prob = np.stack([np.where(stake > 0, self.p_h, 1.0),
                         np.where(stake > 0, 1.0 - self.p_h, 0.0)], axis=2)
        reward = np.stack([(win == goal).astype(float), np.zeros(shape)], axis=2)
        done = np.stack([win == goal, (lose == 0) & (stake > 0)], axis=2)
        absorbing(next_state, prob, reward, done, [0, goal])
        start = np.zeros(goal + 1)
        start[1:goal] = 1.0 / (goal - 1)
        return TabularMDP(next_state, prob, reward, done, start,
                          state_labels=[f"${c}" for c in range(goal + 1)],
                          action_names=[f"stake {a}" for a in range(goal // 2 + 1)])


class RandomWalk(ModelEnv):
    """Example 6.2 (and the 19-state walk of Example 7.1): a Markov reward process.

    ## Description
    ``n_states`` non-terminal states in a row; each step goes left or right with
    probability 1/2. True values (``gamma = 1``):
    ``v(k) = left + (right - left) * k / (n_states + 1)``. With ``jump = m``, each step
    jumps to one of the ``m`` states on the left or the ``m`` on the right, uniformly,
    and a jump past an end ends the episode there: ``RandomWalk(1000, jump=100,
    left_reward=-1.0)`` is the 1000-state walk of Example 9.1.

    ## Action Space
    ``Discrete(1)``: one action (``"walk"``).

    ## Observation Space
    ``Discrete(n_states + 2)``: the non-terminal states are ids ``1..n_states`` (A, B,
    C, ... for up to 26); id 0 is the left terminal and ``n_states + 1`` the right one.

    ## Starting State
    The middle state (the left of the two middle ones when ``n_states`` is even).

    ## Rewards
    Reaching the right end pays ``right_reward`` (+1), the left end ``left_reward``
    (0 in Example 6.2, -1 in Example 7.1); every other step pays 0.

    ## Episode End
    Termination: reaching either end. Truncation: ``tabzoo/RandomWalk-v0`` is
    registered with ``max_episode_steps=10000``.

    ## Arguments
    * ``n_states``: the number of non-terminal states (default 5, Example 6.2).
    * ``left_reward``, ``right_reward``: the rewards at the ends (defaults 0 and 1).
    * ``jump``: how many states a step may jump each way, at most ``n_states``
      (default 1).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (``jump`` added since, with the old walk as its default;
      registered as ``tabzoo/RandomWalk-v0``; the
      ``tabular/RandomWalk-v0`` id of earlier releases now raises an error naming the
      new id).
    """

    def __init__(self, n_states: int = 5, left_reward: float = 0.0, right_reward: float = 1.0,
                 render_mode: str | None = None, *, jump: int = 1) -> None:
        self.n_states = check_positive_int("n_states", n_states, high=MAX_OUTCOME_SLOTS // 2)
        self.left_reward = reward_option("left_reward", left_reward)
        self.right_reward = reward_option("right_reward", right_reward)
        self.jump = check_positive_int("jump", jump, high=self.n_states)
        check_size(f"n_states={self.n_states} with jump={self.jump}",
                   (self.n_states + 2) * 2 * self.jump, MAX_OUTCOME_SLOTS, OUTCOME_BYTES)
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model of this walk (one action, ``2 * jump`` outcomes)."""
        n, m = self.n_states, self.jump
        S = n + 2
        s = np.arange(S)[:, None, None]
        steps = np.concatenate([-np.arange(m, 0, -1), np.arange(1, m + 1)])
        next_state = np.clip(s + steps, 0, S - 1)
        prob = np.full((S, 1, 2 * m), 1.0 / (2 * m))
        reward = np.where(next_state == 0, self.left_reward,
                          np.where(next_state == S - 1, self.right_reward, 0.0))
        done = (next_state == 0) | (next_state == S - 1)
        absorbing(next_state, prob, reward, done, [0, S - 1])
        start = np.zeros(S)
        start[(n + 1) // 2] = 1.0
        names = [chr(ord("A") + k) if n <= 26 else str(k + 1) for k in range(n)]
        return TabularMDP(next_state, prob, reward, done, start,
                          state_labels=["left end", *names, "right end"], action_names=["walk"])


class ShortCorridor(ModelEnv):
    """Example 13.1 (Figure 13.1): the short corridor with switched actions.

    ## Description
    The states look identical to the agent, so a policy must use one shared row of
    logits::

        SoftmaxPolicy(np.zeros((1, 2)), np.zeros(S, dtype=int))

    The best such policy goes right with probability about 0.59, with value about
    -11.6 from the start.

    ## Action Space
    ``Discrete(2)``: 0 = left, 1 = right. In states 0 and 2 the actions do what they
    say (left in state 0 stays put); in state 1 they are reversed.

    ## Observation Space
    ``Discrete(4)``: three non-terminal states 0, 1, 2 and the goal 3.

    ## Starting State
    State 0.

    ## Rewards
    Every step pays -1, the one into the goal included.

    ## Episode End
    Termination: reaching the goal. Truncation: ``tabzoo/ShortCorridor-v0`` is
    registered with ``max_episode_steps=1000``.

    ## Arguments
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/ShortCorridor-v0``; the
      ``tabular/ShortCorridor-v0`` id of earlier releases now raises an error naming
      the new id).
    """

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(self.model(), render_mode)

    @staticmethod
    def model() -> TabularMDP:
        """The exact model of the corridor."""
        successor = np.array([[0, 1],   # left stays at the wall, right moves on
                              [2, 0],   # reversed
                              [1, 3],
                              [3, 3]])
        next_state = successor[:, :, None]
        prob = np.ones((4, 2, 1))
        reward = np.full((4, 2, 1), -1.0)
        done = next_state == 3
        absorbing(next_state, prob, reward, done, [3])
        start = np.array([1.0, 0.0, 0.0, 0.0])
        return TabularMDP(next_state, prob, reward, done, start,
                          state_labels=["first", "switched", "third", "goal"],
                          action_names=["left", "right"])


class MaximizationBias(ModelEnv):
    """Example 6.7 (Figure 6.5): maximization bias.

    ## Description
    From state A, ``left`` leads to B and ``right`` ends the episode, both with reward
    0. From B, each of the ``n_b_actions`` actions ends the episode with a reward of
    mean -0.1 and variance 1, so going left is worth -0.1: right is optimal, yet
    Q-learning's ``max`` over B's noisy estimates makes left look good early on.

    The default, ``rewards="gaussian"``, pays the book's ``N(-0.1, 1)``: one outcome with
    the model's Gaussian reward noise (``reward_sd = 1``; a planner reads the mean), so
    that ``MaximizationBias()`` is Example 6.7 and gives Figure 6.5's curves.
    ``"two_point"`` pays ``-0.1 +- 1`` with probability 1/2 each, two outcomes with
    fixed rewards of the same mean and variance, which a learner's early estimates
    (the maxima of a few draws) do not see as the book's (a model whose outcomes are
    all enumerated, for exact sums over them).

    ## Action Space
    ``Discrete(n_b_actions)``. In A only 0 = left and 1 = right are available; in B
    all are. ``action_mask`` (bool ``[2, n_b_actions]``) says which, and the info dict
    carries the current state's row as ``info["action_mask"]`` (Gymnasium's
    convention, as in Taxi). As in Gymnasium, ``step`` accepts every action of the
    space: an unavailable action of A acts as ``right``, in the env and in the model
    (where such copies change no maximum, so planning gives the true values). Give
    the mask to a learner (``q_learning(..., action_mask=env.action_mask)``) so that
    it never explores one: Figure 6.5 counts left among two actions, not ten.

    ## Observation Space
    ``Discrete(2)``: 0 = A, 1 = B.

    ## Starting State
    A.

    ## Rewards
    0 for A's actions; for B's, ``N(-0.1, 1)`` (the book's), or ``-0.1 + 1`` or ``-0.1 -
    1`` (probability 1/2 each) with ``rewards="two_point"``.

    ## Episode End
    Termination: ``right`` from A, or any action from B. Truncation:
    ``tabzoo/MaximizationBias-v0`` is registered with ``max_episode_steps=100``.

    ## Arguments
    * ``n_b_actions``: the actions available in B, at least 2 (default 10, the
      book's reference code's "many").
    * ``rewards``: B's reward distribution, ``"gaussian"`` (default: the book's
      ``N(-0.1, 1)``) or ``"two_point"``.
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (its default rewards were ``"two_point"`` until issue 45
      made the book's ``"gaussian"`` the default).
    """

    LEFT, RIGHT = 0, 1
    REWARDS = ("two_point", "gaussian")

    def __init__(self, n_b_actions: int = 10, render_mode: str | None = None, *,
                 rewards: str = "gaussian") -> None:
        if not isinstance(rewards, str) or rewards not in self.REWARDS:
            raise ValueError(f"rewards must be one of {', '.join(map(repr, self.REWARDS))}, "
                             f"got {rewards!r}")
        self.rewards = rewards
        self.n_b_actions = check_positive_int("n_b_actions", n_b_actions)
        if self.n_b_actions < 2:
            raise ValueError(f"n_b_actions must be at least 2 (A has two actions), got "
                             f"{n_b_actions!r}")
        check_size(f"n_b_actions={self.n_b_actions}", 2 * self.n_b_actions * 2,
                   MAX_OUTCOME_SLOTS, OUTCOME_BYTES)
        self.action_mask = np.ones((2, self.n_b_actions), dtype=bool)
        self.action_mask[0, 2:] = False
        self.action_mask.flags.writeable = False
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model: two outcomes per action (B's two rewards), or one with
        Gaussian noise on B's."""
        n, gaussian = self.n_b_actions, self.rewards == "gaussian"
        K = 1 if gaussian else 2
        next_state = np.zeros((2, n, K), dtype=np.int64)
        next_state[0, self.LEFT] = 1
        prob = np.zeros((2, n, K))
        prob[0, :, 0] = 1.0
        prob[1] = 1.0 / K
        reward = np.zeros((2, n, K))
        reward[1] = -0.1 if gaussian else [-0.1 + 1.0, -0.1 - 1.0]
        done = np.ones((2, n, K), dtype=bool)
        done[0, self.LEFT] = False
        noise = None
        if gaussian:
            noise = np.zeros((2, n, 1))
            noise[1] = 1.0
        names = ["left", "right", *(f"b{a}" for a in range(2, n))]
        return TabularMDP(next_state, prob, reward, done, np.array([1.0, 0.0]),
                          state_labels=["A", "B"], action_names=names, reward_sd=noise)

    def _info(self, prob: float) -> dict:
        return {"prob": prob, "action_mask": self.action_mask[self.s].copy()}


class AccessControl(ModelEnv):
    """Example 10.2 (Figure 10.5): the access-control queuing task, a continuing task.

    ## Description
    ``n_servers`` servers serve a queue of customers of four priorities, paying 1, 2, 4
    or 8 when served. Each step the customer at the head of the queue is accepted
    (given a free server, paying its priority) or rejected (reward 0); the next
    customer's priority is then drawn uniformly, the queue never empties. With no free
    server a customer cannot be served: accepting acts as rejecting. Each busy server
    becomes free with probability ``free_prob`` each step, independently. The order
    within a step (the book leaves it open): the decision first, then the busy
    servers, the one just taken included, free up, then the next customer comes.

    ## Action Space
    ``Discrete(2)``: 0 = reject, 1 = accept.

    ## Observation Space
    ``Discrete(4 (n_servers + 1))``: state id ``4 f + i`` has ``f`` free servers and a
    customer of priority ``PRIORITIES[i]`` at the head (so ``Q.reshape(n_servers + 1,
    4, 2)`` is indexed ``[free servers, priority, action]``).

    ## Starting State
    Every server free, the first customer's priority uniform.

    ## Rewards
    The customer's priority when accepted with a server free, 0 otherwise.

    ## Episode End
    Never terminates. Truncation: ``tabzoo/AccessControl-v0`` is registered with
    ``max_episode_steps=10000``.

    ## Arguments
    * ``n_servers``: the number of servers (default 10, the book's; the model has
      ``32 (n_servers + 1)^2`` outcome slots, at most ``2 * 10^7``).
    * ``free_prob``: the probability that a busy server frees up in a step, in [0, 1]
      (default 0.06, the book's).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    REJECT, ACCEPT = 0, 1
    #: What a customer of each priority pays when served.
    PRIORITIES = (1.0, 2.0, 4.0, 8.0)

    def __init__(self, n_servers: int = 10, free_prob: float = 0.06,
                 render_mode: str | None = None) -> None:
        self.n_servers = check_positive_int("n_servers", n_servers)
        self.free_prob = check_unit_interval("free_prob", free_prob)
        states = 4 * (self.n_servers + 1)
        check_size(f"n_servers={self.n_servers}", states * 2 * states, MAX_OUTCOME_SLOTS,
                   OUTCOME_BYTES)
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model: outcome ``4 j + q`` frees ``j`` busy servers (binomial) and
        brings a customer of priority index ``q`` (probability 1/4)."""
        n, p, m = self.n_servers, self.free_prob, len(self.PRIORITIES)
        free = np.repeat(np.arange(n + 1), m)[:, None]  # [S, 1]
        level = np.tile(np.arange(m), n + 1)[:, None]
        served = (np.arange(2)[None, :] == self.ACCEPT) & (free > 0)  # [S, 2]
        left = free - served  # free servers after the decision
        busy = n - left
        j = np.arange(n + 1)[None, None, :]  # servers freed
        freed = np.zeros((n + 1, n + 1))  # P(j of b busy servers free up) [b, j]
        for b in range(n + 1):
            freed[b, :b + 1] = [math.comb(b, k) * p**k * (1.0 - p)**(b - k) for k in range(b + 1)]
        p_j = freed[busy]  # [S, 2, n + 1]
        next_free = np.where(j <= busy[:, :, None], left[:, :, None] + j, left[:, :, None])
        next_state = (m * next_free[:, :, :, None] + np.arange(m)).reshape(*served.shape, -1)
        prob = (p_j[:, :, :, None] * np.full(m, 1.0 / m)).reshape(*served.shape, -1)
        pays = np.where(served, np.asarray(self.PRIORITIES)[level], 0.0)
        reward = np.broadcast_to(pays[:, :, None], prob.shape).copy()
        start = np.zeros((n + 1) * m)
        start[m * n:] = 1.0 / m
        labels = [f"{f} free, priority {self.PRIORITIES[i]:g}" for f in range(n + 1)
                  for i in range(m)]
        return TabularMDP(next_state, prob, reward, np.zeros(prob.shape, dtype=bool), start,
                          state_labels=labels, action_names=["reject", "accept"])


class BairdCounterexample(ModelEnv):
    """Example 11.1 (Figure 11.1): Baird's counterexample, where off-policy semi-gradient
    TD and DP diverge with linear features that could represent ``v_pi`` exactly.

    ## Description
    Seven states, a continuing task: ``dashed`` moves to one of the six upper states
    (0-5) uniformly, ``solid`` moves to the lower state 6; every reward is 0, so
    ``v_pi = 0`` for every policy. The book's behaviour policy takes dashed with
    probability 6/7 (its stationary distribution is uniform), the target policy always
    takes solid. :meth:`features` gives the book's eight features and
    :data:`INITIAL_WEIGHTS` its starting weights.

    ## Action Space
    ``Discrete(2)``: 0 = dashed, 1 = solid.

    ## Observation Space
    ``Discrete(7)``: 0-5 the upper states, 6 the lower one.

    ## Starting State
    Uniform over the seven states.

    ## Rewards
    0 on every transition.

    ## Episode End
    Never terminates. Truncation: ``tabzoo/BairdCounterexample-v0`` is registered with
    ``max_episode_steps=1000`` (Figure 11.2's horizon).

    ## Arguments
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    DASHED, SOLID = 0, 1
    #: Figure 11.2's initial weights ``w = (1, 1, 1, 1, 1, 1, 10, 1)``.
    INITIAL_WEIGHTS = constant([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 10.0, 1.0])
    #: The behaviour policy ``b(dashed) = 6/7``, ``b(solid) = 1/7`` in every state.
    BEHAVIOUR = constant(np.tile([6.0 / 7.0, 1.0 / 7.0], (7, 1)))
    #: The target policy: always solid.
    TARGET = constant(np.tile([0.0, 1.0], (7, 1)))

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(self.model(), render_mode)

    @staticmethod
    def model() -> TabularMDP:
        """The exact model: dashed has six outcomes, solid one."""
        next_state = np.zeros((7, 2, 6), dtype=np.int64)
        next_state[:, BairdCounterexample.DASHED] = np.arange(6)
        next_state[:, BairdCounterexample.SOLID] = 6
        prob = np.zeros((7, 2, 6))
        prob[:, BairdCounterexample.DASHED] = 1.0 / 6.0
        prob[:, BairdCounterexample.SOLID, 0] = 1.0
        return TabularMDP(next_state, prob, np.zeros((7, 2, 6)),
                          np.zeros((7, 2, 6), dtype=bool), np.full(7, 1.0 / 7.0),
                          state_labels=[*(f"upper {i}" for i in range(6)), "lower"],
                          action_names=["dashed", "solid"])

    @staticmethod
    def features() -> np.ndarray:
        """Figure 11.1's features ``[7, 8]``: ``v(s_i) = 2 w_i + w_8`` for the upper
        states, ``v(s_7) = w_7 + 2 w_8`` for the lower one."""
        X = np.zeros((7, 8))
        X[np.arange(6), np.arange(6)] = 2.0
        X[:6, 7] = 1.0
        X[6, 6], X[6, 7] = 1.0, 2.0
        return X


class MountainCar(ModelEnv):
    """Example 10.1 (Figures 10.1-10.4): the Mountain Car task, on a grid of positions
    and velocities, so that it has an exact model and an exact optimum.

    ## Description
    An underpowered car in a valley must rock back and forth to reach the goal at the
    top of the right hill. The book's dynamics (section 10.1): ``v' = bound[v + 0.001 A
    - 0.0025 cos(3 x)]`` and ``x' = bound[x + v']``, with ``A`` in ``{-1, 0, +1}``,
    ``x`` in ``[-1.2, 0.5]`` and ``v`` in ``[-0.07, 0.07]``; at the left bound ``v'``
    is reset to 0, and reaching ``x' = 0.5`` ends the episode.

    The continuous state is replaced by the ``positions x velocities`` points of a
    regular grid over that box. From a grid point the car moves by the exact dynamics
    and lands between four grid points; the model moves it to each of them with its
    bilinear interpolation weight (Munos and Moore, 2002, "Variable resolution
    discretization in optimal control"). So the expected landing point is the exact
    one, and a step smaller than the grid's spacing (the engine changes ``v`` by 0.001
    per step) still moves the car on average, where rounding to the nearest point
    would leave it in place. The grid's optimum converges to the continuous task's as
    the grid is refined; the ``mountain_car`` experiment measures how fast.

    ## Action Space
    ``Discrete(3)``: 0 = full throttle reverse (``A = -1``), 1 = zero throttle, 2 =
    full throttle forward (``A = +1``).

    ## Observation Space
    ``Discrete(positions * velocities)``: state id ``j * positions + i`` is position
    ``POSITION_BOUNDS[0] + i dx`` and velocity ``VELOCITY_BOUNDS[0] + j dv``; the model's
    ``state_cells`` are ``(j, i)`` (velocity row, position column), so
    :func:`tabular.linear.state_coordinates` gives ``(v, x)`` scaled to ``[0, 1]``.

    ## Starting State
    Velocity 0 and a position drawn uniformly from the grid points in ``[-0.6, -0.4)``
    (the book draws it uniformly from that interval).

    ## Rewards
    -1 on every step, the step that reaches the goal included.

    ## Episode End
    Termination on reaching the goal. Truncation: ``tabzoo/MountainCar-v0`` is
    registered with ``max_episode_steps=10000``.

    ## Arguments
    * ``positions``: grid points along the position axis, an integer in ``[2, 1000]``
      (default 51).
    * ``velocities``: grid points along the velocity axis, an odd integer in ``[3,
      1001]``, so that velocity 0 is a grid point (default 51).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    REVERSE, COAST, FORWARD = 0, 1, 2
    #: The book's bounds of the position and of the velocity.
    POSITION_BOUNDS = (-1.2, 0.5)
    VELOCITY_BOUNDS = (-0.07, 0.07)
    #: The book's start interval of the position.
    START_POSITIONS = (-0.6, -0.4)

    def __init__(self, positions: int = 51, velocities: int = 51,
                 render_mode: str | None = None) -> None:
        self.positions = check_count("positions", positions, 2, 1000)
        self.velocities = check_count("velocities", velocities, 3, 1001)
        if self.velocities % 2 == 0:
            raise ValueError(f"velocities must be odd, so that velocity 0 is a grid point, "
                             f"got {self.velocities}")
        super().__init__(self.model(), render_mode)

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """The grid's positions ``[positions]`` and velocities ``[velocities]``."""
        velocities = np.linspace(*self.VELOCITY_BOUNDS, self.velocities)
        velocities[self.velocities // 2] = 0.0  # exactly: the start's velocity
        return np.linspace(*self.POSITION_BOUNDS, self.positions), velocities

    def model(self) -> TabularMDP:
        """The exact model: outcome ``2 dj + di`` lands on the grid point ``(j + dj,
        i + di)`` beside the landing point ``(j, i)``, with its bilinear weight; a
        landing at the goal is one terminating outcome."""
        xs, vs = self.grid()
        nx, nv = self.positions, self.velocities
        x = np.tile(xs, nv)[:, None]  # state j * nx + i
        v = np.repeat(vs, nx)[:, None]
        thrust = np.arange(3)[None, :] - 1.0
        v_next = np.clip(v + 0.001 * thrust - 0.0025 * np.cos(3.0 * x), *self.VELOCITY_BOUNDS)
        x_next = np.clip(x + v_next, *self.POSITION_BOUNDS)
        v_next = np.where(x_next == self.POSITION_BOUNDS[0], 0.0, v_next)
        goal = x_next >= self.POSITION_BOUNDS[1]
        # the grid cell the car lands in and its fractional place in it
        fx = (x_next - xs[0]) / (xs[1] - xs[0])
        fv = (v_next - vs[0]) / (vs[1] - vs[0])
        i = np.minimum(np.floor(fx).astype(np.int64), nx - 2)
        j = np.minimum(np.floor(fv).astype(np.int64), nv - 2)
        tx, tv = np.clip(fx - i, 0.0, 1.0), np.clip(fv - j, 0.0, 1.0)  # rounding
        S = nx * nv
        next_state = np.empty((S, 3, 4), dtype=np.int64)
        prob = np.empty((S, 3, 4))
        for k, (dj, di) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
            next_state[:, :, k] = (j + dj) * nx + i + di
            prob[:, :, k] = (tv if dj else 1.0 - tv) * (tx if di else 1.0 - tx)
        next_state[goal] = 0
        prob[goal] = [1.0, 0.0, 0.0, 0.0]
        done = np.zeros((S, 3, 4), dtype=bool)
        done[goal, 0] = True
        start = np.zeros(S)
        at_rest = (nv // 2) * nx  # the row of velocity 0
        begins = (xs >= self.START_POSITIONS[0]) & (xs < self.START_POSITIONS[1])
        if not begins.any():  # a grid coarser than the start interval
            begins[np.argmin(np.abs(xs - np.mean(self.START_POSITIONS)))] = True
        start[at_rest + np.flatnonzero(begins)] = 1.0 / begins.sum()
        cells = np.stack(np.divmod(np.arange(S), nx), axis=1)
        labels = [f"x={xs[s % nx]:.3f}, v={vs[s // nx]:.4f}" for s in range(S)]
        return TabularMDP(next_state, prob, np.full((S, 3, 4), -1.0), done, start,
                          state_labels=labels, action_names=["reverse", "coast", "forward"],
                          grid_shape=(nv, nx), state_cells=cells)
