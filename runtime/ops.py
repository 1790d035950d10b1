"""Helpers called from adjoint rule bodies that are too long to inline."""

from __future__ import annotations

import numpy as np

from runtime.accumulate import zeros_like_grad
from runtime.broadcast import unbroadcast
from runtime.containers import GradTuple


def balanced_eq(x, z, y):
    """Where ``x`` equals the result ``z`` of max/min(x, y): 1, or 1/2 on a tie with ``y``.

    Splitting ties evenly keeps ``max(x, x)`` differentiable with gradient 1.
    """
    return (x == z) / (1.0 + (x == y))


def _promote(a, b, g):
    """Make matmul operands at least 2-D (and ``g`` to match), as NumPy does internally."""
    a2 = a[np.newaxis, :] if np.ndim(a) == 1 else a
    b2 = b[:, np.newaxis] if np.ndim(b) == 1 else b
    g2 = np.asarray(g)
    if np.ndim(b) == 1:
        g2 = g2[..., np.newaxis]
    if np.ndim(a) == 1:
        g2 = np.expand_dims(g2, -2)
    return np.asarray(a2), np.asarray(b2), g2


def _unbatch(g, like):
    """Sum broadcast batch axes of a matmul operand's gradient down to ``like``'s shape."""
    if np.ndim(like) == 1:
        g = g[..., 0, :]
    return unbroadcast(g, like)


def matmul_adjoint_a(g, a, b):
    """Gradient of ``a @ b`` with respect to ``a``, given the result's gradient ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2:
        return g @ b.T  # the common case, without the batch bookkeeping
    a2, b2, g2 = _promote(a, b, g)
    return _unbatch(g2 @ np.swapaxes(b2, -1, -2), a)


def matmul_adjoint_b(g, a, b):
    """Gradient of ``a @ b`` with respect to ``b``, given the result's gradient ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    a2, b2, g2 = _promote(a, b, g)
    gb = np.swapaxes(a2, -1, -2) @ g2
    if np.ndim(b) == 1:
        gb = gb[..., 0]
    return unbroadcast(gb, b)


def dot_adjoint_a(g, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``a``.

    ``dot`` contracts the last axis of ``a`` with the second-to-last of ``b`` (the only axis of a
    1-D ``b``); a 0-d operand makes it a product.
    """
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * b) if np.ndim(a) == 0 else g * b
    nb = np.ndim(b)
    # g has axes a[:-1] + b[:-2] + b[-1:]; contract g's b-axes with b's non-contracted axes.
    b_free = [i for i in range(nb) if i != max(nb - 2, 0)]
    g_b_axes = list(range(np.ndim(a) - 1, np.ndim(g)))
    ga = np.tensordot(g, b, axes=(g_b_axes, b_free))
    return ga


def dot_adjoint_b(g, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``b``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * a) if np.ndim(b) == 0 else g * a
    na, nb = np.ndim(a), np.ndim(b)
    # Contract g's a-axes with a's free axes, leaving (contracted,) + b's free axes.
    gb = np.tensordot(a, g, axes=(list(range(na - 1)), list(range(na - 1))))
    if nb >= 2:  # gb axes: (k,) + b[:-2] + b[-1:]; move k to position nb - 2
        gb = np.moveaxis(gb, 0, nb - 2)
    return gb


def unconcatenate(g, arrays, axis=0):
    """Split the gradient of ``np.concatenate(arrays, axis)`` into one piece per input (one
    array, when ``arrays`` was itself an array whose rows were joined)."""
    if isinstance(arrays, np.ndarray):
        return np.stack(unconcatenate(g, list(arrays), axis))
    if axis is None:
        g = np.ravel(g)
        sizes = [np.size(a) for a in arrays]
        pieces = np.split(g, np.cumsum(sizes)[:-1])
        return GradTuple(p.reshape(np.shape(a)) for p, a in zip(pieces, arrays, strict=True))
    sizes = [np.shape(a)[axis] for a in arrays]
    return GradTuple(np.split(g, np.cumsum(sizes)[:-1], axis=axis))


def unstack(g, arrays, axis=0):
    """Split the gradient of ``np.stack(arrays, axis)`` into one piece per input (one array,
    when ``arrays`` was itself an array whose rows were stacked)."""
    pieces = np.moveaxis(g, axis, 0)
    return pieces if isinstance(arrays, np.ndarray) else GradTuple(pieces)


def stop_gradient(x):
    """``x`` itself, through which no gradient flows (``transpiler.stop_gradient``)."""
    return x


def on_gradient(x, hook):
    """``x`` itself; in the backward sweep, the gradient reaching ``x`` is replaced by
    ``hook(gradient)`` (``transpiler.on_gradient``: clip, print or inspect a gradient)."""
    return x


def partials(parts, n: int, vjp):
    """The result of a user's VJP function (``transpiler.black_box``): one gradient per
    parameter, as a tuple of ``n`` (a single value when ``n`` is 1)."""
    if n == 1 and not isinstance(parts, (tuple, list)):
        return (parts,)
    if not isinstance(parts, (tuple, list)) or len(parts) != n:
        got = f"a {type(parts).__name__} of {len(parts)}" if isinstance(parts, (tuple, list)) \
            else f"a {type(parts).__name__}"
        raise TypeError(f"{getattr(vjp, '__qualname__', vjp)} must return a tuple of {n} "
                        f"gradients (one per parameter, None for none), got {got}")
    return parts


def partial_of(parts, i: int, like):
    """Gradient ``i`` of a user's VJP, summed to the shape of its argument (zeros for None)."""
    g = parts[i]
    if g is None:
        return zeros_like_grad(like)
    return unbroadcast(g, like)
