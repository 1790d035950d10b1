"""Which values certainly have equal shapes, and which keep one shape through a loop.

``ShapeKeys`` gives each array or scalar value a symbolic shape (a key); equal keys mean equal
shapes, and a known key means the value has that one shape wherever it is assigned, in every
loop iteration. The adjoint uses it twice:

- ``rt.unbroadcast(g, x)`` is dropped when ``g`` and ``x`` have equal keys;
- a loop's tape does not save a value read only for its shape when its key is known: after the
  loop the variable still holds the last iteration's value, of that same shape.

Keys start from parameters known to be NumPy arrays (the variant compiled for the call's
argument types) and ``SCALAR``. Elementwise operations on equal keys, or on a key and a scalar,
keep it; basic indexing makes a key from the base's and the index's (``u[2:]`` and ``u[:-2]``
have equal keys: the two slices have equal lengths on every axis length, checked on lengths
0..64 beyond which both are linear); copies and element writes keep the base's. A name assigned
several times (a loop-carried value, a branch join) has a key only if every assignment gives
the same one. Anything else (unknown calls, containers, parameters of unknown type) has none.
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno

_SAME_SHAPE = frozenset({np.copy, operator.setitem})  # result shaped like the first argument
_ALLOCATIONS = frozenset({np.zeros, np.ones, np.empty, np.full})  # shaped by the first


# --- equal shapes ---------------------------------------------------------------------------

_SIZES = range(65)  # slice lengths are compared on arrays of these lengths (bounds up to 32)
_TOP = ("unknown yet",)
SCALAR = ("scalar",)


class ShapeKeys:
    """A symbolic shape for each value: two values with equal keys have equal shapes.

    Keys are built from the shapes of names the function never assigns (parameters, globals),
    ``SCALAR``, and basic indexing: ``u[2:]`` and ``u[:-2]`` have equal keys because the two
    slices have equal lengths on every axis length (checked on lengths 0..64, beyond which both
    are linear). Elementwise operations of equal keys, or of a key and a scalar, keep it. The
    adjoint drops ``rt.unbroadcast(g, x)`` when ``g``'s key equals ``x``'s.
    """

    def __init__(self, body: list, scalars: frozenset[str], arrays, namer, ranks=None):
        self.scalars, self.arrays, self.namer = scalars, arrays, namer
        self.ranks = ranks or {}  # names known to be arrays of that many dimensions
        self.defs: dict[str, list] = {}
        for node in (n for s in body for n in A.walk(s)):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                self.defs.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, (gast.Assign, gast.For)):
                for n in A.walk(node.targets[0] if isinstance(node, gast.Assign) else node.target):
                    if isinstance(n, gast.Name):
                        self.defs.setdefault(n.id, []).append(None)
        self.keys = {name: _TOP for name in self.defs}
        looped = {n.id for s in body for loop in A.walk(s)
                  if isinstance(loop, (gast.For, gast.While)) for n in A.walk(loop)
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        # names bound once, outside every loop: one value wherever they are read
        self.fixed = {n for n, values in self.defs.items()
                      if len(values) == 1 and n not in looped}
        changed = True
        while changed:  # from optimistic keys down to a fixed point
            changed = False
            for name, values in self.defs.items():
                new = self._join([None if v is None else self.of(v) for v in values])
                if new != self.keys[name]:
                    self.keys[name], changed = new, True

    @staticmethod
    def _join(keys: list):
        known = [k for k in keys if k is not _TOP]
        if any(k is None for k in known) or len(set(known)) > 1:
            return None
        return known[0] if known else _TOP

    def known(self, name: str) -> bool:
        """Whether every value ``name`` takes has one and the same (known) shape."""
        key = self.keys.get(name)
        return key is not None and key is not _TOP

    def parameter_like(self, name: str) -> str | None:
        """A parameter with ``name``'s shape (known to be an array), to read instead of a
        temporary whose shape alone is needed: the temporary can then be freed early."""
        key = self.keys.get(name)
        return key[1] if key is not None and key is not _TOP and key[0] == "name" else None

    def same(self, a, b) -> bool:
        """Whether expressions ``a`` and ``b`` certainly have the same shape."""
        ka, kb = self.of(a), self.of(b)
        return ka is not None and ka is not _TOP and ka == kb

    def of(self, node):
        if isinstance(node, gast.Constant):
            return SCALAR if type(node.value) in (int, float) else None
        if isinstance(node, gast.Name):
            name = node.id
            if name not in self.keys and self.namer.is_grad(name):
                name = self.namer.var_of(name)  # a gradient has its variable's shape
            if name in self.scalars:
                return SCALAR
            if name in self.keys:
                return self.keys[name]
            return ("name", name) if name in self.arrays else None
        if isinstance(node, gast.UnaryOp):
            return self.of(node.operand)
        if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
            return self._broadcast([node.left, node.right])
        if isinstance(node, gast.Subscript) and self._element(node):
            return SCALAR
        if isinstance(node, gast.Subscript):
            base, index = self.of(node.value), _index_key(node.slice, self.scalars)
            if base is None or index is None or base == SCALAR:
                return None
            return base if base is _TOP else (base if not index else ("index", base, index))
        if isinstance(node, gast.Call):
            func = getanno(node, Anno.FUNC)
            if func in _SAME_SHAPE and node.args:
                return self.of(node.args[0])
            if isinstance(node.func, gast.Attribute) and node.func.attr == "copy" \
                    and not node.args and func is None:
                return self.of(node.func.value)
            if isinstance(func, np.ufunc) and func.nout == 1 and not node.keywords:
                return self._broadcast(node.args)
            if func in _ALLOCATIONS and node.args:  # np.zeros(n): n's value, if it has one
                parts = node.args[0].elts if isinstance(node.args[0], gast.Tuple) \
                    else [node.args[0]]
                if all(type(_int(p)) is int or (isinstance(p, gast.Name) and (
                        p.id in self.fixed or p.id not in self.defs)) for p in parts):
                    return ("alloc", tuple(_int(p) if type(_int(p)) is int else p.id
                                           for p in parts))
        return None

    def _element(self, node: gast.Subscript) -> bool:
        """``x[i]`` / ``x[i, j]`` of an array of known rank with scalar indices (or ``bx[i]`` of
        its gradient)."""
        if not isinstance(node.value, gast.Name):
            return False
        name = node.value.id
        if name not in self.ranks and self.namer.is_grad(name):
            name = self.namer.var_of(name)
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        return self.ranks.get(name) == len(parts) and all(
            (isinstance(p, gast.Name) and p.id in self.scalars) or type(_int(p)) is int
            or (isinstance(p, gast.BinOp) and not isinstance(p.op, gast.MatMult)
                and all(isinstance(o, gast.Name) and o.id in self.scalars or type(_int(o)) is int
                        for o in (p.left, p.right)))
            for p in parts)

    def _broadcast(self, operands: list):
        keys = [self.of(o) for o in operands]
        if any(k is None for k in keys):
            return None
        arrays = {k for k in keys if k != SCALAR}
        if _TOP in arrays:
            return _TOP
        if len(arrays) > 1:
            return None
        return arrays.pop() if arrays else SCALAR


_NOT_INT = object()


def _int(node):
    """The value of an int (or None) literal, ``-3`` included; else ``_NOT_INT``."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        value = _int(node.operand)
        return -value if type(value) is int else _NOT_INT
    if isinstance(node, gast.Constant) and (type(node.value) is int or node.value is None):
        return node.value
    return _NOT_INT


def _index_key(index, scalars: frozenset[str]):
    """An index's effect on a shape, as a tuple (``()`` for no change), or None if unknown."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    out = []
    for p in parts:
        if isinstance(p, gast.Call) and isinstance(p.func, gast.Name) and p.func.id == "slice":
            p = A.index_syntax(p)
        if isinstance(p, gast.Slice):
            bounds = [None if b is None else _int(b) for b in (p.lower, p.upper, p.step)]
            if any(b is _NOT_INT or (b is not None and abs(b) > 32) for b in bounds) \
                    or bounds[2] == 0:
                return None
            part = slice(*bounds)
            out.append(("slice", tuple(len(range(n)[part]) for n in _SIZES)))
        elif isinstance(p, gast.Constant) and p.value is None:
            out.append(("new",))
        elif type(_int(p)) is int:
            out.append(("int", _int(p)))  # by position: elements of a list may differ
        elif isinstance(p, gast.Name) and p.id in scalars:
            out.append(("int", p.id))
        else:
            return None
    full = ("slice", tuple(len(range(n)) for n in _SIZES))
    while out and out[-1] == full:
        out.pop()  # x[1:, :] is x[1:]
    return tuple(out)
