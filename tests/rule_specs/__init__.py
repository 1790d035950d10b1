"""Spec tables of the rule families, one module per family.

Each module in this package defines ``SPECS: list[OpSpec]`` and may define
``FLOAT32: list[tuple[str, tuple]]`` (expression, argument shapes) for the float32 test;
``tests/test_rules.py`` checks every entry against finite differences. Expressions are in the
arguments ``a, b, c`` and may use ``np``, ``math`` and ``special`` (``scipy.special``, or None
when SciPy is not installed: a module of scipy specs then defines none).
"""

from __future__ import annotations

import importlib
import math
import pkgutil

import numpy as np

import runtime

try:
    import scipy.special as special
except ImportError:  # the scipy.special rules are not registered either
    special = None

ARG_NAMES = "abc"
SPEC_GLOBALS = {"np": np, "math": math, "special": special, "rt": runtime}


def discovered(table: str = "SPECS") -> list:
    """The list ``table`` of every module of this package (if it has one), in name order."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name != "common":
            found += getattr(importlib.import_module(f"{__name__}.{info.name}"), table, [])
    return found
