"""Reject what the compiler does not (yet) understand, before any rewriting.

Postcondition: the body is made of assignments to names or tuples of names, augmented
assignments to names, expression statements, ``assert``, ``pass``, ``if``/``elif``/``else``,
``for`` loops (over ``range``, sequences, ``enumerate``, ``zip``, ``reversed``), ``while`` loops
(with ``break``, ``continue``, ``else``), and ``return <value>`` statements, one of them last.
Expressions contain no lambdas, comprehensions, ``yield``, ``await`` or walrus; starred items
appear only as call arguments and in assignment targets.
Everything else raises TranspileError at the construct, with a hint.

>>> import gast
>>> from types import SimpleNamespace
>>> ctx = SimpleNamespace(filename="<doc>", indent=0)
>>> fn = gast.parse("def f(x):\\n    for v in f.read():\\n        y = v\\n    return y").body[0]
>>> try:
...     validate(fn, ctx)
... except TranspileError as e:
...     print(e)
<doc>:2:14: a 'for' loop over a method call's result is not supported yet
hint: loop over range(...), a sequence, a dict (or its .items()), enumerate, zip or reversed
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.errors import TranspileError, error_at  # noqa: F401 (doctest)
from transpiler.passes import tape

_STATEMENTS = {
    gast.Try: ("'try' is not supported", "move error handling outside the differentiated function"),
    gast.With: ("'with' is not supported", "move the context manager outside the function"),
    gast.ClassDef: ("a class definition inside the function is not supported",
                    "define the class at module level"),
    gast.Global: ("'global' is not supported", "pass the value as an argument"),
    gast.Nonlocal: ("'nonlocal' is not supported", "pass the value as an argument"),
    gast.Delete: ("'del' is not supported", "remove the 'del' statement"),
    gast.Raise: ("'raise' is not supported", "check inputs before calling the gradient"),
    gast.Import: ("'import' inside the function is not supported", "import at module level"),
    gast.ImportFrom: ("'import' inside the function is not supported", "import at module level"),
}
_EXPRESSIONS = {
    gast.SetComp: ("set comprehensions are not supported", "use NumPy array operations"),
    gast.DictComp: ("dict comprehensions are not supported", "use NumPy array operations"),
    gast.Yield: ("generators ('yield') cannot be differentiated", "return an array instead"),
    gast.YieldFrom: ("generators ('yield') cannot be differentiated", "return an array instead"),
    gast.Await: ("'await' cannot be differentiated", "make the function synchronous"),
    gast.NamedExpr: ("the walrus operator ':=' is not supported", "use a separate assignment"),
}
_STARRED = ("a starred item here is not supported", "unpack into names (first, *rest = seq) or "
            "pass *t / **d of a tuple or dict written out in the function")


def validate(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if tape.is_generated(getattr(ctx, "fn", None)):  # a gradient, differentiated again:
        fn.body = [s for s in fn.body if not isinstance(s, gast.Delete)]  # its dels only free
    body = fn.body
    _check_block(body, ctx, top=True)
    allowed = {id(a) for n in A.walk(fn) if isinstance(n, gast.Call) for a in n.args}
    allowed |= {id(e) for n in A.walk(fn) if isinstance(n, gast.Assign)
                for t in n.targets if isinstance(t, (gast.Tuple, gast.List)) for e in t.elts}
    for node in A.walk(fn):
        if type(node) in _EXPRESSIONS:
            msg, hint = _EXPRESSIONS[type(node)]
            raise error_at(node, ctx, msg, hint)
        if isinstance(node, gast.Starred) and id(node) not in allowed:
            raise error_at(node, ctx, *_STARRED)
    if not body or not isinstance(body[-1], gast.Return):
        raise error_at(body[-1] if body else fn, ctx, "the function must end with 'return <value>'",
                       "return the scalar whose gradient you want at the end of the function")
    return fn


_ITERATORS = frozenset({"range", "enumerate", "zip", "reversed"})


def _check_block(body: list, ctx, top: bool = False) -> None:
    for i, stmt in enumerate(body):
        _check_statement(stmt, ctx, last=top and i == len(body) - 1)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            _check_block(stmt.body, ctx)
            _check_block(stmt.orelse, ctx)
        if isinstance(stmt, gast.FunctionDef):  # a nested function: checked when lifted
            _check_block(stmt.body, ctx, top=True)


def _check_statement(stmt, ctx, last: bool) -> None:
    if type(stmt) in _STATEMENTS:
        msg, hint = _STATEMENTS[type(stmt)]
        raise error_at(stmt, ctx, msg, hint)
    if isinstance(stmt, gast.For):
        _check_target(stmt.target, ctx)
        if isinstance(stmt.iter, gast.Call) and not (
                isinstance(stmt.iter.func, gast.Name) and stmt.iter.func.id in _ITERATORS
                and not stmt.iter.keywords) and not _dict_view(stmt.iter):
            raise error_at(stmt.iter, ctx, "a 'for' loop over a method call's result is not "
                           "supported yet" if isinstance(stmt.iter.func, gast.Attribute) else
                           "a 'for' loop over this call is not supported yet",
                           "loop over range(...), a sequence, a dict (or its .items()), "
                           "enumerate, zip or reversed")
    if isinstance(stmt, gast.Return) and stmt.value is None:
        raise error_at(stmt, ctx, "'return' without a value", "return the value to differentiate")
    if isinstance(stmt, gast.Assign):
        for target in stmt.targets:
            _check_target(target, ctx)
            if isinstance(target, (gast.Tuple, gast.List)) and any(
                    isinstance(e, gast.Subscript) for e in target.elts):
                raise error_at(target, ctx, "unpacking into array elements is not supported",
                               "assign each element in its own statement")
    if isinstance(stmt, gast.AugAssign):
        _check_target(stmt.target, ctx)
    if isinstance(stmt, gast.AnnAssign):
        raise error_at(stmt, ctx, "annotated assignment is not supported",
                       "drop the annotation: 'x = ...'")


def _dict_view(call) -> bool:
    """``d.items()``, ``d.values()``, ``d.keys()``."""
    return isinstance(call.func, gast.Attribute) and call.func.attr in ("items", "values", "keys") \
        and not call.args and not call.keywords


def _check_target(target, ctx) -> None:
    if isinstance(target, gast.Name):
        return
    if isinstance(target, gast.Starred):
        _check_target(target.value, ctx)
        return
    if isinstance(target, (gast.Tuple, gast.List)):
        for elt in target.elts:
            _check_target(elt, ctx)
        return
    if isinstance(target, gast.Subscript):
        if isinstance(target.value, gast.Attribute):
            raise error_at(target, ctx, "assignment into an element of an attribute is not "
                           "supported: the array may be shared with names the compiled copy "
                           "would not update", "write into a copy and assign it: un = "
                           "self.u.copy(); un[1:-1] = ...; self.u = un")
        if not isinstance(target.value, gast.Name):
            raise error_at(target, ctx, "assignment into a nested subscript or attribute is not "
                           "supported", "index the array once: y[i, j] = v")
        return
    if isinstance(target, gast.Attribute):  # o.a = v: a new value of o (passes/objects.py)
        if not isinstance(target.value, (gast.Name, gast.Attribute)):
            raise error_at(target, ctx, "assignment to an attribute of this expression is not "
                           "supported", "assign the object to a variable first")
        if isinstance(target.value, gast.Attribute):
            _check_target(target.value, ctx)
        return
    raise error_at(target, ctx, f"cannot assign to {type(target).__name__}", "assign to a name")
