"""What ``transpiler.stop_gradient``, ``transpiler.on_gradient`` and ``transpiler.black_box``
(a user's own VJP function) compile to."""

from __future__ import annotations

from runtime.broadcast import unbroadcast, zeros_like_grad


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
