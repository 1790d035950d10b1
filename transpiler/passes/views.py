"""Writes through views and aliases as the writes into their bases that they are.

An element write is compiled as a new value of the array written (``y = <setitem>(y, i, v)``),
so a write into ``v = y[1:]`` is not seen through ``y``; ``check_writes`` refuses the programs
where it would be. NumPy's meaning is clear, though: ``v`` *is* part of ``y``. When
``check_writes`` finds such a write, it names the writes and the view definitions it certified
(``v = y[s]`` with ``y`` a NumPy array and ``s`` a basic index: integers and slices; ``b = y``,
the same object whatever it is) in ``ctx.views``, and the front end runs again with this pass
spelling the sharing out after each of those writes::

    v = y[1:]                       v = y[1:]
    v[0] *= 3                 ->    v[0] *= 3
    w = y[:2]  (a view too)         y[1:] = v          # into its base (a no-op in NumPy)
    ...                             w = y[:2]          # the other views taken again

Every statement added is one NumPy would execute as a no-op (``v`` still is ``y[1:]``), so the
program means what it meant; written out, the gradient follows it. A definition holds from its
statement until the view, its base or a name its index reads is bound again (element writes and
in-place operators keep it); one made in a branch or a loop body holds there only. The writes
into bases are marked (``Anno.WRITE_BACK``): ``check_writes`` then knows they change no memory
and that their reads of the base see nothing the write changed; it checks the rest as before.

Not spelled out (still refused, with the reason): views a call returns (``np.reshape``, which
may copy), transposes, a write through a view of a view defined in another branch.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import gast

import runtime
from transpiler import ast_util as A
from transpiler.analysis.aliases import WRITES
from transpiler.anno import Anno, getanno, hasanno, setanno


@dataclass(frozen=True)
class Views:
    """What ``check_writes`` asks of this pass (``ctx.views``): the writes to spell out, and
    the view definitions it found certain, each keyed by ``key``."""

    writes: frozenset
    definitions: frozenset


@dataclass(frozen=True)
class _Definition:
    base: str
    index: object  # the index node (None: ``b = y``, the same object)
    reads: frozenset  # the names the index reads


def key(stmt, *names: str) -> tuple:
    """A statement's user statement's position and the variables named: the same in both runs
    of the front end, which makes the same statements up to this pass."""
    origin = getanno(stmt, Anno.ORIGIN, stmt)
    return (getattr(origin, "lineno", None), getattr(origin, "col_offset", None), *names)


def written(stmt) -> str | None:
    """The name an element write, ``append``, scatter or in-place operator writes into."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    target, value = stmt.targets[0].id, stmt.value
    if isinstance(value, gast.Call) and value.args and isinstance(value.args[0], gast.Name) \
            and value.args[0].id == target and any(getanno(value, Anno.FUNC) is f for f in WRITES):
        return target
    if in_place(stmt) == target:
        return target
    return None


def in_place(stmt) -> str | None:
    """The variable whose memory an assignment marked IN_PLACE changes: ``x = x op e`` (from
    ``x op= e``) or ``x = <a changing copy>(..., x, ...)`` (from a call of a helper that changes
    the array ``x`` it is given: passes/objects.py, the mark its position)."""
    if not (isinstance(stmt, gast.Assign) and hasanno(stmt, Anno.IN_PLACE)):
        return None
    value, position = stmt.value, getanno(stmt, Anno.IN_PLACE)
    if isinstance(value, gast.BinOp) and isinstance(value.left, gast.Name):
        return value.left.id
    if isinstance(value, gast.Call) and type(position) is int and position < len(value.args) \
            and isinstance(value.args[position], gast.Name):
        return value.args[position].id
    return None


def definition(stmt) -> tuple[str, str, object] | None:
    """``v = y[s]`` or ``v = y`` (also ``v = rt.sequence(y)``, what a loop over ``y`` walks:
    ``y`` itself but for a dict): (v, y, s or None)."""
    name = A.target_name(stmt)
    if name is None:
        return None
    value = stmt.value
    if isinstance(value, gast.Call) and getanno(value, Anno.FUNC) is runtime.sequence \
            and len(value.args) == 1 and isinstance(value.args[0], gast.Name):
        value = value.args[0]
    if isinstance(value, gast.Name) and value.id != name:
        return name, value.id, None
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
            and value.value.id != name:
        return name, value.value.id, value.slice
    return None


def views(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    asked = getattr(ctx, "views", None)
    if asked is None:
        return fn
    fn.body = _Spelled(asked).block(fn.body, {})
    return fn


class _Spelled:
    def __init__(self, asked: Views):
        self.asked = asked

    def block(self, stmts: list, held: dict) -> list:
        out: list = []
        for stmt in stmts:
            if isinstance(stmt, (gast.If, gast.For, gast.While, gast.Try, gast.With)):
                rebound = _rebound(stmt)
                held = {v: d for v, d in held.items()
                        if not ({v, d.base} | d.reads) & rebound}
                for field in ("body", "orelse", "finalbody"):
                    if getattr(stmt, field, None):
                        setattr(stmt, field, self.block(getattr(stmt, field), dict(held)))
                for handler in getattr(stmt, "handlers", None) or []:
                    handler.body = self.block(handler.body, dict(held))
                out.append(stmt)
                continue
            out.append(stmt)
            name = written(stmt)
            if name is not None:
                if key(stmt, name) in self.asked.writes:
                    out.extend(gast.copy_location(s, stmt) for s in _after(name, held, stmt))
                continue
            stored = A.stored_names_of(stmt)
            held = {v: d for v, d in held.items() if not ({v, d.base} | d.reads) & stored}
            found = definition(stmt)
            if found is not None and key(stmt, *found[:2]) in self.asked.definitions:
                view, base, index = found
                held[view] = _Definition(base, index, frozenset(
                    A.load_names(index) if index is not None else ()))
        return out


def _after(name: str, held: dict, like) -> list:
    """The statements NumPy would run as no-ops after a write into ``name``: the write into its
    base, and its base's, up to the array that is no view; then every other view of that array
    taken again, in the order they were defined."""
    path = [name]
    while path[-1] in held and held[path[-1]].base not in path:
        path.append(held[path[-1]].base)
    root = path[-1]

    def root_of(v):
        seen = [v]
        while v in held and held[v].base not in seen:
            v = held[v].base
            seen.append(v)
        return v

    out = []
    for view in path[:-1]:
        out.append(_write_back(view, held[view], like))
    for view, d in held.items():
        if view not in path and root_of(view) == root:
            value = A.name(d.base) if d.index is None else gast.Subscript(
                value=A.name(d.base), slice=A.copy_node(d.index), ctx=gast.Load())
            new = A.assign(view, value)
            setanno(new, Anno.ORIGIN, getanno(like, Anno.ORIGIN, like))
            out.append(new)
    return out


def _write_back(view: str, d: _Definition, like) -> gast.Assign:
    """``y[s] = v`` (``y = v`` for the same object), marked as changing no memory."""
    if d.index is None:
        new = A.assign(d.base, A.name(view))
    else:
        call = A.call(A.dotted("operator.setitem"), A.name(d.base), A.copy_node(d.index),
                      A.name(view))
        setanno(call, Anno.FUNC, operator.setitem)
        new = A.assign(d.base, call)
    setanno(new, Anno.WRITE_BACK)
    setanno(new, Anno.ORIGIN, getanno(like, Anno.ORIGIN, like))
    return new


def _rebound(stmt) -> set[str]:
    """The names a compound statement binds anywhere inside but by writes into them."""
    out: set[str] = set()
    for node in A.walk(stmt):
        if isinstance(node, gast.stmt) and written(node) is None:
            if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                out |= {n.id for t in targets for n in A.walk(t) if isinstance(n, gast.Name)}
            elif isinstance(node, gast.For):
                out |= {n.id for n in A.walk(node.target) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.ExceptHandler) and node.name is not None:
            out.add(node.name.id if isinstance(node.name, gast.Name) else node.name)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            out.add(node.name)
    return out
