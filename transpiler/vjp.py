"""Vector-Jacobian products, Jacobians, and (by running a generated gradient in forward mode)
Hessian-vector products and Hessians.

``vjp(f, *args)`` runs ``f``'s compiled forward half once and returns its value with a pullback;
``pullback(seed)`` runs the backward half (the forward again when called more than once: the
tape of a loop is spent by one backward sweep). ``jacobian(f, wrt)`` pulls back one unit seed
per output element.
"""

from __future__ import annotations

import inspect

import numpy as np

import runtime as rt
from runtime.sparse import is_sparse
from transpiler import pipeline
from transpiler.api import grad
from transpiler.arguments import differentiable, objects_in
from transpiler.backends import check_backend
from transpiler.calls import split_pair
from transpiler.context import Options
from transpiler.function_args import functions_in, known
from transpiler.gradient import check_function, refuse_shared_memory
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


def jacobian(f, wrt=0, optimize: bool = True, mode: str = "auto"):
    """A function returning the Jacobian of ``f`` with respect to positional argument ``wrt``:
    an array of shape ``out.shape + in.shape``. ``mode="reverse"`` pulls back one unit seed per
    output element, ``"forward"`` pushes one unit tangent per input element; ``"auto"`` takes
    whichever needs fewer sweeps (reverse on a tie: its first sweep also gives the value)."""
    if not isinstance(wrt, int) or isinstance(wrt, bool):
        raise TypeError(f"jacobian: wrt must be a position, got {wrt!r}")
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"jacobian: mode must be 'auto', 'forward' or 'reverse', got {mode!r}")

    def jacobian_of_f(*args):
        x = _plain_argument("jacobian", f, args, wrt)
        if mode == "forward":
            return _forward_jacobian(f, args, wrt, optimize)
        value, pullback = vjp(f, *args, optimize=optimize)
        out = np.asarray(value)
        if np.iscomplexobj(out) or isinstance(value, (tuple, list, dict)):
            raise TypeError("jacobian needs a function returning a real scalar or array")
        if mode == "auto" and np.size(x) < out.size:
            return _forward_jacobian(f, args, wrt, optimize)
        rows = []
        for i in range(out.size):
            seed = np.zeros(out.shape, dtype=out.dtype if out.dtype.kind == "f" else float)
            seed.flat[i] = 1.0
            row = pullback(seed if out.ndim else float(seed))[wrt]
            rows.append(np.asarray(row, dtype=float).reshape(np.shape(x)))
        return np.stack(rows).reshape(out.shape + np.shape(x)) if rows else \
            np.zeros(out.shape + np.shape(x))

    jacobian_of_f.__name__ = f"jacobian_{f.__name__}"
    return jacobian_of_f


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
                    f"{type(x).__name__}, and {what} takes a float or a float array (its result "
                    "is one array); for a structured argument use hvp, whose result has the "
                    "argument's structure, or pass the fields as separate arrays")


def _forward_jacobian(f, args: tuple, wrt: int, optimize: bool) -> np.ndarray:
    """One forward sweep per element of ``args[wrt]``: the Jacobian's columns."""
    x = args[wrt]
    columns, out_shape = [], None
    for i in range(max(np.size(x), 1) if np.ndim(x) else 1):
        unit = np.zeros(np.shape(x))
        unit.flat[i] = 1.0
        tangents = [None] * len(args)
        tangents[wrt] = unit if isinstance(x, np.ndarray) else 1.0
        value, column = jvp(f, args, tangents, optimize=optimize)
        if np.iscomplexobj(value) or isinstance(value, (tuple, list, dict)):
            raise TypeError("jacobian needs a function returning a real scalar or array")
        out_shape = np.shape(value)
        columns.append(np.asarray(column, dtype=float))
    if np.size(x) == 0:
        value = f(*args)
        return np.zeros(np.shape(value) + np.shape(x))
    stacked = np.stack(columns, axis=-1)  # out.shape + (in.size,)
    return stacked.reshape(out_shape + np.shape(x))


def hvp(f, wrt: int = 0, optimize: bool = True):
    """A function ``(*args, v)`` returning the Hessian-vector product H·v for argument ``wrt``
    (an int position), without forming H: the generated gradient of ``f``, run in forward mode
    along ``v`` (forward over reverse; one gradient's cost, a few times over)."""
    if not isinstance(wrt, int) or isinstance(wrt, bool):
        raise TypeError(f"hvp: wrt must be a position, got {wrt!r}")
    gradient = grad(f, wrt=wrt, optimize=optimize, checkpoint=False)  # (loops taped whole)
    made: dict = {}  # id of a generated gradient -> its forward mode
    ready: dict = {}  # argument types -> (f's code, compiled gradient, function, tangent name)

    def hvp_of_f(*args):
        *xs, v = args
        # by type alone only numbers and plain arrays are known: the checks (arguments.py) look
        # inside containers and at objects on every call
        key = tuple((type(x), getattr(x, "dtype", None)) for x in xs) \
            if all(type(x) in _PLAIN for x in xs) else None
        known = ready.get(key)
        if known is not None and known[0] is f.__code__ and not known[1].stale(f):
            return known[2](*xs, **{known[3]: v})  # checked on the first call of these types
        inner = gradient.compiled_for(*xs)
        product = made.get(id(inner.function))
        if product is None or product.__wrapped__ is not inner.function:
            product = made[id(inner.function)] = ForwardFunction(inner.function, wrt,
                                                                 Options(optimize, False))
        name = product.tangent_names[product.wrt[0]]
        result = product(*xs, **{name: v})
        if key is not None:
            ready[key] = (f.__code__, inner, product.compiled_for(*xs).function, name)
        return result

    hvp_of_f.__name__ = f"hvp_{f.__name__}"
    return hvp_of_f


_PLAIN = frozenset({float, int, bool, np.ndarray, np.float64, np.float32})


def hessian(f, wrt: int = 0, optimize: bool = True):
    """A function returning the Hessian of ``f`` for argument ``wrt``: shape
    ``in.shape + in.shape`` (one Hessian-vector product per element of the argument)."""
    product = hvp(f, wrt, optimize)

    def hessian_of_f(*args):
        x = _plain_argument("hessian", f, args, wrt)
        if np.ndim(x) == 0:
            return product(*args, 1.0)
        rows = [product(*args, np.eye(np.size(x))[i].reshape(np.shape(x)))
                for i in range(np.size(x))]
        return np.stack(rows).reshape(np.shape(x) + np.shape(x))

    hessian_of_f.__name__ = f"hessian_{f.__name__}"
    return hessian_of_f
