"""Adjoints of NumPy reductions, cumulative and statistical functions."""
