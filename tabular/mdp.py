"""The one model format: a finite MDP as padded NumPy arrays.

Every environment compiles to a :class:`TabularMDP`; every kernel reads its arrays.
Outcome ``k`` of action ``a`` in state ``s`` leads to ``next_state[s, a, k]`` with
probability ``prob[s, a, k]``, pays ``reward[s, a, k]`` and ends the episode when
``done[s, a, k]`` (Gymnasium's ``terminated``: no value flows from the next state,
a target is ``r + gamma * (0 if done else V[s'])``). Padding slots have
probability 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

PROB_TOL = 1e-9
#: The largest magnitude of a finite reward: sums of 1e8 such rewards, discounted or
#: squared, stay far from float overflow (an unavoidable loss is ``-inf``, not ``-1e308``).
MAX_REWARD = 1e100

#: The model's arrays and what each holds: an integer index, a real number or a flag.
MODEL_ARRAYS = {"next_state": "index", "prob": "real", "reward": "real", "done": "flag",
                "start": "real"}


class MDPError(ValueError):
    """An MDP's arrays are inconsistent; the message names the state and action."""


class ModelArrays(NamedTuple):
    """The model as one kernel argument (:attr:`TabularMDP.arrays`): the model's own
    read-only ``next_state``, ``prob``, ``reward``, ``done`` and the cumulative start
    distribution ``start_cdf`` ``[S]``."""

    next_state: np.ndarray
    prob: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    start_cdf: np.ndarray


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
    - ``start`` float64 ``[S]``: the initial-state distribution.

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

    next_state: np.ndarray
    prob: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    start: np.ndarray
    state_labels: tuple | None = field(default=None, repr=False)
    action_names: tuple | None = field(default=None, repr=False)
    grid_shape: tuple | None = field(default=None, repr=False)
    state_cells: np.ndarray | None = field(default=None, repr=False)
    max_episode_steps: int | None = field(default=None, repr=False)

    def __post_init__(self):
        arrays = {name: _model_array(name, getattr(self, name), kind)
                  for name, kind in MODEL_ARRAYS.items()}
        for name, value in arrays.items():
            object.__setattr__(self, name, value)
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
        if self.state_cells is not None:
            arrays["state_cells"] = _model_array("state_cells", self.state_cells, "index")
            object.__setattr__(self, "state_cells", arrays["state_cells"])
        self._validate()
        # 0 * -inf is NaN in every expectation: a -inf reward on a padding slot (probability
        # 0) becomes 0 in the model's own copy
        arrays["reward"][(arrays["prob"] == 0.0) & (arrays["reward"] == -np.inf)] = 0.0
        start_cdf = np.cumsum(self.start)
        for value in (*arrays.values(), start_cdf):
            value.flags.writeable = False
        object.__setattr__(self, "_start_cdf", start_cdf)

    # ------------------------------------------------------------------ sizes
    @property
    def n_states(self) -> int:
        """S, the number of states."""
        return self.prob.shape[0]

    @property
    def n_actions(self) -> int:
        """A, the number of actions (every state has all of them)."""
        return self.prob.shape[1]

    @property
    def n_outcomes(self) -> int:
        """K, the padded number of outcomes per state-action pair."""
        return self.prob.shape[2]

    @property
    def arrays(self) -> ModelArrays:
        """``(next_state, prob, reward, done, start_cdf)``: the model as kernels take it."""
        return ModelArrays(self.next_state, self.prob, self.reward, self.done, self._start_cdf)

    @property
    def start_cdf(self) -> np.ndarray:
        """Cumulative start distribution (read-only), for ``sample_start``."""
        return self._start_cdf

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
        S, A, K = self.prob.shape
        return f"TabularMDP(S={S}, A={A}, K={K})"

    # ------------------------------------------------------------- validation
    def _where(self, s, a) -> str:
        return f"state {self.state_name(int(s))}, action {self.action_name(int(a))}"

    def _validate(self) -> None:
        ns, p, r, d, start = self.next_state, self.prob, self.reward, self.done, self.start
        if p.ndim != 3:
            raise MDPError(f"prob must have shape [S, A, K], got {p.shape}")
        for name, arr in (("next_state", ns), ("reward", r), ("done", d)):
            if arr.shape != p.shape:
                raise MDPError(f"{name} has shape {arr.shape}, prob has {p.shape}; they must agree")
        S, A, K = p.shape
        if S == 0 or A == 0 or K == 0:
            raise MDPError(f"an MDP needs at least one state, action and outcome, got {p.shape}")
        if start.shape != (S,):
            raise MDPError(f"start must have shape [{S}], got {start.shape}")
        if self.state_labels is not None and len(self.state_labels) != S:
            raise MDPError(f"state_labels has {len(self.state_labels)} entries for {S} states")
        if self.action_names is not None and len(self.action_names) != A:
            raise MDPError(f"action_names has {len(self.action_names)} entries for {A} actions")
        if self.state_cells is not None and self.state_cells.shape != (S, 2):
            raise MDPError(f"state_cells must have shape [{S}, 2], got {self.state_cells.shape}")

        bad = ~(p >= 0.0) | ~(p <= 1.0 + PROB_TOL)  # NaN fails both
        if bad.any():
            s, a, k = np.argwhere(bad)[0]
            raise MDPError(f"prob {float(p[s, a, k])!r} of outcome {k} at {self._where(s, a)} "
                           "is not a probability in [0, 1]")
        total = p.sum(axis=2)
        bad = np.abs(total - 1.0) > PROB_TOL
        if bad.any():
            s, a = np.argwhere(bad)[0]
            raise MDPError(f"outcome probabilities at {self._where(s, a)} sum to "
                           f"{float(total[s, a])!r}, not 1 (tolerance {PROB_TOL})")
        bad = (ns < 0) | (ns >= S)
        if bad.any():
            s, a, k = np.argwhere(bad)[0]
            raise MDPError(f"next_state {ns[s, a, k]} of outcome {k} at {self._where(s, a)} "
                           f"is outside [0, {S})")
        bad = ~(np.abs(r) <= MAX_REWARD) & (r != -np.inf)  # NaN fails the first test
        if bad.any():
            s, a, k = np.argwhere(bad)[0]
            raise MDPError(f"reward {float(r[s, a, k])!r} of outcome {k} at {self._where(s, a)} "
                           f"is not allowed (finite rewards are at most {MAX_REWARD:g} in "
                           "magnitude, NaN and +inf are rejected; -inf is allowed)")
        if not (np.all(start >= 0.0) and abs(start.sum() - 1.0) <= PROB_TOL):  # NaN fails
            raise MDPError(f"start must be a probability distribution over the {S} states "
                           f"(non-negative, summing to 1), got sum {float(start.sum())!r}")

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_transitions(cls, P, start=None, **metadata) -> TabularMDP:
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
        return cls(next_state, prob, reward, done, start, **metadata)

    @classmethod
    def from_gymnasium(cls, env, start=None) -> TabularMDP:
        """The exact model of a Gymnasium env, looked up through any wrappers.

        ``env``: a Gymnasium env, wrapped or not. Uses ``env.unwrapped.to_mdp()`` when
        the env has one (every env of this project), else its transition table
        ``env.unwrapped.P`` (FrozenLake, CliffWalking, Taxi). ``start`` (default
        ``None``: the env's own): the initial-state distribution ``[S]``. The env's time
        limit (``env.spec.max_episode_steps``) becomes the model's
        ``max_episode_steps``. An env whose
        ``step`` does more than its table says (Taxi with ``fickle_passenger=True``) is
        refused.
        """
        base = getattr(env, "unwrapped", env)
        limit = getattr(getattr(env, "spec", None), "max_episode_steps", None)
        if hasattr(base, "to_mdp"):
            mdp = base.to_mdp()
            changes = {} if start is None else {"start": start}
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
                                    max_episode_steps=limit)

    @classmethod
    def from_dense(cls, P, R, *, layout: str = "SAS", start=None, terminal=None,
                   **metadata) -> TabularMDP:
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
        return cls(next_state, prob, reward, done, start, **metadata)


def as_mdp(env, name: str = "mdp") -> TabularMDP:
    """A :class:`TabularMDP`, or a Gymnasium env compiled to one (its transition table
    is what the sampler draws from); anything else is a clear error naming ``name``."""
    if isinstance(env, TabularMDP):
        return env
    if hasattr(env, "unwrapped") or hasattr(env, "P"):
        return TabularMDP.from_gymnasium(env)
    raise TypeError(f"{name} must be a tabular.TabularMDP or a Gymnasium env with a "
                    f"transition table, got {type(env).__name__}")


def _outcome(entry, where: str) -> tuple[float, tuple[int, float, bool]]:
    """``(prob, (next_state, reward, terminated))`` of one entry of a Gymnasium ``P``
    table, each checked for its type (no silent ``int(0.7)`` or ``bool("False")``)."""
    try:
        pr, nxt, rew, term = entry
    except (TypeError, ValueError):
        raise MDPError(f"{where} entry {entry!r} is not (prob, next_state, reward, "
                       "terminated)") from None
    for name, value in (("prob", pr), ("reward", rew), ("next_state", nxt)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
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
    a fractional or non-finite index, a flag other than ``True/False/0/1``, text."""
    raw = np.asarray(value)
    if raw.dtype.kind not in "biuf":
        raise MDPError(f"{name} must hold numbers, got dtype {raw.dtype}")
    if kind == "index" and raw.dtype.kind == "f":
        bad = ~(raw == np.round(raw))  # NaN and +-inf fail too
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise MDPError(f"{name}{list(where)} = {raw[where].item()!r} is not a state index")
    if kind == "flag" and raw.dtype.kind != "b":
        bad = ~((raw == 0) | (raw == 1))
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise MDPError(f"{name}{list(where)} = {raw[where].item()!r} is not a flag "
                           "(True/False or 0/1)")
    dtype = {"index": np.int64, "real": np.float64, "flag": np.bool_}[kind]
    return np.array(raw, dtype=dtype, order="C")


def _keys(table, name: str) -> list:
    if isinstance(table, Mapping):
        keys = sorted(table)
        if keys != list(range(len(keys))):
            raise MDPError(f"{name} must be indexed 0..{len(keys) - 1}, got keys {keys[:5]}...")
        return keys
    if isinstance(table, Sequence):
        return list(range(len(table)))
    raise MDPError(f"{name} must be a dict or list, got {type(table).__name__}")
