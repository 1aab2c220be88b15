"""The one model format: a finite MDP as padded NumPy arrays.

Every environment compiles to a :class:`TabularMDP`; every kernel reads its arrays.
Outcome ``k`` of action ``a`` in state ``s`` leads to ``next_state[s, a, k]`` with
probability ``prob[s, a, k]``, pays ``reward[s, a, k]`` and ends the episode when
``done[s, a, k]`` (Gymnasium's ``terminated``: no value flows from the next state,
a target is ``r + gamma * (0 if done else V[s'])``). Padding slots have
probability 0.

The model stores these arrays compactly (:mod:`tabular.model.compact`: int32 successors
that carry ``done`` in their sign, codes into tables of the distinct
``(prob, reward)`` pairs, no probability when ``K = 1``) and hands kernels that form,
:attr:`TabularMDP.arrays`; the wide arrays above are decoded on first read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from tabular.checks import bool_inside, is_real
from tabular.model import compact

if TYPE_CHECKING:
    import gymnasium as gym

PROB_TOL = 1e-9
#: The largest magnitude of a finite reward: sums of 1e8 such rewards, discounted or
#: squared, stay far from float overflow (an unavoidable loss is ``-inf``, not ``-1e308``).
MAX_REWARD = 1e100

#: The model's arrays and what each holds: an integer index, a real number or a flag.
MODEL_ARRAYS = {"next_state": "index", "prob": "real", "reward": "real", "done": "flag",
                "start": "real"}
#: The public per-outcome arrays, decoded from the stored form on first read.
WIDE_ARRAYS = ("next_state", "prob", "reward", "done")


class MDPError(ValueError):
    """An MDP's arrays are inconsistent; the message names the state and action."""


class ModelArrays(NamedTuple):
    """The model as one kernel argument (:attr:`TabularMDP.arrays`), read-only, in the
    stored form of :mod:`tabular.model.compact` and read through the accessors of
    :mod:`tabular.model.outcomes`.

    ``successor`` int32 (int64 when ``S >= 2**31``) ``[S, A, K]``: the next state
    ``s'``, or ``-1 - s'`` when no value flows (the outcome ends the episode or has
    probability 0); ``code``: uint16 ``[S, A, K]``, the row of each outcome in the
    float64 tables ``prob [C]`` and ``reward [C]``, or (uint32) each outcome's own row
    when they hold one row per outcome (flat, ``[S * A * K]``); ``prob`` is empty
    when ``K = 1`` (every outcome is certain); ``start_cdf`` ``[S]``: the cumulative
    start distribution; ``reward_sd`` float64 ``[S, A, K]``: the standard deviation of
    each outcome's Gaussian reward noise, or empty (shape ``(0, 0, 0)``) for a model
    without noise; ``cdf_row`` int64 ``[S, A]``, ``cdf`` float64 ``[R, K]`` and
    ``guide`` int64 ``[R, G]``: the sampler's search tables
    (:func:`~tabular.model.compact.search_tables`), or empty (shape ``(0, 0)``) when
    ``K < SEARCH_OUTCOMES`` and the sampler scans.
    """

    successor: np.ndarray
    code: np.ndarray | None
    prob: np.ndarray
    reward: np.ndarray
    start_cdf: np.ndarray
    reward_sd: np.ndarray
    cdf_row: np.ndarray
    cdf: np.ndarray
    guide: np.ndarray


class _Stored:
    """A public model array (``next_state``, ``prob``, ``reward``, ``done``): given to the
    constructor, kept in compact form, decoded (read-only) on first read."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, mdp: TabularMDP | None, owner: type | None = None) -> np.ndarray:
        if mdp is None:  # the dataclass field has no default
            raise AttributeError(self.name)
        if self.name not in mdp.__dict__:
            value = compact.decode(mdp.arrays, self.name)
            value.flags.writeable = False
            mdp.__dict__[self.name] = value
        return mdp.__dict__[self.name]

    def __set__(self, mdp: TabularMDP, value: npt.ArrayLike) -> None:
        mdp.__dict__[self.name] = value


@dataclass(frozen=True, eq=False)
class TabularMDP:
    """A finite MDP with at most ``K`` outcomes per state-action pair.

    Arrays (validated at construction, with errors that name the state and action):

    - ``next_state`` int64 ``[S, A, K]``: outcome ``k`` of taking ``a`` in ``s``;
    - ``prob`` float64 ``[S, A, K]``: its probability (each ``[s, a]`` row sums to 1
      to ``1e-9``; padding slots have 0);
    - ``reward`` float64 ``[S, A, K]``: the reward of that outcome (``-inf`` allowed;
      NaN, ``+inf`` and magnitudes above ``MAX_REWARD = 1e100`` not; a ``-inf`` on a
      padding slot is stored as 0, so no expectation meets ``0 * -inf``);
    - ``done`` bool ``[S, A, K]``: the outcome ends the episode (Gymnasium's
      ``terminated``: no value flows from the next state);
    - ``start`` float64 ``[S]``: the initial-state distribution;
    - ``reward_sd`` float64 ``[S, A, K]`` or ``None`` (default): Gaussian reward noise.
      An outcome with ``reward_sd > 0`` pays ``reward + reward_sd * N(0, 1)``, drawn by
      the sampler (:func:`~tabular.model.sampling.sample_step`) and the env; planners
      and every exact quantity read ``reward``, its mean, since the noise has mean 0
      and nothing downstream of a reward depends on it (S&B eq. 3.5 needs only
      ``r(s, a)``). In ``[0, MAX_REWARD]``, the rewards' own bound: a draw of the
      library's normal sampler is below 15 in magnitude (the tail of its ziggurat
      with 53-bit uniforms), so a noisy reward stays below ``16 MAX_REWARD`` and the
      returns (and their squares) that learners accumulate stay finite, as they do
      for rewards (a ``reward_sd`` of 1e300 made learners fail with a
      ZeroDivisionError). An outcome with ``reward_sd = 0`` draws nothing, so a model
      without noise keeps its random streams.

    With ``K = 1`` the probability reads back as exactly 1, and an outcome of
    probability 0 reads back with ``done = False``: the model keeps what the
    dynamics mean, in the compact form of :mod:`tabular.model.compact` (kernels read
    :attr:`arrays`; these four arrays are decoded on first read, so a huge model
    built with :meth:`from_arrays` never holds them unless asked).

    The model owns its arrays: it stores read-only copies (``state_cells`` too), so
    the caller's arrays are never modified or aliased, and nothing can change the
    model after it was validated. Any array-like of a compatible dtype is accepted.

    Metadata (never read by a kernel; each defaults to ``None``): ``state_labels``
    (one label per state, used in error messages and plots), ``action_names`` (one per
    action), ``grid_shape`` (``(rows, cols)`` of a gridworld) and ``state_cells``
    (int64 ``[S, 2]``, the row and column of each state, for plotting) and
    ``max_episode_steps`` (the time limit of the env the model was read from, which
    learners use as their ``max_steps`` unless given one).

    The discount is not part of the model: every algorithm takes ``gamma``.
    """

    # typed as the descriptor: the constructor takes any array-like, a read gives an array
    next_state: _Stored = _Stored()
    prob: _Stored = _Stored()
    reward: _Stored = _Stored()
    done: _Stored = _Stored()
    start: np.ndarray  # type: ignore[misc]  # the fields above have no default (_Stored)
    state_labels: Sequence[str] | None = field(default=None, repr=False)
    action_names: Sequence[str] | None = field(default=None, repr=False)
    grid_shape: tuple[int, int] | None = field(default=None, repr=False)
    state_cells: np.ndarray | None = field(default=None, repr=False)
    max_episode_steps: int | None = field(default=None, repr=False)
    reward_sd: np.ndarray | None = field(default=None, repr=False)
    if TYPE_CHECKING:  # set by _keep; not a dataclass field
        _arrays: ModelArrays = field(init=False)

    def __post_init__(self):
        arrays = {name: _model_array(name, getattr(self, name), kind)
                  for name, kind in MODEL_ARRAYS.items()}
        for name, value in arrays.items():
            object.__setattr__(self, name, value)
        self._check_metadata()
        self._validate()
        # 0 * -inf is NaN in every expectation: a -inf reward on a padding slot (probability
        # 0) becomes 0 in the model's own copy
        arrays["reward"][(arrays["prob"] == 0.0) & (arrays["reward"] == -np.inf)] = 0.0
        self._keep(compact.encode(*(arrays[name] for name in WIDE_ARRAYS)))

    def _check_metadata(self) -> None:
        """Keep the metadata as tuples and read-only arrays; refuse a bad time limit or grid
        shape."""
        if self.state_labels is not None:
            object.__setattr__(self, "state_labels", tuple(self.state_labels))
        if self.action_names is not None:
            object.__setattr__(self, "action_names", tuple(self.action_names))
        if self.max_episode_steps is not None:
            if (isinstance(self.max_episode_steps, bool)
                    or not isinstance(self.max_episode_steps, int | np.integer)
                    or self.max_episode_steps < 1):
                raise MDPError(f"max_episode_steps must be an int >= 1 or None, got "
                               f"{self.max_episode_steps!r}")
            object.__setattr__(self, "max_episode_steps", int(self.max_episode_steps))
        if self.grid_shape is not None:
            shape = self.grid_shape
            if (isinstance(shape, str) or np.ndim(shape) != 1 or len(shape) != 2
                    or not all(isinstance(n, int | np.integer) and n >= 1
                               and not isinstance(n, bool | np.bool_) for n in shape)):
                raise MDPError(f"grid_shape must be (rows, cols), two integers >= 1, got "
                               f"{shape!r}")
            object.__setattr__(self, "grid_shape", (int(shape[0]), int(shape[1])))
        if self.state_cells is not None:
            cells = _model_array("state_cells", self.state_cells, "index")
            cells.flags.writeable = False
            object.__setattr__(self, "state_cells", cells)

    def _keep(self, stored) -> None:
        """Keep ``stored`` ``(successor, code, prob, reward)`` read-only as the model (``code``
        ``None``: per outcome); the wide arrays given to the constructor are dropped
        (decoded again when read)."""
        successor, code, prob, reward = stored
        if code is None:  # per outcome: each outcome's code is its own (flat) row
            code, prob, reward = compact.own_rows(successor.shape), prob.ravel(), reward.ravel()
        self.start.flags.writeable = False
        arrays = ModelArrays(successor, code, prob, reward, np.cumsum(self.start),
                             self._reward_noise(successor.shape),
                             *compact.search_tables(code, prob))
        for value in arrays:
            if value is not None:
                value.flags.writeable = False
        for name in WIDE_ARRAYS:
            self.__dict__.pop(name, None)
        object.__setattr__(self, "_arrays", arrays)

    def _reward_noise(self, shape: tuple[int, ...]) -> np.ndarray:
        """The model's own read-only ``reward_sd`` (empty without noise), refusing a shape
        other than the outcomes' and a value that is not finite and ``>= 0``."""
        if self.reward_sd is None:
            return np.zeros((0, 0, 0))
        sd = _model_array("reward_sd", self.reward_sd, "real")
        if sd.shape != tuple(shape):
            raise MDPError(f"reward_sd has shape {sd.shape}, the outcomes have "
                           f"{tuple(shape)}; they must agree")
        bad = ~((sd >= 0.0) & (sd <= MAX_REWARD))  # NaN fails
        if bad.any():
            s, a, k = np.argwhere(bad)[0]
            raise MDPError(f"reward_sd[{s}, {a}, {k}] = {sd[s, a, k].item()!r} of outcome {k} at "
                           f"{self._where(s, a)} must be in [0, {MAX_REWARD:g}] (the rewards' "
                           "bound)")
        sd.flags.writeable = False
        object.__setattr__(self, "reward_sd", sd)
        return sd

    # ------------------------------------------------------------------ sizes
    @property
    def n_states(self) -> int:
        """S, the number of states."""
        return self._arrays.successor.shape[0]

    @property
    def n_actions(self) -> int:
        """A, the number of actions (every state has all of them)."""
        return self._arrays.successor.shape[1]

    @property
    def n_outcomes(self) -> int:
        """K, the padded number of outcomes per state-action pair."""
        return self._arrays.successor.shape[2]

    @property
    def arrays(self) -> ModelArrays:
        """The model as kernels take it: a :class:`~tabular.model.mdp.ModelArrays` in the
        stored form."""
        return self._arrays

    @property
    def start_cdf(self) -> np.ndarray:
        """Cumulative start distribution (read-only), for ``sample_start``."""
        return self._arrays.start_cdf

    def expected_reward(self) -> np.ndarray:
        """``r(s, a) = sum_k prob * reward`` (eq. 3.5) as a new ``[S, A]`` array (padding
        never makes a NaN)."""
        return np.where(self.prob > 0.0, self.prob * self.reward, 0.0).sum(axis=2)

    def transition_matrix(self) -> np.ndarray:
        """Dense ``[S, A, S']`` probabilities (outcomes to the same state summed; a new
        array)."""
        S, A, K = self.prob.shape
        dense = np.zeros((S, A, S))
        s_idx, a_idx = np.meshgrid(np.arange(S), np.arange(A), indexing="ij")
        for k in range(K):
            np.add.at(dense, (s_idx, a_idx, self.next_state[:, :, k]), self.prob[:, :, k])
        return dense

    def state_name(self, s: int) -> str:
        """``"3"`` or ``"3 (row 0, col 3)"``: how errors and plots name a state."""
        if self.state_labels is not None:
            return f"{s} ({self.state_labels[s]})"
        return str(s)

    def action_name(self, a: int) -> str:
        """``"1"`` or ``"1 (right)"``: how errors name an action."""
        if self.action_names is not None:
            return f"{a} ({self.action_names[a]})"
        return str(a)

    def __repr__(self) -> str:
        S, A, K = self._arrays.successor.shape
        return f"TabularMDP(S={S}, A={A}, K={K})"

    # ------------------------------------------------------------- validation
    def _where(self, s, a) -> str:
        """``"state 3, action 1 (right)"``: how errors name a pair."""
        return f"state {self.state_name(int(s))}, action {self.action_name(int(a))}"

    def _validate(self) -> None:
        """Refuse inconsistent wide arrays with an :class:`MDPError` naming the state and
        action: shapes, probabilities and rewards, sums to 1, indices in range, ``start``."""
        ns, p, r, d = self.next_state, self.prob, self.reward, self.done
        if p.ndim != 3:
            raise MDPError(f"prob must have shape [S, A, K], got {p.shape}")
        for name, arr in (("next_state", ns), ("reward", r), ("done", d)):
            if arr.shape != p.shape:
                raise MDPError(f"{name} has shape {arr.shape}, prob has {p.shape}; they must agree")
        S, A, K = p.shape
        if S == 0 or A == 0 or K == 0:
            raise MDPError(f"an MDP needs at least one state, action and outcome, got {p.shape}")
        self._check_sizes(S, A)
        for name in ("prob", "reward"):
            _check_outcomes(self, p, r, None, name)
        _check_sums(self, p)
        bad = (ns < 0) | (ns >= S)
        if bad.any():
            s, a, k = np.argwhere(bad)[0]
            raise MDPError(f"next_state {ns[s, a, k]} of outcome {k} at {self._where(s, a)} "
                           f"is outside [0, {S})")
        self._check_start()

    def _check_sizes(self, S: int, A: int) -> None:
        """Refuse a ``start`` or metadata whose length is not ``S`` states (``A`` actions)."""
        if self.start.shape != (S,):
            raise MDPError(f"start must have shape [{S}], got {self.start.shape}")
        if self.state_labels is not None and len(self.state_labels) != S:
            raise MDPError(f"state_labels has {len(self.state_labels)} entries for {S} states")
        if self.action_names is not None and len(self.action_names) != A:
            raise MDPError(f"action_names has {len(self.action_names)} entries for {A} actions")
        if self.state_cells is not None:
            self._check_cells(self.state_cells, S)

    def _check_cells(self, cells: np.ndarray, S: int) -> None:
        """Refuse ``state_cells`` (``cells``) that are not ``[S, 2]`` or hold a cell outside
        ``grid_shape`` (or a negative row or column, without a ``grid_shape``)."""
        if cells.shape != (S, 2):
            raise MDPError(f"state_cells must have shape [{S}, 2], got {cells.shape}")
        bad = (cells < 0).any(axis=1)
        if self.grid_shape is not None:
            bad |= (cells >= np.array(self.grid_shape)).any(axis=1)
        if bad.any():
            s = int(np.argmax(bad))
            where = ("outside the grid_shape " + "x".join(map(str, self.grid_shape))
                     if self.grid_shape is not None else "not a cell (a negative index)")
            raise MDPError(f"state_cells[{s}] = (row {cells[s, 0]}, col {cells[s, 1]}) of "
                           f"state {self.state_name(s)} is {where}")

    def _check_start(self) -> None:
        """Refuse a ``start`` that is not a probability distribution."""
        start = self.start
        if not (np.all(start >= 0.0) and abs(start.sum() - 1.0) <= PROB_TOL):  # NaN fails
            raise MDPError(f"start must be a probability distribution over the "
                           f"{start.shape[0]} states (non-negative, summing to 1), got sum "
                           f"{float(start.sum())!r}")

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_transitions(cls, P: Mapping[Any, Any] | Sequence[Any],
                         start: npt.ArrayLike | None = None, **metadata: Any) -> TabularMDP:
        """Build from Gymnasium's table ``P[s][a] = [(prob, next_state, reward, terminated), ...]``.

        ``P``: a dict or a list over states, each a dict or list over actions (states and
        actions numbered from 0). Outcomes with the same ``(next_state, reward,
        terminated)`` are merged (their probabilities added), which is how FrozenLake's
        repeated edge outcomes are stored. ``start`` (default ``None``: uniform over
        states; pass the env's own): the initial-state distribution ``[S]``.
        ``metadata``: the keyword arguments ``state_labels``, ``action_names``,
        ``grid_shape``, ``state_cells``, ``max_episode_steps`` of :class:`TabularMDP`.
        """
        states = _keys(P, "P")
        S = len(states)
        if S == 0:
            raise MDPError("P has no states")
        A = max(len(P[s]) for s in states)
        if A == 0:
            raise MDPError("P lists no actions: every state needs at least one")
        merged: list[list[dict]] = []
        for s in states:
            row = P[s]
            if len(row) != A:
                raise MDPError(f"P[{s}] has {len(row)} actions, other states have {A}")
            merged_row = []
            for a in _keys(row, f"P[{s}]"):
                outcomes: dict = {}
                for entry in row[a]:
                    pr, key = _outcome(entry, f"P[{s}][{a}]")
                    outcomes[key] = outcomes.get(key, 0.0) + pr
                if not outcomes:
                    raise MDPError(f"P[{s}][{a}] lists no outcomes")
                merged_row.append(outcomes)
            merged.append(merged_row)
        K = max(len(o) for row in merged for o in row)
        next_state = np.zeros((S, A, K), dtype=np.int64)
        prob = np.zeros((S, A, K))
        reward = np.zeros((S, A, K))
        done = np.zeros((S, A, K), dtype=bool)
        for s, row in enumerate(merged):
            for a, outcomes in enumerate(row):
                next_state[s, a, :] = s  # padding points home with probability 0
                for k, ((nxt, rew, term), pr) in enumerate(outcomes.items()):
                    next_state[s, a, k], prob[s, a, k] = nxt, pr
                    reward[s, a, k], done[s, a, k] = rew, term
        if start is None:
            start = np.full(S, 1.0 / S)
        # an array-like start is converted (and checked) by __post_init__
        return cls(next_state, prob, reward, done, start, **metadata)  # type: ignore[arg-type]

    @classmethod
    def from_gymnasium(cls, env: gym.Env[Any, Any], start: npt.ArrayLike | None = None
                       ) -> TabularMDP:
        """The exact model of a Gymnasium env, looked up through any wrappers.

        ``env``: a Gymnasium env, wrapped or not. Uses ``env.unwrapped.to_mdp()`` when
        the env has one (every env of this project), else its transition table
        ``env.unwrapped.P`` (FrozenLake, CliffWalking, Taxi). ``start`` (default
        ``None``: the env's own): the initial-state distribution ``[S]``. The env's time
        limit (``env.spec.max_episode_steps``) becomes the model's
        ``max_episode_steps``; the grid of Gymnasium's toy-text grids
        (:func:`~tabular.model.mdp.toy_text_grid`: FrozenLake, CliffWalking, Taxi) becomes its
        ``grid_shape``, ``state_cells`` and ``action_names``, so ``tabular.plot`` draws
        them. An env whose
        ``step`` does more than its table says (Taxi with ``fickle_passenger=True``) is
        refused.
        """
        base = getattr(env, "unwrapped", env)
        limit = getattr(getattr(env, "spec", None), "max_episode_steps", None)
        if hasattr(base, "to_mdp"):
            mdp = base.to_mdp()
            changes: dict[str, Any] = {} if start is None else {"start": start}
            if limit != mdp.max_episode_steps:
                changes["max_episode_steps"] = limit
            return replace(mdp, **changes) if changes else mdp
        if getattr(base, "fickle_passenger", False):
            raise MDPError(f"{type(base).__name__} with fickle_passenger=True moves the "
                           "passenger's destination in step(), which its P table does not "
                           "describe: no exact model can be read from it")
        P = getattr(base, "P", None)
        if P is None:
            raise TypeError(f"{type(base).__name__} has no transition table: env.unwrapped.P "
                            "is missing, so its exact model cannot be read. Tabular planning "
                            "needs an env with a P table or a to_mdp() method.")
        if start is None:
            start = getattr(base, "initial_state_distrib", None)
            if start is None:
                raise TypeError(f"{type(base).__name__} has a P table but no "
                                "initial_state_distrib; pass start=... explicitly")
        return cls.from_transitions(P, start=np.asarray(start, dtype=np.float64),
                                    max_episode_steps=limit, **toy_text_grid(base, len(P)))

    @classmethod
    def from_dense(cls, P: npt.ArrayLike, R: npt.ArrayLike, *, layout: str = "SAS",
                   start: npt.ArrayLike | None = None, terminal: npt.ArrayLike | None = None,
                   **metadata: Any) -> TabularMDP:
        """Build from dense transition probabilities and rewards.

        ``P``: the probabilities, laid out as ``layout`` (default ``"SAS"``) says:
        ``"SAS"`` is ``P[s, a, s']`` (mushroom-rl), ``"ASS"`` is ``P[a, s, s']``
        (mdptoolbox). ``R``: ``[S]`` (reward of the state left), ``[S, A]``, or per
        transition in the same layout as ``P``. ``start`` (default ``None``: uniform):
        the initial-state distribution ``[S]``. ``terminal`` (default ``None``: no
        terminal state): bool ``[S]``; a transition into a terminal state ends the
        episode. ``metadata``: as in :meth:`from_transitions`.
        """
        P = _model_array("P", P, "real")
        if layout not in ("SAS", "ASS"):
            raise MDPError(f"layout must be 'SAS' or 'ASS', got {layout!r}")
        if P.ndim != 3 or P.shape[-1] != P.shape[-2 if layout == "ASS" else 0]:
            raise MDPError(f"P must be [S, A, S'] or [A, S, S'] as layout says, got {P.shape}")
        if P.size == 0:
            raise MDPError(f"P of shape {P.shape} has no states or no actions")
        if layout == "ASS":
            P = P.transpose(1, 0, 2)
        S, A, _ = P.shape
        bad = ~(P >= 0.0) | ~(P <= 1.0 + PROB_TOL)  # NaN fails both
        if bad.any():
            s, a, s_next = np.argwhere(bad)[0]
            raise MDPError(f"P[{s}, {a}, {s_next}] (state {s}, action {a}, next state "
                           f"{s_next}) = {float(P[s, a, s_next])!r} is not a probability in [0, 1]")
        R = _model_array("R", R, "real")
        if np.isnan(R).any():
            raise MDPError(f"R holds NaN at index {np.argwhere(np.isnan(R))[0].tolist()}")
        if R.ndim == 3:
            R = R.transpose(1, 0, 2) if layout == "ASS" else R
        elif R.shape == (S, A):
            R = np.broadcast_to(R[:, :, None], P.shape)
        elif R.shape == (S,):
            R = np.broadcast_to(R[:, None, None], P.shape)
        if R.shape != P.shape:
            raise MDPError(f"R has shape {np.shape(R)}; expected [S], [S, A] or P's shape")
        positive = P > 0.0
        K = max(1, int(positive.sum(axis=2).max()))
        order = np.argsort(~positive, axis=2, kind="stable")[:, :, :K]  # successors first
        next_state = order
        prob = np.take_along_axis(P, order, axis=2)
        reward = np.take_along_axis(R, order, axis=2)
        if terminal is None:
            done = np.zeros_like(prob, dtype=bool)
        else:
            terminal = _model_array("terminal", terminal, "flag")
            if terminal.shape != (S,):
                raise MDPError(f"terminal must be bool [{S}], got shape {terminal.shape}")
            done = terminal[next_state]
        reward = np.where(prob > 0.0, reward, 0.0)
        if start is None:
            start = np.full(S, 1.0 / S)
        # an array-like start is converted (and checked) by __post_init__
        return cls(next_state, prob, reward, done, start, **metadata)  # type: ignore[arg-type]


    @classmethod
    def from_arrays(cls, successor: npt.ArrayLike, code: npt.ArrayLike | None,
                    prob: npt.ArrayLike, reward: npt.ArrayLike, start: npt.ArrayLike | None = None,
                    **metadata: Any) -> TabularMDP:
        """Build from the stored form (:class:`~tabular.model.mdp.ModelArrays`,
        :mod:`tabular.model.compact`), for models too large to pass through the wide
        arrays (a generator of a 10^8-state gridworld builds these directly).

        ``successor`` int ``[S, A, K]``: the next state ``s'``, or ``-1 - s'`` when the
        outcome ends the episode; ``code`` (``None``, or uint16 ``[S, A, K]``): each
        outcome's row in the tables ``prob`` and ``reward`` (float64 ``[C]``, ``C <=
        65536``, or any number with uint32 codes); with ``code=None`` ``prob`` and
        ``reward`` are float64 ``[S, A, K]`` (or flat), one row per outcome;
        ``prob`` may be empty when ``K = 1``; ``start`` (default ``None``: uniform): the
        initial-state distribution ``[S]``; ``metadata``: as in
        :meth:`from_transitions`. The same checks as the constructor, on the stored
        form; the model keeps its own read-only copies.
        """
        successor = np.asarray(successor)
        if successor.dtype.kind not in "iu":
            successor = _model_array("successor", successor, "index")
        if successor.ndim != 3 or 0 in successor.shape:
            raise MDPError(f"successor must be a non-empty [S, A, K] array, got shape "
                           f"{successor.shape}")
        S, A, K = successor.shape
        mdp = cls.__new__(cls)
        for f in fields(cls):
            if f.default is not MISSING:
                object.__setattr__(mdp, f.name, metadata.pop(f.name, f.default))
        if metadata:
            raise TypeError(f"from_arrays got unexpected keyword arguments {sorted(metadata)}")
        start = np.full(S, 1.0 / S) if start is None else start
        object.__setattr__(mdp, "start", _model_array("start", start, "real"))
        mdp._check_metadata()
        mdp._check_sizes(S, A)
        bad = (successor < -S) | (successor >= S)
        if bad.any():
            s, a, k = np.argwhere(bad)[0]
            raise MDPError(f"successor {successor[s, a, k]} of outcome {k} at "
                           f"{mdp._where(s, a)} is outside [-{S}, {S})")
        prob, reward = _model_array("prob", prob, "real"), _model_array("reward", reward, "real")
        if code is not None:
            code = _codes(code, successor.shape, reward.size)
            shape = (reward.size,)
        else:  # per outcome
            shape = successor.shape
            prob, reward = (x.reshape(shape) if x.size == successor.size else x
                            for x in (prob, reward))
        if reward.shape != shape or (prob.shape != shape and not (K == 1 and prob.size == 0)):
            raise MDPError(f"prob {prob.shape} and reward {reward.shape} must have shape "
                           f"{shape}" + (" (prob may be empty when K = 1)" if K == 1 else ""))
        if K == 1:
            prob = np.ones(shape)
        _check_outcomes(mdp, prob, reward, code, "prob")
        _check_outcomes(mdp, prob, reward, code, "reward")
        mdp._check_start()
        if K > 1:
            outcome_prob = prob if code is None else prob[code]
            _check_sums(mdp, outcome_prob)
        successor = successor.astype(compact.index_dtype(S))  # the model's own copy
        if K > 1:  # no value flows from an outcome of probability 0, and it pays no -inf
            successor = np.where((outcome_prob == 0.0) & (successor >= 0), -1 - successor,
                                 successor).astype(successor.dtype)
        reward[(prob == 0.0) & (reward == -np.inf)] = 0.0
        mdp._keep((successor, code, prob[:0] if K == 1 else prob, reward))
        return mdp


def as_mdp(env: TabularMDP | gym.Env[Any, Any], name: str = "mdp") -> TabularMDP:
    """A :class:`TabularMDP`, or a Gymnasium env compiled to one (its transition table
    is what the sampler draws from); anything else is a clear error naming ``name``."""
    if isinstance(env, TabularMDP):
        return env
    if hasattr(env, "unwrapped") or hasattr(env, "P"):
        return TabularMDP.from_gymnasium(env)
    raise TypeError(f"{name} must be a tabular.TabularMDP or a Gymnasium env with a "
                    f"transition table, got {type(env).__name__}")


def _check_outcomes(mdp, prob, reward, code, name: str) -> None:
    """Refuse a probability outside [0, 1] or a reward that is NaN, +inf or larger than
    ``MAX_REWARD`` (``name`` says which), naming the first outcome that holds it
    (``prob`` and ``reward``: per outcome, or tables with ``code``)."""
    values = prob if name == "prob" else reward
    if name == "prob":
        bad = ~(values >= 0.0) | ~(values <= 1.0 + PROB_TOL)  # NaN fails both
        what = "is not a probability in [0, 1]"
    else:
        bad = ~(np.abs(values) <= MAX_REWARD) & (values != -np.inf)  # NaN fails the first
        what = (f"is not allowed (finite rewards are at most {MAX_REWARD:g} in magnitude, "
                "NaN and +inf are rejected; -inf is allowed)")
    if code is not None and bad.any():
        bad = bad[code]
    if bad.any():
        s, a, k = np.argwhere(bad)[0]
        value = values[s, a, k] if code is None else values[code[s, a, k]]
        raise MDPError(f"{name} {float(value)!r} of outcome {k} at {mdp._where(s, a)} {what}")


def _check_sums(mdp, prob) -> None:
    """Refuse a pair whose outcome probabilities ``prob [S, A, K]`` do not sum to 1."""
    total = prob.sum(axis=2)
    bad = np.abs(total - 1.0) > PROB_TOL
    if bad.any():
        s, a = np.argwhere(bad)[0]
        raise MDPError(f"outcome probabilities at {mdp._where(s, a)} sum to "
                       f"{float(total[s, a])!r}, not 1 (tolerance {PROB_TOL})")


def _codes(code, shape, n_rows: int) -> np.ndarray:
    """``code`` as uint16 ``shape`` (uint32 or uint64 for tables of more than
    ``MAX_CODES`` rows), each a row of tables of ``n_rows`` entries."""
    raw = np.asarray(code)
    if raw.dtype.kind not in "iu" or raw.shape != shape:
        raise MDPError(f"code must be integer {list(shape)}, got {raw.dtype} {raw.shape}")
    bad = (raw < 0) | (raw >= n_rows)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise MDPError(f"code{list(where)} = {raw[where]} is not a row of the {n_rows}-row "
                       "prob and reward tables")
    if n_rows <= compact.MAX_CODES:
        return raw.astype(np.uint16)
    return raw.astype(np.uint32 if n_rows <= 2**32 else np.uint64)


def _outcome(entry, where: str) -> tuple[float, tuple[int, float, bool]]:
    """``(prob, (next_state, reward, terminated))`` of one entry of a Gymnasium ``P``
    table, each checked for its type (no silent ``int(0.7)`` or ``bool("False")``)."""
    try:
        pr, nxt, rew, term = entry
    except (TypeError, ValueError):
        raise MDPError(f"{where} entry {entry!r} is not (prob, next_state, reward, "
                       "terminated)") from None
    for name, value in (("prob", pr), ("reward", rew), ("next_state", nxt)):
        if not is_real(value):
            raise MDPError(f"{where}: {name} {value!r} of entry {entry!r} is not a number")
    if not (np.isfinite(nxt) and float(nxt) == int(nxt)):
        raise MDPError(f"{where}: next_state {nxt!r} of entry {entry!r} is not a state index")
    if not (isinstance(term, (bool, np.bool_)) or (isinstance(term, (int, np.integer))
                                                   and term in (0, 1))):
        raise MDPError(f"{where}: terminated {term!r} of entry {entry!r} is not a flag "
                       "(True/False or 0/1)")
    if not 0.0 <= float(pr) <= 1.0 + PROB_TOL:  # NaN fails
        raise MDPError(f"{where}: prob {pr!r} of entry {entry!r} is not a probability")
    return float(pr), (int(nxt), float(rew), bool(term))


def _model_array(name: str, value, kind: str) -> np.ndarray:
    """``value`` as the model's own C-ordered copy, refusing what would be coerced:
    a fractional or non-finite index, a flag other than ``True/False/0/1``, text, a
    bool where a number is due (``[True, 0]`` read as ``[1, 0]``)."""
    raw = np.asarray(value)
    if raw.dtype.kind not in "biuf" or (kind != "flag" and raw.dtype.kind == "b"):
        raise MDPError(f"{name} must hold numbers{'' if kind == 'flag' else ' (not flags)'}, "
                       f"got dtype {raw.dtype}")
    where = None if kind == "flag" else bool_inside(value, raw)
    if where is not None:
        raise MDPError(f"{name}{where} is a bool: {name} must hold real numbers, not flags")
    if kind == "index" and raw.dtype.kind == "f":
        bad = ~(raw == np.round(raw))  # NaN and +-inf fail too
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise MDPError(f"{name}{list(at)} = {raw[at].item()!r} is not a state index")
    if kind == "flag" and raw.dtype.kind != "b":
        bad = ~((raw == 0) | (raw == 1))
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise MDPError(f"{name}{list(at)} = {raw[at].item()!r} is not a flag "
                           "(True/False or 0/1)")
    dtype = {"index": np.int64, "real": np.float64, "flag": np.bool_}[kind]
    return np.array(raw, dtype=dtype, order="C")


def _keys(table, name: str) -> list:
    """The indices ``0 .. n-1`` of ``table`` (a dict indexed from 0, or a list), for errors
    named ``name``."""
    if isinstance(table, Mapping):
        keys = sorted(table)
        if keys != list(range(len(keys))):
            raise MDPError(f"{name} must be indexed 0..{len(keys) - 1}, got keys {keys[:5]}...")
        return keys
    if isinstance(table, Sequence):
        return list(range(len(table)))
    raise MDPError(f"{name} must be a dict or list, got {type(table).__name__}")


#: Gymnasium's toy-text action names, by env class (their docs' order).
_GRID_ACTIONS = {"FrozenLakeEnv": ("left", "down", "right", "up"),
                 "CliffWalkingEnv": ("up", "right", "down", "left"),
                 "TaxiEnv": ("down", "up", "right", "left", "pickup", "dropoff")}


def toy_text_grid(env: Any, n_states: int) -> dict[str, Any]:
    """The grid metadata (``grid_shape``, ``state_cells``, ``action_names``) of one of
    Gymnasium's toy-text grid envs, read from the env's own shape, or ``{}`` for any
    other env. FrozenLake (``nrow x ncol``) and CliffWalking (``shape``) number their
    cells row by row, one state each. Taxi's 500 states are (taxi row, taxi column,
    passenger location, destination) (``env.decode``): they are drawn as a 5 x 4 array
    of 5 x 5 maps, passenger location down and destination across, so each state has
    a cell of its own."""
    kind = type(env).__name__
    shape: tuple[int, ...]
    if kind == "FrozenLakeEnv":
        shape = (int(env.nrow), int(env.ncol))
    elif kind == "CliffWalkingEnv":
        shape = tuple(int(n) for n in env.shape)
    elif kind == "TaxiEnv":
        rows, cols = np.asarray(env.desc).shape[0] - 2, 5
        passengers, destinations = len(env.locs) + 1, len(env.locs)
        cells = np.array([(p * rows + r, d * cols + c) for r, c, p, d in
                          (tuple(env.decode(s)) for s in range(n_states))], dtype=np.int64)
        return {"grid_shape": (passengers * rows, destinations * cols), "state_cells": cells,
                "action_names": _GRID_ACTIONS[kind]}
    else:
        return {}
    if shape[0] * shape[1] != n_states:
        return {}
    cells = np.stack(np.divmod(np.arange(n_states), shape[1]), axis=1).astype(np.int64)
    return {"grid_shape": shape, "state_cells": cells, "action_names": _GRID_ACTIONS[kind]}
