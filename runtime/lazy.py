"""What a gradient of lazy arrays (Dask) computes, and when: all at once, at the end.

Generated code runs on a Dask array as on a NumPy one and builds one graph: the forward
sweep's and the backward sweep's. Nothing is computed on the way, except what Python itself
needs concrete (a branch on a Dask value, ``float(x)``). At the end ``concrete`` computes, in one
``dask.compute`` call, every result that must be concrete: the gradient of a NumPy array or a
number, and the value (unless every argument differentiated is lazy, when value and gradients
stay lazy for the caller's own single ``dask.compute``). One call thus reads each input chunk
once where the code allows it.

``no_fallbacks`` turns Dask's fallback for a NumPy function it does not implement (compute the
arguments, call NumPy, warn) into a TypeError naming the function: the fallback would read the
data again and give a NumPy result where a Dask one belongs. It does the same for an error
Dask raises while building the graph (a chunking it cannot handle, a keyword or method it lacks,
a size it cannot know before computing): the TypeError names the function, the original error
is chained.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import re
import warnings

import numpy as np

from runtime.arrays import is_lazy

__all__ = ["CONCRETE", "LAZY", "any_lazy", "concrete", "is_lazy", "no_fallbacks"]

LAZY = object()  # the ``like`` of a result that stays lazy
CONCRETE = object()  # the ``like`` of a result computed as it comes (the value)

_FALLBACK = r"The `.*` function is not implemented by Dask array"


def any_lazy(values) -> bool:
    """Whether ``values`` (arguments, or results) hold a lazy array, at the top level or in a
    tuple, list or dict."""
    for v in values:
        if is_lazy(v):
            return True
        if isinstance(v, (tuple, list)) and any_lazy(v):
            return True
        if isinstance(v, dict) and any_lazy(v.values()):
            return True
    return False


def concrete(result, like):
    """``result`` with each lazy part whose ``like`` is not lazy computed, all in one
    ``dask.compute``: as a NumPy array of the ``like`` array's dtype and shape, a float for a
    float, a NumPy scalar for ``CONCRETE``. ``like`` mirrors ``result`` (tuples, lists, dicts,
    objects' fields); ``LAZY`` keeps a part as it is."""
    pending: list = []
    _walk(result, like, pending.append)
    if not pending:
        return result
    dask = importlib.import_module("dask")
    values = iter(dask.compute(*[v for v, _ in pending]))
    return _walk(result, like, lambda item: _as_like(next(values), item[1]))


def _walk(value, like, visit):
    """``value`` rebuilt with ``visit((part, like))`` in place of each lazy part to compute."""
    if is_lazy(value):
        if like is LAZY or is_lazy(like):
            return value
        return visit((value, like))
    if isinstance(value, (tuple, list)):
        likes = like if isinstance(like, (tuple, list)) and len(like) == len(value) else \
            [like] * len(value)
        items = [_walk(v, k, visit) for v, k in zip(value, likes, strict=True)]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)._make(items) if hasattr(type(value), "_make") else type(value)(items)
    if isinstance(value, dict):
        out = {k: _walk(v, like.get(k, like) if isinstance(like, dict) else like, visit)
               for k, v in value.items()}
        if all(out[k] is v for k, v in value.items()):
            return value
        fresh = copy.copy(value)
        fresh.update(out)
        return fresh
    fields = getattr(value, "__dict__", None)
    if fields is not None and not isinstance(value, type):  # an object's gradient: its fields
        out = {k: _walk(v, getattr(like, k, like), visit) for k, v in fields.items()}
        if all(out[k] is v for k, v in fields.items()):
            return value
        fresh = copy.copy(value)
        for k, v in out.items():
            object.__setattr__(fresh, k, v)
        return fresh
    return value


def _as_like(v, like):
    """Computed ``v`` of the type of ``like``: an array, a float, a NumPy scalar."""
    if isinstance(like, np.ndarray):
        return np.array(v, dtype=like.dtype).reshape(like.shape)
    if type(like) is float:
        return float(v)
    if isinstance(like, np.generic):
        return like.dtype.type(v)
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


@contextlib.contextmanager
def no_fallbacks():
    """Within: a NumPy function that Dask does not implement, or cannot run on the arrays it is
    given, raises TypeError naming it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=_FALLBACK, category=FutureWarning)
        try:
            yield
        except FutureWarning as e:
            named = re.match(r"The `(.*?)` function", str(e))
            if named is None:
                raise
            name = named[1].replace("numpy.", "np.", 1)
            hint = " (use the array's .size)" if name == "np.size" else ""
            raise TypeError(f"{name} is not implemented for Dask arrays: Dask would compute its "
                            "arguments and call NumPy, reading the data again; use a function "
                            f"Dask implements{hint}, compute that value first, or pass NumPy "
                            "arrays").with_traceback(e.__traceback__) from None
        except (ValueError, TypeError, NotImplementedError, AttributeError, IndexError,
                RecursionError) as e:
            name = _dask_function(e)
            if name is None and _unknown_size(e):
                raise TypeError("a Dask array of unknown size (from a boolean mask, np.compress "
                                "or np.extract) cannot be differentiated: Dask knows its shape "
                                "only once computed; keep the shape (np.where(mask, x, 0.0) "
                                "in place of x[mask]) or pass NumPy arrays"
                                ).with_traceback(e.__traceback__) from e
            if name is None:
                raise
            reason = (str(e).strip().splitlines() or [""])[0]
            raise TypeError(f"{name} cannot run on these Dask arrays ({type(e).__name__}: "
                            f"{reason}); where their chunks are the reason, rechunk them (into "
                            "one chunk along the axes it works on), else compute that value "
                            "first or pass NumPy arrays").with_traceback(e.__traceback__) from e


def _dask_function(e: BaseException) -> str | None:
    """The NumPy function or Dask method that raised ``e`` while Dask built a graph (None when
    Dask was not involved, or was running a task: the error is then the computation's own)."""
    if isinstance(e, AttributeError) and is_lazy(getattr(e, "obj", None)):
        return f"the method .{e.name}"  # (Dask arrays lack some of NumPy's methods)
    method = re.match(r"Array\.(\w+)\(\)", str(e))  # (a signature of its own)
    if method and isinstance(e, TypeError):
        return f"the method .{method[1]}"
    first = None
    tb = e.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.startswith(("dask.local", "dask.threaded", "distributed")):
            return None  # (a task of a computation raised it)
        if first is None and module.startswith("dask.array"):
            first = tb.tb_frame
        tb = tb.tb_next
    if first is None:
        return None
    code, local = first.f_code.co_name, first.f_locals
    if code == "__array_function__" and callable(local.get("func")):
        return _numpy_name(local["func"])
    if code == "__array_ufunc__" and local.get("numpy_ufunc") is not None:
        return f"np.{local['numpy_ufunc'].__name__}"
    if is_lazy(local.get("self")):
        return f"the method .{code}"
    return f"dask.array.{code}"


def _unknown_size(e: BaseException) -> bool:
    """Whether a frame of ``e``'s traceback held a Dask array of unknown shape (NaN sizes)."""
    tb = e.__traceback__
    while tb is not None:
        for v in tb.tb_frame.f_locals.values():
            if is_lazy(v) and any(n != n for n in v.shape):
                return True
        tb = tb.tb_next
    return False


def _numpy_name(func) -> str:
    """``np.linalg.qr`` for ``numpy.linalg.qr`` (a NumPy function's public name)."""
    module = getattr(func, "__module__", "") or ""
    public = "np" + module[len("numpy"):] if module.startswith("numpy") and \
        not module.startswith("numpy._") else "np"
    return f"{public}.{func.__name__}"
