"""Specs of the elementwise rules."""

SPECS: list = []
FLOAT32: list = []
