"""A value's shape and dtype without its data, for tape entries read only for their shape."""

from __future__ import annotations

import math

import numpy as np


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
