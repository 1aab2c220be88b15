"""The chapter 6-12 learners beside Q-learning, on Gymnasium's ``CliffWalking-v1`` (one
thread, one process): environment steps per second, and the ratio to Q-learning's.

n-step control and the trace methods do more arithmetic per step (a window of n
returns, a trace over every visited pair); Dyna-Q does ``planning_steps`` model updates
per real step, so its rate counts real steps and its work is ``1 + n`` updates each.
Also the first call of each from an empty numba cache and with it warm.
"""

from __future__ import annotations

import gymnasium as gym
import numba

from benchmarks.timing import compile_seconds, steps_per_second
from tabular import (
    TabularMDP,
    dyna_q,
    n_step_sarsa,
    q_learning,
    sarsa_lambda,
    tree_backup,
    true_online_td_lambda,
)

LEARNERS = {
    "q_learning": (q_learning, {}),
    "n_step_sarsa (n = 4)": (n_step_sarsa, {"n_step": 4}),
    "tree_backup (n = 4)": (tree_backup, {"n_step": 4}),
    "sarsa_lambda (0.9)": (sarsa_lambda, {"lam": 0.9}),
    "dyna_q (n = 5)": (dyna_q, {"planning_steps": 5}),
}
SETUP = ("import gymnasium as gym; import tabular; "
         "mdp = tabular.TabularMDP.from_gymnasium(gym.make('CliffWalking-v1'))")


def main() -> None:
    for name, args in (("n_step_sarsa", "mdp"), ("sarsa_lambda", "mdp"), ("dyna_q", "mdp"),
                       ("true_online_td_lambda", "mdp, [[0.25] * 4] * 48")):
        cold, warm = compile_seconds(SETUP, f"tabular.{name}({args}, episodes=2)")
        print(f"{name:>24}: first call {cold:5.2f} s from an empty cache, {warm:5.2f} s warm")
    mdp = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        rates = {name: steps_per_second(lambda f=f, kw=kw: f(mdp, episodes=2000, alpha=0.1,
                                                             epsilon=0.1, seed=0, **kw))
                 for name, (f, kw) in LEARNERS.items()}
        uniform = [[0.25] * 4] * 48
        rates["true_online_td_lambda (0.9)"] = steps_per_second(
            lambda: true_online_td_lambda(mdp, uniform, lam=0.9, episodes=200, alpha=0.1,
                                          seed=0))
    finally:
        numba.set_num_threads(threads)
    base = rates["q_learning"]
    for name, rate in rates.items():
        print(f"{name:>28}: {rate:13,.0f} steps/s on 1 thread ({rate / base:5.2f}x Q-learning)")


if __name__ == "__main__":
    main()
