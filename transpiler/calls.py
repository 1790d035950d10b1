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

import builtins
import functools

from transpiler import cache
from transpiler.context import Mode

_BUILTINS = vars(builtins)


def rebound(fn, snapshots: tuple, defaults: tuple | None = None, watched: tuple = ()) -> bool:
    """Whether a global ``fn``'s code was compiled against (``(name, object)``) now names
    another object, ``fn``'s defaults are no longer ``defaults`` (``defaults_of``), or a
    function the code calls by a module's name (``watched``: ``(module, attribute,
    function)``) was replaced."""
    found = fn.__globals__
    return any(_value(found, name) is not obj for name, obj in snapshots) \
        or (defaults is not None and not same_defaults(fn, defaults)) \
        or any(getattr(owner, attr, None) is not obj for owner, attr, obj in watched)


def _value(scope: dict, name: str):
    """What a global name, or a dotted name (``np.sin``), means now in ``scope``."""
    if "." not in name:
        return scope.get(name, _BUILTINS.get(name))
    root, attrs = _path(name)
    value = scope.get(root, _BUILTINS.get(root))
    for attr in attrs:
        value = getattr(value, attr, None)
    return value


@functools.lru_cache(maxsize=4096)
def _path(name: str) -> tuple[str, tuple[str, ...]]:
    """``"np.linalg.norm"`` -> ``("np", ("linalg", "norm"))``, split once per name."""
    root, *attrs = name.split(".")
    return root, tuple(attrs)


def defaults_of(fn) -> tuple:
    """``fn``'s defaults as the generated code copies them: the positional tuple, then the
    keyword-only ``(name, value)`` pairs."""
    return (fn.__defaults__,) + tuple((fn.__kwdefaults__ or {}).items())


def same_defaults(fn, defaults: tuple) -> bool:
    """Whether ``fn``'s defaults are still the very objects ``defaults`` recorded."""
    now = fn.__kwdefaults__ or {}
    return fn.__defaults__ is defaults[0] and len(now) == len(defaults) - 1 and all(
        now.get(k, defaults) is v for k, v in defaults[1:])


class _Compiled:
    """What a compiled callee was compiled against, to tell when it is stale: its function's
    globals (``snapshots``) and the callees it calls in turn."""

    __slots__ = ()

    def stale(self, *, seen: set | None = None) -> bool:
        """Whether a global this callee, or one it calls, was compiled against is rebound."""
        seen = set() if seen is None else seen
        if id(self) in seen or self.fn is None:  # (recursion; still compiling)
            return False
        seen.add(id(self))
        return rebound(self.fn, self.snapshots, self.defaults, self.watched) \
            or any(c.stale(seen=seen) for c in self.callees)


class SplitFunction(_Compiled):
    """``forward(*args) -> (value, residuals)``; ``backward(residuals, cotangent) -> grads``."""

    __slots__ = ("forward", "backward", "source", "written", "fn", "snapshots", "callees",
                 "defaults", "watched", "__weakref__")

    def __init__(self):
        self.forward = self.backward = self.fn = None
        self.source = ""
        self.written = frozenset()  # parameters it writes into (on a copy)
        self.snapshots, self.callees, self.defaults, self.watched = (), (), None, ()

    def __repr__(self) -> str:
        return f"<split pair {getattr(self.forward, '__name__', '(compiling)')}>"


def split_pair(compile_function, fn, active: tuple[str, ...], options,
               varargs: tuple[int, tuple[str, ...]] | None = None,
               called: bool = True, objects: frozenset[str] = frozenset(),
               known: tuple = (), complex_values: frozenset[str] = frozenset(),
               sparse_values: frozenset[str] = frozenset()) -> SplitFunction:
    """The forward/backward pair of ``fn`` differentiated w.r.t. ``active`` (compiled once per
    call pattern ``varargs`` of a helper with ``*args``/``**kwargs``, per set ``objects`` of
    parameters that may be given objects, per functions ``known`` it is passed, and per set
    ``complex_values`` of parameters given complex numbers or arrays: ``vjp``'s, and
    ``sparse_values`` of those given scipy.sparse matrices). ``called``:
    for a call from a compiled function (not ``vjp``'s own), which may not write into its
    arguments."""
    def fill(compiled) -> None:
        pair.forward, pair.backward = compiled.function, compiled.backward
        pair.source, pair.written = compiled.source, compiled.written
        pair.fn, pair.snapshots, pair.callees = fn, compiled.snapshots, compiled.callees
        pair.defaults, pair.watched = compiled.defaults, compiled.watched

    pair = SplitFunction()
    key = (active, Mode.SPLIT, options, frozenset(), varargs, called, objects) + (
        (known,) if known else ()) + ((complex_values,) if complex_values else ()) + (
        (("sparse", sparse_values),) if sparse_values else ())
    return _compiled_once(fn, key, pair, lambda: compile_function(
        fn, active, Mode.SPLIT, options, varargs=varargs, called=called, objects=objects,
        known=known, complex_values=complex_values, sparse_values=sparse_values), fill)


class TangentFunction(_Compiled):
    """``call(*args, **tangents) -> (value, tangent)``: a user function in forward mode. Its
    tangent parameters are keyword-only, named by ``naming.tangent_parameters``."""

    __slots__ = ("call", "source", "fn", "snapshots", "callees", "defaults", "watched",
                 "__weakref__")

    def __init__(self):
        self.call = self.fn = None
        self.source = ""
        self.snapshots, self.callees, self.defaults, self.watched = (), (), None, ()

    def __repr__(self) -> str:
        return f"<forward mode {getattr(self.call, '__name__', '(compiling)')}>"


def tangent_function(compile_function, fn, active: tuple[str, ...], options,
                     varargs: tuple[int, tuple[str, ...]] | None = None,
                     objects: frozenset[str] = frozenset(), known: tuple = (),
                     sparse_values: frozenset[str] = frozenset(),
                     complex_values: frozenset[str] = frozenset()) -> TangentFunction:
    """The forward-mode function of ``fn`` for tangents of ``active`` (compiled once per call
    pattern, as split_pair)."""
    def fill(compiled) -> None:
        holder.call, holder.source = compiled.function, compiled.source
        holder.fn, holder.snapshots, holder.callees = fn, compiled.snapshots, compiled.callees
        holder.defaults, holder.watched = compiled.defaults, compiled.watched

    holder = TangentFunction()
    key = (active, Mode.TANGENT, options, frozenset(), varargs, objects) + (
        (known,) if known else ()) + ((("sparse", sparse_values),) if sparse_values else ()) + (
        (("complex", complex_values),) if complex_values else ())
    return _compiled_once(fn, key, holder, lambda: compile_function(
        fn, active, Mode.TANGENT, options, varargs=varargs, called=True, objects=objects,
        known=known, sparse_values=sparse_values, complex_values=complex_values), fill)


def _compiled_once(fn, key: tuple, holder, compile_, fill):
    """The cached holder for ``(fn, key)`` (unless stale); on a miss, store ``holder`` first (so
    a recursive call compiled below finds it), compile, and ``fill`` it (forget it if compiling
    fails)."""
    with cache.LOCK:
        existing = cache.lookup(fn, key)
        if existing is not None and not existing.stale():
            return existing
        cache.store(fn, key, holder)
        try:
            compiled = compile_()
        except BaseException:
            cache.forget(fn, key)
            raise
        fill(compiled)
    return holder
