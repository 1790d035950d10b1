"""Record the Python object each call refers to, whatever the user's import spelling.

``np.sin``, ``numpy.sin``, ``from numpy import sin as s`` and ``math.sin`` are looked up in the
function's closure, globals and builtins, and the object is stored on the Call as Anno.FUNC, so
rules are found by identity. The root name of each resolved call (``np`` in ``np.sin``) is bound
in the generated function to the object seen now: primal and adjoint always agree on which
function was called. The global and builtin roots are listed (``ctx.snapshots``): when the
user rebinds one (re-executes a helper's ``def``), the compiled gradient is stale and is
compiled again on its next call.
Calls on local values (methods) are left unresolved; the reverse pass decides about them.
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, hasanno, setanno
from transpiler.errors import error_at

_MISSING = object()


def resolve(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    local = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    for node in A.walk(fn):
        if isinstance(node, gast.Call) and not hasanno(node, Anno.FUNC):  # (lifted: known)
            obj, root = _evaluate(node.func, local, ctx)
            if obj is _MISSING:
                raise error_at(node.func, ctx, f"name '{root}' is not defined",
                               "define or import it before the gradient is first called")
            if obj is not None:
                setanno(node, Anno.FUNC, obj)
                ctx.bindings.setdefault(root, ctx.lookup(root))
                if root not in ctx.fn.__code__.co_freevars:
                    ctx.snapshots[root] = ctx.bindings[root]
    return fn


def _evaluate(node, local: set[str], ctx):
    """(object, root name) for a dotted name; (None, root) when it starts at a local value."""
    if isinstance(node, gast.Name):
        if node.id in local:
            return None, node.id
        try:
            return ctx.lookup(node.id), node.id
        except (AttributeError, ValueError):  # ValueError: empty closure cell
            return _MISSING, node.id
    if isinstance(node, gast.Attribute):
        obj, root = _evaluate(node.value, local, ctx)
        if obj is None or obj is _MISSING:
            return obj, root
        return getattr(obj, node.attr, None), root
    return None, None
