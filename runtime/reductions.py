"""Runtime helpers of the reductions rules (NumPy only)."""
