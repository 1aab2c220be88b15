"""Private Numba building blocks that every family's kernels share: the random streams
(:mod:`~tabular._numba.rng`), the runs driver (:mod:`~tabular._numba.runs`), optional
kernel arguments (:mod:`~tabular._numba.optional`) and graph search over the model's
transitions (:mod:`~tabular._numba.graph`). Nothing here is public API.
"""
