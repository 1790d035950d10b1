"""The functions users call: grad, value_and_grad (the decorator forms too)."""

from __future__ import annotations

import inspect

from transpiler.backends import check_backend
from transpiler.context import Options
from transpiler.gradient import BoundGradient, GradientFunction
from transpiler.higher import GradientOfGradient


def wrt_of(what: str, wrt, argnums):
    """``wrt``, or JAX's name for it, ``argnums`` (not both); position 0 where neither is given."""
    if argnums is not None:
        if wrt is not None:
            raise TypeError(f"{what}: give wrt or argnums (its alias), not both")
        return argnums
    return 0 if wrt is None else wrt


def _decorator(mode: str):
    def make(f=None, wrt=None, *, argnums=None, has_aux: bool = False, optimize: bool = True,
             backend: str = "python", checkpoint: bool = True):
        if f is None:
            return lambda g: make(g, wrt, argnums=argnums, has_aux=has_aux, optimize=optimize,
                                  backend=backend, checkpoint=checkpoint)
        if not callable(f):
            raise TypeError(f"{mode} expects a function, got {f!r}")
        wrt = wrt_of(mode, wrt, argnums)
        check_backend(backend)
        options = Options(optimize, backend=backend, checkpoint=bool(checkpoint),
                          aux=bool(has_aux))
        if isinstance(f, GradientFunction) and f.mode == "grad":  # grad(grad(f))
            if has_aux or f.has_aux:
                raise TypeError(f"{mode} of a gradient: has_aux is not supported there (the "
                                "inner gradient's aux is not a number to differentiate)")
            return GradientOfGradient(f, wrt, mode, options)
        if inspect.ismethod(f) and inspect.isfunction(f.__func__):
            return BoundGradient(f, wrt, mode, options)
        return GradientFunction(f, wrt, mode, options)

    make.__name__ = mode
    return make


grad = _decorator("grad")
grad.__doc__ = """Gradient of a scalar-valued ``f`` with respect to argument(s) ``wrt``.

``wrt`` is a position, a parameter name, or a tuple of those (then a tuple of gradients is
returned); ``argnums`` is its alias (JAX's name). ``has_aux=True``: ``f`` returns ``(value,
aux)`` and the gradient function returns ``(gradient, aux)``, ``aux`` as ``f`` made it (not
differentiated). Use as ``grad(f)``, ``@grad`` or ``@grad(wrt=(0, 1))``. ``backend="numba"``
compiles the generated code with Numba (``"auto"``: where Numba can; see the README).
``checkpoint=False`` tapes loops marked ``checkpoint(...)`` whole, as if unmarked.
"""
value_and_grad = _decorator("value_and_grad")
value_and_grad.__doc__ = """Like grad, returning ``(f(*args), gradient)`` from one call (with
``has_aux=True``: ``((value, aux), gradient)``, as JAX's)."""
