"""vjp and jacobian: pullbacks and Jacobians from a function's forward/backward pair."""

import math
import sys

import numpy as np
import pytest

from tests.util import make
from transpiler import grad, jacobian, vjp
from transpiler.checking import numeric_grad

LOOP = make("""
def f(x, W, n):
    y = np.tanh(W @ x)
    for i in range(n):
        y = y * 0.5 + np.sin(y)
    return y
""")
X = np.array([0.3, -0.2, 0.5])
W = np.arange(6.0).reshape(2, 3) * 0.1


def _fd_jacobian(f, args, wrt):
    """Central-difference Jacobian of f w.r.t. args[wrt], shape out.shape + in.shape."""
    out = np.asarray(f(*args))
    rows = []
    for i in range(out.size):
        def component(*a, i=i):
            return float(np.asarray(f(*a)).flat[i])
        rows.append(numeric_grad(component, args, wrt))
    return np.stack(rows).reshape(out.shape + np.shape(args[wrt]))


def test_pullback_gives_one_gradient_per_argument_and_can_be_called_again():
    value, pullback = vjp(LOOP, X, W, 3)
    np.testing.assert_allclose(value, LOOP(X, W, 3))
    u = np.array([0.7, -1.3])
    for _ in range(2):  # the second call runs the forward sweep again (the tape is spent)
        gx, gw, gn = pullback(u)
        assert gn is None  # an int argument has no gradient
        np.testing.assert_allclose(gx, u @ _fd_jacobian(LOOP, (X, W, 3), 0), rtol=1e-6)
        np.testing.assert_allclose(gw, np.tensordot(u, _fd_jacobian(LOOP, (X, W, 3), 1), 1),
                                   rtol=1e-6)


def test_pullback_of_a_tuple_result_takes_a_tuple_seed():
    g = make("def g(a, b):\n    return a * b, np.sum(np.sin(a))\n")
    a, b = np.array([0.5, -1.0]), 3.0
    value, pullback = vjp(g, a, b)
    np.testing.assert_allclose(value[0], a * b)
    ga, gb = pullback((np.array([1.0, 2.0]), 0.5))
    np.testing.assert_allclose(ga, np.array([1.0, 2.0]) * b + 0.5 * np.cos(a))
    assert gb == pytest.approx(1.0 * a[0] + 2.0 * a[1])
    assert type(gb) is float


@pytest.mark.parametrize("wrt", [0, 1])
def test_jacobian_matches_finite_differences(wrt):
    J = jacobian(LOOP, wrt=wrt)(X, W, 2)
    assert J.shape == (2,) + np.shape((X, W)[wrt])
    np.testing.assert_allclose(J, _fd_jacobian(LOOP, (X, W, 2), wrt), rtol=1e-6, atol=1e-9)


def test_jacobian_of_a_scalar_function_is_its_gradient():
    f = make("def f(x):\n    return np.sum(x ** 3)\n")
    np.testing.assert_allclose(jacobian(f)(X), grad(f)(X))


def test_jacobian_by_name_by_argnums_and_in_blocks():
    np.testing.assert_allclose(jacobian(LOOP, wrt="x")(X, W, 2), jacobian(LOOP)(X, W, 2))
    np.testing.assert_allclose(jacobian(LOOP, argnums=1)(X, W, 2), jacobian(LOOP, 1)(X, W, 2))
    jx, jw = jacobian(LOOP, wrt=("x", "W"))(X, W, 2)
    np.testing.assert_allclose(jx, _fd_jacobian(LOOP, (X, W, 2), 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jw, _fd_jacobian(LOOP, (X, W, 2), 1), rtol=1e-6, atol=1e-9)
    with pytest.raises(TypeError, match="not both"):
        jacobian(LOOP, wrt=0, argnums=1)


def test_hessian_and_hvp_by_differentiating_the_gradient():
    from transpiler import hessian, hvp

    f = make("""
def f(x, W):
    y = np.tanh(W @ x)
    s = np.sum(y * y)
    if s > 10.0:
        s = s * 0.5
    return s + np.sum(np.sin(x) * x) + np.dot(x, x) ** 2
""")
    H = hessian(f)(X, W)
    assert H.shape == (3, 3)
    g = grad(f)
    eps = 1e-6
    fd = np.stack([(g(X + eps * e, W) - g(X - eps * e, W)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-12)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(hvp(f)(X, W, v), H @ v, rtol=1e-12, atol=1e-12)
    s = make("def s(a, b):\n    return a * a * b + math.sin(a)\n")
    assert hessian(s)(0.5, 2.0) == pytest.approx(2.0 * 2.0 - math.sin(0.5), rel=1e-12)


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("wrt", [0, 1])
def test_jacobian_in_either_mode(mode, wrt):
    J = jacobian(LOOP, wrt=wrt, mode=mode)(X, W, 2)
    np.testing.assert_allclose(J, _fd_jacobian(LOOP, (X, W, 2), wrt), rtol=1e-6, atol=1e-9)


def test_jacobian_auto_takes_forward_mode_for_few_inputs(monkeypatch):
    module = sys.modules["transpiler.vjp"]  # (transpiler.vjp is also the function)

    used = []
    real = module._forward_jacobian
    monkeypatch.setattr(module, "_forward_jacobian",
                        lambda *a: used.append("forward") or real(*a))
    f = make("def f(s):\n    return np.sin(s * np.arange(5.0))\n")
    np.testing.assert_allclose(jacobian(f)(0.3), np.arange(5.0) * np.cos(0.3 * np.arange(5.0)))
    assert used == ["forward"]  # 1 input, 5 outputs: one forward sweep
    g = make("def g(x):\n    return np.sum(x * x)\n")
    np.testing.assert_allclose(jacobian(g)(np.arange(4.0)), 2.0 * np.arange(4.0))
    assert used == ["forward"]  # 4 inputs, 1 output: reverse
    with pytest.raises(ValueError, match="mode must be"):
        jacobian(g, mode="sideways")
