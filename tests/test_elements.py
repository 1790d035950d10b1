"""Element-by-element loops (tests/corpus/elements.py) in every mode.

1. Reverse mode (``grad``, ``value_and_grad``) and forward mode (``jvp``) against central
   differences, forward against reverse by the dot-product test, optimized and not; ``hvp``
   against central differences of ``grad`` for a few; the caller's arrays are never modified
   and the gradients are fresh arrays of the arguments' shapes and dtypes.
2. Closed forms and cross-checks: cumulative sums and products, the Thomas solver against
   ``np.linalg.solve``, the element loops against their vectorised versions.
3. Repeated calls of one compiled gradient, float32 and integer arrays, complex arguments, and
   the constructs that are refused at the line of the write or give NumPy's numbers.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from tests.corpus import elements
from tests.corpus.elements import CASES, COMPLEX, HVP, REFUSED_OR_RIGHT
from tests.corpus.scientific import rosenbrock_checked
from transpiler import TranspileError, grad, hvp, jvp, value_and_grad, vjp

H = 1e-6
RTOL, ATOL = 1e-5, 1e-6

# No known wrong numbers: a case moves here, xfail(strict=True) with its reason, when one is
# found and not yet fixed.
REVERSE_BUGS: dict[str, str] = {}
VALUE_BUGS: dict[str, str] = {**REVERSE_BUGS}
# hvp runs the generated gradient in forward mode (a loop nested in a loop, whose tape is an
# entry of the outer one's, included)
HVP_REFUSED: dict[str, str] = {}


def _cases(names, bugs, **kwargs):
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=bugs[name],
                                                       **kwargs))
            if name in bugs else name for name in sorted(names)]


def _reverse_cases():
    return _cases(CASES, REVERSE_BUGS)


# --- helpers ----------------------------------------------------------------------------------

def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _copies(args) -> tuple:
    return tuple(_copy(a) for a in args)


def _call(fn, args) -> float:
    """The plain function on copies (some of the corpus writes into its arguments)."""
    return float(fn(*_copies(args)))


def _as64(args) -> tuple:
    return tuple(a.astype(float) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                 for a in args)


def _shifted(args, pos, delta) -> tuple:
    out = list(_copies(_as64(args)))
    out[pos] = out[pos] + delta
    return tuple(out)


def _numeric_grad(fn, args, pos):
    """Central differences of ``fn`` with respect to ``args[pos]``, in float64."""
    x = np.asarray(args[pos], dtype=float)
    g = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        step = H * max(1.0, abs(x[k]))
        e = np.zeros(x.shape)
        e[k] = step
        delta = e if np.ndim(args[pos]) else float(step)
        g[k] = (_call(fn, _shifted(args, pos, delta)) - _call(fn, _shifted(args, pos, -delta))) \
            / (2.0 * step)
    return g if np.ndim(args[pos]) else float(g)


def _numeric_jvp(fn, args, tangents) -> float:
    plus = tuple(a if t is None else a + H * t for a, t in zip(_as64(args), tangents, strict=True))
    minus = tuple(a if t is None else a - H * t for a, t in zip(_as64(args), tangents, strict=True))
    return (_call(fn, plus) - _call(fn, minus)) / (2.0 * H)


def _tangents(args, wrt, seed) -> tuple:
    rng = np.random.default_rng(seed)
    out = []
    for i, a in enumerate(args):
        if i not in wrt:
            out.append(None)
        elif isinstance(a, np.ndarray):
            out.append(rng.uniform(-1.0, 1.0, a.shape).astype(a.dtype))
        else:
            out.append(float(rng.uniform(-1.0, 1.0)))
    return tuple(out)


def _close(got, expected, rtol=RTOL, atol=ATOL, what=""):
    scale = 1.0 + float(np.max(np.abs(expected), initial=0.0))
    np.testing.assert_allclose(np.asarray(got, dtype=float), expected, rtol=rtol,
                               atol=atol * scale, err_msg=what)


def _check_unchanged(args, before):
    for a, b in zip(args, before, strict=True):
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)  # the caller's arrays are never written
        else:
            assert a == b


def _check_fresh(g, arg, args):
    """A gradient mirrors its argument and shares no memory with any argument."""
    if isinstance(arg, np.ndarray):
        assert isinstance(g, np.ndarray) and g.shape == arg.shape and g.dtype == arg.dtype, \
            (type(g), np.shape(g), getattr(g, "dtype", None), arg.shape, arg.dtype)
        assert g.flags.writeable
        assert not any(isinstance(a, np.ndarray) and np.shares_memory(g, a) for a in args)
    else:
        assert np.ndim(g) == 0


def _tolerance(args):
    """float32 arguments round every step: compare them loosely."""
    single = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args)
    return (2e-4, 2e-4) if single else (RTOL, ATOL)


# --- 1. every case in every mode --------------------------------------------------------------

@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("name", _reverse_cases())
def test_grad_matches_finite_differences(name, optimize):
    fn, args, wrt = CASES[name]
    before = _copies(args)
    grads = grad(fn, wrt=wrt, optimize=optimize)(*args)
    _check_unchanged(args, before)
    rtol, atol = _tolerance(args)
    for pos, g in zip(wrt, grads, strict=True):
        _check_fresh(g, args[pos], args)
        _close(g, _numeric_grad(fn, args, pos), rtol, atol, f"argument {pos}")


@pytest.mark.parametrize("name", _cases(CASES, VALUE_BUGS))
def test_value_and_grad_matches_the_function_and_grad(name):
    fn, args, wrt = CASES[name]
    before = _copies(args)
    value, grads = value_and_grad(fn, wrt=wrt)(*args)
    _check_unchanged(args, before)
    assert float(value) == pytest.approx(_call(fn, args), rel=1e-12, abs=1e-12)
    rtol, atol = _tolerance(args)
    for pos, g in zip(wrt, grads, strict=True):
        _check_fresh(g, args[pos], args)
        _close(g, _numeric_grad(fn, args, pos), rtol, atol, f"argument {pos}")
    for g, g2 in zip(grads, grad(fn, wrt=wrt)(*args), strict=True):
        np.testing.assert_allclose(g, g2, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_finite_differences(name, optimize):
    fn, args, wrt = CASES[name]
    tangents = _tangents(args, wrt, seed=len(name))
    before, tangents_before = _copies(args), _copies(tangents)
    value, tangent = jvp(fn, args, tangents, optimize=optimize)
    _check_unchanged(args, before)
    _check_unchanged(tangents, tangents_before)
    rtol, atol = _tolerance(args)
    assert float(value) == pytest.approx(_call(fn, args), rel=max(rtol * 1e-3, 1e-12),
                                         abs=1e-12)
    assert np.ndim(tangent) == 0
    expected = _numeric_jvp(fn, args, tangents)
    assert float(tangent) == pytest.approx(expected, rel=rtol, abs=atol * (1.0 + abs(expected)))


@pytest.mark.parametrize("name", _reverse_cases())
def test_forward_and_reverse_agree(name):
    """<grad f, v> == J v: tighter than finite differences can check."""
    fn, args, wrt = CASES[name]
    tangents = _tangents(args, wrt, seed=len(name) + 1)
    _, tangent = jvp(fn, args, tangents)
    grads = grad(fn, wrt=wrt)(*args)
    reverse = sum(float(np.sum(np.asarray(g, dtype=float) * tangents[pos]))
                  for pos, g in zip(wrt, grads, strict=True))
    single = _tolerance(args)[0] > RTOL
    assert float(tangent) == pytest.approx(reverse, rel=1e-5 if single else 1e-10, abs=1e-12)


@pytest.mark.parametrize("name", _cases(HVP, HVP_REFUSED, raises=TranspileError))
def test_hessian_vector_product_matches_differences_of_grad(name):
    fn, args, wrt = CASES[name]
    pos = next(p for p in wrt if isinstance(args[p], np.ndarray))
    v = np.random.default_rng(len(name)).uniform(-1.0, 1.0, args[pos].shape)
    before = _copies(args)
    product = hvp(fn, wrt=pos)(*args, v)
    _check_unchanged(args, before)
    g = grad(fn, wrt=pos)
    h = 1e-5
    expected = (g(*_shifted(args, pos, h * v)) - g(*_shifted(args, pos, -h * v))) / (2.0 * h)
    assert product.shape == args[pos].shape
    _close(product, expected, rtol=1e-6, atol=1e-7)


# --- 2. closed forms and cross-checks ---------------------------------------------------------

def test_cumulative_sum_gradient_is_the_reversed_cumulative_sum_of_the_weights():
    x, w = CASES["cumulative_sum"][1]
    expected = np.cumsum(w[::-1])[::-1]
    np.testing.assert_allclose(grad(elements.cumulative_sum)(x, w), expected, rtol=1e-14)
    v = np.linspace(-1.0, 1.0, len(x))
    _, tangent = jvp(elements.cumulative_sum, (x, w), (v, None))
    assert tangent == pytest.approx(np.sum(np.cumsum(v) * w), rel=1e-13)


def test_cumulative_product_gradient_closed_form():
    (x,) = CASES["cumulative_product"][1]
    p = np.cumprod(x)
    expected = np.array([np.sum(p[j:]) / x[j] for j in range(len(x))])
    np.testing.assert_allclose(grad(elements.cumulative_product)(x), expected, rtol=1e-12)


def test_recurrence_gradient_closed_form():
    x, a = CASES["recurrence"][1]
    n = len(x)
    y = np.array([sum(a ** (i - k) * x[k] for k in range(i + 1)) for i in range(n)])
    gx = np.array([sum(2.0 * y[i] * a ** (i - k) for i in range(k, n)) for k in range(n)])
    ga = sum(2.0 * y[i] * sum((i - k) * a ** (i - k - 1) * x[k] for k in range(i))
             for i in range(n))
    bx, ba = grad(elements.recurrence, wrt=(0, 1))(x, a)
    np.testing.assert_allclose(bx, gx, rtol=1e-12)
    assert ba == pytest.approx(ga, rel=1e-12)


def _tridiagonal(a, b, c):
    return np.diag(b) + np.diag(a[1:], -1) + np.diag(c[:-1], 1)


def test_thomas_solves_the_system_and_its_gradients_are_the_adjoint_solve():
    a, b, c, d = CASES["thomas"][1]
    A = _tridiagonal(a, b, c)
    x = np.linalg.solve(A, d)
    np.testing.assert_allclose(elements.thomas(a, b, c, d), x, rtol=1e-12, atol=1e-14)
    # loss = |x|^2 + x0 x[-1]: dloss/dx = 2 x + e0 x[-1] + e[-1] x0, then lambda = A^-T dloss/dx
    dx = 2.0 * x
    dx[0] += x[-1]
    dx[-1] += x[0]
    lam = np.linalg.solve(A.T, dx)
    ga, gb, gc, gd = grad(elements.thomas_loss, wrt=(0, 1, 2, 3))(a, b, c, d)
    np.testing.assert_allclose(gd, lam, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(gb, -lam * x, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(ga[1:], -lam[1:] * x[:-1], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(gc[:-1], -lam[:-1] * x[1:], rtol=1e-10, atol=1e-13)
    assert ga[0] == 0.0 and gc[-1] == 0.0  # entries the solver never reads
    # forward mode: dx = A^-1 (dd - dA x)
    da, db, dc, dd = _tangents((a, b, c, d), (0, 1, 2, 3), seed=5)
    _, tangent = jvp(elements.thomas, (a, b, c, d), (da, db, dc, dd))
    expected = np.linalg.solve(A, dd - _tridiagonal(da, db, dc) @ x)
    np.testing.assert_allclose(tangent, expected, rtol=1e-10, atol=1e-13)


def test_thomas_vector_jacobian_product():
    a, b, c, d = CASES["thomas"][1]
    A = _tridiagonal(a, b, c)
    value, pullback = vjp(elements.thomas, a, b, c, d)
    np.testing.assert_allclose(value, np.linalg.solve(A, d), rtol=1e-12, atol=1e-14)
    seed = np.linspace(-1.0, 1.0, len(d))
    np.testing.assert_allclose(pullback(seed)[3], np.linalg.solve(A.T, seed), rtol=1e-10,
                               atol=1e-13)


@pytest.mark.parametrize("name", ["heat_stencil", "slice_write_time_loop"])
def test_heat_loops_agree_with_the_vectorised_scheme(name):
    fn, (u, r), _ = CASES[name]
    assert _call(fn, (u, r)) == pytest.approx(elements.heat_vectorised(u, r), rel=1e-13)
    for got, want in zip(grad(fn, wrt=(0, 1))(u, r),
                         grad(elements.heat_vectorised, wrt=(0, 1))(u, r), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    v = np.cos(np.arange(len(u)))
    _, tangent = jvp(fn, (u, r), (v, 0.3))
    assert tangent == pytest.approx(jvp(elements.heat_vectorised, (u, r), (v, 0.3))[1],
                                    rel=1e-12)


def test_slice_heat_loop_hessian_vector_product_is_the_vectorised_one():
    u, r = CASES["slice_write_time_loop"][1]
    v = np.cos(np.arange(len(u)))
    np.testing.assert_allclose(hvp(elements.slice_write_time_loop)(u, r, v),
                               hvp(elements.heat_vectorised)(u, r, v), rtol=1e-10, atol=1e-13)


def _rosenbrock_gradient(x):
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


@pytest.mark.parametrize("name", ["rosenbrock_elements", "rosenbrock_scalar"])
def test_rosenbrock_loops_have_the_closed_form_gradient(name):
    fn, (x,), _ = CASES[name]
    assert _call(fn, (x,)) == pytest.approx(rosenbrock_checked(x), rel=1e-13)
    np.testing.assert_allclose(grad(fn)(x), _rosenbrock_gradient(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad(fn)(x), grad(rosenbrock_checked)(x), rtol=1e-12,
                               atol=1e-12)


def test_rosenbrock_gradient_loop_is_half_the_squared_closed_form():
    fn, (x,), _ = CASES["rosenbrock_gradient_loop"]
    g = _rosenbrock_gradient(x)
    assert _call(fn, (x,)) == pytest.approx(0.5 * np.sum(g * g), rel=1e-13)
    # its gradient is H g, H the Hessian of the Rosenbrock function
    h = np.zeros((len(x), len(x)))
    for i in range(len(x) - 1):
        h[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        h[i + 1, i + 1] += 200.0
        h[i, i + 1] = h[i + 1, i] = -400.0 * x[i]
    np.testing.assert_allclose(grad(fn)(x), h @ g, rtol=1e-11, atol=1e-9)
    np.testing.assert_allclose(hvp(rosenbrock_checked)(x, g), h @ g, rtol=1e-11, atol=1e-9)


def test_fill_loops_match_their_elementwise_gradients():
    x, a = CASES["fill_zeros"][1]
    y = a * x ** 2 + np.sin(x)
    bx, ba = grad(elements.fill_zeros, wrt=(0, 1))(x, a)
    np.testing.assert_allclose(bx, 2.0 * y * (2.0 * a * x + np.cos(x)), rtol=1e-13)
    assert ba == pytest.approx(np.sum(2.0 * y * x ** 2), rel=1e-13)
    (x,) = CASES["fill_empty"][1]
    np.testing.assert_allclose(grad(elements.fill_empty)(x),
                               np.exp(x) * x * (2.0 + x), rtol=1e-13)


def test_a_scalar_parameter_written_into_elements_gets_every_element_gradient():
    x, a = CASES["fill_scalar_parameter"][1]
    n = len(x)
    k = np.arange(1.0, n + 1.0)
    # sum(a x) + sum((a k)^2) + sum(a * a k)
    expected = np.sum(x) + 2.0 * a * np.sum(k * k) + 2.0 * a * np.sum(k)
    assert grad(elements.fill_scalar_parameter, wrt=1)(x, a) == pytest.approx(expected,
                                                                              rel=1e-13)
    assert isinstance(grad(elements.fill_scalar_parameter, wrt=1)(x, a), float)


# --- 3. repeated calls, writes into arguments, dtypes, refusals -------------------------------

@pytest.mark.parametrize("name", ["fill_zeros", "recurrence", "write_into_argument",
                                  "alias_of_argument", "thomas", "heat_stencil",
                                  "nonlinear_read_modify_write", "while_data_dependent"])
def test_one_compiled_gradient_called_again_and_again(name):
    """A call leaves nothing behind for the next: alternating inputs give the same numbers as
    the first calls, and writing into a returned gradient changes no later one."""
    fn, args, wrt = CASES[name]
    other = tuple(a * 0.9 + 0.05 if i in wrt else _copy(a) for i, a in enumerate(args))
    g = grad(fn, wrt=wrt)
    first, second = g(*args), g(*other)
    for _ in range(2):
        for ref, now in zip(first, g(*args), strict=True):
            np.testing.assert_array_equal(now, ref)
        for ref, now in zip(second, g(*other), strict=True):
            np.testing.assert_array_equal(now, ref)
        for now in g(*args):
            if isinstance(now, np.ndarray):
                now[...] = np.nan
    vg = value_and_grad(fn, wrt=wrt)
    for _ in range(2):
        value, grads = vg(*other)
        assert float(value) == pytest.approx(_call(fn, other), rel=1e-12, abs=1e-12)
        for ref, now in zip(second, grads, strict=True):
            np.testing.assert_allclose(now, ref, rtol=1e-12, atol=1e-14)


def test_writing_into_an_argument_leaves_the_callers_array_alone_in_every_mode():
    fn, (x, a), _ = CASES["write_into_argument"]
    x = x.copy()
    before = x.copy()
    expected = _call(fn, (x, a))
    value, (bx, ba) = value_and_grad(fn, wrt=(0, 1))(x, a)
    assert value == pytest.approx(expected, rel=1e-13)
    value, tangent = jvp(fn, (x, a), (np.ones_like(x), 0.5))
    assert value == pytest.approx(expected, rel=1e-13)
    hvp(fn)(x, a, np.ones_like(x))
    np.testing.assert_array_equal(x, before)
    assert tangent == pytest.approx(np.sum(bx) + 0.5 * ba, rel=1e-10)
    # Python itself writes into the array:
    fn(x, a)
    assert not np.array_equal(x, before)


@pytest.mark.parametrize("mode", ["grad", "value_and_grad", "jvp"])
def test_a_function_writing_into_its_argument_refuses_an_argument_sharing_its_memory(mode):
    x = CASES["write_into_first"][1][0].copy()
    before = x.copy()
    with pytest.raises(ValueError, match="shares memory with argument 'w'"):
        if mode == "jvp":
            jvp(elements.write_into_first, (x, x), (np.ones_like(x), None))
        else:
            {"grad": grad, "value_and_grad": value_and_grad}[mode](
                elements.write_into_first, wrt=(0, 1))(x, x[:])
    np.testing.assert_array_equal(x, before)


def test_vjp_of_a_function_writing_into_its_argument_is_refused_or_right():
    fn, (x, a), _ = CASES["write_into_argument"]
    x = x.copy()
    before = x.copy()
    try:
        value, pullback = vjp(fn, x, a)
    except (TranspileError, TypeError, ValueError) as e:
        assert "writes into" in str(e) or "write" in str(e), str(e)
    else:
        assert value == pytest.approx(_call(fn, (x, a)), rel=1e-13)
        for _ in range(2):
            bx, ba = pullback(2.0)
            gx, ga = grad(fn, wrt=(0, 1))(x, a)
            np.testing.assert_allclose(bx, 2.0 * gx, rtol=1e-13)
            assert ba == pytest.approx(2.0 * ga, rel=1e-13)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("name", ["float32_fill", "float32_recurrence"])
def test_float32_gradients_are_float32_and_match_float64(name):
    fn, args, wrt = CASES[name]
    g32 = grad(fn, wrt=wrt)(*args)
    g64 = grad(fn, wrt=wrt)(*_as64(args))
    for pos, a, b in zip(wrt, g32, g64, strict=True):
        assert a.dtype == np.float32 and b.dtype == np.float64
        assert a.shape == args[pos].shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    tangents = _tangents(args, wrt, seed=1)
    value, tangent = jvp(fn, args, tangents)
    assert np.asarray(value).dtype == np.float32
    _, tangent64 = jvp(fn, _as64(args), _as64(tangents))
    assert float(tangent) == pytest.approx(float(tangent64), rel=1e-5, abs=1e-5)


def test_an_int_array_written_in_a_loop_counts_but_is_not_differentiated():
    (x,) = CASES["int_array_written"][1]
    counts = np.arange(len(x)) * 2 + (x > 0.0)
    np.testing.assert_allclose(grad(elements.int_array_written)(x),
                               counts + 2.0 * x * counts, rtol=1e-14)
    x, k = CASES["int_argument_written"][1]
    k_before = k.copy()
    kk = (k + np.arange(len(k))) % len(x)
    expected = np.zeros(len(x))
    np.add.at(expected, kk, 2.0 * x[kk])
    np.testing.assert_allclose(grad(elements.int_argument_written)(x, k), expected, rtol=1e-14)
    np.testing.assert_array_equal(k, k_before)
    assert k.dtype == k_before.dtype
    with pytest.raises(TypeError, match="k"):
        grad(elements.int_argument_written, wrt=1)(x, k)


def test_repeated_indices_in_a_read_accumulate():
    (x,) = CASES["index_array_read_repeated"][1]
    idx = elements._IDX_REPEATED
    expected = np.zeros(len(x))
    np.add.at(expected, idx, 3.0 * x[idx] ** 2)
    np.testing.assert_allclose(grad(elements.index_array_read_repeated)(x), expected,
                               rtol=1e-13)


def test_complex_data_written_element_by_element_is_used_and_differentiated():
    fn, args = COMPLEX  # (its complex values reach the result only through np.real)
    before = _copies(args)
    x, c = args
    np.testing.assert_allclose(grad(fn)(*args), 2.0 * np.real(c), rtol=1e-15)
    v = np.linspace(0.5, 1.5, len(x))
    _, tangent = jvp(fn, args, (v, None))
    assert np.isclose(tangent, np.sum(v * 2.0 * np.real(c)), rtol=1e-14)
    # d/dc of sum(x * Re(2 c)): 2 x in the real direction, 0 in the imaginary (JAX's: 2 x)
    np.testing.assert_allclose(grad(fn, wrt=1)(*args), 2.0 * x + 0j, rtol=1e-15)
    _check_unchanged(args, before)


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    (offset,) = [i for i, line in enumerate(lines) if text in line]
    return start + offset


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(REFUSED_OR_RIGHT))
def test_a_refused_write_names_its_file_and_line_or_gives_numpys_numbers(name, mode):
    fn, args, wrt, write, says = REFUSED_OR_RIGHT[name]
    before = _copies(args)
    tangents = _tangents(args, wrt, seed=3)
    try:
        if mode == "reverse":
            result = grad(fn, wrt=wrt)(*args)
        else:
            result = jvp(fn, args, tangents)
    except TranspileError as e:
        assert e.filename == inspect.getsourcefile(fn), e.filename
        assert e.lineno == _line_of(fn, write), str(e)
        assert says in str(e), str(e)
    else:
        if mode == "reverse":
            for pos, g in zip(wrt, result, strict=True):
                _close(g, _numeric_grad(fn, args, pos))
        else:
            value, tangent = result
            assert float(value) == pytest.approx(_call(fn, args), rel=1e-12)
            assert float(tangent) == pytest.approx(_numeric_jvp(fn, args, tangents), rel=RTOL,
                                                   abs=ATOL)
    _check_unchanged(args, before)


def test_the_view_cases_are_numpy_code_that_runs():
    """What a refusal above stands for: plain NumPy reads the write through the view."""
    fn, args, *_ = REFUSED_OR_RIGHT["view_alias_read_after_write"]
    (x,) = args
    y = x * 2.0
    y[2] = x[0] ** 2
    assert _call(fn, args) == pytest.approx(np.sum(y[1:] ** 2) + np.sum(y), rel=1e-14)


GROUPED = """
def assembled(k):
    n = k.shape[0] + 1
    left, right = np.arange(n - 1), np.arange(1, n)
    nodes = np.concatenate([left, right, left, right])
    # the stiffness of each 1-D element, summed onto its two nodes' diagonal and off-diagonal
    diag = np.bincount(nodes[:2 * (n - 1)], weights=np.concatenate([k, k]), minlength=n)
    off = -k
    u = np.sin(np.arange(n) * 0.7)
    energy = np.sum(diag * u ** 2) + 2.0 * np.sum(off * u[:-1] * u[1:])
    per_pair = np.add.reduceat(k * k, [0, 2, 2, 3])
    running = np.add.accumulate(np.add.outer(k, k[:2]), axis=1)
    return energy + np.sum(per_pair * np.arange(4.0)) + np.sum(np.multiply.outer(k, k) ** 2) \\
        + np.add.reduce(running, axis=None, initial=1.0)
"""


def test_assembly_by_grouped_sums_matches_finite_differences():
    from tests.util import central_differences, make

    f = make(GROUPED, np=np)
    k = np.array([1.0, 0.5, 2.0, 1.5, 0.8])
    expected = central_differences(f, k)
    np.testing.assert_allclose(grad(f)(k), expected, rtol=1e-6, atol=1e-8)
    v = np.cos(np.arange(5.0))
    assert jvp(f, (k,), (v,))[1] == pytest.approx(expected @ v, rel=1e-6)
    h = 1e-5
    np.testing.assert_allclose(hvp(f)(k, v), (grad(f)(k + h * v) - grad(f)(k - h * v)) / (2 * h),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["gauss_seidel_sweeps", "grid_sweeps"])
def test_an_array_written_in_nested_loops_is_copied_once_before_the_outer_one(name):
    fn, args, _ = CASES[name]
    source = grad(fn).source_for(*args)
    primal = source.split("# grad of")[0]
    # (one private copy of what the loops write, made before them, or none for a new array:
    # not one per start of the inner loop, which would cost the whole array each time)
    assert primal.count("rt.owned(") <= 1, source
    assert "rt.owned(" not in primal.split("for ")[-1], source
    adjoint = source.split("# grad of", 1)[1]
    for line in adjoint.splitlines():
        if "rt.owned(" in line:  # (the gradients' copies: before the outermost loop)
            assert len(line) - len(line.lstrip()) == 4, source
