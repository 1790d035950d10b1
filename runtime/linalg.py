"""Runtime helpers of the linalg rules (NumPy only)."""
