"""The discrete adjoint of an explicit Runge-Kutta solve (``solve_ivp``'s RK45 and RK23): the
exact derivative of the steps the solver took, pulled back step by step.

A step from ``y_n`` over ``h`` evaluates stages ``k_i = f(t_n + c_i h, Y_i)``, ``Y_i = y_n + h
sum_j a_ij k_j``, and moves to ``y_{n+1} = y_n + h sum_i b_i k_i``; an output inside it is the
step's interpolant ``y_n + h K^T P p(s)``, ``p(s) = (s, s^2, ...)`` (SciPy's dense output, so
``t_eval`` and ``sol.sol(t)`` read it). Its adjoint takes the cotangent ``ybar`` of ``y_{n+1}``
(and the outputs' cotangents on ``K``) back through the stages in reverse: ``kbar_i = h b_i ybar
+ ...``, ``(Ybar_i, pbar_i) = vjp of f at stage i with kbar_i``, ``kbar_j += h a_ij Ybar_i``,
``ybar_n = ybar + sum_i Ybar_i``, ``pbar`` summed into the parameters' gradient. The step sizes
are the solver's, held: they are chosen by its error estimate, whose derivative only moves the
result within the tolerances.

Compared with the continuous adjoint (runtime/odes.py, solved backwards with SciPy), it needs no
interpolation of the state, takes no steps of its own (a step per output interval at least) and
is the derivative of the numbers the solver returned. The steps are recorded as the solve
takes them (``rt.ode_steps``: the ``method=`` a differentiated ``solve_ivp`` call is given is a
subclass of the user's that records each step), or found by running the solver's class again
from ``y0`` where none was recorded (the same steps: SciPy's solvers are deterministic). Of the
states at the start of the steps at most ``max(outputs, 16)`` are kept, every ``stride``-th
step's once there are more (the steps between recomputed from the one kept), so the memory is
that of the outputs, not of every step.

Used for RK45 and RK23 given by name or class (other methods: the continuous adjoint); returns
None where it does not apply, and the caller falls back.
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import asarray


def tableau(method):
    """``(A, B, C, P)`` of an explicit Runge-Kutta method SciPy names ``method`` (RK45, RK23,
    or their class), None for another."""
    try:
        from scipy.integrate import RK23, RK45
    except ImportError:
        return None
    kind = {"RK45": RK45, "RK23": RK23}.get(method, method) if isinstance(method, str) \
        else method
    if kind not in (RK45, RK23):
        return None
    A, B, C, P = (np.asarray(getattr(kind, name, None), float) for name in "ABCP")
    s = len(B)
    if A.ndim != 2 or A.shape[0] != s or A.shape[1] not in (s - 1, s) or C.shape != (s,) \
            or P.ndim != 2 or P.shape[0] != s + 1:
        return None
    A = np.pad(A, ((0, 0), (0, s - A.shape[1])))  # (RK45's has no column for its last stage)
    return kind, A, B, C, P


class _Steps:
    """The solver's steps: their times, and the states at their starts, every ``stride``-th
    kept (at most ``budget``: the stride doubles when more are taken)."""

    def __init__(self, t0: float, y0, budget: int):
        self.times = [t0]
        self.kept = {0: y0}
        self.stride, self.budget = 1, budget

    def add(self, t: float, y) -> None:
        self.times.append(t)
        n = len(self.times) - 1
        if n % self.stride == 0:
            self.kept[n] = y
            if len(self.kept) > self.budget:
                self.stride *= 2
                self.kept = {i: v for i, v in self.kept.items() if i % self.stride == 0}
        self.last = y


class StepRecord:
    """What ``ode_steps(method, t_eval)`` gives a differentiated ``solve_ivp`` call: its
    ``method`` (RK45 and RK23 as a class of their own that records the steps it takes, another
    method as given), and the steps once solved, which the adjoint then takes instead of
    running the solver again."""

    def __init__(self, method, outputs):
        found = tableau(method)
        self.steps: _Steps | None = None
        self.finished = False
        if found is None:
            self.method = method
            return
        budget = 1 << 62 if outputs is None else max(int(np.size(outputs)), 16)
        record = self

        class Recorded(found[0]):  # (solve_ivp runs it as it runs the class it names)
            def __init__(self, fun, t0, y0, t_bound, **options):
                super().__init__(fun, t0, y0, t_bound, **options)
                record.steps = _Steps(float(t0), np.array(self.y, float), budget)
                record.steps.last = record.steps.kept[0]
                record.finished = False

            def step(self):
                message = super().step()
                if self.status != "failed":
                    record.steps.add(float(self.t), np.array(self.y, float))
                record.finished = self.status == "finished"
                return message

        Recorded.__name__ = Recorded.__qualname__ = found[0].__name__
        self.method = Recorded


def ode_steps(method="RK45", outputs=None) -> StepRecord:
    """A record of the steps the solve about to run takes (its ``method=``); ``outputs``: its
    ``t_eval`` (None: every step is an output, every state kept)."""
    return StepRecord(method, outputs)


def _run(problem, kind, t1: float, budget: int) -> _Steps:
    """The solver run again from ``y0`` as ``solve_ivp`` ran it, its steps recorded."""
    options = problem.options
    solver = kind(problem.rhs, problem.t0, problem.y0.copy(), float(t1),
                  rtol=options.get("rtol", 1e-3), atol=options.get("atol", 1e-6),
                  **options.get("solver", {}))
    steps = _Steps(problem.t0, problem.y0.copy(), budget)
    steps.last = problem.y0
    while solver.status == "running":
        message = solver.step()
        if solver.status == "failed":
            raise RuntimeError(f"the ODE's derivative: the solver failed ({message})")
        steps.add(float(solver.t), np.array(solver.y, float))
    return steps


def adjoint(problem, g, t1, budget: int | None = None):
    """``(dL/dy0, dL/dp flat)`` of a solve with outputs' cotangents ``g`` (``(K, n)``, in the
    problem's output order) by the discrete adjoint; None where it does not apply."""
    found = tableau(problem.options.get("method", "RK45"))
    if found is None or problem.layout not in ("ivp", "dense") or t1 is None:
        return None
    kind, A, B, C, P = found
    s, n = len(B), problem.y0.size
    record = problem.options.get("steps")
    if budget is None and isinstance(record, StepRecord) and record.finished \
            and record.steps.times[-1] == float(t1):  # (the steps the solve took, recorded)
        steps = record.steps
    else:
        steps = _run(problem, kind, t1, budget or max(len(problem.ts), 16))
    times = np.asarray(steps.times)
    count = len(times) - 1
    at_steps = problem.at_steps
    if at_steps and len(times) != len(problem.ts):
        return None  # (a run that took other steps: the continuous adjoint)
    # cotangents of the states at the steps' ends (as many as the outputs: a dict)
    points = dict(enumerate(g)) if at_steps else {}
    outputs: dict[int, list] = {}  # a step -> the outputs inside it (read by its interpolant)
    if not at_steps and count:
        direction = 1.0 if times[-1] >= times[0] else -1.0
        inside = np.clip(np.searchsorted(direction * times[1:], direction * problem.ts,
                                         side="left"), 0, count - 1)
        for k, m in enumerate(inside):
            if np.any(g[k]):
                outputs.setdefault(int(m), []).append(k)
                points[int(m)] = points.get(int(m), 0.0) + g[k]  # (the interpolant's y_n)
    powers = np.arange(1, P.shape[1] + 1)
    dense: dict[int, np.ndarray] = {}

    def on_stages(m: int):
        """The cotangents step ``m``'s outputs put on its stages (``K``, the end's slope
        last), None if it has none: made when first asked for, kept for the step before."""
        if m not in outputs:
            return None
        if m not in dense:
            h = times[m + 1] - times[m]
            sigma = np.array([(problem.ts[k] - times[m]) / h if h else 0.0
                              for k in outputs[m]])
            weights = h * (sigma[:, None] ** powers) @ P.T  # (outputs, s + 1)
            dense.clear()
            dense[m] = weights.T @ g[outputs[m]]
        return dense[m]

    pull = problem.halves()
    gp = 0.0
    ybar = points.get(count, 0.0) + np.zeros(n)  # the cotangent of the state at step m's end
    last = on_stages(count - 1) if count else None
    if last is not None and np.any(last[s]):  # (the last step's end slope)
        back, parts = pull.backward(*pull.forward(times[count], steps.last), last[s])
        ybar, gp = ybar + back, gp + parts
    segment: dict[int, np.ndarray] = {}
    for m in range(count - 1, -1, -1):
        if m not in segment:
            segment = _recomputed(problem, steps, m, A, B, C)
        y, t, h = segment[m], times[m], times[m + 1] - times[m]
        hA = h * A
        K, taped = np.zeros((s, n)), []
        for i in range(s):  # the stages, taped
            value, tape = pull.forward(t + C[i] * h, y + hA[i, :i] @ K[:i] if i else y)
            K[i] = value if type(value) is np.ndarray and value.shape == (n,) \
                else np.ravel(asarray(value, float))
            taped.append((value, tape))
        kbar = h * np.outer(B, ybar)
        here = on_stages(m)
        if here is not None:
            kbar += here[:s]
        before = on_stages(m - 1) if m else None
        if before is not None:  # (the previous step's end slope is this step's first stage)
            kbar[0] += before[s]
        ybar = ybar + points.get(m, 0.0)
        for i in range(s - 1, -1, -1):  # back through the stages
            if not np.any(kbar[i]):
                continue
            back, parts = pull.backward(*taped[i], kbar[i])
            ybar, gp = ybar + back, gp + parts
            if i:
                kbar[:i] += np.outer(hA[i, :i], back)
    return ybar, gp


def _recomputed(problem, steps: _Steps, m: int, A, B, C) -> dict:
    """The states at the starts of the steps from the last one kept before step ``m`` up to
    ``m``: the kept one stepped forwards with the solver's step sizes."""
    start = m - m % steps.stride
    y = steps.kept[start]
    out = {start: y}
    s = len(B)
    for j in range(start, m):
        t, h = steps.times[j], steps.times[j + 1] - steps.times[j]
        K = np.zeros((s, y.size))
        for i in range(s):
            K[i] = problem.rhs(t + C[i] * h, y + h * (A[i, :i] @ K[:i]) if i else y)
        y = y + h * (B @ K)
        out[j + 1] = y
    return out
