"""Which of the user's functions only report: a call of one as a statement (``report(i, x)``)
reads its arguments and changes nothing the derivative sees, so it stays in the primal as
written, like ``print``.

A function reports when its body only binds local names, branches, loops, returns and raises,
and every call in it makes a new value or reports: ``print``/``warnings.warn``/logging
(rules.nondiff.reports), a function with a rule or marked non-differentiable, a builtin that
reads (``len``, ``str``, ``max``, ...), a method that reads (``"...".format``, ``x.mean()``),
or another function of the user's that reports. Anything else (a write into an element or an
attribute, an unknown call or method, ``out=``, ``global``) means it may change its arguments.
"""

from __future__ import annotations

import builtins
import inspect
import operator

import gast

from transpiler import ast_util as A
from transpiler.errors import TranspileError
from transpiler.frontend import parse_function
from transpiler.rules.nondiff import NONDIFF, reports
from transpiler.rules.registry import ADJOINTS, is_user_function

_DEPTH = 3
_READING_BUILTINS = frozenset({
    abs, all, any, bool, dict, divmod, enumerate, float, format, int, isinstance, len, list,
    max, min, range, repr, reversed, round, sorted, str, sum, tuple, type, zip,
})
_READING_METHODS = frozenset({
    "format", "join", "upper", "lower", "strip", "split", "replace", "startswith", "endswith",
    "item", "tolist", "mean", "sum", "prod", "max", "min", "std", "var", "any", "all", "copy",
    "astype", "reshape", "ravel", "flatten", "round", "argmax", "argmin", "get", "keys",
    "values", "items",
})
_STATEMENTS = (gast.Assign, gast.AugAssign, gast.Expr, gast.If, gast.For, gast.While,
               gast.Return, gast.Pass, gast.Break, gast.Continue, gast.Assert, gast.Raise)


def only_reports(func, depth: int = 0, seen: tuple = ()) -> bool:
    """Whether calling ``func`` (a user function) can only report, never change a value."""
    if not is_user_function(func) or func in seen or depth > _DEPTH:
        return False
    try:
        node, _, _ = parse_function(func)
    except TranspileError:
        return False
    local = {n.id for n in A.walk(node) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    counters = _counters(node)
    for n in A.walk(node):
        if isinstance(n, gast.AugAssign) and getattr(n.target, "id", None) not in counters:
            return False  # x += ... may change in place an array or list it was handed
        if isinstance(n, gast.stmt) and n is not node and not isinstance(n, _STATEMENTS):
            return False
        targets = n.targets if isinstance(n, gast.Assign) else [n.target] \
            if isinstance(n, (gast.AugAssign, gast.For)) else []
        if not all(isinstance(t, gast.Name) for s in targets for t in A.walk(s)
                   if not isinstance(t, (gast.Tuple, gast.List))):
            return False  # an element, a slice or an attribute written
        if isinstance(n, (gast.Lambda, gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await)):
            return False
        if isinstance(n, gast.Call) and not _reading_call(n, func, local, depth, seen):
            return False
    return True


def _counters(node) -> set[str]:
    """Local names bound only to literals (then ``n += 1`` makes a new number or string)."""
    params = {a.id for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
    bound: dict[str, bool] = {}
    for n in A.walk(node):
        if isinstance(n, gast.Assign):
            for target in n.targets:
                for t in A.walk(target):
                    if isinstance(t, gast.Name):
                        literal = isinstance(n.value, gast.Constant) and target is t
                        bound[t.id] = bound.get(t.id, True) and literal
        elif isinstance(n, gast.For):
            for t in A.walk(n.target):
                if isinstance(t, gast.Name):
                    bound[t.id] = False
    return {name for name, literal in bound.items() if literal} - params


def _reading_call(call, func, local: set[str], depth: int, seen: tuple) -> bool:
    if any(kw.arg == "out" for kw in call.keywords):
        return False
    target = call.func
    if isinstance(target, gast.Attribute) and _rooted_in(target.value, local):
        return target.attr in _READING_METHODS  # a method of a value of the function's
    obj = _lookup(target, func)
    if obj is None or obj is operator.setitem:
        return False
    if reports(obj) or any(obj is b for b in _READING_BUILTINS):
        return True
    if is_user_function(obj):
        return only_reports(obj, depth + 1, seen + (func,))
    try:
        return obj in NONDIFF or obj in ADJOINTS
    except TypeError:  # unhashable
        return False


def _rooted_in(node, local: set[str]) -> bool:
    """Whether ``node`` is a value of the function's own (a local, a parameter, a literal, or
    an expression of them), not a module or a global object."""
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        node = node.value
    return not isinstance(node, gast.Name) or node.id in local


def _lookup(node, func):
    """The object a dotted name refers to in ``func``'s closure, globals and builtins."""
    if isinstance(node, gast.Attribute):
        owner = _lookup(node.value, func)
        return None if owner is None else getattr(owner, node.attr, None)
    if not isinstance(node, gast.Name):
        return None
    closure = inspect.getclosurevars(func)
    for scope in (closure.nonlocals, closure.globals, vars(builtins)):
        if node.id in scope:
            return scope[node.id]
    return func.__globals__.get(node.id)
