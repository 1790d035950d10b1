"""Forward mode: Jacobian-vector products by a generated function that carries tangents.

``forward(f, wrt)`` compiles ``f`` into ``jvp_f(<f's parameters>, *, dx, ...)`` returning
``(value, tangent)``: the tangent of the result along the tangents ``dx`` given for the ``wrt``
arguments. ``jvp(f, args, tangents)`` is JAX's convention on top of it.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from transpiler import cache
from transpiler.arguments import differentiable
from transpiler.backends import check_backend
from transpiler.context import Options
from transpiler.emit import note_origin
from transpiler.gradient import GradientFunction, check_function, kinds_of
from transpiler.naming import tangent_parameters


class ForwardFunction(GradientFunction):
    """``f`` in forward mode: call it with ``f``'s arguments and, by keyword, one tangent per
    ``wrt`` argument (``dx`` for ``x``; ``.tangent_names`` lists them); it returns
    ``(f(*args), J @ tangents)``, the tangent shaped like the value. ``.source`` is the code."""

    def __init__(self, fn, wrt, options: Options):
        super().__init__(fn, wrt, "jvp", options)
        self.tangent_names = tangent_parameters(fn, self._wrt)
        self._direct_keywords = frozenset(self.tangent_names.values())
        self.__name__ = f"jvp_{fn.__name__}"
        self.__qualname__ = f"forward({fn.__qualname__})"

    def _made_from(self) -> tuple:
        return self.__wrapped__, self._given_wrt, self._options

    def _call(self, *args, **kwargs):
        tangents = {k: kwargs.pop(k) for k in list(kwargs) if k in self.tangent_names.values()}
        kinds = kinds_of(self.__wrapped__, args, kwargs)
        compiled = self._checked(kinds, args, kwargs)
        try:
            result = compiled.function(*args, **kwargs, **tangents)
        except Exception as e:
            note_origin(e)
            raise
        if not kwargs and tangents.keys() == self._direct_keywords:
            self._passed(compiled, kinds, args, numbers_only=True)  # (their tangents: floats)
        return result


def forward(f=None, wrt=0, *, optimize: bool = True, backend: str = "python"):
    """Forward mode of ``f`` with respect to argument(s) ``wrt``: ``forward(f)(x, dx=v)`` is
    ``(f(x), J v)``. Use as ``forward(f)``, ``@forward`` or ``@forward(wrt=(0, 1))``."""
    if f is None:
        return lambda g: forward(g, wrt, optimize=optimize, backend=backend)
    if not callable(f):
        raise TypeError(f"forward expects a function, got {f!r}")
    check_backend(backend)
    return ForwardFunction(f, wrt, Options(optimize, backend=backend))


def jvp(f, args, tangents, optimize: bool = True, backend: str = "python"):
    """``(f(*args), tangent)``: the Jacobian of ``f`` at ``args`` times ``tangents`` (one per
    positional argument, shaped like it; None, or an integer argument, means "held fixed")."""
    check_function(f)
    args, tangents = tuple(args), tuple(tangents)
    if len(args) != len(tangents):
        raise ValueError(f"jvp: {len(args)} arguments but {len(tangents)} tangents")
    signature = inspect.signature(f).parameters.values()
    params = [p.name for p in signature if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind is p.VAR_POSITIONAL for p in signature)
    if len(params) < len(args) and not star:
        raise TypeError(f"jvp: {f.__name__} takes {len(params)} positional arguments, "
                        f"{len(args)} given")
    if any(t is not None for t in tangents[len(params):]):
        raise TypeError(f"jvp: the arguments {f.__name__} receives as *{_star_name(f)} are held "
                        "fixed here (pass None as their tangents); forward(f, wrt=...) "
                        "differentiates named parameters")
    active = []
    for p, a, t in zip(params, args, tangents, strict=False):
        if t is None:
            continue
        if type(a) is not float and not differentiable(a) and not _complex_number(a):
            raise TypeError(f"jvp: argument '{p}' is {type(a).__name__} and cannot have a "
                            "tangent; pass None for it")
        _same_shape(p, a, t)
        active.append(p)
    check_backend(backend)
    options = Options(optimize, backend=backend)
    key = ("forward", tuple(active), options)
    with cache.LOCK:
        function = cache.lookup(f, key)
        if function is None:
            function = ForwardFunction(f, tuple(active), options)
            cache.store(f, key, function)
    given = dict(zip(params, tangents, strict=False))
    return function(*args, **{function.tangent_names[p]: given[p] for p in active})


def partial_derivative(f, position: int, args: tuple, tangent, keywords=None):
    """The derivative of ``f(*args, **keywords)`` along ``tangent`` in its positional argument
    ``position``, the others held (forward mode): ``f`` a Python function, or a
    ``functools.partial`` of one (as a function defined inside the differentiated one is
    passed on, passes/lift.py)."""
    keywords = dict(keywords or {})
    if inspect.ismethod(f):  # (a bound method: its function, given its object)
        f, args, position = f.__func__, (f.__self__, *args), position + 1
    while isinstance(f, functools.partial):
        args, position = tuple(f.args) + tuple(args), position + len(f.args)
        keywords = {**f.keywords, **keywords}
        f = f.func
    check_function(f)
    params = [p.name for p in inspect.signature(f).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if position >= len(params):
        raise TypeError(f"{f.__name__} has no positional parameter {position}")
    options = Options(True)
    key = ("forward", (params[position],), options)
    with cache.LOCK:
        function = cache.lookup(f, key)
        if function is None:
            function = ForwardFunction(f, (params[position],), options)
            cache.store(f, key, function)
    name = function.tangent_names[params[position]]
    return function(*args, **keywords, **{name: tangent})[1]


def _complex_number(value) -> bool:
    """A Python complex or a complex NumPy array: its tangent is a direction in the complex
    plane (complex, or real), and the result's tangent the real-linear derivative along it."""
    return type(value) is complex or (type(value) is np.ndarray and value.dtype.kind == "c")


def _same_shape(name: str, arg, tangent) -> None:
    if isinstance(arg, (tuple, list)) and isinstance(tangent, (tuple, list)) \
            and len(arg) == len(tangent):
        for a, t in zip(arg, tangent, strict=True):
            _same_shape(name, a, t)
    elif isinstance(arg, dict) and isinstance(tangent, dict) and arg.keys() == tangent.keys():
        for k in arg:
            _same_shape(name, arg[k], tangent[k])
    elif np.shape(arg) != np.shape(tangent) or isinstance(arg, (tuple, list, dict)):
        raise ValueError(f"jvp: the tangent of '{name}' must have its shape and structure "
                         f"({np.shape(arg)}), got {np.shape(tangent)}")


def _star_name(f) -> str:
    return next(p.name for p in inspect.signature(f).parameters.values()
                if p.kind is p.VAR_POSITIONAL)
