"""Library calls that take a function, written out as the comprehensions and loops they stand for.

Python's and NumPy's higher-order functions call a function of the user's per element, per lane
or per piece. Written out, they are ordinary code that the later passes differentiate: the
function's own rule or source, once per element (desugar lowers the comprehensions to loops).

- ``map(f, xs, ys)``                 -> ``[f(_x, _y) for _x, _y in zip(xs, ys)]``
- ``functools.reduce(f, xs, init)``  -> ``_acc = init`` / ``for _v in xs: _acc = f(_acc, _v)``
  before the statement, which reads ``_acc`` (without ``init``: the first item, then the rest)
- ``np.vectorize(f)(x, y)``          -> ``np.reshape(np.array([f(_x, _y) for _x, _y in zip(
  np.ravel(bx), np.ravel(by))]), shape)``, ``bx, by`` the arguments broadcast together; also
  ``vf = np.vectorize(f)`` then ``vf(x)``, and a module's ``@np.vectorize`` function
- ``np.apply_along_axis(f, axis, a, *args)`` -> ``rt.along_axis(np.array([f(_r, *args) for _r
  in rt.lanes(a, axis)]), a, axis)``
- ``np.piecewise(x, [c0, c1], [f0, f1, f2])`` of functions -> masked writes before the
  statement: ``_y = np.zeros_like(_x)``, ``_y[c0] = f0(_x[c0])``, ..., ``f2`` where no condition
  holds (each function sees only its piece, as NumPy calls it)
- ``x = brentq(f, a, b, args=(p,))`` (``brenth``, ``ridder``, ``bisect``, ``toms748``,
  ``newton``, ``root_scalar(...).root``) -> ``_root = rt.stop_gradient(brentq(f, a, b,
  args=(p,)))`` and ``_slope = rt.stop_gradient(implicit_slope(f, _root, (p,)))`` before the
  statement, which reads ``rt.implicit_root(_root, f(_root, p), _slope)``: the solver's root,
  whose derivative is the residual's over ``-dF/dx`` (the implicit function theorem,
  runtime/implicit.py), ``f(_root, p)`` differentiated like any call of the user's function
- ``w = minimize(f, w0, args=(p,)).x`` (``minimize_scalar``) -> ``_root = rt.stop_gradient(
  minimize(f, w0, args=(p,)).x)`` before the statement, which reads ``rt.implicit_minimum(
  _root, f, (p,), stationary, bounds)``: the minimum, whose derivative is the theorem's on
  ``grad_x f = 0``, the objective's second derivatives taken at run time (transpiler/
  implicit.py); a lambda's closure ``lam`` is passed as an argument of a copy ``lambda w, lam:
  ...`` so that it gets its gradient
- ``res = minimize(...)`` (``root``, ``root_scalar``: a result object assigned once) -> ``res =
  rt.stop_gradient(minimize(...))`` and after it ``_x = rt.implicit_minimum(res.x, ...)``;
  later ``res.x`` reads ``_x``, ``res.fun`` is ``f(_x, p)``

``f`` may be any function the compiler can call: a module's function, a NumPy function, a
lambda (named first: ``_f = lambda t: ...``, which lift.py lifts), a partial; ``operator.add``
and its kind are their operators. A loop or a solve that must run before its statement
(``reduce``, ``piecewise``, a root) is written only where the call's value is computed
unconditionally; elsewhere (a conditional expression, a comprehension, a ``while`` test) it is
refused with a hint.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> import builtins, numpy
>>> fn = gast.parse("def f(x):\\n    return sum(map(np.sin, x))").body[0]
>>> ctx = SimpleNamespace(namer=Namer({"x"}), bind=lambda name, obj: name,
...                       lookup=lambda n: numpy if n == "np" else getattr(builtins, n))
>>> print(to_source(higher_order(fn, ctx)).strip())
def f(x):
    return sum([np.sin(_v) for _v in x])
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator
import sys
import types

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, setanno
from transpiler.errors import NoRuleError, error_at
from transpiler.implicit import (
    STATIONARY,
    implicit_fixed_jacobian,
    implicit_jacobian,
    implicit_slope,
)
from transpiler.passes import tape
from transpiler.passes.resolve import value_of

_OPERATORS = {operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult,
              operator.truediv: gast.Div, operator.pow: gast.Pow, operator.matmul: gast.MatMult,
              operator.mod: gast.Mod, operator.floordiv: gast.FloorDiv}
_VECTORIZE_OPTIONS = frozenset({"otypes", "doc", "cache"})  # what leaves elementwise calls be


def higher_order(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if not any(isinstance(n, gast.Call) for n in A.walk(fn)):
        return fn
    local = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    rewriter = _Rewriter(ctx, local, _vectorized_locals(fn, ctx, local), fn)
    fn.body = rewriter.block(fn.body)
    return fn


def _vectorized_locals(fn, ctx, local: set[str]) -> dict:
    """Names assigned once, to ``np.vectorize(f)``: name -> the function node ``f``."""
    counts: dict[str, int] = {}
    for n in A.walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            counts[n.id] = counts.get(n.id, 0) + 1
    found = {}
    for stmt in A.walk(fn):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and counts[stmt.targets[0].id] == 1 \
                and isinstance(stmt.value, gast.Call) \
                and value_of(stmt.value.func, local, ctx) is np.vectorize:
            found[stmt.targets[0].id] = stmt
    return found


def solvers() -> dict:
    """scipy.optimize's solvers -> ``(kind, attribute)``: ``"scalar"`` (a root of one
    equation, or elementwise ones), ``"system"`` (a root of a system), ``"fixed"`` (a fixed
    point ``x = f(x)``, the root of ``f(x) - x``) or ``"minimum"``, and the
    attribute of the result object the solution is (``root_scalar(...).root``, ``root(...).x``,
    ``minimize(...).x``; None: the result is the root). Empty where scipy.optimize is not
    imported (code calling them has imported it)."""
    so = sys.modules.get("scipy.optimize")
    if so is None:
        return {}
    found = {getattr(so, n): ("scalar", None) for n in ("brentq", "brenth", "ridder", "bisect",
                                                         "toms748", "newton")}
    found[so.root_scalar] = ("scalar", "root")
    found[so.fsolve] = ("system", None)
    found[so.root] = ("system", "x")
    found[so.fixed_point] = ("fixed", None)
    found[so.minimize] = ("minimum", "x")
    found[so.minimize_scalar] = ("minimum", "x")
    return found


# a solver's result object: what reading these attributes gives is data (no derivative)
_RESULT_DATA = frozenset({"success", "status", "message", "nit", "nfev", "njev", "nhev",
                          "iterations", "function_calls", "converged", "flag", "method"})


def _call(func, dotted, *args, keywords=()) -> gast.Call:
    """A call the pass writes, of ``func`` by the name ``dotted`` (bound by the caller), its
    function recorded (Anno.FUNC) as resolve.py would: it need not be a name of the module."""
    node = A.call(dotted if isinstance(dotted, gast.AST) else A.dotted(dotted), *args,
                  keywords=keywords)
    setanno(node, Anno.FUNC, func)
    return node


def _lambda(params: list[str], body) -> gast.Lambda:
    return gast.Lambda(args=gast.arguments(
        args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
              for p in params], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
        kwarg=None, defaults=[]), body=body)


def _ours(obj) -> bool:
    """Whether ``obj`` is a function of this package's API or a derivative it made."""
    if obj is None:
        return False
    module = obj.__module__ if isinstance(obj, types.FunctionType) else type(obj).__module__
    return isinstance(module, str) and (module == "transpiler" or module.startswith("transpiler."))


class _Rewriter(gast.NodeTransformer):
    def __init__(self, ctx, local: set[str], vectorized: dict, fn=None):
        self.ctx, self.local, self.vectorized = ctx, local, vectorized
        self.before: list = []
        self.after: list = []  # (after a solver's result object is assigned: its solution)
        self.unsafe = 0  # inside an expression not always evaluated: no loop may be hoisted
        walked = list(A.walk(fn)) if fn is not None else []
        self.defs = {n.name: n for n in walked if isinstance(n, gast.FunctionDef) and n is not fn}
        self.defs.update({s.targets[0].id: s.value for s in walked if isinstance(s, gast.Assign)
                          and isinstance(s.value, gast.Lambda) and len(s.targets) == 1
                          and isinstance(s.targets[0], gast.Name)})
        self.stores: dict[str, int] = {}
        for n in walked:
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) \
                    or isinstance(n, gast.FunctionDef) and n is not fn:
                name = n.id if isinstance(n, gast.Name) else n.name
                self.stores[name] = self.stores.get(name, 0) + 1
        self.results: dict[str, dict] = {}  # a solver's result object's name -> its fields

    # --- statements ---

    def block(self, stmts: list) -> list:
        out = []
        for stmt in stmts:
            self.before, self.after = [], []
            if self._result_object(stmt):
                stmt = self._solver_statement(stmt)
            elif isinstance(stmt, (gast.If, gast.While)):
                self.unsafe += isinstance(stmt, gast.While)
                stmt.test = self.visit(stmt.test)
                self.unsafe -= isinstance(stmt, gast.While)
            elif isinstance(stmt, gast.For):
                stmt.iter = self.visit(stmt.iter)
            elif isinstance(stmt, gast.With):
                for item in stmt.items:
                    item.context_expr = self.visit(item.context_expr)
            elif any(stmt is s for s in self.vectorized.values()):  # vf = np.vectorize(f)
                self._check_vectorize(stmt.value)
                stmt.value = stmt.value.args[0]  # vf = f: its calls are rewritten below
            elif not isinstance(stmt, (gast.Try, gast.FunctionDef)):  # (a def: compiled on
                stmt = self.visit(stmt)  # its own when it is lifted)
            before, after = self.before, self.after
            if not isinstance(stmt, gast.FunctionDef):
                for field in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(stmt, field, None), list):
                        setattr(stmt, field, self.block(getattr(stmt, field)))
                for handler in getattr(stmt, "handlers", []):
                    handler.body = self.block(handler.body)
            for s in before + after:
                gast.copy_location(s, stmt)
            out += before + [stmt] + after
        self.before, self.after = [], []
        return out

    def _once(self, node, like):
        """``node``, evaluated once: an expression other than a name or a constant is bound to
        a fresh name before the statement where that is safe (else it is evaluated again)."""
        if self.unsafe or isinstance(node, (gast.Name, gast.Constant)):
            return node
        name = self.ctx.namer.fresh("_a")
        self.before.append(gast.copy_location(A.assign(name, node), like))
        return A.name(name)

    # --- expressions not always evaluated ---

    def _guarded(self, node):
        self.unsafe += 1
        node = self.generic_visit(node)
        self.unsafe -= 1
        return node

    visit_IfExp = visit_BoolOp = visit_ListComp = visit_GeneratorExp = _guarded
    visit_SetComp = visit_DictComp = _guarded

    def visit_Lambda(self, node):
        return node  # its calls are rewritten when it is lifted and compiled

    # --- calls ---

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = value_of(node.func, self.local, self.ctx)
        maker = value_of(node.func.func, self.local, self.ctx) \
            if isinstance(node.func, gast.Call) else None
        if (_ours(func) or _ours(maker)) and func not in (implicit_slope, implicit_jacobian,
                                                              implicit_fixed_jacobian):
            raise error_at(node, self.ctx, "a derivative taken inside the function being "
                           "differentiated (grad(h)(x), a gradient object called) is not "
                           "supported: nested derivatives are not compiled",
                           "differentiate the derivative itself instead: grad(grad(h)) for "
                           "a function of one number, hessian(h), hvp(h)(x, v); or write the "
                           "first derivative out as a function of its own")
        if func is builtins.map and len(node.args) >= 2 and not node.keywords:
            return self._map(node)
        if func is functools.reduce and 2 <= len(node.args) <= 3 and not node.keywords:
            return self._reduce(node)
        if func is np.apply_along_axis and len(node.args) >= 3:
            return self._along_axis(node)
        if func is np.piecewise and len(node.args) >= 3 and self._has_functions(node.args[2]):
            return self._piecewise(node)
        if func in (runtime.implicit_root_adjoint, runtime.implicit_root_tangent,
                    runtime.implicit_system_adjoint, runtime.implicit_system_tangent,
                    runtime.implicit_minimum_adjoint, runtime.implicit_minimum_tangent):
            raise self._second_order(node)
        if func is not None and solvers().get(func) is not None:
            return self._root(node, func)
        if isinstance(func, np.vectorize):  # a module's @np.vectorize function
            name = getattr(func.pyfunc, "__name__", "")
            bound = self.ctx.bind(name if name.isidentifier() else "_pyfunc", func.pyfunc)
            return self._vectorized(node, A.name(bound), func.excluded, func.signature,
                                    func.pyfunc, func.otypes or None)
        if isinstance(node.func, gast.Call) \
                and value_of(node.func.func, self.local, self.ctx) is np.vectorize:
            self._check_vectorize(node.func)
            return self._vectorized(node, self._function(node.func.args[0], node), (), None)
        if isinstance(node.func, gast.Name) and node.func.id in self.vectorized:
            return self._vectorized(node, A.name(node.func.id), (), None)
        return node

    def visit_Attribute(self, node):
        """``root_scalar(f, ...).root``, ``root(f, ...).x``: the root of a solver whose result
        is an object."""
        if isinstance(node.value, gast.Name) and node.value.id in self.results:
            return self._result_field(node)
        finder = solvers().get(value_of(node.value.func, self.local, self.ctx)) \
            if isinstance(node.value, gast.Call) else None
        if finder is not None and finder[1] == node.attr:
            call = node.value
            call.args = [self.visit(a) for a in call.args]
            for k in call.keywords:
                k.value = self.visit(k.value)
            return self._root(call, value_of(call.func, self.local, self.ctx), node)
        return self.generic_visit(node)

    def _second_order(self, node) -> NoRuleError:
        return error_at(node, self.ctx, "second derivatives (hvp, hessian, a derivative "
                        "differentiated again) through a scipy.optimize root are not supported "
                        "yet: its slope and root are held constant in the first derivative",
                        "grad, value_and_grad, jvp and vjp of the function work",
                        cls=NoRuleError)

    def _root(self, node, func, attribute=None):
        """A solver's call read for its solution (the result, or ``.root``/``.x`` of it)."""
        kind, field = solvers()[func]
        if field is not None and attribute is None:
            raise error_at(node, self.ctx, f"scipy.optimize.{func.__name__}'s result is "
                           f"differentiated through its solution, read as .{field}",
                           f"write {func.__name__}(...).{field}, or assign the result to a "
                           f"name and read its .{field}")
        self._hoisted(node, f"scipy.optimize.{func.__name__}")
        solved = node if attribute is None else gast.Attribute(value=node, attr=field,
                                                                ctx=gast.Load())
        return self._solution(node, func, solved, self.before)[0]

    def _result_object(self, stmt) -> bool:
        """Whether ``stmt`` is ``res = minimize(...)`` (a solver whose result is an object)."""
        return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call) \
            and (solvers().get(value_of(stmt.value.func, self.local, self.ctx)) or (0, None))[
                1] is not None

    def _solver_statement(self, stmt):
        """``res = minimize(f, x0, args=(p,))``: the result object, held constant, and after
        it its solution through the theorem (``_x = rt.implicit_minimum(...)``), which later
        reads of ``res.x`` read; ``res.fun`` is the objective (residual) there, its data
        fields (``res.success``, ``res.nit``) the solver's."""
        name, call = stmt.targets[0].id, stmt.value
        func = value_of(call.func, self.local, self.ctx)
        kind, field = solvers()[func]
        if self.stores.get(name, 0) != 1 or name in self.results:
            raise error_at(stmt, self.ctx, f"a scipy.optimize.{func.__name__} result is "
                           "differentiated when its name is assigned once",
                           f"give each call's result a name of its own, or read "
                           f"{func.__name__}(...).{field} at the call")
        call.args = [self.visit(a) for a in call.args]
        for k in call.keywords:
            k.value = self.visit(k.value)
        solved = gast.Attribute(value=A.name(name), attr=field, ctx=gast.Load())
        held, function, extra = self._solution(call, func, solved, self.after)
        self.after.append(A.assign(self.ctx.namer.fresh("_x"), held))
        self.results[name] = {"func": func, "kind": kind, "field": field, "function": function,
                              "extra": extra, "held": self.after[-1].targets[0].id}
        rt = self.ctx.bind("rt", runtime)
        stmt.value = _call(runtime.stop_gradient, f"{rt}.stop_gradient", call)
        return stmt

    def _result_field(self, node):
        """``res.x`` of a solver's result object: its solution; ``res.fun``: the objective
        there; its data fields as they are."""
        info = self.results[node.value.id]
        if node.attr == info["field"]:
            return gast.copy_location(A.name(info["held"]), node)
        if node.attr == "fun" and info["kind"] != "scalar":
            return gast.copy_location(self._apply(info["function"], [A.name(info["held"])] + [
                A.copy_node(e) for e in info["extra"]]), node)
        if node.attr in _RESULT_DATA:
            return node
        raise error_at(node, self.ctx, f"{node.value.id}.{node.attr} of a scipy.optimize."
                       f"{info['func'].__name__} result is not differentiated",
                       f"read its .{info['field']} (and .fun), and compute what else you need "
                       "from them")

    def visit_Name(self, node):
        if node.id in self.results and isinstance(node.ctx, gast.Load):
            info = self.results[node.id]
            raise error_at(node, self.ctx, f"the scipy.optimize.{info['func'].__name__} result "
                           f"{node.id} is differentiated through its fields read at their use "
                           f"({node.id}.{info['field']}), not as a whole object",
                           f"read {node.id}.{info['field']} where it is used")
        return node

    def _solution(self, node, func, solved, into: list):
        """``solved``, a solver's solution, held constant and passed through ``rt.implicit_*``
        with what its derivative needs (runtime/implicit.py), the statements computing those
        added to ``into``: -> (that expression, the function node (as the derivative calls it),
        the extra arguments it takes)."""
        name = f"scipy.optimize.{func.__name__}"
        if tape.is_generated(getattr(self.ctx, "fn", None)):  # (a derivative's, differentiated)
            raise self._second_order(node)
        kind, _ = solvers()[func]
        if any(isinstance(a, gast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            raise error_at(node, self.ctx, f"{name} called with *args or **kwargs is not "
                           "differentiated", "pass its arguments by name")
        try:
            bound = inspect.signature(func).bind(
                *node.args, **{k.arg: k.value for k in node.keywords}).arguments
        except TypeError as e:
            raise error_at(node, self.ctx, f"{name}: {e}", "") from e
        full = bound.get("full_output")
        if full is not None and not (isinstance(full, gast.Constant) and not full.value):
            raise error_at(node, self.ctx, f"{name} with full_output is differentiated through "
                           "its root only", "call it without full_output (or with "
                           "full_output=False)")
        extra = bound.get("args")
        if extra is None:
            extra = []
        elif isinstance(extra, gast.Tuple):
            extra = list(extra.elts)
        else:
            raise error_at(extra, self.ctx, f"{name}'s args= is differentiated when it is "
                           "written as a tuple (args=(a, b))", "write the tuple out at the call")
        jac = bound.get("jac")
        returns_jac = jac is not None and isinstance(jac, gast.Constant) and jac.value is True
        if returns_jac and kind != "minimum":
            raise error_at(node, self.ctx, f"{name} with jac=True (a function returning its "
                           "Jacobian too) is not differentiated yet", "pass the Jacobian as a "
                           "function of its own (jac=J), or none")
        constraints = bound.get("constraints")
        if constraints is not None and not (
                isinstance(constraints, (gast.Tuple, gast.List)) and not constraints.elts) \
                and not (isinstance(constraints, gast.Constant) and constraints.value is None):
            raise error_at(constraints, self.ctx, f"{name} with constraints is not "
                           "differentiated: the implicit function theorem on grad f = 0 does "
                           "not hold where a constraint is active",
                           "write the constraint into the objective (a penalty, or a change "
                           "of variables), or use bounds that are inactive at the minimum")
        given = next(bound[k] for k in ("f", "func", "fun") if k in bound)
        function = self._function(given, node)
        extra = [self._once(e, node) for e in extra]
        node.args = [function if a is given else a for a in node.args]
        for k in node.keywords:
            if k.value is given:
                k.value = function
            if k.arg == "args":
                k.value = gast.Tuple(elts=[A.copy_node(e) for e in extra], ctx=gast.Load())
        node.args = [gast.Tuple(elts=[A.copy_node(e) for e in extra], ctx=gast.Load())
                     if a is bound.get("args") else a for a in node.args]
        rt = self.ctx.bind("rt", runtime)
        root = self.ctx.namer.fresh("_root")
        if not (isinstance(solved, gast.Attribute) and isinstance(solved.value, gast.Name)):
            solved = _call(runtime.stop_gradient, f"{rt}.stop_gradient", solved)
        into.append(A.assign(root, solved))  # (a result object's name: held already)
        if kind == "minimum":
            objective, free = self._objective(given, function, len(extra), returns_jac, node)
            extra = extra + [A.name(n) for n in free]
            bounds = bound.get("bounds")
            held = _call(runtime.implicit_minimum, f"{rt}.implicit_minimum", A.name(root),
                         A.copy_node(objective), gast.Tuple(elts=[A.copy_node(e) for e in extra],
                                                           ctx=gast.Load()),
                         A.name(self.ctx.bind("stationary", STATIONARY)),
                         A.const(None) if bounds is None else self._once(bounds, node))
            return gast.copy_location(held, node), objective, extra
        slope = self.ctx.namer.fresh("_slope")
        extras = gast.Tuple(elts=[A.copy_node(e) for e in extra], ctx=gast.Load())
        derivative = {"scalar": implicit_slope, "system": implicit_jacobian,
                      "fixed": implicit_fixed_jacobian}[kind]
        bound_as = self.ctx.bind(derivative.__name__, derivative)
        into.append(A.assign(slope, _call(runtime.stop_gradient, f"{rt}.stop_gradient", _call(
            derivative, bound_as, A.copy_node(function), A.name(root), extras))))
        residual = self._apply(function, [A.name(root)] + [A.copy_node(e) for e in extra])
        if kind == "fixed":  # x = f(x, p): the root of f(x, p) - x
            residual = gast.BinOp(left=residual, op=gast.Sub(), right=A.name(root))
        held = runtime.implicit_root if kind == "scalar" else runtime.implicit_system
        return gast.copy_location(_call(held, f"{rt}.{held.__name__}", A.name(root), residual,
                                        A.name(slope)), node), function, extra

    def _objective(self, given, function, arity: int, returns_jac: bool, like):
        """A minimum's objective as a function of everything it reads, for its derivative
        (transpiler/implicit.py differentiates it at run time, where a closure's values would
        be held): ``lambda w: loss(w, lam)``, ``lam`` a local, is also written ``_g = lambda
        w, lam: loss(w, lam)`` with ``lam`` passed after the solver's ``args``; a function
        defined inside the same way; with ``jac=True``, its value only. -> (the function node,
        the local names appended)."""
        what = "a minimum's objective"
        definition = given
        if isinstance(given, gast.Name) and given.id in self.defs:
            if self.stores.get(given.id, 0) != 1:
                raise error_at(given, self.ctx, f"{what} is differentiated when the function's "
                               "name is bound once", "give the function a name of its own")
            definition = self.defs[given.id]
        if isinstance(definition, (gast.Lambda, gast.FunctionDef)):
            arguments = definition.args
            if arguments.vararg or arguments.kwarg or arguments.kwonlyargs \
                    or arguments.defaults or arguments.posonlyargs:
                raise error_at(given, self.ctx, f"{what} with *args, keyword-only parameters "
                               "or defaults is not differentiated",
                               "give it plain parameters: f(x, a, b), with args=(a, b)")
            params = {a.id for a in arguments.args}
            body = definition.body if isinstance(definition, gast.FunctionDef) \
                else [definition.body]
            own = params | {n.id for b in body for n in A.walk(b) if isinstance(n, gast.Name)
                            and isinstance(n.ctx, (gast.Store, gast.Param))}
            free = sorted({n.id for b in body for n in A.walk(b) if isinstance(n, gast.Name)
                           and isinstance(n.ctx, gast.Load)} & self.local - own)
            inner = [n for n in free if n in self.defs]
            if inner:
                raise error_at(given, self.ctx, f"{what} calls {inner[0]}, a function defined "
                               "inside the differentiated one", f"define {inner[0]} at module "
                               "level, passing it what it reads")
            if not free and not returns_jac:
                return function, []
            copy = A.copy_node(definition)
            copy.args.args = list(copy.args.args) + [gast.Name(id=n, ctx=gast.Param(),
                                                               annotation=None, type_comment=None)
                                                     for n in free]
            if returns_jac:
                if isinstance(copy, gast.Lambda):
                    copy.body = gast.Subscript(value=copy.body, slice=A.const(0),
                                               ctx=gast.Load())
                else:
                    returns_jac, free_params = True, free
                    return self._value_only(self._defined(copy, like), arity + len(free_params),
                                            like), free
            named = self._defined(copy, like) if isinstance(copy, gast.FunctionDef) \
                else self._function(copy, like)
            return named, free
        if isinstance(given, gast.Name) and given.id in self.local:
            raise error_at(given, self.ctx, f"{what} is differentiated when it is a function "
                           "of the module, or defined (or a lambda) inside the differentiated "
                           "function; a function held in a variable is not",
                           "pass the function itself")
        names = [n.id for n in A.walk(given) if isinstance(n, gast.Name)]
        if any(n in self.local for n in names):
            raise error_at(given, self.ctx, f"{what} that is a method of, or made from, a "
                           "local value is not differentiated: what it reads of the value would "
                           "be held constant", "pass a module-level function and the arrays it "
                           "reads in args=")
        if returns_jac:
            return self._value_only(function, arity, like), []
        return function, []

    def _defined(self, definition, like):
        """A copy of a function defined inside, under a fresh name, before the statement."""
        definition.name = self.ctx.namer.fresh(f"_{definition.name}")
        self.before.append(gast.copy_location(definition, like))
        return A.name(definition.name)

    def _value_only(self, function, arity: int, like):
        """``lambda _x, _a0, ...: function(_x, _a0, ...)[0]``: the value of an objective that
        returns its gradient too (``jac=True``)."""
        params = [self.ctx.namer.fresh("_p") for _ in range(arity + 1)]
        body = gast.Subscript(value=self._apply(function, [A.name(p) for p in params]),
                              slice=A.const(0), ctx=gast.Load())
        return self._function(_lambda(params, body), like)

    def _check_vectorize(self, call) -> None:
        """Refuse ``np.vectorize(...)`` options that make its calls other than elementwise, or
        that cast its results to a type that is not a float."""
        options = sorted({k.arg for k in call.keywords} - _VECTORIZE_OPTIONS)
        otypes = next((k.value for k in call.keywords if k.arg == "otypes"), None)
        if otypes is not None and not self._float_types(otypes):
            options.append("otypes other than float")
        if not call.args or options:
            what = ", ".join(options) or "no function"
            raise error_at(call, self.ctx, f"np.vectorize with {what} is not supported",
                           "call the function on each element in a loop")

    def _function(self, node, like):
        """An expression calling which calls ``node``'s function: itself for a name, else a
        fresh name it is bound to before the statement (a lambda: lifted from there)."""
        if isinstance(node, (gast.Name, gast.Attribute)):
            return node
        name = self.ctx.namer.fresh("_f")
        self.before.append(gast.copy_location(A.assign(name, node), like))
        return A.name(name)

    def _apply(self, function, args: list, keywords=(), func=None):
        """``function(*args)``, an operator's function as its operator; ``func``: the function
        a name the pass bound means (else it is resolved as the user's names are)."""
        if func is None and isinstance(function, (gast.Name, gast.Attribute)):
            if value_of(function, self.local, self.ctx) in _OPERATORS:
                op = _OPERATORS[value_of(function, self.local, self.ctx)]
                if len(args) == 2 and not keywords:
                    return gast.BinOp(left=args[0], op=op(), right=args[1])
        call = gast.Call(func=A.copy_node(function), args=args, keywords=list(keywords))
        if func is not None:
            setanno(call, Anno.FUNC, func)
        return call

    def _comprehension(self, elt_of, sources: list, like):
        """``[elt_of(_a, _b) for _a, _b in zip(s0, s1)]`` (one source: no zip)."""
        names = [self.ctx.namer.fresh("_v") for _ in sources]
        if len(sources) == 1:
            target, iterable = A.name(names[0], store=True), sources[0]
        else:
            target = gast.Tuple(elts=[A.name(n, store=True) for n in names], ctx=gast.Store())
            iterable = _call(zip, A.builtin("zip"), *sources)
        comp = gast.ListComp(elt=elt_of([A.name(n) for n in names]), generators=[
            gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)])
        return gast.copy_location(comp, like)

    def _map(self, node):
        function = self._function(node.args[0], node)
        return self._comprehension(lambda vs: self._apply(function, vs), node.args[1:], node)

    def _hoisted(self, node, what: str):
        if self.unsafe:
            raise error_at(node, self.ctx, f"{what} is supported where its value is always "
                           "computed, not in a conditional expression, a comprehension or a "
                           "'while' condition", "assign it to a variable first")

    def _reduce(self, node):
        self._hoisted(node, "functools.reduce")
        function = self._function(node.args[0], node)
        acc, item = self.ctx.namer.fresh("_acc"), self.ctx.namer.fresh("_v")
        items = node.args[1]
        if len(node.args) == 3:
            start, walked = node.args[2], items
        else:
            seq = self.ctx.namer.fresh("_seq")
            self.before.append(A.assign(seq, _call(list, A.builtin("list"), items)))
            start = gast.Subscript(value=A.name(seq), slice=A.const(0), ctx=gast.Load())
            walked = gast.Subscript(value=A.name(seq), slice=gast.Slice(
                lower=A.const(1), upper=None, step=None), ctx=gast.Load())
        self.before.append(A.assign(acc, start))
        step = A.assign(acc, self._apply(function, [A.name(acc), A.name(item)]))
        self.before.append(gast.For(target=A.name(item, store=True), iter=walked,
                                    body=[gast.copy_location(step, node)], orelse=[],
                                    type_comment=None))
        return A.name(acc)

    def _float_types(self, node) -> bool:
        """Whether an ``otypes`` argument names only float types (``[float]``, ``"d"``)."""
        items = node.elts if isinstance(node, (gast.List, gast.Tuple)) else [node]
        for item in items:
            value = item.value if isinstance(item, gast.Constant) else value_of(
                item, self.local, self.ctx)
            try:
                if value is None or np.dtype(value).kind != "f":
                    return False
            except TypeError:
                if not (isinstance(value, str) and all(np.dtype(c).kind == "f" for c in value)):
                    return False
        return True

    def _vectorized(self, node, function, excluded, signature, func=None, otypes=None):
        if otypes is not None and not all(np.dtype(t).kind == "f" for t in otypes):
            raise error_at(node, self.ctx, "np.vectorize with otypes other than float is not "
                           "supported", "call the function on each element in a loop")
        if excluded or signature is not None:
            raise error_at(node, self.ctx, "np.vectorize with 'excluded' or 'signature' is "
                           "not supported", "call the function on each element in a loop")
        args = [self._once(a, node) for a in list(node.args) + [k.value for k in node.keywords]]
        keys = [None] * len(node.args) + [k.arg for k in node.keywords]
        if not args or any(isinstance(a, gast.Starred) for a in args) or None in keys[
                len(node.args):]:
            raise error_at(node, self.ctx, "a vectorized function called with no arguments, "
                           "*args or **kwargs is not supported", "pass the arguments by name")
        np_name = self.ctx.bind("np", np)

        def numpy(name, *a):
            return _call(getattr(np, name), f"{np_name}.{name}", *a)

        if len(args) == 1:
            shaped = [args[0]]
        else:
            joint = self._once(numpy("broadcast_arrays", *map(A.copy_node, args)), node)
            shaped = [gast.Subscript(value=A.copy_node(joint), slice=A.const(i), ctx=gast.Load())
                      for i in range(len(args))]

        def call(vs):
            return self._apply(function, [v for v, k in zip(vs, keys, strict=True) if k is None],
                               [gast.keyword(arg=k, value=v)
                                for v, k in zip(vs, keys, strict=True) if k],
                               func)

        comp = self._comprehension(call, [numpy("ravel", s) for s in shaped], node)
        result = numpy("reshape", numpy("array", comp), numpy("shape", A.copy_node(shaped[0])))
        return gast.copy_location(result, node)

    def _along_axis(self, node):
        function = self._function(node.args[0], node)
        axis, array, extra = node.args[1], self._once(node.args[2], node), node.args[3:]
        rt = self.ctx.bind("rt", runtime)
        lanes = _call(runtime.lanes, f"{rt}.lanes", array, axis)
        comp = self._comprehension(lambda vs: self._apply(function, vs + list(extra),
                                                          node.keywords), [lanes], node)
        stacked = _call(np.array, f"{self.ctx.bind('np', np)}.array", comp)
        return gast.copy_location(_call(runtime.along_axis, f"{rt}.along_axis", stacked,
                                        A.copy_node(array), A.copy_node(axis)), node)

    @staticmethod
    def _has_functions(funclist) -> bool:
        return isinstance(funclist, (gast.List, gast.Tuple)) and any(
            not isinstance(f, (gast.Constant, gast.UnaryOp)) for f in funclist.elts)

    def _piecewise(self, node):
        self._hoisted(node, "np.piecewise of functions")
        x, conds, funcs = node.args[0], node.args[1], node.args[2].elts
        extra, keywords = node.args[3:], node.keywords
        if isinstance(conds, (gast.Compare, gast.BoolOp)) or (
                isinstance(conds, gast.BinOp) and isinstance(conds.op, (gast.BitAnd, gast.BitOr)))\
                or (isinstance(conds, gast.UnaryOp) and isinstance(conds.op, gast.Invert)):
            conds = gast.List(elts=[conds], ctx=gast.Load())  # one condition
        if not isinstance(conds, (gast.List, gast.Tuple)):
            raise error_at(node, self.ctx, "np.piecewise of functions needs its conditions "
                           "written out in the call", "np.piecewise(x, [x < 0, x >= 0], [f, g])")
        conds = list(conds.elts)
        if len(funcs) not in (len(conds), len(conds) + 1):
            raise error_at(node, self.ctx, "np.piecewise needs as many functions as conditions, "
                           "or one more", "")
        np_name = self.ctx.bind("np", np)
        xs, out = self.ctx.namer.fresh("_x"), self.ctx.namer.fresh("_y")
        self.before += [A.assign(xs, _call(np.asarray, f"{np_name}.asarray", x)),
                        A.assign(out, _call(np.zeros_like, f"{np_name}.zeros_like",
                                            A.name(xs)))]
        masks = []
        for cond in conds:
            mask = self.ctx.namer.fresh("_c")
            self.before.append(A.assign(mask, _call(np.asarray, f"{np_name}.asarray", cond)))
            masks.append(mask)
        if len(funcs) == len(conds) + 1:  # the last function: where no condition holds
            mask = self.ctx.namer.fresh("_c")
            anyone = _call(np.any, f"{np_name}.any", gast.List(
                elts=[A.name(m) for m in masks], ctx=gast.Load()), keywords=[
                gast.keyword(arg="axis", value=A.const(0))])
            self.before.append(A.assign(mask, gast.UnaryOp(op=gast.Invert(), operand=anyone)))
            masks.append(mask)
        for mask, func in zip(masks, funcs, strict=True):
            if isinstance(func, (gast.Constant, gast.UnaryOp)):
                value = func
            else:
                piece = gast.Subscript(value=A.name(xs), slice=A.name(mask), ctx=gast.Load())
                value = self._apply(self._function(func, node), [piece] + list(extra), keywords)
            target = gast.Subscript(value=A.name(out), slice=A.name(mask), ctx=gast.Store())
            self.before.append(gast.Assign(targets=[target], value=value, type_comment=None))
        return A.name(out)
