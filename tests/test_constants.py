"""Non-differentiable functions (``transpiler.rules.nondiff.NONDIFF``) and constants.

Calling them on differentiated values inside a differentiated function works, and their result
contributes no gradient: every case here is compared with central finite differences, which see
the piecewise-constant functions as constant at points away from their jumps. The other half:
functions that look like constant makers but depend smoothly on a float argument (``np.full``'s
fill value, ``np.linspace``'s end points, ``np.random.normal``'s ``loc``) must never give a
silently zero gradient: either a rule gives the right one or the compiler refuses the call.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.util import make
from transpiler import NoRuleError, check_grad, value_and_grad
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, key_name

# Away from the jumps of floor/round/.../x // 0.3 (by far more than the finite-difference step).
X = np.array([0.37, -1.62, 2.41, 1.13])

# (id, body of f(x) returning a scalar); x is X, a float64 array.
CASES = [
    ("ones_like+floor", "np.sum(x * np.ones_like(x)) + np.sum(np.floor(x) * x)"),
    ("zeros_like+ceil", "np.sum(np.zeros_like(x) + x * np.ceil(x))"),
    ("empty_like-shape", "np.sum(x * np.shape(np.empty_like(x))[0])"),
    ("trunc+rint", "np.sum(x * np.trunc(x) + np.rint(x) * x)"),
    ("round+around+fix", "np.sum((np.round(x, 1) + np.around(x) + np.fix(x)) * x)"),
    ("builtin-round+int", "x[0] * round(x[2], 1) + x[1] * int(x[2]) + x[3] * float(len(x))"),
    ("floor_divide", "np.sum(np.floor_divide(x, 0.3) * x)"),
    ("sign+signbit", "np.sum(np.sign(x) * x + np.signbit(x) * x * x)"),
    ("argmax+argmin", "x[np.argmax(x)] * x[np.argmin(x)] * 2.0"),
    ("argsort", "np.sum(x[np.argsort(x)] * np.array([1.0, 2.0, 3.0, 4.0]))"),
    ("argwhere+nonzero", "np.sum(x * np.size(np.argwhere(x > 0.0))) "
                         "+ np.sum(x[np.nonzero(x > 2.0)])"),
    ("flatnonzero+count_nonzero", "np.sum(x[np.flatnonzero(x > 0.0)] * np.count_nonzero(x > 1.0))"),
    ("searchsorted+digitize", "np.sum(x * np.searchsorted(np.sort(x), x) "
                              "+ x * np.digitize(x, np.array([-1.0, 0.0, 1.0])))"),
    ("isfinite+isnan+isinf", "np.sum(np.where(np.isfinite(x) & ~np.isnan(x) & ~np.isinf(x), "
                             "x, 0.0))"),
    ("isclose+allclose", "np.sum(x * np.isclose(x, 1.13)) + x[0] * np.allclose(x, x)"),
    ("array_equal", "x[0] * np.array_equal(x, x) + x[1] * np.array_equiv(x, 2.0 * x)"),
    ("comparisons", "np.sum(x * np.greater(x, 0.0) + x * np.less_equal(x, 1.0) "
                    "+ x * np.not_equal(x, 0.5))"),
    ("logical", "np.sum(x * np.logical_and(x > 0.0, np.logical_not(x > 2.0)) "
                "+ x * np.logical_xor(x > 0.0, x > 1.0))"),
    ("any+all", "np.sum(x * np.any(x > 2.0) + x * np.all(x > -5.0) + x * builtins_all)"),
    ("eye+identity+tri", "np.sum(x * np.eye(4)[0] + x * np.identity(4)[1] + x * np.tri(4)[2])"),
    ("zeros+ones+empty", "np.sum(x * np.ones(4) + np.zeros(4) * x) + 0.0 * np.size(np.empty(2))"),
    ("ndim+size+shape", "np.sum(x * np.ndim(x) + x * np.size(x) + x * np.shape(x)[0])"),
    ("math", "x[0] * math.floor(x[2]) * math.ceil(x[1]) + x[1] * math.trunc(x[3]) "
             "+ x[3] * math.factorial(math.floor(x[2])) + x[2] * math.isclose(x[0], 0.37)"),
    ("math-tests", "x[0] * math.isfinite(x[1]) + x[1] * math.isnan(x[1]) "
                   "+ x[2] * math.isinf(x[2])"),
]


def _f(body: str):
    # builtins_all: the builtin ``all`` on differentiated values, bound through a name
    return make(f"def f(x):\n    builtins_all = all(x > -5.0)\n    return {body}\n")


# Index expressions that call functions, and the // operator (piecewise constant)
INDEX_AND_FLOORDIV = [
    pytest.param("x[np.argsort(x)[0]] * 2.0", id="argsort-in-index"),
    pytest.param("np.sum(x[np.nonzero(x > 2.0)[0]])", id="nonzero-in-index"),
    pytest.param("np.sum((x // 0.3) * x)", id="floordiv-operator"),
]


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("body", [pytest.param(b, id=i) for i, b in CASES]
                         + INDEX_AND_FLOORDIV)
@pytest.mark.filterwarnings("ignore:numpy.fix is deprecated:DeprecationWarning")  # NumPy 2.4
def test_nondiff_calls_contribute_no_gradient(body, optimize):
    check_grad(_f(body), X.copy(), optimize=optimize)


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
def test_index_from_a_nondiff_call_assigned_first(optimize):
    """The workaround of the known bug above: name the index first."""
    f = make("def f(x):\n    i = np.argsort(x)[0]\n    j = np.nonzero(x > 2.0)[0]\n"
             "    return x[i] * 2.0 + np.sum(x[j])\n")
    g = check_grad(f, X.copy(), optimize=optimize)
    np.testing.assert_allclose(g, [0.0, 2.0, 1.0, 0.0])


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
def test_floor_times_x_gradient_is_floor(optimize):
    """d/dx sum(x * 1 + floor(x) * x) = 1 + floor(x): the floor itself contributes nothing."""
    f = make("def f(x):\n    return np.sum(x * np.ones_like(x)) + np.sum(np.floor(x) * x)\n")
    g = check_grad(f, X.copy(), optimize=optimize)
    np.testing.assert_allclose(g, 1.0 + np.floor(X))


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
def test_nondiff_on_python_floats(optimize):
    f = make("def f(x):\n    return math.floor(x) * x + x * np.sign(x) + x * round(x)\n")
    g = check_grad(f, 1.3, optimize=optimize)
    assert type(g) is float and g == pytest.approx(1.0 + 1.0 + 1.0)


# --- the table itself -------------------------------------------------------------------------

def test_every_nondiff_entry_is_callable_and_has_no_rule():
    assert NONDIFF, "the table is empty"
    assert all(callable(f) for f in NONDIFF), [f for f in NONDIFF if not callable(f)]
    both = sorted(key_name(f) for f in NONDIFF if f in ADJOINTS)
    assert not both, f"functions both non-differentiable and with an adjoint rule: {both}"


def _float_ufuncs():
    return sorted((f for f in NONDIFF if isinstance(f, np.ufunc)
                   and any(t.startswith("d" * f.nin) for t in f.types)), key=lambda f: f.__name__)


@pytest.mark.parametrize("ufunc", _float_ufuncs(), ids=lambda f: f.__name__)
def test_nondiff_ufuncs_are_piecewise_constant(ufunc):
    """Each float ufunc of the table gives the same result a small step away from generic
    points in each argument: zero is its true derivative there (a smooth one would move)."""
    rng = np.random.default_rng(7)
    args = [rng.uniform(-3.0, 3.0, 50) for _ in range(ufunc.nin)]
    base = ufunc(*args)
    for i in range(ufunc.nin):
        for step in (1e-7, -1e-7):
            moved = list(args)
            moved[i] = args[i] + step
            np.testing.assert_array_equal(ufunc(*moved), base, err_msg=f"argument {i}")


# --- look-alikes that are NOT constant --------------------------------------------------------

# Each depends smoothly on x: a compiled gradient must be right, or the call refused.
SMOOTH = [
    ("full", "np.sum(np.full(4, x[0]) * x)"),
    ("full_like", "np.sum(np.full_like(x, x[1]) * x)"),
    ("arange", "np.sum(np.arange(x[0], 3.0) * 2.0)"),
    ("linspace", "np.sum(np.linspace(x[0], x[2], 5) * np.arange(5.0))"),
    ("logspace", "np.sum(np.logspace(x[0], 1.0, 3))"),
    ("geomspace", "np.sum(np.geomspace(x[2], 5.0, 3))"),
    ("meshgrid", "np.sum(np.meshgrid(x, x)[0] * np.meshgrid(x, x)[1])"),
    ("bincount-weights", "np.sum(np.bincount(np.array([0, 1, 1, 2]), weights=x) "
                         "* np.array([1.0, 2.0, 3.0]))"),
    ("heaviside", "np.sum(np.heaviside(np.array([0.0, 1.0, -1.0, 0.0]), x) * x)"),
    ("remainder", "np.sum(np.remainder(x, 0.3) * x)"),
    ("copysign", "np.sum(np.copysign(x, -1.0) * x)"),
    ("random.normal", "np.sum(np.random.normal(x, 1.0) * x)"),
    ("random.uniform", "np.sum(np.random.uniform(x, x + 1.0) * x)"),
]


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("body", [c[1] for c in SMOOTH], ids=[c[0] for c in SMOOTH])
def test_smooth_lookalikes_are_never_silently_zero(body, optimize):
    # reseeding inside f makes the random draws a deterministic (and differentiable) function
    f = make(f"def f(x):\n    np.random.seed(0)\n    return {body}\n")
    try:
        check_grad(f, X.copy(), optimize=optimize)
    except NoRuleError:
        pass  # refused: fine, the user gets an error instead of a wrong gradient


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
def test_random_draws_keep_the_random_stream(optimize):
    """A draw whose result is unused still advances the generator: the compiled function sees
    the same numbers as the original (calls of NONDIFF functions may be dropped when unused,
    which is why the draws are not in the table)."""
    f = make("def f(x):\n    u = np.random.rand(3)\n    z = np.random.randn(4)\n"
             "    w = np.random.normal(0.0, 1.0, size=np.shape(x))\n"
             "    return np.sum(z * x + w * x)\n")
    np.random.seed(3)
    expected = f(X)
    np.random.seed(3)
    np.random.rand(3)
    z = np.random.randn(4)
    w = np.random.normal(0.0, 1.0, size=4)
    np.random.seed(3)
    value, g = value_and_grad(f, optimize=optimize)(X)
    assert value == expected
    np.testing.assert_allclose(g, z + w)

