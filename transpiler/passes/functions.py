"""Functions as values: every call of a function known at compile time becomes a call of it.

- ``P(x)`` of a ``functools.partial`` object ``P`` (a global, or one a helper is compiled for)
  is ``P.func(P.args[0], x, s=P.keywords['s'])``, so the function's own rule or source applies.
- ``f = functools.partial(g, s=k)``, ``f = rhs`` (``f`` assigned once): what the partial binds
  is kept in names (``f_s = k``) and ``f(x)`` becomes ``g(x, s=f_s)``.
- ``helper(rhs, y)``, passing a known function (a global or closure function, a partial, a
  function defined inside, which lift passes as ``functools.partial(g, k=k)`` of the variables
  it closes over, a lambda) to a helper of the user's: the helper is compiled for that function
  (``Context.known``), where its ``f(y)`` is ``rhs(y)``. What the partial binds travels as
  keyword arguments (``helper(rhs, y, f_k=k)``: parameters of the helper's compiled form, named
  by ``bound_names``), so a gradient reaches it. The call carries Anno.KNOWN for lower.py.
- ``simulate(y0, k, rhs)`` called with a function (function_args.py): compiled knowing it the
  same way, its ``rhs(y, k)`` is that function's call. A parameter the function rebinds is not
  known (its calls are refused, as any call of a function known only at run time).
"""

from __future__ import annotations

import functools
import inspect
import types
from dataclasses import dataclass

import gast
import numpy as np

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, setanno
from transpiler.errors import error_at
from transpiler.naming import function_name
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, is_user_function


@dataclass(frozen=True)
class Known:
    """A function known now, and the argument nodes each call of it passes first."""

    obj: object
    args: tuple = ()
    keywords: tuple = ()  # (name, node)
    late: frozenset = frozenset()  # keywords read when it is called: a closure's variables

    def signature(self) -> tuple:
        """(function, number of bound positional arguments, bound keyword names)."""
        return self.obj, len(self.args), tuple(k for k, _ in self.keywords)


def bound_names(param: str, npos: int, keys: tuple[str, ...]) -> list[str]:
    """The names under which a helper compiled for a known function in ``param`` receives
    what that function binds (its partial's arguments, the variables a lifted one closes
    over)."""
    return [f"{param}_{i}" for i in range(npos)] + [f"{param}_{k}" for k in keys]


def functions(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    stores: dict[str, int] = {}
    calls = []
    for node in A.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, gast.Call):
            calls.append(node)
    scope = _Scope(ctx, {}, set(stores))
    known = _parameters(fn, scope) if ctx.known else {}
    scope.known = {p: k for p, k in known.items() if stores.get(p, 0) == 1}  # (not rebound)
    defined: dict[str, tuple] = {}
    fn.body = _bind(fn.body, scope, stores, defined)
    for call in calls if not defined else [n for n in A.walk(fn) if isinstance(n, gast.Call)]:
        scope.rewrite(call)
    if ctx.known:
        _Rebuilt(scope, {p for p, _, npos, keys in ctx.known
                         if (npos or keys) and p in scope.known}).visit(fn)
    for name, (stmt, late) in _drop_unused(fn, defined).items():  # still read as a value
        changed = sorted(n for n in late if stores.get(n, 0) > 1)
        if changed:
            raise error_at(stmt, ctx, f"'{name}' holds a function defined inside that reads "
                           f"'{changed[0]}', which is assigned again later; used as a value, "
                           "it would see the later value", "call it, or pass it to a helper")
    return fn


def _parameters(fn, scope) -> dict[str, Known]:
    """The parameters a function is compiled to receive known functions in, and their bound
    values' new keyword-only parameters (a method of the user's given as it is: its function
    given the object)."""
    known, ctx = {}, scope.ctx
    taken = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)}
    for param, obj, npos, keys in ctx.known:
        names = bound_names(param, npos, keys)
        clash = sorted(taken & set(names))
        if clash:
            raise error_at(fn, ctx, f"the name '{clash[0]}' is needed for what the function "
                           f"passed as '{param}' binds", "rename that variable")
        fn.args.kwonlyargs += [gast.Name(id=n, ctx=gast.Param(), annotation=None,
                                         type_comment=None) for n in names]
        fn.args.kw_defaults += [None] * len(names)
        if not names and inspect.ismethod(obj):
            known[param] = scope.function_value(obj) or Known(obj)
            continue
        known[param] = Known(obj, tuple(A.name(n) for n in names[:npos]),
                             tuple((k, A.name(n)) for k, n in zip(keys, names[npos:], strict=True)))
    return known


def _kept(node, label, *, scope, found, name, saved, stmt):
    """A partial's argument as a name of its own (``f_s = k``, appended to ``saved``), unless
    it is a constant or read when the partial is called."""
    if (A.is_atom(node) and not isinstance(node, gast.Name)) or label in found.late:
        return node
    fresh = scope.ctx.namer.fresh(f"{name}_{label}")
    saved.append(gast.copy_location(A.assign(fresh, node), stmt))
    return A.name(fresh)


def _bind(stmts: list, scope, stores: dict, defined: dict) -> list:
    """Record names assigned once to a known function; a partial's arguments move into
    names of their own (``f_s = k``) assigned where the partial was made."""
    out = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _bind(getattr(stmt, field), scope, stores, defined))
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
        found = scope.value(stmt.value) if isinstance(target, gast.Name) \
            and len(stmt.targets) == 1 and stores.get(target.id) == 1 else None
        if found is None:
            out.append(stmt)
            continue
        saved = []
        keep = functools.partial(_kept, scope=scope, found=found, name=target.id, saved=saved,
                                 stmt=stmt)
        found = Known(found.obj, tuple(keep(a, i) for i, a in enumerate(found.args)),
                      tuple((k, keep(v, k)) for k, v in found.keywords), found.late)
        scope.known[target.id] = found
        if found.args or found.keywords:  # read elsewhere, it is the partial of the names
            stmt.value = A.call(A.name(scope.ctx.bind("partial", functools.partial)),
                                scope.function(found.obj), *found.args, keywords=[
                                    gast.keyword(arg=k, value=v) for k, v in found.keywords])
            setanno(stmt.value, Anno.FUNC, functools.partial)
        defined[target.id] = (stmt, found.late)
        out.extend(saved + [stmt])
    return out


class _Scope:
    """What one function knows: ``known`` maps its names bound to known functions; ``local``
    holds every name it assigns (anything else is a global, closure or builtin)."""

    def __init__(self, ctx, known: dict, local: set[str]):
        self.ctx, self.known, self.local = ctx, known, local

    def function(self, obj) -> gast.Name:
        """A name the generated code sees ``obj`` under (``force_partial`` for a partial)."""
        name = function_name(obj) if hasattr(obj, "__name__") else \
            f"{function_name(getattr(obj, 'func', obj))}_partial"
        return A.name(self.ctx.bind(name, obj))

    def value(self, node) -> Known | None:
        """The function ``node`` certainly evaluates to, or None."""
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            if node.id in self.known:
                return self.known[node.id]
            return None if node.id in self.local else self._global(node, node.id)
        if isinstance(node, gast.Attribute):
            return self._global(node, gast.unparse(node).split(".")[0].strip())
        if isinstance(node, gast.Call) and getanno(node, Anno.FUNC) is functools.partial \
                and node.args and not any(isinstance(a, gast.Starred) for a in node.args) \
                and all(kw.arg is not None for kw in node.keywords):
            inner = self.value(node.args[0])
            if inner is None:
                return None
            keywords = dict(inner.keywords)
            keywords.update((kw.arg, kw.value) for kw in node.keywords)
            given = {kw.arg for kw in node.keywords}
            late = inner.late | given if getanno(node, Anno.CLOSURE) else inner.late - given
            return Known(inner.obj, inner.args + tuple(node.args[1:]), tuple(keywords.items()),
                         late)
        return None

    def _global(self, node, root: str) -> Known | None:
        """The function a global or closure name (or ``a.b.c`` rooted at one) holds now; the
        global is noted, so that rebinding it compiles again."""
        found = self.function_value(self._dotted(node))
        ctx = self.ctx
        if found is not None and root in ctx.fn.__globals__ and root not in ctx.bindings \
                and root not in ctx.fn.__code__.co_freevars:
            ctx.snapshots.setdefault(root, ctx.fn.__globals__[root])
        return found

    def _free(self, name: str):
        """The value of a free name now."""
        if name in self.ctx.bindings:
            return self.ctx.bindings[name]
        try:
            return self.ctx.lookup(name)
        except (AttributeError, ValueError):
            return None

    def _dotted(self, node):
        """The value of ``a.b.c`` rooted at a global or closure name, now."""
        if isinstance(node, gast.Name):
            return None if node.id in self.local else self._free(node.id)
        if isinstance(node, gast.Attribute):
            base = self._dotted(node.value)
            return None if base is None else _attribute(base, node.attr)
        return None

    def function_value(self, obj) -> Known | None:
        """A function value a call can be resolved to: a plain function, a partial, a ufunc or
        a builtin; a method of the user's bound to an object, as its function given the object
        (not a class or a callable object, whose meaning is the objects')."""
        if inspect.ismethod(obj) and is_user_function(obj.__func__):
            owner = type(obj.__self__).__name__.lower()
            return Known(obj.__func__, (A.name(self.ctx.bind(owner, obj.__self__)),))
        if inspect.isfunction(obj) or inspect.isbuiltin(obj) or isinstance(
                obj, (functools.partial, np.ufunc)) or _has_rule(obj):
            return Known(obj)
        return None

    def rewrite(self, call: gast.Call) -> None:
        if (isinstance(call.func, gast.Name) and call.func.id in self.known) or isinstance(
                call.func, gast.Call):  # (globals and attributes: resolved already)
            found = self.value(call.func)
            if found is not None:
                self._call_known(call, found)
        while isinstance(getanno(call, Anno.FUNC), functools.partial):
            _spell_partial(call)
        func = getanno(call, Anno.FUNC)
        if is_user_function(getattr(func, "__func__", func)):
            self._pass_known(call, func)

    def _call_known(self, call, found: Known) -> None:
        """``f(x)`` of a known ``f`` -> ``g(bound..., x, key=bound)``."""
        given = {kw.arg for kw in call.keywords}
        call.func = self.function(found.obj)
        call.args = [A.copy_node(a) for a in found.args] + call.args
        call.keywords = [gast.keyword(arg=k, value=A.copy_node(v)) for k, v in found.keywords
                         if k not in given] + call.keywords
        setanno(call, Anno.FUNC, found.obj)

    def _pass_known(self, call, func) -> None:
        """``helper(rhs, y)``: mark which parameters receive known functions (Anno.KNOWN) and
        pass what they bind by keyword."""
        if any(isinstance(a, gast.Starred) for a in call.args) or any(
                kw.arg is None for kw in call.keywords):
            return
        try:
            signature = inspect.signature(func)
            bound = signature.bind(*call.args, **{kw.arg: kw.value for kw in call.keywords})
        except (TypeError, ValueError):
            return  # the call's lowering reports the mismatch
        marks, extra = [], []
        for param, p in signature.parameters.items():  # a default the call leaves: known too
            found = self.function_value(p.default) if param not in bound.arguments else None
            if found is not None and not found.args:
                marks.append((param, found.obj, 0, ()))
        for param, node in bound.arguments.items():
            if signature.parameters[param].kind in (inspect.Parameter.VAR_POSITIONAL,
                                                    inspect.Parameter.VAR_KEYWORD):
                continue
            found = self.value(node)
            if found is None:
                continue
            obj, npos, keys = found.signature()
            names = bound_names(param, npos, keys)
            values = list(found.args) + [v for _, v in found.keywords]
            extra += [gast.keyword(arg=n, value=A.copy_node(v))
                      for n, v in zip(names, values, strict=True)]
            marks.append((param, obj, npos, keys))
            function = self.function(obj)
            call.args = [function if a is node else a for a in call.args]
            for kw in call.keywords:
                kw.value = function if kw.value is node else kw.value
        if marks:
            call.keywords += extra
            setanno(call, Anno.KNOWN, tuple(sorted(marks, key=lambda m: m[0])))


class _Rebuilt(gast.NodeTransformer):
    """A parameter given a function with bound values, read other than by a call (passed to a
    library, stored): the same function and values, ``functools.partial(rhs, k=f_k)``."""

    def __init__(self, scope, params: set[str]):
        self.scope, self.params = scope, params

    def visit_Name(self, node):
        if node.id not in self.params or not isinstance(node.ctx, gast.Load):
            return node
        found = self.scope.known[node.id]
        made = A.call(A.name(self.scope.ctx.bind("partial", functools.partial)),
                      self.scope.function(found.obj), *[A.copy_node(a) for a in found.args],
                      keywords=[gast.keyword(arg=k, value=A.copy_node(v))
                                for k, v in found.keywords])
        setanno(made, Anno.FUNC, functools.partial)
        return gast.copy_location(made, node)


def _attribute(base, name: str):
    """``base.name`` without running the user's code (a property, ``__getattr__``): a module's
    attribute, a class's or an instance's own attribute, a method bound to the instance, a
    staticmethod's function."""
    if inspect.ismodule(base):
        return getattr(base, name, None)
    found = inspect.getattr_static(base, name, None)
    if isinstance(found, staticmethod):
        return found.__func__
    if isinstance(found, classmethod):
        return types.MethodType(found.__func__, base if isinstance(base, type) else type(base))
    if inspect.isfunction(found) and not isinstance(base, type) \
            and name not in getattr(base, "__dict__", {}):
        return types.MethodType(found, base)
    return found


def _has_rule(obj) -> bool:
    try:
        return obj in ADJOINTS or obj in NONDIFF
    except TypeError:  # unhashable
        return False


def _spell_partial(call) -> None:
    """``P(x)`` of a partial object -> ``P.func(P.args[0], x, key=P.keywords['key'])``."""
    partial, spelled = getanno(call, Anno.FUNC), call.func
    given = {kw.arg for kw in call.keywords}
    def item(field, key):
        return gast.Subscript(value=A.attr(A.copy_node(spelled), field), slice=A.const(key),
                              ctx=gast.Load())
    call.func = A.attr(A.copy_node(spelled), "func")
    call.args = [item("args", i) for i in range(len(partial.args))] + call.args
    call.keywords = [gast.keyword(arg=k, value=item("keywords", k)) for k in partial.keywords
                     if k not in given] + call.keywords
    setanno(call, Anno.FUNC, partial.func)


def _drop_unused(fn, defined: dict) -> dict:
    """Remove the definitions (name -> (statement, late names)) of known functions that
    nothing reads any more (their calls were rewritten), until none is left; return those
    still read, which stay as written."""
    while defined:
        loads = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Load)}
        dead = {id(stmt) for name, (stmt, _) in defined.items() if name not in loads}
        if not dead:
            break
        for node in A.walk(fn):
            for field in ("body", "orelse"):
                block = getattr(node, field, None)
                if isinstance(block, list) and any(id(s) in dead for s in block):
                    block[:] = [s for s in block if id(s) not in dead] or [gast.Pass()]
        defined = {k: v for k, v in defined.items() if id(v[0]) not in dead}
    return defined
