"""Adjoints of NumPy linear algebra: products, contractions, decompositions and solvers."""
