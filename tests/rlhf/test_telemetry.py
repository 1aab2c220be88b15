"""The training telemetry of the RLHF learners (``history=True``): chunked runs give the
numbers of one call, the exact metrics are the library's exact functions, and TRL's
sampled metrics are those of the learner's own batches."""

import numpy as np
import pytest

from tabular import actor_critic, ppo, reinforce, schedules, trpo
from tabular._numba.rng import seed_states
from tabular.envs import load_scenario
from tabular.pg.arguments import policy_gradient_args
from tabular.pg.batches import RunState, batch_buffers, collect_batch
from tabular.pg.telemetry import EXACT, SAMPLED, sample_batch
from tabular.rlhf import (
    TrainingHistory,
    distill,
    dpo,
    grpo,
    iterated_dpo,
    kl_objective,
    kl_optimum,
    kto,
    sequence_kl,
)
from tabular.rlhf.group import sample_group
from tabular.rlhf.pipeline import train_pipeline

BETA = 0.5

#: Sums of at most a few hundred float64 terms of magnitude below 10, computed in
#: another order (NumPy against a kernel): their rounding differs by far less than this.
ROUNDING = 1e-12


@pytest.fixture(scope="module")
def ex():
    return train_pipeline(load_scenario())


def comparisons(ex):
    sc = ex.scenario
    return [(count, sc.prompt, w, lo) for count, w, lo in sc.preferences]


def feedback(ex):
    sc = ex.scenario
    return [(sc.prompt, y, bool(g > 0)) for y, g in zip(sc.replies, sc.gold, strict=True)]


#: (name, call(ex, **telemetry), iterations): every RLHF learner, short.
LEARNERS = [
    ("reinforce", lambda ex, **kw: reinforce(ex.mdp, ex.reference, ref_policy=ex.reference,
                                             beta=BETA, episodes=40, runs=2, **kw), 40),
    ("reinforce_schedule", lambda ex, **kw: reinforce(
        ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA, episodes=30, baseline=True,
        alpha=schedules.inverse(0.5, power=0.7), **kw), 30),
    ("actor_critic", lambda ex, **kw: actor_critic(ex.mdp, ex.reference, ref_policy=ex.reference,
                                                   beta=BETA, episodes=30, lam=0.5, **kw), 30),
    ("ppo", lambda ex, **kw: ppo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                                 iterations=9, minibatches=2, runs=2, **kw), 9),
    ("ppo_adaptive_kl", lambda ex, **kw: ppo(
        ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA, iterations=9,
        objective="adaptive_kl", alpha=schedules.linear(0.5, 0.1, 6), runs=2, **kw), 9),
    ("trpo", lambda ex, **kw: trpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                                   iterations=9, max_kl=schedules.exponential(0.05, 0.8), **kw),
     9),
    ("grpo", lambda ex, **kw: grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                                   iterations=9, runs=2, **kw), 9),
    ("remax", lambda ex, **kw: grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                                    iterations=9, advantage="remax", **kw), 9),
    ("distill", lambda ex, **kw: distill(ex.mdp, ex.reference, ex.optimum(BETA),
                                         learner="ppo", iterations=9, **kw), 9),
    ("dpo", lambda ex, **kw: dpo(ex.env, ex.reference, comparisons(ex), beta=BETA, steps=25,
                                 **kw), 25),
    ("ipo", lambda ex, **kw: dpo(ex.env, ex.reference, comparisons(ex), beta=BETA, steps=25,
                                 loss="ipo", alpha=0.1, **kw), 25),
    ("iterated_dpo", lambda ex, **kw: iterated_dpo(ex.mdp, ex.reference, beta=BETA, rounds=5,
                                                   pairs=8, steps=5, runs=2, **kw), 5),
    ("kto", lambda ex, **kw: kto(ex.env, ex.reference, feedback(ex), beta=BETA, steps=25,
                                 **kw), 25),
]
IDS = [name for name, _, _ in LEARNERS]


def arrays(result):
    """Every numeric array of a result but its history."""
    return {k: v for k, v in vars(result).items()
            if isinstance(v, np.ndarray) and k != "row_of_state"}


@pytest.mark.parametrize("name, call, iterations", LEARNERS, ids=IDS)
def test_a_history_leaves_the_numbers_as_they_are(ex, name, call, iterations):
    """Run in chunks of 1, 4 and 7 iterations (7 dividing none of the lengths), each
    learner gives the numbers of its one call bit for bit: the chunks continue the
    stream, the schedules' counts and PPO's adaptive penalty where they stopped."""
    plain = call(ex)
    assert plain.history is None
    for every in (e for e in (1, 4, 7) if e <= iterations):
        res = call(ex, history=True, eval_every=every)
        for k, v in arrays(plain).items():
            np.testing.assert_array_equal(getattr(res, k), v, err_msg=f"{name} {k} {every}")
        h = res.history
        expected = [*range(0, iterations, every), iterations]
        np.testing.assert_array_equal(h.iteration, expected)
        assert set(EXACT) <= set(h.names)


@pytest.mark.parametrize("name, call, iterations", LEARNERS, ids=IDS)
def test_the_exact_metrics_are_the_exact_functions(ex, name, call, iterations):
    """The last evaluation is the trained policy: its ``exact/objective`` is
    ``kl_objective`` of the result's policy (summed state by state, the history sums
    over responses: the same number up to rounding), ``exact/gap`` is ``J*`` minus it,
    and ``exact/kl_to_ref`` is ``sequence_kl``; ``J* - J(pi) = beta KL(pi || pi*)`` holds
    at every evaluation (the gap and the distance to the optimum, two ways)."""
    res = call(ex, history=True, eval_every=3)
    h = res.history
    mdp, ref, beta = ex.mdp, ex.reference, BETA
    policy = res.policy if res.runs is None else res.run(1).policy
    last = h if h.runs is None else h.run(1)
    if name != "distill":
        j = kl_objective(mdp, policy, ref, beta)
        assert last["exact/objective"][-1] == pytest.approx(j, abs=ROUNDING)
        assert last["exact/gap"][-1] == pytest.approx(kl_optimum(mdp, ref, beta).value - j,
                                                      abs=ROUNDING)
        assert last["exact/kl_to_ref"][-1] == pytest.approx(sequence_kl(mdp, policy, ref),
                                                            abs=ROUNDING)
        np.testing.assert_allclose(h["exact/gap"], beta * h["exact/kl_to_optimum"],
                                   rtol=0, atol=ROUNDING)
    else:  # J* = 0: the gap is KL(student || teacher), the objective its negative
        teacher = ex.optimum(BETA)
        assert last["exact/gap"][-1] == pytest.approx(sequence_kl(ex.mdp, policy, teacher),
                                                      abs=ROUNDING)
        np.testing.assert_allclose(h["exact/gap"], h["exact/kl_to_optimum"], atol=ROUNDING)
    assert (np.diff(h.iteration) > 0).all()


def rollout(ex, M):
    """The rollout PPO reads, as its argument checks build it."""
    return policy_gradient_args(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                                reward_floor=None, gamma=1.0, episodes=M, max_steps=None, runs=None,
                                seed=0).rollout


@pytest.mark.parametrize("learner, per_iteration, draw", [
    (lambda ex, **kw: ppo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                          iterations=6, **kw), 8, sample_batch),
    (lambda ex, **kw: trpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                           iterations=6, **kw), 8, sample_batch),
    (lambda ex, **kw: reinforce(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                                episodes=6, **kw), 1, sample_batch),
    (lambda ex, **kw: grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA,
                           iterations=6, group_size=4, **kw), 4, sample_group),
], ids=["ppo", "trpo", "reinforce", "grpo"])
def test_trl_metrics_are_those_of_the_learners_own_batches(ex, learner, per_iteration, draw):
    """``objective/scores`` at iteration t is the mean return of the episodes the learner
    drew at t (its ``episode_returns``); at t = 0 the batch redrawn from the seed's
    stream is the learner's, and ``objective/kl`` and ``objective/entropy`` match a
    NumPy recomputation from its tokens: ``mean_i sum_t log pi - log pi_ref`` and
    ``mean_i -sum_t log pi``; the KL-shaped rewards follow TRL's definitions."""
    seen = []
    res = learner(ex, history=True, eval_every=1,
                  callback=lambda it, policy, m: seen.append(policy) or {"mine": it * 2.0})
    h, M = res.history, per_iteration
    T = len(h.iteration) - 1
    np.testing.assert_allclose(h["objective/scores"][:T],
                               res.episode_returns.reshape(T, M).mean(axis=1),
                               rtol=0, atol=ROUNDING)
    np.testing.assert_array_equal(h["mine"], 2.0 * h.iteration)
    np.testing.assert_allclose(h["objective/non_score_reward"], -BETA * h["objective/kl"])
    np.testing.assert_allclose(h["objective/rlhf_reward"],
                               h["objective/scores"] - BETA * h["objective/kl"])
    paths, _, lengths, returns = draw(ex.mdp.arrays, rollout(ex, M), ex.reference.logits,
                                      seed_states(0, 1)[0], M)
    np.testing.assert_array_equal(returns, res.episode_returns[:M])
    log_pi, log_ref = seen[0].log_probs(), ex.reference.log_probs()
    kl, entropy = [], []
    for i in range(M):
        s, a = paths[i, 0, :lengths[i]], paths[i, 1, :lengths[i]]
        kl.append(np.sum(log_pi[s, a] - log_ref[s, a]))
        entropy.append(-np.sum(log_pi[s, a]))
    assert h["objective/kl"][0] == pytest.approx(np.mean(kl), abs=ROUNDING)
    assert h["objective/entropy"][0] == pytest.approx(np.mean(entropy), abs=ROUNDING)


def test_ppo_clip_fraction_counts_the_clipped_steps(ex):
    """One epoch never clips (the ratio is 1 at its only step). With two full-batch
    epochs, the first iteration's fraction is half that of its second epoch, recomputed
    in NumPy from the batch (its advantages and ``log pi_old``) and the policy after the
    first epoch (a one-epoch PPO's): TRL's ``A rho > A clip(rho, 1 - eps, 1 + eps)``."""
    kw = dict(ref_policy=ex.reference, beta=BETA, clip=0.05, alpha=2.0)
    one = ppo(ex.mdp, ex.reference, iterations=5, epochs=1, history=True, eval_every=1, **kw)
    assert (one.history["policy/clipfrac_avg"] == 0.0).all()
    two = ppo(ex.mdp, ex.reference, iterations=1, epochs=2, history=True, eval_every=1, **kw)
    after_first = ppo(ex.mdp, ex.reference, iterations=1, epochs=1, **kw).policy
    ro = rollout(ex, 8)
    state = RunState(ex.reference.logits.copy(), np.zeros(ex.mdp.n_states), seed_states(0, 1)[0])
    batch = batch_buffers(8, ro.max_steps, ex.reference.logits.shape[0], ex.mdp.n_actions)
    N, _ = collect_batch(ex.mdp.arrays, ro, state, batch, 1.0, 0.95)
    s, a, adv = batch.states[:N], batch.actions[:N], batch.advantages[:N]
    ratio = np.exp(after_first.log_probs()[s, a] - batch.old_log_pi[:N])
    clipped = adv * ratio > adv * np.clip(ratio, 0.95, 1.05)
    assert 0 < clipped.mean() < 1
    assert two.history["policy/clipfrac_avg"][0] == pytest.approx(clipped.mean() / 2, abs=1e-12)
    adaptive = ppo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA, iterations=2,
                   objective="adaptive_kl", history=True).history
    assert "policy/clipfrac_avg" not in adaptive.names and set(SAMPLED) <= set(adaptive.names)


def test_dpo_and_kto_log_trl_metrics_of_their_own(ex):
    """DPO's ``loss`` at step t is the loss its kernel records before step t, its
    margins are chosen minus rejected; KTO's ``kl`` is the reference point ``z0`` the
    step drew."""
    res = dpo(ex.env, ex.reference, comparisons(ex), beta=BETA, steps=30, history=True,
              eval_every=1)
    h = res.history
    np.testing.assert_allclose(h["loss"][:-1], res.loss, rtol=ROUNDING)
    np.testing.assert_allclose(h["rewards/margins"], h["rewards/chosen"] - h["rewards/rejected"],
                               atol=ROUNDING)
    assert ((0 <= h["rewards/accuracies"]) & (h["rewards/accuracies"] <= 1)).all()
    assert h["loss"][-1] < h["loss"][0]
    k = kto(ex.env, ex.reference, feedback(ex), beta=BETA, steps=30, history=True, eval_every=1)
    np.testing.assert_allclose(k.history["kl"][:-1], k.reference_point, rtol=0, atol=ROUNDING)


def test_the_callback_sees_a_read_only_copy_and_its_metrics(ex):
    calls = []

    def callback(it, policy, metrics):
        calls.append((it, metrics["exact/gap"]))
        with pytest.raises(ValueError, match="read-only"):
            policy.logits[0, 0] = 1.0
        return None

    res = ppo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA, iterations=5,
              history=True, eval_every=2, callback=callback)
    assert [it for it, _ in calls] == [0, 2, 4, 5]
    np.testing.assert_array_equal([g for _, g in calls], res.history["exact/gap"])


def test_a_history_has_a_short_repr_and_a_run_axis(ex):
    res = grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA, iterations=4, runs=3,
               history=True, eval_every=2)
    h = res.history
    assert isinstance(h, TrainingHistory) and h.runs == 3
    assert h["exact/gap"].shape == (3, 3)
    text = repr(h)
    assert "float64[3, 3]" in text and "array(" not in text and len(text) < 600, text
    one = res.run(1)
    np.testing.assert_array_equal(one.history["exact/gap"], h["exact/gap"][1])
    np.testing.assert_array_equal(one.history.iteration, h.iteration)
    with pytest.raises(KeyError, match="no metric 'nope'"):
        h["nope"]


@pytest.mark.parametrize("kwargs, match", [
    ({"history": "yes"}, "history must be True or False"),
    ({"eval_every": 2}, "ppo: eval_every and callback need history=True"),
    ({"callback": print}, "need history=True"),
    ({"history": True, "eval_every": 0}, "ppo: eval_every must be an integer >= 1"),
    ({"history": True, "eval_every": 11}, "ppo: eval_every must be at most 10"),
    ({"history": True, "eval_every": 2.5}, "eval_every must be an integer"),
    ({"history": True, "callback": 3}, "callback must be callable"),
    ({"history": True, "callback": lambda *a: 1.0}, "callback must return None or a mapping"),
    ({"history": True, "callback": lambda *a: {"exact/gap": 1.0}}, "has the name of a recorded"),
    ({"history": True, "callback": lambda *a: {"x": np.nan}}, "'x' is NaN"),
    ({"history": True, "callback": lambda *a: {"x": "a"}}, "'x' must be a number"),
    ({"history": True, "callback": lambda it, *a: {f"x{it}": 1.0}}, "not the ones of its first"),
])
def test_bad_telemetry_arguments_are_named(ex, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ppo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=BETA, iterations=10, **kwargs)


def test_a_history_needs_the_kl_regularised_problem(ex):
    with pytest.raises(ValueError, match="reinforce: history=True .* needs ref_policy and beta"):
        reinforce(ex.mdp, ex.reference, episodes=5, history=True)
