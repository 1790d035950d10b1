"""User extensions: tangent templates, black_box functions with user-written VJPs/JVPs,
on_gradient hooks, stop_gradient and nondifferentiable in both modes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.util import make
from transpiler import (
    adjoint,
    black_box,
    check_grad,
    d,
    forward,
    grad,
    jvp,
    nondifferentiable,
    on_gradient,
    stop_gradient,
    tangent,
)
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, TANGENTS, RuleError


@pytest.fixture
def registered():
    """Keys registered by a test, removed afterwards."""
    keys = []
    yield keys
    for key in keys:
        ADJOINTS.pop(key, None)
        TANGENTS.pop(key, None)


def _softclip(x, scale):  # opaque to the compiler: its derivatives come from the user
    return scale * np.tanh(np.asarray(x) / scale)


def _softclip_vjp(ans, g, x, scale):
    t = ans / scale
    return g * (1.0 - t * t), g * (t + (1.0 - t * t) * -x / scale) if np.ndim(g) == 0 else \
        np.sum(g * (t + (1.0 - t * t) * -x / scale))


def _softclip_jvp(ans, args, tangents):
    (x, scale), (dx, dscale) = args, tangents
    t = ans / scale
    return dx * (1.0 - t * t) + dscale * (t - (1.0 - t * t) * x / scale)


def test_black_box_gradient_and_tangent_match_finite_differences(registered):
    registered.append(black_box(_softclip, vjp=_softclip_vjp, jvp=_softclip_jvp))
    f = make("def f(x, s):\n    return np.sum(softclip(x * x, s) * x)\n", softclip=_softclip)
    x, s = np.array([0.3, -1.2, 2.0]), 1.5
    check_grad(f, x, s, wrt=(0, 1))
    v = np.array([1.0, 0.5, -0.25])
    value, t = jvp(f, (x, s), (v, 0.3))
    h = 1e-6
    numeric = (f(x + h * v, s + h * 0.3) - f(x - h * v, s - h * 0.3)) / (2 * h)
    assert value == f(x, s) and t == pytest.approx(numeric, rel=1e-6)
    assert "softclip(" in grad(f).source and "_softclip_vjp(" in grad(f).source
    assert "_softclip_jvp(" in forward(f).source


def test_black_box_without_jvp_is_refused_in_forward_mode(registered):
    registered.append(black_box(_softclip, vjp=_softclip_vjp))
    f = make("def f(x):\n    return softclip(x, 2.0)\n", softclip=_softclip)
    assert grad(f)(0.5) == pytest.approx(1.0 - np.tanh(0.25) ** 2)
    with pytest.raises(Exception, match="no tangent") as info:
        jvp(f, (0.5,), (1.0,))
    assert "@tangent" in info.value.hint


def test_black_box_vjp_returning_none_gives_zero_and_a_wrong_count_is_refused(registered):
    def scaled(x, n):
        return x * n

    registered.append(black_box(scaled, vjp=lambda ans, g, x, n: (g * n, None)))
    f = make("def f(x, n):\n    return scaled(x, n)\n", scaled=scaled)
    assert grad(f, wrt=(0, 1))(2.0, 3.0) == (3.0, 0.0)

    def broken(x):
        return 2.0 * x

    registered.append(black_box(broken, vjp=lambda ans, g, x: (g, g)))
    h = make("def h(x):\n    return broken(x)\n", broken=broken)
    with pytest.raises(TypeError, match="must return a tuple of 1 gradients"):
        grad(h)(1.0)


def test_black_box_checks_its_functions_at_registration():
    def two(x, y):
        return x * y

    def short_vjp(ans, g):
        return g

    with pytest.raises(RuleError, match="must accept vjp") as info:
        black_box(two, vjp=short_vjp)
    assert f"{__file__}:" in str(info.value)
    with pytest.raises(RuleError, match="vjp=..., jvp=..."):
        black_box(two)
    with pytest.raises(RuleError, match="named parameters"):
        black_box(lambda *xs: xs[0], vjp=lambda ans, g, *xs: (g,))


def test_tangent_templates_are_checked_at_registration():
    def quad(x):
        return x * x

    with pytest.raises(RuleError, match="only writes d\\[ans\\]") as info:
        @tangent(quad)
        def tan_quad(ans, x):
            d[ans] = d[ans] * x
    assert f"{__file__}:" in str(info.value)
    with pytest.raises(RuleError, match="unknown name 'twice'"):
        @tangent(quad)
        def tan_quad_2(ans, x):
            d[ans] = twice(d[x])  # noqa: F821
    assert quad not in TANGENTS


def test_on_gradient_runs_the_hook_in_the_backward_sweep():
    seen = []

    def clip(g):
        seen.append(g.copy())
        return np.clip(g, -1.0, 1.0)

    f = make("def f(x):\n    y = on_gradient(x * 3.0, clip)\n    return np.sum(y * y)\n",
             on_gradient=on_gradient, clip=clip)
    x = np.array([0.01, 1.0, -2.0])
    g = grad(f)(x)
    np.testing.assert_allclose(seen[-1], 2.0 * 3.0 * x)  # the gradient reaching y
    np.testing.assert_allclose(g, 3.0 * np.clip(6.0 * x, -1.0, 1.0))
    np.testing.assert_allclose(f(x), np.sum(9.0 * x * x))  # the value is untouched
    _, t = jvp(f, (x,), (np.ones(3),))  # forward mode: tangents pass through
    assert t == pytest.approx(np.sum(18.0 * x))


def test_stop_gradient_and_nondifferentiable_in_forward_mode():
    f = make("def f(x):\n    return np.sum(x * stop_gradient(x))\n", stop_gradient=stop_gradient)
    x = np.array([0.5, -1.0])
    assert jvp(f, (x,), (np.ones(2),))[1] == pytest.approx(np.sum(x))
    np.testing.assert_allclose(grad(f)(x), x)

    @nondifferentiable
    def rounded(v):
        return np.round(v * 4.0) / 4.0

    try:
        g = make("def g(x):\n    return np.sum(rounded(x) * x)\n", rounded=rounded)
        assert jvp(g, (x,), (np.ones(2),))[1] == pytest.approx(np.sum(rounded(x)))
    finally:
        NONDIFF.discard(rounded)


def test_rules_for_a_function_of_the_users_own_module_replace_its_source(registered):
    module = make("""
        def softplus(x):
            return np.log(1.0 + np.exp(x))

        def loss(x):
            return np.sum(softplus(x) * x)
    """, name="loss")
    softplus = module.__globals__["softplus"]
    calls = []

    def logistic(x):
        calls.append(1)
        return 1.0 / (1.0 + np.exp(-x))

    @adjoint(softplus)
    def adj_softplus(ans, x):
        d[x] = d[ans] * logistic(x)

    @tangent(softplus)
    def tan_softplus(ans, x):
        d[ans] = d[x] * logistic(x)

    registered.append(softplus)
    x = np.array([0.2, -0.7])
    expected = softplus(x) + x / (1.0 + np.exp(-x))
    np.testing.assert_allclose(grad(module)(x), expected)
    assert "logistic(" in grad(module).source and "softplus_vjp" not in grad(module).source
    assert jvp(module, (x,), (np.ones(2),))[1] == pytest.approx(np.sum(expected))
    assert calls  # the rules ran, not the compiled source of softplus
