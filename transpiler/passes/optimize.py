"""Clean the generated function: copy propagation, fusion and dead-code elimination, to a
fixed point, then plain returns.

- ``a = b`` with ``a`` assigned nowhere else and every use of ``a`` later in the same block,
  ``b`` not reassigned before the last of them: uses of ``a`` read ``b`` and the copy goes; a
  copy back ``b = a`` with neither reassigned since goes too.
- Fusion (not in the variant for array arguments, where each intermediate stays a statement
  so that release frees it early): a primal temporary read once moves into the statement of
  the same line that reads it (``x_1 = np.tanh(x @ w)``, as written), an accumulation joins
  the assignment before it (``bx = b_t2 * np.cos(x) + b_t1 * y``), and ``t = -y`` read as
  ``-t`` folds away. The same operations on the same operands: the numbers do not change.
- An assignment whose name is not live afterwards (liveness through branches and loops) and
  whose value has no side effects goes (calls count as side-effect free only when they are rule
  functions, rule helpers or non-differentiable queries; ``print`` and unknown calls stay).
- An element read again (``t2 = x[i]`` after ``t1 = x[i]``, nothing written between) is the
  first one's copy; two updates of one element with nothing reading the array between,
  ``bx[i] += a`` ... ``bx[i] += b``, become one (``bx[i] += a + b``), as a person writes them;
  ``t = -y`` read only as ``t * 2.0`` next is ``y * -2.0``; an adjoint's ``c = np.copy(g[s])``,
  ``g[s] = 0.0`` ... ``g[s] += c`` with only additions into ``g`` between keeps ``g[s]``.
- A test computed for an ``if`` of its line and read by it alone moves into it
  (``if x.ndim != 1:``, as written), in every variant.
- A ``# grad of:`` comment whose block became empty goes.
- ``return float(bx)`` becomes ``return bx`` when ``bx`` certainly is a Python float.

Each step returns whether it changed anything; ``optimize`` repeats them until none does.

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
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.scalars import is_number, python_floats
from transpiler.anno import Anno, getanno, hasanno
from transpiler.passes.ssa import stored_names
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, TANGENTS
from transpiler.templates import fold_binop

_MAX_ROUNDS = 10
_COMPOUND = (gast.If, gast.For, gast.While)


def optimize(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    _scale_before_spreading(fn)
    # in the variant for array arguments each intermediate stays its own statement, so that
    # release can free it right after its last use (fusing would keep operands alive longer)
    arrays = ctx is not None and bool(ctx.arrays)
    for _ in range(_MAX_ROUNDS):
        changed = _propagate_copies(fn) | _propagate_constants(fn, ctx) | _reads_once(fn)
        if not arrays:
            changed |= _fuse(fn, ctx) | _fold_negations(fn)
        changed |= _eliminate_dead_code(fn)
        changed |= _drop_empty_comments(fn)
        if not changed:
            break
    _fuse_tests(fn)
    _join_element_updates(fn.body)
    _negated_factors(fn)
    _kept_in_place(fn.body)
    _drop_float_conversions(fn, ctx)
    return fn


def _drop_float_conversions(fn, ctx) -> None:
    """``return float(ba)`` -> ``return ba`` when ``ba`` certainly is a Python float already
    (arithmetic on float arguments and literals, as in a loop of plain floats)."""
    ret = fn.body[-1] if fn.body else None
    if ctx is None or not isinstance(ret, gast.Return) or ret.value is None:
        return
    to_float = {name for name, obj in ctx.bindings.items() if obj is float}
    elements = ret.value.elts if isinstance(ret.value, gast.Tuple) else [ret.value]
    conversions = [e for e in elements if isinstance(e, gast.Call)
                   and isinstance(e.func, gast.Name) and e.func.id in to_float
                   and len(e.args) == 1 and isinstance(e.args[0], gast.Name) and not e.keywords]
    if not conversions:
        return
    floats = python_floats(fn.body, frozenset(ctx.scalars))
    plain = {id(c): c.args[0] for c in conversions if c.args[0].id in floats}
    if isinstance(ret.value, gast.Tuple):
        ret.value.elts = [plain.get(id(e), e) for e in ret.value.elts]
    else:
        ret.value = plain.get(id(ret.value), ret.value)


def _propagate_copies(fn) -> bool:
    changed = _round_trips(fn.body)
    names = _names(fn.body)
    flat = [n for group in names for n in group] + A.walk(fn.args)
    stores = Counter(n.id for n in flat if isinstance(n, gast.Name)
                     and not isinstance(n.ctx, gast.Load))
    loads = Counter(n.id for n in flat if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    return _copies_in(fn.body, stores, loads, names) | changed


def _names(stmts: list) -> list[list[gast.Name]]:
    return [[n for n in A.walk(s) if isinstance(n, gast.Name)] for s in stmts]


def _propagate_constants(fn, ctx) -> bool:
    """``bs = 1.0`` (the seed of a sum), ``b_t6 = 100.0``, assigned once: its reads later in the
    same block become the number, and arithmetic of two numbers is folded (``bs * 2 * t`` ->
    ``2.0 * t``)."""
    names = [n for n in A.walk(fn) if isinstance(n, gast.Name)]
    stores = Counter(n.id for n in names if not isinstance(n.ctx, gast.Load))
    changed = False
    floats: set[str] | None = None  # Python floats: 1.0 * f is f (computed when first asked)

    def _folded(node: gast.BinOp):
        """Arithmetic of two numbers folded, and ``1.0 * f`` of a Python float ``f``; nothing
        else (``1.0 * e`` is a new array, of float type, where ``e`` may be shared or an
        int)."""
        nonlocal floats
        if is_number(node.left) and is_number(node.right):
            return fold_binop(node)
        if isinstance(node.op, gast.Mult):
            for one, other in ((node.left, node.right), (node.right, node.left)):
                if is_number(one) and one.value == 1.0 and isinstance(other, gast.Name):
                    if floats is None:
                        floats = python_floats(fn.body, frozenset(ctx.scalars)) \
                            if ctx is not None else set()
                    if other.id in floats:
                        return other
        return node

    def number(node, constants):  # (not a builtin the compiler wrote: reversed, range)
        return isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
            and node.id in constants and not hasanno(node, Anno.BUILTIN)

    def fold(node, constants):
        nonlocal changed
        for field, child in gast.iter_fields(node):
            if number(child, constants):
                setattr(node, field, A.const(constants[child.id]))
                changed = True
            elif isinstance(child, gast.AST):
                fold(child, constants)
                if isinstance(child, gast.BinOp):
                    setattr(node, field, _folded(child))
            elif isinstance(child, list):
                for k, item in enumerate(child):
                    if number(item, constants):
                        child[k] = A.const(constants[item.id])
                        changed = True
                    elif isinstance(item, gast.AST):
                        fold(item, constants)
                        if isinstance(item, gast.BinOp):
                            child[k] = _folded(item)

    def block(stmts: list) -> None:
        constants: dict = {}
        for stmt in stmts:
            if constants:
                fold(stmt, constants)
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    block(getattr(stmt, field))
            target = A.target_name(stmt)
            if target is not None and stores[target] == 1 and is_number(stmt.value):
                constants[target] = stmt.value.value

    block(fn.body)
    return changed


def _element(value) -> bool:
    """``x[i]``, ``x[i + 1, j]``: a subscript of a name by names, numbers and arithmetic."""
    return isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and all(
        isinstance(n, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Tuple))
        for n in A.walk(value.slice))


def _writes(stmt) -> bool:
    """Whether ``stmt`` may change an array's elements (a subscript store, a call)."""
    return isinstance(stmt, gast.AugAssign) or any(
        isinstance(t, gast.Subscript) for t in getattr(stmt, "targets", ())) or any(
        isinstance(n, gast.Call) and not _pure(n) for n in A.walk(stmt))


def _reads_once(fn) -> bool:
    """``t2 = x[i]`` after ``t1 = x[i]`` in one block, no write of any array's elements and
    no rebinding of what the read reads between: ``t2 = t1`` (copy propagation removes it)."""
    changed = False
    blocks = [fn.body]
    while blocks:
        stmts = blocks.pop()
        seen: dict[str, tuple[str, set[str]]] = {}  # dumped read -> (its name, what it reads)
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    blocks.append(getattr(stmt, field))
            if isinstance(stmt, (gast.If, gast.For, gast.While)) or _writes(stmt):
                seen.clear()
                continue
            target = A.target_name(stmt)
            stored = {n.id for t in getattr(stmt, "targets", ()) for n in A.walk(t)
                      if isinstance(n, gast.Name)}
            if target is not None and _element(stmt.value):
                key = gast.dump(stmt.value)
                if key in seen and seen[key][0] != target:
                    stmt.value = A.name(seen[key][0])
                    changed = True
                else:
                    seen = {k: v for k, v in seen.items() if not (stored & (v[1] | {v[0]}))}
                    if target not in A.load_names(stmt.value):
                        seen[key] = (target, set(A.load_names(stmt.value)))
                    continue
            seen = {k: v for k, v in seen.items() if not (stored & (v[1] | {v[0]}))}
    return changed


def _kept_in_place(stmts: list) -> None:
    """``c = np.copy(g[s]); g[s] = 0.0`` ... ``g[s] += c``, with only additions into ``g``
    (``g[...] += e``, ``e`` not reading ``g``) between: the zeroing and the adding back go
    (the sums are the same; ``g[s]`` keeps its value instead of leaving and coming back)."""
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                _kept_in_place(getattr(stmt, field))
    i = 0
    while i + 1 < len(stmts):
        copy, zero = stmts[i], stmts[i + 1]
        c = A.target_name(copy)
        part = copy.value.args[0] if c is not None and isinstance(copy.value, gast.Call) \
            and getanno(copy.value, Anno.FUNC) is np.copy and len(copy.value.args) == 1 \
            and not copy.value.keywords else None
        if not (isinstance(part, gast.Subscript) and isinstance(part.value, gast.Name)
                and isinstance(zero, gast.Assign) and len(zero.targets) == 1
                and isinstance(zero.targets[0], gast.Subscript)
                and gast.dump(zero.targets[0]).replace("Store", "Load") == gast.dump(part)
                and isinstance(zero.value, gast.Constant) and zero.value.value == 0.0):
            i += 1
            continue
        g, key = part.value.id, gast.dump(part.slice)
        fixed = {g, c} | set(A.load_names(part.slice))
        for k in range(i + 2, len(stmts)):
            nxt = stmts[k]
            adds = isinstance(nxt, gast.AugAssign) and isinstance(nxt.op, gast.Add) \
                and isinstance(nxt.target, gast.Subscript) \
                and isinstance(nxt.target.value, gast.Name) and nxt.target.value.id == g
            if adds and gast.dump(nxt.target.slice) == key and isinstance(nxt.value, gast.Name) \
                    and nxt.value.id == c:
                del stmts[k]
                del stmts[i + 1]
                break
            stored = {n.id for n in A.walk(nxt) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, gast.Store)}
            reads_g = g in A.load_names(nxt.value if adds else nxt)
            if (adds and reads_g) or (not adds and (reads_g or _writes(nxt))) \
                    or stored & fixed or isinstance(nxt, (gast.If, gast.For, gast.While)):
                break
        i += 1


def _negated_factors(fn) -> None:
    """``t = -y`` read only by the next statement, ``u = t * c`` (``c`` a number):
    ``u = y * -c`` (the same number: a sign moves onto the constant; an array operation
    fewer)."""
    names = [n for n in A.walk(fn) if isinstance(n, gast.Name)]
    stores = Counter(n.id for n in names if not isinstance(n.ctx, gast.Load))
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    blocks = [fn.body]
    while blocks:
        stmts = blocks.pop()
        blocks += [getattr(s, f) for s in stmts for f in ("body", "orelse")
                   if isinstance(getattr(s, f, None), list)]
        i = 0
        while i + 1 < len(stmts):
            first, nxt = stmts[i], stmts[i + 1]
            t = A.target_name(first)
            value = nxt.value if isinstance(nxt, gast.Assign) else None
            if t is not None and stores[t] == 1 and loads[t] == 1 \
                    and isinstance(first.value, gast.UnaryOp) \
                    and isinstance(first.value.op, gast.USub) \
                    and isinstance(first.value.operand, gast.Name) \
                    and isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult):
                for side, other in (("left", "right"), ("right", "left")):
                    here, there = getattr(value, side), getattr(value, other)
                    if isinstance(here, gast.Name) and here.id == t and is_number(there):
                        setattr(value, side, first.value.operand)
                        setattr(value, other, A.const(-there.value))
                        del stmts[i]
                        break
                else:
                    i += 1
                continue
            i += 1


def _join_element_updates(stmts: list) -> None:
    """``g[i] += a`` ... ``g[i] += b`` in one block, nothing between reading ``g``, writing
    any array's elements or rebinding what ``a`` or the index reads: ``g[i] += a + b``."""
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                _join_element_updates(getattr(stmt, field))
    i = 0
    while i < len(stmts):
        first = stmts[i]
        if not (isinstance(first, gast.AugAssign) and isinstance(first.op, gast.Add)
                and isinstance(first.target, gast.Subscript)
                and isinstance(first.target.value, gast.Name)):
            i += 1
            continue
        array, key = first.target.value.id, gast.dump(first.target.slice)
        index_reads = set(A.load_names(first.target.slice))
        for k in range(i + 1, len(stmts)):
            nxt = stmts[k]
            if isinstance(nxt, gast.AugAssign) and isinstance(nxt.op, gast.Add) \
                    and isinstance(nxt.target, gast.Subscript) \
                    and isinstance(nxt.target.value, gast.Name) \
                    and nxt.target.value.id == array and gast.dump(nxt.target.slice) == key \
                    and array not in A.load_names(nxt.value):
                nxt.value = gast.BinOp(left=first.value, op=gast.Add(), right=nxt.value)
                del stmts[i]
                break
            names = {n.id for n in A.walk(nxt) if isinstance(n, gast.Name)}
            stored = {n.id for n in A.walk(nxt) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, gast.Store)}
            if array in names or stored & (index_reads | set(A.load_names(first.value))) \
                    or isinstance(nxt, (gast.If, gast.For, gast.While, gast.Return)) \
                    or _writes(nxt):  # (a's value is read later: nothing it reads may change)
                i += 1
                break
        else:
            i += 1


def _round_trips(stmts: list) -> bool:
    """``a = b`` ... ``b = a`` with neither reassigned between: the second copy does nothing
    (nor does ``a = a``)."""
    changed, copies, kept = False, {}, []
    copied_from: dict[str, set] = {}  # b -> the a of each copy a = b in ``copies``
    for stmt in stmts:
        if isinstance(stmt, _COMPOUND):
            changed |= _round_trips(stmt.body) | _round_trips(stmt.orelse)
            copies, copied_from = {}, {}
        target = A.target_name(stmt)
        source = stmt.value.id if target and isinstance(stmt.value, gast.Name) else None
        if source is not None and (source == target or copies.get(source) == target):
            changed = True
            continue
        if copies:
            targets = getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]
            for name in {n.id for t in targets if t is not None for n in A.walk(t)
                         if isinstance(n, gast.Name)}:  # (a compound statement reset them)
                old = copies.pop(name, None)
                if old is not None:
                    copied_from[old].discard(name)
                for a in copied_from.pop(name, ()):
                    copies.pop(a, None)
        if source is not None:
            copies[target] = source
            copied_from.setdefault(source, set()).add(target)
        kept.append(stmt)
    stmts[:] = kept
    return changed


def _copies_in(stmts: list, stores: Counter, loads: Counter, names: list | None = None) -> bool:
    """Propagate ``a = b`` copies whose every use follows them in the same block, with ``b``
    not reassigned in between. One sweep; renames are applied as they are found. ``names``:
    the Names of each statement, where the caller has them."""
    changed = False
    names = _names(stmts) if names is None else names
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
        if len(later_uses) != loads[target] or not later_uses:
            continue
        last = max(later_uses)  # b may be reassigned after a's last use (or by that statement)
        if any(i < k < last or k == last and not isinstance(stmts[k], gast.Assign)
               for k in stored_at.get(source, ())):
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


def _fuse(fn, ctx) -> bool:
    """Join a statement into the next one of the same source line, as a person would write:

    - ``t = e`` then ``y = ... t ...``, ``t`` read only there, neither a gradient nor a tangent
      nor a value whose gradient or tangent is in the code: ``y = ... e ...`` (the primal
      reads as written; each gradient keeps its line and the value it is the gradient of);
    - ``g = e`` then ``g = g + f - h`` (a sum), ``f`` and ``h`` not reading ``g``:
      ``g = e + f - h``.

    Only pure values move (rule functions, arithmetic), within one block and one source line
    (a copy or a constant may cross lines), past plain assignments that neither assign what
    they read nor read what they assign: the same operations on the same operands, so the
    numbers do not change."""
    names = [n for n in A.walk(fn) if isinstance(n, gast.Name)]
    stores = Counter(n.id for n in names if not isinstance(n.ctx, gast.Load))
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    derivatives: set[str] = set()  # gradients and tangents
    kept: set[str] = set()  # and the values whose gradient or tangent is in the code
    if ctx is not None:
        present = set(stores) | set(loads)
        for v, d in ctx.namer.derivative_pairs():
            derivatives.add(d)
            if d in present:
                kept.add(v)
    return _fuse_in(fn.body, stores, loads, frozenset(derivatives), frozenset(derivatives | kept))


def _fuse_in(stmts: list, stores: Counter, loads: Counter, derivatives: frozenset,
             kept: frozenset) -> bool:
    changed, i = False, 0
    while i < len(stmts):
        stmt = stmts[i]
        if isinstance(stmt, _COMPOUND):
            changed |= _fuse_in(stmt.body, stores, loads, derivatives, kept)
            changed |= _fuse_in(stmt.orelse, stores, loads, derivatives, kept)
        target = A.target_name(stmt)
        k = _next_use(stmts, i) if target is not None and _movable(stmt.value) else None
        if k is None:
            i += 1
            continue
        nxt = stmts[k]
        if stores[target] == 1 and loads[target] == 1 and isinstance(nxt, gast.Assign) \
                and target not in kept and A.target_name(nxt) not in derivatives:
            nxt.value = _replace(nxt.value, target, stmt.value)
        elif A.target_name(nxt) == target and (sum_ := _sum_of(nxt.value, target)) \
                and A.load_names(nxt.value).count(target) == 1:
            sum_.left = stmt.value
            stores[target] -= 1
        else:
            i += 1
            continue
        loads[target] -= 1
        del stmts[i]
        changed = True
    return changed


def _next_use(stmts: list, i: int) -> int | None:
    """The index of the statement ``stmts[i]``'s value may move into: the next one that reads
    or assigns its target, when that is an assignment or a return of the same source line
    (any line, for a copy or a constant) and nothing between could change what the value
    reads or observe the target."""
    stmt = stmts[i]
    target, reads = A.target_name(stmt), set(A.load_names(stmt.value))
    trivial = isinstance(stmt.value, (gast.Name, gast.Constant))
    for k in range(i + 1, len(stmts)):
        nxt = stmts[k]
        if hasanno(nxt, Anno.COMMENT) and trivial:
            continue
        if not isinstance(nxt, (gast.Assign, gast.Return)) or nxt.value is None \
                or not _movable(nxt.value) \
                or not (trivial or getattr(nxt, "lineno", -1) == getattr(stmt, "lineno", None)):
            return None
        between = A.target_name(nxt)
        if target in A.load_names(nxt.value) or between == target:
            return k
        if between is None or between in reads:
            return None
    return None


def _fuse_tests(fn) -> None:
    """``t = e`` then ``if t:`` of the same line, ``t`` read only there: ``if e:``."""
    pairs = []  # (block, index of t = e)
    blocks = [fn.body]
    while blocks:
        block = blocks.pop()
        for i, stmt in enumerate(block):
            if isinstance(stmt, _COMPOUND):
                blocks += [stmt.body, stmt.orelse]
            if isinstance(stmt, gast.If) and isinstance(stmt.test, gast.Name) and i \
                    and A.target_name(block[i - 1]) == stmt.test.id \
                    and getattr(block[i - 1], "lineno", None) == getattr(stmt, "lineno", -1) \
                    and not hasanno(stmt, Anno.WITH) and not hasanno(stmt, Anno.TRY):
                pairs.append((block, i - 1))
    if not pairs:
        return
    wanted = {A.target_name(block[i]) for block, i in pairs}
    uses = Counter(n.id for n in A.walk(fn) if isinstance(n, gast.Name) and n.id in wanted)
    for block, i in sorted(pairs, key=lambda p: -p[1]):  # later ones first: indices stay valid
        stmt = block[i]
        if uses[A.target_name(stmt)] == 2 and _movable(stmt.value):  # its store and one load
            block[i + 1].test = stmt.value
            del block[i]


def _fold_negations(fn) -> bool:
    """``t = -y`` read as ``-t`` in a product: each ``-t`` becomes ``y`` and each other read of
    ``t`` becomes ``-y`` (the same numbers, with fewer negations), and ``t`` goes. ``y`` must
    not be reassigned before ``t``'s last read, all of them later in the same block."""
    names = [n for n in A.walk(fn) if isinstance(n, gast.Name)]
    stores = Counter(n.id for n in names if not isinstance(n.ctx, gast.Load))
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    return _negations_in(fn.body, stores, loads)


def _negations_in(stmts: list, stores: Counter, loads: Counter) -> bool:
    changed = False
    for stmt in stmts:
        if isinstance(stmt, _COMPOUND):
            changed |= _negations_in(stmt.body, stores, loads)
            changed |= _negations_in(stmt.orelse, stores, loads)
    i = 0
    while i < len(stmts):
        stmt, target = stmts[i], A.target_name(stmts[i])
        value = getattr(stmt, "value", None)
        if target is None or stores[target] != 1 or not isinstance(value, gast.UnaryOp) \
                or not isinstance(value.op, gast.USub) or not isinstance(value.operand, gast.Name):
            i += 1
            continue
        source, uses, negated = value.operand.id, [], []
        for k in range(i + 1, len(stmts)):
            for parent in A.walk(stmts[k]):
                for field, child in _children(parent):
                    if isinstance(child, gast.Name) and child.id == target:
                        uses.append((k, parent, field, child))
                    elif isinstance(parent, gast.BinOp) and isinstance(child, gast.UnaryOp) \
                            and isinstance(child.op, gast.USub) \
                            and isinstance(child.operand, gast.Name) \
                            and child.operand.id == target:
                        negated.append((parent, field, child))
        last = max((k for k, *_ in uses), default=None)
        reassigned = last is not None and any(
            source in stored_names([stmts[k]]) for k in range(i + 1, last + (
                0 if isinstance(stmts[last], gast.Assign) else 1)))
        if len(uses) != loads[target] or not negated or reassigned \
                or any(isinstance(stmts[k], _COMPOUND) for k, *_ in uses) \
                or len(uses) - len(negated) > len(negated) + 1:
            i += 1
            continue
        folded = {id(c) for _, _, c in negated}
        for parent, field, child in negated:
            _set_child(parent, field, child, A.name(source))
        for _, parent, field, child in uses:
            if id(parent) not in folded:
                _set_child(parent, field, child, gast.UnaryOp(op=gast.USub(),
                                                             operand=A.name(source)))
        loads[source] += len(uses) - len(negated) - 1
        loads[target] = 0
        del stmts[i]
        changed = True
    return changed


def _children(node):
    for field in node._fields:
        child = getattr(node, field, None)
        if isinstance(child, list):
            for k, c in enumerate(child):
                yield (field, k), c
        elif isinstance(child, gast.AST):
            yield field, child


def _set_child(parent, field, old, new) -> None:
    if isinstance(field, tuple):
        getattr(parent, field[0])[field[1]] = new
    else:
        setattr(parent, field, new)


def _sum_of(value, name: str):
    """The innermost ``name + ...`` (or ``-``) of ``value`` = ``name + a - b + ...``, or None."""
    while isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Sub)):
        if isinstance(value.left, gast.Name) and value.left.id == name:
            return value
        value = value.left
    return None


def _movable(value) -> bool:
    """Whether ``value`` may be evaluated a little later, or another value moved past or into
    it: no calls with effects, no call that writes into its argument (``rt.add_into``),
    nothing evaluated later or repeatedly (lambdas, comprehensions)."""
    for n in A.walk(value):
        if isinstance(n, (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
                          gast.GeneratorExp, gast.NamedExpr, gast.Await, gast.Yield)):
            return False
        if isinstance(n, gast.Call) and getanno(n, Anno.FUNC) is runtime.add_into:
            return False
    return _pure(value)


def _replace(tree, name: str, value):
    """``tree`` with its one read of ``name`` replaced by ``value``."""
    if isinstance(tree, gast.Name) and tree.id == name:
        return value
    for parent in A.walk(tree):
        for field, child in _children(parent):
            if isinstance(child, gast.Name) and child.id == name \
                    and isinstance(child.ctx, gast.Load):
                _set_child(parent, field, child, value)
                return tree
    return tree


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


def _dce(stmts: list, live: set[str], apply: bool,
         keep: bool = False) -> tuple[list, set[str], bool]:
    """Backward liveness over a block: (kept statements, live-in set, changed).

    With ``apply`` False nothing is modified (used while a loop's liveness converges); with
    ``keep`` no statement of the block is dead."""
    kept, changed = [], False
    live = set(live)
    for stmt in reversed(stmts):
        if isinstance(stmt, gast.If):  # (what a try tries stays, all of it: it may raise)
            body, in_body, c1 = _dce(stmt.body, live, apply, keep or hasanno(stmt, Anno.TRY))
            orelse, in_else, c2 = _dce(stmt.orelse, live, apply, keep)
            if apply:
                stmt.body, stmt.orelse = body, orelse
            live = in_body | in_else | set(A.load_names(stmt.test))
            changed |= c1 or c2
        elif isinstance(stmt, (gast.For, gast.While)):
            header = A.load_names(stmt.iter if isinstance(stmt, gast.For) else stmt.test)
            # each iteration binds the target anew: the body's reads of it are the loop's own
            bound = {n.id for n in A.walk(stmt.target) if isinstance(n, gast.Name)} \
                if isinstance(stmt, gast.For) else set()
            around = live | set(header)
            while True:  # the body's live-out includes its own live-in (next iteration)
                _, inside, _ = _dce(stmt.body, around, False, keep)
                inside -= bound - live
                if inside <= around:
                    break
                around |= inside
            body, _, c = _dce(stmt.body, around, apply, keep)
            if apply:
                stmt.body = body
            live = around
            changed |= c
            if apply and all(isinstance(s, gast.Pass) for s in body) and not stmt.orelse \
                    and isinstance(stmt, gast.For) \
                    and isinstance(stmt.iter, gast.Name) and isinstance(stmt.target, gast.Name) \
                    and stmt.target.id not in live:
                changed = True  # a loop over a range (or a list) that now does nothing
                live = (live - {stmt.target.id}) | {stmt.iter.id}
                continue
        else:
            target = A.target_name(stmt)
            if target is not None and target not in live and _pure(stmt.value) and not keep:
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
