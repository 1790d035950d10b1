"""The Python backend: generated source printed as Python (``emit.to_source``), compiled with
``compile`` into functions that live in the user's module (``emit.load``), and, for calls with
Python numbers and NumPy arrays of the kinds a call already passed the checks with, a dispatcher
generated per variant that calls the compiled function without the general path's checks
(``fast_path``)."""

from __future__ import annotations

import types
from typing import NamedTuple

import numpy as np

from transpiler import emit, freshness
from transpiler.emit import note_origin

NAME = "python"


def source(tree, bindings: dict) -> str:
    """The text of the compiler's final tree, as the code this backend runs (``bindings``: the
    values it refers to by name, which a backend may add to)."""
    return emit.to_source(tree)


def load(text: str, names: list[str], label: str, fn, bindings: dict) -> list:
    """The functions ``names`` defined by ``text`` (see ``emit.load``)."""
    return emit.load(text, names, label, fn, bindings)


_DISPATCH = """\
def _make(_fast_, _slow_, _fn_, _code_, _note_, _keywords_, _missing_, _type_, _float_, _int_,
          _ndarray_, _rebuilt_{cells}):
    def dispatch({params}, *args, **kwargs):
        try:
            fast = {kinds} and not args and {keywords} and _fn_.__code__ is _code_{fresh}
        except (NameError, AttributeError):  # a global deleted: the general path tells
            fast = False
        if fast:
            try:
                return _fast_({values}{pass_keywords})
            except Exception as e:
                _note_(e)  # name the user's line the failing statement came from
                raise
        positional, kwargs = _rebuilt_(({values},), {names}, args, kwargs)
        return _slow_(*positional, **kwargs)
    return dispatch
"""
_DISPATCH_NAMES = {"_make", "_fast_", "_slow_", "_fn_", "_code_", "_note_", "_keywords_",
                   "_missing_", "_type_", "_float_", "_int_", "_ndarray_", "_rebuilt_",
                   "dispatch", "args", "kwargs", "e", "fast", "positional"}

FLOAT, NUMBER = "float", "number"  # kinds of fast_path: a Python float, a float or an int


class ArrayOf(NamedTuple):
    """A kind of fast_path: a NumPy array of ``ndim`` dimensions and this very ``dtype``
    object (NumPy's builtin dtypes are shared; another equal one takes the general path)."""
    ndim: int
    dtype: np.dtype


def fast_path(fn, compiled, kinds: tuple, keywords: frozenset, slow):
    """A function taking ``fn``'s arguments that calls ``compiled.function`` directly when its
    positional arguments are of ``kinds`` (one each: ``FLOAT``, a Python float; ``NUMBER``, a
    float or an int; ``ArrayOf``, a NumPy array of that ndim and dtype), it is given exactly
    the keyword arguments ``keywords``, and ``compiled`` is not stale for ``fn``
    (``freshness.depends``: ``fn``'s code and defaults, each global the code or a callee was
    compiled against, each function called by a module's name, each callee's defaults); any
    other call goes to ``slow``.

    It is compiled with ``fn``'s globals, so it reads those globals as ``fn`` does (the
    interpreter caches the look-ups) without writing anything into them: checking a global
    costs what reading it does, whatever their number. None if a global's name would clash
    with the dispatcher's own names."""
    code = fn.__code__
    values = list(code.co_varnames[:len(kinds)])  # (by name: a keyword call takes it too)
    if not kinds or len(values) < len(kinds) or set(values) & _DISPATCH_NAMES or any(
            v.startswith("_c") and v.endswith("_") for v in values):
        return None
    cell = freshness.Cells()
    tests = []
    for value, kind in zip(values, kinds, strict=True):
        if kind == FLOAT:
            tests.append(f"_type_({value}) is _float_")
        elif kind == NUMBER:
            tests.append(f"(_type_({value}) is _float_ or _type_({value}) is _int_)")
        else:
            tests.append(f"_type_({value}) is _ndarray_ and {value}.dtype is {cell(kind.dtype)}"
                         f" and {value}.ndim == {kind.ndim}")
    checks = freshness.conditions(fn, compiled, cell, own="_fn_")
    if freshness.clashes(fn, compiled, _DISPATCH_NAMES | set(values) | set(cell.names)):
        return None
    params = [f"{v}=_missing_" for v in values]
    if code.co_posonlyargcount:  # (those the function takes by position only)
        params.insert(min(code.co_posonlyargcount, len(params)), "/")
    source = _DISPATCH.format(
        cells=cell.parameters(), names=repr(tuple(values)),
        params=", ".join(params),
        kinds=" and ".join(tests) if tests else "True",
        keywords="kwargs.keys() == _keywords_" if keywords else "not kwargs",
        fresh="".join(f" and {c}" for c in checks),
        values=", ".join(values), pass_keywords=", **kwargs" if keywords else "")
    namespace: dict = {}
    exec(compile(source, f"<dispatch of {fn.__qualname__}>", "exec"), namespace)
    make = types.FunctionType(namespace["_make"].__code__, fn.__globals__, "_make")
    dispatch = make(compiled.function, slow, fn, fn.__code__, note_origin, keywords, _MISSING,
                    type, float, int, np.ndarray, _rebuilt, *cell.objects)
    dispatch.__name__ = dispatch.__qualname__ = compiled.function.__name__  # (in messages)
    return dispatch


_MISSING = object()  # a parameter of the dispatcher the caller did not pass


def _rebuilt(values: tuple, names: tuple, args: tuple, kwargs: dict) -> tuple[list, dict]:
    """The call the dispatcher was given, to pass on as it was made: the values of its named
    parameters up to the first not given by position, the others (given by keyword) by name."""
    gap = next((k for k, v in enumerate(values) if v is _MISSING), len(values))
    positional = [*values[:gap], *args]
    keywords = {names[k]: v for k, v in enumerate(values) if k > gap and v is not _MISSING}
    keywords.update(kwargs)
    return positional, keywords
