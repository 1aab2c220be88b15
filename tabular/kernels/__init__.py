"""Private Numba kernels: random streams (``rng``), sampling (``sampling``), policy-gradient
rollouts (``rollout``) and the batches of PPO and TRPO (``episode_batch``), DP sweeps
(``dp``), graph search (``graph``), optional arguments (``optional``), planning's learned
model, priority queue and predecessor lists (``planning``), and the forward evaluation of
a policy's start value (``evaluation``).

Nothing here is public API: the functions of :mod:`tabular` check their arguments
and call these. The update rules that users may compose live in :mod:`tabular.rules`.
"""
