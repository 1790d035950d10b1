"""Rewrite sugar into plain single assignments.

- ``x op= e``            -> ``x = x op e`` (also ``y[i] op= e`` -> ``y[i] = y[i] op e``)
- ``y[i] = e``           -> ``y = <setitem>(y, i, e)``, a Call annotated FUNC=operator.setitem:
  a new value of ``y``, so later passes see an ordinary assignment (reverse emits the write)
- ``a = b = e``          -> ``b = e; a = b``
- ``a, b = e1, e2``      -> ``a = e1; b = e2`` (through temporaries when a target is also read)
- ``for v in xs`` (also ``enumerate``, ``zip``, ``reversed``) -> ``for _i in range(...)`` with
  ``v = xs[_i]`` first in the body, so every loop runs over a ``range``
- docstrings and ``pass`` are dropped.

Other tuple targets (``n, m = x.shape``) are kept; the reverse pass accepts them when inactive.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> fn = gast.parse("def f(x, y):\\n    x *= 2\\n    x, y = y, x\\n    return x").body[0]
>>> print(to_source(desugar(fn, SimpleNamespace(namer=Namer({"x", "y"})))))
def f(x, y):
    x = x * 2
    _t1 = y
    _t2 = x
    x = _t1
    y = _t2
    return x
"""

from __future__ import annotations

import operator

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, setanno


def desugar(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    fn.body = _block(fn.body, ctx)
    return fn


def _block(stmts: list, ctx) -> list:
    body = []
    for stmt in stmts:
        if isinstance(stmt, gast.For) and not _over_range(stmt.iter):
            before, stmt = _index_loop(stmt, ctx)
            body.extend(before)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = _block(stmt.body, ctx) or [gast.Pass()]
            stmt.orelse = _block(stmt.orelse, ctx)
            body.append(stmt)
            continue
        for new in _desugar(stmt, ctx):
            setanno(new, Anno.ORIGIN, stmt)
            body.append(gast.copy_location(new, stmt))
    return body


def _desugar(stmt, ctx) -> list:
    if isinstance(stmt, gast.Pass):
        return []
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant):
        return []  # docstring or a bare constant
    if isinstance(stmt, gast.AugAssign):
        read = A.copy_node(stmt.target)
        read.ctx = gast.Load()
        value = gast.copy_location(gast.BinOp(left=read, op=stmt.op, right=stmt.value), stmt)
        target = A.copy_node(stmt.target)
        out = _desugar(gast.Assign(targets=[target], value=value, type_comment=None), ctx)
        if isinstance(stmt.target, gast.Name):
            setanno(out[-1], Anno.IN_PLACE)
        return out
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Subscript):
        return [setitem(stmt.targets[0], stmt.value, stmt)]
    if isinstance(stmt, gast.Assign) and len(stmt.targets) > 1:
        *outer, last = stmt.targets
        first = gast.Assign(targets=[last], value=stmt.value, type_comment=None)
        source = last.id if isinstance(last, gast.Name) else None
        if source is None:
            return [stmt]
        return _desugar(first, ctx) + [
            gast.Assign(targets=[t], value=A.name(source), type_comment=None) for t in outer]
    if isinstance(stmt, gast.Assign) and _literal_unpack(stmt):
        targets, values = stmt.targets[0].elts, stmt.value.elts
        written = {t.id for t in targets}
        if any(n in written for v in values for n in A.load_names(v)):
            temps = [ctx.namer.temp() for _ in values]
            return ([A.assign(t, v) for t, v in zip(temps, values, strict=True)]
                    + [A.assign(t.id, A.name(tmp)) for t, tmp in zip(targets, temps, strict=True)])
        return [A.assign(t.id, v) for t, v in zip(targets, values, strict=True)]
    return [stmt]


def _over_range(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "range"


def _call_of(node, name: str) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == name


def _index_loop(stmt: gast.For, ctx) -> tuple[list, gast.For]:
    """``for v in xs:`` -> ``_s = xs`` / ``for _i in range(len(_s)):`` / ``v = _s[_i]``."""
    index = ctx.namer.fresh("_i")
    iterable, target, offset = stmt.iter, stmt.target, None
    reverse = _call_of(iterable, "reversed")
    if reverse:
        iterable = iterable.args[0]
    if _call_of(iterable, "enumerate"):
        offset = iterable.args[1] if len(iterable.args) > 1 else A.const(0)
        counter, target = target.elts
        iterable = iterable.args[0]
    sources = iterable.args if _call_of(iterable, "zip") else [iterable]
    names = [ctx.namer.fresh("_seq") for _ in sources]
    before = [gast.copy_location(A.assign(n, s), stmt) for n, s in zip(names, sources, strict=True)]
    length = A.call(A.name("len"), A.name(names[0])) if len(names) == 1 else A.call(
        A.name("min"), *[A.call(A.name("len"), A.name(n)) for n in names])
    if reverse:
        bounds = [gast.BinOp(left=length, op=gast.Sub(), right=A.const(1)), A.const(-1),
                  A.const(-1)]
    else:
        bounds = [length]
    items = [gast.Subscript(value=A.name(n), slice=A.name(index), ctx=gast.Load()) for n in names]
    targets = target.elts if len(names) > 1 else [target]
    head = [gast.Assign(targets=[t], value=v, type_comment=None)
            for t, v in zip(targets, items, strict=True)]
    if offset is not None:
        head.insert(0, gast.Assign(targets=[counter], value=gast.BinOp(
            left=A.name(index), op=gast.Add(), right=offset), type_comment=None))
    head = [gast.copy_location(h, stmt) for h in head]
    for h in head:
        setanno(h, Anno.ORIGIN, stmt)
    loop = gast.For(target=A.name(index, store=True), iter=A.call(A.name("range"), *bounds),
                    body=head + stmt.body, orelse=stmt.orelse, type_comment=None)
    return before, gast.copy_location(loop, stmt)


def setitem(target: gast.Subscript, value, like) -> gast.Assign:
    """``y[i] = v`` as ``y = <setitem>(y, i, v)``; the index keeps its slice syntax."""
    base = target.value.id
    call = A.call(A.dotted("operator.setitem"), A.name(base), target.slice, value)
    setanno(call, Anno.FUNC, operator.setitem)
    return gast.copy_location(A.assign(base, gast.copy_location(call, like)), like)


def _literal_unpack(stmt) -> bool:
    target, value = stmt.targets[0], stmt.value
    sequences = (gast.Tuple, gast.List)
    return (isinstance(target, sequences) and isinstance(value, sequences)
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, gast.Name) for t in target.elts))
