"""Inline small helpers: ``x, v = step(x, v, dt)`` becomes the body of ``step``.

A call of one of your functions otherwise costs a compiled forward/backward pair of Python
calls each time; in a time-stepping loop that is most of the gradient's cost. A call is inlined
when it is a whole statement (``y = helper(...)`` or ``a, b = helper(...)``) and the helper

- lives in the same module (the same globals) and closes over nothing,
- takes plain parameters, each given by the call or defaulting to a number, string or None,
- ends with its only ``return``, defines no functions inside, is not the function itself,
- and uses no global name that the calling function assigns.

Its parameters and locals get fresh names (``step_x``), the arguments are assigned to them, and
the returned value to the call's target. Helpers called by an inlined helper are inlined too,
to a small depth; every other call stays a forward/backward pair.
"""

from __future__ import annotations

import inspect

import gast

import runtime
from runtime import checkpoint as scheduler
from transpiler import ast_util as A
from transpiler.anno import Anno, setanno
from transpiler.context import Mode
from transpiler.errors import TranspileError
from transpiler.frontend import parse_function
from transpiler.naming import function_name
from transpiler.passes.higher_order import rewrites
from transpiler.passes.resolve import value_of, watch_defaults
from transpiler.passes.solvers import solves
from transpiler.passes.validate import validate
from transpiler.rules.registry import is_user_function

_DEPTH = 4
_SIMPLE = (int, float, str, bool, type(None))


def inline(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if ctx.mode in (Mode.SPLIT, Mode.TANGENT):  # a helper compiled for a call inlines nothing
        return fn
    stores, nested = [], set()  # every name bound (once per binding), functions defined here
    for n in A.walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
            stores.append(n.id)
        elif isinstance(n, gast.FunctionDef) and n is not fn:
            nested.add(n.name)
        elif isinstance(n, gast.Assign) and isinstance(n.value, gast.Lambda):
            nested |= {t.id for t in n.targets if isinstance(t, gast.Name)}
    local = set(stores) | nested
    fn.body = _block(fn.body, ctx, local, depth=0, seen=(ctx.fn,), nested=nested,
                     given=_given(stores, ctx))
    return fn


def _given(stores: list[str], ctx) -> dict:
    """The parameters given a known function (function_args: ``rhs`` of ``simulate(y0, rhs)``)
    that the function never rebinds: their calls inline that function."""
    return {param: obj for param, obj, npos, keys in ctx.known
            if not npos and not keys and stores.count(param) == 1}


def _block(stmts: list, ctx, local: set[str], depth: int, seen: tuple, nested: set,
           given: dict) -> list:
    out = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(stmt, gast.Try) and field == "body":
                continue  # what a try tries stays one statement (passes/contexts.py)
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _block(getattr(stmt, field), ctx, local, depth, seen,
                                            nested, given))
        body = _inline(stmt, ctx, local, depth, seen, nested, given) if depth < _DEPTH \
            else None
        out.extend(body if body is not None else [stmt])
    return out


def _inline(stmt, ctx, local: set[str], depth: int, seen: tuple, nested: set,
            given: dict) -> list | None:
    """The statements replacing ``stmt``, or None to keep it."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
            and (stmt.value.func.id not in local or stmt.value.func.id in given)):
        return None
    call = stmt.value
    try:
        helper = given[call.func.id] if call.func.id in given else ctx.lookup(call.func.id)
    except (AttributeError, ValueError):
        return None
    if not _inlinable(helper, ctx, seen) or any(
            isinstance(a, gast.Starred) for a in call.args) or any(
            kw.arg is None for kw in call.keywords):
        return None
    try:
        node, _, _ = parse_function(helper)
        validate(node, ctx)
    except TranspileError:
        return None  # compiled as a pair, which reports the problem with its context
    if _rewritten_before(node, ctx):
        return None  # compiled as a pair, whose front end rewrites them
    body, ret = node.body[:-1], node.body[-1]
    # the helper's names (its globals: a module's own 'rt' or 'np') join the function's, so
    # that no name the compiler makes captures or shadows one of them
    ctx.namer.taken |= {n.id for n in A.walk(node) if isinstance(n, gast.Name)}
    if call.func.id not in given and call.func.id in ctx.fn.__globals__ \
            and call.func.id not in ctx.fn.__code__.co_freevars:
        ctx.snapshots[call.func.id] = helper  # its def re-run: the gradient is stale
        watch_defaults(ctx, call.func.id, helper)  # (they are inlined as constants)
    if not isinstance(ret, gast.Return) or any(
            isinstance(n, (gast.Return, gast.FunctionDef, gast.Lambda))
            for s in body for n in A.walk(s)):
        return None
    if any(isinstance(t, gast.Attribute) for n in A.walk(node) if isinstance(n, gast.Assign)
           for t in n.targets):  # o.a = v: a call that changes o (passes/objects.py)
        return None
    assigned = {n.id for n in A.walk(node) if isinstance(n, gast.Name)
                and isinstance(n.ctx, (gast.Store, gast.Param))}
    free = {n.id for n in A.walk(node) if isinstance(n, gast.Name)} - assigned
    if free & local:
        return None  # a global of the helper's that the caller shadows with a local
    try:
        bound = inspect.signature(helper).bind(*call.args, **{k.arg: k.value
                                                              for k in call.keywords})
    except TypeError:
        return None
    bound.apply_defaults()
    rebound = {n.id for s in body for n in A.walk(s) if isinstance(n, gast.Name)
               and isinstance(n.ctx, gast.Store)}
    arguments, functions = {}, {}
    for name, value in bound.arguments.items():
        if not isinstance(value, gast.AST):
            if not isinstance(value, _SIMPLE):
                return None
            value = A.const(value)
        if name not in rebound and (_function_name(value, ctx, local, nested) or (
                isinstance(value, gast.Name) and value.id in given)):
            functions[name] = value.id  # the helper's f(y) calls it by its own name
        else:
            arguments[name] = value
    renames = {name: ctx.namer.fresh(f"{function_name(helper)}_{name}")
               for name in sorted(assigned)}
    renames.update(functions)
    nested |= {renames[p] for p, value in arguments.items() if isinstance(value, gast.Lambda)}
    for n in A.walk(node):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    head = [gast.copy_location(A.assign(renames[p], A.copy_node(value)), stmt)
            for p, value in arguments.items()]
    result = gast.copy_location(gast.Assign(targets=stmt.targets, value=ret.value,
                                            type_comment=None), ret)
    for s in head:
        setanno(s, Anno.ORIGIN, stmt)
    local |= set(renames.values()) - set(functions.values())
    inner = _block(body, ctx, local, depth + 1, seen + (helper,), nested, given)
    return head + inner + [result]


def _rewritten_before(node: gast.FunctionDef, ctx) -> bool:
    """Whether the helper calls what the passes before this one rewrite: a library call that
    takes a function (``map``, ``functools.reduce``, ``np.vectorize``; passes/higher_order.py),
    a solver, a quadrature or an ODE (passes/solvers.py), a loop marked ``converged`` or
    ``checkpoint``; inlined here, they would meet the rules unrewritten."""
    local = {n.id for n in A.walk(node) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    for call in (n for n in A.walk(node) if isinstance(n, gast.Call)):
        func = value_of(call.func, local, ctx)
        if func is runtime.converged or func is scheduler.checkpoint or rewrites(func) \
                or solves(func):
            return True
    return False


def _function_name(node, ctx, local: set[str], nested: set[str]) -> bool:
    """Whether ``node`` names a function: one defined inside the caller (lifted later), or a
    global or closure function."""
    if not isinstance(node, gast.Name):
        return False
    if node.id in local:
        return node.id in nested
    try:
        value = ctx.lookup(node.id)
    except (AttributeError, ValueError):
        return False
    return inspect.isfunction(value)


def _inlinable(helper, ctx, seen: tuple) -> bool:
    if not inspect.isfunction(helper) or helper in seen or helper.__closure__:
        return False
    if helper.__globals__ is not ctx.fn.__globals__ or hasattr(helper, "__wrapped__") \
            or helper.__code__.co_filename != ctx.fn.__code__.co_filename:
        return False
    if not is_user_function(helper):
        return False
    parameters = inspect.signature(helper).parameters.values()
    return all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters) \
        and not (helper.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE))
