"""Calls to the user's own functions: each callee is compiled once into a forward/backward pair
(reverse mode) or a forward-mode function.

``y = helper(a, b)`` in a differentiated function becomes ``y, _res1 = helper_vjp.forward(a, b)``
in the primal and ``_g = helper_vjp.backward(_res1, by)`` in the adjoint, whose entries are the
gradients of the callee's active parameters. The pair is cached per (callee, active parameters,
options) like any compile, so a helper called many times (in a loop, or from several functions)
is compiled once; a recursive function finds its own pair while it is being compiled.

The compiler itself comes in as ``compile_function`` (pipeline.compile_function, which the passes
that lower calls reach through ``Context.compile_callee``), so this module imports no pass.
"""

from __future__ import annotations

from transpiler import cache
from transpiler.context import Mode


class SplitFunction:
    """``forward(*args) -> (value, residuals)``; ``backward(residuals, cotangent) -> grads``."""

    __slots__ = ("forward", "backward", "source", "written", "__weakref__")

    def __init__(self):
        self.forward = self.backward = None
        self.source = ""
        self.written = frozenset()  # parameters it writes into (on a copy)

    def __repr__(self) -> str:
        return f"<split pair {getattr(self.forward, '__name__', '(compiling)')}>"


def split_pair(compile_function, fn, active: tuple[str, ...], options,
               varargs: tuple[int, tuple[str, ...]] | None = None,
               called: bool = True, objects: frozenset[str] = frozenset(),
               known: tuple = ()) -> SplitFunction:
    """The forward/backward pair of ``fn`` differentiated w.r.t. ``active`` (compiled once per
    call pattern ``varargs`` of a helper with ``*args``/``**kwargs``, per set ``objects`` of
    parameters that may be given objects, and per functions ``known`` it is passed). ``called``:
    for a call from a compiled function (not ``vjp``'s own), which may not write into its
    arguments."""
    def fill(compiled) -> None:
        pair.forward, pair.backward = compiled.function, compiled.backward
        pair.source, pair.written = compiled.source, compiled.written

    pair = SplitFunction()
    key = (active, Mode.SPLIT, options, frozenset(), varargs, called, objects) + (
        (known,) if known else ())
    return _compiled_once(fn, key, pair, lambda: compile_function(
        fn, active, Mode.SPLIT, options, varargs=varargs, called=called, objects=objects,
        known=known), fill)


class TangentFunction:
    """``call(*args, **tangents) -> (value, tangent)``: a user function in forward mode. Its
    tangent parameters are keyword-only, named by ``naming.tangent_parameters``."""

    __slots__ = ("call", "source", "__weakref__")

    def __init__(self):
        self.call = None
        self.source = ""

    def __repr__(self) -> str:
        return f"<forward mode {getattr(self.call, '__name__', '(compiling)')}>"


def tangent_function(compile_function, fn, active: tuple[str, ...], options,
                     varargs: tuple[int, tuple[str, ...]] | None = None,
                     objects: frozenset[str] = frozenset(), known: tuple = ()) -> TangentFunction:
    """The forward-mode function of ``fn`` for tangents of ``active`` (compiled once per call
    pattern, as split_pair)."""
    def fill(compiled) -> None:
        holder.call, holder.source = compiled.function, compiled.source

    holder = TangentFunction()
    key = (active, Mode.TANGENT, options, frozenset(), varargs, objects) + (
        (known,) if known else ())
    return _compiled_once(fn, key, holder, lambda: compile_function(
        fn, active, Mode.TANGENT, options, varargs=varargs, called=True, objects=objects,
        known=known), fill)


def _compiled_once(fn, key: tuple, holder, compile_, fill):
    """The cached holder for ``(fn, key)``; on a miss, store ``holder`` first (so a recursive
    call compiled below finds it), compile, and ``fill`` it (forget it if compiling fails)."""
    with cache.LOCK:
        existing = cache.lookup(fn, key)
        if existing is not None:
            return existing
        cache.store(fn, key, holder)
        try:
            compiled = compile_()
        except BaseException:
            cache.forget(fn, key)
            raise
        fill(compiled)
    return holder
