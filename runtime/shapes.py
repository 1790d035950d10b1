"""Runtime helpers of the shapes rules (NumPy only)."""
