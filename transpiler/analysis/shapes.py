"""Which values a loop assigns with the same shape in every iteration.

The adjoint of a loop iteration often reads a primal value only for its shape (``rt.unbroadcast(g,
x)``). When ``x`` has the same shape in every iteration, the tape need not save it: after the
loop the variable still holds the last iteration's value, whose shape is the one every iteration
had. The heat equation's ``u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])`` is the typical case.

A name assigned in the loop keeps its shape when its single assignment there computes it, by
elementwise operations, basic indexing with loop-invariant indices, copies and element writes,
from names that keep theirs. A loop-carried name (assigned before the loop and copied back at
the end of the body) keeps its shape when the value copied back provably has its shape: the
same shape chain from the name itself (``u_2 = <setitem>(u_1, ...)``, ``x_2 = x_1 + dt * v``
with ``dt`` a number). Anything else (branch joins, unknown calls) is assumed to vary.
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from transpiler import ast_util as A
from transpiler.analysis.scalars import is_scalar
from transpiler.anno import Anno, getanno, hasanno

_SAME_SHAPE = frozenset({np.copy, operator.setitem})  # result shaped like the first argument


def invariant_shapes(loop, scalars: frozenset[str]) -> set[str]:
    """Names assigned in ``loop`` (any depth) whose shape is the same in every iteration."""
    defs: dict[str, list] = {}
    for node in A.walk(loop):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            defs.setdefault(node.targets[0].id, []).append(node)
        elif isinstance(node, (gast.Assign, gast.For)):
            for n in A.walk(node.targets[0] if isinstance(node, gast.Assign) else node.target):
                if isinstance(n, gast.Name):
                    defs.setdefault(n.id, []).append(None)  # unpacking, loop targets: unknown
    keep = set(defs)
    changed = True
    while changed:
        changed = False
        for name in sorted(keep):
            copies = [s for s in defs[name] if s is not None and hasanno(s, Anno.LOOP_COPY)]
            others = [s for s in defs[name] if s not in copies]
            ok = len(others) <= 1 and all(
                s is not None and _kept(s.value, keep, defs, scalars) for s in others) and all(
                _same_as(s.value, name, defs, scalars) for s in copies)
            if not ok:
                keep.discard(name)
                changed = True
    return keep


def _kept(value, keep: set[str], defs: dict, scalars: frozenset[str]) -> bool:
    """Whether ``value``'s shape is the same in every iteration, given names in ``keep`` are."""
    def name_ok(node) -> bool:
        return not isinstance(node, gast.Name) or node.id not in defs or node.id in keep

    if isinstance(value, gast.Name):
        return name_ok(value)
    if isinstance(value, gast.Constant):
        return True
    if isinstance(value, gast.BinOp) and not isinstance(value.op, gast.MatMult):
        return name_ok(value.left) and name_ok(value.right)
    if isinstance(value, gast.UnaryOp):
        return name_ok(value.operand)
    if isinstance(value, gast.Attribute) and value.attr == "T":
        return name_ok(value.value)
    if isinstance(value, gast.Subscript):
        return name_ok(value.value) and _fixed_index(value.slice, defs, scalars)
    if isinstance(value, gast.Call):
        func = getanno(value, Anno.FUNC)
        if func in _SAME_SHAPE or (isinstance(func, np.ufunc) and func.nout == 1):
            operands = value.args[:1] if func in _SAME_SHAPE else value.args
            return not value.keywords and all(name_ok(a) for a in operands)
    return False


def _fixed_index(index, defs: dict, scalars: frozenset[str]) -> bool:
    """An index that selects a same-shaped part in every iteration: numbers, ``None``, slices
    whose bounds the loop does not assign, and scalar positions (a loop counter ``x[i]``)."""
    if isinstance(index, gast.Tuple):
        return all(_fixed_index(e, defs, scalars) for e in index.elts)
    if isinstance(index, gast.Slice):
        return all(p is None or not any(isinstance(n, gast.Name) and n.id in defs
                                        for n in A.walk(p))
                   for p in (index.lower, index.upper, index.step))
    if isinstance(index, gast.Constant):
        return index.value is None or type(index.value) is int or index.value is Ellipsis
    if isinstance(index, gast.Name):
        return index.id not in defs or index.id in scalars
    return isinstance(index, gast.UnaryOp) and isinstance(index.operand, gast.Constant)


def _same_as(value, name: str, defs: dict, scalars: frozenset[str], depth: int = 0) -> bool:
    """Whether ``value`` certainly has the shape ``name`` had when the iteration began."""
    if depth > 50:
        return False
    if isinstance(value, gast.Name):
        if value.id == name:
            return True
        assigned = defs.get(value.id, [])
        return len(assigned) == 1 and assigned[0] is not None \
            and not hasanno(assigned[0], Anno.LOOP_COPY) \
            and _same_as(assigned[0].value, name, defs, scalars, depth + 1)
    if isinstance(value, gast.UnaryOp):
        return _same_as(value.operand, name, defs, scalars, depth + 1)
    if isinstance(value, gast.BinOp) and not isinstance(value.op, gast.MatMult):
        for this, other in ((value.left, value.right), (value.right, value.left)):
            if is_scalar(other, scalars) and _same_as(this, name, defs, scalars, depth + 1):
                return True
        return False
    if isinstance(value, gast.Call) and value.args and not value.keywords:
        func = getanno(value, Anno.FUNC)
        if func in _SAME_SHAPE or (isinstance(func, np.ufunc) and func.nin == 1
                                   and func.nout == 1):
            return _same_as(value.args[0], name, defs, scalars, depth + 1)
    return False
