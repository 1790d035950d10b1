"""The loop tape: what a loop saves for its adjoint, and the one form it takes in generated code.

The reverse pass builds a loop's primal and adjoint bodies; ``plan`` decides the rest, with the
first strategy of ``STRATEGIES`` that applies to the loop:

- ``Preallocated`` (the Numba backend only): a ``for`` not left early whose saved values are
  all numbers saves each in a NumPy array of its own, allocated before the loop at the trip
  count and written at the iteration's index; the adjoint loop runs the indices backwards and
  reads the entries there (a range's counter is computed from the index, not saved). An array
  per value is what compiled code reads and writes fastest (a list of tuples costs an append
  and a tuple per iteration).
- ``Taped``: the adjoint of an iteration reads values the iteration assigns. They are saved, one
  entry per iteration, on a tape of the loop's own, and the adjoint loop walks it backwards,
  the entries becoming its loop variables. A value read only for a shape that every iteration
  shares is not saved; one read only for its shape is saved as ``rt.shape_of(x)``; ``x_2`` of
  a copy back ``x_1 = x_2`` is not saved when ``x_1`` is (it is restored from it).
- ``ReversedRange``: a ``for`` over a range, not left early, that saves nothing: the adjoint
  loop runs over ``reversed(range)``.
- ``Counted``: anything else that saves nothing (a ``while``, a ``for`` left by ``break``):
  the primal counts its trips, and the adjoint loop runs that many times.

A new strategy (checkpointing) is one more class here, placed before the ones it overrides.

The form (documented here, and read back only through this module's readers, when forward mode
differentiates a generated gradient again)::

    _tape = []                          # before the loop
    _tape.append(entry)                 # at the end of each iteration: a value or a tuple
    for a, b in reversed(_tape):        # the adjoint loop: entries, last to first

``pushes`` finds the appends of a generated gradient, ``walked_tape`` the adjoint loops, and
``popping`` rewrites those loops as ``for _ in range(len(_tape)): a, b = _tape.pop()``, the form
forward mode keeps a tangent tape beside (``popped`` reads it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast
import numpy

import runtime
from transpiler import ast_util as A
from transpiler.passes.ssa import stored_names


@dataclass
class Loop:
    """What the reverse pass knows of one loop when it asks for a plan."""

    stmt: object  # the gast.For or gast.While, its body not yet rebuilt
    copies: list  # the copy-back statements that end the body (x_1 = x_2)
    exit_: list  # the exit statement of a loop left early ([] if none)
    primal: list  # the primal statements of the body (main part, then copies)
    adjoint: list  # the adjoint statements of one iteration (copies' first, then main's)
    looped: frozenset = frozenset()  # every name some loop of the function assigns
    ranges: frozenset = frozenset()  # the names the function binds to range(...)


@dataclass
class Plan:
    """The statements a strategy adds around the loop and the adjoint loop's header."""

    before: list = field(default_factory=list)  # before the primal loop
    push: list = field(default_factory=list)  # in the primal body, before the copies
    counter: list = field(default_factory=list)  # at the end of the primal body
    restores: list = field(default_factory=list)  # at the end of each adjoint iteration
    entries: list = field(default_factory=list)  # at the start of each adjoint iteration
    recompute: list = field(default_factory=list)  # after the entries
    target: object = None  # the adjoint loop's target
    header: object = None  # the adjoint loop's iterable


def plan(loop: Loop, ctx, shapes) -> Plan:
    """The tape, restores and adjoint-loop form of ``loop``, by the first strategy that
    applies (``shapes`` tells which names have a shape known without their value)."""
    saved, shape_only, restores = _saved(loop, ctx, shapes)
    saved, recompute = _recomputed(loop, saved, ctx)
    for strategy in STRATEGIES:
        if strategy.applies(loop, saved, ctx):
            made = strategy.plan(loop, saved, shape_only, ctx)
            made.restores, made.recompute = restores, recompute
            made.before += _unbound(loop, saved)  # the strategy's own statements first
            return made
    raise AssertionError("the last strategy applies to every loop")


class Preallocated:
    def applies(self, loop: Loop, saved: list[str], ctx) -> bool:
        stmt = loop.stmt
        return ctx.options.backend == "numba" and bool(saved) and isinstance(stmt, gast.For) \
            and not loop.exit_ and isinstance(stmt.iter, gast.Name) \
            and all(n in ctx.facts.scalars or n == stmt.target.id for n in saved) \
            and not _unbound(loop, saved)

    def plan(self, loop: Loop, saved: list[str], shape_only: set[str], ctx) -> Plan:
        stmt = loop.stmt
        np_ = ctx.bind("np", numpy)
        tape = ctx.namer.fresh("_tape")
        count, index = f"{tape}_n", f"{tape}_k"
        ctx.namer.taken.update((count, index))
        kinds = _kinds(loop, ctx)
        before = [A.assign(count, A.call(A.builtin("len"), A.name(stmt.iter.id)), like=stmt)]
        push, entries = [], []
        for name in saved:
            if name == stmt.target.id and stmt.iter.id in loop.ranges:  # start + k * step
                r = stmt.iter.id
                entries.append(A.assign(name, gast.BinOp(
                    left=A.attr(A.name(r), "start"), op=gast.Add(), right=gast.BinOp(
                        left=A.name(index), op=gast.Mult(), right=A.attr(A.name(r), "step"))),
                    like=stmt))
                continue
            column = ctx.namer.fresh(f"{tape}_{name.lstrip('_')}")
            dtype = A.dotted(f"{np_}.{kinds.get(name, 'float64')}")
            before.append(A.assign(column, A.call(A.dotted(f"{np_}.empty"), A.name(count),
                                                  dtype), like=stmt))
            push.append(gast.copy_location(gast.Assign(
                targets=[gast.Subscript(value=A.name(column), slice=A.name(index),
                                        ctx=gast.Store())],
                value=A.name(name), type_comment=None), stmt))
            entries.append(A.assign(name, gast.Subscript(value=A.name(column),
                                                         slice=A.name(index), ctx=gast.Load()),
                                    like=stmt))
        before.append(A.assign(index, A.const(0), like=stmt))
        counter = [A.assign(index, gast.BinOp(left=A.name(index), op=gast.Add(),
                                              right=A.const(1)), like=stmt)]
        minus_one = gast.UnaryOp(op=gast.USub(), operand=A.const(1))
        header = A.call(A.builtin("range"), gast.BinOp(left=A.name(count), op=gast.Sub(),
                                                       right=A.const(1)),
                        minus_one, A.copy_node(minus_one))
        return Plan(before=before, push=push, counter=counter, entries=entries,
                    target=A.name(index, store=True), header=header)


def _kinds(loop: Loop, ctx) -> dict[str, str]:
    """The NumPy type of the saved numbers that are certainly integers (the counter of a
    ``range``, integer arithmetic of those) or booleans (comparisons); the others are saved as
    float64, which holds a float, a boolean or a small integer exactly (Numba refuses a
    complex one)."""
    stmt = loop.stmt
    kinds: dict[str, str] = {}
    if stmt.iter.id in loop.ranges:
        kinds[stmt.target.id] = "int64"
    changed = True
    while changed:  # (an integer made from integers made earlier in the body)
        changed = False
        for s in loop.primal:
            name = A.target_name(s)
            if name is None or name in kinds or not isinstance(s, gast.Assign):
                continue
            kind = _kind(s.value, kinds)
            if kind is not None and not _assigned_twice(loop.primal, name):
                kinds[name], changed = kind, True
    return kinds


def _kind(value, kinds: dict) -> str | None:
    if isinstance(value, (gast.Compare, gast.BoolOp)) or (
            isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not)):
        return "bool_"
    if isinstance(value, gast.Constant) and type(value.value) is int:
        return "int64"
    if isinstance(value, gast.Name):
        return kinds.get(value.id) if kinds.get(value.id) == "int64" else None
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Sub, gast.Mult,
                                                               gast.FloorDiv, gast.Mod)):
        if _kind(value.left, kinds) == "int64" and _kind(value.right, kinds) == "int64":
            return "int64"
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
        return "int64" if _kind(value.operand, kinds) == "int64" else None
    return None


class Taped:
    def applies(self, loop: Loop, saved: list[str], ctx) -> bool:
        return bool(saved)

    def plan(self, loop: Loop, saved: list[str], shape_only: set[str], ctx) -> Plan:
        stmt = loop.stmt
        tape = ctx.namer.fresh("_tape")
        shape_of = A.dotted(f"{ctx.bind('rt', runtime)}.shape_of")
        values = [A.call(A.copy_node(shape_of), A.name(n)) if n in shape_only else A.name(n)
                  for n in saved]
        if len(saved) == 1:
            value, target = values[0], A.name(saved[0], store=True)
        else:
            value = gast.Tuple(elts=values, ctx=gast.Load())
            target = gast.Tuple(elts=[A.name(n, store=True) for n in saved], ctx=gast.Store())
        push = gast.Expr(value=A.call(A.attr(A.name(tape), "append"), value))
        return Plan(before=[A.assign(tape, gast.List(elts=[], ctx=gast.Load()),
                                             like=stmt)],
                    push=[gast.copy_location(push, stmt)], target=target,
                    header=A.call(A.builtin("reversed"), A.name(tape)))


class ReversedRange:
    def applies(self, loop: Loop, saved: list[str], ctx) -> bool:
        return isinstance(loop.stmt, gast.For) and not loop.exit_

    def plan(self, loop: Loop, saved: list[str], shape_only: set[str], ctx) -> Plan:
        stmt = loop.stmt
        return Plan(target=A.name(stmt.target.id, store=True),
                    header=A.call(A.builtin("reversed"), A.name(stmt.iter.id)))


class Counted:
    def applies(self, loop: Loop, saved: list[str], ctx) -> bool:
        return True

    def plan(self, loop: Loop, saved: list[str], shape_only: set[str], ctx) -> Plan:
        stmt = loop.stmt
        count = ctx.namer.fresh("_n")
        counter = [A.assign(count, gast.BinOp(left=A.name(count), op=gast.Add(),
                                              right=A.const(1)), like=stmt)]
        if isinstance(stmt, gast.For):  # left early: only the first _n values ran
            target = A.name(stmt.target.id, store=True)
            header = A.call(A.builtin("reversed"), gast.Subscript(
                value=A.name(stmt.iter.id), slice=gast.Slice(
                    lower=None, upper=A.name(count), step=None), ctx=gast.Load()))
        else:
            target = A.name(ctx.namer.fresh("_"), store=True)
            header = A.call(A.builtin("range"), A.name(count))
        return Plan(before=[A.assign(count, A.const(0), like=stmt)], counter=counter,
                    target=target, header=header)


STRATEGIES = (Preallocated(), Taped(), ReversedRange(), Counted())


def _unbound(loop: Loop, saved: list[str]) -> list:
    """``x = None`` before the loop for each saved value assigned on some paths of the body
    only, so the push never reads an unbound name (their adjoint reads them only on the same
    paths)."""
    stmt = loop.stmt
    unconditional = A.assigned_always(loop.primal)
    counter = stmt.target.id if isinstance(stmt, gast.For) else None
    return [A.assign(n, A.const(None), like=stmt) for n in saved
            if n not in unconditional and n != counter]


def _saved(loop: Loop, ctx, shapes) -> tuple[list[str], set[str], list]:
    """The names an iteration saves, those saved for their shape only, and the restores of
    carried values (``x_2 = x_1``) that stand in for saving the other half of a copy back."""
    stmt = loop.stmt
    # a value read only for a shape that every iteration shares is not saved: after the loop
    # the variable holds the last iteration's value, of that shape
    shape_only = _shape_only(loop.adjoint, ctx)
    read = _exposed_reads(loop.adjoint)
    targets = {n.target.id for n in A.walk(stmt) if isinstance(n, gast.For)}
    saved = [n for n in sorted((read & stored_names(loop.primal)) - targets)
             if n not in shape_only or not shapes.known(n)]
    # x_2 of ``x_1 = x_2`` (the copy-back) is x_1 of the next iteration: when x_1 is taped,
    # x_2 need not be; before the adjoint loop takes the iteration's entry, x_1 still holds
    # the value x_2 had
    restores = []
    for copy in loop.copies:
        carried, source = A.target_name(copy), getattr(copy.value, "id", None)
        if source in saved and carried in saved and source != carried:
            saved.remove(source)
            restores.append(A.assign(source, A.name(carried), like=stmt))
            shape_only.discard(carried)  # the restore reads its value, not its shape
    if saved and isinstance(stmt, gast.For) and stmt.target.id in {
            n for s in loop.adjoint for n in A.load_names(s)}:
        saved.insert(0, stmt.target.id)  # the adjoint reads the counter: taped with the rest
    return saved, shape_only, restores


def _recomputed(loop: Loop, saved: list[str], ctx) -> tuple[list[str], list]:
    """The saved values an adjoint iteration can compute again, as the primal iteration did,
    for less than a tape entry costs: numbers (elements ``x[i]`` of arrays the loop does not
    write, scalar arithmetic) computed unconditionally in the body
    from the counter, values no loop assigns (they hold the same value when the adjoint runs),
    and values computed again or still saved. Returns what remains to save and the statements
    that compute the others (in the primal's order), as Tapenade recomputes instead of storing
    where that is cheap."""
    stmt = loop.stmt
    if not isinstance(stmt, gast.For) or not isinstance(stmt.target, gast.Name) or not saved:
        return saved, []
    scalars = ctx.facts.scalars
    assigned = stored_names(loop.primal)
    counter = stmt.target.id
    wanted = set(saved) - {counter}
    carried = {A.target_name(c) for c in loop.copies}  # (their value changes at the end)
    recomputable: dict[str, object] = {}  # name -> its defining statement
    for s in loop.primal:  # (top level: run on every iteration up to an exit)
        name = A.target_name(s)
        if name is None or name not in scalars or name in carried \
                or _assigned_twice(loop.primal, name) or not _cheap(s.value):
            continue
        reads = set(A.load_names(s.value))
        if all(r == counter or r in recomputable or (r in wanted and r in scalars)
               or (r not in assigned and r not in loop.looped) for r in reads):
            recomputable[name] = s
    # keep only what a recomputed value needs, in order
    needed, order = set(), []
    for name in (n for n in saved if n in recomputable):
        stack = [name]
        while stack:
            n = stack.pop()
            if n in needed or n not in recomputable:
                continue
            needed.add(n)
            stack.extend(A.load_names(recomputable[n].value))
    for s in loop.primal:
        if A.target_name(s) in needed and recomputable.get(A.target_name(s)) is s:
            order.append(A.copy_node(s))
    if not order:
        return saved, []
    kept = [n for n in saved if n not in needed]
    if any(counter in A.load_names(s.value) for s in order) and counter not in kept:
        kept.insert(0, counter)  # (the adjoint loop's own target then, or a tape entry)
    if kept == [counter]:  # the counter alone: the adjoint loop walks the range back
        kept = []
    return kept, order


def _assigned_twice(stmts: list, name: str) -> bool:
    return sum(1 for s in stmts for n in A.walk(s) if isinstance(n, gast.Name)
               and n.id == name and isinstance(n.ctx, gast.Store)) > 1


def _cheap(value) -> bool:
    """A number computed by one operation of the interpreter: arithmetic of names and
    constants, an element of an array."""
    if isinstance(value, (gast.Name, gast.Constant)):
        return True
    if isinstance(value, gast.BinOp):
        return all(isinstance(o, (gast.Name, gast.Constant)) for o in (value.left, value.right))
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.operand, (gast.Name, gast.Constant))
    if isinstance(value, gast.Subscript):
        return isinstance(value.value, gast.Name) and all(
            isinstance(n, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Tuple))
            for n in A.walk(value.slice))
    return False  # (a call, np.sin(x) of a number among them, costs more than a tape entry)


def _exposed_reads(stmts: list) -> set[str]:
    """Names ``stmts`` read before assigning them: a ``for`` loop's target is bound before its
    body reads it (an inner adjoint loop takes its values back from its own tape)."""
    out: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, gast.For):
            bound = {n.id for n in A.walk(stmt.target) if isinstance(n, gast.Name)}
            body = list(stmt.body)
            while body and isinstance(body[0], gast.Assign) and A.target_name(body[0]):
                out |= set(A.load_names(body[0].value)) - bound  # (an entry read back first)
                bound.add(A.target_name(body.pop(0)))
            out |= set(A.load_names(stmt.iter)) | (_exposed_reads(body) - bound)
            out |= _exposed_reads(stmt.orelse)
        elif isinstance(stmt, (gast.If, gast.While)):
            out |= set(A.load_names(stmt.test))
            out |= _exposed_reads(stmt.body) | _exposed_reads(stmt.orelse)
        else:
            out |= set(A.load_names(stmt))
    return out


def _shape_only(stmts: list, ctx) -> set[str]:
    """Names that ``stmts`` load only as the shape argument of a runtime helper."""
    rt = ctx.bind("rt", runtime)
    loads: dict[str, int] = {}
    shape_loads: dict[str, int] = {}
    for node in (n for s in stmts for n in A.walk(s)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
        elif (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
              and isinstance(node.func.value, gast.Name) and node.func.value.id == rt
              and len(node.args) > runtime.SHAPE_ARGUMENTS.get(node.func.attr, 99)):
            arg = node.args[runtime.SHAPE_ARGUMENTS[node.func.attr]]
            for e in arg.elts if isinstance(arg, (gast.Tuple, gast.List)) else [arg]:
                if isinstance(e, gast.Name):
                    shape_loads[e.id] = shape_loads.get(e.id, 0) + 1
    return {n for n, k in shape_loads.items() if k == loads[n]}


# --- reading the form back (a generated gradient, differentiated again) ------------------------

def is_generated(fn) -> bool:
    """Whether ``fn`` is a function this compiler generated (a gradient being differentiated
    again: its writes all go into fresh copies, and its loops use the form above)."""
    return bool(getattr(fn, "generated_by_transpiler", False))


def push_of(stmt, tapes: set[str] | None = None) -> tuple[str, object] | None:
    """``(tape, entry)`` of a statement ``tape.append(entry)`` (on one of ``tapes``, if given)."""
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        func = stmt.value.func
        if isinstance(func, gast.Attribute) and func.attr == "append" \
                and isinstance(func.value, gast.Name) and len(stmt.value.args) == 1 \
                and not stmt.value.keywords and (tapes is None or func.value.id in tapes):
            return func.value.id, stmt.value.args[0]
    return None


def pushes(stmts: list, tapes: set[str] | None = None) -> list[tuple[str, object]]:
    """Every ``(tape, entry)`` pushed in ``stmts`` (nested blocks included)."""
    return [p for s in stmts for n in A.walk(s) if (p := push_of(n, tapes)) is not None]


def walked_tape(stmt, tapes: set[str]) -> str | None:
    """The tape an adjoint loop ``for ... in reversed(tape)`` walks, if ``stmt`` is one."""
    if isinstance(stmt, gast.For) and isinstance(stmt.iter, gast.Call) \
            and isinstance(stmt.iter.func, gast.Name) and stmt.iter.func.id == "reversed" \
            and len(stmt.iter.args) == 1 and isinstance(stmt.iter.args[0], gast.Name) \
            and stmt.iter.args[0].id in tapes:
        return stmt.iter.args[0].id
    return None


def popping(stmts: list, tapes: set[str]) -> list:
    """The adjoint loops over ``tapes`` in ``stmts``, ``for a, b in reversed(_tape):``, as
    ``for _tape_entry in range(len(_tape)):`` / ``a, b = _tape.pop()``."""
    for stmt in stmts:
        for block in ("body", "orelse"):
            if hasattr(stmt, block):
                popping(getattr(stmt, block), tapes)
        tape = walked_tape(stmt, tapes)
        if tape is not None:
            pop = gast.Assign(targets=[stmt.target], value=A.call(A.attr(A.name(tape), "pop")),
                              type_comment=None)
            stmt.body.insert(0, gast.copy_location(pop, stmt))
            stmt.target = A.name(f"{tape}_entry", store=True)
            stmt.iter = A.call(A.builtin("range"), A.call(A.builtin("len"), A.name(tape)))
    return stmts


def popped(value) -> str | None:
    """The tape of a value ``tape.pop()``."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and value.func.attr == "pop" and isinstance(value.func.value, gast.Name) \
            and not value.args and not value.keywords:
        return value.func.value.id
    return None
