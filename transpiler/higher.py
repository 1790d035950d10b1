"""``grad(grad(f))``: the derivative of a generated gradient."""

from __future__ import annotations

import numpy as np

from transpiler.context import Options
from transpiler.gradient import GradientFunction, normalise_wrt
from transpiler.jvp import ForwardFunction


class GradientOfGradient:
    """``grad(grad(f))``: the derivative of a generated gradient. With respect to Python-number
    arguments it runs the gradient in forward mode (one tangent per argument, so loops are
    fine); with respect to arrays it differentiates the gradient in reverse mode again. What
    it differentiates is the Python backend's code of the gradient (the outer derivative is
    compiled by the backend it was asked for), with checkpointed loops taped whole."""

    def __init__(self, inner, wrt, mode: str, options: Options):
        self._made_with = (inner, wrt, mode, options)  # (what pickles it)
        self._inner = inner.with_options(backend="python", checkpoint=False)
        self._mode, self._options = mode, options
        fn = inner.__wrapped__
        self._wrt, self._positions, self._single = normalise_wrt(fn, wrt)
        self.__name__ = f"{mode}_{inner.__name__}"
        self.__qualname__ = f"{mode}({inner.__qualname__})"
        self._made: dict = {}  # id of a generated gradient -> what differentiates it

    def __reduce__(self):
        return GradientOfGradient, self._made_with

    def __call__(self, *args, **kwargs):
        gradient = self._inner.compiled_for(*args, **kwargs).function  # (Python's source)
        numbers = all(type(args[p]) is float for p in self._positions if 0 <= p < len(args))
        key = (id(gradient), numbers)
        made = self._made.get(key)
        if made is None or made.__wrapped__ is not gradient:
            made = self._made[key] = ForwardFunction(gradient, self._wrt, self._options) \
                if numbers else GradientFunction(gradient, self._wrt, self._mode, self._options)
        if not numbers:
            return made(*args, **kwargs)
        value, parts = None, []
        for w in self._wrt:  # one forward sweep per argument
            tangents = {made.tangent_names[v]: 1.0 if v == w else 0.0 for v in self._wrt}
            value, tangent = made(*args, **kwargs, **tangents)
            if np.size(value) != 1 or isinstance(value, (tuple, list, dict)):
                raise TypeError(f"grad needs a function returning a scalar, but "
                                f"{self._inner.__name__} returns {np.shape(value)} values")
            parts.append(float(tangent))
        result = parts[0] if self._single else tuple(parts)
        return (value, result) if self._mode == "value_and_grad" else result
