"""The compiler, as one ordered list of passes; reading PIPELINE shows the whole of it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import gast

from transpiler import ast_util as A
from transpiler import emit, freshness
from transpiler.analysis import facts
from transpiler.arguments import defaults_holding_objects
from transpiler.backends import backend_for
from transpiler.calls import SplitFunction, TangentFunction, defaults_of, rebound
from transpiler.context import Context, Mode, Options
from transpiler.frontend import parse_function
from transpiler.naming import Namer
from transpiler.passes import (
    anf,
    check_kinds,
    check_writes,
    checkpoint,
    contexts,
    converged,
    desugar,
    finalize,
    fix_grads,
    forward,
    frozen,
    functions,
    higher_order,
    hoist,
    inline,
    inplace,
    lift,
    lower_exits,
    objects,
    optimize,
    release,
    resolve,
    reverse,
    solvers,
    ssa,
    stars,
    validate,
    views,
)

FRONT: tuple[tuple[str, Callable], ...] = (
    ("checkpointed loops as calls of a step function", checkpoint.checkpoint),
    ("loops marked converged as fixed points, differentiated implicitly", converged.converged),
    ("reject unsupported syntax", validate.validate),
    ("library calls that take a function as comprehensions and loops",
     higher_order.higher_order),
    ("scipy's solvers as their solutions, differentiated implicitly", solvers.solvers),
    ("inline small helpers", inline.inline),
    ("lift functions defined inside", lift.lift),
    ("resolve called objects", resolve.resolve),
    ("methods, constructors and attribute writes of known classes", objects.objects),
    ("spell out *args and **kwargs of known contents", stars.stars),
    ("call functions passed as values and partials directly", functions.functions),
    ("with statements as blocks", contexts.contexts),
    ("desugar augmented and multiple assignment", desugar.desugar),
    ("break, continue and early return as flags", lower_exits.lower_exits),
    ("writes through views as writes into their bases (if asked)", views.views),
    ("one operation per statement", anf.anf),
    ("one name per value", ssa.ssa),
    ("frozen scipy.stats distributions' methods as the distributions'", frozen.frozen),
    ("compute loop-invariant negations once", hoist.hoist),
    ("analyse the SSA form once: versions, scalars, receivers, shapes", facts.analyse),
    ("refuse writes seen through views", check_writes.check_writes),
    ("refuse complex values and matrices the array rules would misread",
     check_kinds.check_kinds),
)
PIPELINE: tuple[tuple[str, Callable], ...] = FRONT + (  # reverse mode: grad, split pairs
    ("build primal and adjoint", reverse.reverse),  # runs analysis.activity
    ("initialise and accumulate gradients", fix_grads.fix_grads),
    ("element writes and gradient updates in loops in place", inplace.inplace),
    ("optimize to a fixed point", optimize.optimize),
    ("release arrays once dead", release.release),
    ("with blocks back as with statements", contexts.rebuilt),
    ("assemble the signature (split: forward and backward)", finalize.finalize),
)
FORWARD_PIPELINE: tuple[tuple[str, Callable], ...] = FRONT + (  # forward mode: jvp
    ("interleave primal and tangent", forward.forward),
    ("element writes and tangent updates in loops in place", inplace.inplace),
    ("optimize to a fixed point", optimize.optimize),
    ("release arrays once dead", release.release),
    ("with blocks back as with statements", contexts.rebuilt),
    ("assemble the signature", finalize.finalize),
)


@dataclass(frozen=True)
class Compiled:
    function: Callable  # the gradient function, or the forward half of a split pair
    source: str
    backward: Callable | None = None  # the backward half of a split pair
    written: frozenset[str] = frozenset()  # parameters the function writes into (on a copy)
    snapshots: tuple = ()  # (global name, object) the code was compiled against
    callees: tuple = ()  # the compiled callees it calls (calls.SplitFunction, TangentFunction)
    defaults: tuple | None = None  # the user function's defaults it copied (calls.defaults_of)
    watched: tuple = ()  # (module, attribute, function) it calls by name (resolve.watched_calls)

    @property
    def backend(self) -> str:
        """Which code runs: ``"python"``, or ``"numba"`` (``backend="auto"``: ``"python"`` once
        Numba refused it; ``compiled_for`` compiles for its arguments to tell)."""
        return getattr(self.function, "backend", "python")

    # fn -> freshness.checker(fn, self) (built on the first check; None: names clash)
    checkers: dict = field(default_factory=dict, compare=False, repr=False)

    def stale(self, fn) -> bool:
        """Whether a global the code, or a callee's, was compiled against now names another
        object, or ``fn``'s defaults (or a callee's) changed: ``freshness.checker``'s one
        expression per thing it depends on, read as cheaply as the globals themselves."""
        check = self.checkers.get(fn, _UNBUILT)
        if check is _UNBUILT:
            check = self.checkers[fn] = freshness.checker(fn, self)
        if check is not None:
            return not check()
        return rebound(fn, self.snapshots, self.defaults, self.watched) \
            or any(c.stale() for c in self.callees)


_UNBUILT = object()


def compile_function(fn, wrt: tuple[str, ...], mode: Mode | str, options: Options,
                     scalars: frozenset[str] = frozenset(), debug: bool = False,
                     varargs: tuple[int, tuple[str, ...]] | None = None,
                     arrays: Mapping[str, tuple[int, str]] | None = None, called: bool = False,
                     objects: frozenset[str] = frozenset(), known: tuple = (),
                     complex_numbers: frozenset[str] = frozenset(),
                     complex_values: frozenset[str] = frozenset(),
                     sparse_values: frozenset[str] = frozenset()) -> Compiled:
    """Run every pass over ``fn`` and load the result; ``scalars`` names parameters known to
    be Python numbers (``complex_numbers``: those known to be complex; ``complex_values``, other
    parameters known to be complex; ``sparse_values``, those given scipy.sparse matrices),
    ``arrays`` those known
    to be NumPy arrays (each with its ndim and dtype) and ``objects`` those that may hold
    objects (the variant; a parameter whose default holds one counts too), with a pair
    ``(parameter, class)`` for each whose object's class is known (passes/objects.py);
    ``varargs`` is a helper's call pattern; ``called`` marks a function compiled for a call
    from another; ``known``, the functions a call passes it (passes/functions.py)."""
    mode = Mode(mode)
    defaults = defaults_of(fn)  # (before anything reads them)
    classes = dict(item for item in objects if isinstance(item, tuple))
    objects = frozenset(item for item in objects if not isinstance(item, tuple)) \
        | defaults_holding_objects(fn)
    debug = debug or bool(os.environ.get("TRANSPILER_DUMP"))
    asked = None
    while True:  # (twice when check_writes asks for writes through views spelled out)
        node, filename, indent = parse_function(fn)
        names = [n for n in A.walk(node) if isinstance(n, gast.Name)]
        user_names = {n.id for n in names} | {a.id for a in node.args.args}
        ctx = Context(fn=fn, filename=filename, indent=indent, wrt=wrt, mode=mode,
                      options=options, namer=Namer(user_names), scalars=scalars,
                      complex_numbers=complex_numbers, complex_values=complex_values,
                      sparse_values=sparse_values,
                      locals={n.id for n in names if isinstance(n.ctx, (gast.Store, gast.Param))},
                      varargs=varargs, arrays=MappingProxyType(dict(arrays or {})),
                      called=called, objects=objects, classes=classes, known=known,
                      compile_callee=compile_function, views=asked)
        try:
            for description, run in FORWARD_PIPELINE if mode.forward else PIPELINE:
                if run in (optimize.optimize, release.release) and not options.optimize:
                    continue
                node = run(node, ctx)
                if debug:
                    print(f"--- after: {description} ---\n{emit.to_source(node)}",
                          file=sys.stderr)
        except check_writes.ThroughViews as found:
            asked = found.views
            continue
        break
    watched = resolve.watched_calls(node, ctx.bindings)  # (before a backend rewrites calls)
    backend = backend_for(options)
    source = backend.source(node, ctx.bindings)
    label = f"<{mode} of {fn.__qualname__} at {filename}:{fn.__code__.co_firstlineno}>"
    defs = node.body if isinstance(node, gast.Module) else [node]
    functions = backend.load(source, [d.name for d in defs], label, fn, ctx.bindings)
    for function in functions:
        function.source = source
    callees = tuple(v for v in ctx.bindings.values()
                    if isinstance(v, (SplitFunction, TangentFunction)))
    return Compiled(functions[0], source, functions[1] if len(functions) > 1 else None,
                    frozenset(ctx.written_params), _snapshots(fn, ctx.snapshots, callees),
                    callees, defaults, watched)


def _snapshots(fn, own: dict, callees: tuple) -> tuple:
    """The globals of ``fn``'s module its code and its callees' (at any depth) were compiled
    against: the fast path of calls with floats checks them all."""
    found, todo, seen = dict(own), list(callees), set()
    while todo:
        callee = todo.pop()
        if id(callee) in seen or callee.fn is None:
            continue
        seen.add(id(callee))
        if callee.fn.__globals__ is fn.__globals__:
            for name, obj in callee.snapshots:
                found.setdefault(name, obj)
        todo.extend(callee.callees)
    return tuple(found.items())
