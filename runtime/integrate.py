"""An integral's derivative by differentiation under the integral sign (Leibniz's rule):

    I(a, b, p) = integral_a^b f(t, p) w(t) dt
    dI = f(b, p) w(b) db - f(a, p) w(a) da + integral_a^b (df/dp . dp) w(t) dt

``x = quad(f, a, b, args=(p,))[0]`` is written ``_q = rt.stop_gradient(quad(f, a, b,
args=(p,)))`` and ``x = rt.integral(_q[0], f, a, b, (p,), None, under_integral, options)``
(passes/solvers.py): its value is SciPy's, unchanged; its derivative integrates the integrand's
own derivative in its arguments with the same quadrature (``quad``, or ``quad_vec`` for a vector
of them) at the same tolerances, the integrand's vector-Jacobian and Jacobian-vector products at
each point taken by ``integrand`` (transpiler/implicit.py: the runtime never compiles). A limit
that is infinite has no derivative (the integrand vanishes there). A ``weight="cos"``/``"sin"``
integral is differentiated in its frequency ``wvar`` too (``d/dw cos(w t) = -t sin(w t)``); the
other weights (``alg``, ``cauchy``) hold their ``wvar`` and limits, which they depend on, and a
derivative in those raises.
"""

from __future__ import annotations

import math

import numpy as np

from runtime.arrays import asarray, is_zero, unflattened, zero_parts

_FOURIER = {"cos": (np.cos, "sin", -1.0), "sin": (np.sin, "cos", 1.0)}  # w, w' as weight, sign


def integral(value, fun, a, b, args: tuple, wvar, integrand, options: dict):
    """``value``, the integral SciPy computed: its derivative is Leibniz's (the adjoints
    below)."""
    return value


def _weight(options: dict, t, wvar):
    weight = options.get("weight")
    if weight is None:
        return 1.0
    if weight in _FOURIER:
        return _FOURIER[weight][0](wvar * t)
    raise ValueError(f"the derivative of a quad(..., weight={weight!r}) integral in its limits "
                     "is not taken: the weight depends on them; write the weight into the "
                     "integrand, or hold the limits constant")


def _quadrature(options: dict, fun, a, b, wvar=None, weight="same"):
    """``integral_a^b fun(t) dt`` (an array for an array-valued ``fun``) by the user's
    quadrature at the user's tolerances; ``weight``: the user's weight unless given."""
    from scipy import integrate

    weight = options.get("weight") if weight == "same" else weight
    epsabs, epsrel = options.get("epsabs", 1.49e-8), options.get("epsrel", 1.49e-8)
    limit, points = options.get("limit", 50), options.get("points")
    probe = np.asarray(fun(next((float(v) for v in (a, b) if math.isfinite(v)), 0.0)))
    if weight is None and probe.ndim == 0 and options.get("kind") == "quad":
        return integrate.quad(lambda t: float(fun(t)), a, b, epsabs=epsabs, epsrel=epsrel,
                              limit=limit, points=points)[0]
    if weight is not None:  # (quad's weights: each component on its own)
        flat = [integrate.quad(lambda t, i=i: float(np.ravel(fun(t))[i]), a, b, weight=weight,
                               wvar=wvar, epsabs=epsabs, epsrel=epsrel, limit=limit)[0]
                for i in range(probe.size)]
        return np.reshape(flat, probe.shape) if probe.ndim else flat[0]
    return integrate.quad_vec(fun, a, b, epsabs=epsabs, epsrel=max(epsrel, 1e-14),
                              norm="max", limit=max(limit, 10_000), points=points)[0]


def integral_limit_adjoint(g, fun, limit, args: tuple, wvar, options: dict, sign: float,
                           integrand=None):
    """The gradient of a limit: ``sign * g . f(limit, p) w(limit)`` (``sign`` -1 for the lower
    limit); 0 for an infinite one. (``integrand`` takes the derivatives its tangent needs.)"""
    if is_zero(g) or not math.isfinite(limit):
        return 0.0
    value = asarray(fun(limit, *args), float) * _weight(options, limit, wvar)
    return float(sign * np.sum(asarray(g, float) * value))


def integral_adjoint(g, fun, a, b, args: tuple, wvar, integrand, options: dict) -> tuple:
    """The arguments' gradients: ``integral_a^b grad_p (g . f(t, p)) w(t) dt``, all of them
    one vector-valued quadrature."""
    active = integrand.active(args)
    if is_zero(g) or not any(active):
        return zero_parts(args, active)
    g = asarray(g, float)
    g = float(g) if g.ndim == 0 else g

    def stacked(t):
        parts = integrand.vjp(fun, t, args, g)
        return np.concatenate([np.ravel(asarray(p, float)) for p, on in
                               zip(parts, active, strict=True) if on])

    total = np.atleast_1d(_quadrature({**options, "kind": "quad_vec"}, stacked, a, b, wvar))
    return unflattened(total, args, active)


def integral_weight_adjoint(g, fun, a, b, args: tuple, wvar, options: dict):
    """The gradient of a ``cos``/``sin`` weight's frequency: ``g . integral t f(t) w'(wt)``."""
    if is_zero(g):
        return 0.0
    return float(np.sum(asarray(g, float) * _frequency_derivative(fun, a, b, args, wvar,
                                                                  options)))


def _frequency_derivative(fun, a, b, args, wvar, options):
    weight = options.get("weight")
    if weight not in _FOURIER:
        raise ValueError(f"the derivative of a quad(..., weight={weight!r}) integral in wvar is "
                         "not taken: only weight='cos' and 'sin' are differentiated in it; "
                         "write the weight into the integrand, or hold wvar constant")
    _, other, sign = _FOURIER[weight]
    return _quadrature(options, lambda t: sign * t * asarray(fun(t, *args), float), a, b, wvar,
                       weight=other)


def integral_tangent(da, db, dargs, dwvar, fun, a, b, args: tuple, wvar, integrand,
                     options: dict):
    """The integral's tangent: ``f(b) w(b) db - f(a) w(a) da + integral (df/dp . dp) w dt``
    (and the frequency's, for a ``cos``/``sin`` weight)."""
    total = 0.0
    for limit, tangent, sign in ((a, da, -1.0), (b, db, 1.0)):
        if tangent is not None and not is_zero(tangent) and math.isfinite(limit):
            total = total + sign * float(tangent) * asarray(fun(limit, *args), float) \
                * _weight(options, limit, wvar)
    if not isinstance(dargs, (tuple, list)):  # (no argument moves)
        dargs = (None,) * len(args)
    dargs = tuple(None if t is None or is_zero(t) else t for t in dargs)
    active = integrand.active(args)
    if any(t is not None and on for t, on in zip(dargs, active, strict=True)):
        total = total + _quadrature(options, lambda t: asarray(
            integrand.jvp(fun, t, args, dargs), float), a, b, wvar)
    if dwvar is not None and not is_zero(dwvar):
        total = total + float(dwvar) * _frequency_derivative(fun, a, b, args, wvar, options)
    return total if np.ndim(total) else float(total)


# --- second derivatives (forward over reverse): the tangents of the adjoints above ----------

def _second_order(options: dict) -> None:
    """Raise where second derivatives are not taken: a weighted integral, and an integrand
    with a kink that moves (passes/solvers.py marks it: the derivative of its derivative jumps
    there, a term no point sees)."""
    if options.get("weight") is not None:
        raise NotImplementedError(f"second derivatives of a quad(..., weight="
                                  f"{options['weight']!r}) integral are not taken yet: write "
                                  "the weight into the integrand")
    if options.get("kinked"):
        raise NotImplementedError("second derivatives of an integral whose integrand bends "
                                  "(abs, maximum, clip) at a point that moves with the "
                                  "differentiated values are not taken: its derivative jumps "
                                  "there; split the integral at the kink, quad(f, a, c) + "
                                  "quad(f, c, b)")


def _moving(tangent) -> bool:
    return tangent is not None and not is_zero(tangent)


def _argument_tangents(dargs, args: tuple) -> tuple:
    if not isinstance(dargs, (tuple, list)):  # (no argument moves)
        return (None,) * len(args)
    return tuple(t if _moving(t) else None for t in dargs)


def integral_limit_adjoint_tangent(dg, dlimit, dargs, g, fun, limit, args: tuple, wvar,
                                   options: dict, sign: float, integrand):
    """Tangent of ``integral_limit_adjoint``: ``sign (dg . f(L) + g . (f_t dL + f_p dp))``."""
    if not math.isfinite(limit):
        return 0.0
    _second_order(options)
    total = 0.0
    if _moving(dg):
        total = np.sum(asarray(dg, float) * asarray(fun(limit, *args), float))
    dargs = _argument_tangents(dargs, args)
    moved = _moving(dlimit) or any(t is not None for t in dargs)
    if moved and not is_zero(g):
        change = integrand.jvp(fun, limit, args, dargs,
                               dt=float(dlimit) if _moving(dlimit) else None)
        total = total + np.sum(asarray(g, float) * asarray(change, float))
    return float(sign * total)


def integral_adjoint_tangent(dg, da, db, dargs, g, fun, a, b, args: tuple, wvar, integrand,
                             options: dict) -> tuple:
    """Tangent of ``integral_adjoint``: ``integral grad_p (dg . f) dt`` + ``integral (d/dh
    grad_p (g . f(t, p + h dp))) dt`` (``f``'s second derivatives against ``g``) +
    ``grad_p (g . f)`` at the limits times their tangents."""
    _second_order(options)
    active = integrand.active(args)
    dargs = _argument_tangents(dargs, args)
    parts = [None] * len(args)

    def add(more):
        for i, part in enumerate(more):
            if part is not None:
                parts[i] = part if parts[i] is None else asarray(parts[i]) + asarray(part)

    if _moving(dg):
        add(integral_adjoint(dg, fun, a, b, args, wvar, integrand, options))
    if not is_zero(g):
        g = asarray(g, float)
        g = float(g) if g.ndim == 0 else g
        if any(t is not None and on for t, on in zip(dargs, active, strict=True)):
            shapes = [np.shape(v) for v, on in zip(args, active, strict=True) if on]

            def stacked(t):
                pieces = integrand.second(fun, t, args, g, dargs)
                return np.concatenate([
                    np.ravel(np.zeros(shape) if p is None else asarray(p, float))
                    for p, shape in zip([p for p, on in zip(pieces, active, strict=True)
                                         if on], shapes, strict=True)])

            add(unflattened(np.atleast_1d(_quadrature({**options, "kind": "quad_vec"}, stacked,
                                                      a, b, wvar)), args, active))
        for limit, tangent, sign in ((a, da, -1.0), (b, db, 1.0)):
            if _moving(tangent) and math.isfinite(limit):
                at_limit = integrand.vjp(fun, limit, args, g)
                add(tuple(None if p is None else sign * float(tangent) * asarray(p, float)
                          for p in at_limit))
    return tuple(None if p is None else (p if np.ndim(p) else float(p)) for p in parts)
