"""Turn ``break``, ``continue`` and early ``return`` into flags, so every loop has one exit.

After this pass a loop body ends with at most one ``if <flags>: break`` (annotated EXIT), no
other ``break`` or ``continue`` remains, and the function has a single ``return`` at its end.
Statements after one that may set a flag run under ``if not <flag>:``. A loop's ``else`` runs
when its break flag is not set. The reverse pass then only has to count iterations. A function
that ends in a branch returning on every side (or in a ``raise``) returns the same way, with
every ``return`` assigning the result. ``raise`` stays where it is: it leaves the function, and
the gradient of a call that raised is never computed.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> src = '''def f(x):
...     for i in range(9):
...         if x > 5.0:
...             break
...         x = x * 2.0
...     return x'''
>>> print(to_source(lower_exits(gast.parse(src).body[0], SimpleNamespace(namer=Namer({"x"})))))
def f(x):
    _break = False
    for i in range(9):
        if x > 5.0:
            _break = True
        if not _break:
            x = x * 2.0
        if _break:
            break
    return x
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, setanno


@dataclass
class _Loop:
    brk: str | None = None
    cont: str | None = None


def always_exits(stmts: list) -> bool:
    """Whether no path through ``stmts`` reaches its end: each returns or raises first."""
    return any(_exits(s) for s in stmts)


def always_raises(stmts: list) -> bool:
    """Whether every path through ``stmts`` ends in a ``raise`` (none returns or falls off)."""
    return always_exits(stmts) and not any(isinstance(n, gast.Return)
                                           for s in stmts for n in A.walk(s))


def _exits(stmt) -> bool:
    if isinstance(stmt, (gast.Return, gast.Raise)):
        return True
    if isinstance(stmt, gast.If):
        return always_exits(stmt.body) and always_exits(stmt.orelse)
    if isinstance(stmt, gast.With):
        return always_exits(stmt.body)
    if isinstance(stmt, gast.Try):  # (validate: before contexts makes it a branch)
        return always_exits(stmt.finalbody) or always_exits(stmt.body) and all(
            always_exits(h.body) for h in stmt.handlers)
    if isinstance(stmt, (gast.For, gast.While)) and not _breaks(stmt.body):
        forever = isinstance(stmt, gast.While) and isinstance(stmt.test, gast.Constant) \
            and bool(stmt.test.value)
        return forever or always_exits(stmt.orelse)
    return False


def _breaks(stmts: list) -> bool:
    """Whether a ``break`` in ``stmts`` leaves the loop they are the body of."""
    for stmt in stmts:
        if isinstance(stmt, gast.Break):
            return True
        if isinstance(stmt, (gast.If, gast.With)) and _breaks(stmt.body) \
                or isinstance(stmt, (gast.If, gast.For, gast.While)) and _breaks(stmt.orelse):
            return True
    return False


def lower_exits(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    *body, last = fn.body
    early = not isinstance(last, gast.Return) or any(
        isinstance(n, gast.Return) for s in body for n in A.walk(s))
    lowering = _Lower(ctx, early)
    if early:
        body, _ = lowering.block(fn.body, None)
        start = [A.assign(lowering.returned, A.const(False), like=fn.body[0]),
                 A.assign(lowering.result, A.const(None), like=fn.body[0])]  # never unbound
        end = gast.copy_location(gast.Return(value=A.name(lowering.result)), last)
        fn.body = start + body + [end]
    else:
        body, _ = lowering.block(body, None)
        fn.body = body + [last]
    return fn


def _not(flags: list[str]):
    value = A.name(flags[0]) if len(flags) == 1 else gast.BoolOp(
        op=gast.Or(), values=[A.name(f) for f in flags])
    return gast.UnaryOp(op=gast.Not(), operand=value)


class _Lower:
    def __init__(self, ctx, early: bool):
        self.ctx = ctx
        self.returned = ctx.namer.fresh("_returned") if early else None
        self.result = ctx.namer.fresh("_result") if early else None

    def block(self, stmts: list, loop: _Loop | None) -> tuple[list, set[str]]:
        """(lowered statements, flags they may set that skip what follows)."""
        out: list = []
        for i, stmt in enumerate(stmts):
            new, flags = self.statement(stmt, loop)
            out.extend(new)
            if flags:
                rest, more = self.block(stmts[i + 1:], loop)
                if rest:
                    guard = gast.If(test=_not(sorted(flags)), body=rest, orelse=[])
                    out.append(gast.copy_location(guard, stmts[i + 1]))
                return out, flags | more
        return out, set()

    def statement(self, stmt, loop: _Loop | None) -> tuple[list, set[str]]:
        if isinstance(stmt, gast.Break):
            loop.brk = loop.brk or self.ctx.namer.fresh("_break")
            return [A.assign(loop.brk, A.const(True), like=stmt)], {loop.brk}
        if isinstance(stmt, gast.Continue):
            loop.cont = loop.cont or self.ctx.namer.fresh("_continue")
            return [A.assign(loop.cont, A.const(True), like=stmt)], {loop.cont}
        if isinstance(stmt, gast.Return) and self.returned:
            return [gast.copy_location(gast.Assign(targets=[A.name(self.result, store=True)],
                                                   value=stmt.value, type_comment=None), stmt),
                    A.assign(self.returned, A.const(True), like=stmt)], {self.returned}
        if isinstance(stmt, gast.If):
            stmt.body, in_body = self.block(stmt.body, loop)
            stmt.orelse, in_else = self.block(stmt.orelse, loop)
            stmt.body = stmt.body or [gast.Pass()]
            return [stmt], in_body | in_else
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt)
        return [stmt], set()

    def loop(self, stmt) -> tuple[list, set[str]]:
        inner = _Loop()
        body, flags = self.block(stmt.body, inner)
        if inner.cont:
            body.insert(0, A.assign(inner.cont, A.const(False), like=stmt))
        before, after = [], []
        if stmt.orelse:  # runs unless the loop was left by break
            inner.brk = inner.brk or self.ctx.namer.fresh("_break")
            after = [gast.copy_location(gast.If(test=_not([inner.brk]), body=stmt.orelse,
                                                orelse=[]), stmt)]
            stmt.orelse = []
        leave = [f for f in (inner.brk, self.returned if self.returned in flags else None) if f]
        if inner.brk:
            before.append(A.assign(inner.brk, A.const(False), like=stmt))
        if leave:
            test = A.name(leave[0]) if len(leave) == 1 else gast.BoolOp(
                op=gast.Or(), values=[A.name(f) for f in leave])
            exit_ = gast.copy_location(gast.If(test=test, body=[gast.Break()], orelse=[]), stmt)
            setanno(exit_, Anno.EXIT)
            body.append(exit_)
        stmt.body = body or [gast.Pass()]
        outward = {self.returned} & flags
        if outward and after:  # a return inside the loop also skips its else
            after = [gast.copy_location(gast.If(test=_not(sorted(outward)), body=after,
                                                orelse=[]), stmt)]
        return before + [stmt] + after, outward
