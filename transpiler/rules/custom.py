"""What a user adds to the rule tables besides templates: opaque functions with a VJP (and JVP)
written as ordinary Python, and hooks run on a gradient during the backward sweep.

``black_box(f, vjp=f_vjp, jvp=f_jvp)`` makes ``f`` opaque: its source is never read, calls of it
run it as it is, and its derivatives come from the user's functions:

- ``f_vjp(ans, g, *args)`` returns one gradient per parameter of ``f`` (a tuple; None for a
  parameter with no gradient), given the result ``ans`` and the gradient ``g`` arriving at it;
- ``f_jvp(ans, args, tangents)`` returns the tangent of the result, given the argument tuple and
  one tangent per argument (zeros for arguments that are held fixed).

The rules are ordinary templates (``registry.Rule``), written here from the parameter names of
``f``, which are identifiers: nothing the user wrote is pasted into code.

``on_gradient(x, hook)`` is ``x``; in the backward sweep the gradient reaching it becomes
``hook(gradient)``, in the spirit of Tangent's ``insert_grad_of``. ``implicit_root(root,
residual, slope)``, what a root finder's call is written as, is ``root``, its derivative the
residual's over ``-slope``.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable

import gast

import runtime as rt
from transpiler.rules.registry import (
    ADJOINTS,
    TANGENTS,
    Rule,
    RuleError,
    adjoint,
    check_template,
    d,
    resolve_calls,
    tangent,
)


@adjoint(rt.on_gradient)
def adj_on_gradient(ans, x, hook):
    d[x] = hook(d[ans])


@tangent(rt.on_gradient)
def tan_on_gradient(ans, x, hook):
    d[ans] = d[x]


# a root whose function is read only as called (passes/solvers.py): the implicit function
# theorem's derivative; its adjoint helper has no tangent (second derivatives are refused)
@adjoint(rt.implicit_root)
def adj_implicit_root(ans, root, residual, slope):
    d[residual] = rt.implicit_root_adjoint(d[ans], slope)


@tangent(rt.implicit_root)
def tan_implicit_root(ans, root, residual, slope):
    d[ans] = rt.implicit_root_tangent(d[residual], slope)


@adjoint(rt.implicit_system)
def adj_implicit_system(ans, root, residual, jacobian):
    d[residual] = rt.implicit_system_adjoint(d[ans], jacobian)


@tangent(rt.implicit_system)
def tan_implicit_system(ans, root, residual, jacobian):
    d[ans] = rt.implicit_system_tangent(d[residual], jacobian)


# a root of F(x, p) = 0 (passes/solvers.py): the theorem's derivative, F's derivatives taken
# at the root by ``roots`` (transpiler/implicit.py); the adjoint gets the root as computed,
# so that forward over reverse moves it (second derivatives)
@adjoint(rt.root_of)
def adj_root_of(ans, root, f, args, roots):
    d[args] = rt.root_of_adjoint(d[ans], ans, f, args, roots)


@tangent(rt.root_of)
def tan_root_of(ans, root, f, args, roots):
    d[ans] = rt.root_of_tangent(d[args], ans, f, args, roots)


@tangent(rt.root_of_adjoint)  # (forward over reverse: F's second derivatives)
def tan_root_of_adjoint(ans, g, root, f, args, roots):
    d[ans] = rt.root_of_adjoint_tangent(d[g], d[root], d[args], g, root, f, args, roots)


# a minimum (minimize(...).x): the arguments' derivative through grad_x f = 0, the objective's
# second derivatives taken by ``stationary`` (transpiler/implicit.py) at run time
@adjoint(rt.implicit_minimum)
def adj_implicit_minimum(ans, minimum, fun, args, stationary, bounds=None):
    d[args] = rt.implicit_minimum_adjoint(d[ans], ans, fun, args, stationary)


@tangent(rt.implicit_minimum)
def tan_implicit_minimum(ans, minimum, fun, args, stationary, bounds=None):
    d[ans] = rt.implicit_minimum_tangent(d[args], minimum, fun, args, stationary)


@tangent(rt.implicit_minimum_adjoint)  # (forward over reverse: the objective's third derivatives)
def tan_implicit_minimum_adjoint(ans, g, minimum, fun, args, stationary):
    d[ans] = rt.implicit_minimum_adjoint_tangent(d[g], d[minimum], d[args], g, minimum, fun,
                                                 args, stationary)


# a loop marked converged (passes/converged.py): the implicit function theorem on x = step(x, p),
# the body's derivatives taken at the fixed point by ``fixed`` (transpiler/implicit.py)
@adjoint(rt.fixed_point)
def adj_fixed_point(ans, state, step, args, fixed, names):
    d[args] = rt.fixed_point_adjoint(d[ans], ans, step, args, fixed, names)


@tangent(rt.fixed_point)
def tan_fixed_point(ans, state, step, args, fixed, names):
    d[ans] = rt.fixed_point_tangent(d[args], ans, step, args, fixed, names)


@tangent(rt.fixed_point_adjoint)  # (forward over reverse: the body's second derivatives)
def tan_fixed_point_adjoint(ans, g, state, step, args, fixed, names):
    d[ans] = rt.fixed_point_adjoint_tangent(d[g], d[state], d[args], g, state, step, args,
                                            fixed, names)


# an integral (quad(...)[0], passes/solvers.py): Leibniz's rule, the integrand's derivatives in
# its arguments integrated at run time (``integrand``, transpiler/implicit.py)
@adjoint(rt.integral)
def adj_integral(ans, value, fun, a, b, args, wvar, integrand, options):
    d[a] = rt.integral_limit_adjoint(d[ans], fun, a, args, wvar, options, -1.0, integrand)
    d[b] = rt.integral_limit_adjoint(d[ans], fun, b, args, wvar, options, 1.0, integrand)
    d[args] = rt.integral_adjoint(d[ans], fun, a, b, args, wvar, integrand, options)
    d[wvar] = rt.integral_weight_adjoint(d[ans], fun, a, b, args, wvar, options)


@tangent(rt.integral_limit_adjoint)  # (forward over reverse: the integrand's derivatives)
def tan_integral_limit_adjoint(ans, g, fun, limit, args, wvar, options, sign, integrand):
    d[ans] = rt.integral_limit_adjoint_tangent(d[g], d[limit], d[args], g, fun, limit, args,
                                               wvar, options, sign, integrand)


@tangent(rt.integral_adjoint)  # (forward over reverse: its second derivatives against g)
def tan_integral_adjoint(ans, g, fun, a, b, args, wvar, integrand, options):
    d[ans] = rt.integral_adjoint_tangent(d[g], d[a], d[b], d[args], g, fun, a, b, args, wvar,
                                         integrand, options)


@tangent(rt.integral)
def tan_integral(ans, value, fun, a, b, args, wvar, integrand, options):
    d[ans] = rt.integral_tangent(d[a], d[b], d[args], d[wvar], fun, a, b, args, wvar, integrand,
                                 options)


# an ODE's solution (solve_ivp(...).y, odeint(...), passes/solvers.py): its adjoint solved
# backwards (reverse mode), its variational equation beside it (forward mode), both by SciPy,
# the right-hand side's derivatives taken at run time (``ode``, transpiler/implicit.py)
@adjoint(rt.ode_solution)
def adj_ode_solution(ans, ys, ts, fun, t0, t1, y0, args, times, ode, options):
    gt0, gt1, gy0, gargs, gtimes = rt.ode_adjoint(d[ans], ys, ts, fun, t0, t1, y0, args, times,
                                                  ode, options)
    d[t0] = gt0
    d[t1] = gt1
    d[y0] = gy0
    d[args] = gargs
    d[times] = gtimes


@tangent(rt.ode_adjoint)  # (forward over reverse: the adjoint's tangent solved beside it)
def tan_ode_adjoint(ans, g, ys, ts, fun, t0, t1, y0, args, times, ode, options):
    d[ans] = rt.ode_adjoint_tangent(d[g], d[t0], d[t1], d[y0], d[args], d[times], g, ys, ts,
                                    fun, t0, t1, y0, args, times, ode, options)


@tangent(rt.ode_solution)
def tan_ode_solution(ans, ys, ts, fun, t0, t1, y0, args, times, ode, options):
    d[ans] = rt.ode_tangent(d[t0], d[t1], d[y0], d[args], d[times], ys, ts, fun, t0, t1, y0,
                            args, times, ode, options)


# solve_ivp's sol.t without t_eval: its first time moves with t0, its last with t1
@adjoint(rt.step_times)
def adj_step_times(ans, ts, t0, t1):
    gt0, gt1 = rt.step_times_adjoint(d[ans], ts)
    d[t0] = gt0
    d[t1] = gt1


@tangent(rt.step_times)
def tan_step_times(ans, ts, t0, t1):
    d[ans] = rt.step_times_tangent(d[t0], d[t1], ts)


@tangent(rt.step_times_adjoint)  # (linear in the gradient)
def tan_step_times_adjoint(ans, g, ts):
    d[ans] = rt.step_times_adjoint(d[g], ts)


def black_box(f: Callable | None = None, *, vjp: Callable | None = None,
              jvp: Callable | None = None):
    """Register ``vjp`` (reverse mode) and/or ``jvp`` (forward mode) as the derivatives of the
    opaque function ``f``; returns ``f``, so it also works as ``@black_box(vjp=...)``."""
    if f is None:
        return lambda g: black_box(g, vjp=vjp, jvp=jvp)
    if vjp is None and jvp is None:
        raise RuleError("black_box needs vjp=..., jvp=... or both")
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError) as e:
        raise RuleError(f"black_box: {f!r} has no signature to bind calls to; wrap it in a "
                        "def with named parameters") from e
    where = _where(f)
    names = [p.name for p in params]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise RuleError(f"{where}: black_box needs a function with named parameters, not "
                        "*args/**kwargs")
    if {"ans", "d"} & set(names):
        raise RuleError(f"{where}: black_box cannot take a function with a parameter named "
                        "'ans' or 'd'; rename it")
    signature = inspect.Signature(
        [inspect.Parameter("ans", inspect.Parameter.POSITIONAL_ONLY)]
        + [p.replace(annotation=p.empty) for p in params])
    arguments = ", ".join(names)
    if vjp is not None:
        _check_arity(vjp, len(names) + 2, "vjp(ans, g, " + arguments + ")")
        call = _alias(vjp, "user_vjp")
        body = (f"_parts = rt.partials({call}(ans, d[ans], {arguments}), {len(names)}, {call})\n"
                + "".join(f"d[{n}] = rt.partial_of(_parts, {i}, {n})\n"
                          for i, n in enumerate(names)))
        _register(ADJOINTS, f, vjp, call, body, signature, forward=False)
    if jvp is not None:
        _check_arity(jvp, 3, "jvp(ans, args, tangents)")
        call = _alias(jvp, "user_jvp")
        tangents = ", ".join(f"d[{n}]" for n in names)
        comma = "," if len(names) == 1 else ""
        body = f"d[ans] = {call}(ans, ({arguments}{comma}), ({tangents}{comma}))\n"
        _register(TANGENTS, f, jvp, call, body, signature, forward=True)
    return f


def _register(table: dict, f, derivative, alias: str, body: str, signature, forward: bool):
    template = types.FunctionType(_template.__code__, {alias: derivative, "rt": rt},
                                  f"{alias}_of_{f.__name__}")
    stmts = gast.parse(body).body
    filename, lineno = inspect.getsourcefile(derivative) or "<unknown>", _line(derivative)
    for stmt in stmts:
        gast.increment_lineno(stmt, lineno - 1)
    where = f"{filename}:{lineno}"
    check_template(template, stmts, list(signature.parameters), where, forward)
    for stmt in stmts:
        resolve_calls(stmt, {alias: derivative, "rt": rt})
    table[f] = Rule(f, template, stmts, signature, filename, lineno)


def _alias(function, default: str) -> str:
    """The name a generated gradient calls the user's function by (its own, when it has one)."""
    name = getattr(function, "__name__", "")
    return name if name.isidentifier() and name not in ("ans", "d", "rt", "_parts") \
        else default


def _template():  # the code object black-box rules share; their bodies are built above
    pass


def _check_arity(function, n: int, expected: str) -> None:
    if not callable(function):
        raise RuleError(f"black_box: {function!r} is not callable")
    try:
        inspect.signature(function).bind(*range(n))
    except TypeError as e:
        raise RuleError(f"{_where(function)}: {getattr(function, '__name__', function)} must "
                        f"accept {expected}: {e}") from e
    except ValueError:  # no signature (a builtin): trust it
        pass


def _where(function) -> str:
    try:
        return f"{inspect.getsourcefile(function)}:{_line(function)}"
    except TypeError:
        return repr(function)


def _line(function) -> int:
    code = getattr(function, "__code__", None)
    return code.co_firstlineno if code is not None else 0
