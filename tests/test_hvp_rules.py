"""Hessian-vector products (forward over reverse) over the adjoint rules' spec table.

For every case of ``tests/test_rules.py`` (the scalar function ``sum(expr * u)``) and its first
differentiable argument ``i`` (each one, for the last shapes of each spec),
``hvp(f, wrt=i)(*args, v)`` runs the generated gradient of ``f`` in forward mode along a random
``v``. It must equal the central difference of the gradient,
``(grad(x + h v) - grad(x - h v)) / 2h``, and be shaped like the argument. This
checks the tangent rules of everything a generated gradient calls: the runtime helpers
(``rt.reductions.*_grad``, ``rt.shapes.*``, ``rt.linalg.*_adjoint`` ...) and the functions the
adjoint templates are written with.

The known failures of the spec table (refusals in reverse mode) stay strict xfails.
Piecewise-linear cases are fine (their Hessian is 0 on either side of a kink the samples avoid);
the few cases whose Hessian is undefined at the sample point are skipped (``SKIP``).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.rule_specs import build, case_seed, make_args
from tests.test_rules import CASES as REVERSE_CASES
from tests.util import rand
from transpiler import grad, hvp
from transpiler.errors import NoRuleError

_TIE = ("exact ties between different elements (a constant argument): the gradient jumps as "
        "the tie breaks, so its central differences are meaningless (the Hessian is 0 on "
        "either side)")
_DEGENERATE = ("equal eigen- or singular values: the gradient depends on the choice of their "
               "vectors, its derivative is undefined (the tangent divides by their gaps: NaN)")

# second derivatives not supported yet, refused: through the singular vectors of a complex matrix
# (NotImplementedError when run: its singular values are fine), a root whose function is read
# only as called (rt.implicit_root) (NoRuleError, at the gradient's line), np.histogram's density
# and expm_multiply on a grid of times (NotImplementedError when run)
_NO_SECOND = "second derivatives through these are not supported yet: refused"


def _second_order_refusal(spec):
    """The exception hvp raises for ``spec`` (None: it computes the product)."""
    if "rt.implicit_root(" in spec.expr or "rt.implicit_system(" in spec.expr:
        return NoRuleError  # (roots read only as called)
    if "expm_multiply" in spec.expr and "start=" in spec.expr:  # (on a grid of times)
        return NotImplementedError
    if "np.histogram" in spec.expr and "density=True" in spec.expr:
        return NotImplementedError
    if spec.expr.startswith("q, r = sla.qr(a); r * r"):  # (forward mode refuses it)
        return NotImplementedError
    complex_matrix = "1j" in spec.expr
    if spec.key is np.linalg.svd and complex_matrix and "compute_uv=False" not in spec.expr:
        return NotImplementedError
    return None


SKIP = {
    "np.max(np.concatenate((a, b)))-(2,)x(1,)": _TIE,
    "np.min(np.concatenate((b, a)), axis=0)-(2, 3)x(1, 3)": _TIE,
    "np.nanmin(np.concatenate((a, b)))-(2,)x(2,)": _TIE,
    "np.ptp(np.concatenate((a, b)), axis=0)-(2, 2)x(1, 2)": _TIE,
    "np.linalg.norm(np.concatenate((a, b)), -np.inf)-(2,)x(1,)": _TIE,
    "np.median(np.concatenate((a, b)))-(2,)x(1,)": _TIE,
    "np.median(np.concatenate((a, b)))-(2,)x(2,)": _TIE,
    "np.quantile(np.concatenate((a, b)), 0.3)-(2,)x(1,)": _TIE,
    "np.linalg.eigh(np.sum(a) * np.eye(3))[0] * np.arange(3.0)-(2, 2)": _DEGENERATE,
    "np.linalg.eigvalsh(np.sum(a) * np.eye(3)) * np.arange(3.0)-(2, 2)": _DEGENERATE,
    "np.linalg.svd(np.sum(a) * np.eye(3, 4))[1] * np.arange(3.0)-(2, 2)": _DEGENERATE,
}


def _cases():
    """The first differentiable argument of every case; every one on the last (usually the
    most broadcast) shapes of each spec, to keep the run short."""
    for k, case in enumerate(REVERSE_CASES):
        spec, shapes = case.values
        marks = list(case.marks)
        if case.id in SKIP:
            marks.append(pytest.mark.skip(reason=SKIP[case.id]))
        refusal = _second_order_refusal(spec)
        if refusal is not None:
            marks.append(pytest.mark.xfail(raises=refusal, strict=True, reason=_NO_SECOND))
        last = k + 1 == len(REVERSE_CASES) or REVERSE_CASES[k + 1].values[0] is not spec
        for i in spec.diff_positions if last else spec.diff_positions[:1]:
            yield pytest.param(spec, shapes, i, id=f"{case.id}-wrt{i}", marks=marks)


CASES = list(_cases())
H = 1e-5  # central differences of the gradient: error O(H^2), far below the tolerance


def _shifted(args, i, v, h):
    moved = list(args)
    moved[i] = args[i] + h * v
    return moved


@pytest.mark.parametrize("spec, shapes, i", CASES)
def test_rule_hvp(spec, shapes, i):
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = make_args(spec, shapes, seed)
    f = build(spec.expr, args, seed + 1)
    x = args[i]
    v = rand(np.shape(x), -1.0, 1.0, seed=seed + 11 + i)
    v = v if isinstance(x, np.ndarray) else float(v)
    product = hvp(f, wrt=i)(*args, v)
    if isinstance(x, np.ndarray):
        assert isinstance(product, np.ndarray) and product.shape == x.shape, \
            f"H v of shape {np.shape(product)} for an argument of shape {x.shape}"
    else:
        assert np.ndim(product) == 0, f"H v of shape {np.shape(product)} for a float"
    gradient = grad(f, wrt=i)
    expected = (np.asarray(gradient(*_shifted(args, i, v, H)), dtype=float)
                - np.asarray(gradient(*_shifted(args, i, v, -H)), dtype=float)) / (2 * H)
    scale = 1.0 + max(np.abs(expected).max(initial=0.0),
                      np.abs(np.asarray(gradient(*args), dtype=float)).max(initial=0.0))
    np.testing.assert_allclose(np.asarray(product, dtype=float), expected, rtol=1e-4,
                               atol=1e-6 * scale)
