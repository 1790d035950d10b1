"""Rewrite sugar into plain single assignments.

- ``x op= e``            -> ``x = x op e`` (also ``y[i] op= e`` -> ``y[i] = y[i] op e``)
- ``y[i] = e``           -> ``y = <setitem>(y, i, e)``, a Call annotated FUNC=operator.setitem:
  a new value of ``y``, so later passes see an ordinary assignment (reverse emits the write)
- ``a = b = e``          -> ``b = e; a = b``
- ``a, b = e1, e2``      -> ``a = e1; b = e2`` (through temporaries when a target is also read)
- ``for v in xs`` (also ``enumerate``, ``zip``, ``reversed``) -> ``for _i in range(...)`` with
  ``v = xs[_i]`` first in the body, so every loop runs over a ``range``
- ``[e for v in xs if c]`` (and a generator expression) -> a loop building a fresh list with
  ``_list = rt.appended(_list, e)`` (``{k: v for ...}``: a fresh dict, ``_dict[k] = v``;
  ``{e for ...}``: ``set`` of the list); ``v = xs.pop(i)`` -> ``v = xs[i]; xs = rt.popped(xs,
  i)`` (a bare ``xs.pop(i)``: the second alone); ``xs.append(v)`` -> ``xs = rt.appended(xs, v)``,
  ``xs.extend(ys)`` -> ``xs = rt.extended(xs, ys)``
- ``np.add.at(a, i, b)`` -> ``a = rt.added_at(a, i, b)`` (``np.subtract.at``: ``rt.subtracted_at``,
  ``np.multiply.at``: ``rt.multiplied_at``; ``np.put(a, i, v)``: ``rt.put``,
  ``np.put_along_axis(a, i, v, axis)``: ``rt.put_along``), a write in place into a local array
  as the new value it makes
- docstrings and ``pass`` are dropped.

Other tuple targets (``n, m = x.shape``) are kept; the reverse pass accepts them when inactive.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> fn = gast.parse("def f(x, y):\\n    x *= 2\\n    x, y = y, x\\n    return x").body[0]
>>> print(to_source(desugar(fn, SimpleNamespace(namer=Namer({"x", "y"})))))
def f(x, y):
    x = x * 2
    _t1 = y
    _t2 = x
    x = _t1
    y = _t2
    return x
"""

from __future__ import annotations

import operator

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, setanno
from transpiler.errors import error_at
from transpiler.passes import tape


def desugar(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if tape.is_generated(getattr(ctx, "fn", None)):  # a gradient, differentiated again
        fn.body = tape.popping(fn.body, {t for t, _ in tape.pushes(fn.body)})
    stored = _stored(fn)
    _record(fn, stored, ctx)
    fn.body = _block(fn.body, ctx, stored)
    return fn


def _record(fn, stored: frozenset[str], ctx) -> None:
    """``history.append(v)`` into a list of the module's (or a closure's): ``rt.record(history,
    v)``, state outside the mathematics kept as Python keeps it (the value, never its gradient;
    a differentiated value in a list the function reads back is refused: lower.py)."""
    if tape.is_generated(getattr(ctx, "fn", None)):
        return
    for stmt in A.walk(fn):
        if not (_is_append(stmt) and stmt.value.func.attr == "append"
                and stmt.value.func.value.id not in stored):
            continue
        call = stmt.value
        new = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.record"), call.func.value,
                     call.args[0])
        setanno(new, Anno.FUNC, runtime.record)
        stmt.value = gast.copy_location(new, call)


def _stored(node) -> frozenset[str]:
    return frozenset(n.id for n in A.walk(node) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, (gast.Store, gast.Param)))


def _block(stmts: list, ctx, stored: frozenset[str]) -> list:
    body = []
    for stmt in stmts:
        before, stmt = _Comprehensions(ctx).lower(stmt)
        if before:
            stored = stored | _stored(gast.Module(body=before, type_ignores=[]))
            body.extend(_block(before, ctx, stored))
        if isinstance(stmt, gast.For) and not over_range(stmt.iter):
            before, stmt = index_loop(stmt, ctx)
            body.extend(before)
        if isinstance(stmt, gast.While):  # (its test's comprehensions: now in its body)
            stored = stored | _stored(stmt)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = _block(stmt.body, ctx, stored) or [gast.Pass()]
            stmt.orelse = _block(stmt.orelse, ctx, stored)
            body.append(stmt)
            continue
        for new in _desugar(stmt, ctx, stored):
            setanno(new, Anno.ORIGIN, stmt)
            body.append(gast.copy_location(new, stmt))
    return body


def _desugar(stmt, ctx, stored: frozenset[str]) -> list:
    """The statements ``stmt`` becomes (``stored``: the names the function binds; a container
    it writes into by subscript and never binds is its module's or a closure's)."""
    if isinstance(stmt, gast.Pass):
        return []
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant):
        return []  # docstring or a bare constant
    if isinstance(stmt, gast.AugAssign):
        read = A.copy_node(stmt.target)
        read.ctx = gast.Load()
        value = gast.copy_location(gast.BinOp(left=read, op=stmt.op, right=stmt.value), stmt)
        target = A.copy_node(stmt.target)
        out = _desugar(gast.Assign(targets=[target], value=value, type_comment=None), ctx,
                       stored)
        if isinstance(stmt.target, gast.Name):
            setanno(out[-1], Anno.IN_PLACE)
        return out
    scatter = _scatter_add(stmt, stored)
    if scatter is not None:  # np.add.at(a, i, b): a new value of a (a scatter-add)
        call = stmt.value
        new = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.{scatter.__name__}"), *call.args,
                     keywords=call.keywords)
        setanno(new, Anno.FUNC, scatter)
        return [gast.copy_location(A.assign(call.args[0].id, new), stmt)]
    popped = _popped(stmt)
    if popped is not None and popped[0] in stored \
            and not tape.is_generated(getattr(ctx, "fn", None)):  # (a module's list, a tape's)
        # v = xs.pop(i), xs.pop(i): v = xs[i]; xs = rt.popped(xs, i)
        items, index = popped
        call = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.popped"), A.name(items),
                      *([] if index is None else [index]))
        setanno(call, Anno.FUNC, runtime.popped)
        out = [gast.copy_location(A.assign(items, call), stmt)]
        if isinstance(stmt, gast.Assign):
            read = gast.Subscript(value=A.name(items), slice=A.const(-1) if index is None
                                  else A.copy_node(index), ctx=gast.Load())
            out.insert(0, gast.copy_location(gast.Assign(targets=stmt.targets, value=read,
                                                         type_comment=None), stmt))
        return out
    if _is_append(stmt):
        call = stmt.value
        if call.func.attr == "append" and tape.is_generated(getattr(ctx, "fn", None)):
            return [stmt]  # a generated gradient's tape: forward mode keeps a tangent stack
        build = _appended if call.func.attr == "append" else _extended
        return [gast.copy_location(A.assign(call.func.value.id, build(
            ctx, A.name(call.func.value.id), call.args[0])), stmt)]
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Subscript):
        target = stmt.targets[0]
        if isinstance(target.value, gast.Name) and target.value.id not in stored:
            call = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.store"), target.value,
                          A.index_expression(target.slice), stmt.value)
            setanno(call, Anno.FUNC, runtime.store)  # _CACHE[k] = v: the module's, as written
            return [gast.Expr(value=gast.copy_location(call, stmt))]
        return [setitem(target, stmt.value, stmt)]
    if isinstance(stmt, gast.Assign) and len(stmt.targets) > 1:
        *outer, last = stmt.targets
        first = gast.Assign(targets=[last], value=stmt.value, type_comment=None)
        source = last.id if isinstance(last, gast.Name) else None
        if source is None:
            return [stmt]
        return _desugar(first, ctx, stored) + [
            gast.Assign(targets=[t], value=A.name(source), type_comment=None) for t in outer]
    if isinstance(stmt, gast.Assign) and _literal_unpack(stmt):
        targets, values = stmt.targets[0].elts, stmt.value.elts
        written = {t.id for t in targets}
        if any(n in written for v in values for n in A.load_names(v)):
            temps = [ctx.namer.temp() for _ in values]
            return ([A.assign(t, v) for t, v in zip(temps, values, strict=True)]
                    + [A.assign(t.id, A.name(tmp)) for t, tmp in zip(targets, temps, strict=True)])
        return [A.assign(t.id, v) for t, v in zip(targets, values, strict=True)]
    return [stmt]


def _scatter_add(stmt, stored: frozenset[str]):
    """The runtime function of a statement writing into an array in place, ``np.add.at(a,
    index, b)`` (``np.subtract.at``, ``np.multiply.at``, ``np.put``, ``np.put_along_axis``),
    into an array ``a`` the function binds (a local or a parameter: not its module's), or
    None."""
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return None
    call = stmt.value
    func = getanno(call, Anno.FUNC)
    if not call.args or not isinstance(call.args[0], gast.Name) \
            or call.args[0].id not in stored:
        return None
    try:
        found = _IN_PLACE.get(func)
    except TypeError:  # unhashable
        return None
    if found is None:
        return None
    function, positional, keywords = found
    given = {k.arg for k in call.keywords}
    if len(call.args) + len(given) > positional + len(keywords) or not given <= keywords \
            or len(call.args) < 3:
        return None
    return function


# the calls that write into their first argument: (function, most positional arguments, the
# keywords it takes)
_IN_PLACE = {np.add.at: (runtime.added_at, 3, frozenset()),
             np.subtract.at: (runtime.subtracted_at, 3, frozenset()),
             np.multiply.at: (runtime.multiplied_at, 3, frozenset()),
             np.put: (runtime.put, 4, frozenset({"mode"})),
             np.put_along_axis: (runtime.put_along, 4, frozenset({"axis"}))}


def _popped(stmt):
    """``(the list's name, the index or None)`` of ``xs.pop(i)`` written as a statement or as
    ``v = xs.pop(i)`` (one name, or names, assigned), else None."""
    call = stmt.value if isinstance(stmt, gast.Expr) or isinstance(stmt, gast.Assign) \
        and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (gast.Name, gast.Tuple)) \
        else None
    if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Attribute) \
            or call.func.attr != "pop" or not isinstance(call.func.value, gast.Name) \
            or len(call.args) > 1 or call.keywords \
            or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    stored = {n.id for n in A.walk(stmt.targets[0]) if isinstance(n, gast.Name)} \
        if isinstance(stmt, gast.Assign) else set()
    if call.func.value.id in stored:
        return None
    return call.func.value.id, call.args[0] if call.args else None


def _is_append(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) \
        and isinstance(stmt.value.func, gast.Attribute) \
        and stmt.value.func.attr in ("append", "extend") \
        and isinstance(stmt.value.func.value, gast.Name) and len(stmt.value.args) == 1 \
        and not stmt.value.keywords


def _appended(ctx, items, item) -> gast.Call:
    call = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.appended"), items, item)
    setanno(call, Anno.FUNC, runtime.appended)
    return call


def _extended(ctx, items, more) -> gast.Call:
    call = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.extended"), items, more)
    setanno(call, Anno.FUNC, runtime.extended)
    return call


def lower_comprehensions(stmt, ctx) -> tuple[list, object]:
    """``(loops building them, stmt reading their results)`` for the comprehensions in one
    statement's own expressions (passes/objects.py lowers those that build objects early)."""
    return _Comprehensions(ctx).lower(stmt)


class _Comprehensions(gast.NodeTransformer):
    """Replace comprehensions in one statement's own expressions by loops run before it."""

    def __init__(self, ctx):
        self.ctx, self.before = ctx, []

    def lower(self, stmt):
        if isinstance(stmt, (gast.If, gast.While)):
            stmt.test = self.visit(stmt.test)
        elif isinstance(stmt, gast.For):
            stmt.iter = self.visit(stmt.iter)
        else:
            stmt = self.visit(stmt)
        if self.before and isinstance(stmt, gast.While) and stmt.orelse:
            raise error_at(stmt.test, self.ctx, "a comprehension in the condition of a 'while' "
                           "with an 'else' is not supported", "compute it in the loop body")
        for s in self.before:  # comments in the adjoint name the user's line
            for n in A.walk(s):
                if isinstance(n, gast.stmt):
                    setanno(n, Anno.ORIGIN, stmt)
        if self.before and isinstance(stmt, gast.While):
            # while T: B  ->  while True: <T's comprehensions>; if not T: break; B
            stop = gast.copy_location(gast.If(test=gast.UnaryOp(op=gast.Not(), operand=stmt.test),
                                              body=[gast.copy_location(gast.Break(), stmt)],
                                              orelse=[]), stmt)
            setanno(stop, Anno.ORIGIN, stmt)
            loop = gast.copy_location(gast.While(test=A.const(True), body=[
                *self.before, stop, *stmt.body], orelse=[]), stmt)
            return [], loop
        return self.before, stmt

    def visit_ListComp(self, node):
        return self.comprehension(node)

    visit_GeneratorExp = visit_ListComp

    def visit_SetComp(self, node):
        """``{e for v in xs}`` -> ``set(<the list comprehension>)``: a set's items are not
        differentiated (``set`` has no rule), its building is a list's."""
        items = self.comprehension(gast.ListComp(elt=node.elt, generators=node.generators))
        return gast.copy_location(A.call(A.builtin("set"), items), node)

    def visit_DictComp(self, node):
        """``{k: v for ...}`` -> a loop writing ``_dict[k] = v`` into a fresh dict, as it is
        written (a later key replaces an earlier one)."""
        return self.comprehension(node, keyed=True)

    def comprehension(self, node, keyed: bool = False):
        result = self.ctx.namer.fresh("_dict" if keyed else "_list")
        rename = {}
        for generator in node.generators:
            if generator.is_async:
                raise error_at(node, self.ctx, "async comprehensions are not supported", "")
            for n in A.walk(generator.target):
                if isinstance(n, gast.Name):
                    rename[n.id] = self.ctx.namer.fresh(f"_{n.id}")
                    if isinstance(getattr(self.ctx, "spelled", None), dict):
                        self.ctx.spelled[rename[n.id]] = n.id  # (for messages)
        for n in A.walk(node):  # comprehension variables never leak into the function
            if isinstance(n, gast.Name) and n.id in rename:
                n.id = rename[n.id]
        inner = _Comprehensions(self.ctx)  # comprehensions in the element run per element
        if keyed:
            key = inner.visit(node.key)
            body = [gast.Assign(targets=[gast.Subscript(
                value=A.name(result), slice=key, ctx=gast.Store())], value=inner.visit(
                node.value), type_comment=None)]
        else:
            body = [A.assign(result, _appended(self.ctx, A.name(result),
                                               inner.visit(node.elt)))]
        body = inner.before + body
        for generator in reversed(node.generators):
            for condition in reversed(generator.ifs):
                inner = _Comprehensions(self.ctx)
                body = inner.before + [gast.If(test=inner.visit(condition), body=body, orelse=[])]
            inner = _Comprehensions(self.ctx)
            loop = gast.For(target=generator.target, iter=inner.visit(generator.iter), body=body,
                            orelse=[], type_comment=None)
            body = inner.before + [loop]
        start = A.assign(result, gast.Dict(keys=[], values=[]) if keyed
                         else gast.List(elts=[], ctx=gast.Load()))
        for s in [start] + body:
            for n in A.walk(s):
                if isinstance(n, gast.stmt):
                    gast.copy_location(n, node)
        self.before += [start] + body
        return A.name(result)


def over_range(node) -> bool:
    """Whether a loop's iterable is a ``range(...)`` call (desugar leaves those loops be)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "range"


def _call_of(node, name: str, ctx) -> bool:
    """Whether ``node`` calls the builtin ``name`` (not a function of the program's own)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == name and ctx.means_builtin(name)


_DICT_VIEWS = {"values": runtime.values, "items": runtime.items, "keys": runtime.keys}


def _walked(source, ctx):
    """The indexable sequence ``for v in source`` walks: ``d.values()`` -> ``rt.values(d)``, and
    a name or a call's result (it may be a dict, whose keys are walked) -> ``rt.sequence(...)``
    (``"a b".split()``, ``make_springs(ks)``: evaluated once, before the loop, as Python
    does)."""
    view = source.func.attr if isinstance(source, gast.Call) and not source.args \
        and isinstance(source.func, gast.Attribute) and source.func.attr in _DICT_VIEWS else None
    if view is None and not isinstance(source, (gast.Name, gast.Attribute, gast.Call)):
        return source
    func = _DICT_VIEWS[view] if view else runtime.sequence
    call = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.{func.__name__}"),
                  source.func.value if view else source)
    setanno(call, Anno.FUNC, func)
    return gast.copy_location(call, source)


def index_loop(stmt: gast.For, ctx) -> tuple[list, gast.For]:
    """``for v in xs:`` -> ``_s = rt.sequence(xs)`` / ``for _i in range(len(_s)):`` /
    ``v = _s[_i]`` (``rt.sequence`` lists a dict's keys; ``d.items()`` becomes ``rt.items(d)``)."""
    index = ctx.namer.fresh("_i")
    iterable, target, offset = stmt.iter, stmt.target, None
    reverse = _call_of(iterable, "reversed", ctx)
    if reverse:
        iterable = iterable.args[0]
    if _call_of(iterable, "enumerate", ctx):
        offset = iterable.args[1] if len(iterable.args) > 1 else A.const(0)
        counter, target = target.elts
        iterable = iterable.args[0]
    sources = [_walked(s, ctx) for s in (iterable.args if _call_of(iterable, "zip", ctx)
                                         else [iterable])]
    names = [ctx.namer.fresh("_seq") for _ in sources]
    before = [gast.copy_location(A.assign(n, s), stmt) for n, s in zip(names, sources, strict=True)]
    length = A.call(A.builtin("len"), A.name(names[0])) if len(names) == 1 else A.call(
        A.builtin("min"), *[A.call(A.builtin("len"), A.name(n)) for n in names])
    if reverse:
        bounds = [gast.BinOp(left=length, op=gast.Sub(), right=A.const(1)), A.const(-1),
                  A.const(-1)]
    else:
        bounds = [length]
    items = [gast.Subscript(value=A.name(n), slice=A.name(index), ctx=gast.Load()) for n in names]
    targets = target.elts if len(names) > 1 else [target]
    head = [gast.Assign(targets=[t], value=v, type_comment=None)
            for t, v in zip(targets, items, strict=True)]
    if offset is not None:
        head.insert(0, gast.Assign(targets=[counter], value=gast.BinOp(
            left=A.name(index), op=gast.Add(), right=offset), type_comment=None))
    head = [gast.copy_location(h, stmt) for h in head]
    for h in head:
        setanno(h, Anno.ORIGIN, stmt)
    loop = gast.For(target=A.name(index, store=True), iter=A.call(A.builtin("range"), *bounds),
                    body=head + stmt.body, orelse=stmt.orelse, type_comment=None)
    return before, gast.copy_location(loop, stmt)


def setitem(target: gast.Subscript, value, like) -> gast.Assign:
    """``y[i] = v`` as ``y = <setitem>(y, i, v)``; the index keeps its slice syntax."""
    base = target.value.id
    call = A.call(A.dotted("operator.setitem"), A.name(base), target.slice, value)
    setanno(call, Anno.FUNC, operator.setitem)
    return gast.copy_location(A.assign(base, gast.copy_location(call, like)), like)


def _literal_unpack(stmt) -> bool:
    target, value = stmt.targets[0], stmt.value
    sequences = (gast.Tuple, gast.List)
    return (isinstance(target, sequences) and isinstance(value, sequences)
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, gast.Name) for t in target.elts))
