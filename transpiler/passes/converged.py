"""Loops marked ``for _ in converged(items)`` or ``while converged(test)`` as fixed points,
differentiated by the implicit function theorem instead of through every iteration.

A fixed-point iteration ``x <- step(x, p)`` run until it stops changing has a result that
depends on ``p`` only through ``x* = step(x*, p)``: ``dx*/dp = (I - J)^-1 dstep/dp`` with ``J =
dstep/dx`` at ``x*``. The loop

    x = x0
    for _ in converged(range(500)):
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-14:
            break
        x = x_new

runs as written, with nothing taped, and its state is then passed through the runtime's
``fixed_point`` (runtime/implicit.py), with the body as a function of the state and of what it
reads, its ``break`` statements dropped (a step always runs to the end):

    def _fixed_step_2(x, a):
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-14:
            pass
        x = x_new
        return x
    def _fixed_loop_2(x, a):
        for _ in range(500):
            ...  # (the loop as written, its break a break)
        return x
    x = x0
    x = _fixed_loop_2(x, a)
    x = rt.fixed_point(rt.stop_gradient(x), _fixed_step_2, (a,), fixed_point_of, ('x',))

(A loop that writes into something bound before it in place, ``u[i] = ...``, stays where it
is, compiled like the rest of the function: the compiler's copies keep the caller's arrays
unchanged.)

The state is every variable the body reads and assigns that is bound before the loop (several:
a tuple); what else the body reads are the step's arguments, differentiated like ``args=`` of a
solver (transpiler/implicit.py ``FIXED_POINT`` takes the step's derivatives at run time); an
object read only field by field (``params.k``) is passed as those fields. The
derivative's memory does not grow with the iterations: one step is taped, at the fixed point.
Refused at the loop, with a hint: a body that reads the iteration (a step must not depend on
it), ``continue``, ``return`` or ``yield`` in it, an ``else:`` clause, and a variable the body
assigns, not part of the state, read after the loop (its last value would be held).
"""

from __future__ import annotations

import gast

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, setanno
from transpiler.errors import error_at
from transpiler.implicit import FIXED_POINT
from transpiler.passes.checkpoint import bound_before, evaluate, written_into


def converged(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    # (a function defined inside keeps its marks: it is lifted and compiled on its own)
    own = list(A.own_nodes(fn.body))
    marks = [n for n in own if is_marker(n, ctx)]
    if not marks:
        return fn
    loops = [n for n in own if isinstance(n, gast.For) and is_marker(n.iter, ctx)
             or isinstance(n, gast.While) and is_marker(n.test, ctx)]
    placed = {id(loop.iter if isinstance(loop, gast.For) else loop.test) for loop in loops}
    stray = [m for m in marks if id(m) not in placed]
    if stray:
        raise error_at(stray[0], ctx, "converged(...) marks a loop and is written as its "
                       "iterable or its test", "for _ in converged(range(500)):  or  "
                       "while converged(change > tol):")
    code = getattr(getattr(ctx, "fn", None), "__code__", None)
    around = set(code.co_freevars if code is not None else ())
    inner = {id(n) for loop in loops for n in A.walk(loop) if n is not loop}
    # (a marked loop inside a marked one is its step's: compiled with the step)
    fn.body = [d for loop in loops if id(loop) not in inner
               for d in _rewrite(fn, loop, around, ctx)] + fn.body
    for loop in loops:  # the loops as written run plainly
        if isinstance(loop, gast.For):
            loop.iter = _unmarked(loop.iter, ctx)
        else:
            loop.test = _unmarked(loop.test, ctx)
    return fn


def is_marker(node, ctx) -> bool:
    """Whether ``node`` is a call of ``converged`` (a loop's mark)."""
    return isinstance(node, gast.Call) and evaluate(node.func, ctx) is runtime.converged


def _unmarked(call: gast.Call, ctx):
    if len(call.args) != 1 or call.keywords:
        raise error_at(call, ctx, "converged takes one argument: the loop's iterable or test",
                       "for _ in converged(range(500)):")
    return call.args[0]


def _names(nodes, kind) -> list[str]:
    seen: list[str] = []
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, kind) and n.id not in seen:
            seen.append(n.id)
    return seen


def _ordered(stmts: list):
    """The nodes of ``stmts`` in source order (those of functions defined there too: what a
    lambda reads is read)."""
    for stmt in stmts:
        yield from _preorder(stmt)


def _preorder(node):
    yield node
    for child in gast.iter_child_nodes(node):
        yield from _preorder(child)


def _rewrite(fn, loop, around: set[str], ctx) -> list:
    """Check ``loop``, put the call of ``fixed_point`` after it and return the step's
    definition, and the loop's where it runs as a function (placed first in the function:
    they read only their parameters)."""
    _check(loop, ctx)
    body = list(_ordered(loop.body))
    target = _names(A.walk(loop.target), gast.Store) if isinstance(loop, gast.For) else []
    read = _names(body, gast.Load)
    if set(target) & set(read):
        raise error_at(loop, ctx, f"the body of a converged loop reads its iteration "
                       f"({sorted(set(target) & set(read))[0]}): a fixed-point step must not "
                       "depend on it", "drop the marker to differentiate through every "
                       "iteration, or iterate over range(...) without reading the count")
    stored = _names(body, (gast.Store,))
    stored += [n for n in sorted(written_into(loop.body, ctx, surely=True)) if n not in stored]
    before = bound_before(fn, loop) | around
    state = [n for n in stored if n in before and n in read]
    if not state:
        raise error_at(loop, ctx, "a converged loop's body changes no variable it reads: it "
                       "has no state to converge", "update the state, as in x = step(x)")
    local = before | set(_names(A.walk(fn), (gast.Store, gast.Param)))
    free = [n for n in read if n in local and n not in stored]
    _check_after(fn, loop, [n for n in stored if n not in state], target, ctx)
    line = loop.lineno
    step = ctx.namer.fresh(f"_fixed_step_{line}")
    # (a marked loop inside stays marked: the step is compiled as a function of its own)
    steps = [s for stmt in loop.body for s in _unbroken(A.copy_node(stmt))]
    fields = _fields(steps, free, ctx)  # (an object read field by field: its fields passed)
    passed = [A.name(n) for n in free if n not in fields] + [
        gast.Attribute(value=A.name(n), attr=attr, ctx=gast.Load())
        for n in free if n in fields for attr in fields[n]]
    free = [n for n in free if n not in fields] + [
        name for n in free if n in fields for name in fields[n].values()]
    params = gast.arguments(args=[gast.Name(n, gast.Param(), None, None) for n in state + free],
                            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                            kwarg=None, defaults=[])
    returned = A.name(state[0]) if len(state) == 1 else gast.Tuple(
        elts=[A.name(n) for n in state], ctx=gast.Load())
    definition = gast.copy_location(gast.FunctionDef(
        name=step, args=params, body=steps + [gast.copy_location(gast.Return(value=returned),
                                                                  loop)],
        decorator_list=[], returns=None, type_comment=None, type_params=[]), loop)
    rt = ctx.bind("rt", runtime)
    held = A.name(state[0]) if len(state) == 1 else gast.Tuple(
        elts=[A.name(n) for n in state], ctx=gast.Load())
    hold = A.call(A.dotted(f"{rt}.stop_gradient"), held)
    setanno(hold, Anno.FUNC, runtime.stop_gradient)
    call = A.call(A.dotted(f"{rt}.fixed_point"), hold, A.name(step),
                  gast.Tuple(elts=passed, ctx=gast.Load()),
                  A.name(ctx.bind("fixed_point_of", FIXED_POINT)),
                  gast.Tuple(elts=[A.const(n) for n in state], ctx=gast.Load()))
    setanno(call, Anno.FUNC, runtime.fixed_point)
    targets = A.name(state[0], store=True) if len(state) == 1 else gast.Tuple(
        elts=[A.name(n, store=True) for n in state], ctx=gast.Store())
    assign = gast.Assign(targets=[targets], value=call, type_comment=None)
    for node in A.walk(assign):
        if isinstance(node, (gast.stmt, gast.expr)):
            gast.copy_location(node, loop)
    _insert_after(fn, loop, assign)
    return [definition] + _hoisted(fn, loop, state, local, before, target, ctx)


def _hoisted(fn, loop, state: list[str], local: set[str], before: set[str], target: list[str],
             ctx) -> list:
    """The loop as a function of what it reads, returning its state, run as it is written
    (its ``break`` a break, not a flag: the primal runs as fast as the user's loop), where
    nothing bound before it is written into in place and its iteration is not read after it;
    -> its definition (none where the loop stays where it is)."""
    nodes = list(_ordered([loop]))
    read, stored = _names(nodes, gast.Load), set(_names(nodes, gast.Store))
    params = [n for n in read if n in before]
    if {n for n in read if n in local} - before - stored \
            or written_into(loop.body, ctx, surely=True) & local \
            or set(target) & set(_read_after(fn, loop)):
        return []
    name = ctx.namer.fresh(f"_fixed_loop_{loop.lineno}")
    outputs = A.name(state[0]) if len(state) == 1 else gast.Tuple(
        elts=[A.name(n) for n in state], ctx=gast.Load())
    definition = gast.copy_location(gast.FunctionDef(
        name=name, args=gast.arguments(
            args=[gast.Name(n, gast.Param(), None, None) for n in params], posonlyargs=[],
            vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[loop, gast.copy_location(gast.Return(value=outputs), loop)], decorator_list=[],
        returns=None, type_comment=None, type_params=[]), loop)
    targets = A.name(state[0], store=True) if len(state) == 1 else gast.Tuple(
        elts=[A.name(n, store=True) for n in state], ctx=gast.Store())
    run = gast.Assign(targets=[targets], value=A.call(A.name(name), *[
        A.name(n) for n in params]), type_comment=None)
    for node in A.walk(run):
        if isinstance(node, (gast.stmt, gast.expr)):
            gast.copy_location(node, loop)
    _replace(fn, loop, run)
    return [definition]


def _fields(steps: list, free: list[str], ctx) -> dict[str, dict[str, str]]:
    """The free variables the step reads only through their fields (``p.k``: never ``p``
    alone, never a method ``p.f(...)``) -> {field: the parameter that stands for it}, those
    reads in ``steps`` replaced by the parameters (an object of the user's is then passed as
    the numbers it holds, which the fixed point's derivative differentiates)."""
    called = {id(n.func) for s in steps for n in A.walk(s) if isinstance(n, gast.Call)}
    reads: dict[str, list] = {}
    whole = set()
    for stmt in steps:
        for node in A.walk(stmt):
            if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) \
                    and node.value.id in free and isinstance(node.ctx, gast.Load) \
                    and id(node) not in called:
                reads.setdefault(node.value.id, []).append(node)
    for stmt in steps:
        for node in A.walk(stmt):
            if isinstance(node, gast.Name) and node.id in reads \
                    and not any(a.value is node for a in reads[node.id]):
                whole.add(node.id)
    fields: dict[str, dict[str, str]] = {}
    for name, nodes in reads.items():
        if name in whole:
            continue
        fields[name] = {}
        for node in nodes:
            if node.attr not in fields[name]:
                fields[name][node.attr] = ctx.namer.fresh(f"{name}_{node.attr}")
    for stmt in steps:  # the reads, replaced
        for node in A.walk(stmt):
            for field, value in gast.iter_fields(node):
                if isinstance(value, gast.Attribute) and _is_field(value, fields):
                    setattr(node, field, gast.copy_location(A.name(
                        fields[value.value.id][value.attr]), value))
                elif isinstance(value, list):
                    setattr(node, field, [gast.copy_location(A.name(
                        fields[v.value.id][v.attr]), v) if isinstance(v, gast.Attribute)
                        and _is_field(v, fields) else v for v in value])
    return fields


def _is_field(node: gast.Attribute, fields: dict) -> bool:
    return isinstance(node.value, gast.Name) and node.value.id in fields \
        and isinstance(node.ctx, gast.Load)


def _check(loop, ctx) -> None:
    if loop.orelse:
        raise error_at(loop, ctx, "a converged loop with an else: clause is not supported",
                       "test after the loop whether it converged")
    for node in A.own_nodes(loop.body):
        if isinstance(node, (gast.Return, gast.Yield, gast.YieldFrom)):
            raise error_at(node, ctx, f"'{type(node).__name__.lower()}' inside a converged "
                           "loop is not supported", "leave the loop with break, then return")
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            raise error_at(node, ctx, f"'{type(node).__name__.lower()}' inside a converged "
                           "loop is not supported", "pass the value in and out as a variable")
    for node in _own_exits(loop.body):
        if isinstance(node, gast.Continue):
            raise error_at(node, ctx, "'continue' in a converged loop is not supported: a "
                           "step of the fixed point runs its whole body",
                           "write the rest of the body under an if")


def _own_exits(stmts: list):
    """The ``break``/``continue`` statements of this loop (not of loops inside it)."""
    for stmt in stmts:
        if isinstance(stmt, (gast.Break, gast.Continue)):
            yield stmt
        elif isinstance(stmt, (gast.For, gast.While, gast.FunctionDef)):
            continue
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _own_exits(getattr(stmt, field, None) or [])
            for handler in getattr(stmt, "handlers", ()) or ():
                yield from _own_exits(handler.body)


def _unbroken(stmt) -> list:
    """``stmt`` with this loop's ``break`` statements dropped (``pass`` where a block would
    be left empty)."""
    if isinstance(stmt, gast.Break):
        return []
    if isinstance(stmt, (gast.For, gast.While, gast.FunctionDef)):
        return [stmt]
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block:
            kept = [s for b in block for s in _unbroken(b)]
            if not kept and field != "orelse" and field != "finalbody":
                kept = [gast.copy_location(gast.Pass(), block[0])]
            setattr(stmt, field, kept)
    for handler in getattr(stmt, "handlers", ()) or ():
        handler.body = [s for b in handler.body for s in _unbroken(b)] or [
            gast.copy_location(gast.Pass(), handler)]
    return [stmt]


def _read_after(fn, loop) -> list:
    """The reads of variables outside ``loop`` that its last values may reach: after it, or
    anywhere in a loop around it."""
    inside = {id(n) for n in A.walk(loop)}
    reached, seen = [], False
    enclosing = [n for n in A.walk(fn) if isinstance(n, (gast.For, gast.While)) and n is not loop
                 and id(loop) in {id(m) for m in A.walk(n)}]
    around = {id(m) for n in enclosing for m in A.walk(n)}
    for node in _ordered(fn.body):
        if node is loop:
            seen = True
        if id(node) in inside:
            continue
        if (seen or id(node) in around) and isinstance(node, gast.Name) \
                and isinstance(node.ctx, gast.Load):
            reached.append(node)
    return reached


def _check_after(fn, loop, temporaries: list[str], target: list[str], ctx) -> None:
    """Refuse a variable the body assigns, outside its state, read where the loop's last value
    of it may reach."""
    iterable = loop.iter.args[0] if isinstance(loop, gast.For) and loop.iter.args else None
    counted = isinstance(iterable, gast.Call) and evaluate(iterable.func, ctx) is range
    for node in _read_after(fn, loop):
        if node.id in temporaries or (node.id in target and not counted):
            raise error_at(node, ctx, f"{node.id} is assigned in a converged loop but is not "
                           "part of its state (a variable the body reads and updates): its last "
                           "value would have no derivative", f"compute {node.id} from the "
                           "loop's state after the loop")


def _block_of(fn, loop) -> tuple[list, int]:
    """The block holding ``loop`` and its position there."""
    for node in A.walk(fn):
        blocks = [getattr(node, f, None) for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(node, "handlers", ()) or ()]
        for block in blocks:
            if isinstance(block, list):
                for i, s in enumerate(block):
                    if s is loop:
                        return block, i
    raise AssertionError("the loop is in no block of the function")


def _insert_after(fn, loop, stmt) -> None:
    """Put ``stmt`` right after ``loop`` in the block holding it."""
    block, at = _block_of(fn, loop)
    block.insert(at + 1, stmt)


def _replace(fn, loop, stmt) -> None:
    """Put ``stmt`` in place of ``loop``."""
    block, at = _block_of(fn, loop)
    block[at] = stmt
