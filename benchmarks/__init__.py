"""Benchmarks, run by ``make bench`` (``python -m benchmarks [NAME ...]``).

Each module ``benchmarks/bench_*.py`` exposes ``main()``, which measures and
prints its own table. Timings live here, never in the tests.
"""
