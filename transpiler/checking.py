"""check_grad: compare a compiled gradient with central finite differences."""

from __future__ import annotations

import numpy as np

from transpiler.api import grad as _grad


def numeric_grad(f, args: tuple, index: int, eps: float = 1e-6):
    """Central-difference gradient of scalar ``f`` w.r.t. ``args[index]`` (computed in float64)."""
    x = args[index]
    base = np.array(x, dtype=float)
    out = np.zeros_like(base)
    flat, gflat = base.reshape(-1), out.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        step = eps * max(1.0, abs(old))
        values = []
        for sign in (1, -1):
            flat[i] = old + sign * step
            trial = [a.copy() if isinstance(a, np.ndarray) else a for a in args]  # f may write
            trial[index] = base.copy() if isinstance(x, np.ndarray) else float(base)
            values.append(float(np.sum(f(*trial))))
        flat[i] = old
        gflat[i] = (values[0] - values[1]) / (2 * step)
    return out if isinstance(x, np.ndarray) else float(out)


def check_grad(f, *args, wrt=0, rtol: float = 1e-5, atol: float = 1e-6, optimize: bool = True):
    """Raise AssertionError, naming the worst entry, when grad(f) and finite differences differ.

    ``wrt`` takes an int position or a tuple of positions. Returns the compiled gradient(s).
    """
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    computed = _grad(f, wrt=positions, optimize=optimize)(*args)
    for pos, g in zip(positions, computed, strict=True):
        expected = numeric_grad(f, args, pos)
        if np.shape(g) != np.shape(args[pos]):
            raise AssertionError(f"gradient for argument {pos} has shape {np.shape(g)}, "
                                 f"expected {np.shape(args[pos])}")
        err = np.abs(np.asarray(g, dtype=float) - expected)
        bound = atol + rtol * np.abs(expected)
        if np.any(~(err <= bound)):
            worst = np.unravel_index(np.argmax(err - bound), np.shape(err)) if np.ndim(err) else ()
            raise AssertionError(
                f"gradient mismatch for argument {pos} at index {worst}: compiled "
                f"{np.asarray(g)[worst]!r}, finite differences "
                f"{expected[worst] if np.ndim(expected) else expected!r}"
                f" (|diff| {np.asarray(err)[worst]:.3g} > {np.asarray(bound)[worst]:.3g})")
    return computed if isinstance(wrt, tuple) else computed[0]
