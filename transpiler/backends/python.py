"""The Python backend: generated source printed as Python (``emit.to_source``), compiled with
``compile`` into functions that live in the user's module (``emit.load``), and, for calls with
Python numbers and NumPy arrays of the kinds a call already passed the checks with, a dispatcher
generated per variant that calls the compiled function without the general path's checks
(``fast_path``)."""

from __future__ import annotations

import types
from typing import NamedTuple

import numpy as np

from transpiler import emit
from transpiler.calls import defaults_of
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
          _ndarray_{cells}):
    def dispatch({params}, /, *args, **kwargs):
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
        return _slow_(*[a for a in ({values},) if a is not _missing_], *args, **kwargs)
    return dispatch
"""
_DISPATCH_NAMES = {"_make", "_fast_", "_slow_", "_fn_", "_code_", "_note_", "_keywords_",
                   "_missing_", "_type_", "_float_", "_int_", "_ndarray_", "dispatch", "args",
                   "kwargs", "e", "fast"}

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
    (``Compiled.freshness``: ``fn``'s code and defaults, each global the code or a callee was
    compiled against, each function called by a module's name, each callee's defaults); any
    other call goes to ``slow``.

    It is compiled with ``fn``'s globals, so it reads those globals as ``fn`` does (the
    interpreter caches the look-ups) without writing anything into them: checking a global
    costs what reading it does, whatever their number. None if a global's name would clash
    with the dispatcher's own names."""
    fresh = compiled.freshness(fn)
    names = [name for name, _ in fresh.snapshots]  # (np, np.sin, ...)
    values = [f"a{i}" for i in range(len(kinds))]
    cells: list[str] = []
    objects: list = []

    def cell(obj) -> str:
        cells.append(f"_c{len(cells)}_")
        objects.append(obj)
        return cells[-1]

    tests = []
    for value, kind in zip(values, kinds, strict=True):
        if kind == FLOAT:
            tests.append(f"_type_({value}) is _float_")
        elif kind == NUMBER:
            tests.append(f"(_type_({value}) is _float_ or _type_({value}) is _int_)")
        else:
            tests.append(f"_type_({value}) is _ndarray_ and {value}.dtype is {cell(kind.dtype)}"
                         f" and {value}.ndim == {kind.ndim}")
    checks = [f"{name} is {cell(obj)}" for name, obj in fresh.snapshots]
    checks += [f"{cell(owner)}.{attr} is {cell(obj)}" for owner, attr, obj in fresh.watched]
    own = compiled.defaults if compiled.defaults is not None else defaults_of(fn)
    for function, (positional, *keyword) in ((fn, own), *fresh.defaults):
        f = "_fn_" if function is fn else cell(function)
        checks.append(f"{f}.__defaults__ is {cell(positional)}")
        if keyword:  # (a dict: what it holds is checked, as calls.same_defaults does)
            checks += [f"{f}.__kwdefaults__.get({k!r}, _missing_) is {cell(v)}"
                       for k, v in keyword]
            checks.append(f"len({f}.__kwdefaults__) == {len(keyword)}")
        else:
            checks.append(f"not {f}.__kwdefaults__")
    checks += [f"not {cell(callee.stale)}()" for callee in fresh.foreign]
    clash = _DISPATCH_NAMES | set(values) | set(cells)
    if {n.split(".")[0] for n in names} & clash or "__builtins__" not in fn.__globals__:
        return None
    source = _DISPATCH.format(
        cells="".join(", " + c for c in cells),
        params=", ".join(f"{v}=_missing_" for v in values),
        kinds=" and ".join(tests) if tests else "True",
        keywords="kwargs.keys() == _keywords_" if keywords else "not kwargs",
        fresh="".join(f" and {c}" for c in checks),
        values=", ".join(values), pass_keywords=", **kwargs" if keywords else "")
    namespace: dict = {}
    exec(compile(source, f"<dispatch of {fn.__qualname__}>", "exec"), namespace)
    make = types.FunctionType(namespace["_make"].__code__, fn.__globals__, "_make")
    return make(compiled.function, slow, fn, fn.__code__, note_origin, keywords, _MISSING, type,
                float, int, np.ndarray, *objects)


_MISSING = object()  # a parameter of the dispatcher the caller did not pass
