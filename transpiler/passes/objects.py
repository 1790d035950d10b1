"""Objects as records of fields: methods are calls of your functions, writes are new values.

Where a variable's class is known (an argument's, from the call: ``ctx.classes``; or a variable
bound to ``C(...)`` or ``dataclasses.replace(...)`` of one, on every assignment), this pass
rewrites, before anything else sees them:

- ``s.energy(x)`` as ``C.energy(s, x)`` (a call of your function, compiled like any other;
  a ``@staticmethod`` without ``s``, a ``@classmethod`` with ``C``), ``s.area`` of a
  ``@property`` as ``C.area.fget(s)``;
- ``C(a, b)`` of a dataclass or NamedTuple as ``rt.construct(C, ("k", "c"), (a, b))``, and of
  another class as ``s = rt.new(C)`` followed by its ``__init__`` (below);
- ``o.a = v`` (and ``o.a += v``, ``o.b.a = v``) as ``o = rt.with_field(o, "a", v)``: a shallow
  copy, so the caller's object never changes; ``dataclasses.replace(p, k=v)`` and
  ``p._replace(k=v)`` as ``rt.replaced(p, ("k",), (v,))``;
- a call of a method (or helper) that writes attributes of its arguments, ``s.step(dt)``, as
  ``_, s = <step, returning s>(s, dt)``: a copy of the function whose returns also return the
  objects it changed (made once per function, cached on it).

A variable whose attributes are written may not be shared (``b = s``, ``[s]``, a loop
variable): the write would show through the other name. That is refused at its line. Field
reads are differentiated by ``rt.field``'s rule (passes/lower.py, rules/object_rules.py).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import linecache
import types
from dataclasses import dataclass

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler import cache
from transpiler.analysis.activity import SHAPE_ATTRIBUTES
from transpiler.anno import Anno, getanno, setanno
from transpiler.errors import error_at
from transpiler.frontend import parse_function
from transpiler.passes.checkpoint import is_checkpointed_loop
from transpiler.passes.desugar import lower_comprehensions
from transpiler.rules.methods import METHODS
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, TANGENTS, is_user_function

_LIBRARIES = {"builtins", "numpy", "scipy", "math", "transpiler", "runtime", "collections",
              "typing", "dataclasses", "functools", "enum", "fractions", "decimal"}
MUTATES = "__transpiler_mutates__"  # on a made copy: the parameters it returns changed


def objects(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if not ctx.classes and not _has_objects(fn):
        return fn
    for param, cls in ctx.classes.items():  # a @classmethod's cls: the class itself
        if isinstance(cls, tuple):
            _class_parameter(fn, param, cls[0], ctx)
    _supers(fn, ctx)
    _comprehensions_building_objects(fn, ctx)
    known = _types(fn, ctx)
    known.containers = _containers(fn)
    _rewrite_expressions(fn, known, ctx)
    written = set()
    _rewrite_blocks(fn, known, written, ctx)
    _refuse_shared(fn, written, ctx)
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    ctx.written_params |= written & params
    if not ctx.called:  # a call that changes an argument changes a copy of it, run or compiled
        owned = sorted({a.id for n in A.walk(fn) if isinstance(n, gast.Call)
                        for a in _changed_arguments(n) if a.id in params})
        fn.body[:0] = [gast.copy_location(A.assign(p, _helper_call(
            fn, "owned", [A.name(p)], ctx)), fn.body[0]) for p in owned]
    return fn


_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)


def _owner(func):
    """The class whose body defines ``func`` (a method calling ``super()``: its ``__class__``
    cell), or None."""
    code = getattr(func, "__code__", None)
    if code is None or "__class__" not in code.co_freevars or not func.__closure__:
        return None
    try:
        return func.__closure__[code.co_freevars.index("__class__")].cell_contents
    except ValueError:  # (an empty cell)
        return None


def _super_method(func, cls: type, name: str) -> tuple:
    """``(the class, its function)`` that ``super().<name>`` in ``func``, a method of one of
    ``cls``'s classes, calls for an object of ``cls``, else ``(None, None)``."""
    owner = _owner(func)
    if owner not in cls.__mro__:
        return None, None
    klass = next((k for k in cls.__mro__[cls.__mro__.index(owner) + 1:] if name in vars(k)),
                 None)
    return (klass, vars(klass)[name]) if klass is not None else (None, None)


def _supers(fn, ctx) -> None:
    """``super().m(args)`` in a method compiled for an object of known class ``C`` as
    ``B.m(self, args)``: ``B`` the class after the method's own in ``C``'s MRO that defines
    ``m``, a call of your function like any other (``object.__init__``: nothing to run)."""
    calls = [n for n in A.walk(fn) if isinstance(n, gast.Call)
             and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Call)
             and isinstance(n.func.value.func, gast.Name) and n.func.value.func.id == "super"
             and not n.func.value.args and not n.func.value.keywords]
    func = getattr(ctx, "fn", None)
    first = fn.args.args[0].id if calls and fn.args.args else None
    cls = ctx.classes.get(first) if first is not None else None
    if not isinstance(cls, type) or func is None:
        return  # (super() of an unknown class: refused where it is called)
    parents = {id(c): n for n in A.walk(fn) for c in gast.iter_child_nodes(n)}
    for call in calls:
        name = call.func.attr
        klass, method = _super_method(func, cls, name)
        if klass is object and name == "__init__" and not call.args and not call.keywords \
                and isinstance(parents.get(id(call)), gast.Expr):
            parents[id(call)].value = A.const(None)  # (object.__init__: nothing to run)
            continue
        if not (inspect.isfunction(method) and is_user_function(method)
                and _has_source(method)):
            continue
        call.func = gast.copy_location(A.attr(A.name(ctx.bind(klass.__name__, klass)), name),
                                       call.func)
        call.args = [A.name(first)] + call.args
        setanno(call, Anno.FUNC, method)
        setanno(call, Anno.CLASSES, {_first(method): cls})


def _comprehensions_building_objects(node, ctx) -> None:
    """``[Spring(k, l) for k, l in zip(ks, ls)]`` as the loop appending each object that it
    stands for (desugar lowers the other comprehensions later), so that each object is built
    on a line of its own as below."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if not (isinstance(block, list) and block and isinstance(block[0], gast.stmt)):
            continue
        out = []
        for stmt in block:
            if any(isinstance(c, _COMPREHENSIONS) and any(
                    isinstance(n, gast.Call) and user_class(getanno(n, Anno.FUNC))
                    for n in A.walk(c)) for c in _own_expressions(stmt)):
                before, stmt = lower_comprehensions(stmt, ctx)
                out += before
            out.append(stmt)
        setattr(node, field, out)
    for child in gast.iter_child_nodes(node):
        if isinstance(child, (gast.stmt, gast.ExceptHandler)):
            _comprehensions_building_objects(child, ctx)


def _own_expressions(stmt):
    """The nodes of a statement's own expressions (not of the statements inside it)."""
    if isinstance(stmt, (gast.If, gast.While)):
        return A.walk(stmt.test)
    if isinstance(stmt, gast.For):
        return A.walk(stmt.iter)
    if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
        return A.walk(stmt.value) if stmt.value is not None else []
    return []


def _has_objects(fn) -> bool:
    """Whether anything here is this pass's: an attribute write, or a call of a class, a method
    or a function of yours (what every rewrite above starts from). Most functions have none."""
    for node in A.walk(fn):
        if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store):
            return True
        if isinstance(node, gast.Call):
            func = getanno(node, Anno.FUNC)
            if func is dataclasses.replace or inspect.ismethod(func) or user_class(func) \
                    or is_user_function(func) or getattr(func, MUTATES, None) \
                    or isinstance(node.func, gast.Attribute) and node.func.attr == "_replace":
                return True
    return False


# --- what is known of each variable's class ---

def user_class(c) -> bool:
    """A class of the user's (not a library's or a builtin), without a rule of its own."""
    if not isinstance(c, type) or (c.__module__ or "").split(".")[0] in _LIBRARIES:
        return False
    try:
        return c not in ADJOINTS and c not in TANGENTS and c not in NONDIFF
    except TypeError:
        return False


@dataclass(frozen=True)
class ListOf:
    """What a call knows of a list argument (``ctx.classes``): every item is a ``cls``."""

    cls: type


class _Known(dict):
    """Variable -> its class; ``elements``: a list's (or tuple's) variable -> the class every
    item it holds is of (``springs = [Spring(k) for k in ks]``: ``for s in springs``, then
    ``s.energy(x)``, ``springs[0].k``)."""

    def __init__(self, classes: dict, elements: dict):
        super().__init__(classes)
        self.elements = elements


def _walked_name(loop) -> tuple:
    """``(the loop's item variable, the list variable it walks)`` of ``for s in xs`` and ``for
    i, s in enumerate(xs)``, else None."""
    target, walked = loop.target, loop.iter
    if isinstance(walked, gast.Call) and isinstance(walked.func, gast.Name) \
            and walked.func.id == "enumerate" and len(walked.args) == 1 \
            and isinstance(target, gast.Tuple) and len(target.elts) == 2:
        target, walked = target.elts[1], walked.args[0]
    if isinstance(target, gast.Name) and isinstance(walked, gast.Name):
        return target.id, walked.id
    return None


def _items(vals: list, grown: list, names: frozenset, known) -> type | None:
    """The class of every item of the list ``names`` hold, from the values they are assigned
    (literals, ``rt.appended(xs, v)`` of one of them, another such list) and the items
    appended to them."""
    found = set()
    for v in vals:
        if isinstance(v, (gast.List, gast.Tuple)):
            found |= {_class_of(e, known) for e in v.elts}
        elif isinstance(v, gast.Call) and getanno(v, Anno.FUNC) is runtime.appended \
                and isinstance(v.args[0], gast.Name) and v.args[0].id in names:
            found.add(_class_of(v.args[1], known))
        elif isinstance(v, gast.Name):
            found.add(known.elements.get(v.id))
        else:
            return None
    found |= {_class_of(v, known) for v in grown}
    return found.pop() if len(found) == 1 and None not in found else None


_ITEM_READS = frozenset({"append", "pop", "count", "index"})  # (calls keeping the items' class)


def _shared_lists(fn) -> tuple[set[str], set[tuple]]:
    """The variables read other than as ``xs[i]``, ``for v in xs``, ``len(xs)``,
    ``xs.append(v)`` or given to a helper of yours that changes none of its arguments: passed
    on, aliased or changed some other way, the class of their items is not followed; and
    ``(o, m, position, xs)`` for each ``o.m(..., xs, ...)`` (the same, once ``o``'s class is
    known; ``position`` counts ``self``)."""
    parents = {id(c): n for n in A.walk(fn) for c in gast.iter_child_nodes(n)}
    out, given = set(), set()
    for node in A.walk(fn):
        if not (isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load)):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, gast.Subscript) and parent.value is node \
                and isinstance(parent.ctx, gast.Load) \
                or isinstance(parent, gast.For) and parent.iter is node \
                or isinstance(parent, gast.Attribute) and parent.attr in _ITEM_READS \
                or isinstance(parent, gast.Call) and getanno(parent, Anno.FUNC) in (
                    len, runtime.appended) and parent.args and parent.args[0] is node \
                or isinstance(parent, gast.Call) and isinstance(parent.func, gast.Name) \
                and parent.func.id in ("enumerate", "len") and parent.args[0] is node \
                or isinstance(parent, gast.Assign) and parent.value is node \
                and len(parent.targets) == 1 and isinstance(parent.targets[0], gast.Name):
            continue  # (ys = xs: one list under two names, _lists_of follows both)
        if isinstance(parent, gast.Call) and node in parent.args \
                and _keeps(getanno(parent, Anno.FUNC), parent.args.index(node)):
            continue  # (given to a helper of yours that keeps it: ListOf in the callee)
        if isinstance(parent, gast.Call) and node in parent.args \
                and isinstance(parent.func, gast.Attribute) \
                and isinstance(parent.func.value, gast.Name) and getanno(parent, Anno.FUNC) is None:
            given.add((parent.func.value.id, parent.func.attr, parent.args.index(node) + 1,
                       node.id))
            continue  # (o.m(xs): as for a helper, once o's class is known)
        out.add(node.id)
    return out, given


def _function_of(cls, name: str):
    """The function of ``cls``'s method ``name`` (a static or class method's too), or None."""
    method = inspect.getattr_static(cls, name, None)
    return getattr(method, "__func__", method)


def _keeps(func, position: int) -> bool:
    """Whether ``func`` is a function of yours that does not change its parameter at
    ``position`` (nor does anything else with it that a call could not see)."""
    if not (inspect.isfunction(func) and is_user_function(func) and _has_source(func)):
        return False
    params = list(inspect.signature(func).parameters.values())
    if position >= len(params) or params[position].kind not in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        return False
    return params[position].name not in changed_parameters(func, {}, depth=0)


def _lists_of(values: dict) -> dict[str, frozenset]:
    """Each variable -> the variables naming the same list as it may (``ys = xs``)."""
    group = {name: {name} for name in values}
    for name, vals in values.items():
        for v in vals:
            if isinstance(v, gast.Name) and v.id in group and group[v.id] is not group[name]:
                merged = group[name] | group[v.id]
                for member in merged:
                    group[member] = merged
    return {name: frozenset(g) for name, g in group.items()}


def _types(fn, ctx) -> dict[str, type]:
    """The variables whose class is the same on every assignment (parameters: from the call),
    and the lists whose items are all of one class (``_Known.elements``)."""
    values: dict[str, list] = {}
    grown: dict[str, list] = {}  # xs.append(v): the items appended
    unknown = set()
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    for node in A.walk(fn):
        walked = _walked_name(node) if isinstance(node, gast.For) else None
        if walked is not None:  # for s in xs: s is an item of xs
            item, walked_list = walked
            values.setdefault(item, []).append(gast.Subscript(
                value=A.name(walked_list), slice=A.const(0), ctx=gast.Load()))
            if isinstance(node.target, gast.Tuple):
                unknown |= {n.id for n in A.walk(node.target.elts[0])
                            if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call) \
                and isinstance(node.value.func, gast.Attribute) \
                and node.value.func.attr == "append" \
                and isinstance(node.value.func.value, gast.Name) and len(node.value.args) == 1:
            grown.setdefault(node.value.func.value.id, []).append(node.value.args[0])
        if walked is not None:
            pass
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, gast.Assign) and is_checkpointed_loop(node.value):
            for t, v in zip(node.targets[0].elts, node.value.args[2:], strict=True):
                if not (isinstance(v, gast.Name) and v.id == t.id):  # (a state keeps its class)
                    values.setdefault(t.id, []).append(v)
        elif isinstance(node, (gast.Assign, gast.AugAssign, gast.For, gast.comprehension,
                               gast.withitem, gast.NamedExpr)):
            targets = node.targets if isinstance(node, gast.Assign) else [
                getattr(node, "target", None) or getattr(node, "optional_vars", None)]
            unknown |= {n.id for t in targets if t is not None for n in A.walk(t)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    known = _Known({p: c for p, c in ctx.classes.items() if isinstance(c, type)}, {})
    shared, given = _shared_lists(fn)
    lists = _lists_of(values)
    for p, c in ctx.classes.items():  # a list given, read here only by item (not rebound,
        if isinstance(c, ListOf) and p in params and not (  # grown, passed on or aliased)
                {p} | lists.get(p, frozenset())) & (set(values) | set(grown) | shared | {
                    xs for o, m, i, xs in given if o not in known  # (a parameter's class)
                    or not _keeps(_function_of(known[o], m), i)}):
            known.elements[p] = c.cls
    for p in params - set(known):
        unknown.add(p)
    changed = True
    while changed:
        changed = False
        passed = shared | {xs for o, m, i, xs in given if o not in known
                           or not _keeps(_function_of(known[o], m), i)}
        for name in set(values) | set(grown):
            names = lists.get(name, frozenset({name}))
            if names & (params | unknown | passed):
                if known.elements.pop(name, None) is not None:
                    changed = True
                continue
            cls = _items([v for n in names for v in values.get(n, [])
                          if not (isinstance(v, gast.Name) and v.id in names)],
                         [v for n in names for v in grown.get(n, [])], names, known)
            if cls != known.elements.get(name):
                if cls is None:
                    known.elements.pop(name)
                else:
                    known.elements[name] = cls
                changed = True
        for name, vals in values.items():
            if name in unknown:
                continue
            found = {_class_of(v, known) for v in vals}
            if name in known:
                found.add(known[name])
            if len(found) == 1 and None not in found:
                if name not in known:
                    known[name] = found.pop()
                    changed = True
            elif name in known:
                del known[name]
                unknown.add(name)
                changed = True
    return _Known({n: c for n, c in known.items() if n not in unknown}, known.elements)


def _class_of(value, known: dict):
    if isinstance(value, gast.Name):
        return known.get(value.id)
    held = _held(value, known)
    if held is not None:  # s = self.spring: checked when bound (_statement)
        return held[2]
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
            and not isinstance(value.slice, gast.Slice):  # an item of a list of objects
        return getattr(known, "elements", {}).get(value.value.id)
    if isinstance(value, gast.Call):
        func = getanno(value, Anno.FUNC)
        if user_class(func):
            return func
        if func is dataclasses.replace and value.args:
            return _class_of(value.args[0], known)
        if isinstance(value.func, gast.Attribute) and value.func.attr == "_replace":
            return _class_of(value.func.value, known)
        if inspect.ismethod(func) and isinstance(func.__self__, type):  # C.make(...)
            return _returned_class(func.__func__, func.__self__)
        if is_user_function(func):
            return _returned_class(func, None)
    return None


def _returned_class(func, owner):
    """The class every ``return`` of ``func`` builds (``cls(...)``, ``C(...)``), or None."""
    try:
        tree, _, _ = parse_function(func)
    except Exception:  # noqa: BLE001 (no source)
        return None
    first = _first(func)
    found = set()
    for n in A.walk(tree):
        if isinstance(n, gast.Return):
            call = n.value
            if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)):
                return None
            if owner is not None and call.func.id == first:
                found.add(owner)
            else:
                c = func.__globals__.get(call.func.id)
                found.add(c if user_class(c) else None)
    return found.pop() if len(found) == 1 else None


def _class_parameter(fn, param: str, cls: type, ctx) -> None:
    """A @classmethod's ``cls``: the class itself, as if named globally."""
    binding = ctx.bind(cls.__name__, cls)
    for node in A.walk(fn):
        if isinstance(node, gast.Name) and node.id == param and isinstance(node.ctx, gast.Load):
            node.id = binding
    for node in A.walk(fn):
        if isinstance(node, gast.Call) and getanno(node, Anno.FUNC) is None:
            obj = _dotted(node.func, binding, cls)
            if obj is not None:
                setanno(node, Anno.FUNC, obj)


def _dotted(node, binding: str, cls):
    if isinstance(node, gast.Name):
        return cls if node.id == binding else None
    if isinstance(node, gast.Attribute):
        base = _dotted(node.value, binding, cls)
        return None if base is None else getattr(base, node.attr, None)
    return None


# --- expressions: methods, properties, constructors, replace ---

def _rewrite_expressions(fn, known: dict, ctx) -> None:
    """Each expression rewritten after the ones inside it (``s.f(s.g(x))``: ``s.g(x)`` first,
    then the call that reads it)."""
    class Rewriter(gast.NodeTransformer):
        def generic_visit(self, node):
            node = super().generic_visit(node)
            return _expression(node, known, ctx) if isinstance(node, gast.expr) else node

    gast.NodeTransformer.generic_visit(Rewriter(), fn)  # (fn's children: fn itself stays)


def _expression(node, known: dict, ctx):
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and isinstance(node.func.ctx, gast.Load):  # s.energy(x), Spring.unit().energy(x)
        held = _held(node.func.value, known)
        if held is not None:  # self.spring.force(x): a method of an object in a field
            return _held_method(node, held, known, ctx) or node
        cls = _class_of(node.func.value, known)
        if cls is not None:
            held = _held(node.func, known)  # self.layer(x): an object in a field, called
            if held is not None and _callable_class(held[2]):
                return _held_method(_dunder_call(node), held, known, ctx) or node
            return _method(node, cls, known, ctx) or node
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id in known and _callable_class(known[node.func.id]):
        return _method(_dunder_call(node), known[node.func.id], known, ctx) or node  # model(x)
    if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load) \
            and isinstance(node.value, gast.Name) and node.value.id in known:
        if node.attr in getattr(known[node.value.id], "_fields", ()):  # a NamedTuple's field
            return _helper_call(node, "field", [node.value, A.const(node.attr)], ctx)
        prop = inspect.getattr_static(known[node.value.id], node.attr, None)
        if isinstance(prop, property) and is_user_function(prop.fget) \
                and _has_source(prop.fget):
            cls = known[node.value.id]
            func = A.attr(A.attr(A.name(ctx.bind(cls.__name__, cls)), node.attr), "fget")
            call = gast.copy_location(gast.Call(func=func, args=[node.value], keywords=[]), node)
            setanno(call, Anno.FUNC, prop.fget)
            setanno(call, Anno.CLASSES, {_first(prop.fget): cls})
            return call
    if isinstance(node, gast.Attribute) and _field_of_known(node.value, known) and (
            node.attr not in SHAPE_ATTRIBUTES and (hasattr(np.ndarray, node.attr)
                                                    or node.attr in METHODS)):
        node.value = _data(node.value, ctx)  # self.u.T, self.u.copy(): NumPy's, if u is data
        return node
    if isinstance(node, gast.Call):
        func = getanno(node, Anno.FUNC)
        if getanno(node, Anno.CLASSES) is None:  # what a call of your function knows
            _known_arguments(node, func, known)
        if is_checkpointed_loop(node) and isinstance(node.args[0], gast.Name):
            step = ctx.bindings.get(node.args[0].id)  # (its state: the step's parameters)
            if step is not None:
                classes = _argument_classes(step, node.args[1:], [], known)
                if classes:
                    setanno(node, Anno.CLASSES, classes)
        if func is dataclasses.replace and len(node.args) == 1:
            return _replaced(node, node.args[0], ctx)
        if user_class(func) and _record(func, ctx, node):
            return _construct(node, func, ctx)
    return node


def _callable_class(cls) -> bool:
    """Whether instances of ``cls`` are called through a ``__call__`` written in Python."""
    return inspect.isfunction(inspect.getattr_static(cls, "__call__", None))


def _dunder_call(call: gast.Call) -> gast.Call:
    """``o(args)`` -> ``o.__call__(args)``: the call of an object as its class's method."""
    return gast.copy_location(gast.Call(
        func=gast.Attribute(value=call.func, attr="__call__", ctx=gast.Load()),
        args=call.args, keywords=call.keywords), call)


def _held(node, known: dict):
    """``(owner, field, class)`` of ``o.f`` (or NamedTuple ``rt.field(o, "f")``) where ``o`` is
    of a known class that declares ``f``'s class (``_declared_class``), else None; ``o`` may be
    such a field itself (``m.cell.spring``: the owner ``m.cell``)."""
    if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load):
        owner, name = node.value, node.attr
    elif isinstance(node, gast.Call) and getanno(node, Anno.FUNC) is runtime.field \
            and len(node.args) == 2 and isinstance(node.args[1], gast.Constant):
        owner, name = node.args[0], node.args[1].value
    else:
        return None
    base = _chain_class(owner, known)
    cls = None if base is None else _declared_class(base, name)
    return None if cls is None else (gast.unparse(owner).strip(), name, cls)


def _chain_class(node, known: dict):
    """The class of ``o`` (an object of a known class) or of ``o.f.g`` (fields declared to hold
    objects of classes of yours, each by its owner's class), else None."""
    if isinstance(node, gast.Name):
        return known.get(node.id)
    held = _held(node, known)
    return None if held is None else held[2]


def _declared_class(owner: type, name: str):
    """The user class field ``name`` of ``owner`` holds by declaration: a dataclass's or
    NamedTuple's annotation, or, in a plain class, every ``self.<name> = C(...)`` of its
    methods building one class ``C``; None if not one class."""
    if not isinstance(owner, type) or callable(inspect.getattr_static(owner, name, None)):
        return None
    hints = {}
    for klass in reversed(owner.__mro__):
        hints.update(getattr(klass, "__annotations__", {}))
    if name in hints:
        hint = getattr(hints[name], "__forward_arg__", hints[name])  # (a NamedTuple's string)
        if isinstance(hint, str):  # (from __future__ import annotations): in the class's module
            hint = _class_globals(owner).get(hint) if hint.isidentifier() else None
        return hint if user_class(hint) else None
    found = set()
    for klass in owner.__mro__:
        for func in vars(klass).values():
            if not (inspect.isfunction(func) and is_user_function(func) and _has_source(func)):
                continue
            try:
                tree, _, _ = parse_function(func)
            except Exception:  # noqa: BLE001 (no source)
                continue
            first = _first(func)
            for n in A.walk(tree):
                targets = n.targets if isinstance(n, gast.Assign) else [n.target] \
                    if isinstance(n, (gast.AugAssign, gast.AnnAssign)) else []
                for t in targets:
                    if isinstance(t, gast.Attribute) and t.attr == name \
                            and isinstance(t.value, gast.Name) and t.value.id == first:
                        value = n.value if isinstance(n, gast.Assign) else None
                        made = func.__globals__.get(value.func.id) if isinstance(
                            value, gast.Call) and isinstance(value.func, gast.Name) else None
                        found.add(made if user_class(made) else None)
    return found.pop() if len(found) == 1 else None


def _class_globals(owner: type) -> dict:
    """The globals ``owner`` was defined in: its functions' (a module's, or the namespace a
    source was run in), else its module's."""
    for klass in owner.__mro__:
        for value in vars(klass).values():
            function = getattr(value, "__func__", value)
            if inspect.isfunction(function) and function.__code__.co_filename != "<string>" \
                    and function.__module__ == klass.__module__:
                return function.__globals__  # (not a dataclass's or NamedTuple's own)
    return vars(inspect.getmodule(owner) or types)


def _held_method(call, held: tuple, known: dict, ctx):
    """``o.f.m(args)``: ``C.m(rt.of_class(o.f, C, "o.f"), args)``, the object checked when it
    runs to be of the class its field declares. A method that changes the held object is
    refused (its changes would have to be written back into ``o``)."""
    owner, name, cls = held
    method = inspect.getattr_static(cls, call.func.attr, None)
    if inspect.isfunction(method) and is_user_function(method) \
            and _first(method) in changed_parameters(method, {_first(method): cls}, 0):
        raise error_at(call, ctx, f"{owner}.{name}.{call.func.attr}(...) changes the object "
                       f"held in {owner}.{name}, which is not supported yet",
                       f"take it out, change it and put it back: c = {owner}.{name}; "
                       f"c.{call.func.attr}(...); {owner}.{name} = c")
    where = A.const(f"{owner}.{name}")
    checked = _helper_call(call.func.value, "of_class", [
        call.func.value, A.name(ctx.bind(cls.__name__, cls)), where], ctx)
    call.func.value = checked
    return _method(call, cls, known, ctx)


def _field_of_known(node, known: dict) -> bool:
    """``o.a`` of an object of known class whose ``a`` is not a method or property."""
    if not (isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name)
            and node.value.id in known):
        return False
    attribute = inspect.getattr_static(known[node.value.id], node.attr, None)
    return not (callable(attribute) or isinstance(attribute, (property, staticmethod,
                                                              classmethod)))


def _data(node, ctx):
    where = gast.unparse(node).strip()
    return _helper_call(node, "data", [node, A.const(where)], ctx)


def _known_arguments(call, func, known: dict) -> None:
    """A call of your function (or of a class's class method) passes the classes it knows."""
    if inspect.ismethod(func) and isinstance(func.__self__, type) \
            and is_user_function(func.__func__):  # C.make(x): cls is C
        setanno(call, Anno.CLASSES, {**_argument_classes(
            func.__func__, [call.func.value, *call.args], call.keywords, known),
            _first(func.__func__): (func.__self__,)})
    elif is_user_function(func):
        classes = _argument_classes(func, call.args, call.keywords, known)
        if classes:
            setanno(call, Anno.CLASSES, classes)


def _first(func) -> str:
    return next(iter(inspect.signature(func).parameters), "")


def _method(call, cls, known: dict, ctx):
    """``o.m(args)`` of an object of class ``cls``, as a call of the function ``m`` is."""
    receiver, name = call.func.value, call.func.attr
    if name == "_replace" and isinstance(cls, type) and issubclass(cls, tuple) and not call.args:
        return _replaced(call, receiver, ctx)
    method = inspect.getattr_static(cls, name, None)
    if not _has_source(getattr(method, "__func__", method)):  # generated (__eq__), or C code
        return None
    owner = A.attr(A.name(ctx.bind(cls.__name__, cls)), name)
    if isinstance(method, staticmethod) and is_user_function(method.__func__):
        func, args, classes = method.__func__, call.args, {}
    elif isinstance(method, classmethod) and is_user_function(method.__func__):
        func, args, classes = method.__func__, [A.name(ctx.bind(cls.__name__, cls))] \
            + call.args, {_first(method.__func__): (cls,)}
    elif inspect.isfunction(method) and is_user_function(method):
        func, args, classes = method, [receiver] + call.args, {_first(method): cls}
    else:
        return None
    new = gast.copy_location(gast.Call(func=owner, args=args, keywords=call.keywords), call)
    setanno(new, Anno.FUNC, func)
    setanno(new, Anno.CLASSES, {**_argument_classes(func, args, call.keywords, known),
                                **classes})
    return new


def _argument_classes(func, args, keywords, known: dict) -> dict:
    """The known classes of the arguments a call passes, by the callee's parameter."""
    try:
        bound = inspect.signature(func).bind(*args, **{k.arg: k.value for k in keywords
                                                       if k.arg is not None})
    except TypeError:
        return {}
    elements = getattr(known, "elements", {})
    return {p: known[v.id] if v.id in known else ListOf(elements[v.id])
            for p, v in bound.arguments.items()
            if isinstance(v, gast.Name) and (v.id in known or v.id in elements)}


def _record(cls, ctx, node) -> bool:
    """Whether ``cls(...)`` builds a record from its arguments alone: a NamedTuple, or a
    dataclass whose generated ``__init__`` runs no ``__post_init__`` writing fields."""
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return True
    if not dataclasses.is_dataclass(cls) or vars_init(cls) is not None:
        return False
    post = getattr(cls, "__post_init__", None)
    if post is not None and _writes(post) and _post_init(cls) is not None:
        return False  # (built as its __init__ does: _constructors)
    if post is not None and _writes(post):
        raise error_at(node, ctx, f"{cls.__name__}.__post_init__ sets fields, so "
                       f"{cls.__name__}(...) is not built from its arguments alone",
                       "build the object outside and pass it, or compute the derived field "
                       "in a method or @property")
    return True


def _writes(func) -> bool:
    try:
        tree, _, _ = parse_function(func)
    except Exception:  # noqa: BLE001 (no source: assume the worst)
        return True
    return any(isinstance(n, (gast.Assign, gast.AugAssign)) and any(
        isinstance(t, gast.Attribute) for t in (n.targets if isinstance(n, gast.Assign)
                                                else [n.target])) or (
        isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
        and n.func.attr == "__setattr__") for n in A.walk(tree))


def _construct(call, cls, ctx):
    if any(k.arg is None for k in call.keywords) or any(
            isinstance(a, gast.Starred) for a in call.args):
        return call  # (passes/stars.py spells out what it can; the rest runs as written)
    bound = _fields_given(call, cls, ctx)
    names = list(bound.arguments)
    return _helper_call(call, "construct", [A.name(ctx.bind(cls.__name__, cls)),
                                            _strings(names),
                                            _tuple(list(bound.arguments.values()))], ctx)


def _fields_given(call, cls, ctx) -> inspect.BoundArguments:
    """The argument nodes of ``C(...)``, by the field (or InitVar) each gives."""
    try:
        return inspect.signature(cls).bind(*call.args, **{k.arg: k.value for k in call.keywords
                                                          if k.arg is not None})
    except TypeError as e:
        raise error_at(call, ctx, f"this call does not match {cls.__name__}'s fields: {e}",
                       "check the arguments") from e


def _replaced(call, obj, ctx):
    if any(k.arg is None for k in call.keywords):
        return call
    names = [k.arg for k in call.keywords]
    return _helper_call(call, "replaced", [obj, _strings(names),
                                           _tuple([k.value for k in call.keywords])], ctx)


def _strings(names) -> gast.Tuple:
    return gast.Tuple(elts=[A.const(n) for n in names], ctx=gast.Load())


def _tuple(values) -> gast.Tuple:
    return gast.Tuple(elts=list(values), ctx=gast.Load())


def _helper_call(like, name: str, args: list, ctx):
    call = gast.copy_location(A.call(A.dotted(f"{ctx.bind('rt', runtime)}.{name}"), *args),
                              like)
    setanno(call, Anno.FUNC, getattr(runtime, name))
    return call


# --- statements: attribute writes, constructors with __init__, calls that change objects ---

def _rewrite_blocks(node, known: dict, written: set, ctx) -> None:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
            setattr(node, field, [s for stmt in block
                                  for s in _statement(stmt, known, written, ctx)])
    for child in gast.iter_child_nodes(node):
        if isinstance(child, gast.stmt) or isinstance(child, gast.ExceptHandler):
            _rewrite_blocks(child, known, written, ctx)


def _statement(stmt, known: dict, written: set, ctx) -> list:
    if isinstance(stmt, (gast.Assign, gast.AugAssign)):
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
        if isinstance(target, gast.Attribute):
            if isinstance(stmt, gast.Assign) and len(stmt.targets) > 1:
                raise error_at(stmt, ctx, "a chained assignment to an attribute is not "
                               "supported", "assign it on a line of its own")
            before, stmt = _constructors(stmt, known, written, ctx)  # self.s = Spring(k)
            value = stmt.value if isinstance(stmt, gast.Assign) else gast.copy_location(
                gast.BinOp(left=_load(target), op=stmt.op, right=stmt.value), stmt)
            return before + [_write(target, value, stmt, known, written, ctx)]
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in known:
        held = _held(stmt.value, known)
        if held is not None:  # s = self.spring: checked to be of the class its methods assume
            stmt.value = _helper_call(stmt.value, "of_class", [
                stmt.value, A.name(ctx.bind(held[2].__name__, held[2])),
                A.const(f"{held[0]}.{held[1]}")], ctx)
    before, stmt = _constructors(stmt, known, written, ctx)
    if before and stmt is not None:  # Spring(k).energy(x): the method of the object built
        _rewrite_expressions(stmt, known, ctx)
    return before + ([] if stmt is None else _changing_call(stmt, known, written, ctx))


def _load(node):
    new = A.copy_node(node)
    for n in A.walk(new):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return new


def _write(target, value, stmt, known: dict, written: set, ctx):
    """``o.a.b = v`` as ``o = rt.with_field(o, "a", rt.with_field(o.a, "b", v))``."""
    root = target
    while isinstance(root, gast.Attribute):
        root = root.value
    if not (isinstance(root, gast.Name) and root.id in known):
        spelled = gast.unparse(target.value).strip()
        raise error_at(stmt, ctx, f"assignment to an attribute of '{spelled}', whose class is "
                       "not known here: only objects of your own classes (an argument, or built "
                       "here) get attribute writes", "assign to a local variable instead")
    while isinstance(target, gast.Attribute):
        value = _helper_call(stmt, "with_field", [_load(target.value), A.const(target.attr),
                                                  value], ctx)
        target = target.value
    if not isinstance(target, gast.Name):
        raise error_at(stmt, ctx, "assignment to an attribute of this expression is not "
                       "supported", "assign the object to a variable first: o = ...; o.a = v")
    setter = inspect.getattr_static(known[root.id], stmt_attr(stmt), None)
    if hasattr(setter, "__set__") and not inspect.ismemberdescriptor(setter):  # (slots: fine)
        raise error_at(stmt, ctx, f"{known[root.id].__name__}.{stmt_attr(stmt)} is a property "
                       "(or another descriptor) with a setter, whose gradient would not follow "
                       "what it stores", "assign the field the setter stores instead")
    _may_change(target.id, stmt, ctx)
    written.add(target.id)
    out = gast.Assign(targets=[A.name(target.id, store=True)], value=value, type_comment=None)
    return gast.copy_location(out, stmt)


def stmt_attr(stmt) -> str:
    """The attribute an attribute write ``o.a = v`` (or ``o.a += v``) of the object assigns."""
    target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
    while isinstance(target.value, gast.Attribute):
        target = target.value
    return target.attr


def _may_change(name: str, stmt, ctx) -> None:
    """A helper's parameter may change only in a made copy that returns it."""
    code = ctx.fn.__code__
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    if ctx.called and name in params and name not in getattr(ctx.fn, MUTATES, ()):
        raise error_at(stmt, ctx, f"this function changes its argument '{name}', which the "
                       "caller would see; it is called in a way that cannot return the change",
                       "call it as a statement of its own (s.step(dt), or y = s.step(dt))")


def _constructors(stmt, known: dict, written: set, ctx) -> tuple[list, object]:
    """``C(args)`` of a class with an ``__init__`` of yours: ``_o = rt.new(C)`` and the
    ``__init__`` call before the statement, which reads ``_o``."""
    before = []
    if isinstance(stmt, (gast.If, gast.While, gast.For)):
        exprs = [stmt.test if not isinstance(stmt, gast.For) else stmt.iter]
    elif isinstance(stmt, (gast.Assign, gast.Expr, gast.Return, gast.AugAssign)):
        exprs = [stmt.value] if stmt.value is not None else []
    else:
        exprs = []
    for expr in exprs:
        for call in reversed([n for n in A.walk(expr) if isinstance(n, gast.Call)]):
            cls = getanno(call, Anno.FUNC)
            if not (user_class(cls) and getanno(call, Anno.CLASSES) is None
                    and not _is_rt(call)):
                continue
            if type(cls).__call__ is not type.__call__ or cls.__new__ is not object.__new__:
                continue  # a metaclass or __new__ of its own: runs as written
            post = _post_init(cls)  # (a dataclass whose __post_init__ sets fields)
            init = vars_init(cls)
            if init is None and all(vars(k).get("__init__") is None for k in cls.__mro__[:-1]):
                init = False  # object's own __init__: nothing to run
            if post is None and (init is None or (
                    init and set(init.__code__.co_freevars) - {"__class__"})):
                continue  # a library's __init__, or a closure's: runs as written
            if isinstance(stmt, gast.While) or _conditional(expr, call):
                raise error_at(call, ctx, f"{cls.__name__}(...) here is evaluated only on "
                               "some paths", "build the object on a line of its own")
            whole = isinstance(stmt, gast.Assign) and stmt.value is call and len(
                stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            name = stmt.targets[0].id if whole else ctx.namer.fresh(cls.__name__.lower())
            if post is not None:
                before += _post_initialized(name, cls, post, call, stmt, known, written, ctx)
            else:
                before.append(gast.copy_location(A.assign(name, _helper_call(
                    call, "new", [A.name(ctx.bind(cls.__name__, cls))], ctx)), stmt))
            if init and post is None:
                init_call = gast.copy_location(gast.Call(
                    func=A.attr(A.name(ctx.bind(cls.__name__, cls)), "__init__"),
                    args=[A.name(name)] + call.args, keywords=call.keywords), call)
                setanno(init_call, Anno.FUNC, init)
                setanno(init_call, Anno.CLASSES, {**_argument_classes(
                    init, [A.name(name)] + call.args, call.keywords, known),
                    _first(init): cls})
                before += _changing_call(gast.copy_location(gast.Expr(value=init_call), stmt),
                                         {**known, name: cls}, written, ctx)
            known[name] = cls
            if whole:
                return before, None
            _replace_node(stmt, call, A.name(name))
    return before, stmt


def _post_init(cls):
    """The ``__post_init__`` of yours that sets fields, of a dataclass (not frozen) whose
    ``__init__`` is the generated one; else None."""
    if not dataclasses.is_dataclass(cls) or vars_init(cls) is not None \
            or cls.__dataclass_params__.frozen:
        return None
    post = getattr(cls, "__post_init__", None)
    if post is None or not is_user_function(post) or not _has_source(post) \
            or not _writes(post):
        return None
    return post


def _post_initialized(name: str, cls, post, call, stmt, known: dict, written: set,
                      ctx) -> list:
    """``o = C(a, b)`` of a dataclass whose ``__post_init__`` sets fields, as its generated
    ``__init__`` runs: ``o = rt.new(C)``, ``o.a = a`` for each field (its default, or a call
    of its default factory, where not given), then ``C.__post_init__(o, <InitVar values>)``, a
    call that changes ``o``."""
    signature = inspect.signature(cls)
    bound = _fields_given(call, cls, ctx)

    def default(label: str, value):
        if value is None or type(value) in (int, float, bool, str):
            return A.const(value)
        return A.name(ctx.bind(f"{cls.__name__}_{label}", value))

    fields = {f.name: f for f in dataclasses.fields(cls)}
    mine = {**known, name: cls}
    out = [gast.copy_location(A.assign(name, _helper_call(
        call, "new", [A.name(ctx.bind(cls.__name__, cls))], ctx)), stmt)]
    initvars = []
    for param in signature.parameters.values():
        value = bound.arguments.get(param.name)
        if value is None:
            value = default(param.name, param.default) if param.name not in fields \
                or fields[param.name].default_factory is dataclasses.MISSING else A.call(
                    default(f"{param.name}_factory", fields[param.name].default_factory))
        if param.name not in fields:
            initvars.append(value)
            continue
        target = gast.Attribute(value=A.name(name), attr=param.name, ctx=gast.Store())
        out += _statement(gast.copy_location(gast.Assign(targets=[target], value=value,
                                                         type_comment=None), stmt),
                          mine, written, ctx)
    for field in fields.values():  # (init=False: the generated __init__ sets its default)
        if field.init or field.default is dataclasses.MISSING and \
                field.default_factory is dataclasses.MISSING:
            continue
        value = default(field.name, field.default) if field.default is not dataclasses.MISSING \
            else A.call(default(f"{field.name}_factory", field.default_factory))
        target = gast.Attribute(value=A.name(name), attr=field.name, ctx=gast.Store())
        out += _statement(gast.copy_location(gast.Assign(targets=[target], value=value,
                                                         type_comment=None), stmt),
                          mine, written, ctx)
    post_call = gast.copy_location(gast.Call(
        func=A.attr(A.name(ctx.bind(cls.__name__, cls)), "__post_init__"),
        args=[A.name(name)] + initvars, keywords=[]), call)
    setanno(post_call, Anno.FUNC, post)
    setanno(post_call, Anno.CLASSES, {_first(post): cls})
    return out + _changing_call(gast.copy_location(gast.Expr(value=post_call), stmt), mine,
                                written, ctx)


def vars_init(cls):
    """The ``__init__`` of the user's that ``cls(...)`` runs, or None."""
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is not None:
            return init if is_user_function(init) and _has_source(init) else None
    return None


def _has_source(func) -> bool:
    """Not generated (a dataclass's ``__init__`` has no source file)."""
    if func is None or not inspect.isfunction(func):
        return func is None or not callable(func)
    try:
        inspect.getsourcelines(func)
    except (OSError, TypeError):
        return False
    return True


def _is_rt(call) -> bool:
    return getanno(call, Anno.FUNC) in (runtime.construct, runtime.replaced, runtime.new)


def _conditional(expr, call) -> bool:
    for n in A.walk(expr):
        if isinstance(n, (gast.IfExp, gast.BoolOp, gast.Lambda, gast.ListComp, gast.DictComp,
                          gast.SetComp, gast.GeneratorExp)) and any(
                c is call for c in A.walk(n)):
            return True
    return False


def _replace_node(stmt, old, new) -> None:
    for node in A.walk(stmt):
        for field, child in gast.iter_fields(node):
            if child is old:
                setattr(node, field, new)
            elif isinstance(child, list):
                setattr(node, field, [new if c is old else c for c in child])


def _changing_call(stmt, known: dict, written: set, ctx) -> list:
    """``s.step(dt)`` whose function changes ``s``: ``_, s = <step returning s>(s, dt)``."""
    value = getattr(stmt, "value", None)
    if not isinstance(stmt, (gast.Expr, gast.Assign, gast.Return)) \
            or not isinstance(value, gast.Call):
        _refuse_nested(stmt, ctx)
        return [stmt]
    if any(isinstance(n, gast.Call) and n is not value and _changed(n)
           for n in A.walk(value)):
        _refuse_nested(stmt, ctx)
    changed = _changed(value)
    if not changed:
        return [stmt]
    func = getanno(value, Anno.FUNC)
    bound = inspect.signature(func).bind(*value.args, **{k.arg: k.value for k in value.keywords
                                                         if k.arg is not None}).arguments
    names = []
    tree = parse_function(func)[0]
    indexed, grown = _indexed(tree, list(changed)), _grown(tree, list(changed))
    in_place = None  # the position of an array changed in place (a write into it: its views)
    for p in changed:
        arg = bound.get(p)
        if not isinstance(arg, gast.Name):
            raise error_at(value, ctx, f"{func.__qualname__} changes its argument '{p}', "
                           "which is not a variable here", "assign it to a variable first")
        if p in indexed and arg.id not in known \
                and arg.id not in getattr(known, "containers", ()):
            position = next((i for i, a in enumerate(value.args) if a is arg), None)
            if not isinstance(stmt, gast.Expr) or len(changed) > 1 or position is None \
                    or p in grown:
                raise error_at(value, ctx, f"{func.__qualname__} changes its argument '{p}' "
                               f"in place (an item written, appended or popped), and "
                               f"'{arg.id}' is not a dict or list built here: it may be an "
                               "array, whose views would see the change", f"call it as a "
                               f"statement of its own, giving '{arg.id}' by position, or have "
                               "the function return the new value")
            in_place = position  # (checked as a write into it: passes/check_writes.py)
        _may_change(arg.id, stmt, ctx)
        if in_place is None:  # (an object's or a container's: none shares it, _refuse_shared)
            written.add(arg.id)
        names.append(arg.id)
    result = not isinstance(stmt, gast.Expr)
    if result and _returns_changed(func, changed):
        raise error_at(stmt, ctx, f"{func.__qualname__} returns the object it changes, which "
                       "would be shared by two names", f"call it as a statement of its own: "
                       f"{gast.unparse(value).strip()}")
    copied = () if in_place is None else (next(p for p in changed if bound.get(p) is
                                               value.args[in_place]),)
    changing = changing_copy(func, tuple(changed), result, ctx, copied)
    value.func = A.name(ctx.bind(changing.__name__, changing))
    setanno(value, Anno.FUNC, changing)
    if not result and len(names) == 1:  # s.step(dt): s = <step returning s>(s, dt)
        assign = gast.copy_location(A.assign(names[0], value), stmt)
        if in_place is not None:
            setanno(assign, Anno.IN_PLACE, in_place)
        return [assign]
    if isinstance(stmt, gast.Assign) and len(stmt.targets) != 1:
        raise error_at(stmt, ctx, "a chained assignment of a call that changes an object is "
                       "not supported", "assign it once")
    out = ctx.namer.fresh("_changed")
    elts = [A.name(n, store=True) for n in names]
    if isinstance(stmt, gast.Assign):
        elts.insert(0, stmt.targets[0])
    elif result:
        returned = ctx.namer.fresh("_result")
        elts.insert(0, A.name(returned, store=True))
    unpack = gast.Assign(targets=[gast.Tuple(elts=elts, ctx=gast.Store())], value=A.name(out),
                         type_comment=None)
    made = [gast.copy_location(A.assign(out, value), stmt), gast.copy_location(unpack, stmt)]
    if isinstance(stmt, gast.Return):
        made.append(gast.copy_location(gast.Return(value=A.name(returned)), stmt))
    return made


def _returns_changed(func, changed) -> bool:
    tree, _, _ = parse_function(func)
    for n in A.walk(tree):
        if isinstance(n, gast.Return) and n.value is not None:
            values = n.value.elts if isinstance(n.value, (gast.Tuple, gast.List)) else [n.value]
            if any(isinstance(v, gast.Name) and v.id in changed for v in values):
                return True
    return False


def _changed_arguments(call) -> list:
    """The variables a call of a made copy (``changing_copy``) changes."""
    func = getanno(call, Anno.FUNC)
    changed = getattr(func, MUTATES, None)
    if not changed:
        return []
    bound = inspect.signature(func).bind(*call.args, **{
        k.arg: k.value for k in call.keywords if k.arg is not None}).arguments
    return [bound[p] for p in changed if isinstance(bound.get(p), gast.Name)]


def _refuse_nested(stmt, ctx) -> None:
    if isinstance(stmt, (gast.If, gast.While, gast.For)):
        heads = [getattr(stmt, f) for f in ("test", "iter", "value", "target", "targets")
                 if getattr(stmt, f, None) is not None]
    elif isinstance(stmt, gast.Try):  # (its blocks' statements are checked as statements)
        heads = [h.type for h in stmt.handlers if h.type is not None]
    elif isinstance(stmt, gast.With):
        heads = [item.context_expr for item in stmt.items]
    else:
        heads = [stmt]
    for n in (n for h in heads for n in A.walk(h)):
        if isinstance(n, gast.Call) and _changed(n):
            raise error_at(n, ctx, f"{getanno(n, Anno.FUNC).__qualname__} changes an object "
                           "it is given, and is called inside an expression",
                           "call it as a statement of its own: y = s.step(dt)")


def _changed(call) -> tuple[str, ...]:
    """The parameters of the user function ``call`` calls that it changes (written attributes,
    directly or by a method of theirs that does), for classes known at the call."""
    func = getanno(call, Anno.FUNC)
    if not is_user_function(func) or getattr(func, MUTATES, None) is not None \
            or set(func.__code__.co_freevars) - {"__class__"}:  # (a closure: runs as written)
        return ()
    return changed_parameters(func, getanno(call, Anno.CLASSES) or {}, depth=0)


def changed_parameters(func, classes: dict, depth: int) -> tuple[str, ...]:
    key = ("changes", tuple(sorted((k, id(v)) for k, v in classes.items())))
    found = cache.lookup(func, key)
    if found is not None:
        return found
    try:
        tree, _, _ = parse_function(func)
    except Exception:  # noqa: BLE001 (no source: the call's compile says why)
        return ()
    params = [a.id for a in tree.args.args + tree.args.kwonlyargs]
    out = set(_indexed(tree, params))
    for n in A.walk(tree):
        if isinstance(n, (gast.Assign, gast.AugAssign)):
            for t in n.targets if isinstance(n, gast.Assign) else [n.target]:
                root = t
                while isinstance(root, (gast.Attribute, gast.Subscript)):
                    root = root.value
                if isinstance(t, gast.Attribute) or (
                        isinstance(t, gast.Subscript) and isinstance(t.value, gast.Attribute)):
                    if isinstance(root, gast.Name) and root.id in params:
                        out.add(root.id)
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                and isinstance(n.func.value, gast.Call) \
                and isinstance(n.func.value.func, gast.Name) \
                and n.func.value.func.id == "super" and params and params[0] in classes \
                and isinstance(classes[params[0]], type) and depth < 4:  # super().m(...)
            method = _super_method(func, classes[params[0]], n.func.attr)[1]
            if inspect.isfunction(method) and is_user_function(method) and \
                    _first(method) in changed_parameters(
                        method, {_first(method): classes[params[0]]}, depth + 1):
                out.add(params[0])
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                and isinstance(n.func.value, gast.Name) and n.func.value.id in classes \
                and depth < 4:
            method = inspect.getattr_static(classes[n.func.value.id], n.func.attr, None)
            if inspect.isfunction(method) and is_user_function(method) and \
                    _first(method) in changed_parameters(
                        method, {_first(method): classes[n.func.value.id]}, depth + 1):
                out.add(n.func.value.id)
    found = tuple(p for p in params if p in out)
    cache.store(func, key, found)
    return found


_GROWING = frozenset({"append", "extend", "pop"})  # (list methods desugar compiles)


def _indexed(tree, params: list) -> set[str]:
    """The parameters a function changes as containers: ``state["x"] = v`` (``+=``),
    ``xs.append(v)``, ``xs.extend(ys)``, ``xs.pop()``."""
    out = _grown(tree, params)
    for n in A.walk(tree):
        targets = n.targets if isinstance(n, gast.Assign) else [n.target] \
            if isinstance(n, gast.AugAssign) else []
        for t in targets:
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name) \
                    and t.value.id in params:
                out.add(t.value.id)
    return out


def _grown(tree, params: list) -> set[str]:
    """The parameters a function changes as lists only: ``xs.append(v)``, ``xs.pop()``."""
    return {n.func.value.id for n in A.walk(tree) if isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute) and n.func.attr in _GROWING
            and isinstance(n.func.value, gast.Name) and n.func.value.id in params}


def _containers(fn) -> set[str]:
    """The variables every assignment binds to a dict or list made here (a literal, a
    comprehension, ``dict(...)``, ``list(...)``): a call changing one by index changes it alone
    (no array view of it can see the change)."""
    values: dict[str, list] = {}
    for n in A.walk(fn):
        if isinstance(n, gast.Assign):
            for t in n.targets:
                for name in (x for x in A.walk(t) if isinstance(x, gast.Name)):
                    values.setdefault(name.id, []).append(n.value if t is name else None)
        elif isinstance(n, (gast.AugAssign, gast.For, gast.comprehension, gast.withitem)):
            target = getattr(n, "target", None) or getattr(n, "optional_vars", None)
            for name in (x for x in A.walk(target) if isinstance(x, gast.Name)) \
                    if target is not None else ():
                values.setdefault(name.id, []).append(None)
    made = (gast.Dict, gast.List, gast.DictComp, gast.ListComp)
    return {name for name, vals in values.items() if all(
        isinstance(v, made) or isinstance(v, gast.Call) and isinstance(v.func, gast.Name)
        and v.func.id in ("dict", "list") or isinstance(v, gast.Name)
        and v.id.startswith("_changed") for v in vals)}


def changing_copy(func, changed: tuple[str, ...], result: bool, ctx,
                  copied: tuple[str, ...] = ()):
    """A copy of ``func`` whose every return is ``return (value, <changed parameters>)``
    (without ``result``: ``return <changed parameters>``, one alone when there is one). The
    parameters ``copied`` (an array the function writes into) are copied first: the caller's
    array, which the gradient may still read, is left as it was, and the new one returned
    (the call is a write into the caller's variable, whose views are followed as a write's)."""
    key = ("changing copy", changed, result, copied)
    found = cache.lookup(func, key)
    if found is not None:
        return found
    tree, filename, _ = parse_function(func)
    owner = _owner(func)  # (a method calling super(): the copy is made with its __class__)
    if set(func.__code__.co_freevars) - {"__class__"} or (
            func.__code__.co_freevars and owner is None):
        raise error_at(tree, ctx, f"{func.__qualname__} changes its argument and uses "
                       "variables of an enclosing scope", "define it at module or class level")

    def returned(value):
        extra = [A.name(p) for p in changed]
        if result:
            return _tuple([value or A.const(None)] + extra)
        return extra[0] if len(extra) == 1 else _tuple(extra)

    for n in A.walk(tree):
        if isinstance(n, gast.Return):
            n.value = returned(n.value)
    if not (tree.body and isinstance(tree.body[-1], gast.Return)):
        end = gast.Return(value=returned(None))
        tree.body.append(gast.copy_location(end, tree.body[-1]))
    for p in reversed(copied):  # p = p.copy()
        first = next((i for i, stmt in enumerate(tree.body) if not (  # (after a docstring)
            isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant))), 0)
        tree.body.insert(first, gast.copy_location(
            A.assign(p, A.call(A.attr(A.name(p), "copy"))), tree.body[first]))
    tree.name = f"{func.__name__.strip('_')}_{'changing' if result else 'returning'}_" \
        f"{'_'.join(changed)}"
    tree.args.defaults = []  # (evaluated in the user's module, and set from func's below)
    tree.args.kw_defaults = [None] * len(tree.args.kwonlyargs)
    tree.returns = None
    for a in A.walk(tree.args):
        if isinstance(a, gast.Name):
            a.annotation = None
    module = gast.gast_to_ast(gast.Module(body=[tree], type_ignores=[]))
    ast.fix_missing_locations(module)
    source = ast.unparse(module) + "\n"
    name = f"<{func.__qualname__}, returning {'its result and ' if result else ''}" \
        f"{', '.join(changed)}, from {filename}:{func.__code__.co_firstlineno}>"
    if owner is not None:  # (defined inside a function of __class__: super() finds its cell)
        source = "def _made(__class__):\n" + "".join(
            "    " + line for line in source.splitlines(keepends=True)) \
            + f"    return {tree.name}\n"
    lines = ["\n"] * (tree.lineno - 1 - (owner is not None)) + source.splitlines(keepends=True)
    linecache.cache[name] = (len("".join(lines)), None, lines, name)
    namespace: dict = {}
    exec(compile("".join(lines), name, "exec"), namespace)  # noqa: S102 (the user's own code)
    compiled = namespace[tree.name] if owner is None else namespace["_made"](owner)
    made = types.FunctionType(compiled.__code__, func.__globals__, tree.name,
                              func.__defaults__, compiled.__closure__)
    made.__kwdefaults__ = func.__kwdefaults__
    made.__qualname__ = f"{func.__qualname__}"
    made.__module__ = func.__module__
    setattr(made, MUTATES, changed)
    cache.store(func, key, made)
    return made


# --- shared objects ---

_FRESH = (runtime.new, runtime.construct, runtime.replaced, runtime.with_field,
          dataclasses.replace, copy.copy, copy.deepcopy)


def _refuse_shared(fn, written: set, ctx) -> None:
    """A variable whose attributes are written may hold only an object of its own: a parameter,
    or one made here (built, copied, replaced, or returned changed by a call); and once stored
    into a container, another object or another name, it may not change again: the other
    would see the change in Python but not in the compiled copy."""
    if not written:
        return
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    order = _statements(fn)  # id -> (position, enclosing loops)
    for stmt, node in _nodes(fn):
        if isinstance(node, gast.Assign):
            names = {n.id for t in node.targets for n in A.walk(t) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, gast.Store)}
            if names & written and not _fresh(node.value, params):
                raise _shared(node, (names & written).pop(), ctx)
            if isinstance(node.value, gast.Name) and node.value.id in written \
                    and node.value.id not in names:  # t = s
                raise _shared(node, node.value.id, ctx)
        elif isinstance(node, (gast.For, gast.comprehension, gast.withitem, gast.AugAssign)):
            target = getattr(node, "target", None) or getattr(node, "optional_vars", None)
            names = {n.id for n in A.walk(target) if isinstance(n, gast.Name)} if target else set()
            if names & written:
                raise _shared(node, (names & written).pop(), ctx)
        for stored in _stored(node) + _kept(node):
            if isinstance(stored, gast.Name) and stored.id in written \
                    and not _returned(fn, node) and _changes_after(fn, stored.id, stmt, order):
                raise _shared(node, stored.id, ctx)


def _nodes(fn):
    """(statement, node) for every node of ``fn``'s body, with the statement it is in."""
    for stmt in (s for s in A.walk(fn) if isinstance(s, gast.stmt) and s is not fn):
        own = [stmt]
        while own:
            node = own.pop()
            yield stmt, node
            own += [c for c in gast.iter_child_nodes(node) if not isinstance(c, gast.stmt)]


def _statements(fn) -> dict:
    """Each statement's position in program order and the loops around it."""
    out = {}

    def visit(block, loops):
        for stmt in block:
            out[id(stmt)] = (len(out), loops)
            inner = loops + (id(stmt),) if isinstance(stmt, (gast.For, gast.While)) else loops
            for field in ("body", "orelse", "finalbody", "handlers"):
                visit(getattr(stmt, field, None) or [], inner)

    visit(fn.body, ())
    return out


def _changes_after(fn, name: str, stmt, order: dict) -> bool:
    """Whether ``name`` is bound again after ``stmt`` runs (later, or in the same loop)."""
    at, loops = order.get(id(stmt), (0, ()))
    for other in A.walk(fn):
        if isinstance(other, gast.Assign) and other is not stmt and any(
                isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
                for t in other.targets for n in A.walk(t)):
            position, around = order.get(id(other), (0, ()))
            if position > at or set(loops) & set(around):
                return True
    return False


def _kept(node) -> list:
    """The arguments a call of your function may keep (store, or return as they are)."""
    func = getanno(node, Anno.FUNC) if isinstance(node, gast.Call) else None
    if not is_user_function(func):
        return []
    try:
        bound = inspect.signature(func).bind(*node.args, **{
            k.arg: k.value for k in node.keywords if k.arg is not None}).arguments
    except TypeError:
        return []
    changed = getattr(func, MUTATES, ())
    return [v for p, v in bound.items() if p not in changed and keeps(func, p)]


def keeps(func, param: str) -> bool:
    """Whether ``func`` uses its parameter ``param`` as a whole value other than by reading its
    attributes or passing it on (stores it, returns it): then the result may share it."""
    try:
        tree, _, _ = parse_function(func)
    except Exception:  # noqa: BLE001 (no source: assume it may)
        return True
    passed = {id(a) for n in A.walk(tree) if isinstance(n, gast.Call) for a in n.args} | {
        id(k.value) for n in A.walk(tree) if isinstance(n, gast.Call) for k in n.keywords}
    read = {id(n.value) for n in A.walk(tree) if isinstance(n, gast.Attribute)}
    return any(isinstance(n, gast.Name) and n.id == param and isinstance(n.ctx, gast.Load)
               and id(n) not in passed and id(n) not in read for n in A.walk(tree))


def _fresh(value, params: set) -> bool:
    """A value that is an object of its own (or unpacks a changing call's results)."""
    if isinstance(value, gast.Name):  # _, s = _changed (a changing call's results)
        return value.id.startswith("_changed")
    if isinstance(value, (gast.Dict, gast.List, gast.DictComp, gast.ListComp)):
        return True  # (a container made here)
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
            and value.func.id in ("dict", "list"):
        return True
    if isinstance(value, gast.Call):
        func = getanno(value, Anno.FUNC)
        try:
            return func in _FRESH or user_class(func) or getattr(func, MUTATES, None) is not None
        except TypeError:
            return False
    return False


def _stored(node) -> list:
    """The values ``node`` stores into a container or an object."""
    if isinstance(node, (gast.Tuple, gast.List, gast.Set)) and isinstance(node.ctx, gast.Load):
        return node.elts
    if isinstance(node, gast.Dict):
        return node.values
    if isinstance(node, gast.Call):
        func = getanno(node, Anno.FUNC)
        if func is runtime.with_field:
            return node.args[2:]
        if func in (runtime.construct, runtime.replaced) and isinstance(node.args[2], gast.Tuple):
            return node.args[2].elts
    return []


def _returned(fn, node) -> bool:
    """A tuple returned, or the tuple of a changing call's results: shares nothing after."""
    for n in A.walk(fn):
        if isinstance(n, gast.Return) and n.value is node:
            return True
        if isinstance(n, gast.Return) and isinstance(n.value, gast.Tuple) and any(
                e is node for e in n.value.elts):
            return True
    return False


def _shared(node, name: str, ctx):
    return error_at(node, ctx, f"the object in '{name}' is changed in this function (its "
                    "attributes, or its items by a call) and is shared here with another name "
                    "or a container, which would see the change in Python but not in the "
                    "compiled copy",
                    f"keep one name for the object (write through '{name}' only), or copy it")
