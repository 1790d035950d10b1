"""Lift functions defined inside the differentiated one to standalone functions.

``def g(a): return a * k`` (or ``g = lambda a: a * k``) inside ``f``, where ``k`` is a local of
``f``, becomes a function ``g(a, *, k)`` living in ``f``'s module, and every call ``g(x)`` becomes
``g(x, k=k)``: the value ``k`` has at the call, as Python's closures see it. The lifted function
is then differentiated like any other function of the user's (a cached forward/backward pair).
``g`` (or a lambda) passed as an argument, ``rk4_step(g, y, dt)``, becomes
``functools.partial(g, k=k)``, which passes/functions.py hands to the helper's compilation. ``g``
may not be otherwise used as a value, rebound, or call itself.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> src = "def f(x, k):\\n    def g(a):\\n        return a * k\\n    return g(x) + g(2.0)"
>>> fn = gast.parse(src).body[0]
>>> ctx = SimpleNamespace(fn=SimpleNamespace(__globals__={}, __code__=lift.__code__),
...                       filename="<doc>", bind=lambda name, obj: name)
>>> print(to_source(lift(fn, ctx)))
def f(x, k):
    return g(x, k=k) + g(2.0, k=k)
"""

from __future__ import annotations

import ast
import functools
import linecache
import types

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, setanno
from transpiler.errors import error_at


def lift(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if not any(isinstance(n, (gast.FunctionDef, gast.Lambda)) and n is not fn
               for n in A.walk(fn)):
        return fn  # (most functions define none)
    nested = _find(fn, ctx)
    if not nested:
        return fn
    local = {a.id for a in fn.args.args + fn.args.kwonlyargs} | {
        n.id for n in A.walk(fn) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    local |= set(ctx.fn.__code__.co_freevars)
    for name, node, stmt in nested:
        _check_uses(fn, name, stmt, ctx)
        _check_defaults(node, ctx)
        free = _free_names(node, local - {name})
        function = _build(node, free, ctx)
        binding = ctx.bind(name, function)
        _rewrite_calls(fn, name, binding, free, function)
        _rewrite_arguments(fn, name, binding, free, ctx)
        _remove(fn, stmt)
    return fn


def _find(fn, ctx) -> list:
    """(name, FunctionDef, defining statement) for every nested def, ``g = lambda ...`` and
    lambda passed as an argument (named ``_lambda``, defined by no statement)."""
    found = []
    for stmt in A.walk(fn):
        if stmt is fn:
            continue
        if isinstance(stmt, gast.FunctionDef):
            if stmt.decorator_list:
                raise error_at(stmt, ctx, "a decorated function inside the differentiated one is "
                               "not supported", "define it at module level")
            found.append((stmt.name, stmt, stmt))
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda):
            target = stmt.targets[0]
            if len(stmt.targets) != 1 or not isinstance(target, gast.Name):
                raise error_at(stmt, ctx, "assign a lambda to a single name", "g = lambda a: ...")
            found.append((target.id, _as_def(target.id, stmt.value, stmt), stmt))
    lifted = {id(n[2].value) for n in found if isinstance(n[2], gast.Assign)}
    inner = {id(n) for scope in A.walk(fn) if scope is not fn and isinstance(
        scope, (gast.FunctionDef, gast.Lambda)) for n in A.walk(scope) if n is not scope}
    for call in A.walk(fn):  # (one inside a function defined here: lifted when it is compiled)
        if isinstance(call, gast.Call) and id(call) not in inner:
            for holder in call.args, call.keywords:
                for i, item in enumerate(holder):
                    lam = item.value if isinstance(item, gast.keyword) else item
                    if isinstance(lam, gast.Lambda):
                        name = ctx.namer.fresh("_lambda")
                        use = gast.copy_location(A.name(name), lam)
                        if isinstance(item, gast.keyword):
                            item.value = use
                        else:
                            holder[i] = use
                        lifted.add(id(lam))
                        found.append((name, _as_def(name, lam, lam), None))
    for stmt in A.walk(fn):
        if isinstance(stmt, gast.Lambda) and id(stmt) not in lifted | inner:
            raise error_at(stmt, ctx, "a lambda is supported only as 'name = lambda ...' or as "
                           "an argument of a call", "name it: g = lambda a: ..., then call g(...)")
    return found


def _as_def(name: str, lam: gast.Lambda, like) -> gast.FunctionDef:
    node = gast.FunctionDef(name=name, args=lam.args, body=[
        gast.copy_location(gast.Return(value=lam.body), lam)], decorator_list=[], returns=None,
        type_comment=None, type_params=[])
    return gast.copy_location(node, like)


def _check_uses(fn, name: str, definition, ctx) -> None:
    calls = {id(n.func) for n in A.walk(fn) if isinstance(n, gast.Call)}
    passed = _arguments(fn)
    for n in A.walk(fn):
        if isinstance(n, gast.Name) and n.id == name:
            if isinstance(n.ctx, gast.Store) and not (
                    isinstance(definition, gast.Assign) and n is definition.targets[0]):
                raise error_at(n, ctx, f"'{name}' is rebound; the function defined inside "
                               "cannot be lifted", "give the function a name of its own")
            if isinstance(n.ctx, gast.Load) and id(n) not in calls and id(n) not in passed:
                raise error_at(n, ctx, f"the function '{name}' defined inside may only be "
                               "called or passed as an argument here, not used as a value",
                               "define it at module level")
    if definition is None:  # a lambda passed as an argument
        return
    body = definition if isinstance(definition, gast.FunctionDef) else definition.value
    if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
           for n in A.walk(body)):
        raise error_at(definition, ctx, f"'{name}' calls itself; recursion is supported only "
                       "for module-level functions", "define it at module level")


def _check_defaults(node: gast.FunctionDef, ctx) -> None:
    """Default values are computed once, where the function is defined: the lifted function
    has no such place, so only defaults that read no variable (literals) are supported."""
    for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
        name = next((n for n in A.walk(default) if isinstance(n, gast.Name)), None)
        if name is not None:
            raise error_at(default, ctx, f"the default value of a parameter of '{node.name}' "
                           f"reads '{name.id}'; a function defined inside the differentiated "
                           "one may only have literal defaults",
                           f"pass the value at each call, or read '{name.id}' in the body")


def _free_names(node: gast.FunctionDef, outer_locals: set[str]) -> list[str]:
    own = {n.id for n in A.walk(node) if isinstance(n, gast.Name)
           and isinstance(n.ctx, (gast.Store, gast.Param))}
    loads = {n.id for n in A.walk(node) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Load)}
    return sorted((loads - own) & outer_locals)


def _build(node: gast.FunctionDef, free: list[str], ctx):
    """The lifted function object, in ``fn``'s module (its globals are read live)."""
    node = A.copy_node(node)
    node.args.kwonlyargs = node.args.kwonlyargs + [
        gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None) for name in free]
    node.args.kw_defaults = node.args.kw_defaults + [None] * len(free)
    tree = gast.gast_to_ast(gast.Module(body=[node], type_ignores=[]))
    ast.fix_missing_locations(tree)
    source = ast.unparse(tree) + "\n"
    filename = f"<{node.name}, defined in {ctx.filename}:{node.lineno}>"
    lines = ["\n"] * (node.lineno - 1) + source.splitlines(keepends=True)
    linecache.cache[filename] = (len("".join(lines)), None, lines, filename)
    namespace: dict = {}
    exec(compile("".join(lines), filename, "exec"), namespace)
    made = namespace[node.name]
    return types.FunctionType(made.__code__, ctx.fn.__globals__, node.name, made.__defaults__)


def _rewrite_calls(fn, name: str, binding: str, free: list[str], function) -> None:
    for call in A.walk(fn):
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Name) \
                and call.func.id == name:
            call.func = A.name(binding)
            call.keywords = call.keywords + [gast.keyword(arg=n, value=A.name(n)) for n in free]
            setanno(call, Anno.FUNC, function)


def _arguments(fn) -> set[int]:
    """The ids of the nodes passed as arguments of a call (positional or keyword)."""
    return {id(a) for n in A.walk(fn) if isinstance(n, gast.Call)
            for a in n.args + [kw.value for kw in n.keywords]}


def _rewrite_arguments(fn, name: str, binding: str, free: list[str], ctx) -> None:
    """``helper(g, y)`` -> ``helper(functools.partial(g, k=k), y)``: the variables ``g`` closes
    over, read at the call as Python's closure would (the helper cannot rebind them)."""
    def value():
        if not free:
            return A.name(binding)
        made = A.call(A.name(ctx.bind("partial", functools.partial)), A.name(binding))
        made.keywords = [gast.keyword(arg=n, value=A.name(n)) for n in free]
        setanno(made, Anno.FUNC, functools.partial)
        setanno(made, Anno.CLOSURE)  # (read when it is called, as a closure reads them)
        return made

    for call in A.walk(fn):
        if isinstance(call, gast.Call):
            call.args = [value() if _is(a, name) else a for a in call.args]
            for kw in call.keywords:
                kw.value = value() if _is(kw.value, name) else kw.value


def _is(node, name: str) -> bool:
    return isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load)


def _remove(fn, stmt) -> None:
    for node in A.walk(fn):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                block[:] = [s for s in block if s is not stmt] or [gast.Pass()]
