"""n-step bootstrapping for control (Sutton & Barto, chapter 7).

- :func:`n_step_sarsa` -- on-policy n-step SARSA (eqs. 7.4 and 7.5, section 7.2);
- :func:`n_step_expected_sarsa` -- the same with the last step an expectation under
  the epsilon-greedy policy (eqs. 7.7 and 7.8, section 7.2);
- :func:`off_policy_n_step_sarsa` -- n-step SARSA weighted by the importance-sampling
  ratio of a target policy (eqs. 7.10 and 7.11, section 7.3);
- :func:`tree_backup` -- the n-step tree-backup algorithm (eq. 7.16, section 7.5);
- :func:`q_sigma` -- n-step Q(sigma), which mixes sampling and expectation at every
  step (section 7.6).

One episode loop serves them all (the boxes of sections 7.2-7.6): the behaviour acts
epsilon-greedily on ``Q``, states, actions and rewards of the last ``n + 1`` steps
live in ring buffers (as in n-step TD, :func:`tabular.td0`), and once ``A_{tau+n}`` is
drawn the estimate of ``(S_tau, A_tau)`` moves towards the n-step return
``G_{tau:tau+n}``, computed backwards from ``G_{h:h} = Q(S_h, A_h)`` (``V-bar(S_h)``
for expected SARSA) with the rules of :mod:`tabular.rules.returns` and
:mod:`tabular.rules.nstep`. The action ``A_{t+1}``
is drawn after every step, also at the end of an episode where it is not used, as
:func:`tabular.sarsa` draws it, so that ``n_step=1`` is SARSA draw for draw.

A target policy is epsilon-greedy on the current ``Q`` (``target_epsilon=0``: greedy,
ties split uniformly); ``target_epsilon=None`` makes it the behaviour policy itself
(on-policy: every importance-sampling ratio is 1). The behaviour's probability
``b(A_t|S_t)`` is the one it drew ``A_t`` with; ``pi`` is read when the update is made,
a taken action whose sampled return is ``-inf`` counting as ``-inf``
(:func:`~tabular.rules.nstep.target_probs`), so that a greedy target learns ``-inf``
only where the trap cannot be avoided.
Conventions of :mod:`tabular.learn.td`: step sizes follow a schedule over the visits of each
pair, exploration a schedule over episodes; an episode cut after ``max_steps`` steps
is not a termination (its last returns bootstrap from ``Q(S_T, A_T)``); ``-inf``
rewards are exact (see :mod:`tabular.learn.divergence`). The kernel is a runs driver
(:mod:`tabular._numba.runs`) over one run function.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import borrowed, local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_positive_int, check_unit_interval
from tabular.learn.arguments import episode_args, initial_values
from tabular.learn.episodes import ring_mask, ring_return, ring_step
from tabular.learn.outputs import control_outputs, control_result
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.results import ControlResult
from tabular.model.sampling import sample_start
from tabular.rules.nstep import (
    control_variate_value,
    importance_ratio,
    importance_sampled_update,
    q_sigma_return,
    target_probs,
    tree_backup_return,
    tree_value,
)
from tabular.rules.returns import discounted_return
from tabular.rules.values import (
    epsilon_greedy_action,
    epsilon_greedy_probs,
    expectation,
    update_toward,
)
from tabular.schedules import as_schedule, read_schedule, schedule_value
from tabular.types import MDPLike, StepSize

#: The n-step control methods' codes (``NStepParams.method``).
SARSA, EXPECTED_SARSA, OFF_POLICY_SARSA, TREE_BACKUP, Q_SIGMA = 0, 1, 2, 3, 4


class NStepParams(NamedTuple):
    """Hyper-parameters of the n-step control methods (a kernel argument).

    ``method``: which of the five (:data:`SARSA` .. :data:`Q_SIGMA`); ``gamma``:
    discount; ``alpha``: step-size schedule ``float64[4]`` over the visits of each
    pair; ``epsilon``: the behaviour's exploration schedule over episodes;
    ``target_epsilon``: the target policy's, over episodes (the behaviour's own when
    on-policy); ``off_policy``: whether the target is a policy of its own (else it is
    the behaviour, and every ratio ``rho`` is 1); ``sigma``: the degree of sampling of
    Q(sigma) (1 for the SARSA methods, 0 for tree backup); ``n_step``: the n of the
    return; ``episodes``: episodes per run; ``max_steps``: step limit per episode.
    """

    method: int
    gamma: float
    alpha: np.ndarray
    epsilon: np.ndarray
    target_epsilon: np.ndarray
    off_policy: bool
    sigma: float
    n_step: int
    episodes: int
    max_steps: int


@njit(cache=True, inline="always")
def _behave(q_row, eps, weigh, probs, rng):
    """An epsilon-greedy action and, when ratios are weighed, the probability ``b`` it
    was drawn with (1 otherwise: not read)."""
    a = epsilon_greedy_action(q_row, eps, rng)
    if not weigh:
        return a, 1.0
    epsilon_greedy_probs(q_row, eps, probs)
    return a, probs[a]


@njit(cache=True, inline="always")
def _n_step_run(model, params, rng, out, run):
    """Run ``run`` of n-step SARSA, expected SARSA, off-policy SARSA, tree backup or
    Q(sigma) (``params.method``; the boxes of sections 7.2-7.6). The method is read at
    run time: the SARSA return has a loop of its own with no branch on the method; the
    other returns read pi at every step, which outweighs the branch."""
    Q, returns, lengths = borrowed(out.Q[run]), out.returns[run], out.lengths[run]
    method, gamma, n_step, sigma = params.method, params.gamma, params.n_step, params.sigma
    max_steps = params.max_steps
    alpha, epsilon = read_schedule(params.alpha), read_schedule(params.epsilon)
    target_epsilon = read_schedule(params.target_epsilon)
    weigh = params.off_policy and (method == OFF_POLICY_SARSA or method == Q_SIGMA)
    reads_target = weigh or method == TREE_BACKUP or method == Q_SIGMA
    visits = np.zeros(Q.shape, dtype=np.int64)
    probs = np.zeros(Q.shape[1])
    scratch = np.zeros(Q.shape[1])
    mask = ring_mask(n_step)  # ring buffers of the last n + 1 steps
    states = np.zeros(mask + 1, dtype=np.int64)
    actions = np.zeros(mask + 1, dtype=np.int64)
    rewards = np.zeros(mask + 1)
    behaviour = np.ones(mask + 1)  # b(A_t|S_t), when ratios are weighed
    for episode in range(params.episodes):
        eps = schedule_value(epsilon, episode + 1)
        target_eps = schedule_value(target_epsilon, episode + 1)
        states[0] = sample_start(model, rng)
        actions[0], behaviour[0] = _behave(Q[states[0]], eps, weigh, probs, rng)
        T = max_steps + 1  # the step at which the episode ends, once known
        terminated = False
        total = 0.0
        t = 0
        while True:
            if t < T:
                s_next, r, T, terminated = ring_step(model, rng, states[t & mask],
                                                     actions[t & mask], t, T, terminated,
                                                     states, rewards, mask, max_steps)
                total += r
                i = (t + 1) & mask
                actions[i], behaviour[i] = _behave(Q[s_next], eps, weigh, probs, rng)
            tau = t - n_step + 1  # the time whose estimate is updated
            if tau >= 0:
                end = min(tau + n_step, T)
                if end == T and terminated:
                    G = rewards[end & mask]  # G_{T-1:T} = R_T: no value after the end
                    end -= 1
                elif method == EXPECTED_SARSA:  # V-bar(S_h) of the epsilon-greedy pi (eq. 7.8)
                    epsilon_greedy_probs(Q[states[end & mask]], target_eps, probs)
                    G = expectation(probs, Q[states[end & mask]])
                else:
                    G = Q[states[end & mask], actions[end & mask]]
                rho = 1.0  # rho_{tau+1:h} (eq. 7.10), over the actions G depends on
                if reads_target:  # G_{k-1:h} from G_{k:h} and pi(.|S_k), k = h .. tau + 1
                    for k in range(end, tau, -1):
                        j = k & mask
                        s_k, a_k = states[j], actions[j]
                        target_probs(Q[s_k], a_k, G, target_eps, scratch, probs)
                        if method == TREE_BACKUP:
                            G = tree_backup_return(rewards[j], gamma, probs, Q[s_k], a_k, G)
                        elif method == Q_SIGMA:
                            sampled = G
                            if weigh:
                                sampled = control_variate_value(
                                    importance_ratio(probs[a_k], behaviour[j]), G,
                                    Q[s_k, a_k], expectation(probs, Q[s_k]))
                            G = q_sigma_return(rewards[j], gamma, sigma, sampled,
                                               tree_value(probs, Q[s_k], a_k, G))
                        else:
                            rho *= importance_ratio(probs[a_k], behaviour[j])
                            G = discounted_return(rewards[j], gamma, G)
                else:  # the SARSA return (eq. 7.4): no policy to read
                    G = ring_return(rewards, mask, gamma, tau, end, G)
                s_tau, a_tau = states[tau & mask], actions[tau & mask]
                visits[s_tau, a_tau] += 1
                step = schedule_value(alpha, visits[s_tau, a_tau])
                if method == OFF_POLICY_SARSA:
                    Q[s_tau, a_tau] = importance_sampled_update(Q[s_tau, a_tau], G, step, rho)
                else:
                    Q[s_tau, a_tau] = update_toward(Q[s_tau, a_tau], G, step)
            if tau == T - 1:
                break
            t += 1
        returns[episode] = total
        lengths[episode] = T


@runs_kernel
def _n_step_runs(model, params, rng_states, out):
    """Every run of :func:`_n_step_run`."""
    for run in range(rng_states.shape[0]):
        _n_step_run(model, params, local_stream(rng_states[run]), out, run)


def _n_step_control(method, mdp, *, n_step, gamma, episodes, alpha, epsilon, initial_Q,
                    seed, runs, max_steps, target_epsilon=None, sigma=1.0) -> ControlResult:
    """Check the arguments, run ``method``'s runs and return their result."""
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    n_step = check_positive_int("n_step", n_step, high=ep.max_steps)  # longer: the MC return
    sigma = check_unit_interval("sigma", sigma)
    alpha = as_schedule("alpha", alpha)
    epsilon = as_schedule("epsilon", epsilon, low_inclusive=True)
    target = epsilon if target_epsilon is None else as_schedule(
        "target_epsilon", target_epsilon, low_inclusive=True)
    out = control_outputs(
        initial_values("initial_Q", initial_Q, (ep.mdp.n_states, ep.mdp.n_actions)),
        ep.n_runs, ep.episodes)
    params = NStepParams(method=method, gamma=ep.gamma, alpha=alpha.params,
                         epsilon=epsilon.params, target_epsilon=target.params,
                         off_policy=target_epsilon is not None, sigma=sigma, n_step=n_step,
                         episodes=ep.episodes, max_steps=ep.max_steps)
    over_runs(_n_step_runs, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return control_result(out, runs, ep.mdp)


@shares_paragraphs
def n_step_sarsa(mdp: MDPLike, *, n_step: int = 4, gamma: float = 1.0, episodes: int = 500,
                 alpha: StepSize = 0.5, epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0,
                 seed: int | None = 0, runs: int | None = None, max_steps: int | None = None
                 ) -> ControlResult:
    """n-step SARSA, on-policy (the box of section 7.2): ``Q(S_t, A_t) <- Q(S_t, A_t) +
    alpha [G_{t:t+n} - Q(S_t, A_t)]`` (eq. 7.5) with ``G_{t:t+n} = R_{t+1} + ... +
    gamma^{n-1} R_{t+n} + gamma^n Q(S_{t+n}, A_{t+n})`` (eq. 7.4), acting
    epsilon-greedily on ``Q``. ``n_step=1`` is :func:`tabular.sarsa`, number for number.

    Parameters
    ----------
    {mdp n_step gamma episodes alpha epsilon_behaviour initial_Q seed runs max_steps_Q}

    {control_result}
    """
    return _n_step_control(SARSA, mdp, n_step=n_step, gamma=gamma, episodes=episodes,
                           alpha=alpha, epsilon=epsilon, initial_Q=initial_Q, seed=seed,
                           runs=runs, max_steps=max_steps)


@shares_paragraphs
def n_step_expected_sarsa(mdp: MDPLike, *, n_step: int = 4, gamma: float = 1.0,
                          episodes: int = 500, alpha: StepSize = 0.5, epsilon: StepSize = 0.1,
                          initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
                          runs: int | None = None, max_steps: int | None = None) -> ControlResult:
    """n-step expected SARSA (section 7.2): the return ends in the expectation
    ``gamma^n V-bar(S_{t+n})`` with ``V-bar(s) = sum_a pi(a|s) Q(s, a)`` (eqs. 7.7 and
    7.8), pi the epsilon-greedy behaviour policy on ``Q`` (on-policy).

    Parameters
    ----------
    {mdp n_step gamma episodes alpha epsilon_behaviour initial_Q seed runs max_steps_Q}

    {control_result}
    """
    return _n_step_control(EXPECTED_SARSA, mdp, n_step=n_step, gamma=gamma,
                           episodes=episodes, alpha=alpha, epsilon=epsilon,
                           initial_Q=initial_Q, seed=seed, runs=runs, max_steps=max_steps)


@shares_paragraphs
def off_policy_n_step_sarsa(mdp: MDPLike, *, n_step: int = 4, gamma: float = 1.0,
                            episodes: int = 500, alpha: StepSize = 0.5, epsilon: StepSize = 0.1,
                            target_epsilon: StepSize = 0.0, initial_Q: npt.ArrayLike = 0.0,
                            seed: int | None = 0, runs: int | None = None,
                            max_steps: int | None = None) -> ControlResult:
    """Off-policy n-step SARSA (the box of section 7.3): ``Q(S_t, A_t) <- Q(S_t, A_t) +
    alpha rho_{t+1:t+n} [G_{t:t+n} - Q(S_t, A_t)]`` (eq. 7.11), ``G`` the n-step SARSA
    return (eq. 7.4) and ``rho`` the product of ``pi(A_k|S_k) / b(A_k|S_k)`` over the
    actions it depends on (eq. 7.10). The behaviour b is epsilon-greedy on ``Q``; the
    target pi is greedy by default (it learns ``Q*``), or epsilon-greedy.

    Parameters
    ----------
    {mdp n_step gamma episodes alpha epsilon_behaviour}
    target_epsilon : the target policy pi, epsilon-greedy on ``Q`` with this exploration
        in [0, 1] (or a schedule over episodes); default 0.0: greedy, ties split
        uniformly; ``None``: the behaviour itself (then this is n-step SARSA).
    {initial_Q seed runs max_steps_Q}

    {control_result}
    """
    return _n_step_control(OFF_POLICY_SARSA, mdp, n_step=n_step, gamma=gamma,
                           episodes=episodes, alpha=alpha, epsilon=epsilon,
                           initial_Q=initial_Q, seed=seed, runs=runs, max_steps=max_steps,
                           target_epsilon=target_epsilon)


@shares_paragraphs
def tree_backup(mdp: MDPLike, *, n_step: int = 4, gamma: float = 1.0, episodes: int = 500,
                alpha: StepSize = 0.5, epsilon: StepSize = 0.1, target_epsilon: StepSize = 0.0,
                initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0, runs: int | None = None,
                max_steps: int | None = None) -> ControlResult:
    """n-step tree backup (the box of section 7.5): the return (eq. 7.16) follows the
    sampled action at each step with the weight ``pi(A_k|S_k)`` and values the other
    actions by ``Q``, so it needs no importance sampling. The behaviour is
    epsilon-greedy on ``Q``; the target pi is greedy by default (``n_step=1`` is then
    Q-learning's target, eq. 6.8), or epsilon-greedy.

    Parameters
    ----------
    {mdp n_step gamma episodes alpha epsilon_behaviour}
    target_epsilon : the target policy pi, epsilon-greedy on ``Q`` with this exploration
        in [0, 1] (or a schedule over episodes); default 0.0: greedy, ties split
        uniformly; ``None``: the behaviour's epsilon-greedy policy.
    {initial_Q seed runs max_steps_Q}

    {control_result}
    """
    return _n_step_control(TREE_BACKUP, mdp, n_step=n_step, gamma=gamma, episodes=episodes,
                           alpha=alpha, epsilon=epsilon, initial_Q=initial_Q, seed=seed,
                           runs=runs, max_steps=max_steps, target_epsilon=target_epsilon,
                           sigma=0.0)


@shares_paragraphs
def q_sigma(mdp: MDPLike, *, n_step: int = 4, sigma: float = 0.5, gamma: float = 1.0,
            episodes: int = 500, alpha: StepSize = 0.5, epsilon: StepSize = 0.1,
            target_epsilon: StepSize | None = None, initial_Q: npt.ArrayLike = 0.0,
            seed: int | None = 0, runs: int | None = None, max_steps: int | None = None
            ) -> ControlResult:
    """n-step Q(sigma) (the box of section 7.6): at every step the return mixes, in
    proportion ``sigma : 1 - sigma``, a sampled step and the expectation of tree
    backup (eq. 7.16). The behaviour is epsilon-greedy on ``Q``; the target pi is by
    default the behaviour itself (on-policy): the sampled step is then SARSA's, as in
    De Asis et al. (2018), so that ``sigma=1`` is :func:`n_step_sarsa` and ``sigma=0``
    is :func:`tree_backup` with ``target_epsilon=None``, number for number. Off-policy
    the sampled step is importance-sampled per decision with the control variate of
    eq. 7.17, ``rho_k (G_{k:h} - Q(S_k, A_k)) + V-bar(S_k)``.

    Parameters
    ----------
    {mdp n_step}
    sigma : the degree of sampling in [0, 1], the same at every step, default 0.5:
        1 is n-step SARSA, 0 is tree backup.
    {gamma episodes alpha epsilon_behaviour}
    target_epsilon : the target policy pi, epsilon-greedy on ``Q`` with this exploration
        in [0, 1] (or a schedule over episodes); default ``None``: the behaviour's
        epsilon-greedy policy (on-policy); a number learns off-policy (0: greedy,
        ``Q*``), importance-sampling the sampled steps.
    {initial_Q seed runs max_steps_Q}

    {control_result}
    """
    return _n_step_control(Q_SIGMA, mdp, n_step=n_step, gamma=gamma, episodes=episodes,
                           alpha=alpha, epsilon=epsilon, initial_Q=initial_Q, seed=seed,
                           runs=runs, max_steps=max_steps, target_epsilon=target_epsilon,
                           sigma=sigma)
