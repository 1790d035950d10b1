"""Specs of the complex rules and the FFTs (rules/complex_rules.py).

Arguments are real; complex values are made inside (``a + 1j * b``), and each expression is a
real function of them, so the finite differences in ``a`` and ``b`` check a rule in the real and
the imaginary direction of its complex argument. A complex result is read through ``np.real``
of its product with ``0.6 - 0.8j`` (both parts, in proportions no rule could get right by
chance).
"""

import cmath
import operator

import numpy as np

from tests.rule_specs.common import AWAY, SCALAR2, OpSpec

try:
    import scipy.fft as sfft
except ImportError:  # (no scipy.fft rules either)
    sfft = None

W = "(0.6 - 0.8j)"  # a complex result is read as np.real(result * W)
PAIR = (((), ()), ((3,), (3,)), ((2, 3), (2, 3)))
VEC8 = (((8,),), ((7,),))
VEC8_2 = (((8,), (8,)), ((7,), (7,)))
MAT = (((4, 6),), ((3, 4, 5),))
MAT_2 = (((4, 6), (4, 6)), ((3, 4, 5), (3, 4, 5)))
HALF_2 = (((5,), (5,)), ((4,), (4,)))  # a half spectrum: irfft's argument
HALF_MAT_2 = (((4, 4), (4, 4)), ((3, 4, 3), (3, 4, 3)))


def _fft(name: str, args: str, shapes, nargs: int = 1, scipy: bool = False) -> OpSpec | None:
    """A spec of ``np.fft.<name>`` (``scipy``: of ``scipy.fft.<name>``, None without SciPy):
    of ``a`` (real), or of ``a + 1j * b``."""
    z = "a" if nargs == 1 else "(a + 1j * b)"
    module, prefix = (sfft, "sfft") if scipy else (np.fft, "np.fft")
    if module is None:
        return None
    return OpSpec(getattr(module, name), f"np.real({prefix}.{name}({z}{args}) * {W})", nargs,
                  shapes=shapes)


def _scipy_twin(spec: OpSpec) -> OpSpec | None:
    """The spec of the scipy.fft function of the same name as ``spec``'s np.fft one."""
    if sfft is None:
        return None
    name = spec.key.__name__
    return OpSpec(getattr(sfft, name), spec.expr.replace(f"np.fft.{name}(", f"sfft.{name}("),
                  spec.nargs, spec.domain, spec.shapes)


SPECS = [
    # real and imaginary parts, modulus and argument, of complex and of real values
    OpSpec(np.real, f"np.real(np.exp(1j * a) * b * {W})", 2, shapes=PAIR),
    OpSpec(np.real, "np.real(a) * b", 2, shapes=PAIR),
    OpSpec(np.ndarray.real, "z = np.exp(1j * a) * b; z.real", 2, shapes=PAIR[1:]),
    OpSpec(np.imag, "np.imag(np.exp(1j * a) * b)", 2, shapes=PAIR),
    OpSpec(np.imag, "np.imag(a) + b", 2, shapes=PAIR),
    OpSpec(np.ndarray.imag, "z = np.exp(1j * a) * b; z.imag", 2, shapes=PAIR[1:]),
    OpSpec(complex, "abs(complex(a, b) ** 2 + 1.0)", 2, shapes=SCALAR2),
    OpSpec(complex, "np.real(complex(a, b) * complex(b, 1.0) * (0.6 - 0.8j))", 2,
           shapes=SCALAR2),
    OpSpec(np.abs, "np.abs(a + 1j * b)", 2, AWAY, PAIR, signed=(0, 1)),
    OpSpec(np.abs, "np.abs(np.exp(1j * a) * b) ** 2", 2, shapes=PAIR),
    OpSpec(abs, "abs(a + 1j * b)", 2, AWAY, SCALAR2, signed=(0, 1)),
    OpSpec(np.angle, "np.angle(a + 1j * b)", 2, AWAY, PAIR, signed=(0, 1)),
    OpSpec(np.angle, "np.angle(a - 1j * b, deg=True)", 2, AWAY, PAIR, signed=(0, 1)),
    OpSpec(np.angle, "np.angle(a) + b", 2, AWAY, PAIR, signed=(0,)),  # real: constant
    OpSpec(np.conjugate, f"np.real(np.conjugate(np.exp(1j * a) * b) * {W})", 2, shapes=PAIR),
    OpSpec(np.linalg.norm, "np.linalg.norm(a + 1j * b)", 2, shapes=PAIR[1:]),
    OpSpec(np.linalg.norm, "np.linalg.norm(a - 1j * b, 1)", 2, AWAY, (((3,), (3,)),),
           signed=(0, 1)),
    OpSpec(np.linalg.norm, "np.linalg.norm(a + 1j * b, np.inf, 1)", 2, shapes=(((2, 3), (2, 3)),)),
    OpSpec(np.linalg.norm, "np.linalg.norm(np.exp(1j * a) * b, 'fro')", 2,
           shapes=(((2, 3), (2, 3)),)),
    OpSpec(np.vdot, f"np.real(np.vdot(a + 1j * b, np.exp(1j * b) * a) * {W})", 2,
           shapes=(((3,), (3,)), ((2, 3), (2, 3)))),
    OpSpec(np.matmul, f"np.real(np.sum(np.matmul(a + 1j * b, np.exp(1j * b).T)) * {W})", 2,
           shapes=(((2, 3), (2, 3)),)),
    OpSpec(np.einsum, f"np.real(np.einsum('ij,ij->i', a + 1j * b, np.exp(1j * a)) @ "
           f"np.array([1.0, 2.0j]) * {W})", 2, shapes=(((2, 3), (2, 3)),)),
    # cmath, in the first quadrant (away from every branch cut), and of real values
    *(OpSpec(getattr(cmath, name), f"np.real(cmath.{name}(complex(a, b)) * {W})", 2, AWAY,
             SCALAR2) for name in ("exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh",
                                   "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
                                   "atanh")),
    OpSpec(cmath.exp, f"np.real(cmath.exp(a) * cmath.exp(1j * b) * {W})", 2, shapes=SCALAR2),
    OpSpec(cmath.log, f"np.real(cmath.log(complex(a, b), b + 2.0) * {W})", 2, AWAY, SCALAR2),
    OpSpec(cmath.rect, f"np.real(cmath.rect(a, b) * {W})", 2, shapes=SCALAR2),
    OpSpec(cmath.phase, "cmath.phase(complex(a, b)) * a", 2, AWAY, SCALAR2, signed=(0, 1)),
    OpSpec(cmath.phase, "cmath.phase(a) + b", 2, AWAY, SCALAR2, signed=(0,)),  # real: constant
    # convolutions, padding and insertion, element writes of complex values
    OpSpec(np.convolve, f"np.real(np.convolve(a + 1j * b, np.exp(1j * b)) * {W})", 2,
           shapes=(((5,), (5,)),)),
    OpSpec(np.convolve, f"np.real(np.convolve(np.exp(1j * a), b, 'same') * {W})", 2,
           shapes=(((6,), (3,)),)),
    OpSpec(np.correlate, f"np.real(np.correlate(a + 1j * b, np.exp(1j * b), 'full') * {W})",
           2, shapes=(((5,), (5,)),)),
    OpSpec(np.correlate, f"np.real(np.correlate(np.exp(1j * a), b) * {W})", 2,
           shapes=(((6,), (3,)),)),
    OpSpec(np.correlate, f"np.real(np.correlate(a, np.exp(1j * b), 'same') * {W})", 2,
           shapes=(((6,), (4,)),)),
    OpSpec(np.pad, f"np.real(np.pad(a + 1j * b, 2) * {W})", 2, shapes=PAIR[1:]),
    OpSpec(np.pad, f"np.real(np.pad(np.exp(1j * a), (1, 2), 'reflect') * b[0] * {W})", 2,
           shapes=(((4,), (4,)),)),
    OpSpec(np.append, f"np.real(np.append(a + 1j * b, b * 2j) * {W})", 2, shapes=PAIR[1:]),
    OpSpec(np.insert, f"np.real(np.insert(np.exp(1j * a), 1, b[0] * 1j) * {W})", 2,
           shapes=(((4,), (4,)),)),
    OpSpec(operator.setitem, f"z = a + 1j * b; z[1] = z[0] * 2j; np.real(z * {W})", 2,
           shapes=(((3,), (3,)), ((3, 2), (3, 2)))),
    OpSpec(operator.setitem, f"z = np.exp(1j * a); z[::2] = b[::2]; np.real(z * {W})", 2,
           shapes=(((5,), (5,)),)),
    # the FFTs, of real and of complex values, every norm, lengths cropped and padded
    _fft("fft", "", VEC8),
    _fft("fft", "", VEC8_2, 2),
    _fft("fft", ", 5", VEC8),
    _fft("fft", ", 12, -1, 'ortho'", VEC8_2, 2),
    _fft("fft", ", None, 0, 'forward'", MAT),
    _fft("ifft", "", VEC8_2, 2),
    _fft("ifft", ", 6, 0", MAT),
    _fft("ifft", ", 11, -1, 'ortho'", VEC8),
    _fft("fft2", "", MAT),
    _fft("fft2", ", (3, 8), (0, 1), 'ortho'", MAT_2, 2),
    _fft("ifft2", ", None, (0, -1), 'forward'", MAT_2, 2),
    _fft("ifft2", ", (5, 5)", MAT),
    _fft("fftn", "", MAT_2, 2),
    _fft("fftn", ", (3, 7), (0, 1)", MAT),
    _fft("ifftn", ", None, (1,), 'ortho'", MAT_2, 2),
    _fft("ifftn", ", (2, 6), (-2, -1)", MAT),
    _fft("rfft", "", VEC8),
    _fft("rfft", ", 6, -1, 'ortho'", VEC8),
    _fft("rfft", ", 11, 0, 'forward'", MAT),
    _fft("rfft2", "", MAT),
    _fft("rfft2", ", (3, 7), (0, 1), 'ortho'", MAT),
    _fft("rfftn", "", MAT),
    _fft("rfftn", ", (6, 3), (1, 0)", MAT),
    OpSpec(np.fft.irfft, "np.fft.irfft(a + 1j * b)", 2, shapes=HALF_2),
    OpSpec(np.fft.irfft, "np.fft.irfft(a + 1j * b, 7, -1, 'ortho')", 2, shapes=HALF_2),
    OpSpec(np.fft.irfft, "np.fft.irfft(a + 1j * b, 10, 0, 'forward')", 2,
           shapes=HALF_MAT_2),
    OpSpec(np.fft.irfft2, "np.fft.irfft2(a + 1j * b)", 2, shapes=HALF_MAT_2),
    OpSpec(np.fft.irfft2, "np.fft.irfft2(a - 1j * b, (5, 5), (0, 1), 'ortho')", 2,
           shapes=HALF_MAT_2),
    OpSpec(np.fft.irfftn, "np.fft.irfftn(a + 1j * b)", 2, shapes=HALF_MAT_2),
    OpSpec(np.fft.irfftn, "np.fft.irfftn(a + 1j * b, (3, 6), (0, 1), 'forward')", 2,
           shapes=HALF_MAT_2),
    OpSpec(np.fft.hfft, "np.fft.hfft(a + 1j * b)", 2, shapes=HALF_2),
    OpSpec(np.fft.hfft, "np.fft.hfft(a - 1j * b, 7, -1, 'ortho')", 2, shapes=HALF_2),
    OpSpec(np.fft.hfft, "np.fft.hfft(a + 1j * b, 6, 0, 'forward')", 2, shapes=HALF_MAT_2),
    _fft("ihfft", "", VEC8),
    _fft("ihfft", ", 6, -1, 'ortho'", VEC8),
    _fft("ihfft", ", 9, 0, 'forward'", MAT),
    OpSpec(np.fft.fftshift, "np.fft.fftshift(a) * b", 2, shapes=(((7,), (7,)), ((4, 5), (4, 5)))),
    OpSpec(np.fft.fftshift, f"np.real(np.fft.fftshift(np.fft.fft(a), 0) * {W})", 1,
           shapes=(((6,),), ((4, 5),))),
    OpSpec(np.fft.ifftshift, "np.fft.ifftshift(a, (0, 1)) * b", 2, shapes=(((4, 5), (4, 5)),)),
    OpSpec(np.fft.ifftshift, f"np.real(np.fft.ifftshift(np.fft.fft(a)) * {W})", 1,
           shapes=(((7,),),)),
]

if sfft is not None:  # SciPy's real transforms, every type and norm, lengths cropped and padded
    SPECS += [OpSpec(getattr(sfft, kind), f"sfft.{kind}(a{args}) * b", 2, shapes=shapes)
              for kind in ("dct", "idct", "dst", "idst")
              for args, shapes in ((", 1", (((6,), (6,)),)), (", 2, None, -1, 'ortho'", VEC8_2),
                                   (", 3, 5", (((7,), (5,)),)), (", 4, 9, 0, 'forward'",
                                                                (((6, 2), (9, 2)),)))]
    SPECS += [OpSpec(getattr(sfft, kind), f"sfft.{kind}(a{args}) * b", 2, shapes=shapes)
              for kind in ("dctn", "idctn", "dstn", "idstn")
              for args, shapes in (("", (((3, 4), (3, 4)),)),
                                   (", 3, (5, 2), (1, 0), 'ortho'", (((3, 4), (2, 5)),)),
                                   (", 1, None, (0,), 'forward'", (((4, 3), (4, 3)),)))]
    SPECS.append(OpSpec(sfft.dct, f"np.real(sfft.dct(a + 1j * b, 2) * {W})", 2, shapes=VEC8_2))

SPECS += [twin for spec in SPECS if getattr(spec.key, "__module__", "").startswith("numpy.fft")
          and (twin := _scipy_twin(spec)) is not None]
SPECS = [spec for spec in SPECS if spec is not None]
