"""Each preference loss's own population optimum on a token MDP.

The population: a prompt ``x`` drawn from the start distribution, two responses drawn
independently from ``data_policy`` (default: the reference), the pair compared by a
:class:`~tabular.rlhf.PreferenceModel` (``y`` beats ``y'`` with probability
``P(y > y' | x)``; a pair of identical responses is no comparison). Its expected loss
``L(pi)`` reads ``pi`` only through the compared responses' probabilities, so over
policies with a row of logits per prefix (which reach every response distribution) the
optimum is a response distribution. It is found on the responses' own softmax logits
``z`` (``pi(.|x) = softmax(z_x)``), where the gradient is
``dL/dz_y = g_y - pi(y|x) sum_y' g_y'``, ``g_y = dL / d log pi(y|x)``: by
Newton's method on the optimality conditions with a central-difference Hessian of that
exact gradient, each step projected onto the distributions and backtracked until ``L``
falls, until ``max |dL/dz| <= tol``.

Known closed forms, which the tests check the solver against:

- ``sigmoid`` (DPO) on a Bradley-Terry preference with full data: ``pi*`` of its reward
  (Rafailov et al., 2023, proposition 1 with every pair compared);
- ``ipo`` with data ``mu``: ``pi(y) ∝ ref(y) exp(P(y > mu) / beta)`` (Azar et al., 2024,
  proposition 4: the least-squares point of the regression of the gaps);
- ``sigmoid`` with ``label_smoothing = eps`` (cDPO): DPO's optimum for the smoothed
  preference ``(1 - eps) P + eps (1 - P)``; ``robust`` (rDPO): for the de-noised
  ``(P - eps) / (1 - 2 eps)``, finite only where that lies in ``(0, 1)``;
- ``sft``: ``pi(y) ∝ data(y) P(y > data)`` (the chosen responses' frequencies).

The losses that read only the gap of log-ratios (``sigmoid``, ``robust``, ``ipo``,
``exo_pair``, ``discopop``) fix the optimum's ratios, and full data fixes its total; on
the others (``nca_pair``, ``bco_pair``, ``sppo_hard``, ``sft``, ``sigmoid_norm``,
``apo_down``) the normalisation binds, and the multiplier carries it. ``hinge``'s
population loss is piecewise linear, so its optimum is a set and is not computed.
``aot`` and ``aot_unpaired`` pair a batch's comparisons by rank, so they have no
per-comparison population loss and are refused. ``apo_zero`` is bounded and its
infimum can lie at the simplex's boundary (a response's probability driven to 0);
``discopop`` and ``exo_pair`` are not convex in the gap, so the point found from the
reference is a stationary point, the one a descent from the reference reaches when that
is unique. When no stationary point is found the solver
raises rather than return an unconverged answer.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular.checks import check_positive, check_positive_int
from tabular.model.policy import as_softmax_policy
from tabular.rlhf.losses import AOT, loss_spec
from tabular.rlhf.preference import chained_comparison
from tabular.rlhf.preference_model import PreferenceModel
from tabular.rlhf.results import LossOptimum
from tabular.solve.tree import as_token_env, ending_probabilities
from tabular.types import PolicyLike, TokenEnv


class Population(NamedTuple):
    """The population's comparisons: response ``winners[k]`` beats ``losers[k]`` with
    probability mass ``weights[k]`` (``P(x) data(y) data(y') P(y > y')``)."""

    winners: np.ndarray
    losers: np.ndarray
    weights: np.ndarray


def population(preference: PreferenceModel, data: np.ndarray) -> Population:
    """The :class:`Population` of ``preference`` under the data distribution ``data``
    (``[N]``, ``data(y|x)``), the pairs of distinct responses with positive mass."""
    win, lose, mass = [], [], []
    for x, P in enumerate(preference.matrices):
        lo, hi = preference.bounds[x], preference.bounds[x + 1]
        d = data[lo:hi]
        w = preference.prompt_probs[x] * d[:, None] * d[None, :] * P
        np.fill_diagonal(w, 0.0)
        i, j = np.nonzero(w > 0.0)
        win.append(lo + i)
        lose.append(lo + j)
        mass.append(w[i, j])
    return Population(np.concatenate(win).astype(np.int64),
                      np.concatenate(lose).astype(np.int64), np.concatenate(mass))


@njit(cache=True)
def population_loss(log_pi, log_ref, lengths, pop, spec, grad):
    """``L = sum_k weights[k] loss(y_w, y_l)`` at the responses' log-probabilities
    ``log_pi`` (``[N]``, conditional on their prompts), returned, and ``dL / d log_pi``
    written into ``grad``: :func:`~tabular.rlhf.preference.chained_comparison`, the
    learner's own definition of each loss."""
    grad[:] = 0.0
    total = 0.0
    for k in range(pop.weights.shape[0]):
        i, j = pop.winners[k], pop.losers[k]
        term, g_w, g_l = chained_comparison(pop.weights[k], log_pi[i], log_ref[i], log_pi[j],
                                            log_ref[j], lengths[i], lengths[j], spec)
        total += term
        grad[i] -= g_w
        grad[j] -= g_l
    return total


def _kkt_newton(log_ref, lengths, pop, spec, bounds, tol, max_iter):
    """Minimise the population loss over the response distributions: Newton's direction
    from the optimality conditions in the log-ratios ``h`` (``log pi = log ref + h``) and
    one multiplier per prompt (``dL/dh_y = lambda_x pi(y|x)``, ``sum_y pi(y|x) = 1``), the
    Hessian by central differences (step ``1e-6``) of the exact gradient; each step is
    projected back onto the distributions (``h -= log sum ref e^h`` per prompt) and
    backtracked until the loss falls (Armijo), the steepest descent direction taken
    when Newton's is not a descent. It stops when a full step moves no log-ratio by more
    than ``1e-10`` (the gradient scales with the rare responses' data probability, so it
    alone says little about them) and the gradient on the softmax logits is at most
    ``tol``. Returns ``(h, steps, max_y |dL/dz_y|)``, the last the gradient on the
    responses' softmax logits, ``g_y - pi(y|x) sum_y' g_y'``."""
    n, X = log_ref.size, bounds.size - 1
    block = np.repeat(np.arange(X), np.diff(bounds))
    grad = np.empty(n)

    def project(h):
        z = log_ref + h
        top = np.maximum.reduceat(z, bounds[:-1])
        lse = top + np.log(np.add.reduceat(np.exp(z - top[block]), bounds[:-1]))
        return h - lse[block]

    def evaluate(h):
        f = population_loss(log_ref + h, log_ref, lengths, pop, spec, grad)
        return f, grad.copy()

    def tangent(g, pi):
        total = np.bincount(block, g, minlength=X)
        return g - pi * total[block]

    h = np.zeros(n)
    f, g = evaluate(h)
    pi = np.exp(log_ref)
    t = tangent(g, pi)
    it, moved = 0, np.inf
    while (np.abs(t).max() > tol or moved > 1e-10) and it < max_iter:
        lam = np.bincount(block, g, minlength=X)  # sum_y dL/dh_y = lambda on the simplex
        H = np.empty((n, n))
        for k in range(n):
            e = np.zeros(n)
            e[k] = 1e-6
            H[:, k] = (evaluate(h + e)[1] - evaluate(h - e)[1]) / 2e-6
        J = np.zeros((n + X, n + X))
        J[:n, :n] = 0.5 * (H + H.T) - np.diag(lam[block] * pi)
        J[np.arange(n), n + block] = -pi
        J[n + block, np.arange(n)] = pi
        F = np.concatenate([g - lam[block] * pi, np.zeros(X)])
        step = np.linalg.lstsq(J, -F, rcond=None)[0][:n]
        slope = t @ step  # dL along the step, on the simplex
        if not slope < 0.0:
            step, slope = -t / max(np.abs(t).max(), 1e-300), -(t @ t) / max(
                np.abs(t).max(), 1e-300)
        size = 1.0
        while size > 1e-12:
            h_new = project(h + size * step)
            f_new, g_new = evaluate(h_new)
            pi_new = np.exp(log_ref + h_new)
            t_new = tangent(g_new, pi_new)
            if f_new <= f + 1e-4 * size * slope or (
                    f_new <= f + 4 * np.finfo(float).eps * abs(f)
                    and np.abs(t_new).max() < np.abs(t).max()):
                break
            size *= 0.5
        else:
            break  # no step lowers the loss
        moved = np.abs(h_new - h).max() if size == 1.0 else np.inf
        h, f, g, pi, t = h_new, f_new, g_new, pi_new, t_new
        it += 1
    return h, it, float(np.abs(t).max())


def loss_optimum(mdp: TokenEnv, ref_policy: PolicyLike, preference: PreferenceModel, *,
                 beta: float, loss: object = "sigmoid", loss_weights: object = None,
                 label_smoothing: float = 0.0, f_divergence_type: str = "reverse_kl",
                 f_alpha_divergence_coef: float = 0.5, discopop_tau: float = 0.05,
                 average_log_prob: bool = False, simpo_gamma: float = 0.5,
                 cpo_alpha: float = 1.0, data_policy: PolicyLike | None = None,
                 tol: float = 1e-12, max_iter: int = 500) -> LossOptimum:
    """The response distribution where the population loss of :func:`~tabular.rlhf.dpo`
    (the same ``loss`` options) is stationary, found from the reference (see the
    module): comparisons of two responses of ``data_policy`` (default ``None``: the
    reference) to a prompt, labelled by ``preference``.

    ``mdp``: the token MDP of ``preference``; ``ref_policy`` and ``data_policy`` must
    give every compared response positive probability and nothing else; ``tol``: the
    largest ``|dL/dz|`` accepted (default ``1e-12``); ``max_iter`` Newton steps (default
    500). A ``RuntimeError`` when the steps stop lowering the loss above ``tol`` or run
    out (no finite stationary point: a loss whose infimum lies at the boundary, or
    ``robust`` with a preference closer to 0 or 1 than ``label_smoothing``); ``hinge``
    is refused (its optimum is a set). ``dpo``'s ``ld_alpha`` is not offered: it weighs
    a response's tokens by the other response's length, so its loss is not a function
    of the response distribution alone."""
    spec = loss_spec(loss, beta, loss_weights=loss_weights, label_smoothing=label_smoothing,
                     f_divergence_type=f_divergence_type,
                     f_alpha_divergence_coef=f_alpha_divergence_coef,
                     discopop_tau=discopop_tau, average_log_prob=average_log_prob,
                     simpo_gamma=simpo_gamma, cpo_alpha=cpo_alpha)
    if (spec.codes == 2).any():  # hinge
        raise ValueError("loss 'hinge' has a set of optima (its population loss is "
                         "piecewise linear): loss_optimum computes a point")
    if spec.codes.max() >= AOT:
        raise ValueError("losses 'aot' and 'aot_unpaired' pair a batch's comparisons by "
                         "rank: they have no per-comparison population loss to optimise")
    tol = check_positive("tol", tol)
    max_iter = check_positive_int("max_iter", max_iter, high=10**6)
    env = as_token_env(mdp, "mdp")
    model = env.to_mdp()

    def conditional(policy, name):
        p = preference.conditional(ending_probabilities(
            model, as_softmax_policy(model, policy, name)), name)
        if not (p > 0.0).all():
            raise ValueError(f"{name} gives response {preference.texts[int(np.argmin(p))]!r} "
                             "probability 0: every compared response must be possible")
        return p

    log_ref = np.log(conditional(ref_policy, "ref_policy"))
    data = np.exp(log_ref) if data_policy is None else conditional(data_policy, "data_policy")
    h, it, residual = _kkt_newton(log_ref, preference.lengths, population(preference, data),
                                  spec, preference.bounds, tol, max_iter)
    if not residual <= tol:
        raise RuntimeError(f"loss_optimum found no stationary point of loss {loss!r}: "
                           f"|dL/dz| = {residual:.3g} after {it} Newton steps (the loss may "
                           "have its infimum at the boundary of the simplex)")
    z = log_ref + h
    grad = np.empty_like(h)
    f = population_loss(log_ref + h, log_ref, preference.lengths,
                        population(preference, data), spec, grad)
    probs = np.exp(z)
    endings = np.zeros((model.n_states, model.n_actions))
    endings[preference.states, preference.actions] = (
        probs * preference.prompt_probs[preference.prompt])
    return LossOptimum(endings, probs, float(f), float(residual), it)
