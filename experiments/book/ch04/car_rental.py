"""Figure 4.2: policy iteration on Jack's car rental, the policies pi_0 ... pi_4 and v*."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import greedy_policy, policy_evaluation, q_from_v
from tabular.envs import CarRental
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact, within
from tabular.experiments.harness.settings import Settings

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 4.2, Figure 4.2"


@dataclass(frozen=True)
class Config(Settings):
    """Example 4.2: 20 cars per location, Poisson requests (3, 4) and returns (3, 2)."""

    gamma: float = 0.9
    """Discount (the book's)."""
    max_improvements: int = 10
    """Stop after this many improvements even if the policy still changes."""
    tie_tol: float = 1e-9
    """An action replaces the current one only if it is better by more than this."""

    QUICK = {}  # exact DP on 441 states: already seconds


def run(config: Config, executor) -> dict:
    env = CarRental()
    mdp = env.to_mdp()
    no_move = int(np.flatnonzero(env.moves() == 0)[0])
    policy = np.full(mdp.n_states, no_move)  # pi_0: never move a car
    policies, values = [policy], []
    for _ in range(config.max_improvements + 1):
        V = policy_evaluation(mdp, policy, config.gamma).V  # exact linear solve
        values.append(V)
        Q = q_from_v(mdp, V, config.gamma)
        better = Q.max(axis=1) > Q[np.arange(mdp.n_states), policy] + config.tie_tol
        if not better.any():
            break
        policy = np.where(better, greedy_policy(Q), policy)
        policies.append(policy)
    return {"moves": np.array([env.net_moves(p) for p in policies]),
            "v_star": values[-1].reshape(env.max_cars + 1, env.max_cars + 1),
            "improvements": np.array(len(policies) - 1)}


def plot(results: dict, out_dir, config: Config) -> list:
    moves = results["moves"]
    panels = len(moves) + 1
    fig, axes = style.figure(min(panels, 3), -(-panels // 3), width=3.6, height=3.4,
                             title=f"Figure 4.2: Jack's car rental, policy iteration "
                                   f"(gamma = {config.gamma:g})")
    flat = axes.ravel()
    for i, grid in enumerate(moves):
        ax = flat[i]
        style.heatmap(ax, grid.astype(float), cmap="RdBu_r", annotate=False, vmin=-5, vmax=5,
                      colorbar_label="cars moved (1 -> 2)")
        ax.set_title(f"$\\pi_{i}$")
        ax.set_xlabel("cars at the second location")
        ax.set_ylabel("cars at the first location")
    ax = flat[len(moves)]
    style.heatmap(ax, results["v_star"], annotate=False, colorbar_label="$v_*$")
    ax.set_title("$v_*$")
    ax.set_xlabel("cars at the second location")
    ax.set_ylabel("cars at the first location")
    for ax in flat[:panels]:
        ax.set_xticks(range(0, 21, 5))
        ax.set_yticks(range(0, 21, 5))
        ax.invert_yaxis()  # cars at the first location grow upward, as in Figure 4.2
    for ax in flat[panels:]:
        ax.set_visible(False)
    return [style.save(fig, out_dir / "car_rental.png")]


@check("gamma", "max_improvements")
def book_policies(results: dict) -> list[Measure]:
    """Figure 4.2: four improvements (pi_0 ... pi_4); pi_4 moves five cars from a full
    first location to an empty second one and at most four the other way; v* rises from
    about 420 at (0, 0) to its maximum at (20, 20) (636.99 in the exact model; the
    book's axis shows 612, see envs.CarRental)."""
    final = results["moves"][-1]
    v = results["v_star"]
    peak = tuple(int(i) for i in np.unravel_index(v.argmax(), v.shape))
    return [
        fact("policy improvements", passed=int(results["improvements"]) == 4,
             expected="4 (pi_0 ... pi_4)", measured=str(int(results["improvements"])),
             failure=f"{int(results['improvements'])} improvements, the book shows 4"),
        fact("pi_4: cars moved at (20, 0), fewest moved, at (0, 0)",
             passed=final[20, 0] == 5 and final.min() == -4 and final[0, 0] == 0,
             expected="+5, -4, 0", measured=f"{final[20, 0]:+d}, {final.min():+d}, {final[0, 0]:d}",
             failure=f"pi_4 moves {final[20, 0]} at (20, 0) and at least {final.min()}: "
                     "the book's +5 and -4"),
        within("v*(0, 0)", measured=v[0, 0], expected=421.4, tolerance=1.0,
               failure=f"v* is {v[0, 0]:.1f} at (0, 0) (book: about 420) with its maximum "
                       f"at {peak}",
               why="the book's figure: about 420"),
        fact("v*'s maximum at", passed=peak == (20, 20), expected="(20, 20)", measured=str(peak),
             failure=f"v* is {v[0, 0]:.1f} at (0, 0) (book: about 420) with its maximum at {peak}"),
    ]
