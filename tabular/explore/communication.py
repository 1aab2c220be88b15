"""The communication structure of a model, read from its transition graph (Puterman, 1994,
section 8.3): its maximal end components, its communication class, and the expected
hitting times that make its diameter (Jaksch, Ortner & Auer, 2010, Definition 1).

These concern the continuing chain. An outcome that ends the episode restarts it from
the start distribution (the episodic model seen as a continuing one, the view of the
average-reward regret bounds), so the reset is part of the graph.
"""

from __future__ import annotations

import numpy as np

from tabular.model.mdp import TabularMDP

ERGODIC = "ergodic"
COMMUNICATING = "communicating"
WEAKLY_COMMUNICATING = "weakly communicating"
MULTICHAIN = "not weakly communicating"


def continuing_kernel(mdp: TabularMDP) -> tuple[np.ndarray, np.ndarray]:
    """``(P [S, A, S], r [S, A])`` of the continuing chain: outcomes that end the episode
    restart from ``mdp.start``."""
    S, A, K = mdp.prob.shape
    P = np.zeros((S, A, S))
    rows, cols = np.arange(S)[:, None], np.arange(A)[None, :]
    for k in range(K):
        on = mdp.prob[:, :, k]
        np.add.at(P, (rows, cols, mdp.next_state[:, :, k]), on * ~mdp.done[:, :, k])
        P += (on * mdp.done[:, :, k])[:, :, None] * mdp.start[None, None, :]
    return P, mdp.expected_reward()


def reachability(adjacency: np.ndarray) -> np.ndarray:
    """bool ``[S, S]``: ``R[s, t]`` when a path of the graph ``adjacency`` (bool ``[S, S]``)
    leads from ``s`` to ``t`` (every state reaches itself), by repeated squaring."""
    R = adjacency | np.eye(adjacency.shape[0], dtype=bool)
    while True:
        wider = (R.astype(np.float32) @ R.astype(np.float32)) > 0.0
        if (wider == R).all():
            return R
        R = wider


def end_components(support: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximal end components of the graph ``support`` (bool ``[S, A, S]``, the
    successors of positive probability) by the standard refinement (de Alfaro, 1997):
    split the states into strongly connected components of the allowed actions, forbid
    every action that may leave its state's component (or enter a state with no action
    left), and repeat until nothing changes.

    Returns ``(component [S], allowed [S, A])``: ``component[s]`` labels the end component
    of ``s`` (the smallest state in it), ``-1`` for a state in none (transient under
    every policy); ``allowed`` the actions that keep each component closed.
    """
    S, A, _ = support.shape
    allowed: np.ndarray = support.any(axis=2)  # type: ignore[assignment]  # .any(axis=) of an array is an array
    alive = np.ones(S, dtype=bool)
    while True:
        graph = (support & allowed[:, :, None]).any(axis=1) & alive[None, :] & alive[:, None]
        R = reachability(graph)
        mutual = R & R.T
        component = np.where(alive, np.argmax(mutual, axis=1), -1)
        same = component[:, None] == component[None, :]  # [S, S']
        leaves = (support & ~(same & alive[None, :])[:, None, :]).any(axis=2)
        now = allowed & ~leaves & alive[:, None]
        now_alive = alive & now.any(axis=1)
        if (now == allowed).all() and (now_alive == alive).all():
            return component, allowed
        allowed, alive = now, now_alive


def communication_class(support: np.ndarray) -> str:
    """``"ergodic"`` (every stationary policy's chain is one recurrent class),
    ``"communicating"`` (every state reaches every other under some policy), ``"weakly
    communicating"`` (one closed communicating class plus states transient under every
    policy) or ``"not weakly communicating"``.

    Weakly communicating means exactly one maximal end component: every recurrent class
    of every policy lies in an end component. Ergodic: no policy can keep away from
    any state ``t`` forever, i.e. for every ``t`` the largest set of other states that
    some action of each keeps closed is empty (the recurrence test below).
    """
    S = support.shape[0]
    component, _ = end_components(support)
    labels = set(component[component >= 0].tolist())
    if len(labels) != 1:
        return MULTICHAIN
    if (component < 0).any():
        return WEAKLY_COMMUNICATING
    for t in range(S):
        avoid = np.arange(S) != t  # the states that may stay away from t forever
        while True:  # s stays away if some action leads only into avoid
            stays = ~(support & ~avoid[None, None, :]).any(axis=2)
            now = avoid & stays.any(axis=1)
            if (now == avoid).all():
                break
            avoid = now
        if avoid.any():
            return COMMUNICATING
    return ERGODIC


def hitting_times(P: np.ndarray, target: int) -> np.ndarray:
    """``T[s]``: the least expected number of steps from ``s`` to ``target`` over all
    policies (0 at the target, ``inf`` where no policy reaches it with probability 1),
    by policy iteration on the stochastic shortest-path problem (Bertsekas &
    Tsitsiklis, 1991) from a policy that moves closer to the target along the graph,
    which is proper; each evaluation is an exact linear solve, so the result is exact
    to rounding."""
    support = P > 0.0
    reach = np.ones(P.shape[0], dtype=bool)
    while True:  # the states that reach the target surely: shrink until stable
        usable: np.ndarray = ~(support & ~reach[None, None, :]).any(axis=2)  # type: ignore[assignment]  # .any(axis=) of an array is an array
        policy, found = _moves_closer(support, usable, target)
        if (found == reach).all():
            break
        reach = found
    others = reach.copy()
    others[target] = False
    index = np.flatnonzero(others)
    T = np.where(reach, 0.0, np.inf)
    while True:
        P_pi = P[index, policy[index]][:, index]
        T[index] = np.linalg.solve(np.eye(index.size) - P_pi, np.ones(index.size))
        Q = 1.0 + P[index] @ np.where(reach, T, 0.0)
        Q[~usable[index]] = np.inf
        current = Q[np.arange(index.size), policy[index]]
        better = Q.min(axis=1) < current - 1e-12 * (1.0 + current)
        if not better.any():
            return T
        policy[index[better]] = np.argmin(Q[better], axis=1)


def _moves_closer(support, usable, target) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first search backwards from ``target`` through the ``usable`` actions:
    ``(policy [S], found [S])``, ``policy[s]`` an action that may step one level closer,
    ``found`` the states from which such steps lead to the target."""
    S = support.shape[0]
    found = np.zeros(S, dtype=bool)
    found[target] = True
    policy = np.zeros(S, dtype=np.int64)
    frontier = found.copy()
    while frontier.any():
        moves = support[:, :, frontier].any(axis=2) & usable & ~found[:, None]
        frontier = moves.any(axis=1)
        policy[frontier] = np.argmax(moves[frontier], axis=1)
        found |= frontier
    return policy, found
