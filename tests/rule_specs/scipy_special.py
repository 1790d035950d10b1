"""Specs of the scipy_special rules."""

SPECS: list = []
FLOAT32: list = []
