"""Spec tables of the rule families, one module per family.

Each module in this package defines ``SPECS: list[OpSpec]`` and may define
``FLOAT32: list[tuple[str, tuple]]`` (expression, argument shapes) for the float32 test;
``tests/test_rules.py`` checks every entry against finite differences. Expressions are in the
arguments ``a, b, c`` and may use ``np``, ``math``, ``rt``, the record classes ``Rec`` and
``Pair`` (common.py) and ``special`` (``scipy.special``, or None
when SciPy is not installed: a module of scipy specs then defines none).
"""

from __future__ import annotations

import ast
import cmath
import importlib
import math
import pkgutil

import numpy as np

import runtime
from tests.rule_specs.common import Pair, Rec

try:
    import scipy.fft as sfft
    import scipy.special as special
except ImportError:  # the scipy.special and scipy.fft rules are not registered either
    special = sfft = None

ARG_NAMES = "abc"
SPEC_GLOBALS = {"np": np, "math": math, "cmath": cmath, "special": special, "sfft": sfft,
                "rt": runtime, "Rec": Rec, "Pair": Pair}


def runs_here(expr: str) -> bool:
    """Whether every ``np.x.y`` / ``math.x`` / ``special.x`` that ``expr`` names exists on this
    Python and NumPy (``np.vecdot`` is NumPy 2 only, ``math.cbrt`` Python 3.11+)."""
    for node in ast.walk(ast.parse(expr)):
        path = []
        while isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        if path and isinstance(node, ast.Name) and SPEC_GLOBALS.get(node.id) is not None:
            obj = SPEC_GLOBALS[node.id]
            for part in reversed(path):
                if not hasattr(obj, part):
                    return False
                obj = getattr(obj, part)
    return True


def discovered(table: str = "SPECS") -> list:
    """The list ``table`` of every module of this package (if it has one), in name order, less
    the entries for functions this Python or NumPy does not have (``common.newer`` gave them no
    key, or their expression names a missing function): those rules are not registered here."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name != "common":
            found += getattr(importlib.import_module(f"{__name__}.{info.name}"), table, [])
    return here(found)


def here(entries: list) -> list:
    """``entries`` less those for functions or keywords this Python or NumPy does not have."""
    return [entry for entry in entries if entry is not None and runs_here(_expression(entry))
            and not _needs_newer_numpy(entry)]


def _needs_newer_numpy(entry) -> bool:
    oldest = getattr(entry, "numpy", None)
    return oldest is not None and np.lib.NumpyVersion(np.__version__) < oldest


def _expression(entry) -> str:
    expr = entry[0] if isinstance(entry, tuple) else entry.expr
    return expr.replace("; ", "\n")
