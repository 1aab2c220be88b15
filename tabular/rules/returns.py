"""Multistep returns: one backward recursion (Sutton & Barto, chapters 3, 5, 7 and 12).

Every return of the library is ``G_t = x_t + d * G_{t+1}`` run backwards over an
episode (eq. 3.9), with ``x`` and ``d`` chosen by the caller:

- returns-to-go and Monte Carlo returns: ``x = rewards``, ``d = gamma``;
- n-step returns (eq. 7.1): the same over a window of ``n`` rewards, started from
  the bootstrap value ``V(S_{t+n})``;
- GAE (Schulman et al., 2016, eq. 16): ``x = TD errors``, ``d = gamma * lam``.

A step that ends the episode (``done``) passes no value back: ``G_t = x_t``.
Off-policy Monte Carlo weights a return by its importance-sampling ratio
(:func:`importance_weighted_return`, eq. 5.5).
"""

from __future__ import annotations

from numba import njit

from tabular.rules.values import discounted, td_error, td_target


@njit(cache=True)
def discounted_return(reward, gamma, later_return):
    """``G_t = R_{t+1} + gamma G_{t+1}`` (eq. 3.9), with ``0 * -inf = 0``."""
    return reward + discounted(gamma, later_return)


@njit(cache=True)
def importance_weighted_return(ratio, G):
    """``rho G``, the importance-sampled return of ordinary importance sampling
    (eq. 5.5); an episode the target policy would never produce (``rho = 0``)
    contributes 0, even with ``G = -inf``."""
    if ratio == 0.0:
        return 0.0
    return ratio * G


@njit(cache=True, inline="always")
def discounted_returns(xs, discount, dones, bootstrap, out):
    """``out[t] = xs[t] + discount * out[t+1]`` backwards over one episode, ``out[T] =
    bootstrap`` (0 for a finished episode); a ``dones[t]`` step passes nothing back."""
    g = bootstrap
    for t in range(xs.shape[0] - 1, -1, -1):
        g = xs[t] if dones[t] else discounted_return(xs[t], discount, g)
        out[t] = g


@njit(cache=True, inline="always")
def td_errors(rewards, values, dones, gamma, out):
    """``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)`` (eq. 6.5) for ``t < T``;
    ``values[T]`` bootstraps a truncated episode and is ignored after ``dones[T-1]``."""
    for t in range(rewards.shape[0]):
        out[t] = td_error(td_target(rewards[t], gamma, values[t + 1], dones[t]), values[t])


@njit(cache=True, inline="always")
def gae(rewards, values, dones, gamma, lam, out):
    """Generalized advantage estimates of one episode (Schulman et al., 2016, eq. 16):
    the discounted sum, at rate ``gamma lam``, of the TD errors. ``lam = 0`` gives
    ``A_t = delta_t``; ``lam = 1`` gives ``A_t = G_t - V(s_t)``."""
    td_errors(rewards, values, dones, gamma, out)
    discounted_returns(out[:rewards.shape[0]], gamma * lam, dones, 0.0, out)
