"""Give the generated function its name and the user's parameters, minus defaults; in split
mode, cut it into a forward and a backward function.

Index expressions are written back as slices (``g[1:-1]``); builtins the compiler calls
(``len``, ``range``) are bound to the real ones even where the user's module redefines them.
Defaults and annotations are dropped from the AST: the loader copies the user's default values
onto the compiled function, so they are evaluated once, in the user's module, as Python does.

Split mode (used for calls to user functions) cuts at the SPLIT marker the reverse pass left
between primal and adjoint:

    def f_forward(<params>):            def f_backward(_res, _ct):
        <primal>                            a, b = _res
        return value, (a, b)                <adjoint, seeded from _ct>
                                            return (bx, ...)

where ``(a, b)`` are the primal values (residuals) the adjoint reads.
"""

from __future__ import annotations

import builtins

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno
from transpiler.context import Mode
from transpiler.passes.ssa import stored_names


def finalize(fn: gast.FunctionDef, ctx):
    for node in A.walk(fn):
        if isinstance(node, gast.Subscript):  # g[slice(1, -1, None)] -> g[1:-1]
            node.slice = A.index_syntax(node.slice)
        elif isinstance(node, gast.Name) and hasanno(node, Anno.BUILTIN):  # the real len(...)
            node.id = ctx.bind(node.id, getattr(builtins, node.id))
    fn.args.defaults = []
    fn.args.kw_defaults = [None] * len(fn.args.kwonlyargs)
    for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs:
        a.annotation = None
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            extra.annotation = None
    fn.returns = None
    fn.decorator_list = []
    if ctx.gradient_aliases and ctx.mode == Mode.GRAD:
        _own_gradients(fn, ctx)
    if ctx.mode != Mode.SPLIT:
        fn.name = f"{ctx.mode}_{fn.name}"
        return fn
    return gast.Module(body=list(_split(fn, ctx)), type_ignores=[])


def _own_gradients(fn: gast.FunctionDef, ctx) -> None:
    """``return rt.grad_like(bx, x)`` -> ``return rt.grad_like(rt.copied(bx), x)`` where ``bx``
    may be a parameter's array: the reverse pass made a partial the parameter itself
    (``g * y`` -> ``y`` for all-ones ``g``), and a gradient is the caller's own array.

    Which names may hold a parameter's array (or a view of it) at the return follows the
    statements in order: a name assigned a name that may, a subscript or attribute of one, a
    container holding one, or the result of a call reading one (a runtime helper reads only
    its first argument, the gradient; ufuncs and ``math`` functions make new values) may;
    arithmetic makes new values, and assigning one at the top level ends what the name held
    (in a loop or branch, names only join, to a fixed point)."""
    params = {a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    may = set(params)

    def shared(node) -> bool:
        if isinstance(node, gast.Name):
            return node.id in may
        if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
            return False
        if isinstance(node, gast.Call):
            func = getanno(node, Anno.FUNC)
            if isinstance(func, np.ufunc) or getattr(func, "__module__", None) == "math":
                return False
            if (getattr(func, "__module__", None) or "").startswith("runtime"):
                return bool(node.args) and shared(node.args[0])
        return any(shared(child) for child in gast.iter_child_nodes(node))

    def join(stmts: list) -> None:  # (loops and branches: names only join)
        changed = True
        while changed:
            changed = False
            for node in (n for s in stmts for n in A.walk(s)):
                if isinstance(node, gast.Assign) and shared(node.value):
                    new = {n.id for t in node.targets for n in A.walk(t)
                           if isinstance(n, gast.Name)} - may
                    if new:
                        may.update(new)
                        changed = True

    for stmt in fn.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name):
            (may.add if shared(stmt.value) else may.discard)(stmt.targets[0].id)
        else:
            join([stmt])
    rt = ctx.bind("rt", runtime)
    for ret in (n for n in A.walk(fn) if isinstance(n, gast.Return) and n.value is not None):
        for call in A.walk(ret.value):  # (reverse._return's rt.grad_like(bx, x))
            if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
                    and call.func.attr == "grad_like" and isinstance(call.func.value, gast.Name) \
                    and call.func.value.id == rt and shared(call.args[0]):
                call.args[0] = A.call(A.dotted(f"{rt}.copied"), call.args[0])


def _split(fn: gast.FunctionDef, ctx):
    cut = next(i for i, s in enumerate(fn.body) if hasanno(s, Anno.SPLIT))
    primal, (*adjoint, ret) = fn.body[:cut], fn.body[cut + 1:]
    value, grads = ret.value.elts
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    read = {n for s in adjoint + [ret] for n in A.load_names(s)}
    residuals = sorted(read & (stored_names(primal) | params) - {ctx.cotangent})
    pack = gast.Tuple(elts=[A.name(r) for r in residuals], ctx=gast.Load())
    unconditional = A.assigned_always(primal)
    primal = [A.assign(r, A.const(None), like=ret) for r in residuals  # set on some paths only
              if r not in unconditional | params] + primal
    forward = gast.FunctionDef(
        name=f"{fn.name}_forward", args=fn.args, decorator_list=[], returns=None,
        type_comment=None, type_params=[],
        body=primal + [gast.copy_location(gast.Return(value=gast.Tuple(
            elts=[value, pack], ctx=gast.Load())), ret)])
    unpack = gast.Assign(targets=[gast.Tuple(elts=[A.name(r, store=True) for r in residuals],
                                             ctx=gast.Store())],
                         value=A.name(ctx.residuals), type_comment=None)
    params_out = [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                  for n in (ctx.residuals, ctx.cotangent)]
    backward = gast.FunctionDef(
        name=f"{fn.name}_backward", decorator_list=[], returns=None, type_comment=None,
        type_params=[], args=gast.arguments(args=params_out, posonlyargs=[], vararg=None,
                                            kwonlyargs=[], kw_defaults=[], kwarg=None,
                                            defaults=[]),
        body=([gast.copy_location(unpack, ret)] if residuals else []) + adjoint
        + [gast.copy_location(gast.Return(value=grads), ret)])
    return forward, backward
