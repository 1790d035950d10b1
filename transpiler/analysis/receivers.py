"""Which values may be objects: not numbers, NumPy arrays, or containers of those.

``x.sum()`` is differentiated as ``np.sum(x)`` and ``d.get(k)`` as ``dict.get(d, k)``: the
method's name picks the rule. That is right when the receiver is data (transpiler/arguments.py):
a NumPy array or scalar has the methods the rules assume, a dict has ``get`` and ``items``, and
on a Python number, list or tuple such a method either means the same (``list.copy``) or does
not exist (the primal raises). An object's ``sum`` may be anything, so before taking a method
for NumPy's the passes ask ``Receivers.may_be_object`` about its receiver.

A value may be an object when it is (least fixed point over the assignments of the body):

- a parameter the call gives an object (``ctx.objects``: the variant is compiled per call
  pattern, see api.py), a global or closure value holding one now, a module;
- an attribute, an index, a method result or an operation of a value that may be one, or a
  container holding one;
- the result of a call of one of the user's functions whose ``return`` may give one (the
  callee is analysed the same way, given which of its arguments may be objects), or of anything
  but NumPy, SciPy, ``math``, the runtime, the builtins and functions with rules, given data (a
  class, a callable object);
- an array of NumPy's own other kinds (``np.asmatrix``, ``np.ma``): data only in appearance.

A pass solves it (``solved()``) before it rewrites the tree in place: solved later, it would read
the tangent statements forward mode inserts into loop bodies, whose names are not yet defined.
The callees' analyses run on first use.
"""

from __future__ import annotations

import builtins
import inspect

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno
from transpiler.arguments import defaults_holding_objects, holds_objects
from transpiler.context import Context, Mode
from transpiler.errors import TranspileError
from transpiler.frontend import parse_function
from transpiler.passes.checkpoint import is_checkpointed_loop
from transpiler.passes.functions import bound_names, functions
from transpiler.passes.higher_order import higher_order
from transpiler.passes.resolve import resolve
from transpiler.passes.solvers import solver_kinds
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, TANGENTS, is_user_function

_DATA_MODULES = frozenset({"numpy", "scipy", "math", "cmath", "runtime", "transpiler",
                           "builtins"})
_OTHER_ARRAYS = ("numpy.ma", "numpy.rec", "numpy.char", "numpy.matrixlib")
_DATA_CLASSES = frozenset({float, int, bool, complex, str, bytes, tuple, list, dict, range,
                           slice, zip, enumerate, reversed, np.ndarray})
_NOT_DATA = frozenset({builtins.type, builtins.object, builtins.super, builtins.vars,
                       builtins.iter, builtins.globals, builtins.locals})
_UNKNOWN = object()
# library functions that make a callable of the function they are given (not data)
_MAKE_CALLABLES = frozenset({np.vectorize, np.frompyfunc})


_DEPTH = 8  # how deep calls of the user's functions are followed (deeper: may be objects)


class Receivers:
    """``may_be_object(node)``: whether expression ``node`` of function ``fn`` may evaluate to an
    object, given the parameters ``ctx.objects`` the call gives objects."""

    def __init__(self, fn: gast.FunctionDef, ctx, calls: tuple = (), memo: dict | None = None):
        self.fn, self.ctx = fn, ctx
        self.calls = calls  # the user's functions being analysed, callers first
        self.memo = {} if memo is None else memo  # (function, objects) -> may return one
        self.names: set[str] | None = None  # computed on first use
        self.free: dict[str, bool] = {}

    def solved(self) -> Receivers:
        """This analysis, its fixed point computed now (on the tree as it is)."""
        if self.names is None:
            self._solve()
        return self

    def may_be_object(self, node) -> bool:
        if self.names is None:
            self._solve()
        return self._object(node)

    def _solve(self) -> None:
        nodes = A.walk(self.fn)
        self.locals = {n.id for n in nodes if isinstance(n, gast.Name)
                       and isinstance(n.ctx, (gast.Store, gast.Param))}
        edges = []
        for node in nodes:
            if isinstance(node, gast.Assign) and is_checkpointed_loop(node.value):
                for target, value in zip(node.targets[0].elts, node.value.args[2:],
                                         strict=True):  # (a loop's state keeps its kind)
                    edges.append(({target.id}, value))
            elif isinstance(node, gast.Assign):
                targets = {n.id for t in node.targets for n in A.walk(t)
                           if isinstance(n, gast.Name)}
                edges.append((targets, node.value))
            elif isinstance(node, (gast.For, gast.comprehension)):
                edges.append(({n.id for n in A.walk(node.target) if isinstance(n, gast.Name)},
                              node.iter))
        self.names = set(self.ctx.objects)
        changed = True
        while changed:
            changed = False
            for targets, value in edges:
                if not targets <= self.names and self._object(value):
                    self.names |= targets
                    changed = True

    def _object(self, node) -> bool:
        if isinstance(node, gast.Constant):
            return False
        if isinstance(node, gast.Name):
            return node.id in self.names if node.id in self.locals else self._free(node.id)
        if isinstance(node, gast.Attribute):
            value = self._constant(node)
            if value is not _UNKNOWN:
                return self._holds_objects(value)
            return node.attr == "base" or self._object(node.value)
        if isinstance(node, gast.Subscript):
            return self._object(node.value)
        if isinstance(node, gast.Call):
            return self._call(node)
        if isinstance(node, (gast.Lambda, gast.Await, gast.Yield, gast.YieldFrom,
                             gast.NamedExpr)):
            return True
        if isinstance(node, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            parts = [getattr(node, f) for f in ("elt", "key", "value") if hasattr(node, f)]
            parts += [e for g in node.generators for e in [g.iter, *g.ifs]]
            return any(self._object(p) for p in parts)
        return any(self._object(c) for c in gast.iter_child_nodes(node)
                   if isinstance(c, gast.expr))

    def _call(self, node: gast.Call) -> bool:
        args = [a.value if isinstance(a, gast.Starred) else a for a in node.args] \
            + [kw.value for kw in node.keywords]
        func = getanno(node, Anno.FUNC)
        if func is runtime.data:  # an object's field, checked to be data (passes/objects.py)
            return False
        if func in (runtime.implicit_root, runtime.implicit_system, runtime.implicit_minimum,
                    runtime.fixed_point, runtime.root_of, runtime.ode_solution,
                    runtime.step_times, runtime.integral) \
                or solver_kinds().get(func, (None, "?"))[1] is None:
            # a scipy.optimize solution, an ODE's or an integral's (passes/solvers.py) or a
            # converged loop's state (passes/converged.py): a number or an array, or a tuple
            # of them
            return False
        if func is runtime.index_join:  # np.r_[...]: the join of its items (np.r_ is no data)
            args = args[1:]
        if func is None and hasanno(node.func, Anno.BUILTIN):  # the compiler's own len, range
            func = getattr(builtins, node.func.id)
        if func is None:  # a method of a local value, or a local callable
            if not isinstance(node.func, gast.Attribute):
                return True
            return self._object(node.func.value) or any(self._object(a) for a in args)
        if inspect.ismethod(func) and is_user_function(func.__func__) \
                and isinstance(node.func, gast.Attribute):  # m.loss(x): Model.loss(m, x)
            return self._returns_object(func.__func__, [node.func.value, *node.args],
                                        node.keywords)
        if is_user_function(func):
            return self._returns_object(func, node.args, node.keywords,
                                        getanno(node, Anno.KNOWN, ()))
        if _keeps_data(func) and func not in _MAKE_CALLABLES:  # (a lambda given to a library
            args = [a for a in args if not isinstance(a, gast.Lambda)]  # function: called by it)
        return not _keeps_data(func) or any(self._object(a) for a in args)

    def _returns_object(self, func, args: list, keywords: list, known: tuple = ()) -> bool:
        """Whether the user's function ``func``, called with these argument nodes (and given
        the ``known`` functions of passes/functions.py), may return an object: its ``return``
        values, analysed like this function's body."""
        extra = {n for param, _, npos, keys in known for n in bound_names(param, npos, keys)}
        keywords = [kw for kw in keywords if kw.arg not in extra]
        if len(self.calls) >= _DEPTH or func in self.calls or any(
                isinstance(a, gast.Starred) for a in args) or any(
                kw.arg is None for kw in keywords):
            return True
        signature = inspect.signature(func)
        try:
            bound = signature.bind(*args, **{kw.arg: kw.value for kw in keywords}).arguments
        except TypeError:
            return True  # the call itself will say why
        objects = set()
        for name, given in bound.items():
            kind = signature.parameters[name].kind
            nodes = given if kind is inspect.Parameter.VAR_POSITIONAL else \
                given.values() if kind is inspect.Parameter.VAR_KEYWORD else [given]
            if any(self._object(n) for n in nodes):
                objects.add(name)
        key = (func, frozenset(objects), known)
        if key not in self.memo:
            # A recursive call met while ``func`` is analysed is assumed to return data, the
            # least fixed point: if the answer is "may be an object" after all, the answers
            # found under that assumption are forgotten (monotone: one more round is not needed
            # for ``func`` itself).
            before = set(self.memo)
            self.memo[key] = False
            if self._analyse(func, frozenset(objects), known):
                for other in set(self.memo) - before:
                    del self.memo[other]
                self.memo[key] = True
        return self.memo[key]

    def _analyse(self, func, objects: frozenset[str], known: tuple = ()) -> bool:
        try:
            tree, filename, indent = parse_function(func)
            ctx = Context(fn=func, filename=filename, indent=indent, wrt=(), mode=Mode.GRAD,
                          options=self.ctx.options,
                          objects=objects | defaults_holding_objects(func), known=known)
            higher_order(tree, ctx)  # (map(f, xs) as the comprehension it is compiled as)
            resolve(tree, ctx)
            if known:  # its f(y) calls the function it is given
                functions(tree, ctx)
        except (TranspileError, TypeError):  # no source, an undefined name, an array default
            return True
        callee = Receivers(tree, ctx, (*self.calls, self.ctx.fn), self.memo)
        return any(callee.may_be_object(n.value) for n in A.walk(tree)
                   if isinstance(n, gast.Return) and n.value is not None)

    def _free(self, name: str) -> bool:
        """A global, closure or builtin value: whether it holds an object now."""
        found = self.free.get(name)
        if found is None:
            try:
                found = self._holds_objects(self.ctx.lookup(name))
            except (AttributeError, ValueError):  # undefined, or an empty closure cell
                found = True
            self.free[name] = found
        return found

    def _constant(self, node):
        """The value of ``a.b.c`` rooted at a global or closure name, evaluated now."""
        if isinstance(node, gast.Name):
            if node.id in self.locals:
                return _UNKNOWN
            try:
                return self.ctx.lookup(node.id)
            except (AttributeError, ValueError):
                return _UNKNOWN
        if isinstance(node, gast.Attribute):
            base = self._constant(node.value)
            return _UNKNOWN if base is _UNKNOWN else getattr(base, node.attr, _UNKNOWN)
        return _UNKNOWN

    def _holds_objects(self, value) -> bool:
        if isinstance(value, np.dtype) or (isinstance(value, type) and (
                value in _DATA_CLASSES or issubclass(value, np.generic))):
            return False  # a data type named as a value (dtype=complex): no object comes of it
        try:
            return holds_objects(value, "a global")
        except TypeError:  # an array type of its own: not data either
            return True


def _keeps_data(func) -> bool:
    """Whether ``func`` returns data when given data: a function with rules, NumPy (but for its
    other array kinds), SciPy, ``math``, the runtime, a builtin; a class only if it is a data
    type."""
    if isinstance(func, type):  # (a scipy.sparse matrix: data, whose methods the sparse
        return func in _DATA_CLASSES or issubclass(func, np.generic) \
            or (getattr(func, "__module__", None) or "").startswith("scipy.sparse")  # rules')
    try:
        if func in _NOT_DATA or func is np.asmatrix or func is np.bmat:
            return False
        if func in NONDIFF:
            return True
        if func in ADJOINTS or func in TANGENTS:
            return True
    except TypeError:  # unhashable
        return False
    module = getattr(func, "__module__", None) or ""
    if module.startswith(_OTHER_ARRAYS):
        return False
    return isinstance(func, np.ufunc) or module.split(".")[0] in _DATA_MODULES
