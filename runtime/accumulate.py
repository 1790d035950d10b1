"""Seeds, zero gradients and the final shape/dtype fix-up of a gradient."""

from __future__ import annotations

import numpy as np

from runtime.containers import CONTAINERS, plain, zeros_of
from runtime.stand_in import ShapeOf


def seed(out):
    """The gradient of a scalar result with respect to itself (1, in the result's dtype).

    Raises TypeError when ``out`` is not a real scalar: ``grad`` needs a single real number.
    """
    if type(out) is float:
        return 1.0
    if type(out) is complex or getattr(getattr(out, "dtype", None), "kind", "") == "c":
        raise TypeError("grad needs a real-valued function, but it returned a complex value; "
                        "complex numbers are not supported")
    size = np.size(out)
    if size != 1 or isinstance(out, (tuple, list, dict)):
        kind = type(out).__name__
        shape = f" of shape {np.shape(out)}" if hasattr(out, "shape") else ""
        raise TypeError(
            f"grad needs a function returning a scalar, but it returned a {kind}{shape}; "
            "reduce it first (e.g. np.sum) or use a Jacobian"
        )
    if isinstance(out, np.ndarray):
        return np.ones_like(out)
    return 1.0


def zeros_like_grad(x):
    """A zero gradient mirroring ``x``: 0.0 for a scalar, else a float array of ``x``'s shape
    (or a gradient container for a tuple, list or dict)."""
    if isinstance(x, (np.ndarray, ShapeOf)):
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind == "f" else float)
    if isinstance(x, CONTAINERS):
        return zeros_of(x)
    return 0.0


def grad_like(g, x):
    """Return gradient ``g`` shaped and typed like its argument ``x``.

    A float argument gets a float, an array gets a fresh writable array of the same shape and
    dtype (float32 in, float32 out). Gradients that are broadcast views are materialised.
    """
    if isinstance(x, np.ndarray):
        if type(g) is not np.ndarray or g.dtype != x.dtype or not g.flags.writeable:
            _refuse_complex(g)
            g = np.array(np.broadcast_to(g, x.shape), dtype=x.dtype)
        elif g.shape != x.shape:
            g = g.reshape(x.shape)
        return g
    if isinstance(x, CONTAINERS):
        return plain(g, x)
    _refuse_complex(g)
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    return float(g)


def _refuse_complex(g) -> None:
    if type(g) is complex or getattr(getattr(g, "dtype", None), "kind", "") == "c":
        raise TypeError("the gradient came out complex: the function computes with complex "
                        "numbers, which is not supported")


def tangent_like(t, value):
    """Return tangent ``t`` shaped and typed like the result ``value`` it belongs to (a float
    for a number, an array of the value's shape and floating dtype, a tuple/list for one)."""
    if isinstance(value, (tuple, list)):
        return type(value)(tangent_like(a, v) for a, v in zip(t, value, strict=True))
    if isinstance(value, dict):
        return {k: tangent_like(t[k], v) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype.kind != "f":
        return np.array(np.broadcast_to(t, value.shape), dtype=float)
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return float(t)
    return grad_like(t, value)
