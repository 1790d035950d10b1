"""Specs of the shapes rules."""

SPECS: list = []
FLOAT32: list = []
