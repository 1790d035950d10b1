"""scipy's solvers written as their solution, whose derivative is the implicit function
theorem's: the solver runs as the user wrote it, its result held constant, and passed through a
function of the runtime (runtime/implicit.py) whose derivative is the theorem's, the residual or
objective differentiated like any call of the user's function and its derivatives in the
unknowns taken at run time (transpiler/implicit.py).

- ``x = brentq(f, a, b, args=(p,))`` (``brenth``, ``ridder``, ``bisect``, ``toms748``,
  ``newton``, ``root_scalar(...).root``, ``fsolve``, ``root(...).x``) -> ``_root =
  rt.stop_gradient(brentq(f, a, b, args=(p,)))`` before the statement, which reads
  ``rt.root_of(_root, f, (p,), roots_of)``: the solver's root, whose derivative is the
  theorem's, ``-(dF/dx)^-1 dF/dp``, ``F``'s derivatives taken at run time (transpiler/
  implicit.py ``ROOTS``, ``ROOT_SYSTEM``), second derivatives included; a lambda's closure is
  passed as arguments of a copy, as for a minimum's objective. A method of a local object or a
  function held in a variable is read only as called: ``rt.implicit_root(_root, f(_root, p),
  _slope)``, ``f(_root, p)`` differentiated like any call of the user's function and divided
  by the slope ``_slope = rt.stop_gradient(implicit_slope(f, _root, (p,)))`` (first
  derivatives only)
- ``w = minimize(f, w0, args=(p,)).x`` (``minimize_scalar``) -> ``_root = rt.stop_gradient(
  minimize(f, w0, args=(p,)).x)`` before the statement, which reads ``rt.implicit_minimum(
  _root, f, (p,), stationary, bounds)``: the minimum, whose derivative is the theorem's on
  ``grad_x f = 0``, the objective's second derivatives taken at run time (transpiler/
  implicit.py); a lambda's closure ``lam`` is passed as an argument of a copy ``lambda w, lam:
  ...`` so that it gets its gradient
- ``res = minimize(...)`` (``root``, ``root_scalar``: a result object assigned once) -> ``res =
  rt.stop_gradient(minimize(...))`` and after it ``_x = rt.implicit_minimum(res.x, ...)``;
  later ``res.x`` reads ``_x``, ``res.fun`` is ``f(_x, p)``
- ``sol = solve_ivp(f, (t0, t1), y0, args=(p,))`` -> ``sol = rt.stop_gradient(solve_ivp(...))``
  and after it ``_y = rt.ode_solution(sol.y, sol.t, f, t0, t1, y0, (p,), None, ode, options)``
  (the adjoint's, runtime/odes.py), which later reads of ``sol.y`` read; ``sol.sol(t)`` (dense
  output) -> ``rt.ode_solution(rt.stop_gradient(sol.sol(t)), t, ..., t, ode, options)``, the
  solution read at ``t``; ``quad(f, a, b, args=(p,))[0]`` -> ``rt.integral(...)`` (Leibniz's,
  runtime/integrate.py)


A solve must run before its statement: it is written only where the call's value is computed
unconditionally; elsewhere (a conditional expression, a comprehension, a ``while`` test) it is
refused with a hint, and so is what the theorem does not cover (constraints, ``full_output``),
and an integrand that jumps, or a right-hand side that switches, at a point that moves with the
differentiated values (analysis/jumps.py).

>>> import gast, scipy.optimize
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> fn = gast.parse("def f(p):\\n    return brentq(g, 0.0, 2.0, args=(p,))").body[0]
>>> ctx = SimpleNamespace(namer=Namer({"p"}), bind=lambda name, obj: name, fn=None,
...                       lookup=lambda n: scipy.optimize.brentq if n == "brentq" else None)
>>> print(to_source(solvers(fn, ctx)).strip())
def f(p):
    _root = rt.stop_gradient(brentq(g, 0.0, 2.0, args=(p,)))
    return rt.root_of(_root, g, (p,), roots_of)
"""

from __future__ import annotations

import inspect
import sys

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.jumps import P, T, Y, discontinuities, varied
from transpiler.anno import Anno, getanno, setanno
from transpiler.errors import NoRuleError, TranspileError, error_at
from transpiler.implicit import (
    FIXED_POINT,
    ROOT_SYSTEM,
    ROOTS,
    STATIONARY,
    UNDER_INTEGRAL,
    implicit_jacobian,
    implicit_slope,
)
from transpiler.passes import tape
from transpiler.passes.higher_order import CallRewriter, bound_call
from transpiler.passes.resolve import value_of

_SECOND_ORDER = (runtime.implicit_root_adjoint, runtime.implicit_root_tangent,
                           runtime.implicit_system_adjoint, runtime.implicit_system_tangent,
                           runtime.implicit_minimum_tangent,
                           runtime.integral_tangent, runtime.integral_weight_adjoint,
                           runtime.ode_tangent)


def solvers(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if not (solver_kinds() or integrals()) or not any(isinstance(n, gast.Call) for n in A.walk(fn)):
        return fn
    local = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    fn.body = _Solvers(ctx, local, fn).block(fn.body)
    return fn


def solves(func) -> bool:
    """Whether this pass rewrites a call of ``func`` (a solver, a quadrature, an ODE, a fit)."""
    return any(_kind(table, func) is not None
               for table in (solver_kinds(), _pairs(), odes(), fits()))


def solver_kinds() -> dict:
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
    found[so.least_squares] = ("minimum", "x")  # (of half the residuals' sum of squares)
    return found


def integrals() -> dict:
    """scipy.integrate's quadratures of a function -> their name; empty where scipy.integrate
    is not imported."""
    si = sys.modules.get("scipy.integrate")
    if si is None:
        return {}
    return {si.quad: "quad", si.quad_vec: "quad_vec", si.fixed_quad: "fixed_quad"}


def fits() -> dict:
    """scipy.optimize's ``curve_fit`` (its result a pair: the parameters and their
    covariance); empty where scipy.optimize is not imported."""
    so = sys.modules.get("scipy.optimize")
    return {} if so is None else {so.curve_fit: "curve_fit"}


def _pairs() -> dict:
    """The calls whose result is a pair read as ``[0]`` or unpacked: integrals and fits."""
    return {**integrals(), **fits()}


def odes() -> dict:
    """scipy.integrate's ODE solvers -> the layout of their solution: ``"ivp"`` (``solve_ivp``:
    ``sol.y``, ``(n, K)``) or ``"odeint"`` (``(K, n)``); empty where scipy.integrate is not
    imported."""
    si = sys.modules.get("scipy.integrate")
    if si is None:
        return {}
    return {si.solve_ivp: "ivp", si.odeint: "odeint"}


# what the derivative's own solves take of solve_ivp's options (the others, like jac=, belong to
# the user's right-hand side, not to its adjoint's)
_ODE_OPTIONS = ("max_step", "first_step")
# solve_ivp's result: its data fields
_ODE_DATA = frozenset({"success", "status", "message", "nfev", "njev", "nlu"})


def _returns(fn: gast.FunctionDef) -> list:
    """The return statements of ``fn`` itself (not of functions defined in it)."""
    found, stack = [], list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Return) and node.value is not None:
            found.append(node)
        elif not isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            stack.extend(gast.iter_child_nodes(node))
    return found


def _kind(table: dict, func):
    try:
        return table.get(func)
    except TypeError:  # (an unhashable value)
        return None


# a solver's result object: what reading these attributes gives is data (no derivative)
_RESULT_DATA = frozenset({"success", "status", "message", "nit", "nfev", "njev", "nhev",
                          "optimality", "active_mask",
                          "iterations", "function_calls", "converged", "flag", "method"})



def lambda_of(params: list[str], body) -> gast.Lambda:
    return gast.Lambda(args=gast.arguments(
        args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
              for p in params], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
        kwarg=None, defaults=[]), body=body)


class _Solvers(CallRewriter):
    def __init__(self, ctx, local: set[str], fn=None):
        super().__init__(ctx, local, fn)
        self.fn = fn
        self._varied: set[str] | None = None  # the locals that vary with the wrt parameters
        self.results: dict[str, dict] = {}  # a solver's result object's name -> its fields
        self.integrals: dict[str, str] = {}  # an integral's result's name -> its value's
        self.residuals: dict = {}  # least squares' objective node's id -> (residual, its args)
        self.held: dict[str, str] = {}  # a name bound to what is not differentiated -> what

    def _in_a_derivative(self) -> bool:
        """Whether this is a derivative differentiated again: a solver's call there is held,
        its ``rt.root_of`` (``rt.implicit_minimum``, ``rt.fixed_point``) carrying the
        derivative, second derivatives included."""
        return tape.is_generated(getattr(self.ctx, "fn", None))

    def _held(self, call):
        """A solver's call in a derivative differentiated again, held (its result object's
        solution read later reaches the derivative through ``rt.root_of`` and its kin)."""
        return bound_call(runtime.stop_gradient, f"{self.ctx.bind('rt', runtime)}.stop_gradient",
                          call)

    def statement(self, stmt):
        if (self._result_object(stmt) or self._integral_statement(stmt)
                or self._ode_statement(stmt)) and self._in_a_derivative():
            stmt.value = self._held(stmt.value)
            return stmt
        if self._result_object(stmt):
            return self._solver_statement(stmt)
        if self._integral_statement(stmt):
            return self._integral_result(stmt)
        if self._ode_statement(stmt):
            return self._ode_result(stmt)
        return None

    def visit_Call(self, node):
        if isinstance(node.func, gast.Attribute) and node.func.attr == "sol":
            solved = node.func.value
            if isinstance(solved, gast.Name) \
                    and self.results.get(solved.id, {}).get("kind") == "ode":
                return self._dense(self._visited(node), solved.id,
                                   self.results[solved.id]["dense"])
            if isinstance(solved, gast.Call) and _kind(odes(), value_of(
                    solved.func, self.local, self.ctx)) == "ivp":  # solve_ivp(...).sol(t)
                call = self._visited(solved)
                parts = self._ode(call, value_of(call.func, self.local, self.ctx),
                                  self.before)[2]
                return self._dense(self._visited(node), self.before[-1].targets[0].id, parts)
        node = self.generic_visit(node)
        func = value_of(node.func, self.local, self.ctx)
        if self._in_a_derivative() and (_kind(solver_kinds(), func) or _kind(_pairs(), func)
                                        or _kind(odes(), func)):
            return self._held(node)
        if _kind(fits(), func) is not None:
            raise error_at(node, self.ctx, "scipy.optimize.curve_fit's result (the "
                           "parameters and their covariance) is differentiated through its "
                           "parameters, read as [0]", "write curve_fit(...)[0], or popt, _ = "
                           "curve_fit(...)")
        if _kind(integrals(), func) is not None:
            raise error_at(node, self.ctx, f"scipy.integrate.{func.__name__}'s result (the "
                           "integral and its error estimate) is differentiated through its "
                           "integral, read as [0]", f"write {func.__name__}(...)[0], or "
                           f"value, error = {func.__name__}(...)")
        kind = _kind(odes(), func)
        if kind == "odeint":
            return self._ode(node, func, self.before)[0]
        if kind == "ivp":
            raise error_at(node, self.ctx, "scipy.integrate.solve_ivp's result is "
                           "differentiated through its solution, read as .y",
                           "write solve_ivp(...).y, or assign the result to a name once and "
                           "read its .y (and .t)")
        if any(func is f for f in _SECOND_ORDER):
            raise self._second_order(node)
        if func is not None and _kind(solver_kinds(), func) is not None:
            return self._root(node, func)
        return node

    # --- integrals ---

    def _integral_statement(self, stmt) -> bool:
        """Whether ``stmt`` is ``value, error = quad(...)`` or ``res = quad(...)``."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.value, gast.Call)
                and _kind(_pairs(), value_of(stmt.value.func, self.local, self.ctx))):
            return False
        target = stmt.targets[0]
        fit = _kind(fits(), value_of(stmt.value.func, self.local, self.ctx)) is not None
        return isinstance(target, gast.Name) and not fit \
            or isinstance(target, (gast.Tuple, gast.List)) \
            and len(target.elts) == 2 and not any(isinstance(e, gast.Starred)
                                                  for e in target.elts)

    def _integral_result(self, stmt):
        """``value, error = quad(...)`` -> ``value, error = (rt.integral(...), _q[1])``;
        ``res = quad(...)`` -> ``res = (rt.integral(...), _q[1])`` (``res[0]``, ``res[1]``
        read it as a tuple)."""
        call = self._visited(stmt.value)
        func = value_of(call.func, self.local, self.ctx)
        if _kind(fits(), func) is not None:  # popt, pcov = curve_fit(...)
            value, error = self._curve_fit(call, func)
            covariance = stmt.targets[0].elts[1]
            if isinstance(covariance, gast.Name):
                if self.stores.get(covariance.id, 0) != 1 and covariance.id != "_":
                    raise error_at(stmt, self.ctx, "curve_fit's covariance is not "
                                   "differentiated: its name must be bound once, and not read",
                                   "popt, _ = curve_fit(...)")
                self.held[covariance.id] = "curve_fit's covariance"
        else:
            value, error = self._integral(call, func)
        stmt.value = gast.Tuple(elts=[value, error], ctx=gast.Load())
        return stmt

    def visit_Subscript(self, node):
        """``quad(f, a, b)[0]``: the integral; ``[1]``: its error estimate (data)."""
        func = value_of(node.value.func, self.local, self.ctx) \
            if isinstance(node.value, gast.Call) else None
        if _kind(_pairs(), func) is None:
            return self.generic_visit(node)
        index = node.slice
        if _kind(fits(), func) is not None:
            if not (isinstance(index, gast.Constant) and index.value in (0, -2)):
                raise error_at(node, self.ctx, "curve_fit's covariance is not differentiated",
                               "read curve_fit(...)[0], the fitted parameters")
            return gast.copy_location(self._curve_fit(self._visited(node.value), func)[0], node)
        if not (isinstance(index, gast.Constant) and index.value in (0, 1, -1, -2)
                and type(index.value) is int):
            raise error_at(node, self.ctx, f"scipy.integrate.{func.__name__}(...) is read as "
                           "[0] (the integral) or [1] (its error estimate)",
                           f"value, error = {func.__name__}(...)")
        value, error = self._integral(self._visited(node.value), func)
        return gast.copy_location(value if index.value in (0, -2) else error, node)

    def _visited(self, call):
        call.args = [self.visit(a) for a in call.args]
        for k in call.keywords:
            k.value = self.visit(k.value)
        return call

    def _integral(self, node, func) -> tuple:
        """A quadrature's call -> (its integral, its error estimate): ``quad``/``quad_vec``
        held constant and passed through ``rt.integral`` (Leibniz's rule, runtime/
        integrate.py); ``fixed_quad`` written out as the Gauss-Legendre sum it is."""
        kind = integrals()[func]
        name = f"scipy.integrate.{kind}"
        bound, extra = self._arguments(node, func, name, ("full_output", "complex_func"))
        given = bound["func"] if "func" in bound else bound["f"]
        if kind == "fixed_quad":  # (a finite sum: differentiated exactly, jumps and all)
            extra = [self.once(e, node) for e in extra]
            lower, upper = self.once(bound["a"], node), self.once(bound["b"], node)
            return self._gauss_legendre(node, given, lower, upper, extra, bound.get("n"))
        kinked = self._moving_discontinuities(given, extra, node, name, (T,))
        extra = [self.once(e, node) for e in extra]
        lower, upper = self.once(bound["a"], node), self.once(bound["b"], node)
        function = self.function_of(given, node)
        weight = bound.get("weight")
        if weight is not None and not isinstance(weight, gast.Constant):
            raise error_at(weight, self.ctx, f"{name}'s weight= is differentiated when it is "
                           "written at the call (weight='cos')", "write the string out")
        rt = self.ctx.bind("rt", runtime)
        held_call = gast.Call(func=node.func, args=[
            function if a is given else lower if a is bound["a"] else upper if a is bound["b"]
            else gast.Tuple(elts=[A.copy_node(e) for e in extra], ctx=gast.Load())
            if a is bound.get("args") else a for a in node.args], keywords=[
            gast.keyword(arg=k.arg, value=function if k.value is given else gast.Tuple(
                elts=[A.copy_node(e) for e in extra], ctx=gast.Load()) if k.arg == "args"
                else lower if k.arg == "a" else upper if k.arg == "b" else k.value)
            for k in node.keywords])
        setanno(held_call, Anno.FUNC, func)
        held = self.ctx.namer.fresh("_q")
        self.before.append(gast.copy_location(A.assign(held, bound_call(
            runtime.stop_gradient, f"{rt}.stop_gradient", held_call)), node))
        integrand, free = self._objective(given, function, len(extra), False, node,
                                          f"{name}'s integrand")
        extra = extra + [A.name(n) for n in free]
        options = {"kind": A.const(kind)}
        if kinked:  # (its second derivatives would miss the kink's term)
            options["kinked"] = A.const(True)
        for option in ("epsabs", "epsrel", "limit", "points", "weight"):
            if bound.get(option) is not None:
                options[option] = self.once(bound[option], node)
        wvar = bound.get("wvar")
        wvar = A.const(None) if wvar is None else self.once(wvar, node)
        table = gast.Dict(keys=[A.const(k) for k in options],
                          values=[A.copy_node(v) for v in options.values()])
        value = bound_call(runtime.integral, f"{rt}.integral", gast.Subscript(
            value=A.name(held), slice=A.const(0), ctx=gast.Load()), A.copy_node(integrand),
            A.copy_node(lower), A.copy_node(upper),
            gast.Tuple(elts=[A.copy_node(e) for e in extra], ctx=gast.Load()), wvar,
            A.name(self.ctx.bind("under_integral", UNDER_INTEGRAL)),
            bound_call(runtime.stop_gradient, f"{rt}.stop_gradient", table))
        error = gast.Subscript(value=A.name(held), slice=A.const(1), ctx=gast.Load())
        return gast.copy_location(value, node), gast.copy_location(error, node)

    # --- curve_fit ---

    def _curve_fit(self, node, func) -> tuple:
        """``curve_fit(f, xdata, ydata, p0, sigma=s)`` -> (its parameters through
        ``rt.implicit_minimum``, the minimum of ``0.5 sum(((f(xdata, *p) - ydata) / s)^2)``,
        an objective written as a function of the data and what ``f`` closes over; its
        covariance, held)."""
        name = "scipy.optimize.curve_fit"
        bound, _ = self._arguments(node, func, name, ("full_output",))
        options = bound.get("kwargs", {})
        loss = options.get("loss")
        if loss is not None and not (isinstance(loss, gast.Constant) and loss.value == "linear"):
            raise error_at(loss, self.ctx, f"{name} with a loss other than 'linear' is not "
                           "differentiated yet", "use loss='linear'")
        model = bound["f"]
        xdata, ydata = self.once(bound["xdata"], node), self.once(bound["ydata"], node)
        sigma = A.const(1.0) if bound.get("sigma") is None else self.once(bound["sigma"], node)
        function = self.function_of(model, node)
        replaced = {id(model): function, id(bound["xdata"]): xdata, id(bound["ydata"]): ydata}
        if bound.get("sigma") is not None:
            replaced[id(bound["sigma"])] = sigma
        held_call = self._replaced(node, replaced)
        rt = self.ctx.bind("rt", runtime)
        result, root = self.ctx.namer.fresh("_fit"), self.ctx.namer.fresh("_root")
        self.before += [gast.copy_location(A.assign(result, bound_call(
            runtime.stop_gradient, f"{rt}.stop_gradient", held_call)), node),
            gast.copy_location(A.assign(root, gast.Subscript(
                value=A.name(result), slice=A.const(0), ctx=gast.Load())), node)]
        objective, free = self._fit_objective(model, bound.get("p0"), node)
        extra = [xdata, ydata, sigma] + [A.name(n) for n in free]
        bounds = bound.get("bounds")
        if bounds is not None:
            bounds = self._bounds(bounds, node)
        held = bound_call(runtime.implicit_minimum, f"{rt}.implicit_minimum", A.name(root),
                          objective, gast.Tuple(elts=[A.copy_node(e) for e in extra],
                                                ctx=gast.Load()),
                          A.name(self.ctx.bind("stationary", STATIONARY)),
                          A.const(None) if bounds is None else self.once(bounds, node))
        covariance = gast.Subscript(value=A.name(result), slice=A.const(1), ctx=gast.Load())
        return gast.copy_location(held, node), covariance

    def _fit_objective(self, model, p0, like) -> tuple:
        """``def _fit(_p, _x, _y, _s, *free)``: half the weighted sum of squares of the
        model's misfit, the model's parameters read from ``_p`` (its body copied in for a lambda
        or a function defined inside, whose closure ``free`` becomes parameters). -> (its name
        node, ``free``)."""
        what = "curve_fit's model"
        definition = model
        if isinstance(model, gast.Name) and model.id in self.defs:
            if self.stores.get(model.id, 0) != 1:
                raise error_at(model, self.ctx, f"{what} is differentiated when the function's "
                               "name is bound once", "give the function a name of its own")
            definition = self.defs[model.id]
        np_name = self.ctx.bind("np", np)
        p, x, y, s = (self.ctx.namer.fresh(n) for n in ("_p", "_x", "_y", "_s"))

        def wrap(value):
            misfit = gast.BinOp(left=gast.BinOp(left=bound_call(
                np.asarray, f"{np_name}.asarray", value), op=gast.Sub(), right=A.name(y)),
                op=gast.Div(), right=A.name(s))
            return self._half_squares(misfit)

        if isinstance(definition, (gast.Lambda, gast.FunctionDef)):
            arguments = definition.args
            if arguments.vararg or arguments.kwarg or arguments.kwonlyargs \
                    or arguments.defaults or arguments.posonlyargs or len(arguments.args) < 2:
                raise error_at(model, self.ctx, f"{what} with *args, keyword-only parameters "
                               "or defaults is not differentiated", "give it plain parameters: "
                               "f(x, a, b)")
            params = [a.id for a in arguments.args]
            copy = A.copy_node(definition)
            body = copy.body if isinstance(copy, gast.FunctionDef) else [
                gast.Return(value=copy.body)]
            free = self._closure(model, set(params), body, what)
            holder = gast.FunctionDef(name="_fit", args=gast.arguments(
                args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                kwarg=None, defaults=[]), body=body, decorator_list=[], returns=None,
                type_comment=None)
            for stmt in _returns(holder):
                stmt.value = wrap(stmt.value)
            prologue = [A.assign(params[0], A.name(x))] + [
                A.assign(q, gast.Subscript(value=A.name(p), slice=A.const(i), ctx=gast.Load()))
                for i, q in enumerate(params[1:])]
            body = prologue + holder.body
        else:
            if any(isinstance(n, gast.Name) and n.id in self.local for n in A.walk(model)):
                raise error_at(model, self.ctx, f"{what} is differentiated when it is a "
                               "function of the module, or defined (or a lambda) inside the "
                               "differentiated function", "pass the function itself")
            count = self._parameter_count(model, p0)
            call = self.apply(model, [A.name(x)] + [gast.Subscript(
                value=A.name(p), slice=A.const(i), ctx=gast.Load()) for i in range(count)])
            predicted = self.ctx.namer.fresh("_m")  # (a statement of its own: inlined)
            body = [A.assign(predicted, call), gast.Return(value=wrap(A.name(predicted)))]
            free = []
        fit = gast.FunctionDef(name="fit", args=gast.arguments(
            args=[gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                  for n in [p, x, y, s] + free], posonlyargs=[], vararg=None, kwonlyargs=[],
            kw_defaults=[], kwarg=None, defaults=[]), body=body, decorator_list=[],
            returns=None, type_comment=None)
        return self._defined(fit, like), free

    def _parameter_count(self, model, p0) -> int:
        """How many parameters a module function ``model(x, a, b, ...)`` takes: ``p0``'s
        length where it is written out, else its signature's, as curve_fit counts them."""
        if isinstance(p0, (gast.List, gast.Tuple)):
            return len(p0.elts)
        function = value_of(model, self.local, self.ctx)
        try:
            params = [q for q in inspect.signature(function).parameters.values()
                      if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        if len(params) < 2 or any(q.kind is q.VAR_POSITIONAL for q in inspect.signature(
                function).parameters.values()):
            raise error_at(model, self.ctx, "curve_fit's model is differentiated when its "
                           "parameters are counted: name them (f(x, a, b)) or write p0 out "
                           "([1.0, 0.5])", "")
        return len(params) - 1

    # --- ODEs ---

    def _ode_statement(self, stmt) -> bool:
        """Whether ``stmt`` is ``sol = solve_ivp(...)``."""
        return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call) \
            and _kind(odes(), value_of(stmt.value.func, self.local, self.ctx)) == "ivp"

    def _ode_result(self, stmt):
        """``sol = solve_ivp(...)`` -> ``sol = rt.stop_gradient(solve_ivp(...))`` and after it
        ``_y = rt.ode_solution(sol.y, ...)``, which later reads of ``sol.y`` read."""
        name, call = stmt.targets[0].id, self._visited(stmt.value)
        func = value_of(call.func, self.local, self.ctx)
        if self.stores.get(name, 0) != 1 or name in self.results:
            raise error_at(stmt, self.ctx, "a scipy.integrate.solve_ivp result is "
                           "differentiated when its name is assigned once",
                           "give each call's result a name of its own, or read "
                           "solve_ivp(...).y at the call")
        held, times, parts = self._ode(call, func, self.after, name)
        self.after.append(A.assign(self.ctx.namer.fresh("_y"), held))
        self.results[name] = {"func": func, "kind": "ode", "field": "y",
                              "y": A.name(self.after[-1].targets[0].id), "t": times,
                              "dense": parts}
        rt = self.ctx.bind("rt", runtime)
        stmt.value = bound_call(runtime.stop_gradient, f"{rt}.stop_gradient", call)
        return stmt

    def _arguments(self, node, func, name: str, flags: tuple) -> tuple:
        """``node``'s arguments bound to ``func``'s parameters, and its ``args=`` as a list;
        refusing ``*args``/``**kwargs``, an ``args=`` not written as a tuple, and the options
        ``flags`` set; where it cannot be computed before its statement, or is part of a
        derivative differentiated again, it is refused."""
        self.hoisted(node, name)
        if tape.is_generated(getattr(self.ctx, "fn", None)):
            raise self._second_order(node)
        if any(isinstance(a, gast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            raise error_at(node, self.ctx, f"{name} called with *args or **kwargs is not "
                           "differentiated", "pass its arguments by name")
        signature = inspect.signature(func)
        try:
            bound = signature.bind(*node.args, **{k.arg: k.value for k in node.keywords}
                                   ).arguments
        except TypeError as e:
            raise error_at(node, self.ctx, f"{name}: {e}", "") from e
        variadic = next((p.name for p in signature.parameters.values()
                         if p.kind is p.VAR_KEYWORD), None)  # (**options: a dict of nodes)
        more = bound.get(variadic, {}) if variadic else {}
        for option in flags:
            flag = bound.get(option, more.get(option))
            if flag is not None and not (isinstance(flag, gast.Constant) and not flag.value):
                raise error_at(flag, self.ctx, f"{name} with {option} is not differentiated",
                               f"call it without {option}")
        extra = bound.get("args")
        if extra is None or isinstance(extra, gast.Constant) and extra.value is None:
            extra = []
        elif isinstance(extra, gast.Tuple):
            extra = list(extra.elts)
        else:
            raise error_at(extra, self.ctx, f"{name}'s args= is differentiated when it is "
                           "written as a tuple (args=(a, b))", "write the tuple out at the call")
        return bound, extra

    def _ode(self, node, func, into: list, result: str | None = None) -> tuple:
        """An ODE solver's call -> (its solution through ``rt.ode_solution``, its output
        times), the statements computing them added to ``into`` (``result``: the name the
        solver's result object is held in, else one is made)."""
        layout = odes()[func]
        name = f"scipy.integrate.{func.__name__}"
        bound, extra = self._arguments(node, func, name, ("full_output", "events"))
        given = bound["fun"] if layout == "ivp" else bound["func"]
        tfirst = layout == "ivp" or isinstance(bound.get("tfirst"), gast.Constant) \
            and bool(bound["tfirst"].value)
        self._moving_discontinuities(given, extra, node, name, (T, Y) if tfirst else (Y, T))
        extra = [self.once(e, node) for e in extra]
        y0 = self.once(bound["y0"], node)
        rt = self.ctx.bind("rt", runtime)
        options = {"layout": A.const(layout)}
        held_call = self._replaced(node, {id(bound["y0"]): y0, id(bound.get("args")): gast.Tuple(
            elts=[A.copy_node(e) for e in extra], ctx=gast.Load())})
        if layout == "ivp":
            span = bound["t_span"]
            if isinstance(span, (gast.Tuple, gast.List)) and len(span.elts) == 2:
                t0, t1 = self.once(span.elts[0], node), self.once(span.elts[1], node)
                held_call = self._replaced(held_call, {id(span): gast.Tuple(elts=[
                    A.copy_node(t0), A.copy_node(t1)], ctx=gast.Load())})
            else:
                span = self.once(span, node)
                held_call = self._replaced(held_call, {id(bound["t_span"]): span})
                t0, t1 = (gast.Subscript(value=A.copy_node(span), slice=A.const(i),
                                         ctx=gast.Load()) for i in (0, -1))
            times = bound.get("t_eval")
            if times is not None:
                times = self.once(times, node)
                held_call = self._replaced(held_call, {id(bound["t_eval"]): times})
            for option in ("method", "rtol", "atol"):
                if bound.get(option, bound.get("options", {}).get(option)) is not None:
                    options[option] = self.once(bound.get(option, bound["options"].get(
                        option)), node)
            solver = {k: self.once(v, node) for k, v in bound.get("options", {}).items()
                      if k in _ODE_OPTIONS}
            if solver:
                options["solver"] = gast.Dict(keys=[A.copy_node(A.const(k)) for k in solver],
                                              values=[A.copy_node(v) for v in solver.values()])
            held_call = self._recorded(held_call, bound.get("method"), options, times, node)
        else:
            times = self.once(bound["t"], node)
            held_call = self._replaced(held_call, {id(bound["t"]): times})
            t0 = t1 = A.const(None)
            options["method"] = A.const("LSODA")
            for option in ("rtol", "atol"):
                options[option] = A.const(1.49012e-8) if bound.get(option) is None \
                    else self.once(bound[option], node)
            tfirst = bound.get("tfirst")
            if tfirst is not None and not isinstance(tfirst, gast.Constant):
                raise error_at(tfirst, self.ctx, f"{name}'s tfirst= is differentiated when it "
                               "is written at the call", "write tfirst=True or False")
            options["tfirst"] = A.const(bool(tfirst.value) if tfirst is not None else False)
        function = self.function_of(given, node)
        held_call = self._replaced(held_call, {id(given): function})
        objective, free = self._objective(given, function, len(extra) + 1, False, node,
                                          f"{name}'s right-hand side")
        extra = extra + [A.name(n) for n in free]
        if result is None:
            result = self.ctx.namer.fresh("_sol")
            into.append(A.assign(result, bound_call(runtime.stop_gradient,
                                                    f"{rt}.stop_gradient", held_call)))
        else:
            node.args, node.keywords = held_call.args, held_call.keywords
        if layout == "ivp":
            ys = gast.Attribute(value=A.name(result), attr="y", ctx=gast.Load())
            steps = gast.Attribute(value=A.name(result), attr="t", ctx=gast.Load())
        else:
            ys, steps = A.name(result), A.copy_node(times)
        table = gast.Dict(keys=[A.const(k) for k in options],
                          values=[A.copy_node(v) for v in options.values()])
        held = bound_call(runtime.ode_solution, f"{rt}.ode_solution", ys, A.copy_node(steps),
                          A.copy_node(objective), A.copy_node(t0), A.copy_node(t1),
                          A.copy_node(y0), gast.Tuple(elts=[A.copy_node(e) for e in extra],
                                                      ctx=gast.Load()),
                          A.const(None) if times is None else A.copy_node(times),
                          A.name(self.ctx.bind("ode", UNDER_INTEGRAL)),
                          bound_call(runtime.stop_gradient, f"{rt}.stop_gradient", table))
        parts = (objective, t0, t1, y0, extra, table)  # (for its dense output's reads)
        if times is not None:
            times = bound_call(np.asarray, f"{self.ctx.bind('np', np)}.asarray",
                               A.copy_node(times), keywords=[gast.keyword(
                                   arg="dtype", value=A.builtin("float"))])
        else:
            times = bound_call(runtime.step_times, f"{rt}.step_times", A.copy_node(steps),
                               A.copy_node(t0), A.copy_node(t1))
        return gast.copy_location(held, node), times, parts

    def _recorded(self, call, method, options: dict, times, node):
        """``solve_ivp(...)`` -> ``solve_ivp(..., method=_steps.method)``, ``_steps =
        rt.ode_steps(<its method>, <its t_eval>)`` before it (``options["steps"]``): an
        explicit Runge-Kutta method records the steps it takes, whose adjoint the derivative
        takes (runtime/runge_kutta.py), and another runs as given."""
        rt = self.ctx.bind("rt", runtime)
        record = self.ctx.namer.fresh("_steps")
        given = options.get("method")
        self.before.append(gast.copy_location(A.assign(record, bound_call(
            runtime.ode_steps, f"{rt}.ode_steps",
            A.const("RK45") if given is None else A.copy_node(given),
            A.const(None) if times is None else A.copy_node(times))), node))
        recording = gast.Attribute(value=A.name(record), attr="method", ctx=gast.Load())
        options["steps"] = A.name(record)
        if method is not None:
            return self._replaced(call, {id(method): recording})
        call = self._replaced(call, {})
        call.keywords.append(gast.keyword(arg="method", value=recording))
        return call

    def _dense(self, node, name: str, parts: tuple):
        """``sol.sol(t)`` of a ``solve_ivp(..., dense_output=True)`` result held in ``name``
        (``parts``: what ``_ode`` made of its call) -> its interpolant at ``t``, held, through
        ``rt.ode_solution`` read at ``t`` (layout "dense"): its derivative the solution's
        there, by the adjoint."""
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], gast.Starred):
            raise error_at(node, self.ctx, "the dense output (.sol) of a solve_ivp result is "
                           "differentiated when called with the times alone", "sol.sol(t)")
        objective, t0, t1, y0, extra, table = parts
        times = self.once(node.args[0], node)
        rt = self.ctx.bind("rt", runtime)
        value = self.ctx.namer.fresh("_dense")
        read = gast.Call(func=gast.Attribute(value=A.name(name), attr="sol", ctx=gast.Load()),
                         args=[A.copy_node(times)], keywords=[])
        self.before.append(gast.copy_location(A.assign(value, bound_call(
            runtime.stop_gradient, f"{rt}.stop_gradient", read)), node))
        dense = gast.Dict(keys=[A.copy_node(k) for k in table.keys], values=[
            A.const("dense") if k.value == "layout" else A.copy_node(v)
            for k, v in zip(table.keys, table.values, strict=True)])
        held = bound_call(runtime.ode_solution, f"{rt}.ode_solution", A.name(value),
                          A.copy_node(times), A.copy_node(objective), A.copy_node(t0),
                          A.copy_node(t1), A.copy_node(y0), gast.Tuple(
                              elts=[A.copy_node(e) for e in extra], ctx=gast.Load()),
                          A.copy_node(times), A.name(self.ctx.bind("ode", UNDER_INTEGRAL)),
                          bound_call(runtime.stop_gradient, f"{rt}.stop_gradient", dense))
        return gast.copy_location(held, node)

    @staticmethod
    def _replaced(node, replacements: dict):
        """A copy of the call ``node`` whose arguments ``replacements`` names (by id) are
        replaced."""
        call = gast.Call(func=node.func, args=[replacements.get(id(a), a) for a in node.args],
                         keywords=[gast.keyword(arg=k.arg, value=replacements.get(
                             id(k.value), k.value)) for k in node.keywords])
        if getanno(node, Anno.FUNC, None) is not None:
            setanno(call, Anno.FUNC, getanno(node, Anno.FUNC))
        return call

    def _gauss_legendre(self, node, given, lower, upper, extra, order) -> tuple:
        """``fixed_quad(f, a, b, args=(p,), n=5)`` -> ``(b - a) / 2 * np.sum(_w * f((b - a) *
        (_t + 1) / 2 + a, p), axis=-1)``, ``_t, _w = leggauss(5)`` the nodes and weights
        (as SciPy computes it: a finite sum, differentiated exactly)."""
        np_name = self.ctx.bind("np", np)
        rt = self.ctx.bind("rt", runtime)
        nodes, weights = self.ctx.namer.fresh("_t"), self.ctx.namer.fresh("_w")
        rule = np.polynomial.legendre.leggauss
        self.before.append(gast.copy_location(gast.Assign(targets=[gast.Tuple(elts=[
            A.name(nodes, store=True), A.name(weights, store=True)], ctx=gast.Store())],
            value=bound_call(runtime.stop_gradient, f"{rt}.stop_gradient", bound_call(
                rule, self.ctx.bind("leggauss", rule), A.const(5) if order is None
                else A.copy_node(order))), type_comment=None), node))
        half = gast.BinOp(left=gast.BinOp(left=A.copy_node(upper), op=gast.Sub(),
                                          right=A.copy_node(lower)), op=gast.Div(),
                          right=A.const(2.0))
        points = gast.BinOp(left=gast.BinOp(left=A.copy_node(half), op=gast.Mult(),
                                            right=gast.BinOp(left=A.name(nodes), op=gast.Add(),
                                                             right=A.const(1.0))),
                            op=gast.Add(), right=A.copy_node(lower))
        values = self.apply(self.function_of(given, node), [points] + [
            A.copy_node(e) for e in extra])
        total = bound_call(np.sum, f"{np_name}.sum", gast.BinOp(
            left=A.name(weights), op=gast.Mult(), right=values), keywords=[
            gast.keyword(arg="axis", value=A.const(-1))])
        value = gast.BinOp(left=half, op=gast.Mult(), right=total)
        return gast.copy_location(value, node), A.const(None)

    def visit_Attribute(self, node):
        """``root_scalar(f, ...).root``, ``root(f, ...).x``: the root of a solver whose result
        is an object."""
        if isinstance(node.value, gast.Name) and node.value.id in self.results:
            return self._result_field(node)
        if isinstance(node.value, gast.Call) and _kind(odes(), value_of(
                node.value.func, self.local, self.ctx)) == "ivp" and node.attr in ("y", "t"):
            call = self._visited(node.value)
            held, times, _ = self._ode(call, value_of(call.func, self.local, self.ctx),
                                       self.before)
            return gast.copy_location(held if node.attr == "y" else times, node)
        finder = _kind(solver_kinds(), value_of(node.value.func, self.local, self.ctx)) \
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
                        "differentiated again) through a root whose function is read only as "
                        "called (a method of a local object, a function held in a variable), "
                        "through a quad weight's frequency, or of a forward-mode derivative of a "
                        "solver's, are not supported yet: what its first derivative takes of "
                        "the user's function is held constant in it", "grad, value_and_grad, "
                        "jvp and vjp of the function work; a root's function given as a lambda "
                        "or a function defined in the module or inside takes second "
                        "derivatives too", cls=NoRuleError)

    def _root(self, node, func, attribute=None):
        """A solver's call read for its solution (the result, or ``.root``/``.x`` of it)."""
        kind, field = solver_kinds()[func]
        if field is not None and attribute is None:
            raise error_at(node, self.ctx, f"scipy.optimize.{func.__name__}'s result is "
                           f"differentiated through its solution, read as .{field}",
                           f"write {func.__name__}(...).{field}, or assign the result to a "
                           f"name and read its .{field}")
        self.hoisted(node, f"scipy.optimize.{func.__name__}")
        solved = node if attribute is None else gast.Attribute(value=node, attr=field,
                                                                ctx=gast.Load())
        return self._solution(node, func, solved, self.before)[0]

    def _result_object(self, stmt) -> bool:
        """Whether ``stmt`` is ``res = minimize(...)`` (a solver whose result is an object)."""
        return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call) \
            and (solver_kinds().get(value_of(stmt.value.func, self.local, self.ctx)) or (0, None))[
                1] is not None

    def _solver_statement(self, stmt):
        """``res = minimize(f, x0, args=(p,))``: the result object, held constant, and after
        it its solution through the theorem (``_x = rt.implicit_minimum(...)``), which later
        reads of ``res.x`` read; ``res.fun`` is the objective (residual) there, its data
        fields (``res.success``, ``res.nit``) the solver's."""
        name, call = stmt.targets[0].id, stmt.value
        func = value_of(call.func, self.local, self.ctx)
        kind, field = solver_kinds()[func]
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
        stmt.value = bound_call(runtime.stop_gradient, f"{rt}.stop_gradient", call)
        return stmt

    def _result_field(self, node):
        """``res.x`` of a solver's result object: its solution; ``res.fun``: the objective
        there; its data fields as they are."""
        info = self.results[node.value.id]
        if info["kind"] == "ode":
            if node.attr in ("y", "t"):
                return gast.copy_location(A.copy_node(info[node.attr]), node)
            if node.attr in _ODE_DATA:
                return node
            raise error_at(node, self.ctx, f"{node.value.id}.{node.attr} of a scipy.integrate."
                           "solve_ivp result is not differentiated (events are not yet)",
                           "read its .y at the times you need, given as t_eval=, or call "
                           f"{node.value.id}.sol(t) (with dense_output=True)")
        if node.attr == info["field"]:
            return gast.copy_location(A.name(info["held"]), node)
        residual = self.residuals.get(id(info["function"]))
        if residual is not None and node.attr == "fun":  # least_squares's residuals there
            return gast.copy_location(self.apply(residual[0], [A.name(info["held"])] + [
                A.copy_node(e) for e in residual[1]]), node)
        objective = ("fun", "cost") if residual is not None else ("fun",)  # (.cost: half
        if node.attr in objective and info["kind"] != "scalar":  # their sum of squares)
            return gast.copy_location(self.apply(info["function"], [A.name(info["held"])] + [
                A.copy_node(e) for e in info["extra"]]), node)
        if node.attr in _RESULT_DATA:
            return node
        raise error_at(node, self.ctx, f"{node.value.id}.{node.attr} of a scipy.optimize."
                       f"{info['func'].__name__} result is not differentiated",
                       f"read its .{info['field']} (and .fun), and compute what else you need "
                       "from them")

    def visit_Name(self, node):
        if node.id in self.held and isinstance(node.ctx, gast.Load):
            raise error_at(node, self.ctx, f"{self.held[node.id]} {node.id} is not "
                           "differentiated", "compute what you need of it outside the "
                           "differentiated function")
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
        kind, _ = solver_kinds()[func]
        bound, extra = self._arguments(node, func, name, ("full_output",))
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
        squares = func.__name__ == "least_squares"
        if squares:
            self._check_least_squares(bound, name)
        given = next(bound[k] for k in ("f", "func", "fun") if k in bound)
        function = self.function_of(given, node)
        extra = [self.once(e, node) for e in extra]
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
            solved = bound_call(runtime.stop_gradient, f"{rt}.stop_gradient", solved)
        into.append(A.assign(root, solved))  # (a result object's name: held already)
        if kind == "minimum":
            residual = (function, list(extra))
            objective, free = self._objective(given, function, len(extra), returns_jac, node,
                                              wrap=self._half_squares if squares else None)
            extra = extra + [A.name(n) for n in free]
            bounds = bound.get("bounds")
            if squares and bounds is not None:
                bounds = self._bounds(bounds, node)
            held = bound_call(runtime.implicit_minimum, f"{rt}.implicit_minimum", A.name(root),
                         A.copy_node(objective), gast.Tuple(elts=[A.copy_node(e) for e in extra],
                                                           ctx=gast.Load()),
                         A.name(self.ctx.bind("stationary", STATIONARY)),
                         A.const(None) if bounds is None else self.once(bounds, node))
            if squares:
                self.residuals[id(objective)] = residual
            return gast.copy_location(held, node), objective, extra
        if kind == "fixed":  # x = f(x, p): the fixed point a converged loop's is too
            step, free = self._objective(given, function, len(extra), False, node,
                                         f"{name}'s function")
            extra = extra + [A.name(n) for n in free]
            held = bound_call(runtime.fixed_point, f"{rt}.fixed_point", A.name(root),
                              A.copy_node(step), gast.Tuple(
                                  elts=[A.copy_node(e) for e in extra], ctx=gast.Load()),
                              A.name(self.ctx.bind("fixed_point_of", FIXED_POINT)),
                              gast.Tuple(elts=[A.const("x")], ctx=gast.Load()))
            return gast.copy_location(held, node), step, extra
        try:  # (F as a function of everything it reads: then second derivatives go through)
            residual, free = self._objective(given, function, len(extra), False, node,
                                             f"{name}'s function")
        except TranspileError:  # (a method of a local object, a function held in a variable)
            return self._residual_root(node, kind, function, extra, root, into)
        extra = extra + [A.name(n) for n in free]
        roots = ROOTS if kind == "scalar" else ROOT_SYSTEM
        held = bound_call(runtime.root_of, f"{rt}.root_of", A.name(root), A.copy_node(residual),
                          gast.Tuple(elts=[A.copy_node(e) for e in extra], ctx=gast.Load()),
                          A.name(self.ctx.bind(f"{roots.kind}_of", roots)))
        return gast.copy_location(held, node), residual, extra

    def _residual_root(self, node, kind: str, function, extra: list, root: str, into: list):
        """A root whose function the compiler reads only as called here (a method of a local
        object, a function held in a variable): ``F(root, p)`` written out, its derivative
        divided by the slope ``dF/dx`` (``rt.implicit_root``; a system's by its Jacobian,
        ``rt.implicit_system``), first derivatives only."""
        rt = self.ctx.bind("rt", runtime)
        extras = gast.Tuple(elts=[A.copy_node(e) for e in extra], ctx=gast.Load())
        slope = self.ctx.namer.fresh("_slope")
        derivative = {"scalar": implicit_slope, "system": implicit_jacobian}[kind]
        bound_as = self.ctx.bind(derivative.__name__, derivative)
        taken = bound_call(derivative, bound_as, A.copy_node(function), A.name(root), extras)
        into.append(A.assign(slope, bound_call(runtime.stop_gradient, f"{rt}.stop_gradient",
                                               taken)))
        residual = self.apply(function, [A.name(root)] + [A.copy_node(e) for e in extra])
        held = runtime.implicit_root if kind == "scalar" else runtime.implicit_system
        return gast.copy_location(bound_call(held, f"{rt}.{held.__name__}", A.name(root), residual,
                                        A.name(slope)), node), function, extra

    def _moving_discontinuities(self, given, extra: list, node, name: str,
                                leading: tuple) -> bool:
        """Refuse an integrand that jumps, or a right-hand side that switches, at a point that
        moves with the differentiated values (analysis/jumps.py): the derivative taken point
        by point misses the jump's term. -> whether it has a kink that moves (its second
        derivatives would miss that one's)."""
        definition, namespace = self._definition(given)
        if definition is None:  # (a method, a partial: not read)
            return False
        ode = Y in leading
        params = [a.id for a in definition.args.args]
        tags = dict(zip(params, leading, strict=False))
        for param, argument in zip(params[len(leading):], extra, strict=False):
            tags[param] = self._tags(argument)
        body = definition.body if isinstance(definition, gast.FunctionDef) \
            else [definition.body]
        if isinstance(given, gast.Lambda) or isinstance(given, gast.Name) \
                and given.id in self.defs:  # (defined inside: what it reads of the locals)
            for n in (n for b in body for n in A.walk(b)):
                if isinstance(n, gast.Name) and n.id in self.local and n.id not in tags:
                    tags[n.id] = self._tags(n)
        found = discontinuities(definition, tags, namespace, (lambda t: Y in t or {T, P} <= t)
                                if ode else (lambda t: {T, P} <= t))
        if found.jumps:
            site = found.jumps[0]
            where = found.where.get(id(site))
            text = gast.unparse(site).strip().splitlines()[0] + (f" ({where})" if where else "")
            what = f"{name}'s right-hand side switches where `{text}` changes" \
                if ode else f"{name}'s integrand jumps where `{text}` changes"
            why = ("on the state or at a time that moves with the differentiated values: the "
                   "solution's sensitivities jump at the switch, which its adjoint does not "
                   "see") if ode else ("at a point that moves with the differentiated values: "
                                      "the derivative under the integral sign misses the "
                                      "jump's term")
            hint = ("write the switch smoothly (np.tanh, a logistic), or solve each regime on "
                    "its own span") if ode else ("split the integral at the jump, quad(f, a, c) "
                                                 "+ quad(f, c, b): its limit c then carries "
                                                 "the term")
            raise error_at(node, self.ctx, f"{what} {why}", hint)
        return bool(found.kinks)

    def _definition(self, given):
        """The source of the function a solver is given (a lambda, a function defined inside,
        or one of the module) and the names it reads: -> (gast node, namespace), or None."""
        from transpiler.frontend import parse_function

        namespace = getattr(getattr(self.ctx, "fn", None), "__globals__", {})
        if isinstance(given, gast.Lambda):
            return given, namespace
        if isinstance(given, gast.Name) and given.id in self.defs:
            return self.defs[given.id], namespace
        func = value_of(given, self.local, self.ctx)
        if inspect.isfunction(func):
            try:
                return parse_function(func)[0], func.__globals__
            except TranspileError:
                return None, None
        return None, None

    def _tags(self, node) -> frozenset:
        """``{P}`` where an argument reads a local that varies with the differentiated
        parameters (a constant, a global: nothing)."""
        if self._varied is None:
            self._varied = varied(self.fn, getattr(self.ctx, "wrt", None)) \
                if self.fn is not None else set(self.local)
        names = {n.id for n in A.walk(node) if isinstance(n, gast.Name)}
        return frozenset({P}) if names & self._varied else frozenset()

    def _objective(self, given, function, arity: int, returns_jac: bool, like,
                   what: str = "a minimum's objective", wrap=None):
        """A minimum's objective as a function of everything it reads, for its derivative
        (transpiler/implicit.py differentiates it at run time, where a closure's values would
        be held): ``lambda w: loss(w, lam)``, ``lam`` a local, is also written ``_g = lambda
        w, lam: loss(w, lam)`` with ``lam`` passed after the solver's ``args``; a function
        defined inside the same way; with ``jac=True``, its value only; ``wrap``: what the
        objective is of the function's result (least squares: half its sum of squares). ->
        (the function node, the local names appended)."""
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
            free = self._closure(given, params, body, what)
            if not free and not returns_jac and wrap is None:
                return function, []
            copy = A.copy_node(definition)
            if wrap is not None and isinstance(copy, gast.Lambda):
                copy.body = wrap(copy.body)
            elif wrap is not None:
                for stmt in _returns(copy):
                    stmt.value = wrap(stmt.value)
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
                else self.function_of(copy, like)
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
        if returns_jac or wrap is not None:
            return self._value_only(function, arity, like, wrap), []
        return function, []

    def _half_squares(self, residual):
        """``0.5 * np.sum(np.square(residual))``: least squares' objective."""
        np_name = self.ctx.bind("np", np)
        squares = bound_call(np.square, f"{np_name}.square", residual)
        return gast.BinOp(left=A.const(0.5), op=gast.Mult(),
                          right=bound_call(np.sum, f"{np_name}.sum", squares))

    def _check_least_squares(self, bound: dict, name: str) -> None:
        """Refuse what least squares' theorem does not cover: a robust ``loss`` (its
        objective is not the sum of squares; differentiable, but not written yet) and
        ``kwargs=`` (pass them in ``args=``)."""
        loss = bound.get("loss")
        if loss is not None and not (isinstance(loss, gast.Constant) and loss.value == "linear"):
            raise error_at(loss, self.ctx, f"{name} with a loss other than 'linear' is not "
                           "differentiated yet", "write the robust loss into a minimize "
                           "objective, or use loss='linear'")
        keywords = bound.get("kwargs")
        if keywords is not None and not (isinstance(keywords, gast.Dict) and not keywords.keys):
            raise error_at(keywords, self.ctx, f"{name}'s kwargs= is not differentiated",
                           "pass those values in args=")

    def _bounds(self, bounds, like):
        """``Bounds(lb, ub)`` of least squares' and curve_fit's ``bounds=(lb, ub)``."""
        pair = self.once(bounds, like)
        so = sys.modules["scipy.optimize"]
        return bound_call(so.Bounds, self.ctx.bind("Bounds", so.Bounds), *(
            gast.Subscript(value=A.copy_node(pair), slice=A.const(i), ctx=gast.Load())
            for i in (0, 1)))

    def _closure(self, given, params: set, body: list, what: str) -> list:
        """The locals a function defined inside reads (its closure, passed as parameters of
        a copy), refusing a call of another function defined inside."""
        own = params | {n.id for b in body for n in A.walk(b) if isinstance(n, gast.Name)
                        and isinstance(n.ctx, (gast.Store, gast.Param))}
        free = sorted({n.id for b in body for n in A.walk(b) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, gast.Load)} & self.local - own)
        inner = [n for n in free if n in self.defs]
        if inner:
            raise error_at(given, self.ctx, f"{what} calls {inner[0]}, a function defined "
                           "inside the differentiated one", f"define {inner[0]} at module "
                           "level, passing it what it reads")
        return free

    def _defined(self, definition, like):
        """A copy of a function defined inside, under a fresh name, before the statement."""
        definition.name = self.ctx.namer.fresh(f"_{definition.name}")
        self.before.append(gast.copy_location(definition, like))
        return A.name(definition.name)

    def _value_only(self, function, arity: int, like, wrap=None):
        """``lambda _x, _a0, ...: function(_x, _a0, ...)[0]``: the value of an objective that
        returns its gradient too (``jac=True``); with ``wrap``, ``wrap(function(_x, ...))``."""
        params = [self.ctx.namer.fresh("_p") for _ in range(arity + 1)]
        body = self.apply(function, [A.name(p) for p in params])
        if not any(isinstance(n, gast.Name) and n.id in self.local for n in A.walk(function)):
            # (a module's function: its call a statement of its own, which is inlined where
            # the objective is differentiated, so its third derivatives compile too)
            value = self.ctx.namer.fresh("_v")
            result = wrap(A.name(value)) if wrap is not None else gast.Subscript(
                value=A.name(value), slice=A.const(0), ctx=gast.Load())
            return self._defined(gast.FunctionDef(
                name="value", args=lambda_of(params, A.const(None)).args,
                body=[A.assign(value, body), gast.Return(value=result)], decorator_list=[],
                returns=None, type_comment=None), like)
        body = wrap(body) if wrap is not None else gast.Subscript(value=body, slice=A.const(0),
                                                                  ctx=gast.Load())
        return self.function_of(lambda_of(params, body), like)
