"""An ODE solution's derivative by its adjoint (reverse mode) and its variational equation
(forward mode), solved with SciPy itself; never through the solver's steps.

For ``y' = f(t, y, p)``, ``y(t0) = y0``, read at output times ``T_k`` with cotangents ``G_k``:

- reverse: the adjoint ``a`` runs backwards from the last output, ``a' = -J_y^T a``, jumping by
  ``G_k`` at each output; along the way ``gp' = -J_p^T a`` collects the parameters' gradient,
  and at ``t0``: ``dL/dy0 = a``, ``dL/dt0 = -a . f(t0, y0)``; an output time's gradient is
  ``G_k . f(T_k, y_k)``. For the explicit Runge-Kutta methods (RK45, RK23) ``a`` is the adjoint
  of the solver's own steps (runtime/runge_kutta.py: the derivative of the numbers returned,
  no step of its own per output interval); for the others it is solved backwards with SciPy,
  the state recomputed from the outputs (checkpoints the forward solve already returned) with
  dense output, a few intervals at a time, so the memory is that of those intervals, not of
  every step the solver took;
- forward: the tangent ``v = dy`` solves ``v' = J_y v + J_p dp`` beside ``y``, from ``v(t0) =
  dy0 - f(t0, y0) dt0``, read at the outputs plus ``f(T_k, y_k) dT_k``;
- second order (forward over reverse): ``v`` forwards, then the adjoint and its tangent
  backwards together (``ode_adjoint_tangent``).

The vector-Jacobian and Jacobian-vector products of ``f`` are taken at run time by ``ode``
(transpiler/implicit.py, the runtime never compiles); both solves use the user's method and
tolerances, so the derivative is as accurate as the solution, relative to them.
``x = solve_ivp(f, (t0, t1), y0, t_eval=ts, args=(p,))`` is written (passes/solvers.py)
``sol = rt.stop_gradient(solve_ivp(...))`` and ``_y = rt.ode_solution(sol.y, sol.t, f, t0, t1,
y0, (p,), ts, ode, options)``, which later reads of ``sol.y`` read.
"""

from __future__ import annotations

import numpy as np

from runtime import runge_kutta
from runtime.arrays import asarray, is_zero, unflattened, zero_parts


def ode_solution(ys, ts, fun, t0, t1, y0, args: tuple, times, ode, options: dict):
    """``ys``, the solver's solution at its output times ``ts`` (``solve_ivp``'s ``sol.y``,
    ``(n, K)``; ``odeint``'s, ``(K, n)``): its derivative is the adjoint's."""
    if options.get("layout") == "ivp" and np.shape(ys)[1:] and np.shape(ys)[1] == 0:
        raise RuntimeError("the ODE solver returned no output (it failed at the first step?)")
    return ys


def step_times(ts, t0, t1):
    """``solve_ivp``'s ``sol.t`` without ``t_eval``: the steps it took, from ``t0`` to ``t1``:
    the first moves with ``t0`` and the last with ``t1``, the others are the solver's choice
    (data)."""
    return ts


def step_times_adjoint(g, ts):
    """``(dL/dt0, dL/dt1)`` of ``step_times``."""
    if is_zero(g):
        return 0.0, 0.0
    g = asarray(g, float)
    return float(g[0]), float(g[-1])


def step_times_tangent(dt0, dt1, ts):
    out = np.zeros(np.shape(ts))
    if dt0 is not None and not is_zero(dt0):
        out[0] = float(dt0)
    if dt1 is not None and not is_zero(dt1):
        out[-1] = out[-1] + float(dt1)
    return out


# --- the pieces both modes share ---

class _Problem:
    """The problem as solved: the right-hand side as ``rhs(t, y)``, the outputs as ``(K, n)``,
    the initial point, and how to call SciPy again."""

    def __init__(self, ys, ts, fun, t0, y0, args, times, ode, options, t1=None):
        self.fun, self.args, self.ode, self.options = fun, tuple(args), ode, options
        self.tfirst = options.get("tfirst", True)
        self.pull = None
        self.steps: dict = {}  # a solve's kind -> a first step for its next interval
        y0 = asarray(y0)
        if np.iscomplexobj(y0) or np.iscomplexobj(ys):
            raise TypeError("an ODE with complex values is not differentiated yet: write it "
                            "as a real system of twice the size")
        self.shape0 = np.shape(y0)
        self.y0 = np.ravel(asarray(y0, float))
        ys = asarray(ys, float)
        self.layout = options.get("layout")
        self.ys = ys.T if self.layout == "ivp" else ys.reshape(len(ys), -1) \
            if self.layout != "dense" else ys.reshape(self.y0.size, -1).T
        self.ts = np.ravel(asarray(ts if times is None else times, float))
        self.at_steps = times is None  # (the outputs are the solver's steps)
        self.t0 = float(self.ts[0] if t0 is None else t0)
        self.order = None  # (dense output read at times in any order: sorted along the span)
        if self.layout == "dense":
            self._sort(t1)

    def _sort(self, t1) -> None:
        """The dense output's times in the direction of the span, checked to lie in it (the
        interpolant is the solution's only there)."""
        t1 = float(t1)
        low, high = min(self.t0, t1), max(self.t0, t1)
        if np.any((self.ts < low) | (self.ts > high)):
            raise ValueError(f"sol.sol(t) is differentiated for t in the span [{low}, {high}] "
                             "the solver integrated over (outside it, the interpolant "
                             "extrapolates)")
        self.order = np.argsort(self.ts if t1 >= self.t0 else -self.ts, kind="stable")
        self.ts, self.ys = self.ts[self.order], self.ys[self.order]

    def outputs_of(self, g):
        """A cotangent (or tangent) shaped like the solution, as ``(K, n)`` in output order."""
        g = asarray(g, float)
        if self.layout == "dense":
            return g.reshape(self.y0.size, -1).T[self.order]
        return g.T if self.layout == "ivp" else g.reshape(len(g), -1)

    def unsorted(self, values):
        """Values per sorted output back in the order the times were given."""
        if self.order is None:
            return values
        out = np.empty_like(values)
        out[self.order] = values
        return out

    def rhs(self, t, y):
        call = (t, y) if self.tfirst else (y, t)
        return np.ravel(asarray(self.fun(*call, *self.args), float))

    def vjp(self, t, y, a) -> tuple:
        """``(J_y^T a, (J_p^T a for each argument))``."""
        if self.pull is None:  # (prepared once per solve: the arguments' kinds hold)
            self.pull = self.ode.pullback(self.fun, t, (y, *self.args),
                                          at=0 if self.tfirst else 1)
        parts = self.pull(t, (y, *self.args), a)
        return parts[0], parts[1:]

    def halves(self):
        """The right-hand side's two halves on flat states (the discrete adjoint's,
        runtime/runge_kutta.py): ``forward(t, y) -> (value, tape)``, ``backward(value, tape,
        g) -> (J_y^T g, J_p^T g flat over the differentiated arguments)``."""
        at = 0 if self.tfirst else 1
        forward, backward = self.ode.split(self.fun, self.t0, (self.y0, *self.args), at=at)
        active = _active(self.args, self.ode)
        args = self.args

        class Halves:
            @staticmethod
            def forward(t, y):
                return forward(t, (y, *args))

            @staticmethod
            def backward(value, tape, g):
                parts = backward(value, tape, g)
                flat = [np.ravel(asarray(p, float)) for p, on in zip(parts[1:], active,
                                                                     strict=True) if on]
                return (np.ravel(asarray(parts[0], float)),
                        flat[0] if len(flat) == 1 else np.concatenate(flat) if flat
                        else np.zeros(0))

        return Halves

    def jvp(self, t, y, v, dargs):
        return self.ode.jvp(self.fun, t, (y, *self.args), (v, *dargs),
                            at=0 if self.tfirst else 1)

    def solve(self, rhs, span, y0, t_eval=None, dense=False, scale=1.0, first_step=None):
        """``solve_ivp`` with the user's method and tolerances (``scale``: the tolerances'
        factor for an augmented state; ``first_step``: a step known to suit, which spares the
        solver its initial step selection on each of many short intervals)."""
        from scipy.integrate import solve_ivp

        options = self.options
        extra = dict(options.get("solver", {}))
        if first_step is not None and "first_step" not in extra:
            first_step = min(first_step, abs(span[1] - span[0]), extra.get("max_step", np.inf))
            if first_step > 0:
                extra["first_step"] = first_step
        solved = solve_ivp(rhs, span, y0, method=options.get("method", "RK45"),
                           t_eval=t_eval, dense_output=dense, rtol=options.get("rtol", 1e-3),
                           atol=_tolerance(options.get("atol", 1e-6), len(y0), scale),
                           **extra)
        if len(solved.t) > 1 and first_step is not None:  # (the largest step, grown a little)
            self.steps[rhs.__name__] = 1.5 * float(np.max(np.abs(np.diff(solved.t))))
        if not solved.success:
            raise RuntimeError(f"the ODE's derivative: SciPy's solve_ivp failed ({solved.message})")
        return solved


def _tolerance(atol, size: int, scale):
    """The user's ``atol`` for an augmented state of ``size``: per component where it was
    given per component (the state's first), the smallest of them for the rest."""
    atol = np.atleast_1d(np.asarray(atol, float))
    if atol.size == 1:
        return float(atol[0])
    extra = size - atol.size
    return np.concatenate([atol, np.full(max(extra, 0), atol.min() * scale)])[:size]


def _active(args, ode) -> tuple:
    return ode.active(args)


# output intervals whose state one recomputation holds (dense output) for the adjoint's solves:
# the memory of at most this many intervals, and a recomputation as long as the solver's steps
_CHUNK = 16


def ode_adjoint(g, ys, ts, fun, t0, t1, y0, args: tuple, times, ode, options: dict) -> tuple:
    """``(dL/dt0, dL/dt1, dL/dy0, (dL/dp for each argument), dL/dtimes)`` by the adjoint."""
    if is_zero(g):
        zero = np.zeros(np.shape(y0)) if np.ndim(y0) else 0.0
        return 0.0, 0.0, zero, zero_parts(args, _active(args, ode)), \
            None if times is None else np.zeros(np.shape(times))
    problem = _Problem(ys, ts, fun, t0, y0, args, times, ode, options, t1)
    g = problem.outputs_of(g)
    outputs = problem.ts
    active = _active(args, ode)
    size = sum(int(np.size(v)) for v, on in zip(args, active, strict=True) if on)
    stops = [k for k in range(len(outputs)) if np.any(g[k])]
    gtimes = np.zeros(len(outputs))
    for k in stops:
        gtimes[k] = float(g[k] @ problem.rhs(outputs[k], problem.ys[k]))
    steps = runge_kutta.adjoint(problem, g, t1)
    if steps is not None:  # (an explicit Runge-Kutta solve: the adjoint of its steps)
        a, gp = steps
        gp = np.zeros(size) + gp
    else:
        a, gp = _continuous(problem, g, stops, active, size)
    gt0 = -float(a @ problem.rhs(problem.t0, problem.y0))
    gy0 = a.reshape(problem.shape0) if problem.shape0 else float(a[0])
    return _arranged(problem, t0, times, gt0, gy0, unflattened(gp, args, active), gtimes)


def _continuous(problem, g, stops: list, active: tuple, size: int) -> tuple:
    """``(dL/dy0, dL/dp flat)`` by the continuous adjoint, solved backwards with SciPy."""
    n, outputs = problem.y0.size, problem.ts
    a, gp = np.zeros(n), np.zeros(size)
    points = [(problem.t0, problem.y0)] + [(outputs[k], problem.ys[k]) for k in stops]
    state = None  # the state on points[lo]..points[hi]: dense output of one recomputation
    for i in range(len(stops), 0, -1):
        k = stops[i - 1]
        a = a + g[k]
        if points[i][0] == points[i - 1][0]:
            continue
        if state is None or i - 1 < state[0]:  # (recompute the next _CHUNK intervals back)
            lo = max(i - _CHUNK, 0)
            state = (lo, problem.solve(problem.rhs, (points[lo][0], points[i][0]), points[lo][1],
                                       dense=True, first_step=problem.steps.get("rhs", np.inf)
                                       ).sol)
        a, gp = _backwards(problem, state[1], points[i - 1][0], points[i][0], a, gp, active, n)
    return a, gp


def _arranged(problem, t0, times, gt0, gy0, gargs: tuple, gtimes) -> tuple:
    """``(dL/dt0, dL/dt1, dL/dy0, dL/dargs, dL/dtimes)`` (or their tangents) from the initial
    time's, the outputs' and the rest: where the outputs are the solver's steps, their ends are
    the span's; for ``odeint`` the first output time is the initial time."""
    if times is None and t0 is not None:  # (solve_ivp without t_eval: the steps' ends move)
        return gt0 + gtimes[0], float(gtimes[-1]), gy0, gargs, None
    if t0 is None:  # (odeint: the first output time is the initial time)
        gtimes[0] += gt0
        return 0.0, 0.0, gy0, gargs, gtimes.reshape(np.shape(times))
    gtimes = problem.unsorted(gtimes)
    return gt0, 0.0, gy0, gargs, gtimes.reshape(np.shape(times)) if np.ndim(times) \
        else float(gtimes[0])


def _backwards(problem, forward, start_t, end_t, a, gp, active, n):
    """The adjoint from ``end_t`` back to ``start_t``, the state ``forward(t)`` there (the
    dense output of its recomputation)."""
    def adjoint(t, z):
        y = forward(t)
        vy, vp = problem.vjp(t, y, z[:n])
        flat = [np.ravel(asarray(p, float)) for p, on in zip(vp, active, strict=True) if on]
        return -np.concatenate([np.ravel(asarray(vy, float))] + flat)

    z = problem.solve(adjoint, (end_t, start_t), np.concatenate([a, gp]),
                      first_step=problem.steps.get("adjoint", np.inf)).y[:, -1]
    return z[:n], z[n:]


def ode_adjoint_tangent(dg, dt0, dt1, dy0, dargs, dtimes, g, ys, ts, fun, t0, t1, y0,
                        args: tuple, times, ode, options: dict) -> tuple:
    """Tangent of ``ode_adjoint`` (forward over reverse: Hessian-vector products) as ``y0`` and
    the arguments move (the span's ends and the output times held): the state's tangent ``v``
    solves the variational equation forwards (dense output), then the adjoint ``a`` and its
    tangent ``da`` run backwards together, ``da' = -J_y^T da - h_y``, ``dgp' = -J_p^T da -
    h_p``, where ``(h_y, h_p)`` is the tangent of ``(J_y^T a, J_p^T a)`` along ``(v, dp)``,
    ``a`` held (``f``'s second derivatives against ``a``), ``da`` jumping by the cotangent's
    tangent at each output."""
    def moving(d):  # (a zero tangent of a list of times is a list of zeros)
        return d is not None and not is_zero(d) and bool(np.any(asarray(d, float)))

    if moving(dt0) or moving(dt1) or moving(dtimes):
        raise NotImplementedError("second derivatives of an ODE's solution in its span's ends "
                                  "or its output times are not taken yet: hold them constant")
    problem = _Problem(ys, ts, fun, t0, y0, args, times, ode, options, t1)
    n, outputs = problem.y0.size, problem.ts
    at = 0 if problem.tfirst else 1
    G = problem.outputs_of(g) if not is_zero(g) else np.zeros((len(outputs), n))
    dG = problem.outputs_of(dg) if moving(dg) else np.zeros((len(outputs), n))
    if not isinstance(dargs, (tuple, list)):  # (no argument moves)
        dargs = (None,) * len(args)
    dargs = tuple(d if moving(d) else None for d in dargs)
    active = _active(args, ode)
    shapes = [np.shape(a) for a, on in zip(args, active, strict=True) if on]
    size = sum(int(np.prod(s)) for s in shapes)
    shape = problem.shape0
    v0 = np.ravel(asarray(dy0, float)).copy() if moving(dy0) else np.zeros(n)

    def as_state(flat):
        return flat.reshape(shape) if shape else float(flat[0])

    def flat_args(parts):
        return [np.ravel(np.zeros(s) if p is None else asarray(p, float))
                for p, s in zip([p for p, on in zip(parts, active, strict=True) if on], shapes,
                                strict=True)]

    def pushed(t, y, v):  # J_y v + J_p dp
        return np.ravel(asarray(problem.jvp(t, y, as_state(v), dargs), float))

    last = outputs[-1] if len(outputs) else problem.t0
    if last != problem.t0:  # the state and its tangent, forwards, as dense output
        def augmented(t, z):
            return np.concatenate([problem.rhs(t, z[:n]), pushed(t, z[:n], z[n:])])

        forward = problem.solve(augmented, (problem.t0, last), np.concatenate([problem.y0, v0]),
                                dense=True).sol
    else:
        def forward(t):
            return np.concatenate([problem.y0, v0])

    def backwards(t, z):
        yv = forward(t)
        y, v = yv[:n], yv[n:]
        a, da = z[:n], z[n + size:2 * n + size]
        vy, vp = problem.vjp(t, y, a)
        wy, wp = problem.vjp(t, y, da)
        hy, *hp = ode.second(fun, t, (as_state(y), *args), as_state(a),
                             (as_state(v), *dargs), at)
        hy = np.zeros(n) if hy is None else np.ravel(asarray(hy, float))
        return -np.concatenate([np.ravel(asarray(vy, float)), *flat_args(vp),
                                np.ravel(asarray(wy, float)) + hy,
                                *(x + y for x, y in zip(flat_args(wp), flat_args(hp),
                                                        strict=True))])

    z = np.zeros(2 * (n + size))
    gtimes, dgtimes = np.zeros(len(outputs)), np.zeros(len(outputs))
    stops = [k for k in range(len(outputs)) if np.any(G[k]) or np.any(dG[k])]
    points = [problem.t0] + [outputs[k] for k in stops]
    for i in range(len(stops), 0, -1):
        k = stops[i - 1]
        z[:n] += G[k]
        z[n + size:2 * n + size] += dG[k]
        y_k, v_k = problem.ys[k], forward(outputs[k])[n:]
        slope = problem.rhs(outputs[k], y_k)
        gtimes[k] = float(G[k] @ slope)
        dgtimes[k] = float(dG[k] @ slope + G[k] @ pushed(outputs[k], y_k, v_k))
        if points[i] != points[i - 1]:
            z = problem.solve(backwards, (points[i], points[i - 1]), z).y[:, -1]
    a, da, dgp = z[:n], z[n + size:2 * n + size], z[2 * n + size:]
    slope0 = problem.rhs(problem.t0, problem.y0)
    dgt0 = -float(da @ slope0 + a @ pushed(problem.t0, problem.y0, v0))
    dgy0 = da.reshape(shape) if shape else float(da[0])
    return _arranged(problem, t0, times, dgt0, dgy0, unflattened(dgp, args, active), dgtimes)


def ode_tangent(dt0, dt1, dy0, dargs, dtimes, ys, ts, fun, t0, t1, y0, args: tuple, times,
                ode, options: dict):
    """The solution's tangent at its outputs: the variational equation solved beside ``y``."""
    problem = _Problem(ys, ts, fun, t0, y0, args, times, ode, options, t1)
    n, outputs = problem.y0.size, problem.ts
    if not isinstance(dargs, (tuple, list)):  # (no argument moves)
        dargs = (None,) * len(args)
    dargs = tuple(None if d is None or is_zero(d) else d for d in dargs)
    moving = lambda d: d is not None and not is_zero(d)  # noqa: E731
    if times is None and t0 is not None:  # (solve_ivp without t_eval)
        dtimes = step_times_tangent(dt0, dt1, outputs)
    elif t0 is None and moving(dtimes):  # (odeint: the initial time is the first output)
        dt0 = float(np.ravel(asarray(dtimes, float))[0])
    v0 = np.zeros(n) if not moving(dy0) else np.ravel(asarray(dy0, float)).copy()
    if moving(dt0):
        v0 = v0 - float(dt0) * problem.rhs(problem.t0, problem.y0)
    out = np.zeros((len(outputs), n))
    if np.any(v0) or any(d is not None for d in dargs):
        shape = problem.shape0

        def augmented(t, z):
            y, v = z[:n], z[n:]
            dy = problem.jvp(t, y, v.reshape(shape) if shape else float(v[0]), dargs)
            return np.concatenate([problem.rhs(t, y), np.ravel(asarray(dy, float))])

        if len(outputs) and outputs[-1] != problem.t0:
            new = np.r_[True, np.diff(outputs) != 0]  # (a time read twice: solved for once)
            solved = problem.solve(augmented, (problem.t0, outputs[-1]),
                                   np.concatenate([problem.y0, v0]), t_eval=outputs[new])
            out = solved.y[n:].T[np.cumsum(new) - 1]
        else:
            out[:] = v0
    if moving(dtimes):
        dtimes = np.ravel(asarray(dtimes, float))
        if problem.order is not None:
            dtimes = dtimes[problem.order]
        for k, d in enumerate(dtimes):
            if d:
                out[k] = out[k] + d * problem.rhs(outputs[k], problem.ys[k])
    if problem.layout == "dense":
        return problem.unsorted(out).T.reshape(np.shape(ys))
    return out.T if options.get("layout") == "ivp" else out.reshape(np.shape(ys))
