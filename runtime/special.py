"""Runtime helpers of the special rules (NumPy only)."""
