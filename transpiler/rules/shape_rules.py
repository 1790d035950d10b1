"""Adjoints of NumPy shape manipulation, assembly, splitting and reordering."""
