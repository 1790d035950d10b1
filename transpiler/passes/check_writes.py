"""Refuse element writes whose effect through a view or alias we would not reproduce.

``y[i] = v`` is compiled as "a new array equal to y, with y[i] = v" (the reverse pass writes
into a copy), so the caller's arrays are never modified and the adjoint can read old values;
``x += e`` likewise becomes ``x = x + e``. That differs from NumPy only when a value sharing
memory with the array (``v = y[1:]``, ``b = y``, ``y.T``, ``np.reshape(y, ...)``, a list holding
``y``, the array a loop walks) is read after the write, where NumPy would show the new values.
Which values share memory, and which are read later, is ``analysis.aliases``: a copy,
arithmetic or a fresh array shares none, rebinding a name ends its old aliases, a container's
slots are tracked key by key. Where every such write is through a view this pass can certify
(``v = y[s]`` of an array by a basic index, ``b = y``), it raises ``ThroughViews`` and the
front end runs again with ``passes/views.py`` writing each of them into its base
(``y[1:] = v``, marked WRITE_BACK: no memory changes) and taking the other views again; what
is still seen then is refused, never silently given other numbers.

A function compiled for a call from another one (split mode) must not write into its own
parameters: the caller would see the change in Python, and not here. The parameters a function
writes into are noted (``ctx.written_params``): a call whose arguments share memory with one
of them is refused at run time, since the write would show through the other argument.
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.analysis.aliases import RESIZES, WRITES, Aliases, basic_index, integers
from transpiler.anno import Anno, getanno, hasanno
from transpiler.errors import error_at
from transpiler.passes import tape, views
from transpiler.passes.objects import MUTATES
from transpiler.passes.views import Views


class ThroughViews(Exception):
    """Raised (once) when a write would be seen through views this pass can certify: the front
    end runs again with ``passes/views.py`` spelling the writes out (``found.views``)."""

    def __init__(self, views: Views):
        super().__init__("writes through views to spell out")
        self.views = views


def check_writes(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if tape.is_generated(ctx.fn):
        return fn  # generated code (a gradient, differentiated again) writes into copies only
    statements = list(_statements(fn.body))
    writes = [s for s in statements if _is_setitem(s) or _in_place(s)]
    if not writes:
        return fn
    aliases = Aliases(fn, ctx, {id(s) for s in writes})
    refused, seen = None, set()
    for stmt in writes:
        old = stmt.value.args[0].id if _is_setitem(stmt) else views.in_place(stmt)
        params = aliases.written(stmt, old)
        ctx.written_params |= params
        if ctx.called and params - set(getattr(ctx.fn, MUTATES, ())):  # (a changing copy
            # returns what it changes: its caller rebinds them)
            raise error_at(stmt, ctx, "a function called from a differentiated function may not "
                           "write into its arguments (the caller would see the change)",
                           "work on a copy (a = a.copy()) and return the new array")
        if hasanno(stmt, Anno.WRITE_BACK):
            continue  # v's values written into y[s], of which v is a view: no memory changes
        resizes = _is_setitem(stmt) and any(getanno(stmt.value, Anno.FUNC) is f
                                            for f in RESIZES)
        conflicts = aliases.conflicts(stmt, old, A.target_name(stmt), rows=not resizes)
        if not conflicts:
            continue
        seen.add(views.key(stmt, ctx.facts.variable(old)))
        if refused is None:
            refused = _refusal(stmt, old, conflicts[0], fn, ctx)
    if refused is None:
        return fn
    definitions = _certain_views(statements, aliases, ctx)
    if ctx.views is None and definitions:
        raise ThroughViews(Views(frozenset(seen), definitions))
    raise refused


def _refusal(stmt, old: str, conflict, fn, ctx):
    theirs = _describe(conflict, fn, ctx)
    hint = f"copy it first: {theirs[1:-1]} = <...>.copy(), or write into a copy" \
        if theirs.startswith("'") else \
        "copy the view first (... .copy()), or write into a copy of the array"
    return error_at(stmt, ctx, f"this write into '{ctx.facts.variable(old)}' would also "
                    f"change {theirs}, which shares its memory and is used after it", hint)


def _certain_views(statements: list, aliases: Aliases, ctx) -> frozenset:
    """The keys (``views.key``) of the definitions ``v = y[s]`` of a view of an array ``y``
    known to be one, by a basic index (integers and slices, fewer than its axes), and of
    ``b = y`` (the same object) for ``y`` a variable of the function."""
    found = set()
    for stmt in statements:
        defined = views.definition(stmt)
        if defined is None:
            continue
        view, base, index = defined
        variables = ctx.facts.variable(view), ctx.facts.variable(base)
        if index is None and isinstance(stmt.value, gast.Call):  # rt.sequence(y): y if an array
            certain = aliases.arrays(stmt, base)
        elif index is None:
            certain = variables[1] in ctx.locals
        else:
            rank = ctx.facts.ranks.get(base)
            certain = aliases.is_view(stmt) or rank is not None and basic_index(
                index, ctx.facts.scalars) and integers(index, ctx.facts.scalars) != rank
        if certain:
            found.add(views.key(stmt, *variables))
    return frozenset(found)


def _describe(conflict, fn, ctx) -> str:
    if isinstance(conflict, (gast.For, gast.While)):
        return f"the array the loop on line {_line(conflict)} walks"
    variable = ctx.facts.variable(conflict)
    bound = next((s for s in _statements(fn.body) if conflict in A.stored_names_of(s)), None)
    if variable in ctx.locals or bound is None:  # the user's variable, or a global
        return f"'{variable}'"
    return f"the view of it taken on line {_line(bound)}"


def _line(stmt):
    return getanno(stmt, Anno.ORIGIN, stmt).lineno


def _statements(stmts: list):
    for stmt in stmts:
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, field, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _statements(handler.body)


def _in_place(stmt) -> bool:
    return views.in_place(stmt) is not None


def _is_setitem(stmt) -> bool:
    """``y = <setitem>(y, i, v)``, ``xs = rt.appended(xs, v)`` (from ``xs.append(v)``) or a
    scatter, ``y = rt.put_along(y, i, v, axis)`` (from ``np.put_along_axis(y, i, v, axis)``)."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Call) \
        and stmt.value.args and isinstance(stmt.value.args[0], gast.Name) \
        and any(getanno(stmt.value, Anno.FUNC) is f for f in WRITES)
