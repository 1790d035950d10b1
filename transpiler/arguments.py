"""What a call passes: which arguments the rules understand, checked when a gradient is called.

The rules assume NumPy's meaning of every operation: ``x * y`` multiplies elementwise, ``np.sum``
adds every element, ``x.sum()`` is ``np.sum(x)``. Each argument, at any depth inside a tuple,
list or dict, is one of

- *data*: a Python number, string, bytes or None, a NumPy scalar, an ``np.ndarray`` (of a
  subclass that changes none of its operations, and not of dtype object), or a tuple, list or
  dict of data (a NamedTuple or an OrderedDict too, unless it defines a method such as ``sum``
  or ``get`` of its own);
- an *array type of its own* (``np.matrix``, ``np.ma.MaskedArray``, any subclass that overrides
  an operator, a reduction, indexing or NumPy's ``__array_*__`` hooks, a ``scipy.sparse``
  matrix): refused with a TypeError, since ``*`` may be a matrix product or ``sum`` may skip
  masked entries;
- an *object*: anything else. The compiler never takes one of its methods for a NumPy method (the
  variant compiled for the call knows which parameters hold objects: analysis/receivers.py, and
  the class of each dataclass, NamedTuple or class instance: passes/objects.py, which makes its
  methods calls of the user's functions); one with a float or float-array field is
  differentiable, its gradient an instance of its type (runtime/objects.py).

Only the general call path checks (all-float calls go through the backend's fast_path, and a
positional ``np.ndarray`` of exact type is data at a glance).
"""

from __future__ import annotations

import collections
import inspect

import numpy as np

from runtime.arrays import is_array
from runtime.objects import differentiable_value, is_object
from runtime.sparse import is_sparse
from transpiler.rules.methods import METHODS

_ATOMS = frozenset({int, bool, complex, str, bytes, type(None), slice, range, type(Ellipsis)})

# What a subclass may define without changing what NumPy computes: construction, presentation,
# pickling, copying and class plumbing. Any other name that np.ndarray also has is an override
# (an operator, a reduction, T, __getitem__, __array_ufunc__, ...); new names are fine.
_HARMLESS = frozenset({
    "__new__", "__init__", "__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
    "__slots__", "__annotations__", "__firstlineno__", "__static_attributes__", "__orig_bases__",
    "__parameters__", "__repr__", "__str__", "__format__", "__reduce__", "__reduce_ex__",
    "__getstate__", "__setstate__", "__copy__", "__deepcopy__", "__hash__", "__sizeof__",
    "__dir__", "__init_subclass__", "__class_getitem__", "__subclasshook__",
})
_HOOKS = frozenset({"__array_ufunc__", "__array_function__", "__array_wrap__",
                    "__array_finalize__", "__array_prepare__", "__array_priority__", "__array__"})
# np.memmap overrides __getitem__, __array_wrap__ and __array_finalize__ only to decide whether a
# result is still a memmap: the values are ndarray's.
_SAME_VALUES = (np.memmap,)

def overrides(cls: type) -> tuple[str, ...]:
    """The names by which ndarray subclass ``cls`` changes what NumPy computes (empty: none),
    the telling ones first (operators, then the methods the rules stand for)."""
    names: set[str] = set()  # (subclasses reach only the checked call path: not cached)
    for klass in cls.__mro__:
        if klass is np.ndarray or klass in _SAME_VALUES:
            break
        names |= {n for n in vars(klass) if n not in _HARMLESS
                  and (n in _HOOKS or hasattr(np.ndarray, n))}
    return tuple(sorted(names, key=_telling))


def _telling(name: str) -> tuple[int, str]:
    if name.strip("_") in _OPERATORS:
        return 0, name  # __mul__
    if name in METHODS:
        return 1, name  # sum
    if not name.startswith("__"):
        return 2, name
    return 3 if name in _HOOKS or name == "__getitem__" else 4, name


_OPERATORS = frozenset({"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod",
                        "pow", "neg", "pos", "abs", "lt", "le", "eq", "ne", "gt", "ge", "and",
                        "or", "xor", "lshift", "rshift", "invert"})


def refuse_array_type(value, where: str) -> None:
    """Raise the TypeError for an ndarray subclass with operations of its own, at ``where``."""
    cls = type(value)
    names = overrides(cls)
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    masked = " (masking is not differentiated: pass x.filled(0.0), or the mask as an array " \
             "of its own)" if isinstance(value, np.ma.MaskedArray) else ""
    raise TypeError(
        f"{where} is a {cls.__module__}.{cls.__qualname__}, an ndarray subclass that redefines "
        f"{shown}: its operators or reductions may not mean what they mean for np.ndarray, so "
        f"the gradient rules do not apply; pass np.asarray(x) instead{masked}")


def holds_objects(value, where: str) -> bool:
    """Whether ``value`` is or contains an object (see the module docstring); raises TypeError
    for an array type of its own anywhere inside it (``where`` names the value)."""
    t = type(value)
    if t is float or t in _ATOMS:
        return False
    if t is np.ndarray:
        return value.dtype.hasobject  # its elements may be anything
    if isinstance(value, (tuple, list, dict)):
        found = t not in _CONTAINERS and not _plain_container(t)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        if set(map(type, value.values() if isinstance(value, dict) else value)) <= _FLOAT:
            return found  # (a quick look at many floats)
        for k, v in items:
            if is_sparse(v):
                raise TypeError(f"{where}[{k!r}] is a scipy.sparse {type(v).__name__}: sparse "
                                "matrices are supported as arguments of their own, not inside "
                                "containers; pass the matrix as a parameter")
            if type(v) is not float:
                found |= holds_objects(v, f"{where}[{k!r}]")
        return found
    if isinstance(value, np.ndarray):
        if overrides(t):
            refuse_array_type(value, where)
        return value.dtype.hasobject
    if is_sparse(value):
        return False  # (data: the variant knows it, passes/check_kinds.py)
    return not (isinstance(value, np.generic) or is_array(value))  # (a Dask, CuPy array: data)


_CONTAINERS = frozenset({tuple, list, dict})
_FLOAT = frozenset({float})
# dict subclasses whose methods mean what dict's do
_PLAIN_CONTAINERS = (collections.OrderedDict, collections.defaultdict)


def _plain_container(cls: type) -> bool:
    """Whether a subclass of tuple, list or dict (a NamedTuple, an OrderedDict) keeps the
    methods the rules stand for (``copy``, ``get``, ``items``, ...) and its indexing."""
    for klass in cls.__mro__:
        if klass in _CONTAINERS or klass in _PLAIN_CONTAINERS:
            return True
        if any(n in METHODS or n == "__getitem__" for n in vars(klass)):
            return False
    return True


def objects_in(fn, args: tuple, kwargs: dict) -> frozenset[str]:
    """The parameters of ``fn`` that this call gives an object (arguments to ``*args`` and
    ``**kwargs`` count for those parameters), and ``(parameter, class)`` for each given a
    dataclass, NamedTuple or class instance; TypeError for an array type of its own."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] \
        if code.co_flags & inspect.CO_VARARGS else None
    out = set()
    for i, a in enumerate(args):
        name = positional[i] if i < len(positional) else star
        where = f"{fn.__name__}'s argument " + (f"'{name}'" if name else str(i))
        if holds_objects(a, where) and name:
            out.add(name)
        if name and is_object(a):  # its class: methods and properties (passes/objects.py)
            out.add((name, type(a)))
    if kwargs:
        named = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        dstar = code.co_varnames[code.co_argcount + code.co_kwonlyargcount
                                 + bool(star)] if code.co_flags & inspect.CO_VARKEYWORDS else None
        for k, v in kwargs.items():
            if holds_objects(v, f"{fn.__name__}'s argument '{k}'"):
                out.add(k if k in named or dstar is None else dstar)
            if k in named and is_object(v):
                out.add((k, type(v)))
    return frozenset(out)


def defaults_holding_objects(fn) -> frozenset[str]:
    """The parameters whose default value holds an object (TypeError for an array type of its
    own): compiled as if every call left them out."""
    if not fn.__defaults__ and not fn.__kwdefaults__:
        return frozenset()
    params = inspect.signature(fn).parameters.values()
    return frozenset(p.name for p in params if p.default is not p.empty
                     and holds_objects(p.default, f"the default of parameter '{p.name}'"))


def differentiable(value) -> bool:
    """Whether a value can be differentiated with respect to: a float, a NumPy floating scalar
    or array (of a subclass that keeps ndarray's operations), a tuple, list or dict of those, or an
    object (dataclass, NamedTuple, class instance) with such a field."""
    t = type(value)
    if t is float:
        return True
    if is_object(value):  # a dataclass, NamedTuple or class instance with a float field
        return differentiable_value(value)
    if isinstance(value, (tuple, list)):
        return all(type(v) is float or differentiable(v) for v in value)
    if isinstance(value, dict):
        return all(type(v) is float or differentiable(v) for v in value.values())
    if isinstance(value, (np.ndarray, np.floating)) or is_array(value):
        return value.dtype.kind == "f"
    return False
