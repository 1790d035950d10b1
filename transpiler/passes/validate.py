"""Reject what the compiler does not (yet) understand, before any rewriting.

Postcondition: the body is made of assignments to names or tuples of names, augmented
assignments to names, expression statements, ``assert``, ``raise``, ``pass``,
``if``/``elif``/``else``, ``for`` loops (over ``range``, sequences, ``enumerate``, ``zip``,
``reversed``), ``while`` loops (with ``break``, ``continue``, ``else``), ``with`` statements
(not ``async``, each ``as`` a name), ``try`` with one ``except`` around assignments and calls
and a ``finally`` that ends normally (``_check_try``) and ``return <value>`` statements; no
path reaches the end of the body without a ``return`` or a ``raise``.
Expressions contain no lambdas, comprehensions, ``yield``, ``await`` or walrus; starred items
appear only as call arguments and in assignment targets.
Everything else raises TranspileError at the construct, with a hint.

>>> import gast
>>> from types import SimpleNamespace
>>> ctx = SimpleNamespace(filename="<doc>", indent=0)
>>> fn = gast.parse("def f(x):\\n    y = x\\n    return (z := y)").body[0]
>>> try:
...     validate(fn, ctx)
... except TranspileError as e:
...     print(e)
<doc>:3:13: the walrus operator ':=' is not supported
hint: use a separate assignment
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.errors import TranspileError, error_at  # noqa: F401 (doctest)
from transpiler.passes import tape
from transpiler.passes.lower_exits import always_exits, always_raises

_STATEMENTS = {
    gast.TryStar: ("'except*' is not supported", "catch the exceptions with 'except'"),
    gast.AsyncWith: ("'async with' cannot be differentiated", "make the function synchronous"),
    gast.ClassDef: ("a class definition inside the function is not supported",
                    "define the class at module level"),
    gast.Global: ("'global' is not supported", "pass the value as an argument"),
    gast.Nonlocal: ("'nonlocal' is not supported", "pass the value as an argument"),
    gast.Delete: ("'del' is not supported", "remove the 'del' statement"),
    gast.Import: ("'import' inside the function is not supported", "import at module level"),
    gast.ImportFrom: ("'import' inside the function is not supported", "import at module level"),
}
_EXPRESSIONS = {
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
    if not body or not always_exits(body):
        raise error_at(body[-1] if body else fn, ctx, "the function may end without "
                       "'return <value>'", "return the scalar whose gradient you want on every "
                       "path (or raise where there is none)")
    if not any(isinstance(n, gast.Return) for n in A.own_nodes(body)):
        raise error_at(fn, ctx, "the function never returns a value",
                       "return the scalar whose gradient you want")
    return fn


_ITERATORS = frozenset({"range", "enumerate", "zip", "reversed"})


def _check_block(body: list, ctx, top: bool = False) -> None:
    for i, stmt in enumerate(body):
        _check_statement(stmt, ctx, last=top and i == len(body) - 1)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            _check_block(stmt.body, ctx)
            _check_block(stmt.orelse, ctx)
        if isinstance(stmt, gast.With):
            _check_block(stmt.body, ctx)
        if isinstance(stmt, gast.Try):
            _check_try(stmt, ctx)
            _check_block(stmt.body, ctx)
            for handler in stmt.handlers:
                _check_block(handler.body, ctx)
            _check_block(stmt.orelse, ctx)
            _check_block(stmt.finalbody, ctx)
        if isinstance(stmt, gast.FunctionDef):  # a nested function: checked when lifted
            _check_block(stmt.body, ctx, top=True)


def _check_statement(stmt, ctx, last: bool) -> None:
    if type(stmt) in _STATEMENTS:
        msg, hint = _STATEMENTS[type(stmt)]
        raise error_at(stmt, ctx, msg, hint)
    if isinstance(stmt, gast.For):
        _check_target(stmt.target, ctx)
        if isinstance(stmt.iter, gast.Call) and isinstance(stmt.iter.func, gast.Name) \
                and stmt.iter.func.id in _ITERATORS - {"range"} \
                and not ctx.means_builtin(stmt.iter.func.id):
            raise error_at(stmt.iter, ctx, f"'{stmt.iter.func.id}' here is not Python's builtin "
                           "but a function of the program's own: a 'for' loop over its call is "
                           "not supported yet", "loop over a sequence the function returns, "
                           "assigned to a name first")
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
    if isinstance(stmt, gast.With):
        for item in stmt.items:
            target = item.optional_vars
            if target is not None and not isinstance(target, gast.Name):
                raise error_at(target, ctx, "'with ... as' into anything but a name is not "
                               "supported", "bind the context manager's value to one name")
    if isinstance(stmt, gast.AnnAssign):
        raise error_at(stmt, ctx, "annotated assignment is not supported",
                       "drop the annotation: 'x = ...'")


_BRANCHING = (gast.IfExp, gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)
_TRIED = (gast.Assign, gast.AugAssign, gast.Expr, gast.Assert, gast.Raise, gast.Pass)
_TRY_HINT = ("try one assignment or call, with one handler (except SomeError [as e]:), or raise "
             "in the handler; or move error handling outside the differentiated function")


def _check_try(stmt, ctx) -> None:
    """A ``try`` whose every path has a gradient (passes/contexts.py): one handler; when the
    handler may complete, one assignment or call tried (after an error midway through several,
    which of them ran is not known to the derivative); a ``finally`` left only at its end, and
    a ``try`` around it left by a ``return`` only as its last statement."""
    if stmt.finalbody:
        _check_finally(stmt, ctx)
        if not stmt.handlers:
            return
    if len(stmt.handlers) != 1:
        raise error_at(stmt.handlers[1], ctx, "'try' with more than one 'except' is not "
                       "supported", "catch a tuple of exceptions in one handler")
    handler = stmt.handlers[0]
    if handler.type is None:
        raise error_at(handler, ctx, "a bare 'except:' is not supported",
                       "name what is caught: except (ValueError, FloatingPointError):")
    if always_raises(handler.body):
        return  # no value leaves the handler: anything may be tried
    for inner in stmt.body:
        if not isinstance(inner, _TRIED):
            raise error_at(inner, ctx, f"'{type(inner).__name__.lower()}' inside 'try' is not "
                           "supported", _TRY_HINT)
        branching = next((n for n in A.walk(inner) if isinstance(n, _BRANCHING)), None)
        if branching is not None:  # each would become a branch or a loop inside the try
            raise error_at(branching, ctx, "a conditional expression or a comprehension inside "
                           "'try' is not supported", "compute it before the 'try'")
    generated = tape.is_generated(getattr(ctx, "fn", None))  # its tries are one statement's
    if len(stmt.body) > 1 and not generated:
        raise error_at(stmt, ctx, "a 'try' of several statements is supported only when its "
                       "handler raises: after an error midway, which of them ran is not known "
                       "to the derivative", "try one statement, or raise in the handler")


def _check_finally(stmt, ctx) -> None:
    for node in _exits(stmt.finalbody, loops=False):
        raise error_at(node, ctx, f"'{type(node).__name__.lower()}' inside 'finally' is not "
                       "supported", "let the 'finally' block end: it runs however the 'try' "
                       "is left")
    last = stmt.body[-1] if not stmt.handlers and isinstance(stmt.body[-1], gast.Return) \
        else None
    for node in _exits(stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse,
                       loops=False):
        if node is not last:
            raise error_at(node, ctx, f"'{type(node).__name__.lower()}' inside a 'try' with "
                           "'finally' is supported only as the last statement of a 'try' "
                           "without 'except'", "assign the result and return it after the "
                           "'try' statement")


def _exits(stmts: list, loops: bool):
    """The ``return``, ``break`` and ``continue`` statements leaving ``stmts`` (``break`` and
    ``continue`` of loops inside them stay inside; functions defined there are theirs)."""
    for stmt in stmts:
        if isinstance(stmt, gast.Return) or not loops and isinstance(stmt, (gast.Break,
                                                                            gast.Continue)):
            yield stmt
        if isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
            continue
        inner = loops or isinstance(stmt, (gast.For, gast.While))
        for field in ("body", "orelse", "finalbody"):
            yield from _exits(getattr(stmt, field, None) or [], inner)
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _exits(handler.body, inner)


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
