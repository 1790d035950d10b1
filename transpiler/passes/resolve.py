"""Record the Python object each call refers to, whatever the user's import spelling.

``np.sin``, ``numpy.sin``, ``from numpy import sin as s`` and ``math.sin`` are looked up in the
function's closure, globals and builtins, and the object is stored on the Call as Anno.FUNC, so
rules are found by identity. The root name of each resolved call (``np`` in ``np.sin``) is bound
in the generated function to the object seen now: primal and adjoint always agree on which
function was called. The global and builtin roots are listed (``ctx.snapshots``), and so is
each dotted name they are called by (``np.sin``): when the user rebinds one (re-executes a
helper's ``def``, or a test mocks ``np.sin``), the compiled gradient is stale and is compiled
again on its next call.
Calls on local values (methods) are left unresolved; the reverse pass decides about them.
A call of a function picked from a table (``ACTS[name](x)``) becomes a choice among the
functions the table holds, each a call resolved as any other (``_Tables``).

A subscript of a global object that is not an array or a container computes with its index:
``np.r_[a, 1:3, b]`` and ``np.c_[a, b]`` join their items, so they become calls with rules,
``rt.index_join(np.r_, (a, slice(1, 3, None), b))``; any other (``np.s_``, ``np.mgrid``, a
user's object with ``__getitem__``) is marked (Anno.INDEXER), and check_kinds refuses it when
its index is differentiated. (An index into an array, a list or a dict is a position, with no
gradient.)
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno, setanno
from transpiler.errors import error_at
from transpiler.naming import function_name

_MISSING = object()
_AXIS_CONCATENATOR = type(np.r_).__mro__[-2]  # what np.r_ and np.c_ are (NumPy keeps it private)


def resolve(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    local = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    fn = _Tables(local, ctx).visit(fn)
    fn = _Indexers(local, ctx).visit(fn)
    for node in A.walk(fn):
        if isinstance(node, gast.Call) and not hasanno(node, Anno.FUNC):  # (lifted: known)
            obj, root = _evaluate(node.func, local, ctx)
            if obj is _MISSING:
                raise error_at(node.func, ctx, f"name '{root}' is not defined",
                               "define or import it before the gradient is first called")
            if obj is not None:
                setanno(node, Anno.FUNC, obj)
                ctx.bindings.setdefault(root, ctx.lookup(root))
                if root not in ctx.fn.__code__.co_freevars:
                    ctx.snapshots[root] = ctx.bindings[root]
                    dotted = _dotted(node.func)
                    if dotted != root and _stable(ctx.bindings[root], dotted, obj):
                        ctx.snapshots[dotted] = obj  # np.sin = np.cos: compiled again
                    if dotted is not None:
                        watch_defaults(ctx, dotted, obj)
    return fn


class _Tables(gast.NodeTransformer):
    """``TABLE[k](x)``, a function picked from a dict, list or tuple of functions: of the
    module's (or a closure's), a choice among the functions it holds now, by identity, ``relu(x)
    if ACTS[k] is relu else tanh(x) if ACTS[k] is tanh else rt.unknown_function(ACTS[k])``; of
    a dict literal with constant keys, by key, ``relu(x) if k == "relu" else ...``. Each branch
    is a call of a known function (its rule, or its compiled pair); the key is a name or a
    constant, read again in each test."""

    def __init__(self, local: set[str], ctx) -> None:
        self.local, self.ctx = local, ctx

    def visit_Call(self, node):
        self.generic_visit(node)
        picked = node.func
        if not (isinstance(picked, gast.Subscript) and isinstance(picked.slice, (
                gast.Name, gast.Constant, gast.UnaryOp))):
            return node
        table = picked.value
        if isinstance(table, gast.Dict) and table.keys and all(
                isinstance(k, gast.Constant) for k in table.keys):
            choices = [(gast.Compare(left=A.copy_node(picked.slice), ops=[gast.Eq()],
                                     comparators=[A.copy_node(k)]), A.copy_node(v))
                       for k, v in zip(table.keys, table.values, strict=True)]
            missing = A.call(A.builtin("dict"), gast.List(elts=[], ctx=gast.Load()))
            missing = gast.Subscript(value=missing, slice=A.copy_node(picked.slice),
                                     ctx=gast.Load())  # ({}[k]: Python's KeyError)
        elif isinstance(table, (gast.Name, gast.Attribute)):
            held, _ = _evaluate(table, self.local, self.ctx)
            values = list(held.values()) if isinstance(held, dict) else list(held) \
                if isinstance(held, (list, tuple)) else []
            if not values or not all(callable(v) and not isinstance(v, type) for v in values):
                return node
            choices, seen = [], set()
            for value in values:
                if id(value) in seen:
                    continue
                seen.add(id(value))
                name = A.name(self.ctx.bind(function_name(value), value))
                test = gast.Compare(left=A.copy_node(picked), ops=[gast.Is()],
                                    comparators=[A.copy_node(name)])
                setanno(name, Anno.FUNC, value)
                choices.append((test, name))
            missing = A.call(A.dotted(f"{self.ctx.bind('rt', runtime)}.unknown_function"),
                             A.copy_node(picked), A.const(gast.unparse(picked).strip()))
            setanno(missing, Anno.FUNC, runtime.unknown_function)
        else:
            return node
        out = missing
        for test, func in reversed(choices):
            call = gast.copy_location(gast.Call(func=func, args=A.copy_node(node.args),
                                                keywords=A.copy_node(node.keywords)), node)
            if hasanno(func, Anno.FUNC):
                setanno(call, Anno.FUNC, getanno(func, Anno.FUNC))
            out = gast.copy_location(gast.IfExp(test=test, body=call, orelse=out), node)
        return out


class _Indexers(gast.NodeTransformer):
    """Subscripts of global objects that compute with their index: ``np.r_``/``np.c_`` as
    ``rt.index_join`` calls, the others marked."""

    def __init__(self, local: set[str], ctx) -> None:
        self.local, self.ctx = local, ctx

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) \
                or not isinstance(node.value, (gast.Name, gast.Attribute)):
            return node
        obj, _ = _evaluate(node.value, self.local, self.ctx)
        if obj is None or obj is _MISSING or _plain_container(obj):
            return node
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if isinstance(obj, _AXIS_CONCATENATOR) and not any(
                isinstance(i, gast.Constant) and isinstance(i.value, str) and i.value in "rc"
                for i in items):  # (the directives "r" and "c" make an np.matrix)
            join = f"{self.ctx.bind('rt', runtime)}.index_join"
            args = gast.Tuple(elts=[A.index_expression(i) for i in items], ctx=gast.Load())
            call = gast.copy_location(A.call(A.dotted(join), node.value, args), node)
            setanno(call, Anno.FUNC, runtime.index_join)
            return call
        setanno(node, Anno.INDEXER, _dotted(node.value))
        return node


def _plain_container(obj) -> bool:
    """Whether indexing ``obj`` picks an element by position or key (an array, a list, a
    dict, a string, a type's generic alias): no gradient flows through the index."""
    return isinstance(obj, (np.ndarray, np.generic, Sequence, Mapping, type, range)) \
        or hasattr(obj, "__array_namespace__") or hasattr(obj, "__array_function__")


def watch_defaults(ctx, dotted: str, obj) -> None:
    """Note the defaults of the function ``dotted`` names (a helper's, inlined or copied by its
    compiled pair), so that the gradient compiles again when they change."""
    if isinstance(obj, types.FunctionType):
        ctx.snapshots[f"{dotted}.__defaults__"] = obj.__defaults__
        if obj.__code__.co_kwonlyargcount:  # (read only for keyword-only parameters)
            ctx.snapshots[f"{dotted}.__kwdefaults__"] = obj.__kwdefaults__


def _dotted(node) -> str | None:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _stable(root, dotted: str | None, obj) -> bool:
    """Whether ``dotted`` (``np.linalg.norm``) names the same object at each look-up (a bound
    method of a global object is made anew each time: it is not watched)."""
    if dotted is None:
        return False
    value = root
    for attr in dotted.split(".")[1:]:
        value = getattr(value, attr, _MISSING)
    return value is obj


def _evaluate(node, local: set[str], ctx):
    """(object, root name) for a dotted name; (None, root) when it starts at a local value."""
    if isinstance(node, gast.Name):
        if node.id in local:
            return None, node.id
        try:
            return ctx.lookup(node.id), node.id
        except (AttributeError, ValueError):  # ValueError: empty closure cell
            return _MISSING, node.id
    if isinstance(node, gast.Attribute):
        obj, root = _evaluate(node.value, local, ctx)
        if obj is None or obj is _MISSING:
            return obj, root
        return getattr(obj, node.attr, None), root
    return None, None


def value_of(node, local: set[str], ctx):
    """What a name or dotted name of the user's function means now (None: a local value, not
    a name, or not defined)."""
    obj, _ = _evaluate(node, local, ctx)
    return None if obj is _MISSING else obj


def watched_calls(tree, bindings: dict) -> tuple:
    """``(owner, attribute, function)`` for each call of the finished code by a dotted name of
    a module it binds (``np.sin`` in a rule's adjoint, ``np.cos`` the user called): the code
    looks the name up when it runs, so a test that replaces ``np.sin`` afterwards makes it stale
    (compiled again, it binds the rules' own functions: templates.py)."""
    found = {}
    for node in A.walk(tree):
        func = getanno(node, Anno.FUNC) if isinstance(node, gast.Call) else None
        if func is None or not isinstance(node.func, gast.Attribute):
            continue
        path, root = [], node.func
        while isinstance(root, gast.Attribute):
            path.append(root.attr)
            root = root.value
        if not isinstance(root, gast.Name) or not isinstance(bindings.get(root.id),
                                                             types.ModuleType) \
                or bindings[root.id] is runtime:  # (read when called, rebound or not)
            continue
        owner = bindings[root.id]
        for attr in reversed(path[1:]):
            owner = getattr(owner, attr, None)
        if owner is not None and getattr(owner, path[0], None) is func:
            found.setdefault((id(owner), path[0]), (owner, path[0], func))
    return tuple(found.values())

