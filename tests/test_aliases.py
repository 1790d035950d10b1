"""The write check (passes/check_writes.py over analysis/aliases.py): element writes the
compiler reproduces on a copy are accepted, with finite-difference-correct gradients in both
modes, and those a view or alias would observe in NumPy are refused at their line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_forward import check_jvp
from tests.util import make
from transpiler import TranspileError, check_grad, grad, hvp, jvp

U0 = np.array([0.1, 0.7, 0.3, 0.9, 0.2, 0.5])
M0 = np.arange(6.0).reshape(2, 3) * 0.3 - 0.4

ACCEPTED = {
    "heat_copy_then_rebind": ("""
        def f(u, r):
            for t in range(4):
                un = u.copy()
                un[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
                u = un
            return np.sum(u ** 2)
        """, (U0, 0.2)),
    "buffer_swap": ("""
        def f(u, r):
            u = u * 1.0  # (the primal would write into the caller's array: finite differences)
            un = np.copy(u)
            for t in range(4):
                un[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
                u, un = un, u
            return np.sum(u ** 2) + np.sum(un)
        """, (U0, 0.2)),
    "dict_state_in_a_loop": ("""
        def f(x, r):
            state = {"v": x, "e": 0.0}
            for i in range(3):
                state["v"] = state["v"] - r * state["v"]
                state["e"] = state["e"] + np.sum(state["v"] ** 2)
            return np.sum(state["v"]) + state["e"]
        """, (U0, 0.3)),
    "list_slot_in_a_loop": ("""
        def f(x, r):
            xs = [x, 2.0 * x]
            for i in range(3):
                xs[0] = xs[0] * r + xs[1]
                xs[1] = np.sin(xs[1])
            return np.sum(xs[0] * xs[1])
        """, (U0, 0.3)),
    "fresh_arrays_written_while_the_argument_is_read": ("""
        def f(x, r):
            a = np.array(x)
            b = x * 1.0
            c = x.copy()
            a[0] = r
            b[1:] = b[1:] * r
            c[-1] = a[1] * r
            return np.sum(a * b * c) + np.sum(x)
        """, (U0, 0.3)),
    "scalar_element_read_of_a_1d_array": ("""
        def f(w, r):
            w = w + 0.0
            last = w[-1]
            w[0] = r * last
            return last * np.sum(w ** 2)
        """, (U0, 0.3)),
    "rebinding_ends_the_alias": ("""
        def f(x, r):
            y = x * 2.0
            v = y[1:]
            s = np.sum(v)
            v = np.zeros(2)
            y[0] = r
            return s + np.sum(y * y) + np.sum(v)
        """, (U0, 0.3)),
    "rows_written_as_walked": ("""
        def f(x, r):
            y = x * 1.0
            total = 0.0
            for row in y:
                row[0] = row[0] * r
                total = total + np.sum(row ** 2)
            return total
        """, (M0, 0.3)),
    "unpacked_results_of_a_helper": ("""
        def pair(a, b):
            if b > 0.0:
                return a * 2.0, np.sin(a)
            return a * b, a

        def f(x, r):
            p, q = pair(x, 1.0)
            p[0] = r
            return np.sum(p * q) + np.sum(x)
        """, (U0, 0.3)),
    "view_taken_after_the_write_in_a_loop": ("""
        def f(x, r):
            y = x * 1.0
            s = 0.0
            for i in range(3):
                y[0] = y[0] * r + 0.1
                v = y[1:]
                s = s + np.sum(v * y[0])
            return s
        """, (U0, 0.3)),
}


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_writes_match_finite_differences(name, optimize):
    source, args = ACCEPTED[name]
    f = make(source)
    before = [np.copy(a) for a in args]
    check_grad(f, *args, wrt=(0, 1), optimize=optimize)
    rng = np.random.default_rng(len(name))
    tangents = tuple(rng.uniform(-1, 1, np.shape(a)) if np.ndim(a) else 0.7 for a in args)
    check_jvp(f, args, tangents, optimize=optimize)
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)  # the arguments are never written


def test_accepted_writes_have_hessian_vector_products():
    f = make(ACCEPTED["heat_copy_then_rebind"][0])
    g = grad(f)
    v, h = np.linspace(-1.0, 1.0, 6), 1e-5
    fd = (g(U0 + h * v, 0.2) - g(U0 - h * v, 0.2)) / (2 * h)
    np.testing.assert_allclose(hvp(f)(U0, 0.2, v), fd, rtol=1e-6, atol=1e-8)


def test_dict_slot_written_in_a_loop_regression():
    """rt.zero_index met the dict gradient (a GradDict) and tried to make it an array."""
    f = make("""
        def f(x):
            state = {"v": x}
            for i in range(3):
                state["v"] = state["v"] - 0.1 * state["v"]
            return np.sum(state["v"])
        """)
    np.testing.assert_allclose(grad(f)(np.ones(3)), 0.729 * np.ones(3), rtol=1e-14)
    assert jvp(f, (np.ones(3),), (np.ones(3),))[1] == pytest.approx(3 * 0.729, rel=1e-14)


def test_a_new_dict_key_and_a_list_of_arrays_written_by_index():
    f = make("""
        def f(x, y):
            out = {}
            out["a"] = x * y
            out["b"] = np.sin(x)
            xs = [x, y]
            xs[1] = xs[1] * out["a"]
            return np.sum(out["a"] + out["b"]) + np.sum(xs[1])
        """)
    check_grad(f, U0, U0[::-1].copy(), wrt=(0, 1))
    check_jvp(f, (U0, U0[::-1].copy()), (np.ones(6), np.linspace(0, 1, 6)))


REFUSED = {
    "reshape_view": ("y = x * 1.0\n    v = y.reshape(2, 3)\n    y[0] = 5.0\n    s = np.sum(v)",
                     4, "'v'"),
    "np_reshape_view": ("y = x * 1.0\n    v = np.reshape(y, (3, 2))\n    y[0] = 5.0\n"
                        "    s = np.sum(v)", 4, "'v'"),
    "ravel_view": ("y = x * 1.0\n    v = np.ravel(y)\n    y[0] = 5.0\n    s = np.sum(v)", 4,
                   "'v'"),
    "transpose_view": ("y = x.reshape(2, 3) * 1.0\n    v = y.T\n    y[0, 0] = 5.0\n"
                       "    s = np.sum(v[0])", 4, "'v'"),
    "transpose_method_view": ("y = x.reshape(2, 3) * 1.0\n    v = y.transpose()\n"
                              "    y[0, 0] = 5.0\n    s = np.sum(v[0])", 4, "'v'"),
    "ellipsis_view": ("y = x * 1.0\n    v = y[...]\n    y[0] = 5.0\n    s = np.sum(v)", 4,
                      "'v'"),
    "asarray_of_an_array": ("y = x * 1.0\n    v = np.asarray(y)\n    y[0] = 5.0\n"
                            "    s = np.sum(v)", 4, "'v'"),
    "view_in_a_list": ("y = x * 1.0\n    vs = [y[1:], x]\n    y[1] = 5.0\n"
                       "    s = np.sum(vs[0])", 4, "'vs'"),
    "view_in_a_dict": ("y = x * 1.0\n    d = {'v': y[:2]}\n    y[1] = 5.0\n"
                       "    s = np.sum(d['v'])", 4, "'d'"),
    "view_from_the_iteration_before": (
        "y = x * 1.0\n    v = y[:2]\n    s = 0.0\n    for i in range(3):\n"
        "        y[0] = y[0] + 1.0\n        s = s + v[0]\n        v = y[1:]", 6, "'v'"),
    "the_same_array_twice_in_a_list": (
        "y = x * 1.0\n    s = 0.0\n    for v in [y, y]:\n        v[0] = v[0] + 1.0\n"
        "        s = s + v[0]", 5, "would also change"),
    "swap_of_one_buffer": (
        "u = x * 1.0\n    un = u\n    for i in range(2):\n        un[0] = u[1] + 1.0\n"
        "        u, un = un, u\n    s = np.sum(u)", 5, "would also change"),
    "returned_by_a_helper": ("y = x * 1.0\n    v = pick(y, 1.0)\n    y[0] = 5.0\n"
                             "    s = np.sum(v)", 4, "'v'"),
}

HELPER = """
def pick(a, b):
    if b > 0.0:
        return a
    return a
"""


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_writes_a_view_would_see_are_refused_at_their_line(name, mode):
    body, line, says = REFUSED[name]
    f = make(f"{HELPER}\ndef f(x):\n    {body}\n    return s + np.sum(x)\n", name="f")
    x = np.linspace(0.1, 0.6, 6)
    with pytest.raises(TranspileError) as info:
        if mode == "reverse":
            grad(f)(x)
        else:
            jvp(f, (x,), (np.ones(6),))
    text = str(info.value)
    assert "would also change" in text and says in text, text
    assert info.value.lineno == line + 5, text  # (HELPER's lines come first)


# NumPy's meaning of a write through a view or a second name (passes/views.py): the write is
# seen through the base and the other views, and so is its gradient
SPELLED = {
    "slice_view": "y = x * 1.0\n    v = y[1:]\n    y[1] = 5.0 * y[0]\n    s = np.sum(v * v)",
    "plain_alias": "y = x * 1.0\n    v = y\n    y[0] = y[2] ** 2\n    s = np.sum(v * y)",
    "the_argument_itself": "y = x\n    y[0] = 2.0 * y[1]\n    s = np.sum(x * x)",
    "in_place_operator_on_an_alias": "y = x * 1.0\n    v = y\n    y += x * x\n"
                                     "    s = np.sum(v * v)",
    "add_at_into_a_view": "y = x * 1.0\n    v = y[1:]\n    np.add.at(v, [0, 1], y[0] * 2.0)\n"
                          "    s = np.sum(y * y)",
    "write_into_a_view_read_through_its_base": "y = x * 1.0\n    v = y[1:]\n    v[0] *= 3.0\n"
                                               "    s = np.sum(y * y)",
    "view_of_a_view": "y = x * 1.0\n    v = y[1:]\n    w = v[1:]\n    u = y[:3]\n"
                      "    w[0] = w[0] ** 2\n    s = np.sum(y * y) + 3.0 * np.sum(u) + np.sum(v)",
    "rows_written_in_a_loop": "A = np.outer(x, x)\n    for i in range(A.shape[0]):\n"
                              "        row = A[i]\n        row[i] = row[i] * 2.0 + 1.0\n"
                              "    s = np.sum(A * A)",
    "interior_of_a_grid": "u = x * 1.0\n    inner = u[1:-1]\n    for t in range(3):\n"
                          "        inner[:] = inner + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:])\n"
                          "    s = np.sum(u ** 2)",
    "column_of_a_matrix": "A = np.outer(x, x)\n    c = A[:, 1]\n    c[0] = np.sin(c[0])\n"
                          "    s = np.sum(A ** 2)",
    "row_of_an_identity": "e = np.eye(3) * x[0]\n    r = e[0]\n    e[0, 1] = 5.0 * x[1]\n"
                          "    s = np.sum(r * r)",
    "written_both_ways_in_a_loop": "y = x * 1.0\n    v = y[1:]\n    for k in range(2):\n"
                                   "        y[0] = v[0] * 2.0\n        v[1] = y[0] + v[2]\n"
                                   "    s = np.sum(y * v[0])",
    "view_taken_in_a_loop": "u = x * 1.0\n    for t in range(3):\n        v = u[1:]\n"
                            "        v[0] = v[0] * 1.5\n        u = u * 0.9 + np.sum(v) * 0.01\n"
                            "    s = np.sum(u ** 2)",
    "an_array_walked_while_written": "y = x * 1.0\n    s = 0.0\n    for r in y:\n"
                                     "        y += 0.5 * r\n        s = s + r * r",
    "a_list_under_two_names": "xs = [x]\n    ys = xs\n    xs.append(x * x)\n"
                              "    s = np.sum(ys[1]) + np.sum(ys[0])",
    # (numbers walked: a reduction along an axis, np.array of a literal, have known ranks)
    "numbers_of_a_reduction_walked": "y = np.maximum(np.array([[1.0], [-0.5]]) * x, x)"
                                     ".sum(axis=0)\n    s = 0.0\n    for a, b in zip(y, y):\n"
                                     "        a += np.sqrt(1.0 + a * b)\n        s = s + a\n"
                                     "    s = s + np.sum(y)",
    "rows_walked_while_written": "y = np.outer(x, x[:3])\n    s = 0.0\n    for r in y:\n"
                                 "        y += 0.5\n        s = s + np.sum(r * r)",
    # (a finally's cleanup runs twice in the code: in the handler that raises, whose writes
    # reach nothing after the try, and after it)
    "written_in_place_in_a_finally": "w = x * 1.0\n    try:\n        a = w * 1.0\n"
                                     "    finally:\n        w += x\n    s = np.sum(w * w + a)",
    "written_through_a_view_in_a_finally": "w = x[:3] * 1.0\n    for e in x[3:]:\n"
                                           "        try:\n            np.add.at(w, [0, 2, 2], e)\n"
                                           "        finally:\n            v = w[:2]\n"
                                           "            v[:] *= 3.0\n    s = np.sum(w * w)",
    "numbers_of_a_mean_walked": "y = np.mean(x.reshape(2, 3), 0)\n    s = 0.0\n"
                                "    for a in y:\n        a *= 2.0\n        s = s + a * a",
    # (joins, np.where, masks: known ranks, so their views are certified)
    "row_of_a_stack": "y = np.stack([x, x * 2.0])\n    r = y[0]\n    r *= 3.0\n"
                      "    s = np.sum(y * y)",
    "row_of_a_vstack_written": "y = np.vstack([x, np.sin(x)])\n    row = y[1]\n"
                               "    row[0] = 5.0 * x[1]\n    s = np.sum(y * y)",
    "numbers_of_a_concatenation_walked": "y = np.concatenate([x, x * 2.0], axis=0)\n"
                                         "    s = 0.0\n    for e in y[:4]:\n        e += 1.0\n"
                                         "        s = s + e * e\n    s = s + np.sum(y * y)",
    "slice_of_a_where_written": "y = np.where(x > 0.37, x, 0.5 * x)\n    v = y[1:]\n"
                                "    v -= np.clip(x, 0.2, None)[0]\n    s = np.sum(y * y)",
    "rows_of_an_hstack_walked": "y = np.hstack([np.outer(x, x[:2]), np.outer(x, x[2:4])])\n"
                                "    s = 0.0\n    for r in y:\n        r += 0.5\n"
                                "        s = s + np.sum(r * r)\n    s = s + np.sum(y)",
}


@pytest.mark.parametrize("name", sorted(SPELLED))
def test_writes_seen_through_views_and_aliases_are_differentiated(name):
    f = make(f"def f(x):\n    {SPELLED[name]}\n    return s + np.sum(x)\n")
    x = U0.copy()
    check_grad(f, x)
    np.testing.assert_array_equal(x, U0)  # (the argument is not written)
    check_jvp(f, (x.copy(),), (np.linspace(0.2, 1.0, 6),))


def test_a_write_through_a_view_is_written_back_into_its_base_in_the_source():
    f = make("def f(x):\n    y = x * 1.0\n    v = y[1:]\n    v[0] *= 3.0\n"
             "    return np.sum(y * y)\n")
    source = grad(f).source_for(U0)
    assert "[1:] = v" in source, source
    np.testing.assert_allclose(grad(f)(U0), 2.0 * U0 * np.r_[1.0, 9.0, np.ones(4)], rtol=1e-14)


@pytest.mark.parametrize("body", [
    "i = 1\n    v = y[i:]\n    i = 2\n    v[0] = v[0] * 5.0",  # the index changed since
    "if x[0] > 0:\n        v = y[1:]\n    else:\n        v = y[2:]\n    v[0] = v[0] * 5.0",
    "v = y.reshape(2, 3)\n    v[0, 0] = 5.0",  # (reshape may copy)
])
def test_views_not_known_at_the_write_stay_refused(body):
    f = make(f"def f(x):\n    y = x * 1.0\n    {body}\n    return np.sum(y * y)\n")
    with pytest.raises(TranspileError, match="would also change 'y'"):
        grad(f)(U0.copy())


@pytest.mark.parametrize("body", [
    "v = y[1]\n    w = v[0]\n    w += 1.0\n    s = np.sum(v * v) + w * w",  # (a number)
    "v = y[1] if x[0] > 0.0 else y[0]\n    w = v[0]\n    w += 1.0\n"
    "    s = np.sum(v * v) + w * w",
    "v = y[1]\n    for a, b in zip(v, v):\n        a -= np.abs(a + b)\n    s = np.sum(v) + a",
])
def test_an_element_of_a_row_is_a_number_not_a_view_written_back(body):
    f = make(f"def f(x):\n    y = x.reshape(2, 3) * 1.0\n    {body}\n    return s\n")
    try:
        check_grad(f, U0.copy())
    except TranspileError as e:  # (refused where the analysis cannot tell: never a number
        assert "would also change" in str(e)  # written back into the row)


def test_a_slice_of_a_list_is_a_new_list_of_the_same_items():
    f = make("def f(x):\n    xs = [x[0], x[1], x[2]]\n    v = xs[1:]\n    v[0] = 3.0 * x[3]\n"
             "    return xs[1] * 2.0 + v[0] * v[1]\n")
    check_grad(f, U0.copy())
    check_jvp(f, (U0.copy(),), (np.linspace(0.2, 1.0, 6),))
    g = make("def f(x):\n    y = x * 1.0\n    xs = [y, x]\n    v = xs[:1]\n    a = v[0]\n"
             "    a[1] = 5.0\n    return np.sum(xs[0])\n")
    with pytest.raises(TranspileError, match="would also change 'xs'"):
        grad(g)(U0.copy())  # (its items are the list's)


def test_a_row_read_of_a_2d_argument_is_a_view_and_of_a_1d_one_a_number():
    f = make("def f(w):\n    last = w[-1]\n    w[0] = 2.0\n    return np.sum(last * w)\n")
    x = U0.copy()
    expected = U0[-1] * np.r_[0.0, np.ones(4), 1.0] + np.r_[np.zeros(5), 2.0 + np.sum(U0[1:])]
    np.testing.assert_allclose(grad(f)(x), expected, rtol=1e-14)
    np.testing.assert_array_equal(x, U0)
    check_grad(f, M0.copy())  # 2-D: a row, a view that sees the write


def test_every_numpy_function_with_a_rule_returning_a_view_is_known_to():
    """The alias analysis takes NumPy results for new arrays but for a list of view functions:
    call every NumPy function with a rule on arrays of 1-3 axes (with a few extra arguments)
    and check that those whose result shares memory with the argument are on it."""
    import warnings

    from transpiler.analysis.aliases import may_return_view
    from transpiler.rules.nondiff import NONDIFF
    from transpiler.rules.registry import ADJOINTS, TANGENTS

    try:  # (their first argument is a factorization LAPACK trusts: made-up pivots would have it
        import scipy.linalg as sla  # read and write out of bounds, corrupting the process)
        factored = {sla.lu_solve, sla.cho_solve}
    except ImportError:
        factored = set()
    missed = set()
    for f in {*ADJOINTS, *TANGENTS, *NONDIFF} - factored:
        module = getattr(f, "__module__", "") or ""
        if not (isinstance(f, np.ufunc) or module.split(".")[0] in ("numpy", "scipy")):
            continue
        for x in (np.arange(1.0, 7.0).reshape(2, 3), np.arange(1.0, 7.0),
                  np.arange(1.0, 9.0).reshape(2, 2, 2)):
            for extra in ((), (0,), ((3, 2),), (1,), (0, 1), (2,)):
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        result = f(x, *extra)
                except Exception:
                    continue
                items = result if isinstance(result, (list, tuple)) else [result]
                if any(isinstance(i, np.ndarray) and np.shares_memory(i, x) for i in items) \
                        and not may_return_view(f):
                    missed.add(getattr(f, "__qualname__", repr(f)))
    assert not missed


@pytest.mark.parametrize("body,says", [
    ("xs = []\n    xs.append(y)\n    y[0] = 5.0\n    s = np.sum(xs[0])", "'xs'"),
    ("w = holder.w\n    w[0] = 5.0\n    s = np.sum(holder.w)", "'holder'"),
])
def test_more_views_refused(body, says):
    class Holder:
        def __init__(self):
            self.w = np.ones(3)

        def __call__(self):
            return self.w

    f = make(f"def f(x):\n    y = x * 1.0\n    {body}\n    return s + np.sum(x)\n",
             holder=Holder())
    with pytest.raises(TranspileError, match=f"would also change {says}"):
        grad(f)(np.linspace(0.1, 0.6, 3))


@pytest.mark.parametrize("made", ["y[[0, 2]]", "abs(y)", "sum([y, y])", "y[y > 0.3]"])
def test_a_new_array_bound_to_two_names_is_still_one_array(made):
    f = make(f"def f(x):\n    y = x * 1.0\n    b = {made}\n    c = b\n    b[0] = 5.0 * x[1]\n"
             "    return np.sum(c * c) + np.sum(x)\n")
    check_grad(f, np.linspace(0.1, 0.6, 3))  # (c sees the write)


# A helper that changes the array it is given (returning nothing) is a write into that array,
# as an element write is: through a view of it, a second name for it, a row a loop walks.
CHANGING = """
def scale_first(p, v):
    p[0] = p[0] * v + np.sin(p[1])

def f(x):
    {body}
    return s
"""


@pytest.mark.parametrize("body", [
    "w = x * 1.0\n    scale_first(w, 2.0)\n    s = np.sum(w * w)",
    "w = x * 1.0\n    v = w[1:]\n    scale_first(v, 2.0)\n    s = np.sum(w * w)",
    "w = x * 1.0\n    b = w\n    scale_first(w, 3.0)\n    s = np.sum(b * b) + np.sum(w)",
    "W = np.outer(x, x[:3])\n    for r in W:\n        scale_first(r, 2.0)\n    s = np.sum(W * W)",
    "scale_first(x, 2.0)\n    s = np.sum(x * x)",  # (the caller's array is not changed)
    "w = x * 1.5\n    for i in range(3):\n        scale_first(w, x[0])\n    s = np.sum(w * w)",
    # (the array before the call, read by the gradient after it: the call must not change it)
    "w = x * 1.0\n    t = w * w.mean()\n    scale_first(w, 0.5)\n    s = np.sum(t) + w[0]",
    "w = x * 1.0\n    w[1] += x[0]\n    k = w.mean()\n    t = w * k\n    scale_first(w, 0.0)\n"
    "    s = np.sum(t)",
])
def test_a_helper_changing_the_array_it_is_given_is_a_write_into_it(body):
    f = make(CHANGING.format(body=body), name="f")
    x = U0.copy()
    check_grad(f, x)
    np.testing.assert_array_equal(x, U0)
    direction = np.linspace(0.2, 1.0, 6)
    value, tangent = jvp(f, (x,), (direction,))
    np.testing.assert_array_equal(x, U0)  # (f itself changes the array it is given in Python)
    assert value == pytest.approx(f(U0.copy()), rel=1e-12)
    h = 1e-6
    expected = (f(U0 + h * direction) - f(U0 - h * direction)) / (2 * h)
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-7)


def test_a_helper_changing_an_array_seen_through_a_view_not_known_is_refused():
    f = make(CHANGING.format(body="w = x.reshape(6, 1) * 1.0\n    v = w.reshape(6)\n"
                                  "    scale_first(v, 2.0)\n    s = np.sum(w * w)"), name="f")
    with pytest.raises(TranspileError, match="would also change 'w'"):
        grad(f)(U0.copy())


# NumPy's scatters write in place like an element write: into a row the loop walks (a view of a
# reshaped copy, whose rank the reshape tells), they change the array walked
WALKED = """
def scattered(x):
    y = x.reshape(2, 3) * 1.0
    for r in y:
        np.put_along_axis(r, np.array([2, 0]), 0.5, 0)
    return np.sum(y * y) + np.sum(x)

def mixed(x):
    y = x.reshape(2, 3) * 1.0
    for r in y:
        np.put_along_axis(r, np.array([2]), r[1] * 3.0, 0)
        r[0] = r[0] * r[2]
    return np.sum(y * y * y) + np.sum(x)

def row_of_a_2d_array(x):
    y = x.reshape(2, 3) * 1.0
    r = y[-1]
    y[1, 0] = 5.0 * y[0, 2]
    return np.sum(r * r) + np.sum(x)

def whole_array_written_while_its_rows_are_walked(x):
    y = x.reshape(2, 3) * 1.0
    s = 0.0
    for r in y:
        y[1] = r * 2.0
        s = s + np.sum(r * r)
    return s + np.sum(x)
"""


@pytest.mark.parametrize("name", ["scattered", "mixed", "row_of_a_2d_array",
                                  "whole_array_written_while_its_rows_are_walked"])
def test_scatters_into_the_rows_a_loop_walks_change_the_array(name):
    f = make(WALKED, name=name)
    x = np.linspace(0.1, 0.6, 6)
    check_grad(f, x)
    v = np.cos(np.arange(6.0))
    _, tangent = jvp(f, (x,), (v,))
    assert tangent == pytest.approx(grad(f)(x) @ v, rel=1e-12)


# views certified by what is known of the values' numbers of axes: a module's constant arrays and
# numbers, np.newaxis, a reshape, np.where of a comparison, a sparse matrix's product, a scatter
RANKED = """
import scipy.sparse as sp

SCALE = 1.1
WEIGHTS = np.array([0.5, -1.0, 2.0])

def f(x):
    c = np.where(np.sin(SCALE) > 0.2, float(x.mean()), SCALE * WEIGHTS)
    w = np.concatenate([c[None], x[None]], axis=0)
    v = w[-1]
    v[0] = v[0] * c[1]
    a = sp.csr_matrix(np.outer(x, WEIGHTS)).T @ x
    s = np.stack([a, np.ravel(np.reshape(np.outer(x, x), (3, 3))[0])])
    np.add.at(s, (np.array([0, 1]), np.array([2, 2])), x[:2])
    r = s[1]
    r[1] = r[1] * r[0]
    return np.sum(w * w) + np.sum(s * s)
"""


def test_views_of_arrays_whose_axes_are_known_are_written_through():
    pytest.importorskip("scipy")
    f = make(RANKED, name="f")
    x = np.array([0.3, -0.4, 0.8])
    check_grad(f, x)
    v = np.cos(np.arange(3.0))
    _, tangent = jvp(f, (x,), (v,))
    assert tangent == pytest.approx(grad(f)(x) @ v, rel=1e-12)


def test_a_module_array_s_rank_is_a_snapshot_rebinding_it_compiles_again():
    f = make("def f(x):\n    w = W * x\n    v = w[0]\n    v[0] = v[0] * 3.0\n"
             "    return np.sum(w * w)\n", W=np.ones((2, 3)))
    x = np.array([0.3, -0.4, 0.8])
    check_grad(f, x)  # (W 2-D: w[0] a row, a view; the write changes w)
    np.testing.assert_allclose(grad(f)(x), 2.0 * x * np.array([10.0, 2.0, 2.0]))
    f.__globals__["W"] = np.ones(3)  # (1-D now: w[0] a number, v[0] an error in NumPy)
    with pytest.raises((TypeError, IndexError, TranspileError)):
        grad(f)(x)
    f.__globals__["W"] = np.full((2, 3), 2.0)
    check_grad(f, x)
