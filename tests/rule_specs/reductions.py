"""Specs of the reductions rules."""

SPECS: list = []
FLOAT32: list = []
