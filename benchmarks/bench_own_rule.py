"""A user's own rule (``tabular/learn/custom.py``): Q-learning's target written by
hand and made a learner by ``td_control``, against the library's ``q_learning``.

Both compute the same numbers bit for bit (``tests/learn/test_own_rule.py``); the
ratio is the user's rule's time over ``q_learning``'s, the best of 5 calls each,
taken in alternated rounds so that both sides share the machine's load round by
round (a ratio above 1: the own rule is slower). Workloads: CliffWalking-v1 (20,000
episodes) and FrozenLake 8x8 slippery (20,000 episodes), one run, one thread.
"""

from __future__ import annotations

import gymnasium as gym
from numba import njit

from benchmarks.timing import Headline, best_seconds, numba_threads, spread, versus
from tabular import TabularMDP, q_learning
from tabular.learn.custom import max_value, td_control

ROUNDS = 9


@td_control
@njit(inline="always")
def own_q_learning(reward, gamma, q_next, done, next_action, epsilon, legal):
    """``R + gamma max_a Q(S', a)``, as a user writes it."""
    if done:
        return reward
    return reward + gamma * max_value(q_next, legal)


def main() -> list[Headline]:
    headlines = []
    with numba_threads(1):
        for what, env, episodes in (
                ("CliffWalking-v1", gym.make("CliffWalking-v1"), 20_000),
                ("FrozenLake 8x8 slippery", gym.make("FrozenLake-v1", map_name="8x8"), 20_000)):
            mdp = TabularMDP.from_gymnasium(env)
            args = dict(episodes=episodes, alpha=0.5, epsilon=0.1, seed=0)
            steps = q_learning(mdp, **args).episode_lengths.sum()
            assert steps == own_q_learning(mdp, **args).episode_lengths.sum()
            own, library, ratio = versus(
                lambda mdp=mdp, args=args: best_seconds(lambda: own_q_learning(mdp, **args), 5),
                lambda mdp=mdp, args=args: best_seconds(lambda: q_learning(mdp, **args), 5),
                ROUNDS)
            print(f"{what:>24}: q_learning {spread(library, '{:.4f}')} s, "
                  f"own rule {spread(own, '{:.4f}')} s for {steps:,} steps; "
                  f"own / library {spread(ratio)} ({ROUNDS} alternated rounds)")
            headlines.append(Headline(what=f"own Q-learning rule (td_control), {what}",
                                      ours=f"{min(own) * 1e3:.2f} ms",
                                      reference=f"q_learning {min(library) * 1e3:.2f} ms",
                                      ratio=spread(ratio)))
    return headlines


if __name__ == "__main__":
    main()
