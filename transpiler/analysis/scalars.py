"""Which variables are certainly scalars (0-d), whatever the arguments' shapes.

A value is a known scalar when it is a number literal, a ``for`` loop's counter (loops run over
``range``), the result of a ``math`` function, of ``float``/``int``/``len``, of a full reduction
(``np.sum(x)``, ``np.mean(x)`` without ``axis`` or ``keepdims``), or arithmetic on known
scalars, at every assignment of the name (parameters are scalars only in the variant compiled
for Python-number arguments). The adjoint uses this to drop ``rt.unbroadcast`` where the shapes
provably agree."""

from __future__ import annotations

import math

import gast
import numpy as np

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno

_SCALAR_FUNCTIONS = frozenset({float, int, len, abs})
_FULL_REDUCTIONS = frozenset({np.sum, np.mean})


def is_number(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def is_scalar(node, scalars: set[str]) -> bool:
    """Whether expression ``node`` certainly evaluates to a scalar, given scalar names."""
    if is_number(node):
        return True
    if isinstance(node, gast.Name):
        return node.id in scalars
    if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
        return is_scalar(node.left, scalars) and is_scalar(node.right, scalars)
    if isinstance(node, gast.UnaryOp):
        return is_scalar(node.operand, scalars)
    if isinstance(node, gast.Call):
        func = getanno(node, Anno.FUNC)
        if getattr(func, "__module__", None) == "math" or _is(func, _SCALAR_FUNCTIONS):
            return func is not abs or all(is_scalar(a, scalars) for a in node.args)
        if _is(func, _FULL_REDUCTIONS):
            return len(node.args) == 1 and not node.keywords
    return False


def known_scalars(body: list, params: frozenset[str] = frozenset()) -> set[str]:
    """Known scalars of ``body``, given parameters ``params`` known to be numbers."""
    scalars: set[str] = set(params)

    def scalar(node) -> bool:
        return is_scalar(node, scalars)

    assigned: dict[str, list] = {}
    for node in (n for s in body for n in A.walk(s)):
        if isinstance(node, gast.Assign):
            for t in node.targets:
                for n in A.walk(t):
                    if isinstance(n, gast.Name):
                        value = node.value if isinstance(t, gast.Name) else None
                        if isinstance(value, gast.Constant) and value.value is None:
                            continue  # ssa's "not assigned on this path" placeholder
                        assigned.setdefault(n.id, []).append(value)
        elif isinstance(node, gast.For):  # over range(...): an int
            assigned.setdefault(node.target.id, []).append(A.const(0))
    # Greatest fixed point: assume every assigned name is a scalar, then drop those with an
    # assignment that may not be, until none changes. Loop-carried values (x = x + dt * v) stay
    # scalars when they start as scalars and every update keeps them so.
    scalars |= set(assigned)
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name in scalars and not all(v is not None and scalar(v) for v in values):
                scalars.discard(name)
                changed = True
    return scalars


def _is(func, group: frozenset) -> bool:
    try:
        return func in group
    except TypeError:
        return False


assert math.sin.__module__ == "math"  # the test above relies on it
