"""Compute loop-invariant negations once, before the loop, and identical ones once.

``a1 = -k * x`` in a time-stepping loop becomes (after anf) ``_t2 = -k`` / ``a1 = _t2 * x``.
When the loop never assigns ``k``, ``_t2`` is the same in every iteration: it moves before the
loop (and the second ``-k`` of the body reuses it), so the primal does not recompute it and the
adjoint does not tape it every iteration. Only what cannot raise moves (a zero-trip loop would
otherwise start raising): negations, and ``+``, ``-``, ``*`` of numbers. Only temporaries
assigned once and at the top level of the loop body move.

>>> import gast
>>> from transpiler.emit import to_source
>>> from types import SimpleNamespace
>>> src = ("def f(k, x):\\n    for i in range(3):\\n        _t1 = -k\\n        x = _t1 * x\\n"
...        "    return x")
>>> print(to_source(hoist(gast.parse(src).body[0], SimpleNamespace(scalars=frozenset()))))
def f(k, x):
    _t1 = -k
    for i in range(3):
        x = _t1 * x
    return x
"""

from __future__ import annotations

from collections import Counter

import gast

from transpiler import ast_util as A
from transpiler.analysis.scalars import known_scalars
from transpiler.passes.ssa import stored_names


def hoist(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    stores = Counter(n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                     and not isinstance(n.ctx, gast.Load))
    scalars = known_scalars(fn.body, ctx.scalars)
    renames: dict[str, str] = {}
    fn.body = _block(fn.body, stores, scalars, renames)
    if renames:
        for n in A.walk(fn):
            if isinstance(n, gast.Name) and n.id in renames:
                n.id = renames[n.id]
    return fn


def _block(stmts: list, stores: Counter, scalars: set[str], renames: dict) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = _block(stmt.body, stores, scalars, renames) or [gast.Pass()]
            stmt.orelse = _block(stmt.orelse, stores, scalars, renames)
        if isinstance(stmt, (gast.For, gast.While)):
            varying = stored_names(stmt.body) | stored_names([stmt.target] if isinstance(
                stmt, gast.For) else [])
            moved = [s for s in stmt.body if _invariant(s, varying, stores, scalars)]
            stmt.body = [s for s in stmt.body if not any(s is m for m in moved)] or [gast.Pass()]
            first: dict[str, str] = {}  # the value of a moved statement -> its name
            for s in moved:
                key = gast.dump(s.value)
                if key in first:
                    renames[A.target_name(s)] = first[key]
                else:
                    first[key] = A.target_name(s)
                    out.append(s)
        out.append(stmt)
    return out


def _invariant(stmt, varying: set[str], stores: Counter, scalars: set[str]) -> bool:
    target = A.target_name(stmt)
    if target is None or stores[target] != 1:
        return False
    value = stmt.value
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
        operands = [value.operand]
    elif isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Sub, gast.Mult)):
        operands = [value.left, value.right]
        if not all(isinstance(o, gast.Constant) or o.id in scalars for o in operands
                   if isinstance(o, (gast.Name, gast.Constant))):
            return False
    else:
        return False
    return all(isinstance(o, gast.Constant) and type(o.value) in (int, float)
               or isinstance(o, gast.Name) and o.id not in varying for o in operands)
