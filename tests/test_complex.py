"""Complex numbers inside real functions (rules/complex_rules.py): the convention, functions
written as users write them, checked against finite differences in every mode, what is refused,
and a walk over every rule-table case with a complex argument (right, or refused at its line:
never a real rule given a complex value)."""

from __future__ import annotations

import ast
import re
import warnings

import numpy as np
import pytest

from tests.rule_specs import case_seed, make_args
from tests.test_rules import CASES
from tests.util import central_differences, make, run_readme_block
from transpiler import TranspileError, grad, hessian, hvp, jvp, value_and_grad, vjp
from transpiler.checking import numeric_grad
from transpiler.errors import NoRuleError

# --- functions written as users write them ---------------------------------------------------

USER = """
def transfer_fit(p, w, measured):
    k, tau, zeta = p[0], p[1], p[2]
    s = 1j * w
    H = k / (tau * tau * s * s + 2.0 * zeta * tau * s + 1.0)
    return np.sum(np.abs(H - measured) ** 2)

def band_power(x):
    X = np.fft.rfft(x, norm="ortho")
    return np.sum(np.abs(X[1:6]) ** 2) / np.sum(np.abs(X) ** 2)

def spectral_derivative(u):
    n = u.shape[0]
    k = np.fft.fftfreq(n, d=1.0 / n)
    du = np.real(np.fft.ifft(1j * k * np.fft.fft(u)))
    return np.sum(du ** 2 * np.cos(u))

def fft_convolve(x, h):
    n = x.shape[0] + h.shape[0] - 1
    y = np.fft.irfft(np.fft.rfft(x, n) * np.fft.rfft(h, n), n)
    return np.sum(np.tanh(y) * np.arange(n))

def oscillator_amplitude(c, k, f0):
    total = 0.0
    for w in (0.5, 1.0, 1.5, 2.0):
        z = f0 / (k - w * w + 1j * c * w)
        total = total + np.abs(z) + np.angle(z) * 0.1
    return total

def image_smooth(img, sigma):
    F = np.fft.fftshift(np.fft.fft2(img))
    ky, kx = np.meshgrid(np.arange(-4, 4), np.arange(-3, 3), indexing="ij")
    kernel = np.exp(-(kx * kx + ky * ky) * sigma)
    out = np.fft.ifft2(np.fft.ifftshift(F * kernel))
    return np.sum(out.real ** 2) + np.sum(np.imag(out) ** 2)

def plane_wave(k, x):
    field = np.exp(1j * k * x) * (1.0 + 0.5j * np.sin(x))
    return np.sum(np.abs(field.conj() * field) * x)

def wave_packet(x):
    n = x.shape[0]
    psi = np.zeros(n, dtype=complex)
    for i in range(n):
        psi[i] = np.exp(1j * x[i] * i) * x[i]
    psi[0] = psi[0] * 0.5j
    smooth = np.convolve(psi, np.array([0.25, 0.5j, 0.25]), "same")
    edges = np.pad(psi, 1) * np.conj(np.append(psi, psi[:2]))
    return np.sum(np.abs(smooth) ** 2) + np.real(np.sum(edges * np.arange(n + 2)))

def notch(w, q):
    s = 1j * w
    H = (s * s + 1.0) / (s * s + s / q + 1.0)
    delay = cmath.exp(-s * q) * cmath.sqrt(s + 2.0)
    return abs(H) + 0.1 * cmath.phase(H) + delay.real + cmath.tanh(delay).imag
"""

_rng = np.random.default_rng(7)
_W = np.linspace(0.2, 3.0, 9)
_MEASURED = 1.0 / (1.0 + 0.3j * _W)
CASES_USER = [
    ("transfer_fit", (np.array([1.2, 0.7, 0.4]), _W, _MEASURED), (0,)),
    ("band_power", (_rng.normal(size=16),), (0,)),
    ("spectral_derivative", (np.sin(np.linspace(0, 2 * np.pi, 12, endpoint=False)) +
                             0.1 * _rng.normal(size=12),), (0,)),
    ("fft_convolve", (_rng.normal(size=7), _rng.normal(size=4)), (0, 1)),
    ("oscillator_amplitude", (0.3, 1.7, 0.9), (0, 1, 2)),
    ("image_smooth", (_rng.normal(size=(8, 6)), 0.2), (0, 1)),
    ("plane_wave", (0.8, np.linspace(0.0, 2.0, 5)), (0, 1)),
    ("wave_packet", (np.array([0.3, -0.8, 1.1, 0.4, -0.2]),), (0,)),
    ("notch", (0.9, 2.5), (0, 1)),
]


def _user(name: str):
    return make(USER, name=name)


def _fd(f, args: tuple, pos: int):
    def at(v):
        return f(*args[:pos], v, *args[pos + 1:])
    return central_differences(at, args[pos])


@pytest.mark.parametrize("name, args, wrt", CASES_USER, ids=[c[0] for c in CASES_USER])
def test_real_functions_of_complex_values_match_finite_differences(name, args, wrt):
    f = _user(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a ComplexWarning: a real rule saw a complex value)
        got = grad(f, wrt=wrt if len(wrt) > 1 else wrt[0])(*args)
    got = got if len(wrt) > 1 else (got,)
    for pos, g in zip(wrt, got, strict=True):
        assert np.shape(g) == np.shape(args[pos]) and not np.iscomplexobj(g)
        np.testing.assert_allclose(g, _fd(f, args, pos), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, args, wrt", CASES_USER, ids=[c[0] for c in CASES_USER])
def test_forward_mode_and_hvp_of_complex_values(name, args, wrt):
    f = _user(name)
    pos = wrt[0]
    direction = np.cos(np.arange(np.size(args[pos])) + 1.0).reshape(np.shape(args[pos]))
    if np.ndim(args[pos]) == 0:
        direction = 0.7
    tangents = tuple(direction if i == pos else None for i in range(len(args)))
    _, tangent = jvp(f, args, tangents)
    expected = np.sum(_fd(f, args, pos) * direction)
    assert abs(tangent - expected) < 1e-6 * max(1.0, abs(expected))

    def gradient(v):  # the gradient at args with argument pos = v, by the compiled reverse mode
        return grad(f, wrt=pos)(*args[:pos], v, *args[pos + 1:])
    h = 1e-5
    up = gradient(args[pos] + h * direction)
    down = gradient(args[pos] - h * direction)
    np.testing.assert_allclose(hvp(f, wrt=pos)(*args, direction), (up - down) / (2 * h),
                               rtol=1e-5, atol=1e-6)


def test_the_readme_s_complex_block_prints_what_it_says(capsys):
    run_readme_block("# Complex numbers", capsys)


def test_the_readme_s_complex_matrix_block_prints_what_it_says(capsys):
    run_readme_block("# Complex matrices", capsys)


def test_the_gradient_of_an_fft_is_an_fft():
    f = make("def f(x):\n    X = np.fft.fft(x)\n    return np.sum(np.abs(X) ** 2)\n")
    source = grad(f).source_for(np.ones(8))
    assert "bx = np.real(np.fft.fft(bX))" in source
    assert "np.conjugate(X)" in source


def test_a_hessian_through_an_fft():
    f = _user("band_power")
    x = _rng.normal(size=6)
    H = hessian(f)(x)
    g = grad(f)
    expected = np.array([(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(6)])
    np.testing.assert_allclose(H, expected, rtol=1e-5, atol=1e-6)


# --- the convention ----------------------------------------------------------------------------

def test_a_real_variable_gets_the_real_part_of_its_partial():
    f = make("def f(x):\n    z = x * (2.0 + 3.0j)\n    return np.real(z * z)\n")
    # z * z = x^2 (4 - 9 + 12j): real part -5 x^2, derivative -10 x
    assert grad(f)(0.5) == pytest.approx(-5.0)
    assert "bx = np.real(" in grad(f).source_for(0.5)
    v, g = value_and_grad(f)(0.5)
    assert v == pytest.approx(-1.25) and g == pytest.approx(-5.0)


def _fd_complex(f, args: tuple, pos: int):
    """dL/dx - i dL/dy at the complex argument ``args[pos]`` (JAX's gradient), by central
    differences."""
    z = np.asarray(args[pos], dtype=complex)
    out = np.zeros(z.shape, complex)
    for i in np.ndindex(z.shape):
        for step, part in ((1e-6, 1.0), (1e-6j, -1j)):
            e = np.zeros(z.shape, complex)
            e[i] = step
            up = z + e if z.ndim else complex(z + e)
            down = z - e if z.ndim else complex(z - e)
            out[i] += part * (f(*args[:pos], up, *args[pos + 1:])
                              - f(*args[:pos], down, *args[pos + 1:])) / 2e-6
    return out if z.ndim else complex(out)


COMPLEX_ARGUMENTS = """
def modulus_squared(z):
    return np.abs(z) ** 2

def phase_loss(z, target):
    return np.sum((np.angle(z) - target) ** 2) + 0.1 * np.sum(np.abs(z))

def spectrum_fit(Z, x):
    y = np.fft.irfft(Z, 8)
    return np.sum((y - x) ** 2) + np.sum(np.real(Z * np.conj(Z)))

def field_energy(psi, k):
    dpsi = np.fft.ifft(1j * k * np.fft.fft(psi))
    return np.sum(np.abs(dpsi) ** 2) / psi.size + np.sum(np.real(psi) * np.imag(psi))
"""


def test_a_complex_argument_gets_jax_s_gradient():
    f = make(COMPLEX_ARGUMENTS, name="modulus_squared")
    assert grad(f)(3 + 4j) == 6 - 8j  # (JAX's example: d/dx - i d/dy of x^2 + y^2)
    assert type(grad(f)(3 + 4j)) is complex
    rng = np.random.default_rng(3)
    z = rng.normal(size=4) + 1j * rng.normal(size=4)
    cases = [("phase_loss", (z, np.linspace(-1, 1, 4)), 0),
             ("spectrum_fit", (np.fft.rfft(rng.normal(size=8)), rng.normal(size=8)), 0),
             ("field_energy", (z * 0.5, np.fft.fftfreq(4, 0.25)), 0)]
    for name, args, pos in cases:
        f = make(COMPLEX_ARGUMENTS, name=name)
        got = grad(f, wrt=pos)(*args)
        assert got.dtype == complex and got.shape == np.shape(args[pos])
        np.testing.assert_allclose(got, _fd_complex(f, args, pos), rtol=1e-6, atol=1e-7,
                                   err_msg=name)
        value, again = value_and_grad(f, wrt=pos)(*args)
        assert value == pytest.approx(f(*args)) and np.allclose(again, got)


def test_complex_arguments_are_taken_by_position_only():
    f = make(COMPLEX_ARGUMENTS, name="modulus_squared")
    with pytest.raises(TypeError, match="by keyword"):
        grad(f)(z=1j)
    with pytest.raises(TypeError, match="complex"):
        grad(f)(np.complex128(1j))  # (a NumPy complex scalar: pass a Python complex)
    with pytest.raises(TypeError, match="NumPy complex scalar"):
        vjp(f, np.complex128(1j))


# JAX's convention on five functions of a complex argument and on a loss of complex
# intermediates, checked against JAX where it is installed and against autograd (below)
CONVENTION = """
def a(z):
    return np.abs(z) ** 2

def b(z):
    return np.real(np.exp(z) * z)

def c(z):
    return np.imag(z * z * z) + np.abs(z)

def d(z):
    return np.angle(z) * np.real(z)

def e(z):
    return np.abs(np.sin(z)) ** 2 + np.real(np.log(z))

def loss(x, y):
    z = x + 1j * y
    w = np.exp(z) * np.conjugate(z) + np.abs(z) * np.angle(z)
    return np.real(w) + np.imag(w * w)
"""
ON_ARGUMENTS = (0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 0.5j)
ON_INTERMEDIATES = ((0.3, 0.7), (-1.2, 0.4), (2.0, -0.5), (0.1, 0.1), (-0.8, -1.5))


def _twin(source: str, name: str, numpy):
    """``name`` of ``source`` with ``numpy`` (JAX's or autograd's) as ``np``, and the methods
    their arrays lack (``z.conj()``, ``z.real``) spelled as functions."""
    source = re.sub(r"(\w+)\.conj\(\)", r"np.conj(\1)", source)
    source = re.sub(r"(\w+)\.real\b(?!\()", r"np.real(\1)", source)  # (not np.real(...))
    namespace = {"np": numpy}
    exec(compile(source, f"<twin of {name}>", "exec"), namespace)
    return namespace[name]


def test_jax_s_convention_on_complex_arguments():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    ours = make(CONVENTION, name=None).__globals__
    for name in "abcde":
        theirs = _twin(CONVENTION, name, jax.numpy)
        for z in ON_ARGUMENTS:
            assert grad(ours[name])(z) == pytest.approx(complex(jax.grad(theirs)(z)), rel=1e-12)


def test_jax_s_convention_on_intermediates():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    ours, theirs = make(CONVENTION, name="loss"), _twin(CONVENTION, "loss", jax.numpy)
    for x, y in ON_INTERMEDIATES:
        np.testing.assert_allclose(grad(ours, wrt=(0, 1))(x, y),
                                   jax.grad(theirs, argnums=(0, 1))(x, y), rtol=1e-12)


# --- complex linear algebra, and eig of real matrices ------------------------------------------

LINALG = """
def ground_state(x):
    n = x.shape[0]
    hop = np.exp(0.4j * x[0]) * np.eye(n, k=1)
    H = np.diag(x * x) - hop - hop.conj().T
    w, v = np.linalg.eigh(H)
    return w[0] + np.sum(np.abs(v[:, 1]) ** 2 * x)

def growth(p):
    A = np.array([[p[0], p[1], 0.3], [-p[1], p[2], 0.5], [0.2, -0.4, p[0] * p[2]]])
    lam = np.linalg.eigvals(A)
    return np.sum(np.real(lam) ** 2) + np.max(np.imag(lam))

def mode_shape(p):
    A = np.array([[0.1 * p[0], -2.0], [2.0 + p[1], -0.3]])
    w, v = np.linalg.eig(A)
    return np.sum(np.abs(v[:, 0]) ** 2 * p) + np.real(v[1, 0] * np.conj(w[0]))

def covariance_logdet(x):
    B = np.outer(x, np.exp(1j * x)) + 2.0 * np.eye(x.shape[0])
    C = B @ B.conj().T
    L = np.linalg.cholesky(C)
    sign, logdet = np.linalg.slogdet(B)
    return 2.0 * np.sum(np.log(np.real(np.diag(L)))) + logdet + np.real(sign) \\
        + np.sum(np.abs(L) * x)

def transfer_lstsq(p):
    w = np.linspace(0.5, 3.0, 6)
    s = 1j * w
    A = np.stack([np.ones(6), s, s * s], axis=1) * (1.0 + 0.1 * p[0])
    measured = 1.0 / (1.0 + p[1] * s + p[2] * s * s)
    coeffs, residuals, rank, sv = np.linalg.lstsq(A, measured * (1.0 + 0.5 * s))
    return np.sum(np.abs(coeffs) ** 2) + residuals[0] + np.sum(np.abs(np.linalg.pinv(A)))

def schmidt(x):
    psi = np.outer(np.exp(1j * x), np.cos(x) + 0.5j) + np.eye(3) * 0.5
    u, s, vh = np.linalg.svd(psi, full_matrices=False)
    q, r = np.linalg.qr(psi)
    return np.sum(np.abs(u[:, 0]) ** 2 * x) + s[0] + np.real(np.sum(r * np.conj(r)))

def singular_spread(x):
    M = np.outer(x, np.exp(1j * x)) + np.eye(3)
    s = np.linalg.svd(M, compute_uv=False)
    return np.sum(s ** 2 * x) + np.sum(np.linalg.eigvalsh(M @ M.conj().T, UPLO="U") * x)
"""
_P = np.array([0.3, 1.1, -0.7])
HVP_REFUSED = {"schmidt"}  # (second derivatives through a complex matrix's singular vectors)
LINALG_CASES = ["ground_state", "growth", "mode_shape", "covariance_logdet", "singular_spread",
                "transfer_lstsq", "schmidt"]


@pytest.mark.parametrize("name", LINALG_CASES)
def test_complex_linear_algebra_matches_finite_differences(name):
    f = make(LINALG, name=name)
    x = _P[:2] if name == "mode_shape" else _P
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = grad(f)(x)
        if name == "schmidt":  # (forward mode refuses the singular vectors of a complex matrix)
            with pytest.raises(NotImplementedError, match="compute_uv=True"):
                jvp(f, (x,), (np.ones(x.size),))
        else:
            _, tangent = jvp(f, (x,), (np.cos(np.arange(x.size) + 1.0),))
    expected = _fd(f, (x,), 0)
    assert g.dtype == float
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)
    if name != "schmidt":
        assert tangent == pytest.approx(expected @ np.cos(np.arange(x.size) + 1.0), rel=1e-6)
    direction = np.sin(np.arange(x.size) + 2.0)
    if name in HVP_REFUSED:  # (not yet)
        with pytest.raises(NotImplementedError, match="not supported"):
            hvp(f)(x, direction)
        return
    gradient, h = grad(f), 1e-5
    np.testing.assert_allclose(hvp(f)(x, direction), (gradient(x + h * direction)
                                                      - gradient(x - h * direction)) / (2 * h),
                               rtol=1e-5, atol=1e-6)


def test_a_complex_matrix_argument():
    rng = np.random.default_rng(5)
    z = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    f = make("def f(H):\n    w, v = np.linalg.eigh(H)\n"
             "    return w[2] + np.real(v[1, 0] * v[2, 2])\n")
    got = grad(f)(z)
    assert got.dtype == complex and np.all(np.triu(got, 1) == 0)  # (the lower triangle is read)
    np.testing.assert_allclose(got, _fd_complex(f, (z,), 0), rtol=1e-6, atol=1e-7)
    g = make("def g(A):\n    w, v = np.linalg.eig(A)\n"
             "    return np.real(np.sum(w * w)) + np.imag(v[0, 1] + v[2, 0])\n")
    np.testing.assert_allclose(grad(g)(z), _fd_complex(g, (z,), 0), rtol=1e-6, atol=1e-7)


def test_an_eigenvector_phase_numpy_does_not_fix():
    # block diagonal: the first component of the block's eigenvectors is 0, their phase free
    source = ("def f(x):\n    c = 0.5 * np.exp(1j * x)\n"
              "    H = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, c], [0.0, np.conj(c), 3.0]])\n"
              "    w, v = np.linalg.eigh(H)\n    return {}\n")
    invariant = make(source.format("np.abs(v[1, 1]) ** 2 + w[1]"))
    assert grad(invariant)(0.3) == pytest.approx(_fd(invariant, (0.3,), 0), abs=1e-7)
    with pytest.raises(NotImplementedError, match="phase of an eigenvector"):
        grad(make(source.format("np.imag(v[2, 1])")))(0.3)


def test_singular_vectors_whose_phase_the_loss_reads():
    source = ("def f(x):\n    u, s, vh = np.linalg.svd(np.outer(np.exp(1j * x), x) + np.eye(3))\n"
              "    return {}\n")
    x = np.array([0.3, -0.5, 0.9])
    fine = make(source.format("np.real(u[0, 1] * vh[1, 2]) + np.abs(u[2, 0])"))  # (invariant)
    np.testing.assert_allclose(grad(fine)(x), _fd(fine, (x,), 0), rtol=1e-6, atol=1e-7)
    with pytest.raises(NotImplementedError, match="phases of singular vectors"):
        grad(make(source.format("np.real(u[0, 1] * (1.0 + 2.0j))")))(x)


# --- complex arguments in every mode: jvp, vjp, hvp -----------------------------------------

MODES = """
def field(z, x):
    return np.exp(z) * z * x + np.abs(z) ** 2 * np.conj(z)

def energy(z):
    return np.sum(np.abs(z) ** 2 * np.real(z)) + np.sum(np.angle(z + 2.0) * np.imag(z))
"""
_Z = np.array([0.3 + 0.2j, -0.5 + 1.0j])


def test_jvp_of_complex_arguments_is_the_derivative_along_a_direction():
    f = make(MODES, name="field")
    x = np.array([0.7, -1.2])
    for direction in (np.array([1.0 + 0.3j, 0.5j]), np.array([1.0, -2.0])):  # (a real one too)
        value, tangent = jvp(f, (_Z, x), (direction, None))
        h = 1e-6
        expected = (f(_Z + h * direction, x) - f(_Z - h * direction, x)) / (2 * h)
        np.testing.assert_allclose(tangent, expected, rtol=1e-7, atol=1e-9)
    _, tangent = jvp(make(MODES, name="energy"), (complex(_Z[0]),), (1j,))
    energy = make(MODES, name="energy")
    assert tangent == pytest.approx((energy(_Z[0] + 1e-6j) - energy(_Z[0] - 1e-6j)) / 2e-6)


def test_vjp_of_complex_arguments_and_results_is_jax_s():
    f = make(MODES, name="field")
    x = np.array([0.7, -1.2])
    seed = np.array([1.0 - 0.5j, 0.3 + 0.2j])
    value, pullback = vjp(f, _Z, x)
    np.testing.assert_allclose(value, f(_Z, x))
    gz, gx = pullback(seed)
    loss = make("def loss(z, x):\n    return np.real(np.sum(seed * field(z, x)))\n",
                seed=seed, field=f)
    assert gz.dtype == complex and gx.dtype == float
    np.testing.assert_allclose(gz, _fd_complex(loss, (_Z, x), 0), rtol=1e-6)
    np.testing.assert_allclose(gx, _fd(loss, (_Z, x), 1), rtol=1e-6)
    assert vjp(make(COMPLEX_ARGUMENTS, name="modulus_squared"), 3 + 4j)[1](1.0) == (6 - 8j,)
    with pytest.raises(ValueError, match="real result is complex"):
        vjp(make("def r(x):\n    return np.sum(x ** 2)\n"), x)[1](1j)


def test_hvp_of_complex_arguments_is_the_derivative_of_the_gradient():
    f = make(MODES, name="energy")
    v = np.array([1.0 + 0.3j, 0.5j])
    g, h = grad(f), 1e-6
    np.testing.assert_allclose(hvp(f)(_Z, v), (g(_Z + h * v) - g(_Z - h * v)) / (2 * h),
                               rtol=1e-6, atol=1e-8)
    with pytest.raises(TypeError, match="hessian of energy"):
        hessian(f)(_Z)  # (a complex Hessian has no one layout: use hvp)


def test_dask_arrays_of_complex_values():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    f = make(MODES, name="energy")
    g = make("def g(x):\n    z = np.exp(1j * x) * (1.0 + 0.5j)\n"
             "    return np.sum(np.abs(z + x) ** 2 + np.real(z * z))\n")
    x = np.linspace(0.0, 1.0, 6)
    with dask.config.set(scheduler="synchronous"):
        lazy = grad(f)(da.from_array(_Z, chunks=1))  # (a complex Dask argument: JAX's too)
        assert isinstance(lazy, da.Array) and lazy.dtype == complex
        np.testing.assert_allclose(lazy.compute(), grad(f)(_Z))
        lazy = grad(g)(da.from_array(x, chunks=2))  # (complex values inside)
        assert isinstance(lazy, da.Array) and lazy.dtype == float
        np.testing.assert_allclose(lazy.compute(), grad(g)(x))


# --- what is refused, at its line ---------------------------------------------------------------

REFUSED = [
    ("def f(x):\n    z = x * 1j\n    return np.sum(np.abs(np.sinc(z)))\n", 3, "np.sinc"),
    ("def f(x):\n    z = np.exp(1j * x)\n"
     "    return np.sum(np.abs(np.maximum(z, 0.5j)))\n", 3, "np.maximum"),
    ("def f(x):\n    z = np.fft.fft(x)\n    return np.sum(np.abs(z))\n\n"
     "def g(x):\n    return np.fft.fft(x)\n", None, None),
]


def test_an_operation_without_a_complex_rule_is_refused_at_its_line():
    for source, line, what in REFUSED[:2]:
        f = make(source)
        for call in (lambda f=f: grad(f)(np.array([0.3, 0.5])),
                     lambda f=f: jvp(f, (np.array([0.3, 0.5]),), (np.ones(2),))):
            with pytest.raises(TranspileError, match=f"not supported yet by {re.escape(what)}") \
                    as e:
                call()
            assert e.value.lineno == line


def test_the_norms_of_complex_values():
    f = make("def f(x, y):\n    return np.linalg.norm(x + 1j * y) + np.linalg.norm("
             "np.outer(x, y) * 1j, 1)\n")
    x, y = np.array([0.3, -0.5, 0.8]), np.array([1.0, 0.2, -0.4])
    gx, gy = grad(f, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, _fd(f, (x, y), 0), rtol=1e-6)
    np.testing.assert_allclose(gy, _fd(f, (x, y), 1), rtol=1e-6)
    g = make("def g(x):\n    return np.linalg.norm(np.outer(x, x) * (1 + 1j), 2)\n")
    with pytest.raises(NotImplementedError, match="ord=2"):
        grad(g)(x)


def test_complex_results_of_grad_vjp_and_helpers_are_refused():
    g = make("def g(x):\n    return np.fft.fft(x)\n")
    x = np.array([0.3, 0.5, 0.1])
    with pytest.raises(TranspileError, match="grad needs a real-valued function"):
        grad(make("def f(x):\n    return np.sum(np.fft.fft(x))\n"))(x)
    value, tangent = jvp(g, (x,), (np.ones(3),))  # (jvp and vjp of a complex-valued
    np.testing.assert_allclose(tangent, np.fft.fft(np.ones(3)))  # function: fine)
    value, pullback = vjp(g, x)
    np.testing.assert_allclose(pullback(np.array([1.0, 0.5j, -1j]))[0],
                               np.real(np.fft.fft(np.array([1.0, 0.5j, -1j]))))
    big = "\n".join(f"    y = y + np.sin(y) * {i}" for i in range(30))
    helper = make(f"def h(x):\n    y = np.fft.fft(x)\n{big}\n    return y\n\n"
                  "def f(x):\n    return np.sum(np.abs(h(x)))\n")
    with pytest.raises(TranspileError, match="complex"):
        grad(helper)(x)


# --- every rule-table case, given a complex argument -------------------------------------------

def _complex_case(spec, shapes):
    """The case's function with its first argument made complex (``a * (1 + 0.5j)``), read
    through the real part of its product with ``0.6 - 0.8j``; None where the case has no
    differentiated first argument or NumPy refuses complex values there."""
    if 0 in spec.bools or spec.nargs == 0:
        return None
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = make_args(spec, shapes, seed)
    if not (isinstance(args[0], float) or isinstance(args[0], np.ndarray)):
        return None
    *statements, expr = re.sub(r"\ba\b", "(a * (1.0 + 0.5j))", spec.expr).split("; ")
    from tests.rule_specs import ARG_NAMES, SPEC_GLOBALS
    names = ARG_NAMES[:len(args)]
    scope = {n: a.copy() if isinstance(a, np.ndarray) else a
             for n, a in zip(names, args, strict=True)} | dict(SPEC_GLOBALS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec("\n".join(statements), scope)
            value = eval(expr, scope)
            if not np.iscomplexobj(value) and not np.isrealobj(value):
                return None
    except Exception:  # (NumPy or Python refuses complex values there)
        return None
    u = np.cos(np.arange(np.size(value)) + 0.5).reshape(np.shape(value))
    prelude = "".join(f"    {line}\n" for line in statements)
    body = f"np.real(np.sum(({expr}) * u) * (0.6 - 0.8j))"
    f = make(f"def f({', '.join(names)}):\n{prelude}    return {body}\n", u=u, **SPEC_GLOBALS)
    return f, args, spec.diff_positions


@pytest.mark.parametrize("spec, shapes", [c for c in CASES if not c.marks])
def test_no_real_rule_receives_a_complex_value(spec, shapes):
    _right_or_refused(spec, shapes)


def _right_or_refused(spec, shapes) -> None:
    """The case with a complex first argument compiles to the gradient finite differences
    give, or is refused at a line of its function (about 380 cases compile, 1,460 refuse)."""
    case = _complex_case(spec, shapes)
    if case is None:
        return
    f, args, wrt = case
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = grad(f, wrt=wrt if len(wrt) > 1 else wrt[0])(*args)
    except TranspileError as e:
        assert e.lineno is not None and e.lineno >= 2  # (refused at a line of the function)
        return
    except NotImplementedError as e:  # (refused when run: the spectral norm of a complex
        assert "not supported" in str(e)  # matrix, a loss reading singular vectors' phases)
        return
    got = got if len(wrt) > 1 else (got,)
    directional = 0.0
    tangents = [None] * len(args)
    for pos, g in zip(wrt, got, strict=True):
        expected = numeric_grad(f, args, pos)
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{spec.expr} at {shapes}, argument {pos}")
        tangents[pos] = np.cos(np.arange(np.size(args[pos])) + pos).reshape(np.shape(args[pos]))
        tangents[pos] = tangents[pos] if np.ndim(args[pos]) else float(tangents[pos])
        directional += np.sum(expected * tangents[pos])
    try:  # forward mode: the same rules' tangents
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _, tangent = jvp(f, args, tuple(tangents))
    except TranspileError as e:
        assert e.lineno is not None and e.lineno >= 2
        return
    except NotImplementedError as e:  # (a complex matrix's singular vectors)
        assert "not supported" in str(e)
        return
    assert abs(tangent - directional) <= 1e-4 * max(1.0, abs(directional)), \
        f"{spec.expr} at {shapes}: jvp {tangent}, finite differences {directional}"


def test_the_walk_finds_a_real_rule_given_a_complex_value(monkeypatch):
    from transpiler.passes import lower
    from transpiler.rules.complex_rules import COMPLEX_READY
    from transpiler.rules.registry import COMPLEX_ADJOINTS
    monkeypatch.setattr(lower, "COMPLEX_READY", COMPLEX_READY | {np.abs})  # sign(z) * g
    monkeypatch.delitem(COMPLEX_ADJOINTS, np.abs)
    spec, shapes = next(c.values for c in CASES if c.values[0].expr == "np.absolute(a)")
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        _right_or_refused(spec, shapes)


# --- the same functions against autograd (its convention for complex values is JAX's) ---------

def _autograd_twin(source: str, name: str):
    return _twin(source, name, pytest.importorskip("autograd.numpy"))


# Left out: what autograd does not differentiate (eigvals, eigvalsh, lstsq, qr, cmath, element
# writes) and where its gradient is not the derivative of NumPy's numbers, which these are (the
# tests above check them against differences): eig's vectors read in NumPy's phase
# (mode_shape), cholesky and slogdet of complex matrices (covariance_logdet; autograd 1.9's
# rules are written for real ones).
AUTOGRAD_CASES = [c for c in CASES_USER if c[0] not in ("wave_packet", "notch")] + [
    ("ground_state", (_P,), (0,))]


@pytest.mark.parametrize("name, args, wrt", AUTOGRAD_CASES, ids=[c[0] for c in AUTOGRAD_CASES])
def test_the_user_functions_match_autograd(name, args, wrt):
    autograd = pytest.importorskip("autograd")
    source = USER if name in dict((c[0], 0) for c in CASES_USER) else LINALG
    ours, theirs = make(source, name=name), _autograd_twin(source, name)
    assert theirs(*args) == pytest.approx(ours(*args), rel=1e-12)
    for pos in wrt:
        expected = autograd.grad(theirs, pos)(*args)
        np.testing.assert_allclose(grad(ours, wrt=pos)(*args), expected, rtol=1e-7, atol=1e-9)
    pos = wrt[0]
    direction = np.cos(np.arange(np.size(args[pos])) + 1.0).reshape(np.shape(args[pos]))

    def along(*xs):  # the derivative of theirs along direction, as a function of the arguments
        return np.sum(autograd.grad(theirs, pos)(*xs) * direction)
    expected = autograd.grad(along, pos)(*args)  # (autograd's Hessian-vector product)
    np.testing.assert_allclose(hvp(ours, wrt=pos)(*args, direction), expected, rtol=1e-7,
                               atol=1e-9)


README_COMPLEX = ["# Complex numbers: a band power and a filter's gain",
                  "# Complex matrices: a ground state and a frequency"]


def test_the_readme_s_complex_examples_match_autograd():
    """The README's complex blocks, their functions run by autograd (but ground_energy and
    top_frequency, which read eigvalsh and eigvals: autograd does not differentiate them)."""
    autograd = pytest.importorskip("autograd")
    from tests.util import readme_block
    blocks = [readme_block(title) for title in README_COMPLEX]
    source = "\n\n".join(ast.get_source_segment(block, node) for block in blocks
                         for node in ast.parse(block).body if isinstance(node, ast.FunctionDef))
    ours = make(source, name=None).__globals__
    x = np.array([0.0, 1.0, 0.5, -0.5, 0.25, 0.0, -1.0, 0.5])
    for name, args in (("band_power", (x,)), ("gain", (0.5, 2.0))):
        theirs = _autograd_twin(source, name)
        for pos in range(len(args)):
            np.testing.assert_allclose(grad(ours[name], wrt=pos)(*args),
                                       autograd.grad(theirs, pos)(*args), rtol=1e-7, atol=1e-9)


def test_the_convention_on_complex_arguments_is_autograd_s():
    """What the JAX tests above check, against autograd (installed with the tests)."""
    autograd = pytest.importorskip("autograd")
    ours = make(CONVENTION, name=None).__globals__
    for name in "abcde":
        theirs = _autograd_twin(CONVENTION, name)
        for z in ON_ARGUMENTS:
            assert grad(ours[name])(z) == pytest.approx(autograd.grad(theirs)(z), rel=1e-12)
    theirs = _autograd_twin(CONVENTION, "loss")
    for x, y in ON_INTERMEDIATES:
        np.testing.assert_allclose(grad(ours["loss"], wrt=(0, 1))(x, y),
                                   [autograd.grad(theirs, i)(x, y) for i in (0, 1)], rtol=1e-12)
    rng = np.random.default_rng(3)
    z = rng.normal(size=4) + 1j * rng.normal(size=4)
    for name, args in (("phase_loss", (z, np.linspace(-1, 1, 4))),
                       ("field_energy", (z * 0.5, np.fft.fftfreq(4, 0.25)))):
        theirs = _autograd_twin(COMPLEX_ARGUMENTS, name)
        np.testing.assert_allclose(grad(make(COMPLEX_ARGUMENTS, name=name))(*args),
                                   autograd.grad(theirs)(*args), rtol=1e-7, atol=1e-9)


# --- helpers given complex values; hermitian=True of complex matrices --------------------------

HELPERS = """
def smoothed_inverse(a):  # pinv of a Hermitian matrix NumPy reads by its lower triangle
    p = np.linalg.pinv(a, hermitian=True)
    for _ in range(2):
        p = 0.5 * (p + np.conj(p).T)
    return np.sum(np.abs(p @ np.array([1.0, 2j, 0.5])) ** 2) + np.real(np.trace(p))

def spread(a):
    s = np.linalg.svd(a, compute_uv=False, hermitian=True)
    return np.sum(s ** 2 * np.array([1.0, 0.3, 0.7])) + s[0]

def response(x, y):
    z = x + 1j * y
    return smoothed_inverse(z) + spread(z * 1j + y) + spread(np.conj(z))

def field(z):
    return z * np.exp(1j * np.abs(z))

def returns_complex(x, y):
    return np.sum(np.abs(field(x + 1j * y)))
"""


def test_a_helper_given_complex_values_is_compiled_for_them():
    """A helper (not inlined) called with complex arguments is compiled knowing them complex
    (its gradient at them is the caller's convention, JAX's); one returning a complex value
    stays refused, at the call; second derivatives through it are refused (not yet)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 3)) + np.diag([3.0, -1.0, 0.5])
    y = rng.normal(size=(3, 3))
    f = make(HELPERS, name="response")
    gx, gy = grad(f, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, _fd(f, (x, y), 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gy, _fd(f, (x, y), 1), rtol=1e-6, atol=1e-7)
    dx, dy = np.cos(np.arange(9.0)).reshape(3, 3), np.sin(np.arange(9.0)).reshape(3, 3)
    _, tangent = jvp(f, (x, y), (dx, dy))
    assert tangent == pytest.approx(np.sum(gx * dx + gy * dy), rel=1e-8)
    a = x + 1j * y
    for name in ("smoothed_inverse", "spread"):  # (a complex argument: JAX's gradient)
        h = make(HELPERS, name=name)
        np.testing.assert_allclose(grad(h)(a), _fd_complex(h, (a,), 0), rtol=1e-6, atol=1e-7)
    with pytest.raises(NoRuleError, match="second derivatives"):
        hvp(f, wrt=0)(x, y, dx)
    with pytest.raises(TranspileError, match="field .not inlined., whose result"):
        grad(make(HELPERS, name="returns_complex"))(x, y)


# JAX differentiates the complex linear algebra autograd lacks (eigvals, eigvalsh, lstsq, qr,
# complex cholesky and slogdet): the same functions against it where it is installed (not in
# the test extra: a large download). Left out: cmath and element writes (notch, wave_packet:
# JAX has neither) and eig's vectors (mode_shape: JAX refuses their derivative).
JAX_CASES = [c for c in CASES_USER if c[0] not in ("wave_packet", "notch")] + [
    (name, (_P,), (0,)) for name in LINALG_CASES if name != "mode_shape"]


@pytest.mark.parametrize("name, args, wrt", JAX_CASES, ids=[c[0] for c in JAX_CASES])
def test_the_user_functions_match_jax(name, args, wrt):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    source = USER if name in dict((c[0], 0) for c in CASES_USER) else LINALG
    ours, theirs = make(source, name=name), _twin(source, name, jax.numpy)
    for pos in wrt:
        expected = jax.grad(theirs, argnums=pos)(*args)
        np.testing.assert_allclose(grad(ours, wrt=pos)(*args), expected, rtol=1e-7, atol=1e-9)


def test_the_readme_s_complex_matrices_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from tests.util import readme_block
    block = readme_block(README_COMPLEX[1])
    source = "\n\n".join(ast.get_source_segment(block, node) for node in ast.parse(block).body
                         if isinstance(node, ast.FunctionDef))
    ours = make(source, name=None).__globals__
    onsite = np.array([0.0, 0.3, -0.2, 0.1])
    for name, args in (("ground_energy", (0.7, onsite)), ("top_frequency", (1.5,))):
        theirs = _twin(source, name, jax.numpy)
        for pos in range(len(args)):
            np.testing.assert_allclose(grad(ours[name], wrt=pos)(*args),
                                       jax.grad(theirs, argnums=pos)(*args), rtol=1e-7,
                                       atol=1e-9)
