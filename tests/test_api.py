"""The public API: wrt forms, decorator forms, value_and_grad, .source, caching, dtypes."""

import inspect
import math
import re
import threading

import numpy as np
import pytest

from tests.util import make, rand
from transpiler import TranspileError, check_grad, grad, supported, value_and_grad
from transpiler.gradient import GradientFunction

F = make("""
def f(x, y, z=2.0):
    return np.sum(x * y + np.sin(x) * z)
""")


def test_wrt_position_name_and_tuple_agree():
    x, y = rand((3,), seed=1), rand((3,), seed=2)
    gx = grad(F)(x, y)
    np.testing.assert_allclose(gx, y + np.cos(x) * 2.0)
    np.testing.assert_array_equal(grad(F, wrt="x")(x, y), gx)
    gx2, gy = grad(F, wrt=(0, "y"))(x, y)
    np.testing.assert_array_equal(gx2, gx)
    np.testing.assert_allclose(gy, x)
    (only,) = grad(F, wrt=(1,))(x, y)
    np.testing.assert_allclose(only, x)


def test_wrt_keyword_argument_and_default():
    x, y = rand((3,), seed=1), rand((3,), seed=2)
    np.testing.assert_allclose(grad(F, wrt="z")(x, y), np.sum(np.sin(x)))
    np.testing.assert_allclose(grad(F, wrt="z")(x, y=y, z=3.0), np.sum(np.sin(x)))
    np.testing.assert_allclose(grad(F)(x=x, y=y, z=1.0), y + np.cos(x))


def test_decorator_forms():
    @grad
    def g(x):
        return x * x

    @grad(wrt=(0, 1))
    def h(x, y):
        return x * y

    assert g(3.0) == 6.0
    assert h(2.0, 5.0) == (5.0, 2.0)


def test_value_and_grad():
    vg = value_and_grad(F, wrt=(0, 1))
    x, y = rand((4,), seed=3), rand((4,), seed=4)
    value, (gx, gy) = vg(x, y)
    assert value == pytest.approx(F(x, y))
    np.testing.assert_allclose(gy, x)
    value, gx = value_and_grad(F)(x, y)
    np.testing.assert_allclose(gx, y + 2.0 * np.cos(x))


def test_value_and_grad_fits_scipy_minimize():
    scipy_optimize = pytest.importorskip("scipy.optimize")
    rosen = make("""
def rosen(p, a=1.0, b=100.0):
    x = np.sum(p * np.array([1.0, 0.0]))
    y = np.sum(p * np.array([0.0, 1.0]))
    return (a - x) ** 2 + b * (y - x ** 2) ** 2
""")
    res = scipy_optimize.minimize(value_and_grad(rosen), np.array([-1.0, 2.0]), jac=True,
                                  method="BFGS")
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-4)


def test_source_is_exposed_before_the_first_call_and_deterministic():
    g1, g2 = grad(F), grad(F, wrt=0)
    assert "def grad_f(x, y, z):" in g1.source
    assert g1.source == g2.source
    fresh = make("""
def f(x, y, z=2.0):
    return np.sum(x * y + np.sin(x) * z)
""")
    assert grad(fresh).source == g1.source


def test_generated_code_shows_in_tracebacks_and_inspect():
    g = grad(F)
    g(rand((2,)), rand((2,)))
    fn = g.compiled_for(rand((2,)), rand((2,))).function  # the variant for two arrays
    assert inspect.getsource(fn).strip().startswith("def grad_f")
    with pytest.raises(ValueError) as info:  # shapes that cannot broadcast
        g(rand((2,)), rand((3,)))
    frames = [tb.tb_frame.f_code.co_filename for tb in _tracebacks(info.value.__traceback__)]
    assert any(name.startswith("<grad of f") for name in frames)


def _tracebacks(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_cache_compiles_once_and_recompiles_new_code():
    calls = []
    import transpiler.gradient as api

    original = api.compile_function

    def counting(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    api.compile_function = counting
    try:
        h = make("def h(x):\n    return x * 3.0\n")
        assert grad(h)(1.0) == 3.0
        assert grad(h)(2.0) == 3.0  # a new wrapper, same entry
        assert len(calls) == 1
        h.__code__ = make("def h(x):\n    return x * 5.0\n").__code__
        assert grad(h)(1.0) == 5.0
        assert len(calls) == 2
        assert grad(h, optimize=False)(1.0) == 5.0  # options are part of the key
        assert len(calls) == 3
    finally:
        api.compile_function = original


def test_redefined_function_gets_a_new_compile():
    h = make("def h(x):\n    return x * 3.0\n")
    g = grad(h)
    assert g(1.0) == 3.0
    h.__code__ = make("def h(x):\n    return x * 7.0\n").__code__
    assert g(1.0) == 7.0  # the same wrapper notices the new code object


def test_threads_compile_once_and_agree():
    h = make("def h(x):\n    return np.sum(np.sin(x) * x)\n")
    g = grad(h)
    x = rand((5,))
    results, errors = [], []

    def work():
        try:
            results.append(g(x))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        np.testing.assert_allclose(r, np.cos(x) * x + np.sin(x))


def test_gradient_mirrors_argument_type_shape_and_dtype():
    h = make("def h(x):\n    return np.sum(x * 2.0)\n")
    g32 = grad(h)(np.ones((2, 3), dtype=np.float32))
    assert g32.dtype == np.float32 and g32.shape == (2, 3) and g32.flags.writeable
    g = grad(make("def h(x):\n    return x * 2.0\n"))(1.5)
    assert type(g) is float and g == 2.0
    mixed = make("def h(x, w):\n    return np.sum(x * w)\n")
    assert grad(mixed)(np.ones(3, np.float32), np.ones(3)).dtype == np.float32


def test_inputs_are_never_modified():
    x = rand((4,))
    x.setflags(write=False)
    y = rand((4,), seed=5)
    y.setflags(write=False)
    before = (x.copy(), y.copy())
    grad(F, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(y, before[1])


def test_integer_boolean_and_complex_arguments_are_refused():
    h = make("def h(x, n):\n    return x * n\n")
    with pytest.raises(TypeError, match="'n'"):
        grad(h, wrt=1)(1.0, 2)
    with pytest.raises(TypeError, match="'x'"):
        grad(h)(np.arange(3), 2.0)
    with pytest.raises(TypeError, match="'x'"):
        grad(h)(True, 2.0)
    with pytest.raises(TranspileError, match="real-valued"):
        grad(h)(1j, 2.0)  # (a complex argument is taken: the result must be real)
    assert grad(h)(1.0, 2) == 2.0  # an int that is not differentiated is fine
    with pytest.raises(TypeError, match="'x'"):
        grad(h)([1.0, 2], 2.0)  # a container holding an int


def test_bad_wrt_is_reported_at_once():
    with pytest.raises(ValueError, match="no parameter named 'w'"):
        grad(F, wrt="w")
    with pytest.raises(ValueError, match="3 positional parameters"):
        grad(F, wrt=5)
    with pytest.raises(TypeError, match="wrt"):
        grad(F, wrt=1.5)


def test_non_scalar_result_is_a_type_error():
    h = make("def h(x):\n    return np.sin(x)\n")
    with pytest.raises(TypeError, match="scalar"):
        grad(h)(np.ones(3))
    assert grad(h)(np.ones(1)).shape == (1,)  # size-1 arrays are scalars


def test_no_source_is_refused_clearly():
    with pytest.raises(TranspileError, match="not a Python function"):
        grad(np.sin)
    import functools

    @functools.lru_cache
    def cached(x):
        return x

    with pytest.raises(TranspileError, match="decorator"):
        grad(cached)


def test_closures_and_import_aliases():
    import math as m

    from numpy import sin as s

    def outer(k):
        def inner(x):
            return s(x) * k + m.exp(x) + numpy_alias.cos(x)
        return inner

    global numpy_alias
    numpy_alias = np
    x = 0.3
    g = grad(outer(2.0))
    assert g(x) == pytest.approx(2.0 * np.cos(x) + np.exp(x) - np.sin(x))
    assert grad(outer(5.0))(x) == pytest.approx(5.0 * np.cos(x) + np.exp(x) - np.sin(x))


def test_module_data_is_read_live():
    h = make("def h(x):\n    return np.sum(x * SCALE)\n", SCALE=2.0)
    g = grad(h)
    assert g(1.0) == 2.0
    h.__globals__["SCALE"] = 3.0
    assert g(1.0) == 3.0


def test_user_names_never_collide_with_generated_ones():
    h = make("""
def h(x, bx, rt, _t1):
    np = x * bx
    b_t1 = np + rt * _t1
    return b_t1 * x
""")
    check_grad(h, 1.3, 0.7, 2.0, 0.5, wrt=(0, 1, 2, 3))


def test_supported_lists_rules():
    names = supported()
    assert "numpy.sin" in names and "math.log" in names and "operator *" in names
    assert "ndarray.T" in names
    assert names == sorted(names)


def test_user_defined_rule_is_used_and_checked():
    sp = pytest.importorskip("scipy.special")
    from transpiler import adjoint, d
    from transpiler.rules.registry import ADJOINTS

    f = make("def f(a):\n    return np.sum(sp.dawsn(a) * 2.0)\n", sp=sp)
    try:
        @adjoint(sp.dawsn)
        def adj_dawsn(ans, x):
            d[x] = d[ans] * (1.0 - 2.0 * x * sp.dawsn(x))

        a = np.array([0.5, 1.5, 4.0])
        np.testing.assert_allclose(grad(f)(a), 2.0 * (1.0 - 2.0 * a * sp.dawsn(a)))
        assert "sp.dawsn(a)" in grad(f).source
        check_grad(f, a)
    finally:
        ADJOINTS.pop(sp.dawsn, None)


@pytest.mark.parametrize("body,message", [
    ("def adj(x, ans):\n    d[x] = d[ans]\n", "first parameter of a rule must be 'ans'"),
    ("def adj(ans, x):\n    d[x] = d[ans] * undefined_thing(x)\n",
     "unknown name 'undefined_thing'"),
    ("def adj(ans, x):\n    d[y] = d[ans]\n", "d[...] must name a parameter"),
    ("def adj(ans, x):\n    d[x] = d[x] * 2\n", "only d[ans] can be read"),
])
def test_bad_rule_templates_are_refused_at_registration(body, message):
    from transpiler import adjoint
    from transpiler.rules.registry import RuleError

    template = make(body, d=None)
    with pytest.raises(RuleError, match=re.escape(message)) as info:
        adjoint(object())(template)
    assert "<test source" in str(info.value)  # the rule's own file and line


def test_complex_data_and_arguments_are_taken_and_complex_results_refused():
    f = make("def f(x, c):\n    return np.sum(np.abs(x * c))\n")
    x, c = np.array([0.5, -1.0]), np.array([1j, 2.0 + 1j])
    np.testing.assert_allclose(grad(f)(x, c), np.sign(x) * np.abs(c), rtol=1e-14)
    assert np.allclose(grad(f)(x, 1j), np.sign(x))
    # JAX's convention: d|x c| / dRe(c) - i d|x c| / dIm(c) = |x| conj(c) / |c|
    np.testing.assert_allclose(grad(f, wrt=1)(x, c), np.abs(x) * np.conj(c) / np.abs(c),
                               rtol=1e-14)
    with pytest.raises(TypeError, match="by keyword"):
        grad(f)(x, c=c)
    g = make("def g(x):\n    return np.sum(np.exp(1j * x))\n")
    with pytest.raises(TranspileError, match="grad needs a real-valued function") as e:
        grad(g)(x)
    assert e.value.lineno == 2


def test_mixed_float32_and_float64_arguments_keep_their_dtypes():
    f = make("def f(a, b):\n    return np.sum(np.sin(a) * b)\n")
    a, b = np.array([0.5, 1.0], dtype=np.float32), np.array([2.0, -1.0])
    ga, gb = grad(f, wrt=(0, 1))(a, b)
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    np.testing.assert_allclose(ga, np.cos(a.astype(float)) * b, rtol=1e-6)
    np.testing.assert_allclose(gb, np.sin(a), rtol=1e-6)


INLINE = """
import math

SCALE = 2.0

def step(x, v, dt=0.1):
    a = -math.sin(x) * SCALE
    return x + dt * v, v + dt * a

def early(x):
    if x > 10.0:
        return x
    return x * x

def simulate(x0, v0):
    x, v = x0, v0
    for i in range(20):
        x, v = step(x, v)
    y = early(x)
    return y + 2.0 * early(v)

def shadowing(x):
    SCALE = 3.0
    x, v = step(x, SCALE)
    return x * v
"""


def test_whole_statement_calls_of_small_helpers_are_inlined():
    simulate = make(INLINE, name="simulate")
    g = grad(simulate, wrt=(0, 1))
    source = g.source_for(0.3, -0.2)
    assert "step_vjp" not in source and "step_x = " in source  # inlined, its names prefixed
    assert "early_vjp.forward" in source  # an early return: compiled as a pair
    check_grad(simulate, 0.3, -0.2, wrt=(0, 1))
    check_grad(simulate, 0.3, -0.2, wrt=(0, 1), optimize=False)


def test_a_helper_whose_globals_the_caller_shadows_is_not_inlined():
    shadowing = make(INLINE, name="shadowing")
    assert "step_vjp.forward" in grad(shadowing).source_for(0.4)
    check_grad(shadowing, 0.4)


def test_stop_gradient_and_nondifferentiable():
    from transpiler import nondifferentiable, stop_gradient

    f = make("def f(x):\n    return np.sum(x * stop_gradient(x))\n", stop_gradient=stop_gradient)
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(grad(f)(x), x)  # only the first factor is differentiated

    def quantize(v):
        return np.round(v * 4.0) / 4.0

    g = make("def g(x):\n    return np.sum(quantize(x) * x)\n", quantize=quantize)
    try:
        nondifferentiable(quantize)
        np.testing.assert_allclose(grad(g)(x), quantize(x))
        assert "quantize_vjp" not in grad(g).source
    finally:
        from transpiler.rules.nondiff import NONDIFF
        NONDIFF.discard(quantize)


# --- the direct path for Python-float arguments ------------------------------------------------

def test_float_calls_take_the_direct_path_and_anything_else_the_checked_one():
    f = make("def f(x, y=2.0):\n    return x * x * y\n")
    g = grad(f, wrt=(0, 1))
    assert g(3.0, 2.0) == (12.0, 9.0)
    assert type(g).__call__ is GradientFunction.__call__  # (called once: no dispatcher yet)
    assert g(3.0, 2.0) == (12.0, 9.0)
    assert type(g).__call__ is not GradientFunction.__call__  # a dispatcher of its own
    assert g(3.0) == (12.0, 9.0)  # default argument
    assert g(x=3.0, y=2.0) == (12.0, 9.0)  # keywords
    assert g(np.float64(3.0), 2.0) == (12.0, 9.0)
    assert g(np.array([3.0]), 2.0)[0] == pytest.approx([12.0])
    with pytest.raises(TypeError, match="cannot differentiate with respect to 'x'"):
        g(3, 2.0)
    with pytest.raises(TypeError):
        g(3.0, 2.0, 1.0)
    assert isinstance(g, GradientFunction) and repr(g) == "<grad(f), wrt=('x', 'y')>"


def test_rebinding_a_global_the_gradient_was_compiled_against_recompiles_it():
    f = make("def f(x):\n    return helper(x) + abs(x)\n",
             helper=make("def helper(x):\n    return x * x\n"))
    g = grad(f)
    assert g(3.0) == 7.0
    f.__globals__["helper"] = make("def helper(x):\n    return x * x * x\n")
    assert g(3.0) == 28.0  # the direct path checks the snapshot
    f.__globals__["abs"] = make("def abs(x):\n    return -x\n")  # shadows the builtin
    assert g(3.0) == 26.0
    assert g(np.array([3.0])) == pytest.approx([26.0])


def test_globals_named_like_the_dispatchers_own_names():
    f = make("def f(x):\n    return kwargs(x) * args(x) + e * dispatch(x)\n",
             kwargs=make("def kwargs(x):\n    return x * x\n"),
             args=make("def args(x):\n    return 2.0 * x\n"), e=0.5,
             dispatch=make("def dispatch(x):\n    return math.sin(x)\n"))
    assert grad(f)(1.5) == pytest.approx(6.0 * 1.5 ** 2 + 0.5 * math.cos(1.5), rel=1e-14)


def test_errors_on_the_direct_path_name_the_users_line():
    f = make("def f(x):\n    y = math.log(x)\n    return y * y\n")
    g = grad(f)
    g(2.0)
    with pytest.raises(ValueError) as info:
        g(-1.0)
    assert any(":2" in note for note in getattr(info.value, "__notes__", []))


def test_a_call_that_skips_the_checks_of_a_variant_still_refuses_what_they_refused():
    """Calls with numbers and arrays whose checks passed once skip them (the call path's fast
    lane); an int given where a float was, or another dtype, is still refused."""
    f = make("def f(x, n):\n    return np.sum(x * n)\n")
    g = grad(f, wrt=(0, 1))
    x = np.ones(3)
    for _ in range(2):
        np.testing.assert_allclose(g(x, 2.0)[0], 2.0 * x)
    with pytest.raises(TypeError, match="'n'"):
        g(x, 2)
    for _ in range(2):
        with pytest.raises(TypeError, match="'x'"):
            g(np.arange(3), 2.0)
        with pytest.raises(TranspileError, match="real-valued"):  # (complex: a complex sum)
            g(np.ones(3, dtype=complex), 2.0)
    assert g(x, 2.0)[1] == 3.0


def test_calls_with_arrays_go_straight_to_the_variant_and_still_see_every_change():
    """The newest pattern of numbers and arrays whose checks passed gets a dispatcher of its
    own (as calls with floats do): it checks what the general path checks, at any depth."""
    helper = make("def helper(x, a=2.0):\n    return a * x\n")
    other = make("def far(x):\n    if np.sum(x) > 1e6:\n        return x * K\n"
                 "    return x * K * 2.0\n", K=1.0)  # (another module's, with a global)
    f = make("def f(x, n):\n    return np.sum(helper(x) * W + far(x)) * n\n",
             helper=helper, far=other, W=np.ones(3))
    g = grad(f)
    x = np.arange(3.0)
    for _ in range(3):
        np.testing.assert_array_equal(g(x, 2), np.full(3, 8.0))
    assert type(g).__call__ is not GradientFunction.__call__  # (the dispatcher)
    f.__globals__["W"] = np.full(3, 3.0)
    np.testing.assert_array_equal(g(x, 2), np.full(3, 16.0))
    helper.__defaults__ = (5.0,)
    np.testing.assert_array_equal(g(x, 2), np.full(3, 34.0))
    other.__globals__["K"] = 2.0
    np.testing.assert_array_equal(g(x, 2), np.full(3, 38.0))
    got = g(x.astype(np.float32), 2)  # another dtype: its own variant
    assert got.dtype == np.float32 and got.tolist() == [38.0] * 3
    assert g(np.ones((2, 3)), 1.0).shape == (2, 3)
    with pytest.raises(TypeError, match="'x'"):
        g(np.arange(3), 2)
    got = g(x, 2)
    got[0] = -1.0  # the gradient is the caller's own array
    np.testing.assert_array_equal(g(x, 2), np.full(3, 38.0))
    del f.__globals__["W"]
    with pytest.raises(NameError):
        g(x, 2)


def test_a_call_by_keyword_takes_the_direct_path_and_is_passed_on_as_made():
    f = make("def f(x, a=2.0, *, s=1.0):\n    return np.sum(a * x * x) * s\n")
    g = grad(f)
    x = np.arange(3.0)
    for _ in range(3):  # (the dispatcher from the second call on)
        np.testing.assert_array_equal(g(x=x), 4.0 * x)
        np.testing.assert_array_equal(g(x, 3.0), 6.0 * x)
        np.testing.assert_array_equal(g(a=3.0, x=x), 6.0 * x)
        np.testing.assert_array_equal(g(x, s=2.0), 8.0 * x)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        g(x, x=x)
    with pytest.raises(TypeError, match="'x'"):
        g(a=3.0)
    h = make("def h(x, /, y):\n    return np.sum(x * y)\n")
    gh = grad(h)
    for _ in range(2):
        np.testing.assert_array_equal(gh(x, y=x), x)
    with pytest.raises(TypeError, match="positional"):
        gh(x=x, y=x)


def test_the_freshness_checks_stay_flat_and_exact_with_helpers():
    """Compiled.stale evaluates one generated expression (transpiler/freshness.py): a helper's
    changed default and another module's rebound global are seen on every path."""
    helper = make("def helper(x, a=2.0):\n    if np.sum(x) > 1e9:\n        return x\n"
                  "    return a * x\n")  # (not inlined: a compiled callee)
    f = make("def f(x):\n    return np.sum(helper(x) * x)\n", helper=helper)
    g = grad(f)
    x = np.arange(3.0)
    for _ in range(2):
        np.testing.assert_array_equal(g(x), 4.0 * x)
    compiled = g.compiled_for(x)
    assert not compiled.stale(f)
    helper.__defaults__ = (3.0,)
    assert compiled.stale(f)
    np.testing.assert_array_equal(g(x), 6.0 * x)
    np.testing.assert_array_equal(g(x[None, :])[0], 6.0 * x)  # (the checked path)


def test_a_lazy_result_of_numpy_arguments_is_computed_on_every_call():
    da = pytest.importorskip("dask.array")
    f = make("def f(x):\n    return np.sum(x * W)\n", W=da.from_array(np.arange(3.0), chunks=2))
    g = grad(f)
    for _ in range(3):
        got = g(np.ones(3))
        assert type(got) is np.ndarray and got.tolist() == [0.0, 1.0, 2.0]


def test_the_seed_of_a_small_reduction_is_the_broadcast_it_stands_for():
    import runtime as rt
    for like in (np.ones(3), np.ones((2, 3), dtype=np.float32), np.ones(5000)):
        for g in (1.0, np.float32(2.0), np.float64(3.0)):
            got = rt.unreduce(g, like)
            want = np.broadcast_to(np.asarray(g), like.shape)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


# --- JAX's spellings, blocks of second derivatives, structured Hessians, pickling -----------------

def _scaled_loss(x, sigma):
    y = np.sin(x) * sigma
    return np.sum(y ** 2) + np.sum(x) * sigma ** 3, {"y": y, "calls": 1, "note": "aux"}


def _branchy(x, s):
    if s > 0.0:
        return np.sum(x ** 2) * s, "positive"
    return np.sum(x), "other"


def _joint(x, sigma):
    return np.sum(np.sin(x) ** 2) * sigma ** 3 + np.sum(x) * sigma


def test_argnums_is_wrt_s_alias():
    x = np.array([0.3, 0.5, 0.9])
    g = grad(_joint, argnums=1)(x, 1.7)
    assert g == pytest.approx(grad(_joint, wrt=1)(x, 1.7), rel=1e-15)
    gx, gs = value_and_grad(_joint, argnums=("x", "sigma"))(x, 1.7)[1]
    np.testing.assert_allclose(gx, grad(_joint)(x, 1.7))
    assert gs == pytest.approx(g)
    assert grad(argnums=1)(_joint)(x, 1.7) == pytest.approx(g)  # (the decorator form)
    with pytest.raises(TypeError, match="not both"):
        grad(_joint, wrt=0, argnums=1)


def test_has_aux_returns_the_auxiliary_value_as_jax_does():
    x = np.array([0.3, -0.5, 0.9])
    (value, aux), (gx, gs) = value_and_grad(_scaled_loss, wrt=(0, 1), has_aux=True)(x, 1.3)
    assert value == pytest.approx(_scaled_loss(x, 1.3)[0], rel=1e-15)
    assert aux["calls"] == 1 and aux["note"] == "aux"
    np.testing.assert_allclose(aux["y"], np.sin(x) * 1.3)
    g, aux2 = grad(_scaled_loss, has_aux=True)(x, 1.3)
    np.testing.assert_allclose(g, gx, rtol=1e-15)
    h = 1e-6
    fd = [(_scaled_loss(x + h * e, 1.3)[0] - _scaled_loss(x - h * e, 1.3)[0]) / (2 * h)
          for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-7)
    assert gs == pytest.approx((_scaled_loss(x, 1.3 + h)[0] - _scaled_loss(x, 1.3 - h)[0])
                               / (2 * h), rel=1e-7)
    assert aux2["note"] == "aux"
    # returns merged from two branches: the pair taken apart after them
    assert grad(_branchy, has_aux=True)(x, 2.0)[1] == "positive"
    np.testing.assert_allclose(grad(_branchy, has_aux=True)(x, -1.0)[0], np.ones(3))
    np.testing.assert_allclose(grad(_branchy, has_aux=True)(x, 2.0)[0], 4.0 * x)


def test_has_aux_needs_a_pair_and_a_tuple_result_points_at_it():
    f = make("def f(x):\n    return np.sum(x), 1, 2\n")
    with pytest.raises(TranspileError, match="pair"):
        grad(f, has_aux=True)(np.ones(2))
    with pytest.raises(TranspileError, match="has_aux=True"):
        grad(make("def g(x):\n    return np.sum(x), 'aux'\n"))(np.ones(2))
    with pytest.raises(TypeError, match="has_aux=True"):  # (returns merged: seen when run)
        grad(_branchy)(np.ones(2), 1.0)


def test_hessian_and_hvp_take_names_and_blocks():
    from transpiler import hessian, hvp

    x, s = np.array([0.3, 0.5, 0.9]), 1.7
    (hxx, hxs), (hsx, hss) = hessian(_joint, wrt=("x", "sigma"))(x, s)
    assert hxx.shape == (3, 3) and hxs.shape == (3,) and np.shape(hss) == ()
    g, h = grad(_joint, wrt=(0, 1)), 1e-6
    for k, e in enumerate(np.eye(3)):
        up, down = g(x + h * e, s), g(x - h * e, s)
        np.testing.assert_allclose(hxx[:, k], (up[0] - down[0]) / (2 * h), rtol=1e-6)
        assert hsx[k] == pytest.approx((up[1] - down[1]) / (2 * h), rel=1e-6)
    up, down = g(x, s + h), g(x, s - h)
    np.testing.assert_allclose(hxs, (up[0] - down[0]) / (2 * h), rtol=1e-6)
    assert hss == pytest.approx((up[1] - down[1]) / (2 * h), rel=1e-6)
    np.testing.assert_allclose(hxs, hsx, rtol=1e-12)
    assert hessian(_joint, argnums="sigma")(x, s) == pytest.approx(hss, rel=1e-12)
    assert hvp(_joint, wrt="sigma")(x, s, 2.0) == pytest.approx(2.0 * hss, rel=1e-12)
    v = (np.array([1.0, -1.0, 0.5]), 0.25)
    px, ps = hvp(_joint, wrt=(0, 1))(x, s, v)
    np.testing.assert_allclose(px, hxx @ v[0] + hxs * v[1], rtol=1e-12)
    assert ps == pytest.approx(hsx @ v[0] + hss * v[1], rel=1e-12)
    with pytest.raises(TypeError, match="tuple of 2 directions"):
        hvp(_joint, wrt=(0, 1))(x, s, np.ones(3))
    np.testing.assert_allclose(hvp(_joint, backend="auto")(x, s, v[0]), hxx @ v[0], rtol=1e-12)


def test_hessian_and_jacobian_of_a_structured_argument_are_dicts_of_blocks():
    import dataclasses
    from typing import NamedTuple

    from transpiler import hessian, jacobian

    @dataclasses.dataclass
    class Layer:
        w: np.ndarray
        b: float
        width: int = 3  # (not a float: no block)

    class Pair(NamedTuple):
        w: np.ndarray
        b: float

    f = make("def f(p, x):\n    return np.sum(np.tanh(p.w * x + p.b) ** 2) * 1.5\n")
    d = make("def d(p, x):\n    return np.sum(np.tanh(p['w'] * x + p['b']) ** 2) * 1.5\n")
    x, w = np.array([0.5, -0.3, 1.2]), np.array([0.1, 0.2, 0.3])
    blocks = [hessian(f)(Layer(w, 0.4), x), hessian(f)(Pair(w, 0.4), x),
              hessian(d)({"w": w, "b": 0.4}, x)]
    g, h = grad(d), 1e-6
    for H in blocks:
        assert set(H) == {("w", "w"), ("w", "b"), ("b", "w"), ("b", "b")}
        assert H["w", "w"].shape == (3, 3) and H["w", "b"].shape == (3,)
        up, down = g({"w": w, "b": 0.4 + h}, x), g({"w": w, "b": 0.4 - h}, x)
        np.testing.assert_allclose(H["w", "b"], (up["w"] - down["w"]) / (2 * h), rtol=1e-6)
        assert H["b", "b"] == pytest.approx((up["b"] - down["b"]) / (2 * h), rel=1e-6)
        for k, e in enumerate(np.eye(3)):
            up, down = g({"w": w + h * e, "b": 0.4}, x), g({"w": w - h * e, "b": 0.4}, x)
            np.testing.assert_allclose(H["w", "w"][:, k], (up["w"] - down["w"]) / (2 * h),
                                       rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(H["w", "b"], H["b", "w"], rtol=1e-12)
    v = make("def v(p, x):\n    return np.tanh(p['w'] * x + p['b'])\n")
    J = jacobian(v)({"w": w, "b": 0.4}, x)
    s = 1.0 - np.tanh(w * x + 0.4) ** 2
    np.testing.assert_allclose(J["w"], np.diag(s * x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(J["b"], s, rtol=1e-12)


class _Model:
    def __init__(self, c: float):
        self.c = c

    def loss(self, x):
        return np.sum(x ** 2) * self.c


def _twice(x):  # (a picklable function for a worker process: module level)
    import pickle

    g = pickle.loads(x[0])
    return g(x[1], 1.7)


def test_gradient_objects_pickle_after_their_first_call():
    import concurrent.futures
    import multiprocessing
    import pickle

    from transpiler import forward, hessian, hvp, jacobian

    x, s = np.array([0.3, 0.5, 0.9]), 1.7
    made = [(grad(_joint), (x, s), {}), (value_and_grad(_joint, wrt=(0, 1)), (x, s), {}),
            (grad(_scaled_loss, has_aux=True), (x, s), {}), (grad(_Model(2.0).loss), (x,), {}),
            (grad(grad(_joint, wrt=1), wrt=1), (x, s), {}), (hvp(_joint), (x, s, x), {}),
            (hessian(_joint, wrt=(0, 1)), (x, s), {}), (jacobian(_joint), (x, s), {}),
            (forward(_joint), (x, s), {"dx": x})]
    for g, args, kwargs in made:
        g(*args, **kwargs)
        g(*args, **kwargs)  # (a gradient called twice installs a fast path of its own)
        again = pickle.loads(pickle.dumps(g))
        assert repr(again(*args, **kwargs)) == repr(g(*args, **kwargs)), g
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        remote = pool.submit(_twice, (pickle.dumps(made[0][0]), x)).result()
    np.testing.assert_allclose(remote, made[0][0](x, s), rtol=1e-15)
