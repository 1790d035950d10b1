"""Find the values whose arithmetic the real rules would misread: complex numbers, matrices.

Most rules are written for real NumPy arrays: ``np.abs``'s adjoint is ``sign(x) * g``, the
adjoint of ``a * b`` multiplies elementwise. An ``np.matrix``, whose ``*`` is a matrix product,
gives a wrong number there: this pass finds, before any rule is applied, each value that may be
one and refuses the first differentiated statement that reads one (as an operand: its rule
would see it, even where its result is an array), at its line. The values that may be complex
or ``scipy.sparse`` matrices are recorded instead (``facts.complex``, ``facts.sparse``): the
lowering takes the rule each operation has for them, or refuses the operation at its line
(rules/complex_rules.py, rules/sparse_rules.py). A call of the user's function may return a
sparse matrix when its source says so, given which arguments are sparse.

A value is of a kind when it is made by a call that makes such values (``complex(a, b)``,
``np.fft.fft``, ``cmath.exp``, ``dtype=complex``; ``scipy.sparse.diags``, ``np.matrix``,
``.todense()``), is a literal of it (``1j``), a global or closure variable holding one, a
parameter the variant knows to hold one (a complex array: ``ctx.arrays``), or is computed from
any of those (a matrix given as an argument is refused when the call is checked:
arguments.py). Some operations leave the kind (``np.abs``, ``np.real``, ``.real`` of a complex
value; ``.toarray()`` of a sparse matrix and its product with an array, ``A @ u``;
``np.asarray`` of an np.matrix), so data of these kinds that is not differentiated may still be
used:

>>> from types import SimpleNamespace
>>> from transpiler.errors import TranspileError
>>> from transpiler.analysis.facts import NONE
>>> fn = gast.parse("def f(x, c):\\n    w = (c * 1j).imag\\n    y = x * w\\n    return y").body[0]
>>> ctx = SimpleNamespace(wrt=("x",), arrays={}, bindings={}, fn=None, indent=0,
...                       filename="f.py", facts=NONE, lookup={}.__getitem__)
>>> check_kinds(fn, ctx) is fn
True
>>> sorted(ctx.facts.complex)
[]
>>> fn = gast.parse("def f(x, c):\\n    z = c * 1j\\n    y = x * z\\n    return y").body[0]
>>> _ = check_kinds(fn, ctx)
>>> sorted(ctx.facts.complex)
['y', 'z']
"""

from __future__ import annotations

import builtins
import inspect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import SimpleNamespace

import gast
import numpy as np

from transpiler import ast_util as A
from transpiler.analysis.activity import activity
from transpiler.analysis.scalars import is_scalar
from transpiler.anno import Anno, getanno, hasanno
from transpiler.errors import TranspileError, error_at
from transpiler.frontend import parse_function
from transpiler.passes import tape
from transpiler.rules.complex_rules import (
    COMPLEX_MODULES,
    COMPLEX_RESULTS,
    KEEP_KIND,
    REAL_ITEMS,
    REAL_RESULTS,
)
from transpiler.rules.registry import is_user_function

_SHAPES = frozenset({"shape", "ndim", "size", "dtype", "nnz"})
_QUERIES = frozenset({np.shape, np.ndim, np.size, len, builtins.isinstance, np.iscomplexobj,
                      np.isrealobj})


@dataclass(frozen=True)
class Kind:
    """A kind of value the rules would misread, and how the pass recognises it."""

    name: str  # for messages: "complex numbers"
    adjective: str  # "'z' may be <adjective> here"
    holds: Callable[[object], bool]  # a value (a global's, a default's) is of the kind
    makes: Callable[[gast.Call, object], bool]  # a call (and the function it calls) makes one
    leaves: Callable  # (node, function it calls, of_kind(expr)): its result is not of the kind
    hint: str
    items: Callable[[object], frozenset] = lambda func: frozenset()  # of a tuple result, never


def _is(func, table: frozenset) -> bool:
    try:
        return func in table
    except TypeError:  # unhashable callable
        return False


def _in_modules(func, modules: tuple[str, ...]) -> bool:
    module = getattr(func, "__module__", None) or ""
    return any(module == m or module.startswith(m + ".") for m in modules)


# --- complex numbers (which calls make, keep and leave them: rules/complex_rules.py) ---

def _holds_complex(value) -> bool:
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    if isinstance(value, (list, tuple)):
        return any(_holds_complex(v) for v in value[:64])
    if isinstance(value, dict):
        return any(_holds_complex(v) for v in list(value.values())[:64])
    return False


def _complex_dtype(node, scope) -> bool:
    """Whether a dtype argument names a complex type (``complex``, ``np.complex128``,
    ``"c16"``)."""
    if isinstance(node, gast.Constant) and isinstance(node.value, str):
        value = node.value
    else:
        value = scope(node)
    try:
        return value is not None and np.dtype(value).kind == "c"
    except TypeError:
        return False


def _makes_complex(call: gast.Call, func, scope) -> bool:
    if _is(func, COMPLEX_RESULTS) or (isinstance(func, type)
                                       and issubclass(func, np.complexfloating)):
        return True
    if func is not None and not _is(func, REAL_RESULTS) and not _is(func, KEEP_KIND) \
            and _in_modules(func, COMPLEX_MODULES):
        return True
    if any(k.arg == "dtype" and _complex_dtype(k.value, scope) for k in call.keywords):
        return True
    return isinstance(call.func, gast.Attribute) and call.func.attr == "astype" \
        and bool(call.args) and _complex_dtype(call.args[0], scope)


def _leaves_complex(node, func, of_kind) -> bool:
    if isinstance(node, gast.Attribute):
        return node.attr in ("real", "imag")
    if func is np.linalg.svd:  # the singular values alone
        flag = next((k.value for k in node.keywords if k.arg == "compute_uv"),
                    node.args[2] if len(node.args) > 2 else None)
        return isinstance(flag, gast.Constant) and flag.value is False
    if isinstance(node, gast.Slice) or func is builtins.slice or (  # np.mgrid[0:1:5j]
            isinstance(node, gast.Call) and hasanno(node.func, Anno.BUILTIN)
            and getattr(node.func, "id", None) == "slice"):
        return True  # a slice's complex step counts points
    return _is(func, REAL_RESULTS)


COMPLEX = Kind("complex numbers", "complex", _holds_complex, _makes_complex, _leaves_complex,
               "compute with the real and imaginary parts as two real values, or keep complex "
               "values to data that is not differentiated (np.abs, np.real, np.imag and "
               "np.angle of it are real)", lambda func: REAL_ITEMS.get(func, frozenset())
               if _is(func, REAL_ITEMS) else frozenset())


# --- matrices: scipy.sparse's and np.matrix, whose * is a matrix product ---

def _holds_sparse(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_sparse(v) for v in value[:64])
    if isinstance(value, dict):
        return any(_holds_sparse(v) for v in list(value.values())[:64])
    return _in_modules(type(value), ("scipy.sparse",))


_MADE_IN_LINALG = frozenset({"splu", "factorized", "aslinearoperator", "LinearOperator"})


def _makes_sparse(call: gast.Call, func, scope) -> bool:
    # (scipy.sparse.linalg solves give arrays, but splu a factorization of a sparse matrix,
    # factorized its solve and aslinearoperator an operator, whose methods are sparse rules';
    # issparse and friends give a bool)
    if getattr(func, "__name__", "") in _MADE_IN_LINALG \
            and _in_modules(func, ("scipy.sparse.linalg",)):
        return True
    return func is not None and _in_modules(func, ("scipy.sparse",)) \
        and not _in_modules(func, ("scipy.sparse.linalg", "scipy.sparse.csgraph")) \
        and not getattr(func, "__name__", "").startswith(("issparse", "isspmatrix"))


def _leaves_sparse(node, func, of_kind) -> bool:
    """``.toarray()`` and ``.todense()`` (an np.matrix: the next kind) leave it, and so do a
    product with an array (``A @ u`` and ``A.dot(u)`` are arrays), a solve with one
    (``spsolve(A, b)``, ``solve(b)`` of ``solve = factorized(A)``), a sum and a diagonal. A
    gradient's helper gives arrays and ``SparseGrad`` values, not matrices (but
    ``rt.sparse_grad_like``, the gradient of a sparse argument, and ``rt.owned``, a copy of a
    matrix an assembly loop writes into): a gradient differentiated
    again takes the sparse rules only where a helper reads a matrix."""
    if isinstance(node, gast.Call) and _in_modules(func, ("runtime",)):  # (rt.owned: a copy)
        return getattr(func, "__name__", "") not in ("sparse_grad_like", "owned")
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and of_kind(node.func):
        return not any(of_kind(a) for a in node.args)
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
        if node.func.attr in ("toarray", "todense", "sum", "diagonal", "trace"):
            return True
        if node.func.attr in ("dot", "solve", "matvec", "matmat") and len(node.args) >= 1:
            return of_kind(node.func.value) and not of_kind(node.args[0])
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
        return of_kind(node.left) != of_kind(node.right)
    if isinstance(node, gast.Call) and _in_modules(func, ("scipy.sparse.linalg",)) \
            and getattr(func, "__name__", "") not in _MADE_IN_LINALG:
        return not any(of_kind(a) for a in node.args[1:])  # (spsolve(A, b) of a dense b)
    return False


SPARSE = Kind("scipy.sparse matrices", "a scipy.sparse matrix",
              _holds_sparse, _makes_sparse, _leaves_sparse,
              "make it a NumPy array first (.toarray()), or keep the matrix to data that is not "
              "differentiated (its product with an array, A @ u, is an array)")


def _holds_np_matrix(value) -> bool:
    return isinstance(value, np.matrix)


def _makes_np_matrix(call: gast.Call, func, scope) -> bool:
    return func is np.matrix or func is getattr(np, "asmatrix", None) \
        or func is getattr(np, "bmat", None) \
        or (isinstance(call.func, gast.Attribute) and call.func.attr == "todense")


def _leaves_np_matrix(node, func, of_kind) -> bool:
    if isinstance(node, gast.Attribute):
        return node.attr == "A"
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr == "getA":
        return True
    return func is np.asarray or func is np.array or func is np.asarray_chkfinite


NP_MATRIX = Kind("np.matrix values", "an np.matrix (whose * is a matrix product)",
                 _holds_np_matrix, _makes_np_matrix, _leaves_np_matrix,
                 "make it an array first (np.asarray(m), m.A)")

REFUSED = (NP_MATRIX,)  # (the values that may be complex or sparse are recorded: facts)


def check_kinds(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    ctx.facts = replace(ctx.facts, complex=frozenset(_Found(COMPLEX, fn, ctx).origins),
                        sparse=_Found(SPARSE, fn, ctx).names())
    if ctx.facts.complex and getattr(ctx, "mode", "jvp") != "jvp":
        _refuse_complex_result(fn, ctx)
    if tape.is_generated(getattr(ctx, "fn", None)):
        return fn  # a gradient differentiated again: its values are those of a checked one
    varied = None
    indexers = [n for n in A.walk(fn) if isinstance(n, gast.Subscript)
                and (getanno(n, Anno.INDEXER, False) is not False
                     or _indexes_object(n.value, getattr(ctx, "classes", {})))]
    if indexers:
        varied = activity(fn.body, tuple(ctx.wrt), [])[1]
        _refuse_indexer(indexers, ctx, varied)
    for kind in REFUSED:
        found = _Found(kind, fn, ctx)
        if not found.origins and not found.anywhere:
            continue
        if varied is None:
            varied = activity(fn.body, tuple(ctx.wrt), [])[1]
        _refuse_first(kind, found, fn, ctx, varied)
    return fn


def _refuse_first(kind: Kind, found: _Found, fn, ctx, varied: set[str]) -> None:
    """Raise at the first differentiated statement that reads a value of ``kind``."""
    for stmt in A.walk(fn):
        if not isinstance(stmt, gast.Assign):
            continue
        targets = {n.id for t in stmt.targets for n in A.walk(t) if isinstance(n, gast.Name)}
        if not (targets & varied or _reads(stmt.value) & varied):
            continue
        source = found.source(stmt.value) or found.operand(stmt.value)
        if source is None:
            continue
        if isinstance(source, gast.Name) and found.origins.get(source.id) is fn:
            what = f"the argument '{source.id}' is {kind.adjective}"
        elif isinstance(source, gast.Name) and source.id not in found.origins:
            what = f"'{source.id}' (of the module, or a closure's) is {kind.adjective}"
        elif isinstance(source, gast.Name):
            origin = found.origins.get(source.id)
            variable = ctx.facts.variable(source.id) if ctx.facts else source.id
            where = f" (from line {origin.lineno})" if getattr(origin, "lineno", None) else ""
            what = f"'{variable}' may be {kind.adjective} here{where}"
        else:
            what = f"this value is {kind.adjective}"
        raise error_at(source, ctx, f"{kind.name} are not supported yet: {what}, and the "
                       "gradient would carry it through rules for real arrays", kind.hint)


def _refuse_complex_result(fn, ctx) -> None:
    """A gradient needs a real result; and a helper's complex result would reach its caller's
    rules as a real value: refused (``jvp`` and ``vjp`` of a function returning complex values
    are fine)."""
    ret = fn.body[-1] if fn.body and isinstance(fn.body[-1], gast.Return) else None
    if ret is None or ret.value is None:
        return
    value = ret.value
    if getattr(ctx.options, "aux", False) and isinstance(value, gast.Tuple) and value.elts:
        value = value.elts[0]  # (has_aux: the value, then anything)
    name = next((n.id for n in A.walk(value) if isinstance(n, gast.Name)
                 and n.id in ctx.facts.complex), None)
    if name is None:
        return
    variable = ctx.facts.variable(name)
    if ctx.mode == "split" and not getattr(ctx, "called", True):
        return  # (vjp's: its pullback takes a complex seed)
    if ctx.mode in ("grad", "value_and_grad") and not getattr(ctx, "called", False):
        raise error_at(ret, ctx, "grad needs a real-valued function; this one returns "
                       f"'{variable}', which may be complex", "return a real loss of it "
                       "(np.abs(z) ** 2, np.real(z), np.sum(np.abs(Z) ** 2)), or use jvp for its "
                       "derivative")
    raise error_at(ret, ctx, "complex numbers are not supported yet as the result of a function "
                   f"called from a differentiated one: '{variable}' may be complex",
                   "return its real and imaginary parts (np.real(z), np.imag(z)) and combine "
                   "them in the caller")


def _refuse_indexer(subscripts: list, ctx, varied: set[str]) -> None:
    """Raise at the first subscript of an object that computes with its index (resolve.py
    marks them: ``np.s_``, ``np.mgrid``, a user's ``__getitem__``) whose index is
    differentiated: no rule says how its result depends on the index."""
    for node in subscripts:
        if _reads(node.slice) & varied:
            name = getanno(node, Anno.INDEXER)
            if name is None and isinstance(node.value, gast.Name):
                facts = getattr(ctx, "facts", None)
                name = facts.variable(node.value.id) if facts else node.value.id
            name = name or "this object"
            raise error_at(node, ctx, f"a differentiated value is an index into '{name}', "
                           "which is not an array or a container: its result depends on the "
                           "index in a way no gradient rule covers",
                           "compute the value with NumPy functions (np.concatenate, np.arange, "
                           "np.linspace, a method called by name), or index it with values "
                           "that are not differentiated")


def _indexes_object(node, classes: dict) -> bool:
    """Whether ``node`` names a parameter given an object whose class defines its own
    ``__getitem__`` (not a tuple's, a list's or a dict's)."""
    cls = classes.get(node.id) if isinstance(node, gast.Name) else None
    if cls is None:
        return False
    for klass in cls.__mro__:
        if klass in (tuple, list, dict):
            return False
        if "__getitem__" in vars(klass):
            return True
    return False


def _reads(value) -> set[str]:
    return {n.id for n in A.walk(value) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


_CONTAINERS = (gast.Dict, gast.List, gast.Tuple, gast.Set, gast.DictComp, gast.ListComp,
               gast.SetComp)


class _Found:
    """The names of ``fn`` that may hold a value of ``kind``, each with the node it comes
    from (``fn`` itself for a parameter)."""

    def __init__(self, kind: Kind, fn: gast.FunctionDef, ctx, depth: int = 0,
                 memo: dict | None = None) -> None:
        self.kind, self.ctx, self.fn = kind, ctx, fn
        self.depth, self.memo = depth, {} if memo is None else memo
        self.assigned = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                         and isinstance(n.ctx, (gast.Store, gast.Param))}
        self.origins: dict[str, gast.AST] = {p: fn for p in _parameters(kind, fn, ctx)}
        assigns = [s for s in A.walk(fn) if isinstance(s, gast.Assign)]
        stores = Counter(n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                         and isinstance(n.ctx, gast.Store))
        self.containers = {n.id for s in assigns if isinstance(s.value, _CONTAINERS) or (
            isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name)
            and s.value.func.id in ("dict", "list", "tuple")) for t in s.targets
            for n in A.walk(t) if isinstance(n, gast.Name)} | {
            n.id for loop in A.walk(fn) if isinstance(loop, (gast.For, gast.comprehension))
            for n in A.walk(loop.target) if isinstance(n, gast.Name)}
        self.calls = {s.targets[0].id: s.value for s in assigns if isinstance(s.value, gast.Call)
                      and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                      and stores[s.targets[0].id] == 1}  # (names bound once, to a call)
        self.anywhere = any(self.source(s.value) is not None for s in assigns)
        changed = self.anywhere or bool(self.origins)
        while changed:  # to a fixed point: loops carry values round
            changed = False
            for stmt in assigns:
                source = self.source(stmt.value)
                if source is None:
                    continue
                for t in stmt.targets:
                    for n in A.walk(t):
                        if isinstance(n, gast.Name) and n.id not in self.origins:
                            self.origins[n.id] = source
                            changed = True

    def source(self, node):
        """The first node in ``node`` that may be of the kind (None: none is)."""
        if isinstance(node, gast.Constant):
            return node if self.kind.holds(node.value) else None
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            if node.id in self.origins:
                return node
            return node if node.id not in self.assigned \
                and self.kind.holds(self._global(node.id)) else None
        if isinstance(node, gast.Attribute) and node.attr in _SHAPES:
            return None
        if isinstance(node, (gast.Compare, gast.BoolOp)):
            return None
        if self.kind is SPARSE and isinstance(node, gast.Subscript) and self._entry(node):
            return None  # (A[i, j] of numbers is a number)
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and isinstance(node.slice, gast.Constant) and node.value.id in self.calls \
                and node.slice.value in self.kind.items(
                    getanno(self.calls[node.value.id], Anno.FUNC)):
            return None  # (an item of a tuple result that is never of the kind)
        func = None
        if isinstance(node, gast.Call):  # (a helper's source read here is not resolved yet)
            func = getanno(node, Anno.FUNC, None) or (self._value(node.func) if self.depth
                                                       else None)
        if _is(func, _QUERIES) or self.kind.leaves(
                node, func, lambda e: self.source(e) is not None):
            return None
        if self.kind in (SPARSE, COMPLEX) and is_user_function(func) and self.depth < _DEPTH:
            return node if self._returns_kind(func, node) else None
        if isinstance(node, gast.Call) and self.kind.makes(node, func, self._value):
            return node
        for child in gast.iter_child_nodes(node):
            found = self.source(child)
            if found is not None:
                return found
        return None

    def _entry(self, node: gast.Subscript) -> bool:
        """Whether ``node`` reads one entry of a matrix: a name never bound to a container
        (``d[i, j]`` of a dict may hold a matrix), indexed by two numbers."""
        index = node.slice
        facts = getattr(self.ctx, "facts", None) if self.depth == 0 else None
        scalars = getattr(facts, "scalars", None) or frozenset()
        ranks = getattr(facts, "ranks", None) or {}

        def number(e) -> bool:  # (a number, or an element of an array of known rank:
            if is_scalar(e, scalars):  # A[nodes[a], nodes[b]] of a row of a connectivity)
                return True
            parts = e.slice.elts if isinstance(e, gast.Subscript) and isinstance(
                e.slice, gast.Tuple) else [getattr(e, "slice", None)]
            return isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name) \
                and ranks.get(e.value.id) == len(parts) \
                and all(is_scalar(p, scalars) for p in parts)

        return isinstance(index, gast.Tuple) and len(index.elts) == 2 \
            and isinstance(node.value, gast.Name) and node.value.id not in self.containers \
            and all(number(e) for e in index.elts)

    def _returns_kind(self, func, call: gast.Call) -> bool:
        """Whether a call of the user's function ``func`` may return a value of the kind, given
        which of its parameters the call gives one (its source analysed the same way; not
        readable: it may)."""
        passed = [a for a in call.args] + [k.value for k in call.keywords]
        if not any(self.source(a) is not None for a in passed):
            return False
        try:
            params = list(inspect.signature(func).parameters)
            node, _, _ = parse_function(func)
        except (TypeError, ValueError, OSError, TranspileError):
            return True
        if any(isinstance(a, gast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return True
        given = {params[i] for i, a in enumerate(call.args)
                 if i < len(params) and self.source(a) is not None}
        given |= {k.arg for k in call.keywords if self.source(k.value) is not None}
        key = (func, frozenset(given))
        if key not in self.memo:
            self.memo[key] = True  # (a recursive call: it may)
            scope = SimpleNamespace(sparse_values=frozenset(given) if self.kind is SPARSE
                                    else frozenset(), complex_values=frozenset(given)
                                    if self.kind is COMPLEX else frozenset(), bindings={},
                                    fn=func, lookup=_lookup(func), arrays={})
            found = _Found(self.kind, node, scope, self.depth + 1, self.memo)
            self.memo[key] = any(r.value is not None and found.source(r.value) is not None
                                 for r in A.walk(node) if isinstance(r, gast.Return))
        return self.memo[key]

    def names(self) -> frozenset[str]:
        """The names that may hold a value of the kind: those assigned one, and the
        module's or closure's names holding one now."""
        loaded = {n.id for n in A.walk(self.fn) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, gast.Load) and n.id not in self.assigned}
        return frozenset(self.origins) | {n for n in loaded if self.kind.holds(self._global(n))}

    def operand(self, value):
        """A name of the kind that ``value`` (one operation, after anf) reads, though its
        result may not be (``A @ u``): the operation's rule would see it."""
        return next((n for n in A.walk(value) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, gast.Load) and self.source(n) is not None), None)

    def _value(self, node):
        """What a name or dotted name means in the user's module (None: a local, or not
        known)."""
        if isinstance(node, gast.Name):
            return None if node.id in self.assigned else self._global(node.id)
        if isinstance(node, gast.Attribute):
            base = self._value(node.value)
            return None if base is None else getattr(base, node.attr, None)
        return None

    def _global(self, name: str):
        bindings = getattr(self.ctx, "bindings", {})
        if name in bindings:  # (a snapshot of a called global: a sparse one's methods)
            return bindings[name] if self.kind is SPARSE else None
        try:
            return self.ctx.lookup(name)
        except (AttributeError, ValueError, KeyError):
            return None


_DEPTH = 4  # how deep calls of the user's functions are followed (deeper: they may)


def _lookup(func):
    """A function's global (or closure) names, as ``ctx.lookup`` reads them."""
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or (), strict=True))

    def lookup(name: str):
        if name in cells:
            return cells[name].cell_contents
        if name in func.__globals__:
            return func.__globals__[name]
        return getattr(builtins, name)

    return lookup


def _parameters(kind: Kind, fn: gast.FunctionDef, ctx) -> set[str]:
    """The parameters the variant knows to hold ``kind`` (complex arrays), and those whose
    default does. (A matrix given as an argument is refused when the call is checked:
    arguments.py.)"""
    found = set()
    if kind is COMPLEX:
        found = {p for p, (_, dtype) in getattr(ctx, "arrays", {}).items() if dtype[1] == "c"}
        found |= getattr(ctx, "complex_numbers", frozenset())
        found |= getattr(ctx, "complex_values", frozenset())
    if kind is SPARSE:
        found = set(getattr(ctx, "sparse_values", frozenset()))
    defaults = getattr(getattr(ctx, "fn", None), "__defaults__", None) or ()
    params = [a.id for a in fn.args.args]
    for p, value in zip(params[len(params) - len(defaults):], defaults, strict=True):
        if kind.holds(value):
            found.add(p)
    return found
