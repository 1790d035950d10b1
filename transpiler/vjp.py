"""Vector-Jacobian products, Jacobians, and (by running a generated gradient in forward mode)
Hessian-vector products and Hessians.

``vjp(f, *args)`` runs ``f``'s compiled forward half once and returns its value with a pullback;
``pullback(seed)`` runs the backward half (the forward again when called more than once: the
tape of a loop is spent by one backward sweep). ``jacobian(f, wrt)`` pulls back one unit seed
per output element.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, cast

import numpy as np

import runtime as rt
from runtime.objects import field_names, is_object
from runtime.sparse import is_sparse
from transpiler import pipeline
from transpiler.api import grad, wrt_of
from transpiler.arguments import differentiable, objects_in
from transpiler.backends import check_backend
from transpiler.calls import split_pair
from transpiler.context import Options
from transpiler.function_args import functions_in, known
from transpiler.gradient import check_function, normalise_wrt, refuse_shared_memory
from transpiler.jvp import ForwardFunction, jvp


def vjp(f, *args, optimize: bool = True, backend: str = "python"):
    """``(value, pullback)``: ``pullback(seed)`` returns one gradient per positional argument
    (JAX's convention), None for an argument that cannot be differentiated (an int, a bool).
    ``f`` may return a scalar, an array or a tuple (then ``seed`` is a tuple). Complex
    arguments and results follow JAX's convention too: ``seed`` is the gradient of a real loss
    at the (complex) result, and so is what the pullback returns at each argument."""
    check_function(f)
    params = [p.name for p in inspect.signature(f).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:len(args)]
    star = next((p.name for p in inspect.signature(f).parameters.values()
                 if p.kind == p.VAR_POSITIONAL), None)
    if len(params) < len(args) and star is not None:
        raise TypeError(f"vjp: {f.__name__} receives {len(args) - len(params)} of these "
                        f"arguments in *{star}, which cannot be differentiated yet; give each a "
                        f"parameter of its own (def {f.__name__}(x, y, ...)), or pass the arrays "
                        "as one tuple")
    if len(params) < len(args):
        raise TypeError(f"vjp: {f.__name__} takes {len(params)} positional arguments, "
                        f"{len(args)} given")
    for name, a in zip(params, args, strict=True):
        if isinstance(a, np.complexfloating) or any(np.iscomplexobj(v) for v in (
                a.values() if isinstance(a, dict) else a if isinstance(a, (tuple, list)) else ())):
            raise TypeError(f"vjp: argument '{name}' holds complex numbers in a container or is "
                            "a NumPy complex scalar; complex numbers are taken as a Python "
                            "complex or a complex NumPy array")
    pair, active = split(f, params, args, optimize, backend)
    value, residuals = pair.forward(*args)
    spent = False

    def pullback(seed):
        nonlocal residuals, spent
        check_seed(seed, value, f.__name__)
        if spent:  # one backward sweep consumes the tape: run forward again
            residuals = pair.forward(*args)[1]
        spent = True
        grads = iter(pair.backward(residuals, seed))
        return rt.distinct(tuple(rt.grad_like(next(grads), a) if p in active else None
                                 for p, a in zip(params, args, strict=True)))

    return value, pullback


def split(f, params: list, args: tuple, optimize: bool = True, backend: str = "python"):
    """``f``'s split pair (forward half, backward half) for a call with ``args`` (bound to
    its positional ``params``), and the names of the arguments it differentiates: every float,
    complex number and float or complex array."""
    objects = objects_in(f, args, {})  # (refusing array types of their own)
    active = tuple(p for p, a in zip(params, args, strict=True)
                   if type(a) in (float, complex) or differentiable(a) or (
                       type(a) is np.ndarray and a.dtype.kind == "c"))
    check_backend(backend)
    complex_values = frozenset(p for p, a in zip(params, args, strict=True)
                               if type(a) is complex or np.iscomplexobj(a))
    pair = split_pair(pipeline.compile_function, f, active, Options(optimize, backend=backend),
                      called=False, objects=objects,
                      known=known(functions_in(f, args, {}) or ()),
                      complex_values=complex_values,
                      sparse_values=frozenset(p for p, a in zip(params, args, strict=True)
                                              if is_sparse(a)))
    if pair.written:
        refuse_shared_memory(f, pair.written, args, {})
    return pair, active


def check_seed(seed, value, name: str, where: str = "") -> None:
    """Raise ValueError unless ``seed`` has the structure of the result ``value`` it pulls
    back: the same keys, lengths and array shapes (a list and a tuple stand for each other;
    a number for a 0-d array)."""
    def wrong(expected: str):
        got = _structure(seed)
        raise ValueError(f"the seed does not match the structure of {name}'s result"
                         f"{' at ' + where if where else ''}: expected {expected}, got {got}")

    if isinstance(value, dict):
        if not isinstance(seed, dict) or seed.keys() != value.keys():
            wrong(f"a dict with keys {sorted(value, key=repr)}")
        for k in value:
            check_seed(seed[k], value[k], name, f"{where}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        if not isinstance(seed, (list, tuple)) or len(seed) != len(value):
            wrong(f"a {type(value).__name__} of {len(value)}")
        for i, (s, v) in enumerate(zip(seed, value, strict=True)):
            check_seed(s, v, name, f"{where}[{i}]")
    elif isinstance(value, (float, int, complex, np.ndarray, np.generic)) \
            and not isinstance(value, bool):
        if np.iscomplexobj(seed) and not np.iscomplexobj(value):
            raise ValueError(f"the seed of {name}'s real result"
                             f"{' at ' + where if where else ''} is complex: a real value's "
                             "gradient is real")
        if isinstance(seed, (dict, str)) or seed is None \
                or (isinstance(seed, (list, tuple)) and not np.ndim(value)) \
                or np.shape(seed) not in (np.shape(value), ()) \
                or (np.shape(seed) == () and np.ndim(value) and np.size(value) != 1):
            wrong("a number" if not np.ndim(value) else f"an array of shape {np.shape(value)}")


def _structure(seed) -> str:
    if isinstance(seed, dict):
        return f"a dict with keys {sorted(seed, key=repr)}"
    if isinstance(seed, (list, tuple)):
        return f"a {type(seed).__name__} of {len(seed)}"
    if isinstance(seed, np.ndarray):
        return f"an array of shape {seed.shape}"
    return f"{type(seed).__name__} {seed!r:.40}"


def _positions(what: str, f, wrt, argnums) -> tuple[tuple[str, ...], tuple[int, ...], bool]:
    """``wrt`` (or ``argnums``) as ``grad`` takes it, resolved to parameter names and positions;
    here they must be positional parameters (the arguments are passed by position)."""
    names, positions, single = normalise_wrt(f, wrt_of(what, wrt, argnums))
    for name, position in zip(names, positions, strict=True):
        if position < 0:
            raise TypeError(f"{what}: '{name}' is a keyword-only parameter of {f.__name__}; "
                            f"{what} takes the arguments by position")
    return names, positions, single


def jacobian(f, wrt=None, optimize: bool = True, mode: str = "auto", *, argnums=None,
             backend: str = "python"):
    """A function returning the Jacobian of ``f`` with respect to argument ``wrt`` (a position,
    a name, or a tuple of those: then a tuple of Jacobians, one per argument; ``argnums`` is
    its alias): an array of shape ``out.shape + in.shape``. ``mode="reverse"`` pulls back one
    unit seed per output element, ``"forward"`` pushes one unit tangent per input element;
    ``"auto"`` takes whichever needs fewer sweeps (reverse on a tie: its first sweep also gives
    the value)."""
    _, positions, single = _positions("jacobian", f, wrt, argnums)
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"jacobian: mode must be 'auto', 'forward' or 'reverse', got {mode!r}")
    check_backend(backend)

    def jacobian_of_f(*args):
        if single and _structured(args, positions[0]):
            return _structured_jacobian(f, args, positions[0], optimize, backend)
        xs = [_plain_argument("jacobian", f, args, p) for p in positions]
        if mode == "forward":
            blocks = [_forward_jacobian(f, args, p, optimize, backend) for p in positions]
            return blocks[0] if single else tuple(blocks)
        value, pullback = vjp(f, *args, optimize=optimize, backend=backend)
        out = np.asarray(value)
        if np.iscomplexobj(out) or isinstance(value, (tuple, list, dict)):
            raise TypeError("jacobian needs a function returning a real scalar or array")
        if mode == "auto" and sum(np.size(x) for x in xs) < out.size:
            blocks = [_forward_jacobian(f, args, p, optimize, backend) for p in positions]
            return blocks[0] if single else tuple(blocks)
        rows: list[list] = [[] for _ in positions]
        for i in range(out.size):
            seed = np.zeros(out.shape, dtype=out.dtype if out.dtype.kind == "f" else float)
            seed.flat[i] = 1.0
            grads = pullback(seed if out.ndim else float(seed))
            for k, (p, x) in enumerate(zip(positions, xs, strict=True)):
                rows[k].append(np.asarray(grads[p], dtype=float).reshape(np.shape(x)))
        blocks = [np.stack(r).reshape(out.shape + np.shape(x)) if r else
                  np.zeros(out.shape + np.shape(x)) for r, x in zip(rows, xs, strict=True)]
        return blocks[0] if single else tuple(blocks)

    return Derived(jacobian_of_f, "jacobian", f, jacobian, (f, wrt, optimize, mode),
                   {"argnums": argnums, "backend": backend})


# --- structured arguments: a dict, a dataclass, a NamedTuple, an object, a list or tuple --------
# (the Hessian and Jacobian of one such argument are dicts of blocks, keyed by its leaves)

def _structured(args: tuple, position: int) -> bool:
    """Whether ``args[position]`` is a structure holding float values (not one number or array)."""
    x = args[position] if -len(args) <= position < len(args) else None
    return isinstance(x, (dict, list, tuple)) or is_object(x)


def _leaves(x, path: tuple = ()) -> list:
    """``(path, value)`` of each float or float-array leaf of ``x``, in order: dict keys,
    fields (of a dataclass, a NamedTuple, an object), positions (of a list or tuple), nested;
    integers, strings and other values are not leaves."""
    if type(x) is float or isinstance(x, np.floating) \
            or isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return [(path, x)]
    if isinstance(x, dict):
        items = list(x.items())
    elif is_object(x):
        items = [(name, getattr(x, name)) for name in field_names(x)]
    elif isinstance(x, (list, tuple)):
        items = list(enumerate(x))
    else:
        return []
    return [leaf for key, value in items for leaf in _leaves(value, path + (key,))]


def _key(path: tuple):
    """A leaf's key in a structured result: its name (or position), its path where nested."""
    return path[0] if len(path) == 1 else path


def _read(x, path: tuple):
    for key in path:
        x = x[key] if isinstance(x, dict) or isinstance(x, (list, tuple)) \
            and not is_object(x) else getattr(x, key)
    return x


def _replaced(x, path: tuple, value):
    """A copy of ``x`` with the leaf at ``path`` replaced by ``value`` (``x`` unchanged)."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(x, dict):
        return {**x, key: _replaced(x[key], rest, value)}
    if isinstance(x, tuple) and is_object(x):  # a NamedTuple
        return cast(Any, x)._replace(**{key: _replaced(getattr(x, key), rest, value)})
    if isinstance(x, (list, tuple)):
        items = list(x)
        items[key] = _replaced(items[key], rest, value)
        return type(x)(items)
    out = copy.copy(x)
    object.__setattr__(out, key, _replaced(getattr(x, key), rest, value))
    return out


def _units(x):
    """``(path, k, direction)`` for each element ``k`` of each leaf: ``x`` with every leaf zero
    but element ``k`` of that one, which is 1."""
    leaves = _leaves(x)
    if not leaves:
        raise TypeError(f"a {type(x).__name__} holding no float values has no derivative")
    zero = x
    for path, value in leaves:
        zero = _replaced(zero, path, np.zeros(np.shape(value)) if np.ndim(value) else 0.0)
    for path, value in leaves:
        for k in range(np.size(value)):
            unit = np.zeros(np.shape(value))
            unit.flat[k] = 1.0
            yield path, k, _replaced(zero, path, unit if np.ndim(value) else 1.0)


def _structured_hessian(product, args: tuple, position: int) -> dict:
    """The Hessian in a structured argument: ``{(key_i, key_j): d^2 f / d x_i d x_j}``, each
    block of shape ``x_i.shape + x_j.shape``, one Hessian-vector product per element."""
    x = args[position]
    leaves = _leaves(x)
    columns: dict = {}
    for path, _, unit in _units(x):
        moved = product(*args[:position], x, *args[position + 1:], unit)
        columns.setdefault(path, []).append(moved)
    out = {}
    for pi, xi in leaves:
        for pj, xj in leaves:
            stacked = np.stack([np.asarray(_read(c, pi), dtype=float) for c in columns[pj]],
                               axis=-1)
            out[_key(pi), _key(pj)] = stacked.reshape(np.shape(xi) + np.shape(xj))
    return out


def _structured_jacobian(f, args: tuple, position: int, optimize: bool, backend: str) -> dict:
    """The Jacobian in a structured argument: ``{key: d f / d x_key}``, each block of shape
    ``out.shape + x_key.shape`` (one backward sweep per output element)."""
    x = args[position]
    leaves = _leaves(x)
    if not leaves:
        raise TypeError(f"a {type(x).__name__} holding no float values has no derivative")
    value, pullback = vjp(f, *args, optimize=optimize, backend=backend)
    out = np.asarray(value)
    if np.iscomplexobj(out) or isinstance(value, (tuple, list, dict)):
        raise TypeError("jacobian needs a function returning a real scalar or array")
    rows: dict = {path: [] for path, _ in leaves}
    for i in range(out.size):
        seed = np.zeros(out.shape, dtype=out.dtype if out.dtype.kind == "f" else float)
        seed.flat[i] = 1.0
        g = pullback(seed if out.ndim else float(seed))[position]
        for path, leaf in leaves:
            rows[path].append(np.asarray(_read(g, path), dtype=float).reshape(np.shape(leaf)))
    return {_key(path): np.stack(rows[path]).reshape(out.shape + np.shape(leaf))
            for path, leaf in leaves}


def _plain_argument(what: str, f, args: tuple, wrt: int):
    """``args[wrt]``, once it is known to be a number or a NumPy array (the layout of the
    result): a structured argument (a dict, a dataclass, a list) is refused by name."""
    if not -len(args) <= wrt < len(args):
        raise TypeError(f"{what}: {f.__name__} was given {len(args)} positional arguments, "
                        f"wrt={wrt} asks for another")
    x = args[wrt]
    if isinstance(x, (float, int, np.ndarray, np.floating, np.integer)) \
            and not isinstance(x, bool) and not np.iscomplexobj(x):
        return x
    names = [p.name for p in inspect.signature(f).parameters.values()]
    name = names[wrt] if -len(names) <= wrt < len(names) else f"#{wrt}"
    raise TypeError(f"{what} of {f.__name__} with respect to '{name}': it is a "
                    f"{type(x).__name__}, and {what} takes a float, a float array, or (alone) a "
                    "structure of them (a dict, a dataclass, a NamedTuple, a list: its result a "
                    "dict of blocks); pass the fields as separate arrays to mix them with others")


def _forward_jacobian(f, args: tuple, wrt: int, optimize: bool,
                      backend: str = "python") -> np.ndarray:
    """One forward sweep per element of ``args[wrt]``: the Jacobian's columns."""
    x = args[wrt]
    columns, out_shape = [], None
    for i in range(max(np.size(x), 1) if np.ndim(x) else 1):
        unit = np.zeros(np.shape(x))
        unit.flat[i] = 1.0
        tangents: list = [None] * len(args)
        tangents[wrt] = unit if isinstance(x, np.ndarray) else 1.0
        value, column = jvp(f, args, tangents, optimize=optimize, backend=backend)
        if np.iscomplexobj(value) or isinstance(value, (tuple, list, dict)):
            raise TypeError("jacobian needs a function returning a real scalar or array")
        out_shape = np.shape(value)
        columns.append(np.asarray(column, dtype=float))
    if np.size(x) == 0:
        value = f(*args)
        return np.zeros(np.shape(value) + np.shape(x))
    stacked = np.stack(columns, axis=-1)  # out.shape + (in.size,)
    return stacked.reshape(out_shape + np.shape(x))


def hvp(f, wrt=None, optimize: bool = True, *, argnums=None, backend: str = "python"):
    """A function ``(*args, v)`` returning the Hessian-vector product H·v for argument ``wrt``
    (a position or a name; ``argnums`` is its alias), without forming H: the generated gradient
    of ``f``, run in forward mode along ``v`` (forward over reverse; one gradient's cost, a few
    times over). With a tuple ``wrt``, ``v`` is a tuple of directions, one per argument, and
    the result the tuple of the joint Hessian's blocks applied to it: ``(H_00 v_0 + H_01 v_1,
    H_10 v_0 + H_11 v_1)``. ``backend`` compiles the forward-over-reverse code."""
    names, _, single = _positions("hvp", f, wrt, argnums)
    check_backend(backend)
    wrt = names[0] if single else names
    gradient = grad(f, wrt=wrt, optimize=optimize, checkpoint=False)  # (loops taped whole)
    made: dict = {}  # id of a generated gradient -> its forward mode
    ready: dict = {}  # argument types -> (f's code, compiled gradient, function, tangent names)
    options = Options(optimize, False, backend=backend)

    def directions(v) -> dict:
        if single:
            return {names[0]: v}
        if not isinstance(v, (tuple, list)) or len(v) != len(names):
            raise TypeError(f"hvp with respect to {names}: v must be a tuple of "
                            f"{len(names)} directions, one per argument")
        return dict(zip(names, v, strict=True))

    def hvp_of_f(*args):
        *xs, v = args
        along = directions(v)
        # by type alone only numbers and plain arrays are known: the checks (arguments.py) look
        # inside containers and at objects on every call
        key = tuple((type(x), getattr(x, "dtype", None)) for x in xs) \
            if all(type(x) in _PLAIN for x in xs) else None
        known = ready.get(key)
        if known is not None and known[0] is f.__code__ and not known[1].stale(f):
            return known[2](*xs, **{known[3][n]: d for n, d in along.items()})
        inner = gradient.compiled_for(*xs)
        product = made.get(id(inner.function))
        if product is None or product.__wrapped__ is not inner.function:
            product = made[id(inner.function)] = ForwardFunction(inner.function, wrt, options)
        result = product(*xs, **{product.tangent_names[n]: d for n, d in along.items()})
        if key is not None:
            ready[key] = (f.__code__, inner, product.compiled_for(*xs).function,
                          product.tangent_names)
        return result

    return Derived(hvp_of_f, "hvp", f, hvp, (f, wrt, optimize),
                   {"argnums": argnums, "backend": backend})


_PLAIN = frozenset({float, int, bool, np.ndarray, np.float64, np.float32})


def hessian(f, wrt=None, optimize: bool = True, *, argnums=None, backend: str = "python"):
    """A function returning the Hessian of ``f`` for argument ``wrt`` (a position or a name;
    ``argnums`` is its alias): shape ``in.shape + in.shape``, one Hessian-vector product per
    element of the argument. With a tuple ``wrt``, the joint Hessian's blocks as a tuple of
    tuples (JAX's layout): ``result[i][j]`` is ``d^2 f / d x_i d x_j``, of shape
    ``x_i.shape + x_j.shape``."""
    _, positions, single = _positions("hessian", f, wrt, argnums)
    product = hvp(f, positions[0] if single else positions, optimize, backend=backend)

    def hessian_of_f(*args):
        if single and _structured(args, positions[0]):
            return _structured_hessian(product, args, positions[0])
        xs = [_plain_argument("hessian", f, args, p) for p in positions]
        if single:
            x = xs[0]
            if np.ndim(x) == 0:
                return product(*args, 1.0)
            rows = [product(*args, np.eye(np.size(x))[i].reshape(np.shape(x)))
                    for i in range(np.size(x))]
            return np.stack(rows).reshape(np.shape(x) + np.shape(x))
        zeros = [np.zeros(np.shape(x)) if np.ndim(x) else 0.0 for x in xs]
        blocks: list[list] = [[None] * len(xs) for _ in xs]
        for j, xj in enumerate(xs):
            columns = []  # H[:, j-th argument's element k], as a tuple over the arguments
            for k in range(max(np.size(xj), 1) if np.ndim(xj) else 1):
                unit = np.zeros(np.shape(xj))
                unit.flat[k] = 1.0
                v = list(zeros)
                v[j] = unit if np.ndim(xj) else 1.0
                columns.append(product(*args, tuple(v)))
            for i, xi in enumerate(xs):
                stacked = np.stack([np.asarray(c[i], dtype=float) for c in columns], axis=-1) \
                    if np.size(xj) else np.zeros(np.shape(xi) + (0,))
                blocks[i][j] = stacked.reshape(np.shape(xi) + np.shape(xj))
        return tuple(tuple(row) for row in blocks)

    return Derived(hessian_of_f, "hessian", f, hessian, (f, wrt, optimize),
                   {"argnums": argnums, "backend": backend})


class Derived:
    """A function made by ``jacobian``, ``hvp`` or ``hessian``: called as ``function``, pickled
    as the call that made it (``make(*args, **kwargs)``, compiled again where unpickled)."""

    def __init__(self, function, what: str, f, make, args: tuple, kwargs: dict):
        self._function, self._made = function, (make, args, kwargs)
        self.__wrapped__ = f
        self.__name__ = f"{what}_{getattr(f, '__name__', 'f')}"
        self.__qualname__ = f"{what}({getattr(f, '__qualname__', self.__name__)})"
        self.__doc__ = getattr(f, "__doc__", None)

    def __call__(self, *args):
        return self._function(*args)

    def __reduce__(self):
        make, args, kwargs = self._made
        return _remade, (make, args, kwargs)

    def __repr__(self) -> str:
        return f"<{self.__qualname__}>"


def _remade(make, args: tuple, kwargs: dict):
    return make(*args, **kwargs)
