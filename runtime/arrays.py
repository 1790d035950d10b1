"""What the runtime takes for an array, and which namespace its operations come from.

Every other runtime module asks here instead of deciding for itself: ``is_array`` (an array of
any library that takes part in NumPy's dispatch, NumPy, Dask or CuPy; not a number, a container
or a ``ShapeOf``), ``namespace`` (the module whose functions operate on an array), ``asarray``
(a value as an array, never converting another library's array to NumPy), ``zeros`` and
``array_copy`` (new arrays in the namespace of an existing one) and ``is_lazy`` (a Dask
collection, whose elements are computed only when asked). A gradient thus mirrors its
argument: NumPy in, NumPy out; Dask in, Dask (lazy) out. The helpers' fast paths that test
``type(x) is np.ndarray`` exactly stay as they are: they are the common case, kept cheap, and
everything else takes the general path.

Also the two stand-ins the helpers meet in place of an array: ``ShapeOf`` (an array's shape and
dtype without its data, what the tape saves of a value the adjoint reads only for its shape) and
the Python zero a gradient or tangent is when nothing flowed into it (``is_zero``).
"""

from __future__ import annotations

import math
import sys

import numpy as np


def namespace(*values):
    """The array module whose functions operate on ``values``: that of the first array among
    them that is not NumPy's (``dask.array`` for a Dask array, ``cupy`` for a CuPy array), else
    NumPy."""
    for x in values:
        if type(x) is not np.ndarray and is_array(x):
            return _module_of(x)
    return np


def _module_of(x):
    """The module that made array ``x``: the array API's ``__array_namespace__`` where ``x``
    has one, else its package (``dask.array.core.Array`` -> ``dask.array``)."""
    own = getattr(x, "__array_namespace__", None)
    if own is not None:
        return own()
    package = type(x).__module__.split(".")
    module = sys.modules.get(".".join(package[:2])) if package[0] == "dask" else None
    return module or sys.modules.get(package[0], np)


def library(x) -> str:
    """The library an array comes from, as its users write it (``Dask``, ``CuPy``, ``NumPy``)."""
    root = type(x).__module__.split(".")[0]
    return {"dask": "Dask", "cupy": "CuPy", "numpy": "NumPy"}.get(root, root)


def inverse_axes(perm) -> tuple:
    """The permutation undoing ``perm``, as a tuple of ints (every library's ``transpose``
    takes one; Dask's takes no array)."""
    return tuple(int(i) for i in np.argsort(perm))


def is_array(x) -> bool:
    """True for an array: NumPy's (subclasses included) or another library's that takes part
    in NumPy's dispatch (``__array_function__``: Dask, CuPy); not a NumPy scalar."""
    return isinstance(x, np.ndarray) or (
        hasattr(type(x), "__array_function__") and hasattr(x, "shape")
        and hasattr(x, "dtype") and not isinstance(x, np.generic))


def is_lazy(x) -> bool:
    """True for a value whose elements are not computed yet (a Dask collection)."""
    return hasattr(type(x), "__dask_graph__")


def asarray(x, dtype=None):
    """``x`` as an array (of ``dtype``): an array of another library than NumPy stays one of
    its own (NumPy would convert a Dask or CuPy array behind its back), anything else goes
    through ``np.asarray``."""
    if isinstance(x, np.ndarray) or not is_array(x):
        return np.asarray(x, dtype=dtype)
    return x if dtype is None or x.dtype == dtype else x.astype(dtype)


def zeros(shape: tuple, dtype, like=None):
    """Zeros of ``shape`` and ``dtype`` in the namespace of ``like`` (a Dask ``like`` gives
    Dask zeros chunked like it where the shapes agree)."""
    if like is None or type(like) is np.ndarray or not is_array(like):
        return np.zeros(shape, dtype=dtype)
    return _module_of(like).zeros_like(like, dtype=dtype, shape=shape)


def array_copy(x, dtype=None):
    """A writable copy of ``x`` (of ``dtype``) in its own namespace."""
    if type(x) is np.ndarray or not is_array(x):
        return np.array(x, dtype=dtype, copy=True)
    return x.astype(dtype or x.dtype, copy=True)


def as_like(g, x, dtype=None):
    """``g`` as a new array of ``x``'s namespace, shape and dtype (or ``dtype``), chunked like
    ``x`` when ``x`` is a Dask array: the gradient of an argument of another library."""
    module = _module_of(x)
    out = module.broadcast_to(module.asarray(g), x.shape).astype(dtype or x.dtype)
    chunks = getattr(x, "chunks", None)
    if chunks is not None and out.chunks != chunks:
        out = out.rechunk(chunks)
    return out.copy() if out is g else out


def size(x) -> int:
    """``np.size(x)`` from the shape, for every namespace (Dask does not implement
    ``np.size``)."""
    return math.prod(np.shape(x))


def is_zero(x) -> bool:
    """True for the zero gradient or tangent of a value nothing flowed into (a Python 0 or 0.0)."""
    return type(x) in (int, float) and x == 0


def unflattened(flat, values, active) -> tuple:
    """``flat`` (one vector for several values) cut into pieces shaped like ``values`` where
    ``active`` (None elsewhere), a float for a number: a solve's augmented state back as the
    arguments' gradients."""
    out, at = [], 0
    for value, on in zip(values, active, strict=True):
        if not on:
            out.append(None)
            continue
        size = int(np.size(value))
        piece = np.asarray(flat[at:at + size]).reshape(np.shape(value))
        at += size
        out.append(piece if np.ndim(value) else float(piece))
    return tuple(out)


def zero_parts(values, active) -> tuple:
    """The gradients of ``values`` when nothing reaches them: zeros shaped like each one where
    ``active`` (a float for a number, never None: the caller adds to them), None elsewhere
    (data, which has no gradient)."""
    return tuple((np.zeros(np.shape(v)) if np.ndim(v) else 0.0) if on else None
                 for v, on in zip(values, active, strict=True))


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
