"""Functions given as arguments of the differentiated function (``simulate(y0, k, rhs)``).

A call giving a parameter a function runs a variant compiled for that function: its
``rhs(y, k)`` calls it directly (``Context.known``, passes/functions.py), as a helper compiled for
the function a caller passes it. Functions are never differentiated; what they close over or
bind is read when they run.

The function joins the variant key as a ``Passed``, equal for two functions that calling does
the same with: a ``def`` or lambda of the same code, globals, closure cells and defaults (a
lambda made anew at each call, in the same place, reuses the variant: its cells are its
maker's), unless a cell or a global it names now holds another object than a number, string or
array (a function it calls is resolved when it compiles); a partial of the same function and
arguments; a method of the same object; a ufunc or builtin is itself.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS


def is_function(value) -> bool:
    """Whether a call can be compiled for ``value`` given as an argument: a ``def`` or lambda,
    a partial, a method, a ufunc, a builtin, a function with a rule (not a class or an object
    with ``__call__``, whose meaning is the object's)."""
    if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
                          functools.partial, np.ufunc)):
        return True
    if not callable(value):
        return False
    try:
        return value in ADJOINTS or value in NONDIFF
    except TypeError:  # unhashable
        return False


class Passed:
    """A function given as an argument, in a variant key (see the module docstring). It holds
    the function and what its closure cells hold now, so the identities it compares stay those
    of live objects."""

    __slots__ = ("function", "_key", "_held")

    def __init__(self, function):
        self._held: list = []
        self.function, self._key = function, _identity(function, self._held)

    def __eq__(self, other) -> bool:
        return isinstance(other, Passed) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Passed({self.function!r})"


_ATOMS = (float, int, bool, complex, str, type(None))


def _value(v, held: list):
    """An argument a partial or a default binds: a number or string by value, else the
    object itself."""
    if type(v) in _ATOMS:
        return type(v), repr(v)
    held.append(v)
    return id(v)


def _read(v, held: list):
    """A value the function reads from a closure cell or a global: a number, string or array
    is read when it runs (its type suffices), anything else may be resolved when it compiles (a
    function it calls, an object whose method it calls), so it is the object itself."""
    if type(v) in _ATOMS:
        return type(v)
    if type(v) is np.ndarray:
        return v.dtype.char
    held.append(v)
    return id(v)


def _cell(cell, held: list):
    try:
        return _read(cell.cell_contents, held)
    except ValueError:  # empty
        return None


def _identity(f, held: list) -> tuple:
    if isinstance(f, types.FunctionType):
        cells, found = f.__closure__ or (), f.__globals__
        return ("def", id(f.__code__), id(found), tuple(map(id, cells)),
                tuple(_cell(c, held) for c in cells),
                tuple(_read(found[n], held) for n in f.__code__.co_names if n in found),
                tuple(_value(v, held) for v in f.__defaults__ or ()),
                tuple((k, _value(v, held)) for k, v in (f.__kwdefaults__ or {}).items()))
    if isinstance(f, types.MethodType):
        return "method", _identity(f.__func__, held), id(f.__self__)
    if isinstance(f, functools.partial):
        return ("partial", _identity(f.func, held), tuple(_value(v, held) for v in f.args),
                tuple((k, _value(v, held)) for k, v in f.keywords.items()))
    return "is", id(f)


class Functions(tuple):
    """The end of a variant key: ``(parameter, Passed)`` for each parameter a call gives a
    function, defaults it leaves included (sorted by parameter)."""


def functions_in(fn, args: tuple, kwargs: dict) -> Functions | None:
    """The functions this call gives ``fn``'s named parameters, defaults it leaves included;
    None if it gives none and ``fn`` has no default that is one."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    named = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    given = dict(zip(positional, args, strict=False))  # (what *args receives: not named)
    given.update((k, v) for k, v in kwargs.items() if k in named)
    found = [(name, Passed(value)) for name, value in given.items() if is_function(value)]
    if not found and not defaults_left(fn, ()):
        return None
    return Functions(sorted(found + list(defaults_left(fn, given)), key=lambda item: item[0]))


def defaults_left(fn, given) -> Functions:
    """``(parameter, Passed)`` for each parameter whose default is a function and that is not
    in ``given`` (names, or a count of positional arguments)."""
    code, defaults, keywords = fn.__code__, fn.__defaults__ or (), fn.__kwdefaults__ or {}
    if isinstance(given, int):
        given = code.co_varnames[:given]
    first = code.co_argcount - len(defaults)
    found = list(zip(code.co_varnames[first:code.co_argcount], defaults, strict=True))
    return Functions((name, Passed(value)) for name, value in found + sorted(keywords.items())
                     if name not in given and is_function(value))


def known(functions: Functions | tuple) -> tuple:
    """``Context.known`` for a variant: each parameter's function, binding nothing more."""
    return tuple((name, passed.function, 0, ()) for name, passed in functions)
