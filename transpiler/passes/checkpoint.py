"""Loops marked ``for step in checkpoint(items, snapshots=s)`` (or ``every=k``) as calls of a
step function, reversed by the runtime's checkpointing scheduler.

In reverse mode the loop

    for step in checkpoint(range(n), snapshots=16):
        u = u + dt * (D * laplacian(u) + u * (1.0 - u))

becomes a function of one step and of the loop's state (every variable of ``f`` the body
reads or writes), and one call that runs it over the items:

    def _checkpoint_step_12(_item, u, D):
        step = _item
        u = u + dt * (D * laplacian(u) + u * (1.0 - u))
        return False, u, D
    u, D = checkpointed_loop(_checkpoint_step_12, range(n), u, D, snapshots=16, written=())

(``break`` in the body returns ``True``; ``continue`` returns ``False`` early). The step is
lifted like any function defined inside (passes/lift.py) and differentiated as a callee; the
reverse pass calls the scheduler on it (runtime/checkpoint.py), which keeps at most ``s``
states, recomputes the others from them, and tapes one step at a time. ``written`` lists the
state's positions the body writes into (``u[i] = ...``, ``u += ...``): the scheduler hands the
plain step copies of those, so no kept state is changed. In forward mode (which needs no tape),
and with ``Options.checkpoint`` off, the marker is dropped: ``for step in range(n):``.
"""

from __future__ import annotations

import types

import gast

from runtime import checkpoint as scheduler
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, setanno
from transpiler.context import Mode
from transpiler.errors import error_at
from transpiler.passes.desugar import index_loop, over_range

_PURE_MODULES = ("numpy", "math", "scipy", "cmath", "builtins")


def checkpoint(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    loops = [n for n in A.walk(fn) if isinstance(n, gast.For) and _marker(n.iter, ctx)]
    if not loops:
        return fn
    lift = ctx.mode not in (Mode.JVP, Mode.TANGENT) and ctx.options.checkpoint
    for loop in loops:
        if any(inner is not loop and isinstance(inner, gast.For) and _marker(inner.iter, ctx)
               for inner in A.walk(loop)):
            raise error_at(loop, ctx, "a checkpointed loop inside a checkpointed loop is not "
                           "supported", "mark only the outer loop")
    local = _locals(fn, ctx)
    for loop in loops:
        options = _options(loop.iter, ctx)
        if lift and ctx.options.backend == "numba":
            raise error_at(loop, ctx, "Numba cannot compile a checkpointed loop's gradient (its "
                           "scheduler runs in Python)", 'use backend="auto" (the gradient then '
                           'runs as Python) or grad(..., checkpoint=False)')
        if not lift:
            loop.iter = loop.iter.args[0]
            continue
        before = []
        items = loop.iter.args[0]
        if not over_range(items) and _names(A.walk(items)) & local:
            # over the function's data (x, enumerate(x), zip(a, b)): by index, so the data is
            # the loop's state and its gradient flows
            plain = gast.copy_location(gast.For(target=loop.target, iter=items, body=loop.body,
                                                orelse=loop.orelse, type_comment=None), loop)
            before, indexed = index_loop(plain, ctx)
            loop.target, loop.body = indexed.target, indexed.body
            loop.iter.args[0] = indexed.iter
        _replace(fn, loop, before + _lifted(fn, loop, options, ctx, before))
    return fn


def _locals(fn, ctx) -> set[str]:
    """The function's parameters and assigned names (and the variables it closes over)."""
    return {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Param))} | set(ctx.fn.__code__.co_freevars)


def carried(call: gast.Call, state: list[str], varied: set[int], useful: set[int]) -> list[int]:
    """The state entries of a checkpointed loop (``call``, the call this pass made; ``state``,
    the variables of its step function) whose gradient the reverse sweep carries from step to
    step: those whose value may depend on a ``varied`` entry's starting value and may reach a
    ``useful`` entry's final value, across any number of steps. A variable that starts as a
    constant (``s = 1.0``) or is not read after the loop may still carry gradient between
    steps."""
    loop = getanno(call, Anno.ORIGIN)
    edges = _dependences(loop.body) if isinstance(loop, gast.For) else None
    if edges is None:
        return list(range(len(state)))

    ahead = _closure({state[i] for i in varied}, edges, forward=True)
    behind = _closure({state[i] for i in useful}, edges, forward=False)
    return [i for i, n in enumerate(state)
            if i in varied or i in useful or (n in ahead and n in behind)]


def _closure(start: set[str], edges: list, forward: bool) -> set[str]:
    """``start`` and every name the edges ``(bound, read)`` reach from it, to a fixed point:
    forward from what a statement reads to what it binds, backward the other way."""
    found, changed = set(start), True
    while changed:
        changed = False
        for bound, read in edges:
            new, old = (bound, read) if forward else (read, bound)
            if old & found and not new <= found:
                found |= new
                changed = True
    return found


def _dependences(body: list) -> list:
    """``(targets, reads)`` for each statement of a loop body that binds or changes names
    (over-approximated: an index counts as read, a method call changes its receiver)."""
    edges = []
    for node in A.own_nodes(body):
        if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            written = _names(n for t in targets for n in A.walk(t))
            reads = _names(A.walk(node.value)) if node.value is not None else set()
            edges.append((written, reads | (written if not isinstance(node, gast.Assign)
                                            else set())))
        elif isinstance(node, gast.For):
            edges.append((_names(A.walk(node.target)), _names(A.walk(node.iter))))
        elif isinstance(node, gast.withitem) and node.optional_vars is not None:
            edges.append((_names(A.walk(node.optional_vars)), _names(A.walk(node.context_expr))))
        elif isinstance(node, gast.NamedExpr):
            edges.append((_names([node.target]), _names(A.walk(node.value))))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
            receiver = _names(A.walk(node.func.value))  # xs.append(v): xs reads v
            edges.append((receiver, receiver | _names(n for a in node.args for n in A.walk(a))
                          | _names(n for k in node.keywords for n in A.walk(k.value))))
    return edges


def is_checkpointed_loop(value) -> bool:
    """Whether ``value`` (an assigned value) is the call this pass made of a marked loop."""
    return isinstance(value, gast.Call) \
        and getanno(value, Anno.FUNC) is scheduler.checkpointed_loop


def evaluate(node, ctx):
    """The object a name or dotted name of the user's function refers to (None: not known)."""
    if isinstance(node, gast.Name):
        try:
            return ctx.lookup(node.id)
        except (AttributeError, KeyError, ValueError):
            return None
    if isinstance(node, gast.Attribute):
        base = evaluate(node.value, ctx)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _marker(node, ctx) -> bool:
    return isinstance(node, gast.Call) and evaluate(node.func, ctx) is scheduler.checkpoint


def _options(call: gast.Call, ctx) -> dict:
    """The marker's arguments: its iterable and ``snapshots=`` or ``every=`` (each a positive
    integer constant or a variable; both may be given when one of them is None at run time,
    which the runtime checks)."""
    given = {k.arg: k.value for k in call.keywords}
    constants = {k: v.value for k, v in given.items() if isinstance(v, gast.Constant)}
    nones = [k for k, v in constants.items() if v is None]
    if len(call.args) != 1 or not given or set(given) - {"snapshots", "every"} \
            or len(nones) == len(given) or len(constants) == 2 and not nones:
        raise error_at(call, ctx, "checkpoint takes the loop's iterable and one of snapshots= "
                       "or every=", "for step in checkpoint(range(n), snapshots=16):")
    for name, value in constants.items():
        if value is not None and not (type(value) is int and value >= 1):
            raise error_at(call, ctx, f"checkpoint: {name} must be a positive int, got "
                           f"{value!r}", f"{name}=16")
    return given


def _lifted(fn, loop: gast.For, options: dict, ctx, before: list) -> list:
    """The step function's definition and the call running it, for ``loop``.

    A ``return`` in the body sets a flag and a value (two more entries of the state) and ends
    the loop; after the call, ``if flag: return value``. An ``else:`` clause runs after the
    call unless a ``break`` set a flag of its own."""
    for node in A.own_nodes(loop.body):
        if isinstance(node, (gast.Yield, gast.YieldFrom)):
            raise error_at(node, ctx, "'yield' inside a checkpointed loop is not supported",
                           "collect the values in a list")
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            raise error_at(node, ctx, f"'{type(node).__name__.lower()}' inside a checkpointed "
                           "loop is not supported", "pass the value in and out as a variable")
    line = loop.lineno
    exits = {}  # "returned", "value", "broke": the names of the flags the body sets
    if any(isinstance(n, gast.Return) for n in A.own_nodes(loop.body)):
        exits["returned"] = ctx.namer.fresh(f"_returned_{line}")
        exits["value"] = ctx.namer.fresh(f"_value_{line}")
    if loop.orelse:
        exits["broke"] = ctx.namer.fresh(f"_broke_{line}")
    state = _state(fn, loop, ctx, before) + list(exits.values())
    step = f"_checkpoint_step_{line}"  # (lift.py binds it under this name when it is free)
    if step in ctx.namer.taken:
        step = ctx.namer.fresh(step)
    item = ctx.namer.fresh("_item")

    def leave(done: bool, like) -> gast.Return:
        return gast.copy_location(gast.Return(value=gast.Tuple(
            elts=[A.const(done)] + [A.name(n) for n in state], ctx=gast.Load())), like)

    body = [gast.copy_location(gast.Assign(targets=[A.copy_node(loop.target)],
                                           value=A.name(item), type_comment=None), loop)]
    body += [e for s in loop.body for e in _exits(A.copy_node(s), leave, exits, True)]
    body.append(leave(False, loop.body[-1]))
    args = gast.arguments(args=[gast.Name(n, gast.Param(), None, None) for n in (item, *state)],
                          posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])
    definition = gast.copy_location(gast.FunctionDef(
        name=step, args=args, body=body, decorator_list=[], returns=None, type_comment=None,
        type_params=[]), loop)
    written = tuple(i for i, n in enumerate(state) if n in written_into(loop.body, ctx))
    keywords = [gast.keyword(arg=k, value=v) for k, v in options.items()]
    keywords.append(gast.keyword(arg="written", value=gast.Tuple(
        elts=[A.const(i) for i in written], ctx=gast.Load())))
    call = gast.Call(func=A.name(ctx.bind("checkpointed_loop", scheduler.checkpointed_loop)),
                     args=[A.name(step), loop.iter.args[0]] + [A.name(n) for n in state],
                     keywords=keywords)
    setanno(call, Anno.FUNC, scheduler.checkpointed_loop)
    setanno(call, Anno.ORIGIN, loop)
    target = gast.Tuple(elts=[A.name(n, store=True) for n in state], ctx=gast.Store())
    run = gast.copy_location(gast.Assign(targets=[target], value=call, type_comment=None), loop)
    setanno(run, Anno.ORIGIN, loop)
    bound = bound_before(fn, loop) | {t.id for s in before for t in s.targets}
    flags = {exits.get("returned"), exits.get("broke")}
    initial = [gast.copy_location(A.assign(n, A.const(False if n in flags else None)), loop)
               for n in state if n not in bound]  # (flags start down; the rest unbound)
    after = []
    if "returned" in exits:
        after.append(gast.If(test=A.name(exits["returned"]), body=[
            gast.Return(value=A.name(exits["value"]))], orelse=[]))
    if "broke" in exits:
        after.append(gast.If(test=gast.UnaryOp(op=gast.Not(), operand=A.name(exits["broke"])),
                             body=loop.orelse, orelse=[]))
    for node in (n for a in after for n in A.walk(a)):
        if isinstance(node, (gast.stmt, gast.expr)) and not hasattr(node, "lineno"):
            gast.copy_location(node, loop)
    return [definition, *initial, run, *after]


def _exits(stmt, leave, exits: dict, top: bool) -> list:
    """The statements ``stmt`` becomes in the step function: ``break`` -> ``return True,
    *state``; ``continue`` -> ``return False, *state`` (those of the marked loop, not of loops
    inside it: ``top``); ``return v`` -> the flag and the value set, then ``return True,
    *state`` (at any depth)."""
    if isinstance(stmt, gast.Break) and top:
        flag = [A.assign(exits["broke"], A.const(True))] if "broke" in exits else []
        return [gast.copy_location(s, stmt) for s in flag] + [leave(True, stmt)]
    if isinstance(stmt, gast.Continue) and top:
        return [leave(False, stmt)]
    if isinstance(stmt, gast.Return):
        value = stmt.value if stmt.value is not None else A.const(None)
        sets = [A.assign(exits["returned"], A.const(True)), A.assign(exits["value"], value)]
        return [gast.copy_location(s, stmt) for s in sets] + [leave(True, stmt)]
    if isinstance(stmt, gast.FunctionDef):
        return [stmt]
    inner = top and not isinstance(stmt, (gast.For, gast.While))
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list):
            setattr(stmt, field, [e for s in block for e in _exits(s, leave, exits, inner)])
    for handler in getattr(stmt, "handlers", ()) or ():
        handler.body = [e for s in handler.body for e in _exits(s, leave, exits, inner)]
    return [stmt]


def _names(nodes) -> set[str]:
    return {n.id for n in nodes if isinstance(n, gast.Name)}


def _state(fn, loop: gast.For, ctx, before: list) -> list[str]:
    """The loop's state: the variables of ``fn`` the body (or the loop variable) uses that
    ``fn`` also uses outside the loop (or ``before`` it, the sequences it walks), in order of
    first appearance."""
    inside = {id(n) for n in A.walk(loop)}
    outside = _names(n for n in A.walk(fn) if id(n) not in inside) \
        | _names(n for s in before for n in A.walk(s)) \
        | {a.id for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs} \
        | set(ctx.fn.__code__.co_freevars)
    if fn.args.vararg:
        outside.add(fn.args.vararg.id)
    if fn.args.kwarg:
        outside.add(fn.args.kwarg.id)
    local = _locals(fn, ctx) | _names(n for s in before for n in A.walk(s))
    seen: list[str] = []
    for n in _ordered([loop.target, *loop.body]):
        if isinstance(n, gast.Name) and n.id in outside and n.id in local and n.id not in seen:
            seen.append(n.id)
    return seen


def _ordered(stmts: list):
    """The nodes of ``stmts`` in source order (not inside functions defined there)."""
    for stmt in stmts:
        yield from _preorder(stmt)


def _preorder(node):
    yield node
    if isinstance(node, (gast.FunctionDef, gast.Lambda)):
        return
    for child in gast.iter_child_nodes(node):
        yield from _preorder(child)


def bound_before(fn, loop) -> set[str]:
    """The variables bound before ``loop`` in source order (parameters, and names stored by
    statements that come earlier), which the call can pass in."""
    bound = {a.id for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    bound |= {a.id for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    for node in _ordered(fn.body):
        if node is loop:
            break
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            bound.add(node.id)
    return bound


def written_into(body: list, ctx, surely: bool = False) -> set[str]:
    """Variables the body may write into (not just rebind): ``a[i] = v``, ``a.x = v``,
    ``a += v``, ``a.fill(0)``, ``f(..., out=a)``, or passing ``a`` to a function of the
    user's (which may write into its argument). ``surely``: only those it certainly writes
    into (a method call counts where it is one of NumPy's or a list's in-place ones)."""
    written = set()
    for node in A.own_nodes(body):
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.ctx, gast.Store):
            written |= _names(A.walk(node.value))
        elif isinstance(node, gast.AugAssign):
            written |= _names(A.walk(node.target))
        elif isinstance(node, gast.Call):
            if isinstance(node.func, gast.Attribute) and (
                    not surely or node.func.attr in _IN_PLACE_METHODS):
                written |= _names(A.walk(node.func.value))  # (a method may write its receiver)
            for k in node.keywords:
                if k.arg == "out":
                    written |= _names(A.walk(k.value))
            if not surely and not _pure(node.func, ctx):
                written |= _names(a for arg in node.args for a in A.walk(arg))
    return _aliases_of(written, body)


_IN_PLACE_METHODS = frozenset({"fill", "sort", "partition", "put", "itemset", "resize",
                               "append", "extend", "insert", "pop", "clear", "remove",
                               "reverse", "update", "setdefault", "popitem"})


def _aliases_of(written: set[str], body: list) -> set[str]:
    """``written`` with every variable whose value the body may bind to a written one as it
    is (``a, b = b, a`` then ``a[0] = v`` writes into what ``b`` held): the scheduler hands the
    step copies of those too."""
    edges = [(_names(n for t in node.targets for n in A.walk(t)), _shared(node.value))
             for node in A.own_nodes(body) if isinstance(node, gast.Assign)]
    return _closure(written, edges, forward=False)


def _shared(value) -> set[str]:
    """The variables whose memory ``value`` may share: all it reads, except through
    arithmetic, which makes new values."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.BoolOp, gast.Constant)):
        return set()
    if isinstance(value, gast.Name):
        return {value.id}
    return set().union(*(_shared(c) for c in gast.iter_child_nodes(value)
                         if isinstance(c, gast.expr)), set())


def _pure(func, ctx) -> bool:
    """Whether a call of ``func`` writes into no argument (NumPy's, math's, builtins')."""
    obj = evaluate(func, ctx)
    if obj is None:
        return False
    if isinstance(obj, types.ModuleType):
        return obj.__name__.partition(".")[0] in _PURE_MODULES
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return module.partition(".")[0] in _PURE_MODULES


def _replace(fn, loop, stmts: list) -> None:
    for node in A.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is loop for s in block):
                i = next(i for i, s in enumerate(block) if s is loop)
                block[i:i + 1] = stmts
                return
        for handler in getattr(node, "handlers", ()) or ():
            if any(s is loop for s in handler.body):
                i = next(i for i, s in enumerate(handler.body) if s is loop)
                handler.body[i:i + 1] = stmts
                return
