"""Calls of a frozen ``scipy.stats`` distribution's methods as calls of the distribution's.

``rv = norm(mu, sigma)`` freezes the distribution's parameters; ``rv.logpdf(y)`` is then
``norm.logpdf(y, mu, sigma)``, whose rule exists (rules/stats_rules.py); so is
``multivariate_normal(mean, cov)``'s. In the SSA form a name
bound once keeps its value, so each method call on a name bound to a distribution's call is
rewritten to the distribution's method with the frozen arguments appended (positional after
the call's own, keywords beside them), and the freezing statement is dropped once nothing else
reads it (what else reads it, ``rv.mean()`` say, keeps it, and is refused by its own line).

>>> import gast
>>> from types import SimpleNamespace
>>> from transpiler.anno import Anno, setanno
>>> from transpiler.emit import to_source
>>> import scipy.stats
>>> fn = gast.parse("def f(mu, y):\\n    rv = norm(mu, 2.0)\\n    ll = rv.logpdf(y)\\n"
...                 "    return ll").body[0]
>>> setanno(fn.body[0].value, Anno.FUNC, scipy.stats.norm)
>>> print(to_source(frozen(fn, SimpleNamespace())))
def f(mu, y):
    ll = norm.logpdf(y, mu, 2.0)
    return ll
"""

from __future__ import annotations

from collections import Counter

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, setanno


def _is_distribution(func, call: gast.Call) -> bool:
    """Whether ``func`` is a ``scipy.stats`` distribution (whose call freezes it): a univariate
    one, or ``multivariate_normal`` frozen with its ``mean``, ``cov`` and ``allow_singular``
    (which its methods take in that order after the values; a ``seed`` they do not)."""
    if type(func).__name__ == "multivariate_normal_gen":
        return len(call.args) <= 3 and all(k.arg in ("mean", "cov", "allow_singular")
                                           for k in call.keywords)
    return type(func).__module__.startswith("scipy.stats") and hasattr(func, "freeze") \
        and isinstance(getattr(func, "name", None), str)


def frozen(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    stores = Counter(n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                     and not isinstance(n.ctx, gast.Load))
    made = {}  # name -> the call that froze it
    for stmt in A.walk(fn):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call) \
                and stores[stmt.targets[0].id] == 1 \
                and _is_distribution(getanno(stmt.value, Anno.FUNC), stmt.value):
            made[stmt.targets[0].id] = stmt
    if not made:
        return fn
    for call in A.walk(fn):
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
                and isinstance(call.func.value, gast.Name) and call.func.value.id in made:
            freeze = made[call.func.value.id].value
            dist = getanno(freeze, Anno.FUNC)
            call.func = A.attr(A.copy_node(freeze.func), call.func.attr)
            call.args = list(call.args) + [A.copy_node(a) for a in freeze.args]
            call.keywords = list(call.keywords) + [
                gast.keyword(arg=k.arg, value=A.copy_node(k.value)) for k in freeze.keywords]
            setanno(call, Anno.FUNC, getattr(dist, call.func.attr, None))
    read = Counter(n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                   and isinstance(n.ctx, gast.Load))
    dropped = {id(stmt) for name, stmt in made.items() if not read[name]}
    if dropped:
        _drop(fn, dropped)
    return fn


def _drop(node, dropped: set[int]) -> None:
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(node, field, None)
        if isinstance(stmts, list):
            kept = [s for s in stmts if id(s) not in dropped]
            setattr(node, field, kept or ([gast.Pass()] if field == "body" else []))
            for s in kept:
                _drop(s, dropped)
