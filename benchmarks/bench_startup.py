"""Time to the first result: ``import tabular`` and the first call of one entry point
of each family, in fresh interpreters, from an empty numba cache (cold) and from the
cache that run left behind (warm, as after ``make warm``).

Each line is one fresh process that imports, builds FrozenLake's model from
Gymnasium's table (its import timed apart: a user's own import) and makes the first
call of one entry point with its default options; ``first call`` is that call alone,
and ``(CPU)`` its CPU seconds (compiling runs on one thread, so they depend less on
the machine's load than the wall time). Also the time of ``python -m tabular.warm``
from an empty cache (what ``make warm`` costs once, every entry point and variant).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

PROBE = """
import json, time
t = time.perf_counter()
import tabular
t_import = time.perf_counter() - t
t = time.perf_counter()
import gymnasium as gym
import numpy as np
t_gym = time.perf_counter() - t
mdp = tabular.TabularMDP.from_gymnasium(gym.make("FrozenLake-v1", map_name="8x8"))
policy = np.zeros(64, dtype=int)
t, cpu = time.perf_counter(), time.process_time()
{call}
t_call, cpu_call = time.perf_counter() - t, time.process_time() - cpu
print(json.dumps([t_import, t_gym, t_call, cpu_call]))
"""
#: One entry point of each family, called as a user first would (default options).
CALLS = {
    "value_iteration": "tabular.value_iteration(mdp, 0.99)",
    "policy_evaluation": "tabular.policy_evaluation(mdp, policy, 0.99)",
    "td0": "tabular.td0(mdp, policy, episodes=100)",
    "q_learning": "tabular.q_learning(mdp, episodes=100)",
    "sarsa": "tabular.sarsa(mdp, episodes=100)",
    "n_step_sarsa": "tabular.n_step_sarsa(mdp, episodes=100)",
    "mc_control": "tabular.mc_control(mdp, episodes=100)",
    "sarsa_lambda": "tabular.sarsa_lambda(mdp, episodes=100)",
    "dyna_q": "tabular.dyna_q(mdp, episodes=100)",
    "semi_gradient_td": "tabular.linear.semi_gradient_td(mdp, policy, np.eye(64), "
                        "episodes=100)",
    "reinforce": "tabular.reinforce(mdp, gamma=0.99, episodes=100)",
    "ppo": "tabular.ppo(mdp, gamma=0.99, iterations=10)",
    "trpo": "tabular.trpo(mdp, gamma=0.99, iterations=10)",
}


def probe(call: str, cache: str) -> list[float]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", PROBE.format(call=call)], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    print(f"{'entry point':>18}{'import tabular':>16}{'import gym':>12}"
          f"{'first call cold':>17}{'(CPU)':>8}{'first call warm':>17}"
          f"{'import + call warm':>20}")
    for name, call in CALLS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = probe(call, cache)
            warm = probe(call, cache)
        print(f"{name:>18}{warm[0]:>15.2f}s{warm[1]:>11.2f}s{cold[2]:>16.2f}s{cold[3]:>7.2f}s"
              f"{warm[2]:>16.3f}s{warm[0] + warm[2]:>19.2f}s", flush=True)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        lines = subprocess.run([sys.executable, "-m", "tabular.warm"], env=env, check=True,
                               capture_output=True, text=True).stdout.splitlines()
    print(f"python -m tabular.warm from an empty cache: {lines[-1]}")


if __name__ == "__main__":
    main()
