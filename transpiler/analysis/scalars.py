"""Which variables are certainly scalars (0-d), whatever the arguments' shapes.

A value is a known scalar when it is a number literal, a ``for`` loop's counter (loops run over
``range``), the result of a ``math`` function, of ``float``/``int``/``len``, of a full reduction
(``np.sum(x)``, ``np.mean(x)`` without ``axis`` or ``keepdims``), or arithmetic on known
scalars, at every assignment of the name (parameters are scalars only in the variant compiled
for Python-number arguments). The adjoint uses this to drop ``rt.unbroadcast`` where the shapes
provably agree."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno
from transpiler.passes import tape

_SCALAR_FUNCTIONS = frozenset({float, int, len, abs})
_FULL_REDUCTIONS = frozenset({np.sum, np.mean})


def is_number(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def is_scalar(node, scalars: set[str]) -> bool:
    """Whether expression ``node`` certainly evaluates to a scalar, given scalar names."""
    if is_number(node):
        return True
    if isinstance(node, gast.Name):
        return node.id in scalars
    if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
        return is_scalar(node.left, scalars) and is_scalar(node.right, scalars)
    if isinstance(node, gast.UnaryOp):
        return is_scalar(node.operand, scalars)
    if isinstance(node, gast.Call):
        func = getanno(node, Anno.FUNC)
        if getattr(func, "__module__", None) == "math" or _is(func, _SCALAR_FUNCTIONS):
            return func is not abs or all(is_scalar(a, scalars) for a in node.args)
        if _is(func, _FULL_REDUCTIONS):
            return len(node.args) == 1 and not node.keywords
    return False


def selects_once(index, scalars) -> bool:
    """Whether an index expression (as the rules see it: ``slice(...)`` for ``a:b``) certainly
    selects each element at most once: ints, slices, ``None``, ``...`` and known scalars (loop
    counters, ``i + 1``), also in tuples; not integer arrays, which may repeat an element."""
    if isinstance(index, gast.Tuple):
        return all(selects_once(e, scalars) for e in index.elts)
    if isinstance(index, gast.Constant):
        return type(index.value) is int or index.value is None or index.value is Ellipsis
    if isinstance(index, gast.Call) and isinstance(index.func, gast.Name) \
            and index.func.id == "slice":
        return all(is_scalar(a, scalars) or (isinstance(a, gast.Constant) and a.value is None)
                   for a in index.args)
    return is_scalar(index, scalars)


def selects_entry(index, scalars) -> bool:
    """Whether an index is two known scalars: ``A[i, j]``, one entry of a matrix."""
    return isinstance(index, gast.Tuple) and len(index.elts) == 2 \
        and all(is_scalar(e, scalars) for e in index.elts)


def known_scalars(body: list, params: frozenset[str] = frozenset(),
                  arrays: Mapping[str, int] | None = None) -> set[str]:
    """Known scalars of ``body``, given parameters ``params`` known to be numbers and
    ``arrays`` known to be NumPy arrays of these ranks (an element ``x[i]`` of a 1-D one, with
    ``i`` a known scalar, is a scalar)."""
    return known_ranks(body, params, arrays)[0]


def known_ranks(body: list, params: frozenset[str] = frozenset(),
                arrays: Mapping[str, int] | None = None
                ) -> tuple[set[str], dict[str, int], set[str]]:
    """``(scalars, ranks, matrices)`` of ``body``: the names certainly 0-d, the names certainly
    NumPy arrays of one number of dimensions at every assignment (from parameters ``arrays`` and
    what is built here: ``np.zeros(n)``, ``x.copy()``, ``np.zeros_like(x)``, element writes,
    elementwise arithmetic, basic indexing, ``np.array`` of a (nested) list, a reduction along
    one axis, ``x.sum(axis=0)``, the array a loop walks, ``rt.sequence(x)``, a mask ``x > 0``,
    ``np.where``, ``np.clip``, the joins of a list ``np.concatenate([a, b])``, ``np.stack``,
    ``np.vstack``, ``np.hstack``...; ``x[i]`` of a 1-D one is a scalar), and the names certainly
    2-D scipy.sparse matrices (``lil_matrix((n, n))``, its writes, ``A.tocsr()``; ``A[i, j]`` of
    two numbers is a number)."""
    assigned = _assignments(body)
    # Greatest fixed point: every assigned name starts with a rank not yet known, then takes
    # the one all its assignments agree on, or none, until nothing changes. Loop-carried values
    # (x = x + dt * v) stay scalars when they start as scalars and every update keeps them so.
    ranks: dict[str, object] = {**dict.fromkeys(assigned, _TOP), **dict(arrays or {}),
                                **dict.fromkeys(params, 0)}
    for final in (False, True):  # then once more, with ranks never settled taken as unknown
        if final:
            ranks = {n: r for n, r in ranks.items() if r is not _TOP}
        changed = True
        while changed:
            changed = False
            for name, values in assigned.items():
                if name in params or name not in ranks:
                    continue
                rank = _join([None if v is None else _rank(v, ranks) for v in values])
                if rank != ranks[name]:
                    ranks[name], changed = rank, True
    scalars = {n for n, r in ranks.items() if r == 0 and type(r) is int}
    return (scalars, {n: r for n, r in ranks.items() if type(r) is int and r > 0},
            {n for n, r in ranks.items() if r is _MATRIX})


_TOP = object()  # a rank not yet known (optimistic)
_ZERO_D = "0-d"  # not a rank: 0-d, but not a number to rely on: a comparison of numbers (a
# bool, which no index reads as a number) or np.where of numbers (a 0-d array, which += writes
# in place); arithmetic with it gives numbers
_MATRIX = "matrix"  # not a rank: a 2-D scipy.sparse matrix (no views; its products with arrays
# have the arrays' ranks)
# the scipy.sparse calls that make a 2-D matrix (coo_array may be 1-D: not among them), and the
# methods of one that give one
_MATRIX_MAKERS = frozenset({"csr_matrix", "csc_matrix", "coo_matrix", "lil_matrix", "dok_matrix",
                            "bsr_matrix", "dia_matrix", "csr_array", "csc_array", "diags",
                            "diags_array", "spdiags", "eye", "identity", "kron", "hstack",
                            "vstack", "bmat", "block_diag"})
_SAME_MATRIX = frozenset({"tocsr", "tocsc", "tocoo", "copy", "transpose", "asformat"})


def _makes_matrix(func) -> bool:
    module = getattr(func, "__module__", None) or ""
    return module.startswith("scipy.sparse") and getattr(func, "__name__", "") in _MATRIX_MAKERS \
        and not module.startswith(("scipy.sparse.linalg", "scipy.sparse.csgraph"))
_RANGE = "range"  # not a rank: a range object (or the sequence a loop walks of one): its items
# are ints
_SHAPE = "shape"  # not a rank: the value is the shape tuple of an array of known rank
_SHAPED = frozenset({np.zeros, np.ones, np.empty, np.full})  # (shape, ...) -> an array of it
_LIKE = frozenset({np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy,
                   operator.setitem, runtime.added_at, runtime.subtracted_at,
                   runtime.multiplied_at, runtime.put, runtime.put_along})  # shaped like the
# first argument (the writes in place of np.add.at, np.put ..., as new values)


def _join(ranks: list):
    known = [r for r in ranks if r is not _TOP]
    if any(r is None for r in known) or len(set(known)) > 1:
        return None
    return known[0] if known else _TOP


def _rank(node, ranks: dict):
    """The number of dimensions of ``node``'s value (0: a scalar), ``_TOP`` or None."""
    if isinstance(node, gast.Constant):
        return 0 if is_number(node) else None
    if isinstance(node, gast.Name):
        return ranks.get(node.id)
    if isinstance(node, gast.UnaryOp):
        return _rank(node.operand, ranks)
    if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
        return _broadcast([node.left, node.right], ranks)
    if isinstance(node, gast.BinOp):
        return _product_rank(_rank(node.left, ranks), _rank(node.right, ranks))
    if isinstance(node, gast.Attribute) and node.attr == "T":
        base = _rank(node.value, ranks)
        return base if base is _TOP or base is _MATRIX or base in (1, 2) else None
    if isinstance(node, gast.Compare):  # (a mask; of numbers a bool, which no index reads
        return _array_rank(_broadcast([node.left, *node.comparators], ranks))  # as a number)
    if isinstance(node, gast.Attribute) and node.attr in ("size", "ndim"):  # (an int)
        base = _rank(node.value, ranks)
        return base if base is _TOP else 0 if type(base) is int or base is _MATRIX else None
    if isinstance(node, gast.Attribute) and node.attr == "shape":
        base = _rank(node.value, ranks)
        return base if base is _TOP else _SHAPE if type(base) is int else None
    if isinstance(node, gast.Subscript):
        return _element_rank(node, ranks)
    if isinstance(node, gast.Call):
        return _call_rank(node, ranks)
    return None


def _product_rank(left, right):
    """The rank of ``a @ b`` of operands of ranks ``left`` and ``right`` (at most 2; a sparse
    matrix's product with an array has the array's rank)."""
    if left is None or right is None or left is _SHAPE or right is _SHAPE:
        return None
    if left is _TOP or right is _TOP:
        return _TOP
    if left is _MATRIX or right is _MATRIX:
        other = right if left is _MATRIX else left
        return other if other in (1, 2) and type(other) is int else None
    return {(1, 1): 0, (1, 2): 1, (2, 1): 1, (2, 2): 2}.get((left, right))


def _element_rank(node: gast.Subscript, ranks: dict):
    base = _rank(node.value, ranks)
    parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    added = sum(_is_none(p) for p in parts)  # (np.newaxis: an axis more, none consumed)
    if added:
        if type(base) is not int:
            return base if base is _TOP else None
        rest = [p for p in parts if not _is_none(p)]
        if not rest:
            return base + added
        inner = gast.Subscript(value=node.value, ctx=gast.Load(),
                               slice=rest[0] if len(rest) == 1 else gast.Tuple(
                                   elts=rest, ctx=gast.Load()))
        found = _element_rank(inner, ranks)
        return found + added if type(found) is int else found
    kinds = [None if isinstance(p, gast.Slice) else _rank(p, ranks) for p in parts]
    if base is _TOP or _TOP in kinds:
        return _TOP
    if base is _SHAPE:  # x.shape[0]
        return 0 if kinds == [0] else None
    if base is _RANGE:  # (an item of a range)
        return 0 if kinds == [0] else None
    if base is _MATRIX:  # (an entry of a sparse matrix, A[i, j], is a NumPy number)
        return 0 if kinds == [0, 0] else None
    if type(base) is not int or len(parts) > base or not all(
            isinstance(p, gast.Slice) or k == 0 for p, k in zip(parts, kinds, strict=True)):
        return None
    return base - sum(k == 0 for k in kinds)


def _call_rank(node: gast.Call, ranks: dict):
    func = getanno(node, Anno.FUNC)
    if _makes_matrix(func):
        return _MATRIX
    if isinstance(node.func, gast.Attribute) and node.func.attr in _SAME_MATRIX \
            and _rank(node.func.value, ranks) is _MATRIX:
        return _MATRIX
    if getattr(func, "__module__", None) == "math" or _is(func, _SCALAR_FUNCTIONS - {abs}):
        return 0
    if func in (np.outer, np.eye, np.identity):  # (always two axes)
        return 2
    if func is range:
        return _RANGE
    if func is runtime.sequence and len(node.args) == 1:  # (what a loop walks: an array itself)
        rank = _rank(node.args[0], ranks)
        return rank if rank is _TOP or rank is _RANGE or type(rank) is int and rank > 0 else None
    if func in (np.array, np.asarray) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], (gast.List, gast.Tuple)):
        return _nested_rank(node.args[0], ranks)
    if _is(func, _FULL_REDUCTIONS) and len(node.args) == 1 and not node.keywords:
        return 0
    reduced = _reduction(node, func)
    if reduced is not None:
        base, axis = reduced
        rank = _rank(base, ranks)
        if rank is _TOP or type(rank) is not int:
            return rank if rank is _TOP else None
        if axis is None:
            return 0
        return rank - 1 if -rank <= axis < rank else None
    if func is abs and len(node.args) == 1:
        return _rank(node.args[0], ranks)
    if _is(func, _SHAPED) and node.args and all(
            kw.arg == "dtype" and not isinstance(kw.value, gast.Constant)
            for kw in node.keywords):  # (a dtype spelt as a string may be a record's)
        shape = node.args[0]
        parts = shape.elts if isinstance(shape, gast.Tuple) else [shape]
        found = [_rank(e, ranks) for e in parts]
        if _TOP in found:
            return _TOP
        return len(parts) if all(r == 0 for r in found) else None
    shape = _reshaped(node, func)
    if shape is not None and func is None:  # (a method: of an array)
        base = _rank(node.func.value, ranks)
        shape = shape if base is _TOP or type(base) is int and base > 0 else None
    if shape is not None:  # (np.reshape(a, (2, 3)), a.reshape(n, -1), np.ravel(a))
        found = [_rank(e, ranks) for e in shape]
        if _TOP in found:
            return _TOP
        return len(shape) if all(r == 0 and type(r) is int for r in found) else None
    if _is(func, _LIKE) and node.args and not node.keywords:
        base = _rank(node.args[0], ranks)
        if base is _MATRIX:  # (a write into a sparse matrix gives the matrix)
            return base if func is operator.setitem else None
        return base if base is _TOP or type(base) is int and base > 0 else None
    if isinstance(node.func, gast.Attribute) and node.func.attr == "copy" \
            and not node.args and func is None:
        base = _rank(node.func.value, ranks)
        return None if base == 0 or base is _SHAPE else base
    if isinstance(func, np.ufunc) and func.nout == 1 and not node.keywords:
        return _broadcast(node.args, ranks)
    if func is np.clip and len(node.args) == 3 and not node.keywords:
        return _broadcast([a for a in node.args if not _is_none(a)], ranks)
    if func is np.where and len(node.args) == 3 and not node.keywords:  # (of numbers: a 0-d
        return _array_rank(_broadcast(node.args, ranks))  # array, whose += writes in place)
    if func in _JOINS and len(node.args) == 1 \
            and isinstance(node.args[0], (gast.List, gast.Tuple)):
        return _joined(func, node, ranks)
    return None


def _reshaped(node: gast.Call, func) -> list | None:
    """The numbers of the shape ``node`` reshapes an array to (``np.reshape(a, (m, n))``,
    ``a.reshape(m, n)``, ``a.reshape((m, n))``; one number for ``np.ravel(a)``, ``a.ravel()``,
    ``a.flatten()``), or None."""
    if node.keywords:
        return None
    method = isinstance(node.func, gast.Attribute) and func is None
    if func is np.ravel and len(node.args) == 1 or method and node.func.attr in (
            "ravel", "flatten") and not node.args:
        return [gast.Constant(value=-1, kind=None)]
    if func is np.reshape and len(node.args) == 2:
        given = node.args[1]
    elif method and node.func.attr == "reshape" and node.args:
        given = node.args[0] if len(node.args) == 1 else gast.Tuple(elts=node.args,
                                                                     ctx=gast.Load())
    else:
        return None
    return list(given.elts) if isinstance(given, gast.Tuple) else [given]


def _array_rank(rank):
    """``rank``, but ``_ZERO_D`` where it is 0."""
    return _ZERO_D if rank == 0 and type(rank) is int else rank


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


# joins of a list of arrays of one rank r: the rank of the result from r
_JOINS = {np.concatenate: lambda r: r, np.stack: lambda r: r + 1,
          np.vstack: lambda r: max(r, 2), np.hstack: lambda r: max(r, 1),
          np.column_stack: lambda r: 2 if r <= 2 else None, np.dstack: lambda r: max(r, 3)}


def _joined(func, node: gast.Call, ranks: dict):
    """The rank of ``np.concatenate([a, b])``, ``np.stack(...)``, ``np.vstack(...)``...: of
    elements of one known rank (``concatenate``'s at least 1; its ``axis=None`` flattens), with
    an ``axis`` given as a number or none."""
    found = [_rank(e, ranks) for e in node.args[0].elts]
    axis = [k.value for k in node.keywords if k.arg == "axis"]
    if not found or any(k.arg != "axis" for k in node.keywords) or any(
            r is not _TOP and type(r) is not int for r in found):
        return None
    if func is np.concatenate and axis and _is_none(axis[0]):
        return 1
    if axis and not (isinstance(axis[0], gast.Constant) and type(axis[0].value) is int
                     or isinstance(axis[0], gast.UnaryOp) and is_number(axis[0].operand)):
        return None
    if _TOP in found:
        return _TOP
    if len(set(found)) > 1 or func is np.concatenate and found[0] == 0:
        return None
    return _JOINS[func](found[0])


def _nested_rank(node, ranks: dict):
    """The rank of ``np.array`` of a (nested) list literal of values of one rank."""
    found = [_nested_rank(e, ranks) if isinstance(e, (gast.List, gast.Tuple)) else _rank(e, ranks)
             for e in node.elts]
    if not found or any(type(r) is not int and r is not _TOP for r in found):
        return None
    known = {r for r in found if r is not _TOP}
    if len(known) > 1:
        return None
    return known.pop() + 1 if known else _TOP


_REDUCTIONS = frozenset({np.sum, np.mean, np.prod, np.max, np.min, np.std, np.var})
_REDUCING_METHODS = frozenset({"sum", "mean", "prod", "max", "min", "std", "var"})


def _reduction(node: gast.Call, func):
    """``(array, axis)`` of a reduction of an array along one axis (an int) or all of them
    (None): ``np.sum(x, axis=0)``, ``x.mean(1)``, ``np.max(x)``; None for any other call, or
    one with other arguments (``keepdims``, ``out``, ``where``, several axes)."""
    if _is(func, _REDUCTIONS) and node.args:
        base, rest = node.args[0], node.args[1:]
    elif isinstance(node.func, gast.Attribute) and node.func.attr in _REDUCING_METHODS \
            and (func is None or _is(func, _REDUCTIONS)):
        base, rest = node.func.value, node.args
    else:
        return None
    given = rest + [k.value for k in node.keywords if k.arg == "axis"]
    if len(rest) > 1 or any(k.arg != "axis" for k in node.keywords) or len(given) > 1:
        return None
    if not given or isinstance(given[0], gast.Constant) and given[0].value is None:
        return base, None
    axis = given[0]
    if isinstance(axis, gast.UnaryOp) and isinstance(axis.op, gast.USub) \
            and isinstance(axis.operand, gast.Constant) and type(axis.operand.value) is int:
        return base, -axis.operand.value
    if isinstance(axis, gast.Constant) and type(axis.value) is int:
        return base, axis.value
    return None


def _broadcast(operands: list, ranks: dict):
    found = [0 if r is _ZERO_D else r for r in (_rank(o, ranks) for o in operands)]
    if any(r is not _TOP and type(r) is not int for r in found):  # (None, a shape, a matrix)
        return None
    if any(r is _TOP for r in found):
        return _TOP
    return max(found)


def python_floats(body: list, numbers: frozenset[str]) -> set[str]:
    """Names of ``body`` that certainly hold a Python ``float`` (not a NumPy scalar), given
    parameters ``numbers`` that hold Python ints or floats: float literals, arithmetic with a
    float operand or a ``/``, ``float(...)`` and ``math`` functions of numbers.

    Each name starts as a float and is demoted (float -> int or float -> anything) by any
    assignment that may give it less, until nothing changes: a greatest fixed point."""
    assigned = _assignments(body, generated=True)
    kinds: dict[str, int] = {**dict.fromkeys(assigned, _FLOAT), **dict.fromkeys(numbers, _NUMBER)}

    def kind(node) -> int:
        if isinstance(node, gast.Constant) and type(node.value) in (int, float):
            return _FLOAT if type(node.value) is float else _NUMBER
        if isinstance(node, gast.Name):
            return kinds.get(node.id, _OTHER)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return kind(node.operand)
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow):
            right = node.right  # a float to an int literal's power is a float
            exact = isinstance(right, gast.Constant) and type(right.value) is int
            return _FLOAT if exact and kind(node.left) == _FLOAT else _OTHER
        if isinstance(node, gast.BinOp) and isinstance(node.op, _NUMBER_OPS):
            left, right = kind(node.left), kind(node.right)
            if _OTHER in (left, right):
                return _OTHER
            return _FLOAT if _FLOAT in (left, right) or isinstance(node.op, gast.Div) else _NUMBER
        if isinstance(node, gast.IfExp):
            return max(kind(node.body), kind(node.orelse))
        if isinstance(node, gast.Call) and not node.keywords:
            func = getanno(node, Anno.FUNC)
            if func is abs and len(node.args) == 1:
                return kind(node.args[0])
            if (func is float or _is(func, _MATH_FLOATS)) and len(node.args) <= 2 \
                    and all(kind(a) != _OTHER for a in node.args):
                return _FLOAT
        return _OTHER

    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            least = max((kind(v) if v is not None else _OTHER for v in values), default=_OTHER)
            if least > kinds[name]:
                kinds[name], changed = least, True
    return {n for n, k in kinds.items() if k == _FLOAT}


_FLOAT, _NUMBER, _OTHER = 0, 1, 2  # what a name certainly holds: a float < an int or a float
_NUMBER_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod)
_MATH_FLOATS = frozenset(getattr(math, name) for name in (
    "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin",
    "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "hypot",
    "fabs", "erf", "erfc", "gamma", "lgamma", "copysign", "fmod", "degrees", "radians"))


def _assignments(body: list, generated: bool = False) -> dict[str, list]:
    """Each name assigned in ``body`` -> the values assigned to it (None where it is unpacked
    from something else). A ``for`` counter gets an int; in ``generated`` code (a gradient) the
    target of a loop over a tape, ``for a, b in reversed(_tape)`` (passes/tape.py), gets what was
    pushed onto the tape, and that of any other loop (over ``reversed(range)``) gets None."""
    assigned: dict[str, list] = {}
    pushed: dict[str, list] = {}
    ranges = set()  # names of range objects
    for node in (n for s in body for n in A.walk(s)) if generated else ():
        if isinstance(node, gast.Assign) and getanno(node.value, Anno.FUNC) is range:
            ranges.add(A.target_name(node))
    for name, item in tape.pushes(body) if generated else ():
        pushed[name] = item.elts if isinstance(item, gast.Tuple) else [item]
    for node in (n for s in body for n in A.walk(s)):
        if isinstance(node, gast.Assign):
            for t in node.targets:
                for n in A.walk(t):
                    if isinstance(n, gast.Name):
                        value = node.value if isinstance(t, gast.Name) else None
                        if isinstance(value, gast.Constant) and value.value is None:
                            continue  # ssa's "not assigned on this path" placeholder
                        assigned.setdefault(n.id, []).append(value)
        elif isinstance(node, gast.For) and not generated:  # over range(...): an int
            assigned.setdefault(node.target.id, []).append(A.const(0))
        elif isinstance(node, gast.For):
            walked = node.iter.args[0] if _reversed(node.iter) else node.iter
            walked = walked.id if isinstance(walked, gast.Name) else None
            targets = node.target.elts if isinstance(node.target, gast.Tuple) else [node.target]
            values = pushed.get(walked, ())
            if walked in ranges or getanno(node.iter, Anno.FUNC) is range:
                values = [A.const(0)]
            if len(values) != len(targets):
                values = [None] * len(targets)
            for target, value in zip(targets, values, strict=True):
                assigned.setdefault(target.id, []).append(value)
    return assigned


def _reversed(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "reversed" and len(node.args) == 1


def _is(func, group: frozenset) -> bool:
    try:
        return func in group
    except TypeError:
        return False


assert math.sin.__module__ == "math"  # the test above relies on it
