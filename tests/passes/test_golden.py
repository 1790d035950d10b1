"""Golden tests: the generated source of a handful of functions, byte for byte.

Output is deterministic, so any change to what users read shows up here as a diff.
"""

import textwrap

import numpy as np

from tests.util import make
from transpiler import check_grad, forward, grad, value_and_grad


def expect(gradient_function, text: str) -> None:
    expect_source(gradient_function.source, text)


def expect_source(source: str, text: str) -> None:
    assert source == textwrap.dedent(text).strip()


def test_product_plus_sine_reads_like_a_hand_derivative():
    f = make("def f(x, y):\n    return x * y + np.sin(x)\n")
    expect(grad(f), """
        def grad_f(x, y):
            _t1 = x * y
            _t2 = np.sin(x)
            _t3 = _t1 + _t2
            b_t3 = rt.seed(_t3)
            # grad of: return x * y + np.sin(x)
            b_t1 = rt.unbroadcast(b_t3, _t1)
            b_t2 = rt.unbroadcast(b_t3, _t2)
            bx = b_t2 * np.cos(x) + rt.unbroadcast(b_t1 * y, x)
            return rt.grad_like(bx, x)
    """)


def test_scalar_results_need_no_seed_call_constants_no_unbroadcast_powers_fold():
    f = make("""
        def f(x):
            y = 3.0 * x ** 2
            return np.sum(y) / 2.0
    """)
    expect(grad(f), """
        def grad_f(x):
            _t1 = x ** 2
            y = 3.0 * _t1
            # grad of: return np.sum(y) / 2.0
            by = rt.unreduce(0.5, y)
            # grad of: y = 3.0 * x ** 2
            b_t1 = by * 3.0
            bx = b_t1 * 2 * x
            return rt.grad_like(bx, x)
    """)


def test_the_ones_of_a_sum_multiply_nothing_where_the_shapes_are_known():
    """The gradient of ``np.sum(e)`` is all ones: a partial ``ones * y`` of the shape it is for
    is ``y`` (a parameter's own array included: it is never written into, and a gradient
    returned that may be it is copied), so the adjoint is the one a person writes."""
    f = make("def f(x):\n    return np.sum(np.sin(x) * x)\n")
    expect_source(grad(f).source_for(np.ones(3)), """
        def grad_f(x):
            _t1 = np.sin(x)
            # grad of: return np.sum(np.sin(x) * x)
            bx = _t1
            del _t1
            bx = bx + x * np.cos(x)
            return rt.grad_like(bx, x)
    """)
    x = np.linspace(0.1, 1.0, 4)
    got = grad(f)(x)
    np.testing.assert_allclose(got, np.sin(x) + x * np.cos(x), rtol=1e-15)
    assert not np.shares_memory(got, x)


def test_reassignment_keeps_old_values_and_accumulates():
    f = make("""
        def f(x, w):
            x = np.tanh(x @ w)
            x = x - x * x
            return np.mean(x)
    """)
    expect(grad(f, wrt="w"), """
        def grad_f(x, w):
            _t1 = x @ w
            x_1 = np.tanh(_t1)
            _t2 = x_1 * x_1
            x_2 = x_1 - _t2
            _t3 = np.mean(x_2)
            # grad of: return np.mean(x)
            bx_2 = rt.unreduce(1.0 * (rt.size(_t3) / max(rt.size(x_2), 1)), x_2)
            # grad of: x = x - x * x
            b_t2 = rt.unbroadcast(-bx_2, _t2)
            bx_1 = rt.unbroadcast(bx_2, x_1) + b_t2 * 2.0 * x_1
            # grad of: x = np.tanh(x @ w)
            b_t1 = bx_1 * (1.0 - x_1 * x_1)
            bw = rt.matmul_adjoint_b(b_t1, x, w)
            return rt.grad_like(bw, w)
    """)


def test_math_scalars_need_no_unbroadcast_log_base_and_unused_argument():
    f = make("""
        def f(x, y):
            return math.log(x, 2.0) + math.exp(x)
    """)
    expect(value_and_grad(f, wrt=(0, 1)), """
        def value_and_grad_f(x, y):
            _t2 = math.exp(x)
            _t3 = math.log(x, 2.0) + _t2
            # grad of: return math.log(x, 2.0) + math.exp(x)
            bx = 1.0 * _t2 + 1.0 / (x * math.log(2.0))
            by = rt.zeros_like_grad(y)
            return _t3, rt.distinct((rt.grad_like(bx, x), rt.grad_like(by, y)))
    """)


def test_inactive_values_get_no_adjoint_code_and_a_sum_needs_no_multiply_by_ones():
    f = make("""
        def f(x, data):
            n = data.shape[0]
            scale = np.log(data + 1.0) / n
            return np.sum(x * scale)
    """)
    expect(grad(f), """
        def grad_f(x, data):
            n = data.shape[0]
            scale = np.log(data + 1.0) / n
            # grad of: return np.sum(x * scale)
            bx = rt.unbroadcast(scale, x)
            return rt.grad_like(bx, x)
    """)


def test_nested_loops_keep_a_tape_each_the_inner_one_saved_by_the_outer():
    f = make("""def f(x, n):
            s = 0.0
            for i in range(n):
                y = x
                while y > 0.1:
                    y = math.sqrt(y) - 0.5
                    s = s + y * i
                if s > 10.0:
                    break
            return s
    """)
    check_grad(f, 3.0, 4)
    check_grad(f, 50.0, 4)  # leaves by the break
    assert grad(f).source_for(3.0, 4) == textwrap.dedent("""
        def grad_f(x, n):
            _t1 = range(n)
            _break_1 = False
            s_1 = 0.0
            _tape_1 = []
            for i in _t1:
                s_2 = s_1
                y_1 = x
                _tape = []
                while y_1 > 0.1:
                    _t2 = math.sqrt(y_1)
                    y_2 = _t2 - 0.5
                    s_3 = s_2 + y_2 * i
                    _tape.append(_t2)
                    s_2 = s_3
                    y_1 = y_2
                if s_2 > 10.0:
                    _break_3 = True
                else:
                    _break_3 = _break_1
                _tape_1.append((i, _tape))
                _break_1 = _break_3
                s_1 = s_2
                if _break_3:
                    break
            # grad of: for i in range(n):
            bx = 0.0
            for i, _tape in reversed(_tape_1):
                # grad of: while y > 0.1:
                by_1 = 0.0
                for _t2 in reversed(_tape):
                    # grad of: s = s + y * i
                    by_2 = by_1 + 1.0 * i
                    # grad of: y = math.sqrt(y) - 0.5
                    by_1 = by_2 * 0.5 / _t2
                # grad of: y = x
                bx = bx + by_1
            return bx
    """).strip()


def test_an_input_check_stays_in_the_primal_as_written_and_has_no_adjoint():
    f = make("""
        def f(x, w):
            if x.ndim != 1:
                raise ValueError(f"x must be 1-d, got shape {x.shape}")
            return np.sum(np.sin(x) * w)
    """)
    check_grad(f, np.array([0.3, -1.2, 2.0]), 0.7, wrt=(0, 1))
    expect(grad(f), """
        def grad_f(x, w):
            if x.ndim != 1:
                raise ValueError(f'x must be 1-d, got shape {x.shape}')
            _t2 = np.sin(x)
            _t3 = _t2 * w
            # grad of: return np.sum(np.sin(x) * w)
            b_t3 = rt.unreduce(1.0, _t3)
            b_t2 = rt.unbroadcast(b_t3 * w, _t2)
            bx = b_t2 * np.cos(x)
            return rt.grad_like(bx, x)
    """)


def test_a_with_block_keeps_its_manager_and_the_adjoint_runs_under_the_same_settings():
    f = make("""
        def f(x):
            with np.errstate(divide="ignore"):
                y = np.log(x)
            return np.sum(y * y)
    """)
    check_grad(f, np.array([0.3, 1.2, 2.0]))
    expect(grad(f), """
        def grad_f(x):
            with np.errstate(divide='ignore'):
                y = np.log(x)
            _t1 = y * y
            # grad of: return np.sum(y * y)
            b_t1 = rt.unreduce(1.0, _t1)
            by = b_t1 * 2.0 * y
            with np.errstate(divide='ignore'):
                # grad of: y = np.log(x)
                bx = by / x
            return rt.grad_like(bx, x)
    """)


def test_a_try_stays_a_try_and_the_adjoint_follows_the_path_taken():
    f = make("""
        def f(x, y):
            try:
                r = x / y
            except ZeroDivisionError:
                r = 1e3 * x
            return r * x
    """)
    check_grad(f, 1.3, 0.4, wrt=(0, 1))
    check_grad(f, 1.3, 0.0)
    expect(grad(f, wrt=(0, 1)), """
        def grad_f(x, y):
            try:
                r = x / y
                r_2 = r
                _ok = True
            except ZeroDivisionError:
                _ok = False
                r_1 = 1000.0 * x
                r_2 = r_1
            _t1 = r_2 * x
            b_t1 = rt.seed(_t1)
            # grad of: return r * x
            br_2 = rt.unbroadcast(b_t1 * x, r_2)
            bx = rt.unbroadcast(b_t1 * r_2, x)
            # grad of: try:
            if _ok:
                # grad of: r = x / y
                bx = bx + rt.unbroadcast(br_2 / y, x)
                by = rt.unbroadcast(-br_2 * r / y, y)
            else:
                # grad of: r = 1e3 * x
                bx = bx + br_2 * 1000.0
                by = rt.zeros_like_grad(y)
            return rt.distinct((rt.grad_like(bx, x), rt.grad_like(by, y)))
    """)


def test_a_dataclass_argument_reads_its_fields_and_returns_a_gradient_of_its_type():
    from dataclasses import dataclass

    @dataclass
    class Oscillator:
        k: float
        c: float
        name: str = "spring"

    f = make("""
        def energy(p, x, v):
            return 0.5 * p.k * x ** 2 + p.c * v
    """)
    p = Oscillator(4.0, 0.3)
    assert grad(f)(p, 1.0, 2.0) == Oscillator(0.5, 2.0, "spring")
    assert grad(f).source_for(p, 1.0, 2.0) == textwrap.dedent("""
        def grad_energy(p, x, v):
            _t1 = p.k
            _t2 = 0.5 * _t1
            _t3 = _t2 * x ** 2
            _t4 = p.c
            _t5 = _t4 * v
            _t6 = _t3 + _t5
            b_t6 = rt.seed(_t6)
            # grad of: return 0.5 * p.k * x ** 2 + p.c * v
            b_t3 = rt.unbroadcast(b_t6, _t3)
            b_t5 = rt.unbroadcast(b_t6, _t5)
            b_t4 = b_t5 * v
            b_t2 = b_t3 * x ** 2
            b_t1 = b_t2 * 0.5
            bp = rt.unfield(b_t4, p, 'c') + rt.unfield(b_t1, p, 'k')
            return rt.grad_like(bp, p)
    """).strip()


def test_a_function_given_as_an_argument_is_called_as_itself():
    f = make("""
        def spring(y, k):
            return -k * y

        def f(y, k, rhs):
            v = rhs(y, k)
            return np.sum(v * y) + np.sum(rhs(y, 2.0 * k))
    """)
    source = grad(f, wrt=(0, 1)).source_for(np.ones(2), 0.5, f.__globals__["spring"])
    assert source == textwrap.dedent("""
        def grad_f(y, k, rhs):
            _t1 = -k
            v = _t1 * y
            _t4 = 2.0 * k
            _t5, _res = spring_vjp.forward(y, _t4)
            # grad of: return np.sum(v * y) + np.sum(rhs(y, 2.0 * k))
            b_t5 = rt.unreduce(1.0, _t5)
            _g = spring_vjp.backward(_res, b_t5)
            by = _g[0]
            b_t4 = _g[1]
            bk = b_t4 * 2.0
            by = by + v
            del v
            # grad of: return -k * y
            b_t1 = np.vdot(y, y)
            bspring_y = y * _t1
            bspring_k = -b_t1
            # grad of: v = rhs(y, k)
            bk = bk + bspring_k
            # grad of: v = rhs(y, k)
            by = by + bspring_y
            return rt.grad_like(by, y), float(bk)
    """).strip()


# --- element-by-element loops: in place, O(1) per element (passes/inplace.py) ---

FILL_LOOP = """
    def fill(x):
        y = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            y[i] = np.sin(x[i]) * x[i]
        return np.sum(y)
"""


def test_a_fill_loop_writes_in_place_and_its_adjoint_adds_into_one_buffer():
    x = np.linspace(0.1, 1.0, 6)
    expect_source(grad(make(FILL_LOOP)).source_for(x), """
        def grad_fill(x):
            _t1 = x.shape
            _t2 = _t1[0]
            y = np.zeros(_t2)
            _t3 = range(x.shape[0])
            _tape = []
            for i in _t3:
                _t4 = x[i]
                _t5 = np.sin(_t4)
                _t6 = _t4
                _t7 = _t5 * _t6
                y[i] = _t7
                _tape.append((i, _t5))
            # grad of: return np.sum(y)
            by_1 = rt.unreduce(1.0, y)
            del y
            # grad of: for i in range(x.shape[0]):
            bx = rt.zeros_like_grad(x)
            by_1 = rt.owned(by_1)
            for i, _t5 in reversed(_tape):
                _t4 = x[i]
                _t6 = _t4
                # grad of: y[i] = np.sin(x[i]) * x[i]
                b_t7 = by_1[i]
                by_1[i] = 0.0
                b_t5 = b_t7 * _t6
                b_t6 = b_t7 * _t5
                b_t4 = b_t5 * np.cos(_t4)
                bx[i] += b_t6 + b_t4
            return rt.grad_like(bx, x)
    """)


def test_a_fill_loop_for_numba_saves_into_preallocated_arrays():
    x = np.linspace(0.1, 1.0, 6)
    expect_source(grad(make(FILL_LOOP), backend="numba").source_for(x), """
        def grad_fill(x):
            _t1 = x.shape
            _t2 = _t1[0]
            y = np.zeros(_t2)
            _t3 = range(x.shape[0])
            _tape_n = len(_t3)
            _tape_t5 = np.empty(_tape_n, np.float64)
            _tape_k = 0
            for i in _t3:
                _t4 = x[i]
                _t5 = np.sin(_t4)
                _t6 = _t4
                _t7 = _t5 * _t6
                y[i] = _t7
                _tape_t5[_tape_k] = _t5
                _tape_k = _tape_k + 1
            # grad of: return np.sum(y)
            by_1 = rt.unreduce(1.0, y)
            # grad of: for i in range(x.shape[0]):
            bx = rt.zeros_like_grad(x)
            by_1 = rt.owned(by_1)
            for _tape_k in range(_tape_n - 1, -1, -1):
                i = _t3.start + _tape_k * _t3.step
                _t5 = _tape_t5[_tape_k]
                _t4 = x[i]
                _t6 = _t4
                # grad of: y[i] = np.sin(x[i]) * x[i]
                b_t7 = by_1[i]
                by_1[i] = 0.0
                b_t5 = b_t7 * _t6
                b_t6 = b_t7 * _t5
                b_t4 = b_t5 * np.cos(_t4)
                bx[i] += b_t6 + b_t4
            return rt.grad_like(bx, x)
    """)


def test_a_fill_loop_in_forward_mode_writes_its_tangent_in_place():
    x = np.linspace(0.1, 1.0, 6)
    expect_source(forward(make(FILL_LOOP)).source_for(x, dx=x), """
        def jvp_fill(x, *, dx):
            y = np.zeros(x.shape[0])
            _t3 = range(x.shape[0])
            dy_1 = rt.zero_tangent(y)
            for i in _t3:
                _t4 = x[i]
                d_t4 = dx[i]
                _t5 = np.sin(_t4)
                d_t5 = d_t4 * np.cos(_t4)
                _t7 = _t5 * _t4
                d_t7 = d_t5 * _t4 + _t5 * d_t4
                y[i] = _t7
                dy_1[i] = d_t7
            _t8 = np.sum(y)
            d_t8 = np.sum(dy_1)
            return _t8, d_t8
    """)


def test_a_stencil_in_a_time_loop_reads_like_a_hand_written_adjoint():
    f = make("""
    def heat(u0, a):
        n = u0.shape[0]
        u = u0.copy()
        for t in range(4):
            un = u.copy()
            for i in range(1, n - 1):
                un[i] = u[i] + a * (u[i + 1] - 2.0 * u[i] + u[i - 1])
            u = un
        return np.sum(u * u)
""")
    expect_source(grad(f, wrt=(0, 1)).source_for(np.linspace(0.1, 1.0, 6), 0.1), """
        def grad_heat(u0, a):
            _t1 = u0.shape
            n = _t1[0]
            u = u0.copy()
            _t2 = range(4)
            u_1 = u
            del u
            _tape_1 = []
            for t in _t2:
                un = u_1.copy()
                _t3 = range(1, n - 1)
                _tape = []
                for i in _t3:
                    _t4 = u_1[i]
                    _t5 = u_1[i + 1]
                    _t7 = 2.0 * _t4
                    _t8 = _t5 - _t7
                    _t9 = u_1[i - 1]
                    _t10 = _t8 + _t9
                    _t11 = a * _t10
                    _t12 = _t4 + _t11
                    un[i] = _t12
                    _tape.append((i, _t10))
                _tape_1.append(_tape)
                u_1 = un
            # grad of: return np.sum(u * u)
            b_t13 = rt.unreduce(1.0, u0)
            bu_1 = b_t13 * 2.0 * u_1
            # grad of: for t in range(4):
            ba = 0.0
            for _tape in reversed(_tape_1):
                # grad of: u = un
                bun_1 = bu_1
                # grad of: for i in range(1, n - 1):
                bu_1 = rt.zeros_like_grad(u_1)
                bun_1 = rt.owned(bun_1)
                for i, _t10 in reversed(_tape):
                    # grad of: un[i] = u[i] + a * (u[i + 1] - 2.0 * u[i] + u[i - 1])
                    b_t12 = bun_1[i]
                    bun_1[i] = 0.0
                    ba = ba + b_t12 * _t10
                    b_t10 = b_t12 * a
                    bu_1[i - 1] += b_t10
                    b_t6 = b_t10 * -2.0
                    bu_1[i] += b_t6
                    bu_1[i + 1] += b_t10
                    bu_1[i] += b_t12
                # grad of: un = u.copy()
                bu_1 = bu_1 + bun_1
            return rt.grad_like(bu_1, u0), float(ba)
    """)


def test_a_thomas_solve_saves_three_numbers_per_step_and_recomputes_the_rest():
    f = make("""
    def thomas(a, b, c, d):
        n = d.shape[0]
        cp = np.zeros(n)
        dp = np.zeros(n)
        x = np.zeros(n)
        cp[0] = c[0] / b[0]
        dp[0] = d[0] / b[0]
        for i in range(1, n):
            m = b[i] - a[i] * cp[i - 1]
            cp[i] = c[i] / m
            dp[i] = (d[i] - a[i] * dp[i - 1]) / m
        x[n - 1] = dp[n - 1]
        for i in range(n - 2, -1, -1):
            x[i] = dp[i] - cp[i] * x[i + 1]
        return np.sum(x * x)
""")
    v = np.linspace(0.1, 1.0, 6)
    expect_source(grad(f, wrt=(0, 1, 2, 3)).source_for(v, v + 3, v, v), """
    def grad_thomas(a, b, c, d):
        _t1 = d.shape
        n = _t1[0]
        cp = np.zeros(n)
        dp = np.zeros(n)
        x = np.zeros(n)
        _t2 = c[0]
        _t3 = b[0]
        _t4 = _t2 / _t3
        cp[0] = _t4
        _t5 = d[0]
        _t6 = b[0]
        _t7 = _t5 / _t6
        dp[0] = _t7
        _t8 = range(1, n)
        _tape_1 = []
        for i in _t8:
            _t9 = b[i]
            _t10 = a[i]
            _t11 = cp[i - 1]
            _t12 = _t10 * _t11
            m = _t9 - _t12
            _t13 = c[i]
            _t14 = _t13 / m
            cp[i] = _t14
            _t15 = d[i]
            _t16 = a[i]
            _t17 = dp[i - 1]
            _t18 = _t16 * _t17
            _t19 = _t15 - _t18
            _t20 = _t19 / m
            dp[i] = _t20
            _tape_1.append((i, _t11, _t17))
        _t21 = dp[n - 1]
        x[n - 1] = _t21
        _t22 = range(n - 2, -1, -1)
        _tape = []
        for i_1 in _t22:
            _t23 = dp[i_1]
            _t24 = cp[i_1]
            _t25 = x[i_1 + 1]
            _t26 = _t24 * _t25
            _t27 = _t23 - _t26
            x[i_1] = _t27
            _tape.append((i_1, _t24, _t25))
        _t28 = x * x
        # grad of: return np.sum(x * x)
        b_t28 = rt.unreduce(1.0, _t28)
        del _t28
        bx_2 = b_t28 * 2.0 * x
        del x
        # grad of: for i in range(n - 2, -1, -1):
        bcp_2 = rt.zeros_like_grad(cp)
        del cp
        bdp_2 = rt.zeros_like_grad(dp)
        del dp
        for i_1, _t24, _t25 in reversed(_tape):
            # grad of: x[i] = dp[i] - cp[i] * x[i + 1]
            b_t27 = bx_2[i_1]
            bx_2[i_1] = 0.0
            b_t26 = -b_t27
            b_t24 = b_t26 * _t25
            b_t25 = b_t26 * _t24
            bx_2[i_1 + 1] += b_t25
            bcp_2[i_1] += b_t24
            bdp_2[i_1] += b_t27
        # grad of: x[n - 1] = dp[n - 1]
        b_t21 = bx_2[n - 1]
        bdp_2[n - 1] += b_t21
        # grad of: for i in range(1, n):
        ba = rt.zeros_like_grad(a)
        bb = rt.zeros_like_grad(b)
        bc = rt.zeros_like_grad(c)
        bd = rt.zeros_like_grad(d)
        bcp_2 = rt.owned(bcp_2)
        for i, _t11, _t17 in reversed(_tape_1):
            _t9 = b[i]
            _t10 = a[i]
            _t12 = _t10 * _t11
            m = _t9 - _t12
            _t13 = c[i]
            _t14 = _t13 / m
            _t15 = d[i]
            _t16 = _t10
            _t18 = _t16 * _t17
            _t19 = _t15 - _t18
            _t20 = _t19 / m
            # grad of: dp[i] = (d[i] - a[i] * dp[i - 1]) / m
            b_t20 = bdp_2[i]
            bdp_2[i] = 0.0
            b_t19 = b_t20 / m
            bm = -b_t20 * _t20 / m
            b_t18 = -b_t19
            b_t16 = b_t18 * _t17
            b_t17 = b_t18 * _t16
            bdp_2[i - 1] += b_t17
            ba[i] += b_t16
            bd[i] += b_t19
            # grad of: cp[i] = c[i] / m
            b_t14 = bcp_2[i]
            bcp_2[i] = 0.0
            b_t13 = b_t14 / m
            bm = bm + -b_t14 * _t14 / m
            bc[i] += b_t13
            # grad of: m = b[i] - a[i] * cp[i - 1]
            b_t12 = -bm
            b_t10 = b_t12 * _t11
            b_t11 = b_t12 * _t10
            bcp_2[i - 1] += b_t11
            ba[i] += b_t10
            bb[i] += bm
        # grad of: dp[0] = d[0] / b[0]
        b_t7 = bdp_2[0]
        b_t5 = b_t7 / _t6
        b_t6 = -b_t7 * _t7 / _t6
        bb[0] += b_t6
        bd[0] += b_t5
        # grad of: cp[0] = c[0] / b[0]
        b_t4 = bcp_2[0]
        b_t2 = b_t4 / _t3
        b_t3 = -b_t4 * _t4 / _t3
        bb[0] += b_t3
        bc[0] += b_t2
        return rt.distinct((rt.grad_like(ba, a), rt.grad_like(bb, b), """
        """rt.grad_like(bc, c), rt.grad_like(bd, d)))
    """)


def test_a_checkpointed_loop_that_writes_into_its_state():
    from transpiler import checkpoint
    f = make("""
def relax(x, a):
    u = x.copy()
    for k in checkpoint(range(10), every=3):
        u[0] = u[0] * a
        u += 0.1 * np.sin(u)
    return np.sum(u * u)
""", checkpoint=checkpoint)
    expect_source(grad(f, wrt=(0, 1)).source_for(np.ones(4), 0.2), """
        def grad_relax(x, a):
            u = x.copy()
            _t1 = range(10)
            # checkpointed loop: a snapshot of (u_1, a_1) every 3 steps; _checkpoint_step_3 recomputes the steps between
            (u_1, a_1), _sweep = rt.checkpoint_forward(_checkpoint_step_3, _t1, (u, a), every=3, written=(0,))
            del u
            _t2 = u_1 * u_1
            # grad of: return np.sum(u * u)
            b_t2 = rt.unreduce(1.0, _t2)
            bu_1 = b_t2 * 2.0 * u_1
            # grad of: for k in checkpoint(range(10), every=3):
            _g = rt.checkpoint_reverse(_checkpoint_step_3_vjp, _sweep, (bu_1, rt.zeros_like_grad(a_1)), (0, 1))
            bu = _g[0]
            ba = _g[1]
            return rt.grad_like(bu, x), float(ba)
    """)  # noqa: E501
