"""Every tangent (forward-mode) rule, checked against finite differences, and against the
adjoint rule of the same key (the dot-product test).

The cases are the spec table of the adjoint rules (``tests/test_rules.py``): the same
expressions, argument domains and shapes. For each case the function returns the expression
itself (an array, a scalar or a tuple), and:

- ``jvp(f, args, v)`` with a random tangent ``v`` for every differentiable argument must equal
  the central difference ``(f(x + h v) - f(x - h v)) / 2h``, and the tangent must have the
  value's shape, type and dtype;
- ``<u, J v>`` from ``jvp`` must equal ``<J^T u, v>`` from ``vjp`` for a random covector ``u``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.rule_specs import ARG_NAMES, SPEC_GLOBALS, case_seed, make_args
from tests.test_rules import CASES as REVERSE_CASES
from tests.test_rules import NUMBER_CASES
from tests.util import make, rand
from transpiler import jvp, vjp
from transpiler.rules.registry import ADJOINTS, TANGENTS, key_name

# Cases marked as known failures in the adjoint specs are refusals (which forward mode makes too)
# or reverse-mode bugs; forward mode runs these ones correctly.
FORWARD_ONLY = {"np.array([[a, b], [b, a]])-()x()"}
# the singular vectors of a complex matrix: NumPy fixes no phase of theirs, so forward mode
# (which cannot tell whether the result depends on one) refuses them
_REVERSE_ONLY = ("forward mode refuses the singular vectors of a complex matrix and the extra "
                 "columns of scipy.linalg.qr's q (NotImplementedError)")


def _reverse_only(spec) -> bool:
    if spec.expr.startswith("q, r = sla.qr(a); r * r"):  # (of a tall matrix, mode='full')
        return True
    return spec.key is np.linalg.svd and "1j" in spec.expr and "compute_uv=False" not in spec.expr


def _forward_marks(case):
    """The case with the forward-mode refusal it must raise, where it has one."""
    if not _reverse_only(case.values[0]):
        return case
    return pytest.param(*case.values, id=case.id, marks=pytest.mark.xfail(
        raises=NotImplementedError, strict=True, reason=_REVERSE_ONLY))


CASES = [pytest.param(*case.values, id=case.id) if case.id in FORWARD_ONLY else
         _forward_marks(case) for case in REVERSE_CASES]
DOT_CASES = [_forward_marks(case) for case in REVERSE_CASES]


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _flat(value) -> np.ndarray:
    leaves = _leaves(value)
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in leaves]) \
        if leaves else np.zeros(0)


def _function(spec, n: int):
    names = ARG_NAMES[:n]
    *statements, expr = spec.expr.split("; ")
    prelude = "".join(f"    {line}\n" for line in statements)
    return make(f"def f({', '.join(names)}):\n{prelude}    return {expr}\n", **SPEC_GLOBALS)


def _tangents(spec, args, seed: int) -> tuple:
    out = []
    for i, x in enumerate(args):
        if i in spec.bools:
            out.append(None)
        else:
            out.append(rand(np.shape(x), -1.0, 1.0, seed=seed + i) if np.ndim(x)
                       else rand((), -1.0, 1.0, seed=seed + i))
    return tuple(out)


def _shift(args, tangents, h: float) -> tuple:
    return tuple(x if t is None else x + h * t for x, t in zip(args, tangents, strict=True))


def _numeric_jvp(f, args, tangents, h: float = 1e-6) -> np.ndarray:
    return (_flat(f(*_shift(args, tangents, h))) - _flat(f(*_shift(args, tangents, -h)))) / (2 * h)


def _same_structure(tangent, value) -> None:
    if isinstance(value, (tuple, list)):
        assert isinstance(tangent, (tuple, list)) and len(tangent) == len(value)
        for t, v in zip(tangent, value, strict=True):
            _same_structure(t, v)
    elif isinstance(value, np.ndarray):
        assert isinstance(tangent, np.ndarray), f"tangent {type(tangent).__name__} of an array"
        assert tangent.shape == value.shape, (tangent.shape, value.shape)
        if value.dtype.kind == "f":
            assert tangent.dtype == value.dtype, (tangent.dtype, value.dtype)
    else:
        assert np.ndim(tangent) == 0, f"tangent of shape {np.shape(tangent)} for a scalar"


@pytest.mark.parametrize("spec, shapes", CASES)
def test_rule_jvp(spec, shapes):
    check_jvp_case(spec, shapes)


def check_jvp_case(spec, shapes) -> None:
    """``jvp`` of a spec case against central differences along a random direction."""
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = make_args(spec, shapes, seed)
    f = _function(spec, len(args))
    tangents = _tangents(spec, args, seed + 7)
    value, tangent = jvp(f, args, tangents)
    np.testing.assert_allclose(_flat(value), _flat(f(*args)), rtol=1e-12, atol=1e-12)
    _same_structure(tangent, value)
    expected = _numeric_jvp(f, args, tangents)
    np.testing.assert_allclose(_flat(tangent), expected, rtol=max(spec.rtol, 1e-5),
                               atol=max(spec.atol, 1e-6) * (1 + np.abs(expected).max(initial=0)))


@pytest.mark.parametrize("spec, shapes", NUMBER_CASES)
def test_rule_jvp_on_numpy_scalars(spec, shapes):
    """The numbers of a case as NumPy scalars (as ``x[i]`` of a float64 array is one)."""
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = tuple(a if isinstance(a, bool) else np.float64(a)
                 for a in make_args(spec, shapes, seed))
    f = _function(spec, len(args))
    tangents = _tangents(spec, args, seed + 7)
    _, tangent = jvp(f, args, tangents)
    expected = _numeric_jvp(f, args, tangents)
    np.testing.assert_allclose(_flat(tangent), expected, rtol=max(spec.rtol, 1e-5),
                               atol=max(spec.atol, 1e-6) * (1 + np.abs(expected).max(initial=0)))


@pytest.mark.parametrize("spec, shapes", DOT_CASES)
def test_rule_dot_product(spec, shapes):
    """<u, J v> (forward) == <J^T u, v> (reverse)."""
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = make_args(spec, shapes, seed)
    f = _function(spec, len(args))
    tangents = _tangents(spec, args, seed + 7)
    value, tangent = jvp(f, args, tangents)
    u = rand(_flat(value).shape, -1.0, 1.0, seed=seed + 3)
    forward = float(u @ _flat(tangent))
    value, pullback = vjp(f, *args)
    leaves, k = [], 0
    for leaf in _leaves(value):
        size = np.size(leaf)
        part = u[k:k + size]
        leaves.append(part.reshape(np.shape(leaf)).astype(np.asarray(leaf).dtype)
                      if np.ndim(leaf) else float(part[0]))
        k += size
    seed_value = leaves[0] if not isinstance(value, (tuple, list)) else type(value)(leaves)
    grads = pullback(seed_value)
    reverse = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(grads, tangents, strict=True)
                  if t is not None)
    assert np.isclose(forward, reverse, rtol=1e-7, atol=1e-9), (forward, reverse)


def test_every_adjoint_has_a_tangent():
    missing = sorted(key_name(k) for k in ADJOINTS if k not in TANGENTS)
    assert not missing, f"{len(missing)} rules have no tangent: {', '.join(missing)}"
