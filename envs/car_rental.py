"""Jack's car rental: Sutton & Barto 2nd ed., Example 4.2 (Figure 4.2) and Exercise 4.7.

The model is built with NumPy from two small per-location tables (one day at one
location: rentals, then returns), so no Python loop runs over outcomes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tabular import TabularMDP
from tabular.checks import (
    check_index,
    check_nonnegative,
    check_positive_int,
    check_size,
    policy_matrix,
)

from .base import MAX_OUTCOME_SLOTS, OUTCOME_BYTES, ModelEnv
from .grid_options import reward_option

#: The options of Exercise 4.7: one car shuttled free from the first location to the
#: second each night, and $4 a night for each location keeping more than 10 cars.
EXERCISE_4_7 = {"free_moves": 1, "parking_limit": 10, "parking_cost": 4.0}

#: The largest ``max_cars`` accepted: the model has ``(max_cars + 1)**4 * A`` outcome
#: slots (2.1 million for the book's 20 cars, 10 million at 30).
MAX_CARS = 30
#: The largest Poisson mean accepted: above it ``P(X <= MAX_CARS)`` underflows to 0, so
#: the model is the same (every request rents every car, returns fill the lot), and the
#: pmf's ``rate**k / k!`` would overflow for far larger means.
MAX_RATE = 1000.0


def poisson(rate: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(pmf, tail)``, each ``[n + 1]``: ``pmf[k] = P(X = k)`` and ``tail[k] = P(X >= k)``
    for ``X ~ Poisson(rate)``. The tail is ``1 - pmf[:k].sum()``, so a distribution
    that ends with a tail bin sums to 1 to rounding (``1e-16``)."""
    ratios = np.concatenate(([1.0], rate / np.arange(1, n + 1)))  # pmf(k) / pmf(k - 1)
    pmf = np.exp(-rate) * np.cumprod(ratios)
    tail = np.maximum(0.0, 1.0 - np.concatenate(([0.0], np.cumsum(pmf)[:-1])))
    return pmf, tail


def one_day(max_cars: int, request_rate: float, return_rate: float):
    """One day at one location, from ``m`` cars in the morning to ``n`` at night.

    Returns ``(T, rentals)``, each ``[max_cars + 1, max_cars + 1]`` indexed ``[m, n]``:
    ``T[m, n] = P(n | m)`` and ``rentals[m, n] = E[cars rented | m, n]`` (0 where
    ``T`` is 0). Requests beyond the ``m`` cars are lost, so renting all ``m`` cars has
    the request tail ``P(requests >= m)``; returns come back at night, and those beyond
    ``max_cars`` disappear, so ending full has the return tail. Each row of ``T``
    therefore sums to 1 exactly (to rounding), with no truncation error.
    """
    N = max_cars
    cars = np.arange(N + 1)
    m, r = cars[:, None], cars[None, :]
    req_pmf, req_tail = poisson(request_rate, N)
    rent = np.where(r < m, req_pmf[r], np.where(r == m, req_tail[m], 0.0))  # [m, r]
    ret_pmf, ret_tail = poisson(return_rate, N)
    c, n = cars[:, None], cars[None, :]  # c cars left after renting
    back = np.where(n < N, np.where(n >= c, ret_pmf[np.maximum(n - c, 0)], 0.0),
                    ret_tail[N - c])  # [c, n]
    joint = rent[:, :, None] * back[np.maximum(m - r, 0)]  # [m, r, n]
    T = joint.sum(axis=1)
    rented = (joint * cars[None, :, None]).sum(axis=1)
    return T, np.divide(rented, T, out=np.zeros_like(T), where=T > 0.0)


class CarRental(ModelEnv):
    """Example 4.2 (Figure 4.2): Jack's car rental, and Exercise 4.7's variant.

    ## Description
    Jack manages two locations of a car rental company. Each day customers ask for
    cars at each location, Poisson with means 3 (first) and 4 (second); each car
    rented earns $10, a request with no car left is lost. Cars come back Poisson with
    means 3 and 2 and can be rented from the next day; a location holds at most 20
    cars, returns beyond that disappear. Overnight Jack moves up to 5 cars between the
    locations at $2 each. The task is continuing, the book uses ``gamma = 0.9``:
    policy iteration from "never move a car" finds the optimum in four improvement
    steps (policies pi_0 ... pi_4 of Figure 4.2). This exact model has ``v*`` from
    421.4 at (0, 0) to 637.0 at (20, 20). The book's plot of ``v_pi4`` has an axis
    from 420 to 612; models that truncate the Poisson distributions without keeping
    the tails (as many reimplementations do) lose probability each day and end lower
    at the top (618 when requests and returns above 10 are dropped).

    Exercise 4.7 (``CarRental(**EXERCISE_4_7)``): one car goes from the first
    location to the second free each night (an employee drives it home), and each
    location keeping more than 10 cars overnight (after the move) pays $4 for a
    second lot.

    The model is exact, without truncating the Poisson distributions: within a day a
    location's outcome only depends on the requests up to the cars it has (all the
    larger requests rent every car: their whole tail ``P(requests >= m)`` goes to
    that last bin) and on the returns up to the free places (the tail goes to the bin
    "full"). So each outcome distribution sums to 1 to rounding (within ``1e-12``;
    the tails are ``1 - sum`` of the other bins).

    The rewards are ``r(s, a, s')`` of Sutton & Barto eq. 3.6, the expected reward
    given the next state (rental income given the cars at night, less the costs of
    the night), so each ``(s, a)`` has one outcome per next state (``K = 441`` with 20
    cars).
    Expected rewards, transition probabilities and so every value and policy of
    chapter 4 are those of the book's process. Recording the rentals themselves
    would need an outcome per next state and daily total of rentals (``K`` up to
    9261, 1.1 GB); a sampled step pays ``r(s, a, s')``, which has the same mean as
    the rental income given the next state, but less variance.

    ## Action Space
    ``Discrete(2 * max_move + 1)``: action ``a`` moves ``a - max_move`` cars from the
    first location to the second (negative: from the second to the first); names
    ``"move -5"`` ... ``"move +5"``. A move larger than the cars at its source moves
    all of them (and only those are paid for): like the gambler's stakes, the clipped
    actions duplicate a feasible one, which leaves ``v*`` unchanged and adds only
    ties (:meth:`net_moves` gives the cars a policy really moves). Cars moved to a
    location beyond ``max_cars`` disappear, as returned cars do.

    ## Observation Space
    ``Discrete((max_cars + 1) ** 2)``: state id = ``cars at first * (max_cars + 1) +
    cars at second``, the cars at each location at the end of the day (the model's
    ``grid_shape`` and ``state_cells`` place state ``(n1, n2)`` at row ``n1``, column
    ``n2``, the axes of Figure 4.2).

    ## Starting State
    Uniform over all states (the book sets none).

    ## Rewards
    $10 (``rental_reward``) per car rented, less $2 (``move_cost``) per car moved
    (Exercise 4.7: the first ``free_moves`` cars from the first location to the
    second are free) and ``parking_cost`` for each location left with more than
    ``parking_limit`` cars overnight; as ``r(s, a, s')`` (see above).

    ## Episode End
    Termination: never (a continuing task). Truncation: none by the env itself (a
    registered id adds Gymnasium's ``max_episode_steps``).

    ## Arguments
    * ``max_cars``: the capacity of each location (default 20; 1 to 30).
    * ``max_move``: the most cars moved in a night (default 5).
    * ``request_rates``, ``return_rates``: the Poisson means at the first and second
      location (defaults ``(3, 4)`` and ``(3, 2)``).
    * ``rental_reward``: the income per car rented (default 10).
    * ``move_cost``: the cost per car moved (default 2).
    * ``free_moves``: the cars moved from the first location to the second free each
      night (default 0; Exercise 4.7: 1).
    * ``parking_limit``: ``None`` (default: no limit) or the cars a location keeps
      overnight without paying ``parking_cost`` (Exercise 4.7: 10).
    * ``parking_cost``: the nightly cost at a location over ``parking_limit``
      (default 4).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, *, max_cars: int = 20, max_move: int = 5,
                 request_rates: tuple[float, float] = (3.0, 4.0),
                 return_rates: tuple[float, float] = (3.0, 2.0), rental_reward: float = 10.0,
                 move_cost: float = 2.0, free_moves: int = 0, parking_limit: int | None = None,
                 parking_cost: float = 4.0, render_mode: str | None = None) -> None:
        self.max_cars = check_positive_int("max_cars", max_cars, high=MAX_CARS)
        self.max_move = check_positive_int("max_move", max_move)
        A = 2 * self.max_move + 1
        check_size(f"max_cars={self.max_cars} with max_move={self.max_move}",
                   (self.max_cars + 1) ** 4 * A, MAX_OUTCOME_SLOTS, OUTCOME_BYTES)
        self.request_rates = _rates("request_rates", request_rates)
        self.return_rates = _rates("return_rates", return_rates)
        self.rental_reward = reward_option("rental_reward", rental_reward)
        self.move_cost = reward_option("move_cost", move_cost)
        self.free_moves = _count("free_moves", free_moves)
        self.parking_limit = None if parking_limit is None else _count("parking_limit",
                                                                        parking_limit)
        self.parking_cost = reward_option("parking_cost", parking_cost)
        N = self.max_cars
        n1, n2 = np.divmod(np.arange((N + 1) ** 2), N + 1)
        # the cars each (s, a) really moves: no more than its source holds
        self._moved = np.clip(self.moves()[None, :], -n2[:, None], n1[:, None])
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model of these options (``K = (max_cars + 1) ** 2``, dense)."""
        N = self.max_cars
        S = (N + 1) ** 2
        n1, n2 = np.divmod(np.arange(S), N + 1)
        moved = self._moved
        m1 = np.minimum(n1[:, None] - moved, N)  # cars in the morning, [S, A]
        m2 = np.minimum(n2[:, None] + moved, N)
        T1, rented1 = one_day(N, self.request_rates[0], self.return_rates[0])
        T2, rented2 = one_day(N, self.request_rates[1], self.return_rates[1])
        A = moved.shape[1]
        prob = (T1[m1][:, :, :, None] * T2[m2][:, :, None, :]).reshape(S, A, S)
        income = self.rental_reward * (rented1[m1][:, :, :, None] + rented2[m2][:, :, None, :])
        reward = (income - self._night_cost(m1, m2)[:, :, None, None]).reshape(S, A, S)
        next_state = np.broadcast_to(np.arange(S), (S, A, S))
        cells = np.stack([n1, n2], axis=1)
        return TabularMDP(next_state, prob, reward, np.zeros((S, A, S), dtype=bool),
                          np.full(S, 1.0 / S),
                          state_labels=[f"{a} at first, {b} at second" for a, b in cells.tolist()],
                          action_names=[f"move {m:+d}" for m in self.moves()],
                          grid_shape=(N + 1, N + 1), state_cells=cells)

    def _night_cost(self, m1, m2) -> np.ndarray:
        """``[S, A]``: what the night costs, moving and (Exercise 4.7) parking."""
        moved = self._moved
        paid = np.where(moved > 0, np.maximum(moved - self.free_moves, 0), -moved)
        cost = self.move_cost * paid
        if self.parking_limit is not None:
            cost = cost + self.parking_cost * ((m1 > self.parking_limit).astype(float)
                                               + (m2 > self.parking_limit))
        return cost

    def moves(self) -> np.ndarray:
        """Int ``[A]``: the cars each action asks to move, ``-max_move .. +max_move``."""
        return np.arange(-self.max_move, self.max_move + 1)

    def cars(self, s: int) -> tuple[int, int]:
        """``(cars at first, cars at second)`` of state id ``s``."""
        return divmod(check_index("s", s, (self.max_cars + 1) ** 2), self.max_cars + 1)

    def net_moves(self, policy: npt.ArrayLike) -> np.ndarray:
        """The cars a deterministic ``policy`` moves in each state, drawn as Figure 4.2
        draws pi_0 ... pi_4: int ``[max_cars + 1, max_cars + 1]`` indexed by the cars at
        the first and the second location, positive from the first to the second.

        ``policy``: int ``[S]`` actions or one-hot ``[S, A]`` rows (clipped actions
        count as the move they make)."""
        pi = policy_matrix(self._mdp, policy)
        if not ((pi == 0.0) | (pi == 1.0)).all():
            s = int(np.argmax(((pi != 0.0) & (pi != 1.0)).any(axis=1)))
            raise ValueError(f"policy must be deterministic: in state "
                             f"{self._mdp.state_name(s)} it mixes actions")
        actions = pi.argmax(axis=1)
        N = self.max_cars
        return self._moved[np.arange(pi.shape[0]), actions].reshape(N + 1, N + 1)

    def _info(self, prob: float) -> dict:
        """The base info and ``cars``: ``(cars at first, cars at second)`` now."""
        assert self.s is not None  # reset() drew one before any info
        return {**super()._info(prob), "cars": self.cars(self.s)}


def _rates(name: str, rates) -> tuple[float, float]:
    """Two Poisson means (first location, second), each a number in ``[0, MAX_RATE]``."""
    if isinstance(rates, str | dict) or np.ndim(rates) != 1 or len(rates) != 2:
        raise ValueError(f"{name} must be two Poisson means (first location, second), "
                         f"got {rates!r}")
    means = [check_nonnegative(f"{name}[{i}]", rate) for i, rate in enumerate(rates)]
    for i, mean in enumerate(means):
        if mean > MAX_RATE:
            raise ValueError(f"{name}[{i}] must be at most {MAX_RATE:,.0f} (a larger mean "
                             f"gives the same model), got {mean}")
    return means[0], means[1]


def _count(name: str, value) -> int:
    """``value`` as an int; a ``ValueError`` naming ``name`` unless it is an integer >= 0."""
    if check_nonnegative(name, value) != int(value):
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)
