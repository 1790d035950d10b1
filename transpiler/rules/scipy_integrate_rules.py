"""Adjoints and tangents of ``scipy.integrate``'s rules on samples: ``trapezoid``, ``simpson``,
``romb`` and ``cumulative_trapezoid``, registered only when SciPy is importable (``simpson``
from SciPy 1.11, whose rule for an even number of samples is Cartwright's; before it, the default
averaged two rules). Each is linear in the samples and, but for Simpson's, in the spacings:
their gradients are runtime/sampled.py's (the trapezoid's, reductions'). The integrals of
functions (``quad``...) and ODEs are rewritten by passes/solvers.py instead.
"""

import runtime as rt
from transpiler.rules.registry import REQUIREMENTS, Newer, adjoint, d, tangent

try:
    import scipy
    import scipy.integrate as si
except ImportError:  # no SciPy: no rules
    si = None

if si is not None:
    REQUIREMENTS["scipy.integrate.simpson"] = "SciPy 1.11"
    _CARTWRIGHT = tuple(int(p) for p in scipy.__version__.split(".")[:2]) >= (1, 11)
    _simpson = si.simpson if _CARTWRIGHT else Newer("scipy.integrate.simpson", "SciPy 1.11")

    @adjoint(si.trapezoid)
    def adj_si_trapezoid(ans, y, x=None, dx=1.0, axis=-1):
        gy, gx, gdx = rt.trapezoid_grads(d[ans], y, x, dx, axis)
        d[y] = gy
        d[x] = gx
        d[dx] = gdx

    @tangent(si.trapezoid)
    def tan_si_trapezoid(ans, y, x=None, dx=1.0, axis=-1):
        # bilinear in y and the spacing (x or dx; dx is ignored when x is given)
        d[ans] = si.trapezoid(d[y], x, dx, axis)
        if x is None:
            d[ans] = si.trapezoid(y, None, d[dx], axis)
        else:
            d[ans] = si.trapezoid(y, d[x], dx, axis)

    @adjoint(_simpson)
    def adj_simpson(ans, y, x=None, *, dx=1.0, axis=-1):
        gy, gx, gdx = rt.simpson_grads(d[ans], y, x, dx, axis)
        d[y] = gy
        d[x] = gx
        d[dx] = gdx

    @tangent(_simpson)
    def tan_simpson(ans, y, x=None, *, dx=1.0, axis=-1):
        # linear in y; the spacings enter its weights
        d[ans] = si.simpson(d[y], x=x, dx=dx, axis=axis)
        if x is None:
            d[ans] = rt.simpson_spacing_tangent(y, None, None, dx, d[dx], axis)
        else:
            d[ans] = rt.simpson_spacing_tangent(y, x, d[x], dx, 0.0, axis)

    @adjoint(si.romb)
    def adj_romb(ans, y, dx=1.0, axis=-1, show=False):
        gy, gdx = rt.romb_grads(d[ans], y, dx, axis)
        d[y] = gy
        d[dx] = gdx

    @tangent(si.romb)
    def tan_romb(ans, y, dx=1.0, axis=-1, show=False):
        # bilinear in y and dx
        d[ans] = si.romb(d[y], dx, axis)
        d[ans] = si.romb(y, d[dx], axis)

    @adjoint(si.cumulative_trapezoid)
    def adj_cumulative_trapezoid(ans, y, x=None, dx=1.0, axis=-1, initial=None):
        gy, gx, gdx, g_initial = rt.cumulative_trapezoid_grads(d[ans], y, x, dx, axis, initial)
        d[y] = gy
        d[x] = gx
        d[dx] = gdx
        d[initial] = g_initial

    @tangent(si.cumulative_trapezoid)
    def tan_cumulative_trapezoid(ans, y, x=None, dx=1.0, axis=-1, initial=None):
        # bilinear in y and the spacing; the initial value is the first output
        if initial is None:
            d[ans] = si.cumulative_trapezoid(d[y], x, dx, axis)
            if x is None:
                d[ans] = si.cumulative_trapezoid(y, None, d[dx], axis)
            else:
                d[ans] = si.cumulative_trapezoid(y, d[x], dx, axis)
        else:
            d[ans] = si.cumulative_trapezoid(d[y], x, dx, axis, d[initial])
            if x is None:
                d[ans] = si.cumulative_trapezoid(y, None, d[dx], axis, 0.0)
            else:
                d[ans] = si.cumulative_trapezoid(y, d[x], dx, axis, 0.0)
