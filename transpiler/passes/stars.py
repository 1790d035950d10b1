"""Spell out ``*args`` and ``**kwargs`` whose contents are known, so every call lists its
arguments and every parameter is a single value.

- A helper is compiled once per call pattern (``ctx.varargs``: how many extra positional
  arguments and which extra keywords the caller passes). Its ``*args`` becomes keyword-only
  parameters ``args_0, args_1, ...`` and its ``**kwargs`` becomes ``kwargs_<key>``; the body
  starts with ``args = (args_0, args_1)`` and ``kwargs = {'key': kwargs_key}``.
- ``f(*t)`` and ``f(**d)``, where ``t`` (``d``) is assigned exactly once, at the top level of the
  body, a tuple or list display (a dict display with string keys), become ``f(t[0], t[1])`` and
  ``f(key=d['key'])``: forwarding ``helper(*args, **kwargs)`` is the common case.
- ``first, *rest = seq`` becomes ``first = seq[0]`` and ``rest = list(seq[1:])``.

A starred argument that remains is refused by the reverse pass when it carries a gradient.
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, setanno
from transpiler.errors import error_at


def stars(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if ctx.varargs is not None:
        _specialize(fn, *ctx.varargs, ctx)
    displays = _displays(fn)
    for node in A.walk(fn):
        if isinstance(node, gast.Call):
            _expand_call(node, displays)
    fn.body = _unpack_starred(fn.body, ctx)
    return fn


def vararg_names(func, n: int, keys: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The parameter names a helper's ``*args`` and ``**kwargs`` are spelled out into."""
    code = func.__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                             + bool(code.co_flags & 4) + bool(code.co_flags & 8)]
    star = names[code.co_argcount + code.co_kwonlyargcount] if code.co_flags & 4 else "args"
    dstar = names[-1] if code.co_flags & 8 else "kwargs"
    return [f"{star}_{i}" for i in range(n)], [f"{dstar}_{k}" for k in keys]


def _specialize(fn, n: int, keys: tuple[str, ...], ctx) -> None:
    args = fn.args
    positional, keyword = vararg_names(ctx.fn, n, keys)
    taken = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)}
    clash = sorted(taken & set(positional + keyword))
    if clash:
        raise error_at(fn, ctx, f"the name '{clash[0]}' is needed to spell out *args/**kwargs",
                       "rename that variable")
    prologue = []
    if args.vararg is not None:
        prologue.append(A.assign(args.vararg.id, gast.Tuple(
            elts=[A.name(p) for p in positional], ctx=gast.Load()), like=fn.body[0]))
    elif n:
        raise error_at(fn, ctx, f"{fn.name} takes no *args", "check the call")
    if args.kwarg is not None:
        prologue.append(A.assign(args.kwarg.id, gast.Dict(
            keys=[A.const(k) for k in keys], values=[A.name(p) for p in keyword]),
            like=fn.body[0]))
    elif keys:
        raise error_at(fn, ctx, f"{fn.name} takes no **kwargs", "check the call")
    new = [gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
           for p in positional + keyword]
    args.kwonlyargs = args.kwonlyargs + new
    args.kw_defaults = args.kw_defaults + [None] * len(new)
    args.vararg = args.kwarg = None
    fn.body = prologue + fn.body


def _displays(fn) -> dict:
    """Names assigned exactly once, at the top level, a tuple/list/dict display: name -> its
    items, each a name assigned only once (so it can stand for the item) or None."""
    stores: dict[str, int] = {}
    for node in A.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores[node.id] = stores.get(node.id, 0) + 1
    def once(node):
        return node.id if isinstance(node, gast.Name) and stores.get(node.id) == 1 else None

    found = {}
    for stmt in fn.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and stores[stmt.targets[0].id] == 1:
            value = stmt.value
            if isinstance(value, (gast.Tuple, gast.List)) and not any(
                    isinstance(e, gast.Starred) for e in value.elts):
                found[stmt.targets[0].id] = [(i, once(e)) for i, e in enumerate(value.elts)]
            elif isinstance(value, gast.Dict) and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str)
                    and k.value.isidentifier() for k in value.keys):
                found[stmt.targets[0].id] = {k.value: once(v)
                                             for k, v in zip(value.keys, value.values, strict=True)}
    return found


def _expand_call(call, displays: dict) -> None:
    args = []
    for a in call.args:
        if isinstance(a, gast.Starred) and isinstance(a.value, gast.Name) \
                and isinstance(displays.get(a.value.id), list):
            args += [A.name(e) if e else _item(a.value.id, A.const(i))
                     for i, e in displays[a.value.id]]
        else:
            args.append(a)
    keywords = []
    for kw in call.keywords:
        if kw.arg is None and isinstance(kw.value, gast.Name) \
                and isinstance(displays.get(kw.value.id), dict):
            keywords += [gast.keyword(arg=k, value=A.name(e) if e else _item(kw.value.id,
                                                                             A.const(k)))
                         for k, e in displays[kw.value.id].items()]
        else:
            keywords.append(kw)
    call.args, call.keywords = args, keywords


def _item(name: str, key):
    return gast.Subscript(value=A.name(name), slice=key, ctx=gast.Load())


def _unpack_starred(body: list, ctx) -> list:
    out = []
    for stmt in body:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _unpack_starred(getattr(stmt, field), ctx))
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
        if not (isinstance(target, (gast.Tuple, gast.List))
                and any(isinstance(e, gast.Starred) for e in target.elts)):
            out.append(stmt)
            continue
        if len(stmt.targets) > 1 or not all(
                isinstance(e.value if isinstance(e, gast.Starred) else e, gast.Name)
                for e in target.elts):
            raise error_at(target, ctx, "starred unpacking into anything but names is not "
                           "supported", "unpack into names: first, *rest = seq")
        source = stmt.value
        if not isinstance(source, gast.Name):
            source = A.name(ctx.namer.temp())
            out.append(gast.copy_location(A.assign(source.id, stmt.value), stmt))
        star = next(i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred))
        after = len(target.elts) - star - 1
        for i, element in enumerate(target.elts):
            if i < star:
                value = _item(source.id, A.const(i))
            elif i > star:
                value = _item(source.id, A.const(i - len(target.elts)))
            else:
                part = gast.Slice(lower=A.const(star) if star else None,
                                  upper=A.const(-after) if after else None, step=None)
                value = A.call(A.name(ctx.bind("list", list)), _item(source.id, part))
                setanno(value, Anno.FUNC, list)
                element = element.value
            out.append(gast.copy_location(A.assign(element.id, value), stmt))
    return out
