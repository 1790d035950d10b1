"""check_grad: compare a compiled gradient with central finite differences."""

from __future__ import annotations

import copy

import numpy as np

from runtime.objects import differentiable_value, field_names, is_object
from transpiler.api import grad as _grad


class Field(str):
    """A step of a leaf's path that is an object's field (``.k``), not an index."""


def leaves(x, path=()):
    """(path, value) of every float or array inside ``x`` (tuples, lists, dicts and objects
    nest; an object's fields that are not differentiable are left out)."""
    if is_object(x):
        named = isinstance(x, tuple)  # a NamedTuple: its items, by position
        return [leaf for i, n in enumerate(field_names(x))
                if differentiable_value(getattr(x, n))
                for leaf in leaves(getattr(x, n), path + (i if named else Field(n),))]
    if isinstance(x, (str, bytes)) or x is None:
        return []
    if isinstance(x, dict):
        return [leaf for k in x for leaf in leaves(x[k], path + (k,))]
    if isinstance(x, (tuple, list)):
        return [leaf for i, v in enumerate(x) for leaf in leaves(v, path + (i,))]
    return [(path, x)]


def replace_leaf(x, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, Field):
        out = copy.copy(x)
        object.__setattr__(out, head, replace_leaf(getattr(x, head), rest, value))
        return out
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return type(x)(*(replace_leaf(v, rest, value) if i == head else v
                         for i, v in enumerate(x)))
    if isinstance(x, tuple):
        return tuple(replace_leaf(v, rest, value) if i == head else v for i, v in enumerate(x))
    out = copy.copy(x)
    out[head] = replace_leaf(x[head], rest, value)
    return out


def get_leaf(x, path):
    for key in path:
        x = getattr(x, key) if isinstance(key, Field) else x[key]
    return x


def numeric_grad(f, args: tuple, index: int, eps: float = 1e-6):
    """Central-difference gradient of scalar ``f`` w.r.t. ``args[index]`` (computed in float64).

    For a tuple, list, dict or object argument the result has the same structure."""
    x = args[index]
    result = x
    for path, leaf in leaves(x):
        base = np.array(leaf, dtype=float)
        out = np.zeros_like(base)
        flat, gflat = base.reshape(-1), out.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            step = eps * max(1.0, abs(old))
            values = []
            for sign in (1, -1):
                flat[i] = old + sign * step
                trial = [copy.deepcopy(a) for a in args]  # f may write into its arguments
                moved = base.copy() if isinstance(leaf, np.ndarray) else float(base)
                trial[index] = replace_leaf(trial[index], path, moved)
                values.append(float(np.sum(f(*trial))))
            flat[i] = old
            gflat[i] = (values[0] - values[1]) / (2 * step)
        result = replace_leaf(result, path, out if isinstance(leaf, np.ndarray) else float(out))
    return result


def check_grad(f, *args, wrt=0, rtol: float = 1e-5, atol: float = 1e-6, optimize: bool = True):
    """Raise AssertionError, naming the worst entry, when grad(f) and finite differences differ.

    ``wrt`` takes an int position or a tuple of positions. Returns the compiled gradient(s).
    """
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    computed = _grad(f, wrt=positions, optimize=optimize)(*args)
    for pos, g in zip(positions, computed, strict=True):
        expected = numeric_grad(f, args, pos)
        for path, want in leaves(expected):
            label = f"argument {pos}" + "".join(f".{k}" if isinstance(k, Field) else f"[{k!r}]"
                                                for k in path)
            _compare(get_leaf(g, path), want, get_leaf(args[pos], path), label, rtol, atol)
    return computed if isinstance(wrt, tuple) else computed[0]


def _compare(got, expected, arg, label: str, rtol: float, atol: float) -> None:
    if np.shape(got) != np.shape(arg):
        raise AssertionError(f"gradient for {label} has shape {np.shape(got)}, "
                             f"expected {np.shape(arg)}")
    err = np.abs(np.asarray(got, dtype=float) - expected)
    bound = atol + rtol * np.abs(expected)
    if np.any(~(err <= bound)):
        worst = np.unravel_index(np.argmax(err - bound), np.shape(err)) if np.ndim(err) else ()
        raise AssertionError(
            f"gradient mismatch for {label} at index {worst}: compiled "
            f"{np.asarray(got)[worst]!r}, finite differences {np.asarray(expected)[worst]!r} "
            f"(|diff| {np.asarray(err)[worst]:.3g} > {np.asarray(bound)[worst]:.3g})")
