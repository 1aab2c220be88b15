"""The bad-input catalogue of the GRPO family's options (:class:`tabular.rlhf.GRPOConfig`,
:func:`tabular.rlhf.grpo`, :func:`tabular.rlhf.expected_update`): each row is ``(name,
call, exception type, fragment of the message)``, as in ``tests/test_bad_inputs.py``."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from conftest import clear_error_test

from tabular import SoftmaxPolicy, TabularMDP, rlhf
from tabular.envs import TokenMDP
from tabular.rlhf import GRPOConfig

TOKENS = TokenMDP(("Say hello.",), {"hello": 1.0}, max_len=2)
MDP = TOKENS.to_mdp()
POLICY = SoftmaxPolicy.tabular(MDP.n_states, MDP.n_actions)
FROZEN = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1"))


def grpo(**kw):
    return lambda: rlhf.grpo(MDP, iterations=2, **kw)


def config(**kw):
    return lambda: GRPOConfig(**kw)


ROWS = [
    ("grpo normalise 'yes'", grpo(normalise="yes"), ValueError,
     "normalise must be True or False"),
    ("grpo normalise 0", grpo(normalise=0), ValueError, "normalise must be True or False"),
    ("grpo normalise with scale_rewards", grpo(normalise=True, scale_rewards="group"),
     ValueError, "not both"),
    ("grpo aggregation with loss_type", grpo(aggregation="sum", loss_type="dapo"),
     ValueError, "not both"),
    ("grpo group_size 10**9", grpo(group_size=10**9), ValueError, "group_size must be at most"),
    ("grpo group_size 1", grpo(group_size=1), ValueError, "group_size must be >= 2"),
    ("grpo group_size 2.5", grpo(group_size=2.5), ValueError, "group_size must be an integer"),
    ("grpo groups 0", grpo(groups=0), ValueError, "groups must be an integer >= 1"),
    ("grpo loss_type", grpo(loss_type="ppo"), ValueError, "loss_type must be one of"),
    ("grpo loss_type sapo", grpo(loss_type="sapo"), ValueError, "loss_type must be one of"),
    ("grpo scale_rewards True", grpo(scale_rewards=True), ValueError,
     "scale_rewards must be one of"),
    ("grpo scale_rewards", grpo(scale_rewards="global"), ValueError,
     "scale_rewards must be one of"),
    ("grpo num_iterations 0", grpo(num_iterations=0), ValueError,
     "num_iterations must be an integer >= 1"),
    ("grpo num_iterations True", grpo(num_iterations=True), ValueError,
     "num_iterations must be an integer"),
    ("grpo epsilon 0", grpo(epsilon=0.0), ValueError, "epsilon must be in (0, 1)"),
    ("grpo epsilon 1", grpo(epsilon=1.0), ValueError, "epsilon must be in (0, 1)"),
    ("grpo epsilon NaN", grpo(epsilon=math.nan), ValueError, "epsilon must be in (0, 1)"),
    ("grpo epsilon str", grpo(epsilon="0.2"), ValueError, "epsilon"),
    ("grpo epsilon_high -1", grpo(epsilon_high=-1.0), ValueError,
     "epsilon_high must be a number in (0, 1e6)"),
    ("grpo epsilon_high inf", grpo(epsilon_high=math.inf), ValueError, "epsilon_high"),
    ("grpo cispo without epsilon_high", grpo(loss_type="cispo"), ValueError,
     "pass epsilon_high"),
    ("grpo importance_sampling_level", grpo(importance_sampling_level="response"),
     ValueError, "importance_sampling_level must be one of"),
    ("grpo dynamic_sampling 1", grpo(dynamic_sampling=1), ValueError,
     "dynamic_sampling must be True or False"),
    ("grpo mask_truncated_completions 'yes'", grpo(mask_truncated_completions="yes"),
     ValueError, "mask_truncated_completions must be True or False"),
    ("grpo truncation_penalty -1", grpo(truncation_penalty=-1.0), ValueError,
     "truncation_penalty"),
    ("grpo truncation_penalty inf", grpo(truncation_penalty=math.inf), ValueError,
     "truncation_penalty"),
    ("grpo kl_estimator", grpo(kl_estimator="k4"), ValueError, "kl_estimator must be one of"),
    ("grpo kl_placement", grpo(kl_placement="advantage"), ValueError,
     "kl_placement must be one of"),
    ("grpo entropy_coef -0.1", grpo(entropy_coef=-0.1), ValueError, "entropy_coef"),
    ("grpo entropy_coef NaN", grpo(entropy_coef=math.nan), ValueError, "entropy_coef"),
    ("GRPOConfig advantage", config(advantage="ppo"), ValueError, "advantage must be one of"),
    ("expected_update config and options", lambda: rlhf.expected_update(
        MDP, POLICY, config=GRPOConfig(), loss_type="dapo"), ValueError, "not both"),
    ("expected_update config dict", lambda: rlhf.expected_update(
        MDP, POLICY, config={"loss_type": "dapo"}), TypeError, "config must be"),
    ("expected_update samples 0", lambda: rlhf.expected_update(MDP, POLICY, samples=0),
     ValueError, "samples must be an integer >= 1"),
    ("expected_update max_groups 1.5", lambda: rlhf.expected_update(
        MDP, POLICY, max_groups=1.5), ValueError, "max_groups must be an integer"),
    ("expected_update max_steps cuts", lambda: rlhf.expected_update(MDP, POLICY, max_steps=1),
     ValueError, "max_steps=1 cuts the responses"),
    ("expected_update stochastic MDP", lambda: rlhf.expected_update(
        FROZEN, np.full((16, 4), 0.25), max_steps=100), ValueError, "deterministic"),
    ("expected_update beta without ref", lambda: rlhf.expected_update(MDP, POLICY, beta=1.0),
     ValueError, "needs a ref_policy"),
    ("expected_fixed_point alpha 0", lambda: rlhf.expected_fixed_point(
        MDP, POLICY, ref_policy=POLICY, beta=1.0, alpha=0.0), ValueError, "alpha must be"),
    ("expected_fixed_point iterations 0", lambda: rlhf.expected_fixed_point(
        MDP, POLICY, ref_policy=POLICY, beta=1.0, iterations=0), ValueError,
     "iterations must be an integer >= 1"),
    ("GRPOConfig group_size", config(group_size=np.int64(1)), ValueError, "group_size"),
]


test_bad_grpo_option_is_a_clear_error = clear_error_test(ROWS)


def test_a_config_holds_checked_values_and_resolves_its_defaults():
    c = GRPOConfig(advantage="rloo", epsilon=np.float64(0.1))
    assert c.scale_rewards == "none" and c.epsilon_high == 0.1
    assert GRPOConfig().scale_rewards == "group"
    with pytest.raises(AttributeError):
        c.epsilon = 0.3  # frozen
