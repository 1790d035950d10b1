"""Benchmarks (not part of the test suite; pytest ignores this folder).

Run from the repository root: ``python -m tests.benchmarks.bench_grad`` (whole-array code vs.
hand-written NumPy and peers) or ``python -m tests.benchmarks.bench_elements`` (element-by-element
loops vs. hand-written element-by-element adjoints).
"""
