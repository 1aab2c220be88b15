"""The bigger token MDP (``tabular.envs.load_grammar_scenario()``, the ``assistant`` scenario):
what it costs to build and to solve exactly.

Reported, from one run of this process (numba's cache warm after a first call):

- the tree: states, actions (tokens), finished responses;
- the seconds to build the gold token MDP (the prefix tree, level by level, and its
  model), and the bytes of the model's arrays;
- the seconds of the whole pipeline (pre-training, SFT, the reward model on the
  sampled comparisons, the proxy's token MDP, the reference policy);
- the seconds of exact soft value iteration (the optimum ``pi*_beta``) and of the
  closed form ``kl_optimum``, at ``beta = 0.5`` and ``1``, and of one exact
  ``kl_objective`` of a policy;
- the peak resident memory of the process.
"""

from __future__ import annotations

import resource
import time

from tabular import soft_value_iteration
from tabular.envs import load_grammar_scenario
from tabular.rlhf import kl_objective, kl_optimum, train_pipeline


def seconds(call):
    """``(result, seconds)`` of one call."""
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def main() -> None:
    scenario = load_grammar_scenario()
    env, build = seconds(scenario.env)
    mdp = env.to_mdp()
    size = sum(getattr(mdp, f).nbytes for f in ("next_state", "prob", "reward", "done"))
    print(f"tree: {mdp.n_states:,} states, {mdp.n_actions} tokens, "
          f"{int(env.terminal.sum()):,} finished responses, {len(scenario.prompts)} prompts")
    print(f"build the gold token MDP: {build:.2f} s; model arrays {size / 2**20:.0f} MiB")
    ex, pipeline = seconds(lambda: train_pipeline(scenario))
    print(f"pipeline (pre-train, SFT, reward model, proxy MDP, reference): {pipeline:.2f} s")
    soft_value_iteration(ex.mdp, gamma=1.0, beta=1.0, ref_policy=ex.reference)  # compile
    for beta in (0.5, 1.0):
        _, solve = seconds(lambda b=beta: soft_value_iteration(ex.mdp, gamma=1.0, beta=b,
                                                               ref_policy=ex.reference))
        _, closed = seconds(lambda b=beta: kl_optimum(ex.mdp, ex.reference, b))
        print(f"beta = {beta:g}: soft value iteration {solve:.2f} s, kl_optimum {closed:.2f} s")
    _, measure = seconds(lambda: kl_objective(ex.mdp, ex.reference, ex.reference, 1.0))
    print(f"one exact kl_objective: {measure:.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    print(f"peak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
