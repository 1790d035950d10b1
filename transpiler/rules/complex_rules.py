"""Complex numbers: the convention, the rules that differ for complex values, and the FFTs.

**The convention** (JAX's): the gradient of a real loss ``L`` at a complex value
``z = x + iy`` is ``dL/dx - i dL/dy``. So ``grad`` of ``|z|**2`` at ``3 + 4j`` is ``6 - 8j``,
and for a holomorphic ``f`` the adjoint of ``w = f(z)`` is ``bz = bw * f'(z)``: the real rule,
as written. The rules of holomorphic operations (arithmetic, ``exp``, ``log``, ``sin``, sums,
indexing, reshaping: ``COMPLEX_READY``) therefore serve complex values unchanged, and a linear
map's adjoint is its transpose (not its conjugate transpose): a DFT matrix is symmetric, so the
adjoint of ``fft`` is ``fft``.

Three things make it whole, each in one place:

- the functions whose derivative differs for a complex argument (``abs``, ``np.angle``,
  ``np.imag``) have a second rule here, registered ``of_complex=True``; the lowering takes it
  where an argument may be complex (``facts.complex``, computed by passes/check_kinds.py), and
  refuses, at its line, any other operation that would see a complex value
  (passes/lower.py ``Lowering.rule``);
- where a real value meets a complex one (``x * 1j``, ``np.fft.fft(x)``), the real value's
  gradient is the real part of its partial (``dL/dx`` alone): the reverse pass wraps that
  partial in ``np.real`` (passes/reverse.py), which is why a real argument gets a real gradient;
- the FFT adjoints that are not one FFT call (a length changed by ``n=``/``s=``, the real
  transforms) are runtime/spectral.py's, and the decompositions of complex matrices (written
  with conjugate transposes) and ``eig`` are runtime/linalg.py's.
"""

import builtins
import cmath
import math
import operator

import gast
import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, since, tangent

try:  # scipy.fft's transforms are NumPy's: the same rules (their adjoints call NumPy's)
    import scipy.fft as sfft
except ImportError:
    sfft = None


def _also(name: str) -> tuple:
    """``scipy.fft.<name>``, as a second key of a rule, where SciPy is installed."""
    return (getattr(sfft, name),) if sfft is not None else ()

# --- the conjugate pair of views: real and imaginary parts -------------------------------------

@adjoint(np.real, np.ndarray.real)
def adj_real(ans, val):
    d[val] = d[ans]


@tangent(np.real, np.ndarray.real)
def tan_real(ans, val):
    d[ans] = np.real(d[val])


@adjoint(np.imag, np.ndarray.imag)
def adj_imag(ans, val):
    d[val] = rt.zeros_like_grad(val)  # (a real value's imaginary part: zeros)


@tangent(np.imag, np.ndarray.imag)
def tan_imag(ans, val):
    d[ans] = rt.zeros_like_grad(ans)


@adjoint(np.imag, np.ndarray.imag, of_complex=True)
def adj_imag_complex(ans, val):
    d[val] = -1j * d[ans]


@tangent(np.imag, np.ndarray.imag, of_complex=True)
def tan_imag_complex(ans, val):
    d[ans] = np.imag(d[val])


@adjoint(complex)
def adj_complex(ans, real=0.0, imag=0.0):
    d[real] = d[ans]
    d[imag] = 1j * d[ans]


@tangent(complex)
def tan_complex(ans, real=0.0, imag=0.0):
    d[ans] = d[real]
    d[ans] = 1j * d[imag]


# --- cmath: holomorphic, so the adjoint is bz = bw * f'(z) ------------------------------------

@adjoint(cmath.exp)
def adj_cexp(ans, x, /):
    d[x] = d[ans] * ans


@tangent(cmath.exp)
def tan_cexp(ans, x, /):
    d[ans] = d[x] * ans


@adjoint(cmath.log)
def adj_clog(ans, x, base=None, /):
    if base is None:
        d[x] = d[ans] / x
    else:
        d[x] = d[ans] / (x * cmath.log(base))
        d[base] = -d[ans] * ans / (base * cmath.log(base))


@tangent(cmath.log)
def tan_clog(ans, x, base=None, /):
    if base is None:
        d[ans] = d[x] / x
    else:
        d[ans] = d[x] / (x * cmath.log(base))
        d[ans] = -d[base] * ans / (base * cmath.log(base))


@adjoint(cmath.log10)
def adj_clog10(ans, x, /):
    d[x] = d[ans] / (x * math.log(10.0))


@tangent(cmath.log10)
def tan_clog10(ans, x, /):
    d[ans] = d[x] / (x * math.log(10.0))


@adjoint(cmath.sqrt)
def adj_csqrt(ans, x, /):
    d[x] = d[ans] * 0.5 / ans


@tangent(cmath.sqrt)
def tan_csqrt(ans, x, /):
    d[ans] = d[x] * 0.5 / ans


@adjoint(cmath.sin)
def adj_csin(ans, x, /):
    d[x] = d[ans] * cmath.cos(x)


@tangent(cmath.sin)
def tan_csin(ans, x, /):
    d[ans] = d[x] * cmath.cos(x)


@adjoint(cmath.cos)
def adj_ccos(ans, x, /):
    d[x] = -d[ans] * cmath.sin(x)


@tangent(cmath.cos)
def tan_ccos(ans, x, /):
    d[ans] = -d[x] * cmath.sin(x)


@adjoint(cmath.tan)
def adj_ctan(ans, x, /):
    d[x] = d[ans] * (1.0 + ans * ans)


@tangent(cmath.tan)
def tan_ctan(ans, x, /):
    d[ans] = d[x] * (1.0 + ans * ans)


@adjoint(cmath.sinh)
def adj_csinh(ans, x, /):
    d[x] = d[ans] * cmath.cosh(x)


@tangent(cmath.sinh)
def tan_csinh(ans, x, /):
    d[ans] = d[x] * cmath.cosh(x)


@adjoint(cmath.cosh)
def adj_ccosh(ans, x, /):
    d[x] = d[ans] * cmath.sinh(x)


@tangent(cmath.cosh)
def tan_ccosh(ans, x, /):
    d[ans] = d[x] * cmath.sinh(x)


@adjoint(cmath.tanh)
def adj_ctanh(ans, x, /):
    d[x] = d[ans] * (1.0 - ans * ans)


@tangent(cmath.tanh)
def tan_ctanh(ans, x, /):
    d[ans] = d[x] * (1.0 - ans * ans)


@adjoint(cmath.asin)
def adj_casin(ans, x, /):
    d[x] = d[ans] / cmath.sqrt(1.0 - x * x)


@tangent(cmath.asin)
def tan_casin(ans, x, /):
    d[ans] = d[x] / cmath.sqrt(1.0 - x * x)


@adjoint(cmath.acos)
def adj_cacos(ans, x, /):
    d[x] = -d[ans] / cmath.sqrt(1.0 - x * x)


@tangent(cmath.acos)
def tan_cacos(ans, x, /):
    d[ans] = -d[x] / cmath.sqrt(1.0 - x * x)


@adjoint(cmath.atan)
def adj_catan(ans, x, /):
    d[x] = d[ans] / (1.0 + x * x)


@tangent(cmath.atan)
def tan_catan(ans, x, /):
    d[ans] = d[x] / (1.0 + x * x)


@adjoint(cmath.asinh)
def adj_casinh(ans, x, /):
    d[x] = d[ans] / cmath.sqrt(x * x + 1.0)


@tangent(cmath.asinh)
def tan_casinh(ans, x, /):
    d[ans] = d[x] / cmath.sqrt(x * x + 1.0)


@adjoint(cmath.acosh)
def adj_cacosh(ans, x, /):
    d[x] = d[ans] / (cmath.sqrt(x - 1.0) * cmath.sqrt(x + 1.0))


@tangent(cmath.acosh)
def tan_cacosh(ans, x, /):
    d[ans] = d[x] / (cmath.sqrt(x - 1.0) * cmath.sqrt(x + 1.0))


@adjoint(cmath.atanh)
def adj_catanh(ans, x, /):
    d[x] = d[ans] / (1.0 - x * x)


@tangent(cmath.atanh)
def tan_catanh(ans, x, /):
    d[ans] = d[x] / (1.0 - x * x)


@adjoint(cmath.rect)
def adj_crect(ans, r, phi, /):
    d[r] = d[ans] * cmath.exp(1j * phi)
    d[phi] = d[ans] * 1j * ans


@tangent(cmath.rect)
def tan_crect(ans, r, phi, /):
    d[ans] = d[r] * cmath.exp(1j * phi)
    d[ans] = d[phi] * 1j * ans


@adjoint(cmath.phase)
def adj_cphase(ans, x, /):
    d[x] = 0.0  # (a real number's phase, 0 or pi, is constant)


@tangent(cmath.phase)
def tan_cphase(ans, x, /):
    d[ans] = 0.0


@adjoint(cmath.phase, of_complex=True)
def adj_cphase_complex(ans, x, /):
    d[x] = -1j * d[ans] * x.conjugate() / (abs(x) ** 2 if x != 0 else 1.0)


@tangent(cmath.phase, of_complex=True)
def tan_cphase_complex(ans, x, /):
    d[ans] = (x.conjugate() * d[x]).imag / (abs(x) ** 2 if x != 0 else 1.0)


# --- modulus and argument ----------------------------------------------------------------------

@adjoint(np.abs, builtins.abs, of_complex=True)
def adj_abs_complex(ans, x):
    d[x] = d[ans] * np.conjugate(x) / np.where(ans == 0.0, 1.0, ans)  # (0 at 0)


@tangent(np.abs, builtins.abs, of_complex=True)
def tan_abs_complex(ans, x):
    d[ans] = np.real(np.conjugate(x) * d[x]) / np.where(ans == 0.0, 1.0, ans)


@adjoint(np.angle)
def adj_angle(ans, z, deg=False):
    d[z] = rt.zeros_like_grad(z)  # (a real value's angle, 0 or pi, is constant)


@tangent(np.angle)
def tan_angle(ans, z, deg=False):
    d[ans] = rt.zeros_like_grad(ans)


@adjoint(np.angle, of_complex=True)
def adj_angle_complex(ans, z, deg=False):
    r2 = np.real(z * np.conjugate(z))
    d[z] = -1j * d[ans] * (180.0 / np.pi if deg else 1.0) * np.conjugate(z) \
        / np.where(r2 == 0.0, 1.0, r2)


@tangent(np.angle, of_complex=True)
def tan_angle_complex(ans, z, deg=False):
    r2 = np.real(z * np.conjugate(z))
    d[ans] = np.imag(np.conjugate(z) * d[z]) * (180.0 / np.pi if deg else 1.0) \
        / np.where(r2 == 0.0, 1.0, r2)


# --- norms: of the moduli (but the spectral and nuclear norms of a matrix, refused) ----------

@adjoint(np.linalg.norm, of_complex=True)
def adj_norm_complex(ans, x, ord=None, axis=None, keepdims=False):
    r = rt.complex_moduli(x, ord, axis)
    d[x] = rt.norm_grad(d[ans], r, ans, ord, axis, keepdims) * np.conjugate(x) \
        / np.where(r == 0.0, 1.0, r)


@tangent(np.linalg.norm, of_complex=True)
def tan_norm_complex(ans, x, ord=None, axis=None, keepdims=False):
    r = rt.complex_moduli(x, ord, axis)
    d[ans] = rt.norm_tangent(np.real(np.conjugate(x) * d[x]) / np.where(r == 0.0, 1.0, r), r,
                             ans, ord, axis, keepdims)


# --- np.vdot conjugates its first argument --------------------------------------------------

@adjoint(np.vdot, of_complex=True)
def adj_vdot_complex(ans, a, b, /):
    d[a] = np.reshape(np.conjugate(d[ans] * b), np.shape(a))
    d[b] = np.reshape(d[ans] * np.conjugate(a), np.shape(b))


@tangent(np.vdot, of_complex=True)
def tan_vdot_complex(ans, a, b, /):
    d[ans] = np.vdot(d[a], b)
    d[ans] = np.vdot(a, d[b])


# --- linear algebra: Hermitian transposes, and eig (complex whatever its argument) -------------

@adjoint(np.linalg.eig)
def adj_eig(ans, a):
    d[a] = rt.eig_adjoint(d[ans], ans)


@tangent(np.linalg.eig)
def tan_eig(ans, a):
    d[ans] = rt.eig_tangent(d[a], ans)


@adjoint(np.linalg.eigvals)
def adj_eigvals(ans, a):
    d[a] = rt.eigvals_adjoint(d[ans], a, ans)


@tangent(np.linalg.eigvals)
def tan_eigvals(ans, a):
    d[ans] = rt.eigvals_tangent(d[a], a, ans)


@adjoint(np.linalg.eigh, of_complex=True)
def adj_eigh_complex(ans, a, UPLO="L"):
    d[a] = rt.eigh_complex_adjoint(d[ans], ans, UPLO)


@tangent(np.linalg.eigh, of_complex=True)
def tan_eigh_complex(ans, a, UPLO="L"):
    d[ans] = rt.eigh_complex_tangent(d[a], ans, UPLO)


@adjoint(np.linalg.eigvalsh, of_complex=True)
def adj_eigvalsh_complex(ans, a, UPLO="L"):
    d[a] = rt.eigvalsh_complex_adjoint(d[ans], a, UPLO)


@tangent(np.linalg.eigvalsh, of_complex=True)
def tan_eigvalsh_complex(ans, a, UPLO="L"):
    d[ans] = rt.eigvalsh_complex_tangent(d[a], a, UPLO)


@adjoint(np.linalg.cholesky, of_complex=True)
def adj_cholesky_complex(ans, a, /, *, upper=False):
    d[a] = rt.cholesky_complex_adjoint(d[ans], ans, upper)


@tangent(np.linalg.cholesky, of_complex=True)
def tan_cholesky_complex(ans, a, /, *, upper=False):
    d[ans] = rt.cholesky_complex_tangent(d[a], ans, upper)


@adjoint(np.linalg.slogdet, of_complex=True)
def adj_slogdet_complex(ans, a):
    d[a] = rt.slogdet_complex_adjoint(d[ans], a, ans)


@tangent(np.linalg.slogdet, of_complex=True)
def tan_slogdet_complex(ans, a):
    d[ans] = rt.slogdet_complex_tangent(d[a], a, ans)


@adjoint(np.linalg.svd, of_complex=True)
def adj_svd_complex(ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[a] = rt.svd_complex_adjoint(d[ans], ans, a, full_matrices, compute_uv, hermitian)


@tangent(np.linalg.svd, of_complex=True)
def tan_svd_complex(ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[ans] = rt.svd_complex_tangent(d[a], a, compute_uv, hermitian)


@adjoint(since(np.linalg, "svdvals", "NumPy 2.0"), of_complex=True)
def adj_svdvals_complex(ans, x, /):
    d[x] = rt.svdvals_complex_adjoint(d[ans], x)


@tangent(since(np.linalg, "svdvals", "NumPy 2.0"), of_complex=True)
def tan_svdvals_complex(ans, x, /):
    d[ans] = rt.svdvals_complex_tangent(d[x], x)


# --- the FFTs: the adjoint of a transform is the transform (a DFT matrix is symmetric) --------

@adjoint(np.fft.fft, *_also("fft"))
def adj_fft(ans, a, n=None, axis=-1, norm=None):
    if n is None:
        d[a] = np.fft.fft(d[ans], None, axis, norm)
    else:
        d[a] = rt.fitted(np.fft.fft(d[ans], None, axis, norm), a)


@tangent(np.fft.fft, *_also("fft"))
def tan_fft(ans, a, n=None, axis=-1, norm=None):
    d[ans] = np.fft.fft(d[a], n, axis, norm)


@adjoint(np.fft.ifft, *_also("ifft"))
def adj_ifft(ans, a, n=None, axis=-1, norm=None):
    if n is None:
        d[a] = np.fft.ifft(d[ans], None, axis, norm)
    else:
        d[a] = rt.fitted(np.fft.ifft(d[ans], None, axis, norm), a)


@tangent(np.fft.ifft, *_also("ifft"))
def tan_ifft(ans, a, n=None, axis=-1, norm=None):
    d[ans] = np.fft.ifft(d[a], n, axis, norm)


@adjoint(np.fft.fft2, *_also("fft2"))
def adj_fft2(ans, a, s=None, axes=(-2, -1), norm=None):
    if s is None:
        d[a] = np.fft.fft2(d[ans], None, axes, norm)
    else:
        d[a] = rt.fitted(np.fft.fft2(d[ans], None, axes, norm), a)


@tangent(np.fft.fft2, *_also("fft2"))
def tan_fft2(ans, a, s=None, axes=(-2, -1), norm=None):
    d[ans] = np.fft.fft2(d[a], s, axes, norm)


@adjoint(np.fft.ifft2, *_also("ifft2"))
def adj_ifft2(ans, a, s=None, axes=(-2, -1), norm=None):
    if s is None:
        d[a] = np.fft.ifft2(d[ans], None, axes, norm)
    else:
        d[a] = rt.fitted(np.fft.ifft2(d[ans], None, axes, norm), a)


@tangent(np.fft.ifft2, *_also("ifft2"))
def tan_ifft2(ans, a, s=None, axes=(-2, -1), norm=None):
    d[ans] = np.fft.ifft2(d[a], s, axes, norm)


@adjoint(np.fft.fftn, *_also("fftn"))
def adj_fftn(ans, a, s=None, axes=None, norm=None):
    if s is None:
        d[a] = np.fft.fftn(d[ans], None, axes, norm)
    else:  # (s given: the same axes, of those lengths already)
        d[a] = rt.fitted(np.fft.fftn(d[ans], s, axes, norm), a)


@tangent(np.fft.fftn, *_also("fftn"))
def tan_fftn(ans, a, s=None, axes=None, norm=None):
    d[ans] = np.fft.fftn(d[a], s, axes, norm)


@adjoint(np.fft.ifftn, *_also("ifftn"))
def adj_ifftn(ans, a, s=None, axes=None, norm=None):
    if s is None:
        d[a] = np.fft.ifftn(d[ans], None, axes, norm)
    else:
        d[a] = rt.fitted(np.fft.ifftn(d[ans], s, axes, norm), a)


@tangent(np.fft.ifftn, *_also("ifftn"))
def tan_ifftn(ans, a, s=None, axes=None, norm=None):
    d[ans] = np.fft.ifftn(d[a], s, axes, norm)


@adjoint(np.fft.rfft, *_also("rfft"))
def adj_rfft(ans, a, n=None, axis=-1, norm=None):
    if n is None:
        d[a] = rt.unrfftn(d[ans], a, None, (axis,), norm)
    else:
        d[a] = rt.unrfftn(d[ans], a, (n,), (axis,), norm)


@tangent(np.fft.rfft, *_also("rfft"))
def tan_rfft(ans, a, n=None, axis=-1, norm=None):
    d[ans] = np.fft.rfft(d[a], n, axis, norm)


@adjoint(np.fft.irfft, *_also("irfft"))
def adj_irfft(ans, a, n=None, axis=-1, norm=None):
    if n is None:
        d[a] = rt.unirfftn(d[ans], a, None, (axis,), norm)
    else:
        d[a] = rt.unirfftn(d[ans], a, (n,), (axis,), norm)


@tangent(np.fft.irfft, *_also("irfft"))
def tan_irfft(ans, a, n=None, axis=-1, norm=None):
    d[ans] = np.fft.irfft(d[a], n, axis, norm)


@adjoint(np.fft.rfft2, *_also("rfft2"))
def adj_rfft2(ans, a, s=None, axes=(-2, -1), norm=None):
    d[a] = rt.unrfftn(d[ans], a, s, axes, norm)


@adjoint(np.fft.rfftn, *_also("rfftn"))
def adj_rfftn(ans, a, s=None, axes=None, norm=None):
    d[a] = rt.unrfftn(d[ans], a, s, axes, norm)


@tangent(np.fft.rfftn, *_also("rfftn"))
def tan_rfftn(ans, a, s=None, axes=None, norm=None):
    d[ans] = np.fft.rfftn(d[a], s, axes, norm)


@tangent(np.fft.rfft2, *_also("rfft2"))
def tan_rfft2(ans, a, s=None, axes=(-2, -1), norm=None):
    d[ans] = np.fft.rfft2(d[a], s, axes, norm)


@adjoint(np.fft.irfft2, *_also("irfft2"))
def adj_irfft2(ans, a, s=None, axes=(-2, -1), norm=None):
    d[a] = rt.unirfftn(d[ans], a, s, axes, norm)


@adjoint(np.fft.irfftn, *_also("irfftn"))
def adj_irfftn(ans, a, s=None, axes=None, norm=None):
    d[a] = rt.unirfftn(d[ans], a, s, axes, norm)


@tangent(np.fft.irfftn, *_also("irfftn"))
def tan_irfftn(ans, a, s=None, axes=None, norm=None):
    d[ans] = np.fft.irfftn(d[a], s, axes, norm)


@tangent(np.fft.irfft2, *_also("irfft2"))
def tan_irfft2(ans, a, s=None, axes=(-2, -1), norm=None):
    d[ans] = np.fft.irfft2(d[a], s, axes, norm)


@adjoint(np.fft.hfft, *_also("hfft"))  # irfft of the conjugate, the other direction's norm
def adj_hfft(ans, a, n=None, axis=-1, norm=None):
    if n is None:
        d[a] = np.conjugate(rt.unirfftn(d[ans], a, None, (axis,), rt.swapped_norm(norm)))
    else:
        d[a] = np.conjugate(rt.unirfftn(d[ans], a, (n,), (axis,), rt.swapped_norm(norm)))


@tangent(np.fft.hfft, *_also("hfft"))
def tan_hfft(ans, a, n=None, axis=-1, norm=None):
    d[ans] = np.fft.hfft(d[a], n, axis, norm)


@adjoint(np.fft.ihfft, *_also("ihfft"))  # the conjugate of rfft, the other direction's norm
def adj_ihfft(ans, a, n=None, axis=-1, norm=None):
    if n is None:
        d[a] = rt.unrfftn(np.conjugate(d[ans]), a, None, (axis,), rt.swapped_norm(norm))
    else:
        d[a] = rt.unrfftn(np.conjugate(d[ans]), a, (n,), (axis,), rt.swapped_norm(norm))


@tangent(np.fft.ihfft, *_also("ihfft"))
def tan_ihfft(ans, a, n=None, axis=-1, norm=None):
    d[ans] = np.fft.ihfft(d[a], n, axis, norm)


@adjoint(np.fft.fftshift, *_also("fftshift"))
def adj_fftshift(ans, x, axes=None):
    d[x] = np.fft.ifftshift(d[ans], axes)


@tangent(np.fft.fftshift, *_also("fftshift"))
def tan_fftshift(ans, x, axes=None):
    d[ans] = np.fft.fftshift(d[x], axes)


@adjoint(np.fft.ifftshift, *_also("ifftshift"))
def adj_ifftshift(ans, x, axes=None):
    d[x] = np.fft.fftshift(d[ans], axes)


@tangent(np.fft.ifftshift, *_also("ifftshift"))
def tan_ifftshift(ans, x, axes=None):
    d[ans] = np.fft.ifftshift(d[x], axes)


# --- SciPy's real transforms: the transpose of an orthonormal one is its inverse ---------------

if sfft is not None:

    @adjoint(sfft.dct)
    def adj_dct(ans, x, type=2, n=None, axis=-1, norm=None):
        if n is None:
            d[x] = rt.unreal(d[ans], x, "dct", type, None, (axis,), norm)
        else:
            d[x] = rt.unreal(d[ans], x, "dct", type, (n,), (axis,), norm)

    @tangent(sfft.dct)
    def tan_dct(ans, x, type=2, n=None, axis=-1, norm=None):
        d[ans] = sfft.dct(d[x], type, n, axis, norm)

    @adjoint(sfft.dctn)
    def adj_dctn(ans, x, type=2, s=None, axes=None, norm=None):
        d[x] = rt.unreal(d[ans], x, "dct", type, s, axes, norm)

    @tangent(sfft.dctn)
    def tan_dctn(ans, x, type=2, s=None, axes=None, norm=None):
        d[ans] = sfft.dctn(d[x], type, s, axes, norm)

    @adjoint(sfft.idct)
    def adj_idct(ans, x, type=2, n=None, axis=-1, norm=None):
        if n is None:
            d[x] = rt.unreal(d[ans], x, "idct", type, None, (axis,), norm)
        else:
            d[x] = rt.unreal(d[ans], x, "idct", type, (n,), (axis,), norm)

    @tangent(sfft.idct)
    def tan_idct(ans, x, type=2, n=None, axis=-1, norm=None):
        d[ans] = sfft.idct(d[x], type, n, axis, norm)

    @adjoint(sfft.idctn)
    def adj_idctn(ans, x, type=2, s=None, axes=None, norm=None):
        d[x] = rt.unreal(d[ans], x, "idct", type, s, axes, norm)

    @tangent(sfft.idctn)
    def tan_idctn(ans, x, type=2, s=None, axes=None, norm=None):
        d[ans] = sfft.idctn(d[x], type, s, axes, norm)

    @adjoint(sfft.dst)
    def adj_dst(ans, x, type=2, n=None, axis=-1, norm=None):
        if n is None:
            d[x] = rt.unreal(d[ans], x, "dst", type, None, (axis,), norm)
        else:
            d[x] = rt.unreal(d[ans], x, "dst", type, (n,), (axis,), norm)

    @tangent(sfft.dst)
    def tan_dst(ans, x, type=2, n=None, axis=-1, norm=None):
        d[ans] = sfft.dst(d[x], type, n, axis, norm)

    @adjoint(sfft.dstn)
    def adj_dstn(ans, x, type=2, s=None, axes=None, norm=None):
        d[x] = rt.unreal(d[ans], x, "dst", type, s, axes, norm)

    @tangent(sfft.dstn)
    def tan_dstn(ans, x, type=2, s=None, axes=None, norm=None):
        d[ans] = sfft.dstn(d[x], type, s, axes, norm)

    @adjoint(sfft.idst)
    def adj_idst(ans, x, type=2, n=None, axis=-1, norm=None):
        if n is None:
            d[x] = rt.unreal(d[ans], x, "idst", type, None, (axis,), norm)
        else:
            d[x] = rt.unreal(d[ans], x, "idst", type, (n,), (axis,), norm)

    @tangent(sfft.idst)
    def tan_idst(ans, x, type=2, n=None, axis=-1, norm=None):
        d[ans] = sfft.idst(d[x], type, n, axis, norm)

    @adjoint(sfft.idstn)
    def adj_idstn(ans, x, type=2, s=None, axes=None, norm=None):
        d[x] = rt.unreal(d[ans], x, "idst", type, s, axes, norm)

    @tangent(sfft.idstn)
    def tan_idstn(ans, x, type=2, s=None, axes=None, norm=None):
        d[ans] = sfft.idstn(d[x], type, s, axes, norm)


# --- which rules serve complex values as written -----------------------------------------------

_FFTS = tuple(f for name in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft",
                              "rfft2", "irfft2", "rfftn", "irfftn", "hfft", "ihfft",
                              "fftshift", "ifftshift")
              for f in (getattr(np.fft, name), *_also(name)))

COMPLEX_READY = frozenset({
    # holomorphic: bz = bw * f'(z), the real rule
    gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.USub, gast.UAdd,
    np.add, np.subtract, np.multiply, np.divide, np.power, np.negative, np.positive,
    np.exp, np.expm1, np.log, np.log1p, np.log2, np.log10, np.sqrt, np.square, np.reciprocal,
    np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh, np.arcsin, np.arccos, np.arctan,
    np.arctanh,
    # linear and bilinear: the transpose (no conjugate)
    gast.MatMult, np.matmul, np.dot, np.inner, np.outer, np.tensordot, np.einsum, np.kron,
    np.sum, np.mean, np.cumsum, operator.getitem, np.reshape, np.ravel, np.transpose,
    np.ndarray.T, np.roll, np.where, np.conjugate, complex, np.real, np.ndarray.real,
    *_FFTS,
    # moving, joining, splitting, selecting and writing elements; holomorphic products and
    # solves; convolutions (their runtime adjoints correlate without conjugating)
    operator.setitem, np.pad, np.append, np.insert, np.convolve, np.correlate, np.asarray,
    np.ascontiguousarray, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.array,
    np.broadcast_to, np.concatenate, np.stack, np.hstack, np.vstack, np.dstack,
    np.column_stack, np.copy, np.diag, np.diagonal, np.expand_dims, np.flip, np.fliplr,
    np.flipud, np.moveaxis, np.repeat, np.rot90, np.squeeze, np.swapaxes, np.take,
    np.take_along_axis, np.tile, np.trace, np.tril, np.triu, np.split, np.array_split,
    np.hsplit, np.vsplit, np.dsplit, np.delete, np.rollaxis, np.diff,
    np.ediff1d, np.prod, np.cumprod, np.nansum, np.nanmean, np.nancumsum, np.average,
    np.polyval, np.exp2, np.arccosh, np.float_power, np.linalg.solve,
    np.linalg.inv, np.linalg.det, np.linalg.matrix_power, np.linalg.multi_dot,
    np.linalg.eig, np.linalg.eigvals,  # (their rules are complex_rules')
    np.linalg.pinv, np.linalg.lstsq, np.linalg.qr,  # (their runtime adjoints take them)
    builtins.sum, tuple, list,
    cmath.exp, cmath.log, cmath.log10, cmath.sqrt, cmath.sin, cmath.cos, cmath.tan, cmath.sinh,
    cmath.cosh, cmath.tanh, cmath.asin, cmath.acos, cmath.atan, cmath.asinh, cmath.acosh,
    cmath.atanh, cmath.rect,
    # the linear helpers of generated gradients (a gradient differentiated again: hvp)
    rt.unbroadcast, rt.unreduce, rt.add_into, rt.broadcast_like, rt.reduce_like, rt.unindex,
    rt.fitted, rt.unrfftn, rt.unirfftn, rt.matmul_adjoint_a, rt.matmul_adjoint_b, rt.dot_adjoint_a,
    rt.dot_adjoint_b, rt.inner_adjoint, rt.tensordot_adjoint, rt.einsum_adjoint, rt.unreal,
    rt.real_transform, rt.convolve_grads, rt.correlate_grads, rt.zero_index, rt.written,
    rt.unpad, rt.unappend_array, rt.uninsert, rt.grad_like, rt.diag_adjoint, rt.undiagonal,
    rt.untrace,
    # the adjoints of eig and of the complex decompositions (their tangents: runtime_rules)
    rt.eig_adjoint, rt.eigvals_adjoint, rt.eigh_complex_adjoint, rt.eigvalsh_complex_adjoint,
    rt.slogdet_complex_adjoint, rt.svdvals_complex_adjoint, rt.svd_complex_adjoint,
    rt.cholesky_complex_adjoint, rt.qr_adjoint, rt.pinv_adjoint, rt.lstsq_adjoint,
})

if sfft is not None:
    COMPLEX_READY |= {getattr(sfft, k + n) for k in ("dct", "idct", "dst", "idst")
                      for n in ("", "n")}
    import scipy.linalg as sla  # (holomorphic: their Fréchet derivatives serve as written)

    from runtime.linalg import MATRIX_FUNCTIONS
    COMPLEX_READY |= {getattr(sla, n) for n in MATRIX_FUNCTIONS} \
        | {rt.matrix_function_adjoint}

# functions whose partials are real whatever their arguments: not projected again
REAL_PARTIALS = frozenset({np.real, rt.unrfftn})


# --- kinds: which calls make complex values, keep their argument's kind, or leave it ------------
# (passes/check_kinds.py finds the values that may be complex with these)

REAL_RESULTS = frozenset({
    np.abs, np.absolute, builtins.abs, np.real, np.imag, np.angle, np.isreal, np.iscomplex,
    np.isnan, np.isfinite, np.isinf, np.linalg.norm, np.linalg.eigvalsh, np.linalg.cond,
    np.linalg.matrix_rank, cmath.isfinite, cmath.isnan, cmath.isinf, cmath.phase, cmath.polar,
    rt.unrfftn, rt.complex_moduli,
    *(getattr(np.linalg, n) for n in ("svdvals",) if hasattr(np.linalg, n))})
# the items of tuple results that are real whatever the argument (eigh's eigenvalues)
REAL_ITEMS = {np.linalg.eigh: frozenset({0}), np.linalg.slogdet: frozenset({1}),
              np.linalg.svd: frozenset({1}), np.linalg.lstsq: frozenset({1, 2, 3})}


def _of_ffts(*names: str) -> frozenset:
    """These functions of np.fft and, where SciPy is installed, scipy.fft."""
    return frozenset(getattr(m, n) for m in (np.fft, sfft) if m is not None for n in names
                     if hasattr(m, n))


REAL_RESULTS |= _of_ffts("irfft", "irfft2", "irfftn", "hfft", "fftfreq", "rfftfreq")
# of the complex modules' functions, those whose result is complex where their argument is
KEEP_KIND = _of_ffts("fftshift", "ifftshift", "dct", "idct", "dst", "idst", "dctn", "idctn",
                     "dstn", "idstn")
COMPLEX_RESULTS = frozenset({builtins.complex, np.linalg.eig, np.linalg.eigvals, np.roots,
                             rt.unirfftn})
COMPLEX_MODULES = ("cmath", "numpy.fft", "scipy.fft", "numpy.lib.scimath", "numpy.emath",
                   "numpy.lib._scimath_impl")
