"""DPO's family of pairwise preference losses, as TRL's ``DPOConfig.loss_type`` names them.

Every loss reads one comparison through the log-ratios of its two responses,
``u_w = log pi(y_w|x) / ref(y_w|x)`` and ``u_l`` (summed over the tokens; divided by the
token count with ``average_log_prob``), turned into scores ``s = f'(u)`` by the
f-divergence of Wang et al. (2024, "Beyond reverse KL", table 1) -- ``u`` itself for the
reverse KL (DPO), ``-exp(-u)`` for the forward KL, ``log sigma(u)`` for Jensen-Shannon,
``exp((alpha - 1) u) / (alpha - 1)`` for the alpha-divergence -- and their gap
``delta = s_w - s_l``, with ``x = beta * delta``. The losses (``eps``: ``label_smoothing``):

- ``sigmoid``: ``-(1 - eps) log sigma(x) - eps log sigma(-x)`` (Rafailov et al., 2023;
  cDPO when ``eps > 0``);
- ``robust``: ``[-(1 - eps) log sigma(x) + eps log sigma(-x)] / (1 - 2 eps)`` (rDPO,
  Chowdhury et al., 2024);
- ``hinge``: ``max(0, 1 - x)`` (SLiC, Zhao et al., 2023);
- ``ipo``: ``(delta - 1 / (2 beta))^2`` (Azar et al., 2024, eq. 17);
- ``exo_pair``: ``KL((sigma(x), sigma(-x)) || (1 - eps, eps))`` (EXO, Ji et al., 2024);
- ``nca_pair``: ``-log sigma(b s_w) - log sigma(-b s_w) / 2 - log sigma(-b s_l) / 2``
  (Chen et al., 2024);
- ``bco_pair``: ``-log sigma(b s_w) - log sigma(-b s_l)`` (Jung et al., 2024; TRL's
  pairwise form, without BCO's running reward shift);
- ``sppo_hard``: ``(s_w - 1 / (2 beta))^2 + (s_l + 1 / (2 beta))^2`` (Wu et al., 2024);
- ``apo_zero``: ``1 - sigma(b u_w) + sigma(b u_l)`` (D'Oosterlinck et al., 2024);
- ``apo_down``: ``sigma(b u_w) + 1 - sigma(x)`` (D'Oosterlinck et al., 2024);
- ``discopop``: ``-log sigma(x) (1 - m) + exp(-x) m`` with ``m = sigma(x / tau)``
  (Chris Lu et al., 2024);
- ``sigmoid_norm``: ``-log sigma(beta (s_w / |y_w| - s_l / |y_l|))`` (TRL's; SimPO's
  length normalisation, with the reference kept);
- ``sft``: ``-log pi(y_w|x)``, the chosen response's negative log-likelihood.

Three more never read the reference (``a = log pi(y|x) / |y|``, the mean log-probability
per token):

- ``simpo``: ``-log sigma(beta (a_w - a_l) - gamma)`` (SimPO, Meng et al., 2024, eq. 6;
  ``simpo_gamma`` is ``gamma``, TRL's ``CPOConfig(loss_type="simpo")``);
- ``cpo``: ``-log sigma(beta (log pi(y_w) - log pi(y_l))) - cpo_alpha a_w`` (CPO, Xu et
  al., 2024, eq. 6: reference-free DPO plus the chosen response's NLL per token);
- ``orpo``: ``-a_w - beta log sigma(log odds(y_w) - log odds(y_l))`` with ``odds(y) =
  e^a / (1 - e^a)`` (ORPO, Hong et al., 2024, eq. 6-7; TRL's ``ORPOConfig.beta`` is the
  paper's ``lambda``).

(``b = beta``.) ``loss_weights`` sums several of them. Two more are batch losses: they
sort the batch's numbers and pair them by rank (Melnyk et al., 2024, "Distributional
preference alignment of LLMs via optimal transport"), DPO's loss (with ``eps``) on each
rank's difference:

- ``aot_unpaired``: the chosen log-ratios ``u_w`` against the rejected ``u_l``;
- ``aot``: the policy's gaps ``log pi(y_w) - log pi(y_l)`` against the reference's.

The batch is the data set (:func:`~tabular.rlhf.dpo` steps on all of it), its
comparisons weighted by their counts: the rank pairing is the coupling of the two
count-weighted quantile functions (:func:`rank_coupled_loss`), which is TRL's with unit
counts. A comparison's term depends on the other comparisons' ranks, so these two have
no per-comparison (population) form: :func:`comparison_loss` gives them 0 and
:func:`rank_coupled_loss` adds them over the batch. TRL's
``sft`` is the chosen responses' mean NLL per token over a batch; here it is ``-log
pi(y_w|x)`` per comparison, the same up to the batch's constant mean length.

Each loss is one small function of its scalar arguments returning the loss and its
derivatives; :func:`comparison_loss` weighs them by the comparison's count and
returns ``count * loss`` and the ascent directions ``-d(count * loss) / d(.)`` on
``s_w, s_l, u_w, u_l, log pi(y_w)``, which the kernels chain down to the logits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular.checks import check_flag, check_nonnegative, check_number, check_positive
from tabular.rlhf.reward_model import log_sigmoid, sigmoid

#: TRL's loss names, in the order of their codes.
LOSSES = ("sigmoid", "robust", "hinge", "ipo", "exo_pair", "nca_pair", "bco_pair",
          "sppo_hard", "apo_zero", "apo_down", "discopop", "sigmoid_norm", "sft", "simpo",
          "cpo", "orpo", "aot", "aot_unpaired")
#: The batch losses, which pair a batch's comparisons by rank (:func:`rank_coupled_loss`).
BATCH_LOSSES = ("aot", "aot_unpaired")
#: The losses that never read the reference (TRL's ``CPOTrainer`` and ``ORPOTrainer``).
REFERENCE_FREE = ("simpo", "cpo", "orpo")
#: TRL's f-divergence names, in the order of their codes.
F_DIVERGENCES = ("reverse_kl", "forward_kl", "js_divergence", "alpha_divergence")
(SIGMOID, ROBUST, HINGE, IPO, EXO_PAIR, NCA_PAIR, BCO_PAIR, SPPO_HARD, APO_ZERO, APO_DOWN,
 DISCOPOP, SIGMOID_NORM, SFT, SIMPO, CPO, ORPO, AOT, AOT_UNPAIRED) = range(len(LOSSES))
REVERSE_KL, FORWARD_KL, JS_DIVERGENCE, ALPHA_DIVERGENCE = range(len(F_DIVERGENCES))
class LossSpec(NamedTuple):
    """A preference loss as the kernels read it: the loss ``codes`` (int64 ``[k]``, into
    :data:`LOSSES`) and their ``weights`` (``[k]``), the KL coefficient ``beta``,
    ``label_smoothing``, the f-divergence (``f_divergence``, a code into
    :data:`F_DIVERGENCES`, and its ``f_alpha``), ``discopop_tau``, ``ld_alpha`` (the weight
    of the tokens beyond the shorter response of a pair; 1: off) and ``average`` (divide
    each log-ratio by its response's token count)."""

    codes: np.ndarray
    weights: np.ndarray
    beta: float
    label_smoothing: float
    f_divergence: int
    f_alpha: float
    discopop_tau: float
    ld_alpha: float
    average: bool
    simpo_gamma: float = 0.5
    cpo_alpha: float = 1.0


#: ``exo_pair``'s smoothing when ``label_smoothing`` is 0 (TRL's: its target
#: ``(1 - eps, eps)`` needs ``eps > 0``).
EXO_EPS = 1e-3


#: IPO's smallest beta: its target gap ``1 / (2 beta)`` (eq. 17) is a difference of log-
#: probabilities, and float64 holds probabilities down to ``exp(-708)`` (the smallest normal).
IPO_MIN_BETA = 1.0 / (2.0 * 708.0)


def _names(loss: object) -> tuple[str, ...]:
    """``loss`` (a name or a sequence of names) as a tuple of distinct known names."""
    names = (loss,) if isinstance(loss, str) else loss
    if not isinstance(names, list | tuple) or not names or not all(
            isinstance(n, str) and n in LOSSES for n in names):
        raise ValueError(f"loss must be one of {LOSSES} or a sequence of them, got {loss!r}")
    if len(set(names)) < len(names):
        raise ValueError(f"loss names a loss twice: {loss!r} (weigh it with loss_weights)")
    return tuple(names)


def _weights(loss_weights: object, names: tuple[str, ...]) -> np.ndarray:
    """``loss_weights`` checked against ``names``: one finite weight >= 0 per loss, not all
    zero; ``None``: 1 each."""
    if loss_weights is None:
        return np.ones(len(names))
    if not isinstance(loss_weights, list | tuple | np.ndarray) or len(loss_weights) != len(
            names):
        raise ValueError(f"loss_weights must give one weight per loss of {names}, got "
                         f"{loss_weights!r}")
    weights = np.array([check_nonnegative(f"loss_weights[{i}]", w)
                        for i, w in enumerate(loss_weights)])
    if not weights.any():
        raise ValueError("loss_weights must not all be 0")
    return weights


def loss_spec(loss: object, beta: float, *, loss_weights: object = None,
              label_smoothing: float = 0.0, f_divergence_type: str = "reverse_kl",
              f_alpha_divergence_coef: float = 0.5, discopop_tau: float = 0.05,
              ld_alpha: float | None = None, average_log_prob: bool = False,
              simpo_gamma: float = 0.5, cpo_alpha: float = 1.0) -> LossSpec:
    """The :class:`LossSpec` of :func:`~tabular.rlhf.dpo`'s options, each checked with an
    error naming it."""
    beta = check_positive("beta", beta)
    names = _names(loss)
    weights = _weights(loss_weights, names)
    eps = check_number("label_smoothing", label_smoothing)
    if not 0.0 <= eps < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5) (the share of flipped labels; "
                         f"robust divides by 1 - 2 label_smoothing), got {eps}")
    if f_divergence_type not in F_DIVERGENCES:
        raise ValueError(f"f_divergence_type must be one of {F_DIVERGENCES}, got "
                         f"{f_divergence_type!r}")
    f_alpha = check_number("f_alpha_divergence_coef", f_alpha_divergence_coef)
    if not 0.0 < f_alpha < 1.0:
        raise ValueError(f"f_alpha_divergence_coef must be in (0, 1) (Wang et al., 2024: the "
                         f"alpha-divergence between the reverse and the forward KL), got "
                         f"{f_alpha}")
    tau = check_positive("discopop_tau", discopop_tau)
    if ld_alpha is not None:
        ld_alpha = check_number("ld_alpha", ld_alpha)
        if not 0.0 <= ld_alpha <= 1.0:
            raise ValueError(f"ld_alpha must be in [0, 1] (the weight of the tokens beyond "
                             f"the shorter response) or None, got {ld_alpha}")
    average = check_flag("average_log_prob", average_log_prob)
    if average and "sigmoid_norm" in names:
        raise ValueError("loss 'sigmoid_norm' already divides by the token counts: leave "
                         "average_log_prob False")
    if "ipo" in names and beta < IPO_MIN_BETA:
        raise ValueError(f"beta must be at least {IPO_MIN_BETA:.3g} for loss='ipo': its target "
                         f"gap 1 / (2 beta) = {1 / (2 * beta):.3g} nats is beyond the log-"
                         "probabilities float64 can hold")
    gamma = check_nonnegative("simpo_gamma", simpo_gamma)
    cpo_alpha = check_nonnegative("cpo_alpha", cpo_alpha)
    return LossSpec(np.array([LOSSES.index(n) for n in names], dtype=np.int64), weights, beta,
                    eps, F_DIVERGENCES.index(f_divergence_type), f_alpha, tau,
                    1.0 if ld_alpha is None else ld_alpha, average, gamma, cpo_alpha)


# ------------------------------------------------------------------ the scores
@njit(cache=True)
def f_score(u, kind, alpha):
    """``(s, ds/du)``: the score ``f'(exp(u))`` of a log-ratio ``u`` under the f-divergence
    ``kind`` (Wang et al., 2024, table 1, as TRL computes it)."""
    if kind == REVERSE_KL:
        return u, 1.0
    if kind == FORWARD_KL:
        e = np.exp(-u)
        return -e, e
    if kind == JS_DIVERGENCE:
        return log_sigmoid(u), sigmoid(-u)
    e = np.exp((alpha - 1.0) * u)
    return e / (alpha - 1.0), e


# ------------------------------------------------------------------ the losses
@njit(cache=True)
def sigmoid_loss(x, eps):
    """DPO's ``-(1 - eps) log sigma(x) - eps log sigma(-x)`` (cDPO when ``eps > 0``) and
    its slope ``-d/dx`` (Rafailov et al., 2023, eq. 7; Mitchell, 2023)."""
    return (-(1.0 - eps) * log_sigmoid(x) - eps * log_sigmoid(-x),
            (1.0 - eps) * sigmoid(-x) - eps * sigmoid(x))


@njit(cache=True)
def robust_loss(x, eps):
    """rDPO's unbiased loss under label flips of rate ``eps`` (Chowdhury et al., 2024,
    eq. 6), and ``-d/dx``."""
    return ((-(1.0 - eps) * log_sigmoid(x) + eps * log_sigmoid(-x)) / (1.0 - 2.0 * eps),
            ((1.0 - eps) * sigmoid(-x) + eps * sigmoid(x)) / (1.0 - 2.0 * eps))


@njit(cache=True)
def hinge_loss(x):
    """SLiC's ``max(0, 1 - x)`` and ``-d/dx`` (0 at the kink)."""
    return max(0.0, 1.0 - x), 1.0 if x < 1.0 else 0.0


@njit(cache=True)
def exo_loss(x, eps):
    """EXO's reverse KL from the target ``(1 - eps, eps)`` to the model's
    ``(sigma(x), sigma(-x))`` (Ji et al., 2024, eq. 14 with two responses), and
    ``-d/dx = -sigma'(x) [log sigma(x)/(1 - eps) - log sigma(-x)/eps]``."""
    q, lq, lr = sigmoid(x), log_sigmoid(x), log_sigmoid(-x)
    a, b = lq - np.log1p(-eps), lr - np.log(eps)
    return q * a + sigmoid(-x) * b, -q * sigmoid(-x) * (a - b)


@njit(cache=True)
def discopop_loss(x, tau):
    """DiscoPOP's log-ratio modulated loss (Chris Lu et al., 2024, eq. 5): the logistic
    loss and the exponential loss ``exp(-x)`` mixed by ``m = sigma(x / tau)``, and
    ``-d/dx``."""
    m = sigmoid(x / tau)
    dm = m * sigmoid(-x / tau) / tau
    logistic, e = -log_sigmoid(x), np.exp(-x)
    return (logistic * (1.0 - m) + e * m,
            sigmoid(-x) * (1.0 - m) + e * m + (logistic - e) * dm)


@njit(cache=True)
def squared_loss(d, target):
    """``(d - target)^2`` and ``-d/dd``: IPO's regression of the gap (Azar et al., 2024,
    eq. 17) and SPPO's of each score (Wu et al., 2024, eq. 4.4)."""
    return (d - target) * (d - target), -2.0 * (d - target)


@njit(cache=True)
def reference_free_loss(code, c, log_pi, lengths, spec):
    """``count * loss`` of SimPO, CPO or ORPO on one comparison (``log_pi``: the two
    responses' log-probabilities, ``lengths`` their token counts) and the ascent
    directions ``-d(count * loss)/d log pi(y_w)``, ``/ d log pi(y_l)``."""
    beta = spec.beta
    lw, ll = log_pi
    nw, nl = lengths
    aw, al = lw / nw, ll / nl
    if code == SIMPO:
        ell, slope = sigmoid_loss(beta * (aw - al) - spec.simpo_gamma, 0.0)
        return c * ell, c * beta * slope / nw, -c * beta * slope / nl
    if code == CPO:
        ell, slope = sigmoid_loss(beta * (lw - ll), 0.0)
        return (c * (ell - spec.cpo_alpha * aw), c * (beta * slope + spec.cpo_alpha / nw),
                -c * beta * slope)
    # ORPO: log odds(y) = a - log(1 - e^a), d/da = 1 / (1 - e^a)
    ow, ol = -np.expm1(aw), -np.expm1(al)  # 1 - e^a
    ell, slope = sigmoid_loss((aw - np.log(ow)) - (al - np.log(ol)), 0.0)
    return (c * (-aw + beta * ell), c * (1.0 + beta * slope / ow) / nw,
            -c * beta * slope / ol / nl)


@njit(cache=True)
def comparison_loss(code, c, s, u, log_pi, lengths, spec):
    """``count * loss`` of one comparison under loss ``code``, and its ascent directions
    ``-d(count * loss)/d(.)`` on ``(s_w, s_l, u_w, u_l, log pi(y_w), log pi(y_l))``: ``c``
    the count, ``s = (s_w, s_l)`` the scores, ``u = (u_w, u_l)`` the log-ratios,
    ``log_pi`` the two log-probabilities, ``lengths`` the two token counts."""
    beta, eps = spec.beta, spec.label_smoothing
    s_w, s_l = s
    u_w, u_l = u
    x = beta * (s_w - s_l)
    cb = c * beta
    if code == SIGMOID or code == ROBUST or code == HINGE or code == EXO_PAIR or (
            code == DISCOPOP):
        if code == SIGMOID:
            ell, slope = sigmoid_loss(x, eps)
        elif code == ROBUST:
            ell, slope = robust_loss(x, eps)
        elif code == HINGE:
            ell, slope = hinge_loss(x)
        elif code == EXO_PAIR:
            ell, slope = exo_loss(x, eps if eps > 0.0 else EXO_EPS)
        else:
            ell, slope = discopop_loss(x, spec.discopop_tau)
        g = cb * slope
        return c * ell, g, -g, 0.0, 0.0, 0.0, 0.0
    if code == IPO:
        error = (s_w - s_l) - 1.0 / (2.0 * beta)
        g = -2.0 * c * error
        return c * error * error, g, -g, 0.0, 0.0, 0.0, 0.0
    if code == SIGMOID_NORM:
        ell, slope = sigmoid_loss(beta * (s_w / lengths[0] - s_l / lengths[1]), 0.0)
        return (c * ell, cb * slope / lengths[0], -cb * slope / lengths[1], 0.0, 0.0, 0.0,
                0.0)
    if code == NCA_PAIR or code == BCO_PAIR:
        half = 0.5 if code == NCA_PAIR else 0.0
        ell = (-log_sigmoid(beta * s_w) - half * log_sigmoid(-beta * s_w)
               - (1.0 - half) * log_sigmoid(-beta * s_l))
        return (c * ell, cb * (sigmoid(-beta * s_w) - half * sigmoid(beta * s_w)),
                -cb * (1.0 - half) * sigmoid(beta * s_l), 0.0, 0.0, 0.0, 0.0)
    if code == SPPO_HARD:
        lw, gw = squared_loss(s_w, 0.5 / beta)
        ll, gl = squared_loss(s_l, -0.5 / beta)
        return c * (lw + ll), c * gw, c * gl, 0.0, 0.0, 0.0, 0.0
    if code == APO_ZERO:
        pw, pl = sigmoid(beta * u_w), sigmoid(beta * u_l)
        return (c * (1.0 - pw + pl), 0.0, 0.0, cb * pw * (1.0 - pw),
                -cb * pl * (1.0 - pl), 0.0, 0.0)
    if code == APO_DOWN:
        pw, px = sigmoid(beta * u_w), sigmoid(x)
        g = cb * px * (1.0 - px)
        return c * (pw + 1.0 - px), g, -g, -cb * pw * (1.0 - pw), 0.0, 0.0, 0.0
    if code == SFT:
        return -c * log_pi[0], 0.0, 0.0, 0.0, 0.0, c, 0.0
    if code >= AOT:  # a batch loss: rank_coupled_loss adds it over the whole batch
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    t, g_w, g_l = reference_free_loss(code, c, log_pi, lengths, spec)
    return t, 0.0, 0.0, 0.0, 0.0, g_w, g_l


@njit(cache=True)
def rank_coupled_loss(a, b, mass, beta, eps, ga, gb):
    """AOT's loss (Melnyk et al., 2024, as TRL computes it, with DPO's loss): ``a`` and
    ``b`` (``[m]``) each sorted, their count-weighted quantile functions paired level by level, and
    ``sum_q dq loss(beta (Q_a(q) - Q_b(q)))`` over the merged steps of the two (``mass``
    ``[m]``: each comparison's share of the batch; unit counts: rank ``k`` of ``a`` with
    rank ``k`` of ``b``, TRL's). Returns the loss and writes the ascent directions
    ``-dL/da`` and ``-dL/db`` into ``ga`` and ``gb``. The sort is stable: at a tie of two
    values the gradient is the one of that order (the loss has a kink there)."""
    m = a.shape[0]
    oa, ob = np.argsort(a, kind="mergesort"), np.argsort(b, kind="mergesort")
    ga[:] = 0.0
    gb[:] = 0.0
    total = 0.0
    i, j = 0, 0
    left_a, left_b = mass[oa[0]], mass[ob[0]]
    while i < m and j < m:
        d = min(left_a, left_b)
        if d > 0.0:
            ell, slope = sigmoid_loss(beta * (a[oa[i]] - b[ob[j]]), eps)
            total += d * ell
            ga[oa[i]] += d * beta * slope
            gb[ob[j]] -= d * beta * slope
        left_a -= d
        left_b -= d
        if left_a <= 0.0:
            i += 1
            if i < m:
                left_a = mass[oa[i]]
        if left_b <= 0.0:
            j += 1
            if j < m:
                left_b = mass[ob[j]]
    return total
