"""Private Numba kernels: random streams, sampling, DP sweeps, optional arguments.

Nothing here is public API: the functions of :mod:`tabular` check their arguments
and call these. The update rules that users may compose live in :mod:`tabular.rules`.
"""
