"""Baird's counterexample tamed: TDC and emphatic TD converge where off-policy TD
diverges, exactly and in samples (S&B Figs. 11.5 and 11.6).

VE and PBE are measured as the book measures them: under the behaviour policy's state
distribution ``mu``, uniform over the seven states (the behaviour's dashed action, taken
with probability 6/7, goes to each upper state with probability 1/6, its solid action to
the lower state: every state is next with probability 1/7). The target policy's own
distribution puts all its mass on the lower state, which would make the curves
``|v(7)|`` and ``0.01 |v(7)|``. At the book's starting weights ``(1, 1, 1, 1, 1, 1, 10,
1)`` the upper states' estimates are 3 and the lower's 12, so ``sqrt(VE)`` starts at
``sqrt((6 * 9 + 144) / 7) = 5.32``; of expected TDC the book writes that after 1000
iterations "the VE ... remains almost 2" (section 11.7).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.envs import BairdCounterexample
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, below, check, inside, within
from tabular.experiments.harness.settings import Settings
from tabular.linear import (
    emphatic_fixed_point,
    expected_emphatic_td_update,
    expected_tdc_update,
    projected_bellman_error,
    reward_process,
    td_fixed_point,
    tdc,
    value_error,
)

REPRODUCES = ("Sutton & Barto (2018), Figure 11.5 (TDC on Baird's counterexample, one run "
              "and the expected update) and Figure 11.6 (expected emphatic TD)")
#: The steps at which the sampled mean is compared with the exact expected iterate.
COMPARED = (100, 500, 1000)
#: sqrt(VE) at the book's starting weights under the uniform behaviour distribution:
#: estimates 3 in the six upper states and 12 in the lower, true values 0.
BOOK_START_ROOT_VE = float(np.sqrt((6 * 3.0**2 + 12.0**2) / 7))
#: Section 11.7 on expected TDC after 1000 iterations: "the VE ... remains almost 2",
#: read as sqrt(VE) (the figure's axis) in [1.5, 2]: below 2, and nearer 2 than 1.
BOOK_TDC_END = (1.5, 2.0)


@dataclass(frozen=True)
class Config(Settings):
    """Example 11.1 with the book's features, starting weights and gamma 0.99; TDC with
    alpha 0.005 and beta 0.05 (Figure 11.5), emphatic TD with alpha 0.03 (Figure 11.6)."""

    steps: int = 1000
    """Steps of sampled TDC and sweeps of the expected updates (the book's 1000)."""
    alpha: float = 0.005
    """TDC's step size of w (the book's)."""
    beta: float = 0.05
    """TDC's step size of the secondary weights v (the book's)."""
    emphatic_alpha: float = 0.03
    """Emphatic TD's step size (the book's)."""
    gamma: float = 0.99
    """Discount (the book's)."""
    runs: int = 200
    """Independent runs of sampled TDC, whose mean follows the exact expected update."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"runs": 50}


def _iteration(update, d: int) -> np.ndarray:
    """The matrix of an expected update's iteration ``z <- z + update(z)``, which is
    linear in ``z`` on Baird (every reward is 0)."""
    return np.eye(d) + np.column_stack([update(e) for e in np.eye(d)])


def _slowest(matrix: np.ndarray, kept: int) -> float:
    """The largest eigenvalue modulus after the ``kept`` invariant directions (modulus 1)."""
    return float(np.sort(np.abs(np.linalg.eigvals(matrix)))[::-1][kept])


def _modal_shares(matrix: np.ndarray, start: np.ndarray, sweeps: int, seminorms) -> np.ndarray:
    """Each eigenmode's share of ``seminorm(e_T)``, ``|c_i| |lambda_i|^T seminorm(u_i)``,
    ``[seminorm, mode]``, for the linear iteration ``e <- matrix e`` from ``e_0 = start =
    sum_i c_i u_i`` over the eigenvectors ``u_i`` (``T = sweeps``).

    Then ``e_T = sum_i c_i lambda_i^T u_i``, and a seminorm (extended to complex vectors
    as ``sqrt(q(Re u) + q(Im u))`` for a quadratic form ``q``, or the modulus's maximum)
    is subadditive: ``seminorm(e_T)`` is at most the sum of the shares (the triangle
    inequality) and at least the largest share less the others (the reverse triangle
    inequality), whatever the angles between the modes."""
    moduli, vectors = np.linalg.eig(matrix)
    decay = np.abs(np.linalg.solve(vectors, start)) * np.abs(moduli) ** sweeps
    return np.array([[decay[i] * seminorm(vectors[:, i]) for i in range(moduli.size)]
                     for seminorm in seminorms])


def run(config: Config, executor) -> dict:
    B = BairdCounterexample
    mdp, X = B.model(), B.features()
    d, gamma = X.shape[1], config.gamma
    target = reward_process(mdp, B.TARGET, gamma=gamma)
    mu = reward_process(mdp, B.BEHAVIOUR, gamma=gamma).mu  # uniform
    # one-step episodes from the stationary start: independent steps, so the mean
    # (w_t, v_t) is exactly the t-th expected iterate
    sampled = tdc(mdp, B.TARGET, B.BEHAVIOUR, X, gamma=gamma, episodes=config.steps,
                  max_steps=1, alpha=config.alpha, beta=config.beta,
                  initial_w=B.INITIAL_WEIGHTS, runs=config.runs, seed=config.seed,
                  history=True)
    steps = np.arange(config.steps + 1)
    tdc_w = np.zeros((steps.size, d))
    tdc_v = np.zeros((steps.size, d))
    emphatic_w = np.zeros((steps.size, d))
    tdc_w[0] = emphatic_w[0] = B.INITIAL_WEIGHTS
    for t in steps[:-1]:
        dw, dv = expected_tdc_update(target, X, tdc_w[t], tdc_v[t], mu=mu)
        tdc_w[t + 1] = tdc_w[t] + config.alpha * dw
        tdc_v[t + 1] = tdc_v[t] + config.beta * dv
        emphatic_w[t + 1] = emphatic_w[t] + config.emphatic_alpha * expected_emphatic_td_update(
            target, X, emphatic_w[t], mu=mu)

    def tdc_step(z):
        dw, dv = expected_tdc_update(target, X, z[:d], z[d:], mu=mu)
        return np.r_[config.alpha * dw, config.beta * dv]

    def emphatic_step(w):
        return config.emphatic_alpha * expected_emphatic_td_update(target, X, w, mu=mu)

    # X has one more column than rank: its null direction is never moved by either
    # update (every step lies in the row space of X), so the limit of both iterations
    # is the starting weights' component along it
    null = np.linalg.svd(X)[2][-1]
    history = np.concatenate([np.repeat(B.INITIAL_WEIGHTS[None, None], config.runs, axis=0),
                              sampled.w_history], axis=1)
    compared = [t for t in COMPARED if t <= config.steps]

    # VE and PBE under the behaviour's distribution mu (uniform), as the book measures them
    def errors(ws):
        return np.array([[np.sqrt(value_error(target, X, w, mu=mu)),
                          np.sqrt(projected_bellman_error(target, X, w, mu=mu))] for w in ws])

    # every reward is 0, so VE and PBE are quadratic forms of w and vanish at the limit
    def root_ve(u):
        return np.sqrt(value_error(target, X, u.real, mu=mu)
                       + value_error(target, X, u.imag, mu=mu))

    def root_pbe(u):
        return np.sqrt(projected_bellman_error(target, X, u.real, mu=mu)
                       + projected_bellman_error(target, X, u.imag, mu=mu))

    limit = (B.INITIAL_WEIGHTS @ null) * null
    tdc_shares = _modal_shares(_iteration(tdc_step, 2 * d), np.r_[B.INITIAL_WEIGHTS - limit,
                                                                  np.zeros(d)], config.steps,
                               [lambda u: root_ve(u[:d]), lambda u: root_pbe(u[:d])])
    emphatic_shares = _modal_shares(_iteration(emphatic_step, d), B.INITIAL_WEIGHTS - limit,
                                    config.steps, [root_ve, lambda u: np.abs(X @ u).max(),
                                                   lambda u: np.abs(u).max()])

    return {"compared": np.array(compared, dtype=np.int64),
            "sampled": history[:, compared], "sampled_v": sampled.secondary_weights,
            "sampled_run0": history[0], "sampled_errors": errors(history[0]),
            "tdc_w": tdc_w, "tdc_v": tdc_v, "tdc_errors": errors(tdc_w),
            "emphatic_w": emphatic_w, "emphatic_errors": errors(emphatic_w),
            "limit": limit,
            # [sqrt(VE), sqrt(PBE)] x [mode]: each mode's share after the sweeps
            "tdc_shares": tdc_shares,
            # [sqrt(VE), max |X w|, max |w|] x [mode], of w_T - limit
            "emphatic_shares": emphatic_shares,
            "tdc_slowest": _slowest(_iteration(tdc_step, 2 * d), 2),
            "emphatic_slowest": _slowest(_iteration(emphatic_step, d), 1),
            "w_td": td_fixed_point(target, X), "w_emphatic": emphatic_fixed_point(target, X, mu=mu),
            "X": X, "mu": mu}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(3, 1, width=4.6, height=3.8,
                             title="Baird's counterexample: TDC and emphatic TD converge")
    steps = np.arange(results["tdc_w"].shape[0])
    panels = [(results["sampled_run0"], results["sampled_errors"], "TDC (one run)", "steps"),
              (results["tdc_w"], results["tdc_errors"], "expected TDC", "sweeps"),
              (results["emphatic_w"], results["emphatic_errors"], "expected emphatic TD",
               "sweeps")]
    for k, (w, err, title, unit) in enumerate(panels):
        ax = axes[0, k]
        for i in range(w.shape[1]):
            ax.plot(steps, w[:, i], color=style.PALETTE[i % len(style.PALETTE)], lw=1.0,
                    label=f"$w_{i + 1}$")
        ax.plot(steps, err[:, 0], color="#CC0000", lw=2.0, label=r"$\sqrt{\overline{VE}}$")
        if k < 2:
            ax.plot(steps, err[:, 1], color="#CC0000", lw=2.0, ls="--",
                    label=r"$\sqrt{\overline{PBE}}$")
        ax.set_title(title)
        ax.set_xlabel(unit)
        ax.set_ylabel("weight, error")
    axes[0, 0].legend(ncol=2, fontsize=8, loc="upper right")
    return [style.save(fig, out_dir / "gradient_td.png")]


@check()
def sampled_tdc_follows_expected(results: dict) -> list[Measure]:
    """The mean over runs of sampled TDC's weights after t steps is the t-th exact
    expected iterate (each step is an independent draw from the stationary behaviour
    and the update is linear in (w, v)), within 5 standard errors, at steps 100, 500
    and 1000, and likewise its final secondary weights v."""
    measures = []
    sampled = results["sampled"]  # [runs, compared, 8]
    root = np.sqrt(sampled.shape[0])
    pairs = [(f"TDC w after {t} steps", sampled[:, k], results["tdc_w"][t])
             for k, t in enumerate(results["compared"])]
    pairs.append(("TDC v at the end", results["sampled_v"], results["tdc_v"][-1]))
    for name, samples, expected in pairs:
        se = samples.std(axis=0, ddof=1) / root
        z = np.abs(samples.mean(axis=0) - expected) / se
        measures.append(
            below(
                f"{name}: largest |mean - expected| / SE",
                measured=z.max(),
                bound=5.0,
                failure=f"{name}: a mean is {z.max():.1f} standard errors off",
                why="5 standard errors",
            )
        )
    return measures


@check()
def expected_tdc_tends_to_the_td_fixed_point(results: dict) -> list[Measure]:
    """Expected TDC converges: off the two directions it never moves (the null
    direction of X, in w and in v) its iteration's eigenvalues are inside the unit
    circle, so it tends to a TD fixed point; its limit (the start's null component)
    represents X w_TD exactly, with PBE = VE = 0."""
    X, limit = results["X"], results["limit"]
    gap = np.abs(X @ limit - X @ results["w_td"]).max()
    return [
        below(
            "TDC iteration: slowest eigenvalue modulus",
            measured=results["tdc_slowest"],
            bound=1.0 - 1e-12,
            failure="expected TDC does not converge",
            why="inside the unit circle",
        ),
        below(
            "limit: max |X w_inf - X w_TD|",
            measured=gap,
            bound=1e-12,
            failure="the limit does not represent the TD fixed point",
            why="rounding",
        ),
    ]


def _rounding(results: dict) -> float:
    """The rounding allowed on top of a bound of exact arithmetic: each of the T sweeps
    adds at most about d machine epsilons of the weights' size (their start's largest,
    10) to the iterate, T d eps max |w_0| in all (1.8e-11)."""
    w = results["tdc_w"]
    return float(w.shape[0] * w.shape[1] * np.finfo(float).eps * np.abs(w[0]).max())


@check("alpha", "beta", "gamma", "steps")
def pbe_falls_ve_does_not(results: dict) -> list[Measure]:
    """Figure 11.5: expected TDC's sqrt(PBE) falls to near zero while sqrt(VE) stays
    near 2 (both under the behaviour's uniform distribution). The iteration is linear,
    so after T sweeps its error from the limit is the sum of its eigenmodes, each
    decayed by |lambda|^T (:func:`_modal_shares`); the slowest, |lambda| = 1 - 1.2e-7,
    is a value error that 1000 sweeps leave almost whole, with a sqrt(PBE) 260 times
    smaller (1.94 against 0.0074). The bounds are the triangle
    inequalities over the modes: sqrt(PBE_T) at most the sum of the modes' shares (the
    slow mode's, the others' having decayed by 0.987^1000 = 2e-6 and less), and sqrt(VE_T)
    at least the slow mode's share less the others' -- above 0: VE does not fall to 0
    in the book's sweeps. Both allow the rounding of :func:`_rounding`."""
    err, shares = results["tdc_errors"], results["tdc_shares"]
    ve, pbe = shares
    rounding = _rounding(results)
    slow = int(np.argmax(ve))
    floor = ve[slow] - (ve.sum() - ve[slow])
    return [
        below(
            "expected TDC sqrt(PBE) at the end",
            measured=err[-1, 1],
            bound=pbe.sum() + rounding,
            failure="PBE did not fall as the iteration's modes decay",
            why="sum of the modes' shares (triangle inequality) + rounding",
        ),
        above(
            "expected TDC sqrt(VE) at the end",
            measured=err[-1, 0],
            bound=floor - rounding,
            failure="VE fell below its slow mode's share",
            why="slow mode's share - the others' (reverse triangle inequality) - rounding",
        ),
        above(
            "its lower bound (VE does not fall to 0)",
            measured=floor,
            bound=0.0,
            failure="the slow mode does not hold VE up",
            why="0",
        ),
    ]


@check("emphatic_alpha", "gamma", "steps")
def expected_emphatic_td_converges(results: dict) -> list[Measure]:
    """Figure 11.6: expected emphatic TD converges to its fixed point A_e^{-1} b_e (here
    0 up to X's null direction, which the update never moves) with sqrt(VE) -> 0: its
    iteration's slowest eigenvalue modulus is below 1, and after the book's 1000
    sweeps sqrt(VE), max |X w - X A_e^{-1} b_e| and max |w - the start's null component|
    are each at most the sum over the iteration's eigenmodes of their shares, |c_i|
    |lambda_i|^1000 times the mode's own sqrt(VE), max |X u_i| or max |u_i| (the triangle
    inequality, :func:`_modal_shares`), plus rounding (:func:`_rounding`): its error has
    decayed to the rounding's size."""
    X, w_end = results["X"], results["emphatic_w"][-1]
    rate = results["emphatic_slowest"]
    ve, sup_values, sup_weights = results["emphatic_shares"].sum(axis=1) + _rounding(results)
    gap = np.abs(X @ (w_end - results["w_emphatic"])).max()
    why = "sum of the modes' shares + rounding"
    return [
        below(
            "emphatic iteration: slowest eigenvalue modulus",
            measured=rate,
            bound=1.0 - 1e-12,
            failure="expected emphatic TD does not converge",
            why="inside the unit circle",
        ),
        below(
            "expected emphatic TD sqrt(VE) at the end",
            measured=results["emphatic_errors"][-1, 0],
            bound=ve,
            failure="VE did not fall to 0",
            why=why,
        ),
        below(
            "max |X w_end - X A_e^-1 b_e|",
            measured=gap,
            bound=sup_values,
            failure="not at the emphatic fixed point",
            why=why,
        ),
        below(
            "max |w_end - null component of w_0|",
            measured=np.abs(w_end - results["limit"]).max(),
            bound=sup_weights,
            failure="not at the start's null component",
            why=why,
        ),
    ]


@check()
def measured_under_the_behaviour_distribution(results: dict) -> list[Measure]:
    """The book's measure: VE and PBE weigh the states by the behaviour policy's
    distribution, uniform over the seven states (1/7 each, exactly), so that at the
    book's starting weights sqrt(VE) is sqrt((6 * 3^2 + 12^2) / 7) = 5.318, the start
    of Figures 11.5's and 11.6's VE curves."""
    mu = results["mu"]
    start = float(results["tdc_errors"][0, 0])
    return [
        below(
            "largest |mu(s) - 1/7|",
            measured=float(np.abs(mu - 1.0 / 7.0).max()),
            bound=1e-15,
            failure=f"the behaviour distribution is {np.round(mu, 4)}, not uniform",
            why="rounding",
        ),
        within(
            "sqrt(VE) at the starting weights",
            measured=start,
            expected=BOOK_START_ROOT_VE,
            tolerance=1e-12,
            failure=f"sqrt(VE) starts at {start:.4f}, not {BOOK_START_ROOT_VE:.4f}",
            why="exact, to rounding",
        ),
    ]


@check("alpha", "beta", "gamma", "steps")
def tdc_ve_remains_almost_2(results: dict) -> list[Measure]:
    """Section 11.7 on Figure 11.5: after 1000 iterations of expected TDC "the VE ...
    remains almost 2": sqrt(VE) at the end is in [1.5, 2] (measured 1.935)."""
    end = float(results["tdc_errors"][-1, 0])
    low, high = BOOK_TDC_END
    return [inside("expected TDC sqrt(VE) after the last sweep", measured=end, low=low, high=high,
                   failure=f"expected TDC's sqrt(VE) ends at {end:.3f}, not almost 2",
                   why="the book's 'almost 2'")]
