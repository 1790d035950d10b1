"""The compiler, as one ordered list of passes; reading PIPELINE shows the whole of it."""

from __future__ import annotations

import builtins
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import gast

from transpiler import ast_util as A
from transpiler import emit
from transpiler.analysis import facts
from transpiler.arguments import defaults_holding_objects
from transpiler.backends import backend_for
from transpiler.context import Context, Mode, Options
from transpiler.frontend import parse_function
from transpiler.naming import Namer, names_in
from transpiler.passes import (
    anf,
    check_writes,
    desugar,
    finalize,
    fix_grads,
    forward,
    hoist,
    inline,
    lift,
    lower_exits,
    optimize,
    release,
    resolve,
    reverse,
    ssa,
    stars,
    validate,
)

_BUILTINS = vars(builtins)

FRONT: tuple[tuple[str, Callable], ...] = (
    ("reject unsupported syntax", validate.validate),
    ("inline small helpers", inline.inline),
    ("lift functions defined inside", lift.lift),
    ("resolve called objects", resolve.resolve),
    ("spell out *args and **kwargs of known contents", stars.stars),
    ("desugar augmented and multiple assignment", desugar.desugar),
    ("break, continue and early return as flags", lower_exits.lower_exits),
    ("one operation per statement", anf.anf),
    ("one name per value", ssa.ssa),
    ("compute loop-invariant negations once", hoist.hoist),
    ("analyse the SSA form once: versions, scalars, receivers, shapes", facts.analyse),
    ("refuse writes seen through views", check_writes.check_writes),
)
PIPELINE: tuple[tuple[str, Callable], ...] = FRONT + (  # reverse mode: grad, split pairs
    ("build primal and adjoint", reverse.reverse),  # runs analysis.activity
    ("initialise and accumulate gradients", fix_grads.fix_grads),
    ("optimize to a fixed point", optimize.optimize),
    ("release arrays once dead", release.release),
    ("assemble the signature (split: forward and backward)", finalize.finalize),
)
FORWARD_PIPELINE: tuple[tuple[str, Callable], ...] = FRONT + (  # forward mode: jvp
    ("interleave primal and tangent", forward.forward),
    ("optimize to a fixed point", optimize.optimize),
    ("release arrays once dead", release.release),
    ("assemble the signature", finalize.finalize),
)


@dataclass(frozen=True)
class Compiled:
    function: Callable  # the gradient function, or the forward half of a split pair
    source: str
    backward: Callable | None = None  # the backward half of a split pair
    written: frozenset[str] = frozenset()  # parameters the function writes into (on a copy)
    snapshots: tuple = ()  # (global name, object) the code was compiled against

    def stale(self, fn) -> bool:
        """Whether a global the code was compiled against now names another object."""
        found = fn.__globals__
        for name, obj in self.snapshots:  # (calls with floats check in the backend's fast_path)
            if found.get(name, _BUILTINS.get(name)) is not obj:
                return True
        return False


def compile_function(fn, wrt: tuple[str, ...], mode: Mode | str, options: Options,
                     scalars: frozenset[str] = frozenset(), debug: bool = False,
                     varargs: tuple[int, tuple[str, ...]] | None = None,
                     arrays: frozenset[str] = frozenset(), called: bool = False,
                     objects: frozenset[str] = frozenset(),
                     vectors: frozenset[str] = frozenset()) -> Compiled:
    """Run every pass over ``fn`` and load the result; ``scalars`` names parameters known to
    be Python numbers, ``arrays`` those known to be NumPy arrays (``vectors``: 1-D ones) and
    ``objects`` those that may hold objects (the variant; a parameter whose default holds one
    counts too); ``varargs`` is
    a helper's call pattern; ``called`` marks a function compiled for a call from another."""
    mode = Mode(mode)
    node, filename, indent = parse_function(fn)
    user_names = names_in(node) | {a.id for a in node.args.args}
    objects = objects | defaults_holding_objects(fn)
    ctx = Context(fn=fn, filename=filename, indent=indent, wrt=wrt, mode=mode, options=options,
                  namer=Namer(user_names), locals=_locals(node), scalars=scalars,
                  varargs=varargs, arrays=arrays, vectors=vectors, called=called,
                  objects=objects, compile_callee=compile_function)
    debug = debug or bool(os.environ.get("TRANSPILER_DUMP"))
    for description, run in FORWARD_PIPELINE if mode.forward else PIPELINE:
        if run in (optimize.optimize, release.release) and not options.optimize:
            continue
        node = run(node, ctx)
        if debug:
            print(f"--- after: {description} ---\n{emit.to_source(node)}", file=sys.stderr)
    backend = backend_for(options)
    source = backend.source(node)
    label = f"<{mode} of {fn.__qualname__} at {filename}:{fn.__code__.co_firstlineno}>"
    defs = node.body if isinstance(node, gast.Module) else [node]
    functions = backend.load(source, [d.name for d in defs], label, fn, ctx.bindings)
    for function in functions:
        function.source = source
    return Compiled(functions[0], source, functions[1] if len(functions) > 1 else None,
                    frozenset(ctx.written_params), tuple(ctx.snapshots.items()))


def _locals(node) -> set[str]:
    return {n.id for n in A.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Param))}
