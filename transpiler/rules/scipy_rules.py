"""Adjoints of ``scipy.special``, registered only when SciPy is importable."""
