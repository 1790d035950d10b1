"""Unit tests of the runtime helpers that generated code calls."""

import subprocess
import sys

import numpy as np
import pytest

import runtime as rt


@pytest.mark.parametrize("g_shape,like_shape", [
    ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((4, 2, 3), (2, 1)),
    ((2, 3), ()), ((5, 1, 3), (1, 3)),
])
def test_unbroadcast_sums_broadcast_axes(g_shape, like_shape):
    rng = np.random.default_rng(0)
    g = rng.normal(size=g_shape)
    like = np.zeros(like_shape)
    out = rt.unbroadcast(g, like)
    assert np.shape(out) == like_shape
    # <g, broadcast(v)> == <unbroadcast(g), v> for any v: the defining property
    v = rng.normal(size=like_shape)
    np.testing.assert_allclose(np.sum(g * np.broadcast_to(v, g_shape)), np.sum(out * v))


def test_unbroadcast_scalars_and_identity():
    assert rt.unbroadcast(2.5, 1.0) == 2.5
    assert rt.unbroadcast(np.ones(3), 1.0) == 3.0
    g = np.ones((2, 2))
    assert rt.unbroadcast(g, g) is g


@pytest.mark.parametrize("shape,axis,keepdims", [
    ((3, 4), None, False), ((3, 4), 0, False), ((3, 4), -1, True), ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), (-1, 0), True),
])
def test_unreduce_inverts_the_reduction_shape(shape, axis, keepdims):
    x = np.ones(shape)
    g = np.sum(x, axis=axis, keepdims=keepdims) * 2.0
    out = rt.unreduce(g, x, axis, keepdims)
    assert out.shape == shape
    np.testing.assert_allclose(out, x * np.sum(x, axis=axis, keepdims=True) * 2.0)


def test_seed_accepts_scalars_and_refuses_arrays():
    assert rt.seed(3.0) == 1.0
    assert rt.seed(np.float32(2.0)) == 1.0
    one = rt.seed(np.ones((1, 1), dtype=np.float32))
    assert one.shape == (1, 1) and one.dtype == np.float32
    with pytest.raises(TypeError, match=r"shape \(3,\)"):
        rt.seed(np.ones(3))
    with pytest.raises(TypeError, match="tuple"):
        rt.seed((1.0,))


def test_grad_like_mirrors_the_argument():
    x32 = np.ones((2, 2), dtype=np.float32)
    out = rt.grad_like(np.broadcast_to(2.0, (2, 2)), x32)
    assert out.dtype == np.float32 and out.flags.writeable and out.shape == (2, 2)
    assert type(rt.grad_like(np.float64(2.0), 1.0)) is float
    assert rt.grad_like(np.array(3.0), np.float32(1.0)).dtype == np.float32
    assert rt.zeros_like_grad(1.0) == 0.0
    assert rt.zeros_like_grad(np.ones(3, np.float32)).dtype == np.float32


def test_balanced_eq_splits_ties():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])
    z = np.maximum(x, y)
    np.testing.assert_allclose(rt.balanced_eq(x, z, y), [0.5, 1.0, 0.0])


def _numeric_vjp(f, x, g, eps=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        out[i] = np.sum(g * (f(xp) - f(xm))) / (2 * eps)
    return out


SHAPES = [((), (3,)), ((3,), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
          ((5, 2, 3), (3, 4)), ((2, 3), (4, 3, 5)), ((2, 2, 3), (2, 3, 4)), ((1, 2, 3), (4, 3, 2))]


CASES = [("dot", sa, sb) for sa, sb in SHAPES] + [
    ("matmul", sa, sb) for sa, sb in SHAPES if sa != () and sb != ()]


@pytest.mark.parametrize("op,sa,sb", CASES)
def test_dot_and_matmul_adjoints_match_finite_differences(op, sa, sb):
    f, adj_a, adj_b = {"dot": (np.dot, rt.dot_adjoint_a, rt.dot_adjoint_b),
                       "matmul": (np.matmul, rt.matmul_adjoint_a, rt.matmul_adjoint_b)}[op]
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    g = rng.normal(size=np.shape(f(a, b)))
    ga, gb = adj_a(g, a, b), adj_b(g, a, b)
    assert np.shape(ga) == sa and np.shape(gb) == sb
    np.testing.assert_allclose(ga, _numeric_vjp(lambda t: f(t, b), np.asarray(a), g), atol=1e-6)
    np.testing.assert_allclose(gb, _numeric_vjp(lambda t: f(a, t), np.asarray(b), g), atol=1e-6)


def test_runtime_never_imports_the_compiler():
    code = "import sys, runtime; assert not any(m.startswith('transpiler') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)
