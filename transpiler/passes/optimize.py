"""Clean the generated function: copy propagation and dead-code elimination, to a fixed point.

- ``a = b`` with ``a`` assigned once and ``b`` never reassigned afterwards: uses of ``a`` read
  ``b`` and the copy goes.
- An assignment whose name is never read and whose value has no side effects goes (calls count
  as side-effect free only when they are rule functions, rule helpers or non-differentiable
  queries; ``print`` and unknown calls stay).
- A ``# grad of:`` comment whose block became empty goes.

Each step returns whether it changed anything; ``optimize`` repeats them until none does.

>>> import gast
>>> from transpiler.emit import to_source
>>> fn = gast.parse("def g(x):\\n    a = x * 2\\n    b = a\\n    c = b + 1\\n    return b").body[0]
>>> print(to_source(optimize(fn, None)))
def g(x):
    a = x * 2
    return a
"""

from __future__ import annotations

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS

_MAX_ROUNDS = 20


def optimize(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    for _ in range(_MAX_ROUNDS):
        changed = _propagate_copies(fn)
        changed |= _eliminate_dead_code(fn)
        changed |= _drop_empty_comments(fn)
        if not changed:
            break
    return fn


def _assign_counts(body) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            for t in stmt.targets:
                for n in gast.walk(t):
                    if isinstance(n, gast.Name):
                        counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _propagate_copies(fn) -> bool:
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    for i, stmt in enumerate(fn.body):
        target = A.target_name(stmt)
        if target is None or not isinstance(stmt.value, gast.Name) or target in params:
            continue
        source = stmt.value.id
        later = fn.body[i + 1:]
        counts = _assign_counts(fn.body)
        if counts.get(target) != 1 or _assign_counts(later).get(source):
            continue
        for node in later:
            for n in gast.walk(node):
                if isinstance(n, gast.Name) and n.id == target and isinstance(n.ctx, gast.Load):
                    n.id = source
        del fn.body[i]
        return True
    return False


def _pure(value) -> bool:
    for n in gast.walk(value):
        if isinstance(n, gast.Call) and not hasanno(n, Anno.PURE):
            func = getanno(n, Anno.FUNC)
            try:
                known = func in ADJOINTS or (func in NONDIFF and func is not print)
            except TypeError:
                known = False
            if not known:
                return False
    return True


def _eliminate_dead_code(fn) -> bool:
    live: set[str] = set()
    kept, changed = [], False
    for stmt in reversed(fn.body):
        target = A.target_name(stmt)
        if target is not None and target not in live and _pure(stmt.value):
            changed = True
            continue
        if target is not None:
            live.discard(target)
        live.update(A.load_names(stmt))
        kept.append(stmt)
    fn.body = kept[::-1]
    return changed


def _drop_empty_comments(fn) -> bool:
    body, changed = fn.body, False
    kept = []
    for i, stmt in enumerate(body):
        nxt = body[i + 1] if i + 1 < len(body) else None
        if hasanno(stmt, Anno.COMMENT) and (nxt is None or hasanno(nxt, Anno.COMMENT)
                                            or isinstance(nxt, gast.Return)):
            changed = True
            continue
        kept.append(stmt)
    fn.body = kept
    return changed
