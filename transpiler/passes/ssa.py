"""Give every assignment its own name, so straight-line code never overwrites a value.

The adjoint of ``x = x * 2`` needs the old ``x``; renaming the new one (``x_1``) keeps both
alive without a tape. Later reads refer to the newest version; the returned name follows.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> fn = gast.parse("def f(x):\\n    x = x * 2\\n    x = x + 1\\n    return x").body[0]
>>> print(to_source(ssa(fn, SimpleNamespace(namer=Namer({"x"})))))
def f(x):
    x_1 = x * 2
    x_2 = x_1 + 1
    return x_2
"""

from __future__ import annotations

import gast


def ssa(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    defined = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            defined.add(extra.id)
    current: dict[str, str] = {}
    for stmt in fn.body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                node.id = current.get(node.id, node.id)
        if isinstance(stmt, gast.Assign):
            for node in gast.walk(stmt.targets[0]) if len(stmt.targets) == 1 else ():
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    if node.id in defined:
                        new = ctx.namer.fresh(node.id)
                        current[node.id] = new
                        node.id = new
                    defined.add(node.id)
    return fn
