"""Clean the generated function: copy propagation and dead-code elimination, to a fixed point.

- ``a = b`` with ``a`` assigned nowhere else, every use of ``a`` later in the same block and
  ``b`` not reassigned there: uses of ``a`` read ``b`` and the copy goes.
- An assignment whose name is not live afterwards (liveness through branches and loops) and
  whose value has no side effects goes (calls count as side-effect free only when they are rule
  functions, rule helpers or non-differentiable queries; ``print`` and unknown calls stay).
- A ``# grad of:`` comment whose block became empty goes.

Each step returns whether it changed anything; ``optimize`` repeats them until none does.

>>> from collections import Counter

from collections import Counter

import gast
>>> from transpiler.emit import to_source
>>> fn = gast.parse("def g(x):\\n    a = x * 2\\n    b = a\\n    c = b + 1\\n    return b").body[0]
>>> print(to_source(optimize(fn, None)))
def g(x):
    a = x * 2
    return a
"""

from __future__ import annotations

from collections import Counter

import gast

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, TANGENTS

_MAX_ROUNDS = 10
_COMPOUND = (gast.If, gast.For, gast.While)


def optimize(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    _scale_before_spreading(fn)
    for _ in range(_MAX_ROUNDS):
        changed = _propagate_copies(fn)
        changed |= _eliminate_dead_code(fn)
        changed |= _drop_empty_comments(fn)
        if not changed:
            break
    return fn


def _propagate_copies(fn) -> bool:
    names = [n for n in A.walk(fn) if isinstance(n, gast.Name)]
    stores = Counter(n.id for n in names if not isinstance(n.ctx, gast.Load))
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    return _copies_in(fn.body, stores, loads)


def _copies_in(stmts: list, stores: Counter, loads: Counter) -> bool:
    """Propagate ``a = b`` copies whose every use follows them in the same block, with ``b``
    not reassigned in between. One sweep; renames are applied as they are found."""
    changed = False
    names = [[n for n in A.walk(s) if isinstance(n, gast.Name)] for s in stmts]
    # where, in this block, each name is loaded and stored (by statement index)
    used_at: dict[str, list[int]] = {}
    stored_at: dict[str, list[int]] = {}
    for i, group in enumerate(names):
        for n in group:
            table = used_at if isinstance(n.ctx, gast.Load) else stored_at
            table.setdefault(n.id, []).append(i)
    dead = set()
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, _COMPOUND):
            changed |= _copies_in(stmt.body, stores, loads) | _copies_in(stmt.orelse, stores, loads)
            continue
        target = A.target_name(stmt)
        if target is None or not isinstance(stmt.value, gast.Name) or stores[target] != 1:
            continue
        source = stmt.value.id
        later_uses = [k for k in used_at.get(target, ()) if k > i]
        if len(later_uses) != loads[target] or any(k > i for k in stored_at.get(source, ())):
            continue
        for k in set(later_uses):
            for n in names[k]:
                if n.id == target:
                    n.id = source
        used_at.setdefault(source, []).extend(later_uses)
        loads[source] += len(later_uses) - 1
        loads[target] = 0
        dead.add(i)
        changed = True
    if dead:
        stmts[:] = [s for i, s in enumerate(stmts) if i not in dead]
    return changed


def _scale_before_spreading(fn) -> bool:
    """``g = rt.unreduce(s, x); h = g * 2.0`` -> ``h = rt.unreduce(s * 2.0, x)`` for a number
    ``s`` and ``g`` read once: the product is taken on the number, before it is spread into an
    array of ``x``'s shape (which ``rt.unreduce`` does without copying)."""
    nodes = list(A.walk(fn))
    names = [n for n in nodes if isinstance(n, gast.Name)]
    stores = Counter(n.id for n in names if not isinstance(n.ctx, gast.Load))
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    assigns = [n for n in nodes if isinstance(n, gast.Assign)]
    numbers = {A.target_name(s): s.value for s in assigns  # b_t3 = 1.0, the seed
               if _number(s.value) and stores[A.target_name(s)] == 1}
    spreads = {}
    for stmt in assigns:
        value, target = stmt.value, A.target_name(stmt)
        if target and stores[target] == 1 and loads[target] == 1 \
                and isinstance(value, gast.Call) and getanno(value, Anno.FUNC) is runtime.unreduce \
                and len(value.args) == 2 and not value.keywords:
            first = value.args[0]
            if isinstance(first, gast.Name) and first.id in numbers:
                first = A.copy_node(numbers[first.id])
            if _number(first):
                spreads[target] = (value, first)
    changed = False
    if not spreads:
        return False
    for stmt in assigns:
        value = stmt.value
        if not (isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Mult, gast.Div))):
            continue
        for side, other in (("left", value.right), ("right", value.left)):
            spread = getattr(value, side)
            if isinstance(spread, gast.Name) and spread.id in spreads and _number(other) \
                    and (side == "left" or isinstance(value.op, gast.Mult)):
                call, number = spreads.pop(spread.id)
                scaled = gast.BinOp(left=number, op=value.op, right=other) \
                    if side == "left" else gast.BinOp(left=other, op=value.op, right=number)
                call.args[0] = _fold(scaled)
                stmt.value = call
                changed = True
                break
    return changed


def _number(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def _fold(node):
    if _number(node.left) and _number(node.right):
        try:
            result = node.left.value * node.right.value if isinstance(node.op, gast.Mult) \
                else node.left.value / node.right.value
        except ZeroDivisionError:
            return node
        return A.const(float(result))
    return node


def _pure(value) -> bool:
    for n in A.walk(value):
        if isinstance(n, gast.Call) and not hasanno(n, Anno.PURE):
            func = getanno(n, Anno.FUNC)
            try:
                known = func in ADJOINTS or func in TANGENTS or (
                    func in NONDIFF and func is not print)
            except TypeError:
                known = False
            if not known:
                return False
    return True


def _eliminate_dead_code(fn) -> bool:
    body, _, changed = _dce(fn.body, set(), apply=True)
    fn.body = body
    return changed


def _dce(stmts: list, live: set[str], apply: bool) -> tuple[list, set[str], bool]:
    """Backward liveness over a block: (kept statements, live-in set, changed).

    With ``apply`` False nothing is modified (used while a loop's liveness converges)."""
    kept, changed = [], False
    live = set(live)
    for stmt in reversed(stmts):
        if isinstance(stmt, gast.If):
            body, in_body, c1 = _dce(stmt.body, live, apply)
            orelse, in_else, c2 = _dce(stmt.orelse, live, apply)
            if apply:
                stmt.body, stmt.orelse = body, orelse
            live = in_body | in_else | set(A.load_names(stmt.test))
            changed |= c1 or c2
        elif isinstance(stmt, (gast.For, gast.While)):
            header = A.load_names(stmt.iter if isinstance(stmt, gast.For) else stmt.test)
            around = live | set(header)
            while True:  # the body's live-out includes its own live-in (next iteration)
                _, inside, _ = _dce(stmt.body, around, apply=False)
                if inside <= around:
                    break
                around |= inside
            body, _, c = _dce(stmt.body, around, apply)
            if apply:
                stmt.body = body
            live = around
            changed |= c
        else:
            target = A.target_name(stmt)
            if target is not None and target not in live and _pure(stmt.value):
                changed = True
                continue
            if target is not None:
                live.discard(target)
            live.update(A.load_names(stmt))
        kept.append(stmt)
    return kept[::-1], live, changed


def _drop_empty_comments(fn) -> bool:
    changed = False

    def clean(stmts: list) -> list:
        nonlocal changed
        kept = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, _COMPOUND):
                stmt.body = clean(stmt.body) or [gast.Pass()]
                stmt.orelse = clean(stmt.orelse)
            nxt = stmts[i + 1] if i + 1 < len(stmts) else None
            if hasanno(stmt, Anno.COMMENT) and (nxt is None or hasanno(nxt, Anno.COMMENT)
                                                or isinstance(nxt, gast.Return)):
                changed = True
                continue
            kept.append(stmt)
        return kept

    fn.body = clean(fn.body)
    return changed
