"""Benchmarks (not part of the test suite; pytest ignores this folder).

Run from the repository root: ``python -m tests.benchmarks.bench_grad``.
"""
