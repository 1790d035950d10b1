"""What a solver's result is written as so that its derivative is the implicit function
theorem's (passes/solvers.py): ``x = brentq(f, a, b, args=(p,))`` becomes the solver's
root, held constant, passed through ``implicit_root(root, f(root, p), slope)``. Its value is the
root, unchanged; its derivative is the residual's divided by ``-slope``, ``slope = dF/dx`` at
the root: ``dx/dp = -F_p / F_x``, the residual's own derivative ``F_p`` taken by the compiler
like any call of the user's function. A system's (``fsolve``, ``root``) is
``implicit_system(root, F(root, p), J)`` with ``J = dF/dx``: ``dx/dp = -J^-1 F_p``, one solve
with ``J^T`` in reverse mode, with ``J`` in forward mode.
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import asarray, is_zero, zero_parts


def implicit_root(root, residual, slope):
    """``root`` itself, once ``residual``, ``F(root, p)``, is zero there to the solver's
    tolerance: a point the solver did not converge to (``newton`` with ``disp=False``) has no
    derivative by the theorem, and raises."""
    step = np.abs(asarray(residual, float)) / np.maximum(np.abs(asarray(slope, float)), 1e-300)
    if np.any(step > 1e-6 * (1.0 + np.abs(asarray(root, float)))):
        raise RuntimeError("the solver's result is not a root of its function (|f(x) / f'(x)| "
                           f"up to {np.max(step):.3g}): the implicit function theorem gives the "
                           "derivative of a root, not of where the solver stopped; tighten its "
                           "tolerance or raise maxiter")
    return root


def _checked(slope):
    slope = asarray(slope)
    if not np.all(np.isfinite(slope)) or np.any(slope == 0):
        raise ZeroDivisionError("the root is not simple (dF/dx is zero, or not finite, at it): "
                                "the implicit function theorem gives it no derivative")
    return slope


def implicit_root_adjoint(g, slope):
    """The residual's gradient: ``-g / slope`` (elementwise, for a vectorized root)."""
    if is_zero(g):
        return g
    out = -asarray(g) / _checked(slope)
    return out if np.ndim(out) else float(out)


def implicit_root_tangent(t, slope):
    """The root's tangent: ``-dF / slope``, ``dF`` the residual's tangent at the held root."""
    if is_zero(t):
        return t
    out = -asarray(t) / _checked(slope)
    return out if np.ndim(out) else float(out)


def _solved(jacobian, rhs, transposed: bool):
    jacobian = asarray(jacobian, float)
    try:
        return np.linalg.solve(jacobian.T if transposed else jacobian, rhs)
    except np.linalg.LinAlgError as e:
        raise np.linalg.LinAlgError("the root is not regular (dF/dx, the Jacobian at it, is "
                                    "singular): the implicit function theorem gives it no "
                                    "derivative") from e


def implicit_system(root, residual, jacobian):
    """``root`` itself, once ``residual`` is zero there to the solver's tolerance (the Newton
    step ``J^-1 F`` it leaves is small): a point the solver stopped at without converging
    raises."""
    step = _solved(jacobian, np.ravel(asarray(residual, float)), False)
    scale = 1.0 + np.max(np.abs(asarray(root, float)), initial=0.0)
    if np.max(np.abs(step), initial=0.0) > 1e-6 * scale:
        raise RuntimeError("the solver's result is not a root of its function (the Newton step "
                           f"|J^-1 F| left is {np.max(np.abs(step)):.3g}): the implicit function "
                           "theorem gives the derivative of a root, not of where the solver "
                           "stopped; tighten its tolerance or check that it converged")
    return root


def implicit_system_adjoint(g, jacobian):
    """The residual's gradient: ``-J^-T g``."""
    if is_zero(g):
        return g
    g = asarray(g, float)
    return -_solved(jacobian, np.ravel(g), True).reshape(np.shape(g))


def implicit_system_tangent(t, jacobian):
    """The root's tangent: ``-J^-1 dF``."""
    if is_zero(t):
        return t
    t = asarray(t, float)
    return -_solved(jacobian, np.ravel(t), False).reshape(np.shape(t))


# --- minima: x* = argmin f(x, p), where grad_x f(x*, p) = 0 ---

def implicit_minimum(minimum, fun, args: tuple, stationary, bounds=None):
    """``minimum`` itself (``minimize(fun, x0, args=args).x``, ``minimize_scalar``'s), once
    no bound holds it: the theorem differentiates ``grad_x f = 0``, which a minimum pressed
    against a bound does not satisfy. ``stationary`` takes the objective's derivatives
    (transpiler/implicit.py: generated code passes it, the runtime never compiles)."""
    if bounds is not None:
        _free_of_bounds(minimum, bounds)
    return minimum


def _free_of_bounds(x, bounds) -> None:
    lower = getattr(bounds, "lb", None)
    if lower is not None:  # scipy.optimize.Bounds
        lower, upper = bounds.lb, bounds.ub
    else:
        pairs = np.asarray(bounds, dtype=object).reshape(-1, 2)
        lower = np.array([-np.inf if lo is None else lo for lo, _ in pairs], dtype=float)
        upper = np.array([np.inf if hi is None else hi for _, hi in pairs], dtype=float)
    x = np.ravel(asarray(x, float))
    lower = np.broadcast_to(np.asarray(lower, float), x.shape)
    upper = np.broadcast_to(np.asarray(upper, float), x.shape)
    gap = 1e-8 * (1.0 + np.abs(x))
    held = (np.abs(x - lower) <= gap) | (np.abs(upper - x) <= gap)
    if np.any(held):
        which = np.flatnonzero(held)[:8].tolist()
        raise ValueError(f"the minimum lies on a bound (components {which}): the implicit "
                         "function theorem differentiates a minimum where the gradient is "
                         "zero, and an active bound is a constraint; widen the bounds, or "
                         "differentiate the constrained problem by hand")


def _minimum_solve(minimum, fun, args, stationary, rhs):
    """``H^-1 rhs`` with ``H`` the objective's Hessian at the minimum: dense from Hessian-vector
    products for a few unknowns, else MINRES on them; first the check that the point is a
    minimum to the solver's tolerance (the Newton step ``H^-1 grad f`` it leaves is small)."""
    x = asarray(minimum, float)
    shape, n = np.shape(x), int(np.size(x))

    def product(v):
        return np.ravel(asarray(stationary.hvp(fun, minimum if not shape else x,
                                               args, v.reshape(shape) if shape else float(v[0])),
                                float))

    gradient = np.ravel(asarray(stationary.gradient(fun, minimum, args), float))
    both = np.stack([gradient, np.ravel(asarray(rhs, float))], axis=1)
    if n <= 64:
        hessian = np.stack([product(e) for e in np.eye(n)], axis=1) if n else np.zeros((0, 0))
        solved = _solved((hessian + hessian.T) / 2.0, both, False)
    else:
        from scipy.sparse.linalg import LinearOperator, minres

        operator = LinearOperator((n, n), matvec=product, dtype=float)
        columns = []
        for column in both.T:
            found, info = minres(operator, column, rtol=1e-12, maxiter=10 * n)
            if info != 0:
                raise np.linalg.LinAlgError("the minimum is not regular: MINRES on its Hessian "
                                            f"did not converge (info {info})")
            columns.append(found)
        solved = np.stack(columns, axis=1)
    step = np.max(np.abs(solved[:, 0]), initial=0.0)
    if step > 1e-4 * (1.0 + np.max(np.abs(x), initial=0.0)):
        raise RuntimeError("the optimizer's result is not a minimum of its objective to 1e-4 "
                           f"(the Newton step H^-1 grad f left is {step:.3g}): the implicit "
                           "function theorem gives the derivative of a minimum, not of where the "
                           "optimizer stopped; tighten its tolerance (gtol, xatol) or check that "
                           "it converged")
    return solved[:, 1].reshape(shape)


def implicit_minimum_adjoint(g, minimum, fun, args: tuple, stationary):
    """The arguments' gradients: ``-d/dp (grad_x f . w)``, ``w = H^-1 g``."""
    if is_zero(g):
        return zero_parts(args, stationary.active(args))
    w = _minimum_solve(minimum, fun, args, stationary, g)
    parts = stationary.mixed_vjp(fun, minimum, args, w if np.ndim(w) else float(w))
    return tuple(None if p is None else _negated(p) for p in parts)


def implicit_minimum_tangent(tangents, minimum, fun, args: tuple, stationary):
    """The minimum's tangent: ``-H^-1 d/dt grad_x f(x, p + t dp)``."""
    if not isinstance(tangents, (tuple, list)):  # (no argument moves)
        tangents = (None,) * len(args)
    tangents = tuple(None if t is None or is_zero(t) else t for t in tangents)
    moved = stationary.mixed_jvp(fun, minimum, args, tangents)
    if moved is None or is_zero(moved):
        return 0.0 if not np.ndim(minimum) else np.zeros(np.shape(minimum))
    out = -_minimum_solve(minimum, fun, args, stationary, moved)
    return out if np.ndim(out) else float(out)


def implicit_minimum_adjoint_tangent(dg, dminimum, dargs, g, minimum, fun, args: tuple,
                                     stationary) -> tuple:
    """Tangent of ``implicit_minimum_adjoint(g, minimum, fun, args, stationary)`` (forward over
    reverse): with ``H w = g``, the gradient ``-d/dp (grad_x f . w)`` moves by ``-(d/dp
    (grad_x f . dw) + T_p)``, where ``H dw = dg - T_x`` and ``(T_x, T_p)`` is the tangent of
    ``(H w, d/dp (grad_x f . w))`` as the minimum and the arguments move, ``w`` held (the
    objective's third derivatives, ``stationary.third``)."""
    if not isinstance(dargs, (tuple, list)):  # (no argument moves)
        dargs = (None,) * len(args)
    dargs = tuple(None if d is None or is_zero(d) else d for d in dargs)
    moving = dminimum is not None and not is_zero(dminimum)
    if is_zero(g) and (dg is None or is_zero(dg)):
        return (None,) * len(args)
    w = _minimum_solve(minimum, fun, args, stationary,
                       np.zeros(np.shape(minimum)) if is_zero(g) else g)
    w = w if np.ndim(w) else float(w)
    tx, tp = stationary.third(fun, minimum, args, w, dminimum if moving else None, dargs)
    rhs = np.zeros(np.shape(minimum)) if dg is None or is_zero(dg) else asarray(dg, float)
    if tx is not None:
        rhs = rhs - asarray(tx, float)
    dw = _minimum_solve(minimum, fun, args, stationary, rhs)
    parts = stationary.mixed_vjp(fun, minimum, args, dw if np.ndim(dw) else float(dw))
    out = []
    for part, more in zip(parts, tp, strict=True):
        if part is None and more is None:
            out.append(None)
        elif part is None or more is None:
            out.append(_negated(part if more is None else more))
        else:
            out.append(_negated(asarray(part) + asarray(more)))
    return tuple(out)


def _negated(part):
    out = -asarray(part)
    return out if np.ndim(out) else float(out)


# --- fixed points of a loop marked ``converged``: x* = step(x*, p) ---------------------------

def converged(marked):
    """``marked`` itself. ``for _ in converged(range(n)):`` or ``while converged(test):`` marks
    a loop as a fixed-point iteration ``x <- step(x, p)`` whose result the compiler
    differentiates by the implicit function theorem (transpiler/passes/converged.py), in O(1)
    memory in the iterations, instead of through every iteration; run as plain Python, it is
    the loop as written."""
    return marked


def fixed_point(state, step, args: tuple, fixed, names: tuple):
    """``state`` itself: what a loop marked ``converged`` stopped at, ``step(*state, *args)``'s
    fixed point (checked when differentiated). Its derivative is the implicit function
    theorem's on ``x = step(x, p)``: ``dx/dp = (I - J)^-1 dstep/dp``, ``J = dstep/dx``;
    ``fixed`` takes ``step``'s derivatives (transpiler/implicit.py: the runtime never
    compiles), ``names`` are the state's variables, for messages."""
    return state


class _Layout:
    """A loop's state (one value, or a tuple of them for several ``names``) as one vector of
    its differentiated parts (real numbers and float arrays; a counter is held)."""

    def __init__(self, state, active: tuple, names: tuple):
        self.several = len(names) > 1
        self.parts = list(state) if self.several else [state]
        self.active, self.names = active, names
        self.sizes = [sum(int(np.size(v)) for v in _items(p)) if on else 0
                      for p, on in zip(self.parts, active, strict=True)]
        self.n = sum(self.sizes)

    def flat(self, values) -> np.ndarray:
        """The differentiated parts of a state-like ``values`` (None or 0: zeros), raveled."""
        if not self.several and self.active[0] and not isinstance(self.parts[0], (list, tuple)) \
                and np.shape(values) == np.shape(self.parts[0]):
            return np.ravel(np.asarray(values, float))  # (the common case, kept cheap)
        values = list(values) if self.several else [values]
        pieces = [_flat_part(v, p) for v, p, on in zip(values, self.parts, self.active,
                                                       strict=True) if on]
        return np.concatenate(pieces) if pieces else np.zeros(0)

    def shaped(self, vector):
        """``vector`` back as a state-like value (zeros for the held parts)."""
        out, at = [], 0
        for part, on in zip(self.parts, self.active, strict=True):
            items = []
            for item in _items(part):
                if on:
                    piece = vector[at:at + int(np.size(item))].reshape(np.shape(item))
                    at += int(np.size(item))
                else:
                    piece = np.zeros(np.shape(item))
                items.append(piece if np.ndim(item) else float(piece))
            out.append(type(part)(items) if isinstance(part, (list, tuple)) else items[0])
        return tuple(out) if self.several else out[0]

    def unconverged(self, step_left: float, scale: float, kind: str) -> RuntimeError:
        if kind != "loop":
            return RuntimeError(
                "the solver's result is not a root of its function (the Newton step "
                f"|dF/dx^-1 F| left is {step_left:.3g}, relative to {scale:.3g}): the implicit "
                "function theorem gives the derivative of a root, not of where the solver "
                "stopped; tighten its tolerance or check that it converged")
        named = ", ".join(n for n, on in zip(self.names, self.active, strict=True) if on)
        return RuntimeError(
            f"the loop marked converged stopped where its state ({named}) is not a fixed point "
            f"of its body to 1e-6 (the Newton step (I - J)^-1 (step(x) - x) left is "
            f"{step_left:.3g}, relative to {scale:.3g}): the implicit function theorem gives "
            "the derivative of a fixed point, not of where the loop stopped; tighten its "
            "tolerance or raise its iteration count")


def _items(part) -> list:
    """A state part's values: its items for a list or tuple (of numbers and arrays)."""
    return list(part) if isinstance(part, (list, tuple)) else [part]


def _flat_part(value, part) -> np.ndarray:
    """``value`` (shaped like the state part ``part``; None or 0: zeros), raveled."""
    if value is None or is_zero(value):
        return np.zeros(sum(int(np.size(v)) for v in _items(part)))
    if isinstance(part, (list, tuple)):
        return np.concatenate([_flat_part(v, p) for v, p in zip(value, part, strict=True)])
    return np.broadcast_to(np.asarray(value, float), np.shape(part)).ravel()


def _singular(kind: str) -> Exception:
    if kind == "roots":
        return ZeroDivisionError("the root is not simple (dF/dx is zero, or not finite, at it): "
                                 "the implicit function theorem gives it no derivative")
    if kind == "root":
        return np.linalg.LinAlgError("the root is not regular (dF/dx, the Jacobian at it, is "
                                     "singular): the implicit function theorem gives it no "
                                     "derivative")
    return np.linalg.LinAlgError("I - J, J the loop body's Jacobian in its state, is singular "
                                 "at the fixed point: the implicit function theorem gives it "
                                 "no derivative")


def _fixed_solve(product, rhs: np.ndarray, n: int, dense, kind: str = "loop"):
    """``A^-1 rhs`` (``rhs`` one column or several), ``A`` given as ``product(v) = A v``, as
    the dense ``A`` itself or as its diagonal (a vector: elementwise roots); GMRES past 64
    unknowns (SciPy), else fixed-point sweeps."""
    if dense is not None and dense.ndim == 1:  # (a diagonal: a division)
        if not np.all(np.isfinite(dense)) or np.any(dense == 0.0):
            raise _singular(kind)
        return rhs / (dense if rhs.ndim == 1 else dense[:, None])
    if dense is not None:
        if dense.shape == (1, 1):  # (one unknown: a division)
            if dense[0, 0] == 0.0 or not np.isfinite(dense[0, 0]):
                raise _singular(kind)
            return rhs / dense[0, 0]
        try:
            return np.linalg.solve(dense, rhs)
        except np.linalg.LinAlgError as e:
            raise _singular(kind) from e
    columns = rhs.reshape(n, -1).T
    solved = []
    for column in columns:
        solved.append(_iterative(product, column, n))
    return np.stack(solved, axis=1).reshape(rhs.shape)


def _iterative(product, b: np.ndarray, n: int) -> np.ndarray:
    scale = np.max(np.abs(b), initial=0.0)
    if scale == 0.0:
        return np.zeros(n)
    try:
        from scipy.sparse.linalg import LinearOperator, gmres
    except ImportError:
        gmres = None
    if gmres is not None:
        operator = LinearOperator((n, n), matvec=product, dtype=float)
        try:
            x, info = gmres(operator, b, rtol=1e-12, atol=0.0, restart=min(n, 60),
                            maxiter=max(10, 2 * n))
        except TypeError:  # (SciPy before 1.12 calls rtol tol)
            x, info = gmres(operator, b, tol=1e-12, atol=0.0, restart=min(n, 60),
                            maxiter=max(10, 2 * n))
        if info == 0:
            return x
    # without SciPy (or where GMRES stalls): x <- b + (I - A) x, converging as the loop did
    x = b.copy()
    for _ in range(100000):
        change = b - product(x)
        x = x + change
        if np.max(np.abs(change)) <= 1e-13 * (scale + np.max(np.abs(x))):
            return x
    raise np.linalg.LinAlgError("the fixed point's linear system (I - J) did not converge")


def _fixed_linear(lin, layout: _Layout, transposed: bool, kind: str):
    """``I - J`` (``J`` built from ``n`` products with the body's derivative): dense for a few
    unknowns, its diagonal for elementwise roots (one product), else None (matrix-free); and
    for one unknown in reverse mode, the product's gradients in the arguments (``dstep/dp``,
    which the adjoint scales instead of pulling back once more)."""
    if kind == "roots" and layout.n > 1:  # (each unknown its own equation: J is diagonal)
        ones = layout.shaped(np.ones(layout.n))
        moved = lin.pull(ones)[0] if transposed else lin.push_state(ones)
        return 1.0 - layout.flat(moved), None
    if layout.n > 64:
        return None, None
    eye = np.eye(layout.n)
    if transposed:  # rows of J: v^T J for unit v (reverse mode)
        pulled = [lin.pull(layout.shaped(e)) for e in eye]
        rows = [layout.flat(state) for state, _ in pulled]
        jacobian = np.stack(rows) if rows else np.zeros((0, 0))
        return eye - jacobian, pulled[0][1] if layout.n == 1 else None
    columns = [layout.flat(lin.push_state(layout.shaped(e))) for e in eye]  # J v (forward)
    jacobian = np.stack(columns, axis=1) if columns else np.zeros((0, 0))
    return eye - jacobian, None


def _check_fixed(lin, layout: _Layout, state, dense, kind: str) -> None:
    """Raise unless ``state`` is a fixed point of the body to 1e-6: the Newton step it leaves,
    ``(I - J)^-1 (step(x) - x)``, is small."""
    x = layout.flat(state)
    residual = layout.flat(lin.value) - x
    if dense is not None:
        left = _fixed_solve(None, residual, layout.n, dense, kind)
    else:
        left = _fixed_solve(lambda v: v - layout.flat(lin.push_state(layout.shaped(v))),
                            residual, layout.n, None, kind)
    step_left = np.max(np.abs(left), initial=0.0)
    scale = 1.0 + np.max(np.abs(x), initial=0.0)
    if not step_left <= 1e-6 * scale:
        raise layout.unconverged(step_left, scale, kind)


def _kind_of(fixed) -> str:
    """What ``fixed`` takes the derivatives of: ``"loop"`` (a fixed point ``x = step(x)``),
    ``"root"`` (the root of a system, ``x - F(x)``'s fixed point) or ``"roots"`` (elementwise
    roots: ``J`` diagonal)."""
    return getattr(fixed, "kind", "loop")


def fixed_point_adjoint(g, state, step, args: tuple, fixed, names: tuple):
    """The arguments' gradients: ``(dstep/dp)^T w`` with ``(I - J)^T w = g``."""
    gs = g if len(names) > 1 and isinstance(g, (tuple, list)) else (g,)
    if all(v is None or is_zero(v) for v in gs):
        return tuple(_zero_like(a) for a in args)
    kind = _kind_of(fixed)
    lin = fixed.linearized(step, state, args, len(names))
    layout = _Layout(state, lin.active_state, names)
    dense, scalar = _fixed_linear(lin, layout, True, kind)
    _check_fixed(lin, layout, state, None if dense is None else dense.T, kind)
    rhs = layout.flat(g)
    if dense is not None:
        w = _fixed_solve(None, rhs, layout.n, dense.T, kind)
    else:
        w = _fixed_solve(lambda v: v - layout.flat(lin.pull(layout.shaped(v))[0]), rhs,
                         layout.n, None, kind)
    if scalar is not None:  # (one unknown: the pulled-back unit, scaled)
        parts = tuple(None if p is None else _scaled(p, float(w[0])) for p in scalar)
    else:
        parts = lin.pull(layout.shaped(w))[1]
    return tuple(_zero_like(a) if p is None else p for p, a in zip(parts, args, strict=True))


def _scaled(part, factor: float):
    out = asarray(part) * factor
    return out if np.ndim(out) else float(out)


def _zero_like(value):
    """The zero gradient of a real number or float array (an argument the body does not
    differentiate in), None for data."""
    if isinstance(value, (float, np.floating)):
        return 0.0
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return np.zeros(value.shape, value.dtype)
    return None


def fixed_point_tangent(tangents, state, step, args: tuple, fixed, names: tuple):
    """The fixed point's tangent: ``(I - J)^-1 (dstep/dp) dp``."""
    if not isinstance(tangents, (tuple, list)):  # (no argument moves)
        tangents = (None,) * len(args)
    tangents = tuple(None if t is None or is_zero(t) else t for t in tangents)
    kind = _kind_of(fixed)
    lin = fixed.linearized(step, state, args, len(names))
    layout = _Layout(state, lin.active_state, names)
    moved = lin.push_args(tangents)
    if moved is None:
        return layout.shaped(np.zeros(layout.n))
    dense = _fixed_linear(lin, layout, False, kind)[0]
    _check_fixed(lin, layout, state, dense, kind)
    rhs = layout.flat(moved)
    if dense is not None:
        out = _fixed_solve(None, rhs, layout.n, dense, kind)
    else:
        out = _fixed_solve(lambda v: v - layout.flat(lin.push_state(layout.shaped(v))), rhs,
                           layout.n, None, kind)
    return layout.shaped(out)


def fixed_point_adjoint_tangent(dg, dstate, dargs, g, state, step, args: tuple, fixed,
                                names: tuple) -> tuple:
    """Tangent of ``fixed_point_adjoint(g, state, step, args, fixed, names)`` (forward over
    reverse): with ``(I - J)^T w = g``, the gradient ``dstep/dp^T w`` moves by ``dstep/dp^T dw
    + hp``, where ``(I - J)^T dw = dg + hx`` and ``(hx, hp)`` is the tangent of ``(J^T w,
    dstep/dp^T w)`` as the state and the arguments move, ``w`` held (the body's second
    derivatives, ``fixed.second``)."""
    count, kind = len(names), _kind_of(fixed)
    lin = fixed.linearized(step, state, args, count)
    layout = _Layout(state, lin.active_state, names)
    dense = _fixed_linear(lin, layout, True, kind)[0]

    def solved(rhs):
        if dense is not None:
            return _fixed_solve(None, rhs, layout.n, dense.T, kind)
        return _fixed_solve(lambda v: v - layout.flat(lin.pull(layout.shaped(v))[0]), rhs,
                            layout.n, None, kind)

    w = layout.shaped(solved(layout.flat(g)))
    if not isinstance(dargs, (tuple, list)):  # (no argument moves)
        dargs = (None,) * len(args)
    dargs = tuple(None if d is None or is_zero(d) else d for d in dargs)
    moving = dstate is not None and not is_zero(dstate) and not (
        isinstance(dstate, (tuple, list)) and all(v is None or is_zero(v) for v in dstate))
    hx, hp = fixed.second(step, state, args, count, w, dstate if moving else None, dargs)
    dw = solved(layout.flat(dg) + layout.flat(hx if count > 1 else hx[0]))
    parts = lin.pull(layout.shaped(dw))[1]
    out = []
    for part, more, arg in zip(parts, hp, args, strict=True):
        if part is None and more is None:
            out.append(_zero_like(arg))
        elif part is None or more is None:
            out.append(part if more is None else more)
        else:
            out.append(asarray(part) + asarray(more) if np.ndim(part) or np.ndim(more)
                       else float(part) + float(more))
    return tuple(out)


# --- roots of F(x, p) = 0 (scipy.optimize's root finders): x - F(x, p)'s fixed point ---------

def root_of(root, f, args: tuple, roots):
    """``root`` itself: a solver's root of ``f(x, *args) = 0`` (checked when differentiated).
    Its derivative is the implicit function theorem's, ``dx/dp = -(dF/dx)^-1 dF/dp``: that of
    the fixed point of ``x - F(x, p)``, taken by the same solves (``roots`` takes ``F``'s
    derivatives, transpiler/implicit.py; its ``kind`` says whether each unknown has its own
    equation, ``"roots"``, or they form a system, ``"root"``)."""
    return root


def root_of_adjoint(g, root, f, args: tuple, roots):
    """The arguments' gradients: ``-(dF/dp)^T w`` with ``(dF/dx)^T w = g``."""
    return fixed_point_adjoint(g, root, f, args, roots, ("x",))


def root_of_tangent(tangents, root, f, args: tuple, roots):
    """The root's tangent: ``-(dF/dx)^-1 (dF/dp) dp``."""
    return fixed_point_tangent(tangents, root, f, args, roots, ("x",))


def root_of_adjoint_tangent(dg, droot, dargs, g, root, f, args: tuple, roots) -> tuple:
    """Tangent of ``root_of_adjoint`` (forward over reverse): ``F``'s second derivatives
    against ``w``, as ``fixed_point_adjoint_tangent`` takes the body's."""
    return fixed_point_adjoint_tangent(dg, droot, dargs, g, root, f, args, roots, ("x",))
