"""Specs of the linalg rules."""

SPECS: list = []
FLOAT32: list = []
