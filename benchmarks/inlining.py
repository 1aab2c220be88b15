"""Which plain jitted functions of ``tabular`` remain a call in a compiled kernel (opt-in:
``python -m benchmarks inlining``; a few minutes).

A helper is either inlined into numba's IR (``inline="always"``, re-typed in every
kernel) or a plain ``@njit`` compiled once, which LLVM is expected to inline into each
kernel (:mod:`tabular.rules`). This runs every learner and DP entry point once in a
fresh numba cache (numba shows the IR only of what it compiled in the same process),
reads each kernel's final LLVM IR and lists the plain jitted functions still called
there, with their callers. The functions meant to be calls (a learner's ``_run`` loop,
the episode batches, the planners' tables) are listed too; a rule or a small helper in
this list costs a call per step and belongs in numba's IR.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile

CALL = re.compile(r'call [^\n]*?@"?(_ZN[\w.$]+)')


def exercise() -> None:
    """Call every learner and DP entry point once, on small problems."""
    import gymnasium as gym
    import numpy as np

    import tabular as T
    from tabular import envs
    from tabular.plan.expected_updates import (
        branching_task,
        trajectory_sampling,
        uniform_expected_updates,
    )
    from tabular.rlhf import fit_process_reward_model, grpo, iterated_dpo, kto, train_pipeline
    from tabular.testing import random_mdp

    for name in ("CliffWalking-v1", "FrozenLake-v1"):
        mdp = T.TabularMDP.from_gymnasium(gym.make(name))
        for learner in (T.q_learning, T.sarsa, T.expected_sarsa, T.double_q_learning,
                        T.sarsa_lambda, T.watkins_q_lambda, T.true_online_sarsa_lambda,
                        T.n_step_sarsa, T.n_step_expected_sarsa, T.off_policy_n_step_sarsa,
                        T.tree_backup, T.q_sigma, T.dyna_q, T.dyna_q_plus,
                        T.prioritized_sweeping, T.mc_control, T.reinforce, T.actor_critic):
            learner(mdp, episodes=5)
        T.ppo(mdp, iterations=2)
        T.trpo(mdp, iterations=2)
        pi = np.full((mdp.n_states, mdp.n_actions), 1 / mdp.n_actions)
        for predictor in (T.td0, T.mc_prediction, T.td_lambda, T.true_online_td_lambda,
                          T.offline_lambda_return):
            predictor(mdp, pi, episodes=5)
        T.off_policy_mc_prediction(mdp, pi, pi, episodes=5)
        for method in ("sync", "inplace", "blocked"):
            T.value_iteration(mdp, 0.9, method=method)
        for method in ("exact", "sync", "inplace"):
            T.policy_evaluation(mdp, pi, 0.9, method=method)
        for method in ("sync", "inplace"):
            T.soft_value_iteration(mdp, 0.9, 0.5, method=method)
        T.policy_iteration(mdp, 0.9, eval_sweeps=3)
    mdp = random_mdp(np.random.default_rng(0), 6, 3, 2, done_rate=0.0)
    T.differential_sarsa(mdp, steps=100)
    T.r_learning(mdp, steps=100)
    walk = T.TabularMDP.from_gymnasium(gym.make("tabzoo/RandomWalk-v0"))
    T.batch_prediction(walk, np.ones((walk.n_states, walk.n_actions)), episodes=3)
    task = branching_task(50, 3, seed=1)
    uniform_expected_updates(task, updates=100, evaluate_every=50)
    trajectory_sampling(task, updates=100, evaluate_every=50)
    for bandit in (T.epsilon_greedy_bandit, T.ucb_bandit, T.gradient_bandit):
        bandit(steps=10, runs=2)
    ex = train_pipeline(envs.load_scenario())
    labels = [(3, ex.scenario.prompt, "Paris.", True)]
    kto(ex.gold_env, ex.reference, labels, beta=0.5, steps=5)
    iterated_dpo(ex.gold_env, ex.reference, beta=1.0, rounds=1, pairs=4, steps=2)
    fit_process_reward_model(ex.mdp, ex.reference, responses=4)
    grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=0.5, iterations=2)


def dispatchers() -> dict:
    """``{qualified name: dispatcher}`` of every jitted function defined in ``tabular``."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("tabular"):
            for name, obj in vars(module).items():
                if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module_name:
                    found[f"{module_name}.{name}"] = obj
    return found


def mangled(qualified: str) -> str:
    """The prefix of numba's mangled symbol for a function ``a.b.f``: ``_ZN1a1b1f``."""
    return "_ZN" + "".join(f"{len(part)}{part}" for part in qualified.split("."))


def calls_left() -> dict[str, set[str]]:
    """``{plain jitted function: the kernels whose final IR still calls it}`` (a kernel's
    IR holds the functions it links in: a call from a ``_run`` loop shows in its driver)."""
    functions = dispatchers()
    plain = {mangled(name): name for name, d in functions.items()
             if d.targetoptions.get("inline", "never") == "never"}
    callers = collections.defaultdict(set)
    for caller, d in functions.items():
        for signature in d.signatures:
            for symbol in set(CALL.findall(d.inspect_llvm(signature))):
                for prefix, callee in plain.items():
                    tagged = symbol.startswith(prefix) and symbol[len(prefix)] in "BE"
                    if tagged and callee != caller:
                        callers[callee].add(caller)
    return callers


def report() -> None:
    exercise()
    for callee, callers in sorted(calls_left().items()):
        print(f"{callee}  <-  {', '.join(sorted(callers))}")


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        subprocess.run([sys.executable, "-c", "from benchmarks.inlining import report; report()"],
                       env=env, check=True)


if __name__ == "__main__":
    main()
