"""Refuse element writes whose effect through a view or alias we would not reproduce.

``y[i] = v`` is compiled as "a new array equal to y, with y[i] = v" (the reverse pass writes
into a copy), so the caller's arrays are never modified and the adjoint can read old values;
``x += e`` likewise becomes ``x = x + e``. That differs from NumPy only when another name shares
memory with the array (``v = y[1:]``, ``b = y``, ``y.T``, ``np.reshape(y, ...)``) and is read
after the write, where NumPy would show the new values. Those programs are refused, never
silently given other numbers.

A function compiled for a call from another one (split mode) must not write into its own
parameters: the caller would see the change in Python, and not here. The parameters a function
writes into are noted (``ctx.written_params``): a call whose arguments share memory with one
of them is refused at run time, since the write would show through the other argument.
"""

from __future__ import annotations

import operator

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.activity import SHAPE_ATTRIBUTES
from transpiler.anno import Anno, getanno, hasanno
from transpiler.errors import error_at
from transpiler.passes import tape

_VIEW_METHODS = frozenset({"reshape", "transpose", "ravel", "squeeze", "view", "swapaxes"})
_VIEW_FUNCTIONS = (np.reshape, np.transpose, np.ravel, np.squeeze, np.asarray, np.atleast_1d,
                   np.atleast_2d, np.atleast_3d, np.swapaxes, np.moveaxis, np.expand_dims,
                   np.broadcast_to, np.asanyarray,
                   # containers holding the same objects: what a loop walks, list(xs), ...
                   runtime.sequence, runtime.values, runtime.items, list, tuple)


def check_writes(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if tape.is_generated(ctx.fn):
        return fn  # generated code (a gradient, differentiated again) writes into copies only
    order: list[tuple[object, tuple]] = []  # (statement, enclosing loops), in program order
    _flatten(fn.body, (), order)
    writes = [(i, s, loops) for i, (s, loops) in enumerate(order)
              if _is_setitem(s) or _in_place(s)]
    if not writes:
        return fn
    alias = _alias_graph(s for s, _ in order)
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    for p, stmt, loops in writes:
        old = stmt.value.args[0].id if _is_setitem(stmt) else stmt.value.left.id
        new = A.target_name(stmt)
        ctx.written_params |= _component(alias, old) & params
        if ctx.called and _component(alias, old) & params:
            raise error_at(stmt, ctx, "a function called from a differentiated function may not "
                           "write into its arguments (the caller would see the change)",
                           "work on a copy (a = a.copy()) and return the new array")
        variable = ctx.facts.variable(old)
        for other in sorted(_component(alias, old) - {old, new}):
            if ctx.facts.variable(other) == variable:
                continue  # another version of the same variable: the same Python name
            bound = [(i, inner) for i, (s, inner) in enumerate(order)
                     if other in A.stored_names_of(s)]
            if bound and all(i > p and not (loops and loops[-1] in inner) for i, inner in bound):
                continue  # bound only after the write (and its loop): it sees the new value
            late = any(other in A.load_names(s) for s, _ in order[p + 1:])
            around = loops and _defined_outside(other, loops[-1], order) and any(
                other in A.load_names(s) for s, inner in order if loops[-1] in inner)
            if late or around:
                theirs = ctx.facts.variable(other)
                if theirs not in ctx.locals:  # a temporary of ours: say where it comes from
                    line = next((getanno(s, Anno.ORIGIN, s).lineno for s, _ in order
                                 if other in A.stored_names_of(s)), "?")
                    theirs = f"the view of it taken on line {line}"
                    hint = "copy the view first (... .copy()), or write into a copy of the array"
                else:
                    theirs = f"'{theirs}'"
                    hint = f"copy it first: {theirs[1:-1]} = <...>.copy(), or write into a copy"
                raise error_at(stmt, ctx, f"this write into '{variable}' would also change "
                               f"{theirs}, which shares its memory and is used after it", hint)
    return fn


def _flatten(stmts: list, loops: tuple, out: list) -> None:
    for stmt in stmts:
        out.append((stmt, loops))
        if isinstance(stmt, gast.If):
            _flatten(stmt.body, loops, out)
            _flatten(stmt.orelse, loops, out)
        elif isinstance(stmt, (gast.For, gast.While)):
            _flatten(stmt.body, loops + (stmt,), out)


def _in_place(stmt) -> bool:
    return hasanno(stmt, Anno.IN_PLACE) and isinstance(stmt.value, gast.BinOp) \
        and isinstance(stmt.value.left, gast.Name)


def _is_setitem(stmt) -> bool:
    """``y = <setitem>(y, i, v)`` or ``xs = rt.appended(xs, v)`` (from ``xs.append(v)``)."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Call) \
        and getanno(stmt.value, Anno.FUNC) in (operator.setitem, runtime.appended,
                                                     runtime.extended)


def _sources(value) -> list[str]:
    """Names whose memory the value of ``value`` may share."""
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return [value.value.id]
    if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name) \
            and value.attr not in SHAPE_ATTRIBUTES:
        return [value.value.id]
    if isinstance(value, (gast.Tuple, gast.List)):
        return [e.id for e in value.elts if isinstance(e, gast.Name)]
    if isinstance(value, gast.Call) and value.args and isinstance(value.args[0], gast.Name):
        func = getanno(value, Anno.FUNC)
        if func in (operator.setitem, runtime.appended, runtime.extended) \
                or any(func is f for f in _VIEW_FUNCTIONS):
            return [value.args[0].id]
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and value.func.attr in _VIEW_METHODS and isinstance(value.func.value, gast.Name):
        return [value.func.value.id]
    return []


def _alias_graph(stmts) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for stmt in stmts:
        target = A.target_name(stmt) if isinstance(stmt, gast.Assign) else None
        for source in _sources(stmt.value) if target else ():
            graph.setdefault(target, set()).add(source)
            graph.setdefault(source, set()).add(target)
    return graph


def _component(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for n in graph.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def _defined_outside(name: str, loop, order) -> bool:
    return any(name in A.stored_names_of(s) for s, inner in order
               if loop not in inner and s is not loop)
