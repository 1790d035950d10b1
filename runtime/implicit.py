"""What a solver's result is written as so that its derivative is the implicit function
theorem's (passes/higher_order.py): ``x = brentq(f, a, b, args=(p,))`` becomes the solver's
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
