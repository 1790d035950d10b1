"""``with`` and ``try`` statements as blocks the other passes already know, and back at the end.

``with m(...) as v: body`` becomes ``if m(...): v = <entered>; body``, the ``if`` annotated
WITH (a ``Manager``) and its first statement annotated ENTERED; one ``if`` per manager of a
``with a, b:``. Every pass handles an ``if``: nothing moves into or out of it, and a ``return``,
``break`` or ``continue`` in it is a flag like any other (lower_exits). Those that care know it
runs once, always (ssa: no join; fix_grads: no other path; anf: the test stays the manager).
``rebuilt``, the last step before finalize, turns each back into the ``with`` it was.

What the derivative code runs under:

- ``np.errstate(...)`` and ``warnings.catch_warnings(...)`` change only how floating-point
  errors and warnings are reported. The adjoint of their body runs under a new manager built
  from the same expression, its ``warnings.simplefilter``/``filterwarnings``/``np.seterr``
  calls first (a ``log`` guarded by ``errstate`` does not warn in its adjoint either); the
  tangent code runs inside the primal's own ``with``.
- Any other manager (a file, a lock, a timer) is entered and exited once, by the primal, as the
  original does; the adjoint of its body runs after it is exited. It is wrapped as
  ``rt.unsuppressed(m)``: an exception it would swallow is raised instead, since the gradient
  of a block left midway is not defined. A manager built from differentiated values is
  refused (its ``as`` value would be a constant to the derivative).

``try: S / except T as e: H / else: E`` (validate admits one handler, no ``finally``, and
assignments and calls in S) becomes ``ok = _tried()`` / ``if ok: S / else: e = _caught(); H``
(then ``if ok: E``), the ``if`` annotated TRY (an ``Attempt``): a branch to every pass, the
adjoint ``if ok:`` the path taken. It is exact because S is one statement, whose targets are
bound only if it completes, or any code when H always raises (no value leaves a path cut
midway); optimize never drops what S computes (it may raise), and forward mode tries S's primal
alone, its tangents after (when H may complete: an error in a tangent must not change the path).
``rebuilt`` writes ``try: S; ok = True / except T as e: ok = False; H``.

``try: S [except ...] finally: F`` becomes ``try: S [except ...] / except BaseException: F;
raise`` then ``F``: a handler that always raises, around any code, and the cleanup after.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno, setanno
from transpiler.errors import error_at
from transpiler.passes import tape
from transpiler.passes.lower_exits import always_raises

SETTINGS = (np.errstate, warnings.catch_warnings)  # managers the derivative code runs under too
_SETTERS = (warnings.simplefilter, warnings.filterwarnings, warnings.resetwarnings, np.seterr)


@dataclass(frozen=True)
class Manager:
    """What a WITH block was: whether its manager only changes settings (SETTINGS)."""

    settings: bool


def contexts(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if _has_blocks(fn.body):
        fn.body = _block(fn.body, ctx)
        setanno(fn, Anno.WITH, True)  # (on the function: it has blocks for rebuilt)
    return fn


def _has_blocks(stmts: list) -> bool:
    return any(isinstance(s, (gast.With, gast.Try)) or _has_blocks(getattr(s, "body", []))
               or _has_blocks(getattr(s, "orelse", []))
               or any(_has_blocks(h.body) for h in getattr(s, "handlers", [])) for s in stmts)


def _block(stmts: list, ctx) -> list:
    out = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _block(getattr(stmt, field), ctx))
        if isinstance(stmt, gast.Try) and stmt.finalbody:
            out.extend(_finally(stmt, ctx))
        elif isinstance(stmt, gast.Try):
            out.extend(_attempt(stmt, ctx))
        else:
            out.append(_region(stmt, ctx) if isinstance(stmt, gast.With) else stmt)
    return out


@dataclass(frozen=True)
class Attempt:
    """What a TRY block was: the exceptions its handler catches (an expression), and whether
    the handler always raises (then no value leaves it, and the try may hold any code)."""

    caught: object
    raises: bool


def _attempt(stmt: gast.Try, ctx) -> list:
    """``try: S / except T as e: H`` -> ``ok = _tried()`` / ``if ok: S / else: e = _caught();
    H``: a branch to every pass, the handler the path taken when S raised T."""
    handler = stmt.handlers[0]
    read = [n.id for n in A.walk(handler.type) if isinstance(n, gast.Name)]
    if any(n in ctx.locals for n in read):
        raise error_at(handler.type, ctx, "the exceptions caught must not be a variable of the "
                       "function", "name the exception classes in the 'except' clause")
    ok = ctx.namer.fresh("_ok")
    tried = gast.copy_location(A.assign(ok, A.call(A.name("_tried"))), stmt)
    setanno(tried, Anno.TRIED)
    body = _block(handler.body, ctx)
    if handler.name is not None:
        caught = gast.copy_location(A.assign(handler.name.id, A.call(A.name("_caught"))),
                                    handler)
        setanno(caught, Anno.CAUGHT)
        body = [caught] + body
    block = gast.copy_location(gast.If(test=A.name(ok), body=stmt.body, orelse=body), stmt)
    setanno(block, Anno.TRY, Attempt(handler.type, always_raises(handler.body)))
    setanno(block, Anno.ORIGIN, stmt)
    for s in (tried, block):
        setanno(s, Anno.ORIGIN, stmt)
    if not stmt.orelse:
        return [tried, block]
    after = gast.copy_location(gast.If(test=A.name(ok), body=stmt.orelse, orelse=[]), stmt)
    return [tried, block, after]  # try's else: what runs once S succeeded, unprotected


def _finally(stmt: gast.Try, ctx) -> list:
    """``try: S [except ...] finally: F`` -> ``try: S [except ...] / except BaseException: F;
    raise`` then ``F``: the cleanup runs once either way, and the error path, which has no
    gradient, raises as it did (``F`` must end normally: validate). A ``return e`` ending S
    returns after ``F``: ``_returned = e`` in S, ``return _returned`` after."""
    body, tail = stmt.body, []
    if not stmt.handlers and isinstance(body[-1], gast.Return):
        value = ctx.namer.fresh("_returned")
        body = body[:-1] + [A.assign(value, body[-1].value, like=body[-1])]
        tail = [gast.copy_location(gast.Return(value=A.name(value)), stmt.body[-1])]
    if stmt.handlers:
        body = [gast.copy_location(gast.Try(body=body, handlers=stmt.handlers,
                                            orelse=stmt.orelse, finalbody=[]), stmt)]
    cleanup = gast.copy_location(gast.ExceptHandler(
        type=A.builtin("BaseException"), name=None,
        body=A.copy_node(stmt.finalbody) + [gast.copy_location(gast.Raise(exc=None, cause=None),
                                                               stmt)]), stmt)
    outer = gast.copy_location(gast.Try(body=body, handlers=[cleanup], orelse=[], finalbody=[]),
                               stmt)
    return _block([outer], ctx) + _block(stmt.finalbody, ctx) + tail


def _region(stmt: gast.With, ctx):
    body = stmt.body
    for item in reversed(stmt.items):
        manager = item.context_expr
        settings = isinstance(manager, gast.Call) and _one_of(getanno(manager, Anno.FUNC),
                                                               SETTINGS)
        if not settings and not _wrapped(manager):
            wrapper = A.dotted(f"{ctx.bind('rt', runtime)}.unsuppressed")
            manager = gast.copy_location(A.call(wrapper, manager), manager)
            setanno(manager, Anno.FUNC, runtime.unsuppressed)
        if item.optional_vars is not None:
            # what __enter__ returned: an opaque call to the passes (never moved, never
            # dropped, never a constant); rebuilt makes it the ``as`` target again
            entered = gast.copy_location(A.assign(item.optional_vars.id,
                                                  A.call(A.name("_entered"))), stmt)
            setanno(entered, Anno.ENTERED)
            setanno(entered, Anno.ORIGIN, stmt)
            body = [entered] + body
        block = gast.copy_location(gast.If(test=manager, body=body, orelse=[]), stmt)
        setanno(block, Anno.WITH, Manager(settings))
        setanno(block, Anno.ORIGIN, stmt)
        body = [block]
    return body[0]


def _one_of(func, functions: tuple) -> bool:
    return any(func is f for f in functions)


def _wrapped(manager) -> bool:
    return isinstance(manager, gast.Call) and getanno(manager, Anno.FUNC) is runtime.unsuppressed


def is_region(stmt) -> bool:
    return isinstance(stmt, gast.If) and hasanno(stmt, Anno.WITH)


def is_attempt(stmt) -> bool:
    return isinstance(stmt, gast.If) and hasanno(stmt, Anno.TRY)


def refuse_differentiated(body: list, varied: set[str], ctx) -> None:
    """A manager built from differentiated values: its ``as`` value and whatever it does with
    them would be constants to the derivative. (A generated gradient, differentiated again, was
    checked when it was made: what its managers read, such as a tape entry, carries no
    derivative.)"""
    if tape.is_generated(getattr(ctx, "fn", None)):
        return
    for stmt in (n for s in body for n in A.walk(s) if is_region(n)):
        if any(n in varied for n in A.load_names(stmt.test)):
            raise error_at(stmt, ctx, "a context manager built from differentiated values is "
                           "not supported", "build it from values that are not differentiated")


def adjoint(stmt, body: list) -> list:
    """The adjoint of region ``stmt`` whose body's adjoint is ``body``: under a new manager of
    the same settings, or (any other manager) as it is, once the primal has exited it."""
    if not getanno(stmt, Anno.WITH).settings:
        return body
    setters = [A.copy_node(s) for s in stmt.body if isinstance(s, gast.Expr)
               and isinstance(s.value, gast.Call) and _one_of(getanno(s.value, Anno.FUNC),
                                                              _SETTERS)]
    block = gast.copy_location(gast.If(test=A.copy_node(stmt.test), body=setters + body,
                                       orelse=[]), stmt)
    setanno(block, Anno.WITH, getanno(stmt, Anno.WITH))
    return [block]


def rebuilt(fn, ctx):
    """Each region back as the ``with`` or ``try`` statement it was."""
    if not hasanno(fn, Anno.WITH):
        return fn
    for node in reversed(A.walk(fn)):  # inner blocks first
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(is_region(s) or is_attempt(s) for s in block):
                block[:] = [_with(s) if is_region(s) else _try(s) if is_attempt(s) else s
                            for s in block if not hasanno(s, Anno.TRIED)]
    return fn


def _with(stmt: gast.If) -> gast.With:
    body, target = list(stmt.body), None
    first = next((s for s in body if hasanno(s, Anno.ENTERED)), None)
    if first is not None:
        body.remove(first)
        target = A.name(A.target_name(first), store=True)
    item = gast.withitem(context_expr=stmt.test, optional_vars=target)
    return gast.copy_location(gast.With(items=[item], body=body or [gast.Pass()],
                                        type_comment=None), stmt)


def _try(stmt: gast.If) -> gast.Try:
    """``if ok: S / else: e = _caught(); H`` -> ``try: S; ok = True / except T as e: ok =
    False; H`` (the handler runs where it was written: a bare ``raise`` re-raises)."""
    ok = stmt.test.id
    handler, name = list(stmt.orelse), None
    first = next((s for s in handler if hasanno(s, Anno.CAUGHT)), None)
    if first is not None:
        handler.remove(first)
        name = A.name(A.target_name(first), store=True)
    caught = A.copy_node(getanno(stmt, Anno.TRY).caught)
    clause = gast.ExceptHandler(type=caught, name=name,
                                body=[A.assign(ok, A.const(False), like=stmt)] + handler)
    return gast.copy_location(gast.Try(body=stmt.body + [A.assign(ok, A.const(True), like=stmt)],
                                       handlers=[gast.copy_location(clause, stmt)], orelse=[],
                                       finalbody=[]), stmt)
