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

from runtime.arrays import asarray, is_zero


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
        return (None,) * len(args)
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


def _negated(part):
    out = -asarray(part)
    return out if np.ndim(out) else float(out)
