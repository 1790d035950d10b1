"""Release arrays as soon as they are dead: ``del _t1`` after the last statement that reads it.

A Python function keeps every local alive until it returns, so without this an adjoint holds
each array the primal computed through the whole backward sweep, next to the gradients it is
computing. Only names certainly holding arrays (analysis.shapes knew their shape in the primal: the
variant for array arguments) are released, only at the top level of the function (in a loop each
iteration rebinds them anyway), and only names some top-level statement assigns, so the name is
bound wherever the ``del`` runs. Scalar code and the general variant are left as they are.
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.analysis.shapes import SCALAR


def release(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    body = fn.body
    if not ctx.arrays:  # no argument known to be an array: no value known to be one
        return fn
    keys = ctx.facts.shapes
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    assigned = {A.target_name(s) for s in body if isinstance(s, gast.Assign)} - {None}
    arrays = {n for n in assigned - params if keys.known(n) and keys.keys.get(n) != SCALAR}
    if not arrays:
        return fn
    first: dict[str, int] = {}  # the top-level statement that first assigns each name
    last: dict[str, int] = {}  # the last top-level statement that mentions it
    for i, stmt in enumerate(body):
        target = A.target_name(stmt) if isinstance(stmt, gast.Assign) else None
        if target in arrays:
            first.setdefault(target, i)
        for n in A.walk(stmt):
            if type(n) is gast.Name and n.id in arrays:
                last[n.id] = i
    end = len(body) - 1 if body and isinstance(body[-1], gast.Return) else len(body)
    after: dict[int, list[str]] = {}
    for name, i in last.items():  # (just before the return, a del frees nothing sooner)
        if first[name] <= i < end - 1:
            after.setdefault(i, []).append(name)
    out = []
    for i, stmt in enumerate(body):
        out.append(stmt)
        if i in after:
            targets = [A.name(n) for n in sorted(after[i])]
            for t in targets:
                t.ctx = gast.Del()
            out.append(gast.copy_location(gast.Delete(targets=targets), stmt))
    fn.body = out
    return fn
