"""Gradients of objects: dataclass, NamedTuple and class instances read as records of fields.

An object's gradient, during the sweep, is a ``GradFields``: the gradients of the fields that
were read (``p.k``), by name; a field nothing flowed into is absent (zero), and ``+`` adds field
by field. A NamedTuple's gradient is a tuple gradient (its fields are its items). At the end
``gradient_object`` gives the caller an instance of the argument's own type: a shallow copy
whose float and array fields (and nested objects and containers of them) hold their gradients,
the others (ints, strings, None, ...) copied from the argument. Writes ``o.a = v`` in compiled
code are ``o = rt.with_field(o, "a", v)``: a copy, so the caller's object is never modified.

This module depends on ``runtime.arrays`` and ``runtime.containers`` only.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import types

import numpy as np

from runtime.arrays import is_array, is_zero, zeros
from runtime.containers import CONTAINERS, GradTuple, unindex_container
from runtime.sparse import is_sparse


class GradFields(dict):
    """The gradient of an object: field name -> gradient (absent: zero); ``+`` adds fields."""

    def __add__(self, other):
        if is_zero(other):
            return self
        out = GradFields(self)
        for k, v in other.items():
            out[k] = out[k] + v if k in out else v
        return out

    __radd__ = __add__


def is_object(x) -> bool:
    """Whether ``x`` is an object whose fields hold its values: a dataclass or class instance
    (with a ``__dict__`` or ``__slots__``), a NamedTuple; not data, a class, a function or a
    module."""
    if isinstance(x, tuple):
        return hasattr(type(x), "_fields")
    if isinstance(x, (float, int, complex, str, bytes, list, dict, np.ndarray, np.generic,
                      type, types.ModuleType)) or x is None or is_array(x) \
            or callable(x) and not _called_object(x):
        return False
    return hasattr(x, "__dict__") or hasattr(type(x), "__slots__")


_LIBRARIES = frozenset({"builtins", "numpy", "scipy", "functools", "math", "operator",
                        "collections", "typing", "transpiler", "runtime", "dask", "numba"})


def _called_object(x) -> bool:
    """Whether a callable ``x`` is an instance of a class whose ``__call__`` is the user's
    (a layer, a model): an object with fields, not a function (nor a library's operator
    subclassed)."""
    call = getattr(type(x), "__call__", None)
    return not inspect.isroutine(x) and not isinstance(x, functools.partial) \
        and inspect.isfunction(call) \
        and (call.__module__ or "").split(".")[0] not in _LIBRARIES


def field_names(x) -> tuple[str, ...]:
    """The names of ``x``'s fields: a dataclass's fields, a NamedTuple's, the instance
    attributes (``__dict__`` and ``__slots__``) of any other object."""
    if isinstance(x, tuple):
        return tuple(getattr(type(x), "_fields", ()))
    if dataclasses.is_dataclass(x):  # (the fields set: rt.new's instance has none yet)
        names = [f.name for f in dataclasses.fields(x) if hasattr(x, f.name)]
        return tuple(names + [n for n in getattr(x, "__dict__", ()) if n not in names])
    names = list(getattr(x, "__dict__", ()))
    for klass in type(x).__mro__:
        slots = vars(klass).get("__slots__", ())
        names += [s for s in ((slots,) if isinstance(slots, str) else slots)
                  if s not in ("__dict__", "__weakref__") and hasattr(x, s)]
    return tuple(names)


def field(obj, name):
    """``obj.name``: the key of a field read's rule."""
    return getattr(obj, name)


_ARRAY_VIEWS = {"T": np.transpose, "mT": lambda g: np.swapaxes(g, -1, -2),
                "real": lambda g: g}  # an array attribute's adjoint, for a real array


def unfield(g, obj, name):
    """The gradient of ``obj.name`` for ``obj``: ``g`` at that field. Refuses what is not a
    field of the instance (a property, a class attribute computed from others)."""
    if isinstance(obj, np.ndarray) and name in _ARRAY_VIEWS:  # (a value the compiler could
        return _ARRAY_VIEWS[name](g)  # not tell from an object: an array's own linear views)
    if not is_object(obj):
        raise TypeError(f"the attribute .{name} of a {type(obj).__name__} was read where an "
                        "object was expected: its gradient is not a field's")
    if isinstance(obj, tuple):
        return unindex_container(g, obj, type(obj)._fields.index(name))
    if name not in field_names(obj):
        if _constant(type(obj), name):
            return GradFields()  # a class attribute: a constant
        raise TypeError(f"{type(obj).__qualname__}.{name} is not a field of the instance (a "
                        "property or an attribute computed on access): its gradient cannot be "
                        "traced through an object of unknown class; read the fields it is "
                        "computed from instead")
    return GradFields({name: g})


def _constant(cls, name: str) -> bool:
    """Whether ``name`` is a plain class attribute of ``cls`` (not a property, a method or
    another descriptor, and not computed by ``__getattr__``)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return not hasattr(vars(klass)[name], "__get__")
    return False


def field_tangent(t, obj, name):
    """Tangent of ``obj.name``: the field of the object's tangent (zeros when it has none)."""
    if isinstance(obj, np.ndarray) and name in _ARRAY_VIEWS:  # (a value the compiler could
        return _ARRAY_VIEWS[name](t)  # not tell from an object: an array's own linear views)
    if not is_object(obj):
        raise TypeError(f"the attribute .{name} of a {type(obj).__name__} was read where an "
                        "object was expected: its tangent is not a field's")
    value = getattr(obj, name)
    if not differentiable_value(value):  # an int or a string: copied, not a tangent
        return 0.0
    if not isinstance(obj, tuple) and name not in field_names(obj):
        if _constant(type(obj), name):
            return zeros_like_field(value)  # a class attribute: a constant
        raise TypeError(f"{type(obj).__qualname__}.{name} is not a field of the instance (a "
                        "property or an attribute computed on access): its tangent cannot be "
                        "traced through an object of unknown class; read the fields it is "
                        "computed from instead")
    if is_zero(t):
        part = 0.0
    elif isinstance(t, GradFields):
        part = t.get(name, 0.0)
    elif isinstance(t, GradTuple) or not hasattr(t, name):
        part = t[type(obj)._fields.index(name)]
    else:
        part = getattr(t, name)
    return zeros_like_field(value) if is_zero(part) else part


def zeros_like_field(value):
    """The zero gradient of a field's value: zeros of an array's shape, else 0.0."""
    if is_array(value):
        return zeros(value.shape, value.dtype if value.dtype.kind == "f" else float, like=value)
    return 0.0


def with_field(obj, name, value):
    """``obj.name = value`` on a shallow copy of ``obj`` (the original is not modified)."""
    if not is_object(obj):
        raise TypeError(f"an attribute of a {type(obj).__name__} was assigned where an object "
                        "of a class of yours was expected")
    setter = inspect.getattr_static(type(obj), name, None)
    if hasattr(setter, "__set__") and not inspect.ismemberdescriptor(setter):
        raise TypeError(f"{type(obj).__qualname__}.{name} is a property (or another "
                        "descriptor) with a setter: its gradient would not follow what the "
                        "setter stores; assign the field it stores instead")
    new = copy.copy(obj)
    setattr(new, name, value)
    return new


def unwith_field(g, name):
    """The gradient of ``with_field(obj, name, value)`` for ``obj``: ``g`` without that field."""
    if is_zero(g):
        return g
    out = GradFields(g)
    out.pop(name, None)
    return out


def field_grad(g, value, name):
    """The gradient of ``with_field(obj, name, value)`` for ``value``: ``g``'s field."""
    if is_zero(g):
        part = 0.0
    elif isinstance(g, GradFields):
        part = g.get(name, 0.0)
    else:  # an instance of the object's type (a seed given to vjp)
        part = getattr(g, name, 0.0)
    return zeros_like_field(value) if is_zero(part) else part


def with_field_tangent(t_obj, obj, name, t_value):
    """Tangent of ``with_field(obj, name, value)``: the object's tangent with that field."""
    out = GradFields() if is_zero(t_obj) else GradFields(t_obj) \
        if isinstance(t_obj, GradFields) else GradFields(
            {n: field_tangent(t_obj, obj, n) for n in field_names(obj)})
    out[name] = t_value
    return out


def replaced(obj, names, values):
    """``dataclasses.replace(obj, **dict(zip(names, values)))`` (a NamedTuple's ``_replace``)."""
    changes = dict(zip(names, values, strict=True))
    if isinstance(obj, tuple):
        return obj._replace(**changes)
    return dataclasses.replace(obj, **changes)


def replaced_grad(g, obj, names):
    """The gradient of ``replaced(obj, names, values)`` for ``obj`` (any kind of object)."""
    if isinstance(obj, tuple):
        if is_zero(g):
            return g
        out = list(g)
        for n in names:
            i = type(obj)._fields.index(n)
            out[i] = zeros_like_field(obj[i])
        return GradTuple(out)
    if is_zero(g):
        return g
    out = GradFields(g)
    for n in names:
        out.pop(n, None)
    return out


def replaced_values_grad(g, obj, names):
    """The gradient of ``replaced(obj, names, values)`` for ``values``: those fields' gradients."""
    return GradTuple(field_tangent(g, obj, n) for n in names)


def replaced_tangent(t_obj, obj, names, t_values):
    """Tangent of ``replaced(obj, names, values)``."""
    if isinstance(obj, tuple):
        out = list(t_obj) if not is_zero(t_obj) else [zeros_like_field(v) for v in obj]
        for n, t in zip(names, t_values, strict=True):
            out[type(obj)._fields.index(n)] = t
        return GradTuple(out)
    out = with_field_tangent(t_obj, obj, names[0], t_values[0])
    for n, t in zip(names[1:], t_values[1:], strict=True):
        out[n] = t
    return out


def gradient_object(g, x, like):
    """Gradient ``g`` of object ``x`` as an instance of its type (``like(gradient, value)``
    shapes each field's): a shallow copy whose differentiable fields hold their gradients."""
    if isinstance(x, tuple):
        items = [like(0.0 if is_zero(g) else g[i], v) if differentiable_value(v) else v
                 for i, v in enumerate(x)]
        return type(x)(*items)
    out = copy.copy(x)
    for name in field_names(x):
        value = getattr(x, name)
        if differentiable_value(value):
            part = g.get(name, 0.0) if isinstance(g, GradFields) else \
                0.0 if is_zero(g) else getattr(g, name)
            object.__setattr__(out, name, like(part, value))
    return out


def differentiable_value(v) -> bool:
    """Whether a field's value has a gradient: a float, a floating array or scalar, a container
    of those, or an object with such fields."""
    if type(v) is float or isinstance(v, np.floating):
        return True
    if is_array(v):
        return v.dtype.kind == "f"
    if isinstance(v, CONTAINERS) and not (isinstance(v, tuple) and hasattr(type(v), "_fields")):
        items = v.values() if isinstance(v, dict) else v
        return any(differentiable_value(i) for i in items)
    return is_object(v) and any(differentiable_value(getattr(v, n)) for n in field_names(v))


def owned(obj):
    """A shallow copy of an argument that a call changes (the caller's object never is), or of
    an array a loop then writes into in place (passes/inplace.py): a writable one, of its own
    (a scipy.sparse matrix's storage too: a shallow copy of a lil_matrix shares its rows)."""
    if is_sparse(obj):
        return obj.copy()
    return copy.copy(obj)


def new(cls):
    """``cls.__new__(cls)``: an instance whose ``__init__`` runs next (passes/objects.py)."""
    return cls.__new__(cls)


def construct(cls, names, values):
    """``cls(**dict(zip(names, values)))``: a dataclass or NamedTuple built from its fields."""
    return cls(**dict(zip(names, values, strict=True)))


def constructed_tangent(ans, names, t_values):
    """Tangent of ``construct(cls, names, values)``: the fields' tangents."""
    if isinstance(ans, tuple):
        out = [zeros_like_field(v) for v in ans]
        for n, t in zip(names, t_values, strict=True):
            out[type(ans)._fields.index(n)] = t
        return GradTuple(out)
    return GradFields(zip(names, t_values, strict=True))


def of_class(x, cls, where):
    """``x``, checked to be of class ``cls``: the class the field it was read from declares,
    whose method a call of it was compiled as (``self.spring.force(x)``)."""
    if type(x) is cls:
        return x
    raise TypeError(f"{where} holds a {type(x).__qualname__}, not the {cls.__qualname__} its "
                    "class declares: its methods were compiled as that class's")


def data(x, where):
    """``x``, checked to be data (a number, an array or NumPy scalar, a tuple, list or dict)
    where NumPy's meaning of a method is applied to an object's field (``self.u.copy()``)."""
    t = type(x)
    if t in (float, int, bool, np.ndarray, tuple, list, dict) or isinstance(x, np.generic) \
            or is_array(x):  # (a Dask or CuPy array: NumPy's methods, its namespace's code)
        return x
    raise TypeError(f"{where} is a {t.__qualname__}: its methods are differentiated as NumPy's "
                    "only on a number, a NumPy array or a tuple, list or dict; call the NumPy "
                    "function on an array instead")
