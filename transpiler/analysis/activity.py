"""Activity analysis: which variables need an adjoint.

A variable is *varied* when its value depends on a differentiated argument, and *useful* when
it reaches the returned value. Only variables that are both are *active*; only active
assignments get adjoint code. Non-differentiable calls (``np.floor``, ``len``), comparisons and
shape queries produce values that are never varied.
"""

from __future__ import annotations

import operator

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import UNDIFFERENTIATED

SHAPE_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype"})
NONDIFF_METHODS = frozenset({"argmax", "argmin", "argsort", "nonzero", "any", "all"})


def _targets(stmt) -> list[str]:
    if isinstance(stmt, gast.Assign):
        return [n.id for t in stmt.targets for n in A.walk(t) if isinstance(n, gast.Name)]
    return []


def never_varied(value) -> bool:
    if isinstance(value, (gast.Compare, gast.BoolOp)):
        return True
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not):
        return True
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.FloorDiv):
        return True  # piecewise constant, like np.floor_divide
    if isinstance(value, gast.Attribute) and value.attr in SHAPE_ATTRIBUTES:
        return True
    if isinstance(value, gast.Call):
        if isinstance(value.func, gast.Attribute) and value.func.attr in NONDIFF_METHODS \
                and getanno(value, Anno.FUNC) is None:
            return True
        func = getanno(value, Anno.FUNC)
        try:
            return func in NONDIFF
        except TypeError:  # unhashable callable
            return False
    return False


def reads(value) -> set[str]:
    """The names a value depends on differentiably: an index (``x[i]``, ``y[i] = v``) is an
    integer position, piecewise constant, so it is left out."""
    if isinstance(value, gast.Subscript):
        return set(A.load_names(value.value))
    if isinstance(value, gast.Call) and getanno(value, Anno.FUNC) is operator.setitem:
        return set(A.load_names(value.args[0])) | set(A.load_names(value.args[2]))
    if isinstance(value, gast.Call) and value.keywords:
        try:
            unread = UNDIFFERENTIATED.get(getanno(value, Anno.FUNC), ())
        except TypeError:  # unhashable callable
            unread = ()
        if unread:  # (a solver's preconditioner M=...: the solution does not depend on it)
            return set().union(*(A.load_names(n) for n in [value.func, *value.args] + [
                k.value for k in value.keywords if k.arg not in unread]))
    return set(A.load_names(value))


def _edges(body: list) -> list:
    return [(set(_targets(n)), reads(n.value), never_varied(n.value))
            for s in body for n in A.walk(s) if isinstance(n, gast.Assign)]


def _varied(edges: list, wrt: tuple[str, ...]) -> set[str]:
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for targets, reads, never in edges:
            if not never and reads & varied and not targets <= varied:
                varied |= targets
                changed = True
    return varied


def activity(body: list, wrt: tuple[str, ...], results: list) -> tuple[set[str], set[str]]:
    """``(active, varied)``: names whose value may depend on ``wrt``, and of those the ones
    that reach ``results``. Flow-insensitive, to a fixed point: loops and branch joins need no
    special case."""
    edges = _edges(body)
    varied = _varied(edges, wrt)
    useful = {r for r in results if r}
    changed = True
    while changed:
        changed = False
        for targets, reads, never in edges:  # no gradient flows through comparisons etc.
            if not never and targets & useful and not reads <= useful:
                useful |= reads
                changed = True
    return varied & useful, varied
