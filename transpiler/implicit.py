"""The derivatives of the user's function that a solver's implicit derivative needs, taken at
run time by the compiler's own modes (generated code calls these; passes/solvers.py binds
them, runtime/implicit.py does the algebra of the implicit function theorem with them):

- a root of ``F(x, *args) = 0``: its slope ``dF/dx`` (``implicit_slope``), or for a system its
  Jacobian (``implicit_jacobian``), each one forward sweep per unknown;
- a minimum of ``f(x, *args)``, where ``g(x, p) = grad_x f = 0`` (``STATIONARY``): ``grad_x f``
  (reverse mode), Hessian-vector products ``H v`` (forward over reverse) and the mixed second
  derivatives with the arguments, ``d/dp (grad_x f . w)`` (the gradient in ``p``, run forward
  along ``x``) and its transpose ``d/dt grad_x f(x, p + t dp)`` (the gradient in ``x``, run
  forward along ``p``): each a generated function, compiled once per function and argument
  kinds and cached with it;
- an integrand or an ODE's right-hand side at one point (``UNDER_INTEGRAL``): its
  vector-Jacobian and Jacobian-vector products in its arguments;
- a loop body at its fixed point (``FIXED_POINT``: a loop marked ``converged``,
  ``fixed_point``): its value there, its products with ``dstep/dx`` and ``dstep/dp`` both ways,
  and its second derivatives against a cotangent (forward over reverse of the weighted body).
"""

from __future__ import annotations

import functools
import inspect
import linecache

import numpy as np

from runtime.arrays import asarray
from runtime.objects import is_object
from transpiler import cache
from transpiler.context import Options
from transpiler.errors import TranspileError

# (the compiler's modes are imported where they are used: the passes import this module)


def implicit_slope(f, x, args: tuple):
    """``dF/dx`` of the user's function at the root ``x`` (forward mode, the other arguments
    held; elementwise for an array ``x``, as a vectorized ``newton`` solves): the slope the
    root's derivative divides by (runtime/implicit.py)."""
    from transpiler.jvp import partial_derivative

    if np.ndim(x):
        x = np.asarray(x, dtype=float)
        return partial_derivative(f, 0, (x, *args), np.ones(np.shape(x)))
    return partial_derivative(f, 0, (float(x), *args), 1.0)


def implicit_jacobian(f, x, args: tuple):
    """``dF/dx`` of a system ``F(x, *args) = 0`` at its root ``x``, an ``(n, n)`` matrix for
    ``n = x.size``: one forward-mode column per unknown (runtime/implicit.py solves with it)."""
    from transpiler.jvp import partial_derivative

    x = np.asarray(x, dtype=float)
    columns = []
    for i in range(x.size):
        unit = np.zeros(x.size)
        unit[i] = 1.0
        column = partial_derivative(f, 0, (x, *args), unit.reshape(np.shape(x)))
        columns.append(np.ravel(column))
    return np.stack(columns, axis=1) if columns else np.zeros((0, 0))


def _unwrapped(f, args: tuple):
    """``f(x, *args)`` as ``function(*leading, x, *args, **keywords)`` of a Python function: a
    bound method's object and a partial's arguments lead (they are constants here: a function
    closing over differentiated values reaches this as a function of them, passes/
    solvers.py)."""
    from transpiler.gradient import check_function

    leading, keywords = (), {}
    if inspect.ismethod(f):
        f, leading = f.__func__, (f.__self__,)
    while isinstance(f, functools.partial):
        leading, keywords = tuple(f.args) + leading, {**f.keywords, **keywords}
        f = f.func
    check_function(f)
    return f, leading, keywords


def _differentiated(value) -> bool:
    """Whether an argument of the objective has a derivative: a real number or float array;
    an integer, a string, a slice, None or a function is data, and so is a list or tuple of
    data. An object, or a container holding numbers, is refused: its numbers would be held
    silently."""
    if isinstance(value, (float, np.floating)):
        return True
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return True
    if isinstance(value, (bool, int, str, bytes, slice, range, type(None), type(Ellipsis),
                          np.integer, np.bool_, np.dtype)) \
            or callable(value) and not is_object(value) \
            or isinstance(value, np.ndarray) and value.dtype.kind in "biuUS":
        return False
    if isinstance(value, (tuple, list)) and not any(_differentiated(v) for v in value):
        return False
    if type(value).__module__.startswith("dask."):
        raise TypeError("the derivative of a minimum, an integral or a converged loop takes "
                        "NumPy arrays in args= "
                        "(and in what its function closes over), not Dask arrays: the "
                        "function is differentiated point by point; pass np.asarray(x)")
    raise TypeError(f"the derivative of a minimum, an integral or a converged loop takes "
                    f"numbers and float arrays in "
                    f"args= (and in what its function closes over), not a "
                    f"{type(value).__name__} holding numbers: pass the arrays themselves")


def _cached(function, key: tuple, make):
    with cache.LOCK:
        made = cache.lookup(function, key)
        if made is None:
            made = make()
            cache.store(function, key, made)
    return made


def _gradient(function, positions: tuple):
    """``function``'s gradient in its positional arguments ``positions``, compiled once."""
    from transpiler.gradient import GradientFunction

    return _cached(function, ("stationary-grad", positions), lambda: GradientFunction(
        function, positions, "grad", Options(True, checkpoint=False)))


def _forward(function, positions: tuple):
    """``function`` in forward mode along its positional arguments ``positions``."""
    from transpiler.jvp import ForwardFunction

    return _cached(function, ("under-integral-jvp", positions), lambda: ForwardFunction(
        function, positions, Options(True, False)))


def _forward_of(function, key: tuple, inner, along: tuple):
    """``inner`` (a generated function) in forward mode along ``along``, cached on the user's
    ``function`` until ``inner`` is compiled anew."""
    from transpiler.jvp import ForwardFunction

    key = (*key, id(inner))
    forward = _cached(function, key, lambda: ForwardFunction(inner, along, Options(True, False)))
    if forward.__wrapped__ is not inner:  # (an id reused by a newer gradient)
        forward = ForwardFunction(inner, along, Options(True, False))
        cache.store(function, key, forward)
    return forward


def gradient_tangent(f, x, args: tuple, wrt, along, v):
    """The tangent of ``grad_{wrt} f(x, *args)`` (``wrt``: argument positions, None: ``x``)
    along ``x`` by ``v`` (``along`` None) or along the arguments by ``along`` (position ->
    tangent): forward over reverse."""
    function, leading, keywords = _unwrapped(f, args)
    shift = len(leading)
    grad_positions = (shift,) if wrt is None else tuple(shift + 1 + i for i in wrt)
    gradient = _gradient(function, grad_positions)
    call = (*leading, x, *args)
    inner = gradient.compiled_for(*call, **keywords).function
    along_positions = (shift,) if along is None else tuple(shift + 1 + i for i in along)
    forward = _forward_of(function, ("stationary-second", grad_positions, along_positions),
                          inner, along_positions)
    names = list(forward.tangent_names.values())
    tangents = [v] if along is None else [along[i] for i in along]
    return forward(*call, **keywords, **dict(zip(names, tangents, strict=True)))


class Stationarity:
    """The derivatives of an objective ``f(x, *args)`` that its minimum's implicit derivative
    needs (runtime/implicit.py ``implicit_minimum``); one instance, its caches on the user's
    functions (transpiler/cache.py)."""

    def active(self, args: tuple) -> tuple[bool, ...]:
        return tuple(_differentiated(a) for a in args)

    def gradient(self, f, x, args: tuple):
        """``grad_x f(x, *args)``."""
        function, leading, keywords = _unwrapped(f, args)
        gradient = _gradient(function, (len(leading),))
        return gradient(*leading, x, *args, **keywords)

    def hvp(self, f, x, args: tuple, v):
        """``H v``, ``H`` the Hessian of ``f`` in ``x``."""
        return gradient_tangent(f, x, args, None, None, v)

    def mixed_vjp(self, f, x, args: tuple, w) -> tuple:
        """``d/dp (grad_x f(x, *p) . w)`` for each argument ``p`` (None for data)."""
        active = self.active(args)
        positions = [i for i, a in enumerate(active) if a]
        if not positions:
            return (None,) * len(args)
        parts = gradient_tangent(f, x, args, positions, None, w)
        parts = parts if isinstance(parts, tuple) else (parts,)  # (one part per position)
        found = dict(zip(positions, parts, strict=True))
        return tuple(found.get(i) for i in range(len(args)))

    def mixed_jvp(self, f, x, args: tuple, tangents: tuple):
        """``d/dt grad_x f(x, *(p + t dp))``, ``dp`` one tangent per argument (None: none)."""
        given = {i: t for i, (t, a) in enumerate(zip(tangents, self.active(args), strict=True))
                 if a and t is not None}
        if not given:
            return None
        return gradient_tangent(f, x, args, None, given, None)

    def third(self, f, x, args: tuple, w, dx, dargs: tuple) -> tuple:
        """The tangent of ``(H w, d/dp (grad_x f . w))`` as ``x`` moves by ``dx`` and the
        arguments by ``dargs`` (None: held), ``w`` held: the objective's third derivatives
        (forward over forward over reverse), which the tangent of a minimum's adjoint needs ->
        (the ``x``-like part, one per argument, None for data)."""
        try:
            return self._third(f, x, args, w, dx, dargs)
        except TranspileError as e:
            raise NotImplementedError(
                "second derivatives through a minimum take its objective's third derivatives "
                "(forward over forward over reverse), which were not compiled: "
                f"{e.message.splitlines()[0]}. A helper of yours the objective calls inside "
                "an expression, left a call, is the usual cause: call it on a line of its "
                "own (m = model(x, a)), where it is inlined, or write its body into the "
                "objective (first derivatives through the minimum work as they are)") from e

    def _third(self, f, x, args: tuple, w, dx, dargs: tuple) -> tuple:
        function, leading, keywords = _unwrapped(f, args)
        shift = len(leading)
        active = [i for i, a in enumerate(self.active(args)) if a]
        places = (shift, *(shift + 1 + i for i in active))
        call = (*leading, x, *args)
        inner = _gradient(function, places).compiled_for(*call, **keywords).function
        second = _forward_of(function, ("stationary-second", places, (shift,)), inner,
                               (shift,))
        along_w = {next(iter(second.tangent_names.values())): w}
        inner = second.compiled_for(*call, **keywords, **along_w).function
        moved = {} if dx is None else {shift: dx}
        moved.update({shift + 1 + i: dargs[i] for i in active if dargs[i] is not None})
        if not moved:
            return None, (None,) * len(args)
        third = _forward_of(function, ("stationary-third", places, tuple(moved)), inner,
                              tuple(moved))
        names = list(third.tangent_names.values())
        out = third(*call, **keywords, **along_w, **dict(zip(names, moved.values(),
                                                              strict=True)))
        out = out if isinstance(out, tuple) else (out,)
        found = dict(zip((None, *active), out, strict=True))
        return found[None], tuple(found.get(i) for i in range(len(args)))


STATIONARY = Stationarity()


def _split(function, call: tuple):
    """``function``'s split pair (forward half, backward half) for calls like ``call`` (one
    compile per function and argument types, cached, compiled again once a global it read is
    rebound), and the positions its backward half returns gradients for, in order."""
    from transpiler.vjp import split

    key = ("under-integral-split", tuple(
        id(a) if callable(a) else (type(a), getattr(a, "dtype", None), np.ndim(a))
        for a in call))

    def make():
        params = [p.name for p in inspect.signature(function).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:len(call)]
        if len(params) < len(call):
            raise TypeError(f"{function.__name__} takes {len(params)} positional arguments, "
                            f"{len(call)} given")
        pair, active = split(function, params, call)
        return pair, tuple(params.index(name) for name in active)

    made = _cached(function, key, make)
    if made[0].stale():
        made = make()
        with cache.LOCK:
            cache.store(function, key, made)
    return made


def _seed_like(value, g):
    """The cotangent ``g`` (an array) shaped like ``value``: a list or tuple of numbers or
    arrays (``return [v, -x]``) gets one piece per item."""
    if type(value) is np.ndarray and type(g) is np.ndarray and g.shape == value.shape \
            and g.dtype == float:  # (the common case)
        return g
    if not isinstance(value, (list, tuple)):
        return np.reshape(np.asarray(g, float), np.shape(value))
    flat, pieces, at = np.ravel(np.asarray(g, float)), [], 0
    for item in value:
        size = int(np.size(item))
        piece = flat[at:at + size].reshape(np.shape(item))
        pieces.append(piece if np.ndim(item) else float(piece))
        at += size
    return type(value)(pieces)


class UnderIntegral:
    """The derivatives of an integrand ``f(t, *args)`` in its arguments at one point ``t``,
    which an integral's derivative integrates (runtime/integrate.py: differentiation under the
    integral sign); one instance, its caches on the user's functions."""

    def active(self, args: tuple) -> tuple[bool, ...]:
        return tuple(_differentiated(a) for a in args)

    def vjp(self, f, t, args: tuple, g, at: int = 0) -> tuple:
        """``grad_p (g . f(t, *p))`` for each argument ``p`` (None for data): reverse mode;
        ``at``: the position of ``t`` among the arguments (``odeint``'s ``f(y, t)``: 1)."""
        if np.ndim(g):
            return self.pullback(f, t, args, at)(t, args, g)
        function, leading, keywords = _unwrapped(f, args)
        positions = [i for i, on in enumerate(self.active(args)) if on]
        places = tuple(len(leading) + i + (i >= at) for i in positions)
        call = (*leading, *args[:at], float(t), *args[at:])
        parts = _gradient(function, places)(*call, **keywords)  # (a scalar: its gradient)
        parts = parts if isinstance(parts, tuple) else (parts,)  # (one part per position)
        found = dict(zip(positions, [None if p is None else g * asarray(p, float)
                                     for p in parts], strict=True))
        return tuple(found.get(i) for i in range(len(args)))

    def pullback(self, f, t, args: tuple, at: int = 0):
        """``pull(t, args, g)``: ``vjp`` of an array-valued ``f`` at arguments of the kinds of
        these ``args`` (the same ones active), prepared once for the many points an integral
        or an ODE's adjoint evaluates it at."""
        forward, backward = self.split(f, t, args, at)

        def pull(t, args: tuple, g) -> tuple:
            return backward(*forward(t, args), g)

        return pull

    def split(self, f, t, args: tuple, at: int = 0):
        """``(forward, backward)``, ``pullback`` in two halves: ``forward(t, args) -> (value,
        tape)`` evaluates ``f`` taping what its derivative reads, ``backward(value, tape, g)``
        -> ``vjp`` there, one per argument (None for data); an ODE's discrete adjoint
        (runtime/runge_kutta.py) evaluates a step's stages forwards, then pulls back through
        them in reverse."""
        function, leading, keywords = _unwrapped(f, args)
        if keywords:
            raise TypeError("an array-valued integrand or right-hand side given as a partial "
                            "with keywords is not differentiated: pass its arguments in args=")
        active = self.active(args)
        shift = len(leading)
        pair, order = _split(function, (*leading, *args[:at], float(t), *args[at:]))
        index = {place: j for j, place in enumerate(order)}
        slots = tuple(index.get(shift + i + (i >= at)) if on else None
                      for i, on in enumerate(active))

        def forward(t, args: tuple) -> tuple:
            return pair.forward(*leading, *args[:at], float(t), *args[at:])

        def backward(value, tape, g) -> tuple:
            grads = pair.backward(tape, _seed_like(value, g))
            return tuple(None if j is None else grads[j] for j in slots)

        return forward, backward

    def jvp(self, f, t, args: tuple, tangents: tuple, at: int = 0, dt=None):
        """``d/dh f(t + h dt, *(p + h dp))``, ``dp`` one tangent per argument (None: held;
        ``dt`` None: ``t`` held)."""
        function, leading, keywords = _unwrapped(f, args)
        shift = len(leading)
        given = {shift + i + (i >= at): d for i, (d, on) in enumerate(
            zip(tangents, self.active(args), strict=True)) if on and d is not None}
        if dt is not None:
            given[shift + at] = float(dt)
        given = dict(sorted(given.items()))
        forward = _forward(function, tuple(given))
        names = list(forward.tangent_names.values())
        return forward(*leading, *args[:at], float(t), *args[at:], **keywords,
                       **dict(zip(names, given.values(), strict=True)))  # (the tangent only)

    def second(self, f, t, args: tuple, g, tangents: tuple, at: int = 0) -> tuple:
        """The tangent of ``vjp(f, t, args, g)`` as the arguments move by ``tangents`` (None:
        held), ``g`` held: ``f``'s second derivatives against ``g`` (forward over reverse of
        ``g . f``) -> one per argument, None for data."""
        active = [i for i, on in enumerate(self.active(args)) if on]
        along = {i: d for i, d in enumerate(tangents) if i in active and d is not None}
        if not active or not along:
            return (None,) * len(args)
        call = (*args[:at], float(t), *args[at:])
        items = _cached(f, ("returns-items", len(args), at), lambda: _items_of(f(*call)))
        if items is not None:  # (a list or tuple of values: a weight per item)
            g = _seed_like(f(*call), g)
        weighted = _weighted(f, 1, len(args), at, items)
        out = gradient_tangent(weighted, float(t), (*args, g), active, along, None)
        out = out if isinstance(out, tuple) else (out,)
        found = dict(zip(active, out, strict=True))
        return tuple(found.get(i) for i in range(len(args)))


UNDER_INTEGRAL = UnderIntegral()


def _items_of(value):
    """The length of a list or tuple a function returns (None for an array or a number)."""
    return len(value) if isinstance(value, (list, tuple)) else None


def _state_active(value) -> bool:
    """Whether a part of a converged loop's state is differentiated: a real number, a float
    array, or a list or tuple of them (an integer counter is held)."""
    if isinstance(value, (list, tuple)) and value:
        kinds = {_differentiated(v) for v in value}
        if len(kinds) == 1:
            return kinds.pop()
        raise TypeError("a converged loop's state that is a list mixing numbers and data is not "
                        "differentiated: keep the numbers in a list (or an array) of their own")
    return _differentiated(value)


class _Linearized:
    """A loop body ``step(*x, *args)`` at a state ``x``: its value there, and products with its
    derivative, ``pull(v) = (v^T dstep/dx, v^T dstep/dp)`` (reverse mode, one split pair
    compiled per body) and ``push_state``/``push_args``, ``dstep/dx dx`` and ``dstep/dp dp``
    (forward mode)."""

    def __init__(self, step, state, args: tuple, count: int):
        self.function, self.leading, keywords = _unwrapped(step, args)
        if keywords:
            raise TypeError("a converged loop's body is called with keywords: not supported")
        self.count = count
        parts = tuple(state) if count > 1 else (state,)
        # (a NumPy scalar as the float it is: the split pair differentiates Python floats)
        self.call = tuple(float(v) if isinstance(v, np.floating) else v
                          for v in (*self.leading, *parts, *args))
        self.active_state = tuple(_state_active(p) for p in parts)
        self.active_args = tuple(_differentiated(a) for a in args)
        self.pair, order = _split(self.function, self.call)
        self.value, self._residuals = self.pair.forward(*self.call)
        index = {place: j for j, place in enumerate(order)}
        shift = len(self.leading)
        self.state_slots = tuple(index.get(shift + i) if on else None
                                 for i, on in enumerate(self.active_state))
        self.arg_slots = tuple(index.get(shift + count + i) if on else None
                               for i, on in enumerate(self.active_args))

    def pull(self, v) -> tuple:
        residuals, self._residuals = self._residuals, None
        if residuals is None:  # (a backward sweep consumes its tape: run forward again)
            residuals = self.pair.forward(*self.call)[1]
        grads = self.pair.backward(residuals, v)
        state = tuple(None if j is None else grads[j] for j in self.state_slots)
        return (state if self.count > 1 else state[0],
                tuple(None if j is None else grads[j] for j in self.arg_slots))

    def push_state(self, tangent):
        parts = tangent if self.count > 1 else (tangent,)
        return self._push({i: t for i, (t, on) in enumerate(zip(parts, self.active_state,
                                                                strict=True)) if on})

    def push_args(self, tangents: tuple):
        given = {self.count + i: t for i, (t, on) in enumerate(zip(tangents, self.active_args,
                                                                   strict=True))
                 if on and t is not None}
        return self._push(given) if given else None

    def _push(self, given: dict):
        forward = _forward(self.function, tuple(len(self.leading) + i for i in given))
        names = list(forward.tangent_names.values())
        return forward(*self.call, **dict(zip(names, given.values(), strict=True)))


def _weighted(step, count: int, arity: int, at: int = 0, items: int | None = None):
    """``weighted(*x, *args, *w) = sum_i <w_i, step(*x, *args)_i>``, the body's value against
    a cotangent ``w`` (one per state part): a scalar, whose gradient is the body's
    vector-Jacobian product and whose gradient's tangent its second derivatives. Written as
    source (registered for ``inspect``), compiled like any function of the user's; one per
    body and arity. ``at``: where the one ``x`` goes among the arguments of the call
    (``odeint``'s ``f(y, t)``: 1); ``items``: the length of the list or tuple ``step``
    returns (its weight then one piece per item, ``_seed_like``)."""
    def make():
        values = [f"x{i}" for i in range(count)] + [f"a{i}" for i in range(arity)]
        called = list(values)
        if at:
            called.insert(at, called.pop(0))
        weights = [f"w{i}" for i in range(count)]
        terms = " + ".join(f"np.sum(w{i} * s)" if count == 1 else f"np.sum(w{i} * s[{i}])"
                           for i in range(count)) if items is None else " + ".join(
            f"np.sum(w0[{j}] * s[{j}])" for j in range(items))
        source = (f"def weighted({', '.join(values + weights)}):\n"
                  f"    s = step({', '.join(called)})\n    return {terms}\n")
        filename = f"<weighted {getattr(step, '__qualname__', 'step')}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {"np": np, "step": step}
        exec(compile(source, filename, "exec"), namespace)
        return namespace["weighted"]

    return _cached(step, ("fixed-weighted", count, arity, at, items), make)


class FixedPoint:
    """The derivatives of a loop body at its fixed point that a converged loop's implicit
    derivative needs (runtime/implicit.py ``fixed_point``); one instance, its caches on the
    body's function."""

    kind = "loop"

    def linearized(self, step, state, args: tuple, count: int) -> _Linearized:
        return _Linearized(step, state, args, count)

    def second(self, step, state, args: tuple, count: int, w, tangent, tangents: tuple):
        """The tangent of ``(dstep/dx^T w, dstep/dp^T w)`` as the state moves by ``tangent``
        and the arguments by ``tangents`` (None: held), ``w`` held: the body's second
        derivatives against ``w`` (forward over reverse) -> (the state-like part, one per
        argument, None for data)."""
        from transpiler.gradient import GradientFunction

        parts = tuple(state) if count > 1 else (state,)
        if any(isinstance(p, (list, tuple)) for p in parts):
            raise NotImplementedError("second derivatives through a converged loop whose state "
                                      "is a list are not supported: keep it in an array")
        weights = tuple(w) if count > 1 else (w,)
        call = tuple(float(v) if isinstance(v, np.floating) else v
                     for v in (*parts, *args, *weights))
        active = [i for i, v in enumerate(call[:count + len(args)]) if _differentiated(v)]
        weighted = _weighted(step, count, len(args))
        gradient = _cached(weighted, ("fixed-gradient", tuple(active)), lambda: GradientFunction(
            weighted, tuple(active), "grad", Options(True, checkpoint=False)))
        inner = gradient.compiled_for(*call).function
        state_moves = (None,) * count if tangent is None else \
            tuple(tangent) if count > 1 else (tangent,)
        moved = [*state_moves, *tangents]
        along = tuple(i for i in active if moved[i] is not None)
        if not along:
            return (None,) * count, (None,) * len(args)
        forward = _forward_of(weighted, ("fixed-second", tuple(active), along), inner, along)
        names = list(forward.tangent_names.values())
        out = forward(*call, **dict(zip(names, [moved[i] for i in along], strict=True)))
        out = out if isinstance(out, tuple) else (out,)
        found = dict(zip(active, out, strict=True))
        return (tuple(found.get(i) for i in range(count)),
                tuple(found.get(count + i) for i in range(len(args))))


FIXED_POINT = FixedPoint()


class _Residual:
    """``step(x, p) = x - F(x, p)`` at ``x``, as ``_Linearized`` gives a loop body, made from
    ``F``'s: a root of ``F`` is this step's fixed point."""

    def __init__(self, of: _Linearized, state):
        self.of = of
        self.active_state, self.active_args = of.active_state, of.active_args
        self.value = asarray(state, float) - asarray(of.value, float)
        if not np.ndim(self.value):
            self.value = float(self.value)

    def pull(self, v) -> tuple:
        state, args = self.of.pull(v)
        return (None if state is None else v - state,
                tuple(None if a is None else _negative(a) for a in args))

    def push_state(self, tangent):
        return tangent - self.of.push_state(tangent)

    def push_args(self, tangents: tuple):
        moved = self.of.push_args(tangents)
        return None if moved is None else _negative(moved)


def _negative(value):
    out = -asarray(value)
    return out if np.ndim(out) else float(out)


class Roots(FixedPoint):
    """The derivatives of ``F(x, *args)`` at a root ``x`` that a solver's implicit derivative
    needs (runtime/implicit.py ``root_of``): those of ``x - F(x, p)`` at its fixed point.
    ``kind``: ``"roots"`` where each unknown has an equation of its own (a scalar root, or a
    vectorized ``newton``'s: ``dF/dx`` diagonal), ``"root"`` for a system."""

    def __init__(self, kind: str):
        self.kind = kind

    def linearized(self, step, state, args: tuple, count: int) -> _Residual:
        return _Residual(_Linearized(step, state, args, count), state)

    def second(self, step, state, args: tuple, count: int, w, tangent, tangents: tuple):
        xs, ps = super().second(step, state, args, count, w, tangent, tangents)
        flip = lambda parts: tuple(None if p is None else _negative(p) for p in parts)  # noqa: E731
        return flip(xs), flip(ps)


ROOTS = Roots("roots")
ROOT_SYSTEM = Roots("root")
