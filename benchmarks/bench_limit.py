"""The TD learners against minimal hand-written kernels (:mod:`benchmarks.minimal`).

Q-learning, SARSA, expected SARSA (alpha 0.5, epsilon 0.1) and TD(0) of the uniform
random policy (alpha 0.1), gamma 1, from zero estimates, one run, one thread, on two
deterministic models: Gymnasium's ``CliffWalking-v1`` (48 states; 5,000 episodes a
call) and an open 1000 x 1000 gridworld (10^6 states, 4 actions, -1 a step, the
bottom-right corner a free absorbing goal, every state a start state, episodes cut at
1,000 steps; 2,000 episodes a call).

Reported, from one run of this process, in ``ROUNDS`` alternated rounds (each round
times, for each learner in turn, the public call, our kernel alone and the minimal
kernel, best of ``CALLS`` calls each):

- steps per second of each (``min median max`` of the rounds);
- the ratio minimal / ours round by round as ``median [min-max]``: how many times
  longer ours takes a step, for the public call (what a user waits for: argument
  checks, the output tables, the result) and for the kernel alone (the outputs made
  beforehand). 1.0 is the floor; above it, the cost of being a library;
- a check that the minimal kernels learn: Q-learning's greedy policy on CliffWalking
  walks the optimal path (13 steps);
- the longer model-free kernels (n-step SARSA, Sarsa(lambda), Dyna-Q) against
  ``q_learning`` on CliffWalking: steps per second and their ratio, in alternated
  rounds (Dyna-Q's steps are real steps, each with its planning updates).

The minimal kernels draw other random numbers than ours, so episode lengths differ
slightly; rates, not times, are compared.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numba
import numpy as np

from benchmarks import minimal
from benchmarks.timing import Headline, alternated, ratios, spread
from tabular import (
    TabularMDP,
    dyna_q,
    expected_sarsa,
    n_step_sarsa,
    q_learning,
    sarsa,
    sarsa_lambda,
    td0,
)
from tabular._numba.rng import seed_states
from tabular.learn import td
from tabular.learn.outputs import control_outputs, prediction_outputs
from tabular.schedules import constant

ROUNDS = 7
CALLS = 3
GAMMA, ALPHA, EPSILON, TD_ALPHA = 1.0, 0.5, 0.1, 0.1
MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])  # up, right, down, left


def grid(n: int) -> TabularMDP:
    """The open ``n x n`` deterministic gridworld, built in its stored form: every state
    a start state, the last one an absorbing goal that pays 0 and ends the episode."""
    S = n * n
    row, col = np.divmod(np.arange(S), n)
    r = np.clip(row[:, None] + MOVES[None, :, 0], 0, n - 1)
    c = np.clip(col[:, None] + MOVES[None, :, 1], 0, n - 1)
    successor = (r * n + c)[..., None]
    code = np.zeros(successor.shape, dtype=np.uint16)  # row 0: -1; row 1: the goal's 0
    successor[S - 1], code[S - 1] = S - 1, 1
    successor[successor == S - 1] = -1 - (S - 1)  # reaching the goal ends the episode
    return TabularMDP.from_arrays(successor, code, np.zeros(0), np.array([-1.0, 0.0]))


#: (name, model, episodes, max_steps)
MODELS = (("CliffWalking-v1", lambda: TabularMDP.from_gymnasium(gym.make("CliffWalking-v1")),
           5_000, 10_000),
          ("gridworld 10^6", lambda: grid(1000), 2_000, 1_000))


class Contenders:
    """The three ways of running one learner on one model, each a call returning the
    number of steps it took: ``ours`` (the public function), ``kernel`` (our kernel on
    outputs made beforehand), ``minimal`` (:mod:`benchmarks.minimal`)."""

    def __init__(self, name: str, mdp: TabularMDP, episodes: int, max_steps: int):
        S, A = mdp.n_states, mdp.n_actions
        self.seed = seed_states(0)
        stored = minimal.stored(mdp)
        if name == "td0":
            policy = np.full((S, A), 1.0 / A)
            params = td.TDPredictionParams(policy, GAMMA, constant(TD_ALPHA).params, 1,
                                           episodes, max_steps)
            driver = td._td0  # what td0 runs at n = 1
            self.fresh = lambda: prediction_outputs(np.zeros(S), 1, episodes, False)
            self.ours = lambda: td0(mdp, policy, gamma=GAMMA, alpha=TD_ALPHA,
                                    episodes=episodes, max_steps=max_steps)
            self.minimal = lambda: minimal.td0(stored, policy, GAMMA, TD_ALPHA, episodes,
                                               max_steps, self.seed[0])
        else:
            public = {"q_learning": q_learning, "sarsa": sarsa,
                      "expected_sarsa": expected_sarsa}[name]
            driver = {"q_learning": td._q_learning, "sarsa": td._sarsa,
                      "expected_sarsa": td._expected_sarsa}[name]
            params = td.TDControlParams(GAMMA, constant(ALPHA).params,
                                        constant(EPSILON).params, episodes, max_steps)
            self.fresh = lambda: control_outputs(np.zeros((S, A)), 1, episodes)
            self.ours = lambda: public(mdp, gamma=GAMMA, alpha=ALPHA, epsilon=EPSILON,
                                       episodes=episodes, max_steps=max_steps)
            least = getattr(minimal, name)
            self.minimal = lambda: least(stored, GAMMA, ALPHA, EPSILON, episodes, max_steps,
                                         self.seed[0])
        self.driver, self.model, self.params = driver, mdp.arrays, params

    def run_kernel(self, out) -> None:
        self.driver(self.model, self.params, self.seed.copy(), out)


def best_rate(call, calls: int = CALLS) -> float:
    """The best steps per second of ``calls`` calls of ``call()`` (returning its steps)."""
    best = 0.0
    for _ in range(calls):
        t = time.perf_counter()
        steps = call()
        best = max(best, steps / (time.perf_counter() - t))
    return best


def kernel_rate(contender: Contenders, calls: int = CALLS) -> float:
    """:func:`best_rate` of our kernel alone: its outputs are made outside the timer."""
    best = 0.0
    for _ in range(calls):
        out = contender.fresh()
        t = time.perf_counter()
        contender.run_kernel(out)
        best = max(best, out.lengths.sum() / (time.perf_counter() - t))
    return best


def check_minimal_learns() -> None:
    """Minimal Q-learning's greedy policy on CliffWalking walks the 13-step optimal path."""
    mdp = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    Q, _ = minimal.q_learning(minimal.stored(mdp), 1.0, 0.5, 0.1, 500, 10_000,
                              seed_states(0)[0])
    s, steps = int(np.argmax(mdp.start)), 0
    while steps < 100:
        a = int(np.argmax(Q[s]))
        s, done = int(mdp.next_state[s, a, 0]), bool(mdp.done[s, a, 0])
        steps += 1
        if done:
            break
    print(f"minimal Q-learning's greedy path on CliffWalking: {steps} steps "
          f"({'optimal' if steps == 13 else 'NOT the optimal 13'})")


LEARNERS = ("q_learning", "sarsa", "expected_sarsa", "td0")

#: The longer model-free kernels, each against q_learning on CliffWalking (steps per
#: second of the public call, the same episodes; each learner's default step size:
#: accumulating traces with alpha = 0.5 diverge on the cliff).
OTHERS = {
    "n_step_sarsa (n = 3)": lambda mdp, n: n_step_sarsa(mdp, n_step=3, episodes=n),
    "sarsa_lambda (lam = 0.9)": lambda mdp, n: sarsa_lambda(mdp, lam=0.9, episodes=n),
    "dyna_q (0 planning steps)": lambda mdp, n: dyna_q(mdp, planning_steps=0, episodes=n),
    "dyna_q (5 planning steps)": lambda mdp, n: dyna_q(mdp, planning_steps=5, episodes=n),
}


def others_against_q_learning(episodes: int = 5_000) -> None:
    """Print :data:`OTHERS`' steps per second against Q-learning's, in alternated rounds."""
    mdp = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    calls = {"q_learning": lambda n: q_learning(mdp, episodes=n), **{
        name: lambda n, call=call: call(mdp, n) for name, call in OTHERS.items()}}
    measures = {}
    for name, call in calls.items():
        call(10)  # compile
        measures[name] = lambda call=call: best_rate(
            lambda: int(call(episodes).episode_lengths.sum()))
    rounds = alternated(measures, ROUNDS)
    print(f"\nCliffWalking-v1, {episodes:,} episodes a call, {ROUNDS} alternated rounds: "
          "steps per second (M) and the ratio to q_learning's")
    for name in OTHERS:
        print(f"{name:>28} {spread([x / 1e6 for x in rounds[name]], '{:.1f}'):>22} "
              f"{spread(ratios(rounds[name], rounds['q_learning'])):>18}", flush=True)


def main() -> list[Headline]:
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    headlines = []
    try:
        check_minimal_learns()
        for where, make, episodes, max_steps in MODELS:
            mdp = make()
            contenders = {name: Contenders(name, mdp, episodes, max_steps) for name in LEARNERS}
            measures = {}
            for name, c in contenders.items():
                c.ours(), c.minimal(), c.run_kernel(c.fresh())  # compile, warm up
                measures[f"{name} ours"] = lambda c=c: best_rate(
                    lambda: int(c.ours().episode_lengths.sum()))
                measures[f"{name} kernel"] = lambda c=c: kernel_rate(c)
                measures[f"{name} minimal"] = lambda c=c: best_rate(
                    lambda: int(c.minimal()[1].sum()))
            rounds = alternated(measures, ROUNDS)
            print(f"\n{where}: {mdp.n_states:,} states, {episodes:,} episodes a call, "
                  f"{ROUNDS} alternated rounds, best of {CALLS} calls each, 1 thread")
            print(f"{'':>16} {'ours (M steps/s)':>22} {'kernel alone':>22} {'minimal':>22}"
                  f" {'minimal/ours':>18} {'minimal/kernel':>18}")
            for name in LEARNERS:
                ours, kernel, least = (rounds[f"{name} {k}"] for k in ("ours", "kernel", "minimal"))
                call_x, kernel_x = ratios(least, ours), ratios(least, kernel)
                print(f"{name:>16} {spread([x / 1e6 for x in ours], '{:.1f}'):>22} "
                      f"{spread([x / 1e6 for x in kernel], '{:.1f}'):>22} "
                      f"{spread([x / 1e6 for x in least], '{:.1f}'):>22} "
                      f"{spread(call_x):>18} {spread(kernel_x):>18}", flush=True)
                headlines.append(Headline(
                    f"{name}, {where}, 1 thread, against a minimal kernel",
                    f"{np.median(ours) / 1e6:.1f}M steps/s",
                    f"minimal hand-written {np.median(least) / 1e6:.1f}M steps/s",
                    f"{1 / np.median(call_x):.2f}x"))
        others_against_q_learning()
    finally:
        numba.set_num_threads(threads)
    return headlines


if __name__ == "__main__":
    main()
