"""Turn partial contributions into plain assignments where possible.

The reverse pass emits every partial as ``bx = e`` annotated ACCUMULATE, meaning "add e to bx".
Walking the straight-line adjoint in order, the first write of a gradient stays ``bx = e`` and
later ones become ``bx = bx + e`` (never ``+=``: a gradient may alias another array, and the
user's arrays are never written). A returned gradient that nothing wrote is initialised to zero
right before the return: never ``bx = 0`` followed by ``bx = bx + ...``.

>>> import gast
>>> from transpiler.anno import Anno, setanno
>>> from transpiler.emit import to_source
>>> from types import SimpleNamespace
>>> fn = gast.parse("def g(x, y):\\n    bx = a\\n    bx = b\\n    return bx, by").body[0]
>>> for s in fn.body[:2]: setanno(s, Anno.ACCUMULATE)
>>> ctx = SimpleNamespace(wrt=("x", "y"), namer=SimpleNamespace(grad=lambda v: "b" + v),
...                       bind=lambda name, obj: name)
>>> print(to_source(fix_grads(fn, ctx)))
def g(x, y):
    bx = a
    bx = bx + b
    by = rt.zeros_like_grad(y)
    return bx, by
"""

from __future__ import annotations

import gast

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, hasanno


def fix_grads(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    defined: set[str] = set()
    for stmt in fn.body:
        if not isinstance(stmt, gast.Assign):
            continue
        grad = A.target_name(stmt)
        if hasanno(stmt, Anno.ACCUMULATE) and grad in defined:
            value, op = stmt.value, gast.Add()
            if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
                value, op = value.operand, gast.Sub()  # bx + -e -> bx - e
            stmt.value = gast.BinOp(left=A.name(grad), op=op, right=value)
        defined.update(n.id for t in stmt.targets for n in gast.walk(t) if isinstance(n, gast.Name))
    *body, ret = fn.body
    zeros = A.dotted(f"{ctx.bind('rt', runtime)}.zeros_like_grad")
    for w in ctx.wrt:
        grad = ctx.namer.grad(w)
        if grad not in defined:
            body.append(gast.copy_location(A.assign(grad, A.call(zeros, A.name(w))), ret))
    fn.body = body + [ret]
    return fn
