"""What the runtime takes for an array, and which namespace its operations come from.

Every other runtime module asks here instead of deciding for itself: ``is_array`` (an array, not a
number, a container or a ``ShapeOf``), ``namespace`` (the module whose functions operate on an
array: NumPy, the only one today) and ``asarray`` (a value as an array of that namespace). An
array library of another kind (Dask, CuPy) changes this module, not every helper. The helpers'
fast paths that test ``type(x) is np.ndarray`` exactly stay as they are: they are the common
case, kept cheap, and everything else takes the general path.

Also the two stand-ins the helpers meet in place of an array: ``ShapeOf`` (an array's shape and
dtype without its data, what the tape saves of a value the adjoint reads only for its shape) and
the Python zero a gradient or tangent is when nothing flowed into it (``is_zero``).
"""

from __future__ import annotations

import math

import numpy as np


def namespace(*values):
    """The array module whose functions operate on ``values``: NumPy."""
    return np


def is_array(x) -> bool:
    """True for an array (of the array namespace, subclasses included)."""
    return isinstance(x, np.ndarray)


# ``x`` as an array of its namespace (no copy when it already is one of ``dtype``). NumPy's own
# function, not a wrapper that asks ``namespace``: the helpers call it on every gradient, and a
# second namespace changes this line.
asarray = np.asarray


def is_zero(x) -> bool:
    """True for the zero gradient or tangent of a value nothing flowed into (a Python 0 or 0.0)."""
    return type(x) in (int, float) and x == 0


def float_dtype(x):
    """The dtype a gradient of ``x`` has: its own when floating, else float64."""
    kind = asarray(x).dtype
    return kind if kind.kind in "fc" else np.dtype(float)


class ShapeOf:
    """Stands in for an array where only ``shape``, ``dtype``, ``ndim`` and ``size`` are read
    (``np.shape``, ``np.ndim`` and ``np.size`` use these attributes)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype):
        self.shape, self.dtype = shape, dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"ShapeOf({self.shape}, {self.dtype})"


def shape_of(x):
    """What the tape saves of ``x`` when the adjoint reads only its shape (``rt.unbroadcast(g,
    x)``): a ``ShapeOf`` for an array, ``x`` itself otherwise. Linear updates so cost no state."""
    if type(x) is np.ndarray:
        return ShapeOf(x.shape, x.dtype)
    return x
