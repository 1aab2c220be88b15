"""grpo's history: TRL GRPOTrainer's metric names beside the exact ones."""

from __future__ import annotations

import numpy as np

from tabular.envs import TokenMDP
from tabular.rlhf import ending_probabilities, grpo
from tabular.rlhf.group_telemetry import EXACT_GRPO, TRL_GRPO


def test_grpo_history_has_trls_names_and_exact_lengths():
    env = TokenMDP(("x",), {"x": 1.0, "y x": 0.5, "x y y": 0.2}, vocab=("x", "y"), max_len=3)
    mdp = env.to_mdp()
    res = grpo(mdp, iterations=20, alpha=3.0, num_iterations=3, ref_policy=np.full(
        (mdp.n_states, mdp.n_actions), 1 / mdp.n_actions), beta=0.5, history=True,
        eval_every=10, epsilon=0.05)
    h = res.history
    assert set(TRL_GRPO + EXACT_GRPO) <= set(h.names)
    # the exact expected length of the uniform start: each step ends with eos w.p. 1/3
    # until max_len = 3 cuts: E|o| = 1 + 2/3 + 4/9
    assert abs(h["exact/expected_length"][0] - (1 + 2 / 3 + 4 / 9)) < 1e-12
    ends = ending_probabilities(mdp, np.full((mdp.n_states, mdp.n_actions), 1 / 3))
    p = ends[ends > 0]
    assert abs(h["exact/entropy"][0] + p @ np.log(p)) < 1e-12
    np.testing.assert_array_equal(h["reward"], h["objective/scores"])
    # the clip shares are the kernel's of the iteration before each evaluation
    assert h["clip_ratio/low_mean"][0] == 0.0
    np.testing.assert_array_equal(h["clip_ratio/low_mean"][1:], res.clip_ratio_low[[9, 19]])
    np.testing.assert_array_equal(h["clip_ratio/region_mean"],
                                  h["clip_ratio/low_mean"] + h["clip_ratio/high_mean"])
    assert (h["clip_ratio/region_mean"][1:] > 0).all()
    # responses of 3 tokens without eos are cut by max_len
    assert 0.0 <= h["completions/clipped_ratio"].min() and h["completions/max_length"].max() <= 3
