"""Give every assignment its own name, so no value is overwritten before its adjoint reads it.

Straight-line code becomes single-assignment (``x = x * 2`` -> ``x_1 = x * 2``). Where control
flow joins, a new version is assigned at the end of each branch (``x_3 = x_1`` / ``x_3 = x``),
the explicit form of an SSA phi. A variable a loop reassigns gets a loop-carried version copied
in before the loop and copied back at the end of the body; the reverse pass saves what it needs
of those per iteration.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> src = "def f(x):\\n    x = x * 2\\n    if x > 1:\\n        x = x + 1\\n    return x"
>>> print(to_source(ssa(gast.parse(src).body[0], SimpleNamespace(namer=Namer({"x"})))))
def f(x):
    x_1 = x * 2
    if x_1 > 1:
        x_2 = x_1 + 1
        x_3 = x_2
    else:
        x_3 = x_1
    return x_3
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno, setanno
from transpiler.passes.lower_exits import always_raises


def ssa(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            params.add(extra.id)
    renamer = _Renamer(ctx.namer, params)
    body = renamer.block(fn.body, {p: p for p in params})
    setanno(fn, Anno.VERSIONS, renamer.versions)  # read through analysis.facts
    # A join copies each path's version; on a path that never assigned it (one that returned
    # early) the copy must not fail: such versions start as None.
    sources = sorted({s.value.id for s in A.walk(fn) if isinstance(s, gast.Assign)
                      and hasanno(s, Anno.PHI) and isinstance(s.value, gast.Name)}
                     & renamer.maybe_unbound)
    fn.body = [A.assign(name, A.const(None), like=fn) for name in sources] + body
    return fn


def stored_names(stmts: list) -> set[str]:
    return {n.id for s in stmts for n in A.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


class _Renamer:
    def __init__(self, namer, defined: set[str]):
        self.namer, self.defined = namer, set(defined)
        self.versions: dict[str, str] = {}  # each new name -> the user's variable it versions
        self.maybe_unbound: set[str] = set()  # versions some path reaches without assigning

    def define(self, name: str) -> str:
        new = self.namer.fresh(name) if name in self.defined else name
        self.defined.add(new)
        self.versions[new] = self.versions.get(name, name)
        return new

    def loads(self, node, current: dict) -> None:
        for n in A.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                n.id = current.get(n.id, n.id)

    def copy(self, target: str, source: str, like) -> gast.Assign:
        stmt = A.assign(target, A.name(source), like=like)
        setanno(stmt, Anno.ORIGIN, getanno(like, Anno.ORIGIN, like))
        setanno(stmt, Anno.PHI)
        return stmt

    def block(self, stmts: list, current: dict) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.If) and hasanno(stmt, Anno.WITH):  # runs once: no join
                self.loads(stmt.test, current)
                stmt.body = self.block(stmt.body, current)
                out.append(stmt)
            elif isinstance(stmt, gast.If):
                out.append(self.branch(stmt, current))
            elif isinstance(stmt, (gast.For, gast.While)):
                out.extend(self.loop(stmt, current))
            else:
                if isinstance(stmt, gast.Assign):
                    self.loads(stmt.value, current)
                    for t in stmt.targets:
                        for n in A.walk(t):
                            if isinstance(n, gast.Name):
                                current[n.id] = n.id = self.define(n.id)
                else:
                    self.loads(stmt, current)
                out.append(stmt)
        return out

    def branch(self, stmt: gast.If, current: dict) -> gast.If:
        self.loads(stmt.test, current)
        in_body, in_else = dict(current), dict(current)
        stmt.body = self.block(stmt.body, in_body)
        stmt.orelse = self.block(stmt.orelse, in_else)
        raising = [always_raises(stmt.body), always_raises(stmt.orelse)]
        if any(raising) and not all(raising):  # (a path that raises reaches no join)
            current.update(in_else if raising[0] else in_body)
            return stmt
        for name in sorted(set(in_body) | set(in_else)):
            a, b = in_body.get(name), in_else.get(name)
            if a == b or a is None or b is None:  # unchanged, or defined on one path only
                current[name] = a or b
                if a is None or b is None:
                    self.maybe_unbound.add(a or b)
                continue
            phi = self.define(name)
            stmt.body.append(self.copy(phi, a, stmt))
            stmt.orelse.append(self.copy(phi, b, stmt))
            current[name] = phi
        return stmt

    def loop(self, stmt, current: dict) -> list:
        target = stmt.target.id if isinstance(stmt, gast.For) else None
        carried = sorted(n for n in stored_names(stmt.body) if n in current and n != target)
        before = []
        for name in carried:
            phi = self.define(name)
            before.append(self.copy(phi, current[name], stmt))
            current[name] = phi
        if isinstance(stmt, gast.For):
            self.loads(stmt.iter, current)
            current[target] = stmt.target.id = self.define(target)
        else:
            self.loads(stmt.test, current)
        inside = dict(current)
        stmt.body = self.block(stmt.body, inside)
        exit_ = [stmt.body.pop()] if stmt.body and hasanno(stmt.body[-1], Anno.EXIT) else []
        for name in carried:
            if inside[name] != current[name]:
                stmt.body.append(self.copy(current[name], inside[name], stmt))
                setanno(stmt.body[-1], Anno.LOOP_COPY)
        stmt.body += exit_
        for name, version in inside.items():
            if name not in current:  # first defined in the loop, which may not run
                current[name] = version
                self.maybe_unbound.add(version)
        return before + [stmt]
