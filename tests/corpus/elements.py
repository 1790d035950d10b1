"""Element-by-element loops: arrays filled, updated and read one element at a time, the way
numerical code is written before it is vectorised (fills, stencils, recurrences, solvers)."""

from __future__ import annotations

import numpy as np

_rng = np.random.default_rng(2024)


# --- fill loops into new arrays ---------------------------------------------------------------

def fill_zeros(x, a):
    n = len(x)
    y = np.zeros(n)
    for i in range(n):
        y[i] = a * x[i] ** 2 + np.sin(x[i])
    return np.sum(y * y)


def fill_empty(x):
    y = np.empty(len(x))
    for i in range(len(x)):
        y[i] = np.exp(x[i]) * x[i]
    return np.sum(y * x)


def fill_zeros_like_neighbours(x):
    y = np.zeros_like(x)
    for i in range(1, len(x) - 1):
        y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1] * x[i]
    return np.sum(y ** 2) + y[0] + y[-1]


def fill_copy(x):
    y = x.copy()
    for i in range(1, len(x)):
        y[i] = x[i] * x[i - 1]
    return np.sum(np.sin(y)) + np.sum(y * x)


def fill_2d(m, a):
    rows, cols = m.shape
    y = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            if j == 0:
                y[i, j] = a * m[i, j]
            else:
                y[i, j] = m[i, j] * m[i, j - 1] + a * y[i, j - 1]
    return np.sum(y * m) + np.sum(y ** 2)


def fill_2d_zeros_like(m):
    y = np.zeros_like(m)
    for i in range(1, m.shape[0]):
        for j in range(m.shape[1]):
            y[i, j] = np.tanh(m[i - 1, j]) * m[i, j]
    return np.sum(y * y)


def fill_scalar_parameter(x, a):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = a
    z = np.zeros(len(x))
    for i in range(len(x)):
        z[i] = a * (i + 1)
    return np.sum(y * x) + np.sum(z ** 2) + np.sum(y * z)


def fill_scalar_parameter_only(x, a):
    y = np.empty(len(x))
    for i in range(len(x)):
        if i % 2 == 0:
            y[i] = a
        else:
            y[i] = x[i]
    return np.sum(y ** 3)


def element_augmented_assignment(x, a):
    y = np.ones(len(x))
    for i in range(len(x)):
        y[i] += x[i] * a
        y[i] *= x[i]
        y[i] -= 0.5 * a
    return np.sum(y * y)


# --- writes into an argument ------------------------------------------------------------------

def alias_of_argument(x, a):
    y = x
    for i in range(len(y)):
        y[i] = y[i] * a + 1.0
    return np.sum(y ** 2)


def write_into_argument(x, a):
    for i in range(1, len(x)):
        x[i] = x[i] * a + x[i - 1]
    return np.sum(np.sin(x))


def write_into_2d_argument(m, a):
    for i in range(m.shape[0]):
        for j in range(1, m.shape[1]):
            m[i, j] = m[i, j - 1] * a + m[i, j]
    return np.sum(m ** 2)


def write_into_first(x, w):
    for i in range(len(x)):
        x[i] = x[i] * w[i] + 1.0
    return np.sum(x * w)


# --- reading the old array after writes -------------------------------------------------------

def copy_before_writes(x):
    y = np.sin(x)
    z = y.copy()
    for i in range(1, len(x)):
        y[i] = z[i - 1] * y[i] + y[i - 1]
    return np.sum(y * z) + np.sum(z)


def old_element_then_write(x, a):
    y = np.cos(x)
    total = 0.0
    for i in range(len(x)):
        old = y[i]
        y[i] = old * a + x[i] ** 2
        total = total + old * y[i]
    return total + np.sum(y)


def whole_read_inside_loop(x, a):
    y = x * 1.0
    s = 0.0
    for i in range(len(x)):
        y[i] = np.cos(y[i]) * a
        s = s + np.sum(y * y)
    return s


def whole_read_before_loop(x, a):
    y = np.exp(0.5 * x)
    s = np.sum(y * y)
    m = y * x
    for i in range(len(x)):
        y[i] = y[i] * a - x[i]
    return s * np.sum(y) + np.sum(m * m) + np.sum(m * y)


def element_read_before_loop(x):
    y = x ** 2
    first = y[0]
    last = y[-1]
    for i in range(len(x)):
        y[i] = y[i] * first + last
    return np.sum(y) * first + last


# --- the same element written several times ---------------------------------------------------

def time_loop_same_elements(x):
    y = np.ones(len(x))
    for t in range(3):
        for i in range(len(x)):
            y[i] = y[i] * x[i] + 0.1 * t
    return np.sum(y)


def accumulate_first_element(x):
    y = np.zeros(3)
    for i in range(len(x)):
        y[0] = y[0] + x[i]
        y[1] = y[1] + x[i] * y[0]
        y[2] = y[0] * y[1]
    return np.sum(y) + y[0] * y[2]


def nonlinear_read_modify_write(x, a):
    y = x.copy()
    for t in range(3):
        for i in range(len(y)):
            y[i] = np.sin(y[i]) * a
    return np.sum(y ** 2)


def gauss_seidel_sweeps(b, w):
    """Sweeps of a Gauss-Seidel smoother: the ends written in the outer loop, the inside by an
    inner loop reading what it just wrote."""
    n = b.shape[0]
    u = np.zeros(n)
    for sweep in range(3):
        u[0] = 0.5 * (b[0] + u[1]) * w[0]
        for i in range(1, n - 1):
            u[i] = 0.5 * (b[i] + u[i - 1] * w[i] + u[i + 1])
        u[n - 1] = 0.5 * (b[n - 1] + u[n - 2] * w[n - 1])
    return np.sum(u ** 2) + u[1] * u[n - 2]


def grid_sweeps(g, c):
    """A 2-D array relaxed row by row, columns in an inner loop, a row's sum read between."""
    u = g.copy()
    total = 0.0
    for t in range(2):
        for i in range(1, u.shape[0]):
            for j in range(u.shape[1]):
                u[i, j] = u[i, j] + c * np.tanh(u[i - 1, j])
            total = total + u[i, 0] * u[i - 1, 1]
    return np.sum(u ** 2) + total


def overwrite_then_read(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = x[i] ** 2
        y[i] = y[i] * x[i] + np.sum(y)
    return np.sum(y * y)


# --- classic loops ----------------------------------------------------------------------------

def running_max(x):
    m = np.empty(len(x))
    m[0] = x[0]
    for i in range(1, len(x)):
        m[i] = np.maximum(m[i - 1], x[i])
    return np.sum(m * np.arange(1.0, len(x) + 1.0))


def running_max_builtin_if(x):
    m = np.zeros(len(x))
    m[0] = x[0]
    for i in range(1, len(x)):
        if x[i] > m[i - 1]:
            m[i] = x[i]
        else:
            m[i] = m[i - 1]
    return np.sum(m ** 2) + max(m[2], m[1])


def cumulative_sum(x, w):
    c = np.zeros(len(x))
    c[0] = x[0]
    for i in range(1, len(x)):
        c[i] = c[i - 1] + x[i]
    return np.sum(c * w)


def cumulative_product(x):
    p = np.ones(len(x))
    p[0] = x[0]
    for i in range(1, len(x)):
        p[i] = p[i - 1] * x[i]
    return np.sum(p)


def recurrence(x, a):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y ** 2)


def thomas(a, b, c, d):
    """Solve the tridiagonal system with sub-diagonal a, diagonal b, super-diagonal c."""
    n = len(d)
    cp = np.zeros(n)
    dp = np.zeros(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        if i < n - 1:
            cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.zeros(n)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def thomas_loss(a, b, c, d):
    x = thomas(a, b, c, d)
    return np.sum(x ** 2) + x[0] * x[-1]


def heat_stencil(u, r):
    n = len(u)
    for t in range(4):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + r * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        u = un
    return np.sum(u ** 2)


def rosenbrock_elements(x):
    terms = np.zeros(len(x) - 1)
    for i in range(len(x) - 1):
        terms[i] = 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return np.sum(terms)


def rosenbrock_scalar(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosenbrock_gradient_loop(x):
    """The loss of a gradient written element by element (a function of x; its own gradient
    is the Hessian times the gradient)."""
    g = np.zeros(len(x))
    for i in range(len(x) - 1):
        g[i] = g[i] - 400.0 * x[i] * (x[i + 1] - x[i] ** 2) - 2.0 * (1.0 - x[i])
        g[i + 1] = g[i + 1] + 200.0 * (x[i + 1] - x[i] ** 2)
    return 0.5 * np.sum(g * g)


def product_accumulator(x):
    y = np.zeros(len(x))
    p = 1.0
    for i in range(len(x)):
        y[i] = p * x[i]
        p = p * (1.0 + y[i] ** 2)
    return p


def while_writes(x, a):
    y = np.zeros(len(x))
    i = 0
    while i < len(x):
        y[i] = x[i] * a + (y[i - 1] if i > 0 else 0.0)
        i = i + 1
    return np.sum(y * x)


def while_data_dependent(x):
    y = x.copy()
    total = 0.0
    i = 0
    while total < 2.0 and i < len(y):
        y[i] = y[i] ** 2 + 0.5
        total = total + y[i]
        i = i + 1
    return np.sum(y * y) + total


def loop_with_break(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        if x[i] > 1.0:
            break
        y[i] = x[i] ** 2 + y[i - 1] * x[i]
    return np.sum(y) + y[0] * x[-1]


def write_inside_if(x, a):
    y = x * 1.0
    for i in range(len(x)):
        if x[i] > 0.0:
            y[i] = y[i] * a
        elif x[i] > -0.5:
            y[i] = np.exp(y[i])
        else:
            y[i - 1] = y[i - 1] - y[i] ** 2
    return np.sum(y ** 2)


def loop_with_continue(x):
    y = np.ones(len(x))
    for i in range(len(x)):
        if i % 3 == 1:
            continue
        y[i] = y[i] * np.cos(x[i]) + x[i]
    return np.sum(y * x)


# --- slice writes and views -------------------------------------------------------------------

def slice_write_time_loop(u, r):
    u = u.copy()
    for t in range(4):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def slice_and_element_writes(u, r):
    u = u * 1.0
    for t in range(3):
        u[0] = u[1] * r
        u[1:-1] = u[1:-1] * (1.0 - r) + r * u[2:] ** 2
        u[-1] = u[-2]
    return np.sum(u * u)


def heat_vectorised(u, r):
    """heat_stencil and slice_write_time_loop written with whole-array operations."""
    for t in range(4):
        u = np.concatenate((u[:1], u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]), u[-1:]))
    return np.sum(u ** 2)


def view_alias_read_after_write(x):
    y = x * 2.0
    v = y[1:]
    y[2] = x[0] ** 2
    return np.sum(v * v) + np.sum(y)


def view_alias_in_loop(x):
    y = np.sin(x)
    v = y[1:]
    s = 0.0
    for i in range(len(x)):
        y[i] = y[i] * x[i]
        s = s + v[0]
    return s + np.sum(v)


def fill_2d_chained_index(m):
    y = np.zeros(m.shape)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            y[i][j] = m[i, j] ** 2
    return np.sum(y * m)


# --- integer index arrays and other dtypes ----------------------------------------------------

_IDX_UNIQUE = np.array([3, 0, 4, 1])
_IDX_REPEATED = np.array([0, 2, 2, 1, 4, 0])


def index_array_write_unique(x, a):
    y = np.zeros(5)
    y[_IDX_UNIQUE] = x[:4] * a
    return np.sum(y * np.arange(1.0, 6.0)) + np.sum(y ** 2)


def index_array_write_repeated(x, a):
    y = np.zeros(5)
    y[_IDX_REPEATED] = x * a
    return np.sum(y * np.arange(1.0, 6.0)) + np.sum(y ** 2)


def index_array_augmented_repeated(x, a):
    y = np.ones(5)
    y[_IDX_REPEATED] += x * a
    return np.sum(y * y)


def index_array_read_repeated(x):
    y = np.zeros(len(_IDX_REPEATED))
    for i in range(len(_IDX_REPEATED)):
        y[i] = x[_IDX_REPEATED[i]] ** 2
    return np.sum(y * x[_IDX_REPEATED])


def index_array_in_loop(x, idx):
    y = np.zeros(len(x))
    for k in range(len(idx)):
        y[idx[k]] = y[idx[k]] + x[k] * x[idx[k]]
    return np.sum(y ** 2)


def int_array_written(x):
    counts = np.zeros(len(x), dtype=int)
    for i in range(len(x)):
        counts[i] = i * 2 + int(x[i] > 0.0)
    return np.sum(x * counts) + np.sum(x ** 2 * counts)


def int_argument_written(x, k):
    k = k.copy()
    for i in range(len(k)):
        k[i] = (k[i] + i) % len(x)
    return np.sum(x[k] ** 2)


def float32_fill(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] * x[i] + np.sin(x[i])
    return np.sum(y * x)


def float32_recurrence(x, a):
    y = x.copy()
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + y[i]
    return np.sum(y ** 2)


def complex_copy_written(x, c):
    z = c.copy()
    for i in range(len(z)):
        z[i] = z[i] * 2.0
    return np.sum(x * np.real(z))


# --- writes whose old array the adjoint reads: saved element by element and put back ---

def whole_read_in_a_branch(x, a):
    y = x * 1.0
    s = 0.0
    for i in range(len(x)):
        if y[i] > 0.0:
            y[i] = np.sin(y[i]) * a
        s = s + np.sum(y * y * a)
    return s


def whole_read_in_an_inner_loop(x, a):
    y = x * 1.0
    s = 0.0
    for t in range(3):
        for i in range(1, len(x)):
            y[i] = y[i - 1] * a + np.cos(y[i])
            s = s + np.dot(y, x)
    return s


def whole_read_in_a_while_with_break(x, a):
    y = x * 1.0
    s = 0.0
    i = 0
    while i < len(x):
        y[i] = y[i] * a - 0.1
        s = s + np.sum(np.tanh(y))
        if s > 2.0:
            break
        i = i + 1
    return s


def product_with_the_written_array_after_the_loop(x, a):
    y = x * 1.0
    s = 0.0
    for i in range(len(x)):
        y[i] = np.exp(0.3 * y[i]) * a
        s = s + np.sum(y ** 2)
    return s + np.sum(x * y)


def slice_write_read_whole_each_step(u, r):
    u = u * 1.0
    s = 0.0
    for t in range(4):
        u[1:-1] = u[1:-1] + r * (u[2:] - u[:-2]) ** 2
        s = s + np.sum(np.sin(u))
    return s


_X = np.array([0.3, -0.7, 1.1, 0.45, -0.2, 0.8, -1.3])
_X8 = np.array([0.4, 0.9, -0.3, 0.6, 0.75, -0.5, 0.2, 0.35])
_M = _rng.uniform(-1.0, 1.0, (3, 4))
_N = 6

CASES = {
    "fill_zeros": (fill_zeros, (_X, 0.7), (0, 1)),
    "gauss_seidel_sweeps": (gauss_seidel_sweeps, (_X, _X * 0.3 + 0.2), (0, 1)),
    "grid_sweeps": (grid_sweeps, (_M, 0.6), (0, 1)),
    "fill_empty": (fill_empty, (_X,), (0,)),
    "fill_zeros_like_neighbours": (fill_zeros_like_neighbours, (_X,), (0,)),
    "fill_copy": (fill_copy, (_X,), (0,)),
    "fill_2d": (fill_2d, (_M, 0.6), (0, 1)),
    "fill_2d_zeros_like": (fill_2d_zeros_like, (_M,), (0,)),
    "fill_scalar_parameter": (fill_scalar_parameter, (_X, 0.7), (0, 1)),
    "fill_scalar_parameter_only": (fill_scalar_parameter_only, (_X, -0.8), (1,)),
    "element_augmented_assignment": (element_augmented_assignment, (_X, 0.7), (0, 1)),
    "alias_of_argument": (alias_of_argument, (_X, 0.7), (0, 1)),
    "write_into_argument": (write_into_argument, (_X, 0.7), (0, 1)),
    "write_into_2d_argument": (write_into_2d_argument, (_M, 0.6), (0, 1)),
    "write_into_first": (write_into_first, (_X, _X[::-1] * 0.5), (0, 1)),
    "copy_before_writes": (copy_before_writes, (_X,), (0,)),
    "old_element_then_write": (old_element_then_write, (_X, 0.7), (0, 1)),
    "whole_read_inside_loop": (whole_read_inside_loop, (_X, 0.7), (0, 1)),
    "whole_read_in_a_branch": (whole_read_in_a_branch, (_X, 0.7), (0, 1)),
    "whole_read_in_an_inner_loop": (whole_read_in_an_inner_loop, (_X, 0.6), (0, 1)),
    "whole_read_in_a_while_with_break": (whole_read_in_a_while_with_break, (_X, 0.9), (0, 1)),
    "product_with_the_written_array_after_the_loop": (
        product_with_the_written_array_after_the_loop, (_X, 0.7), (0, 1)),
    "slice_write_read_whole_each_step": (slice_write_read_whole_each_step, (_X8, 0.3), (0, 1)),
    "whole_read_before_loop": (whole_read_before_loop, (_X, 0.7), (0, 1)),
    "element_read_before_loop": (element_read_before_loop, (_X,), (0,)),
    "time_loop_same_elements": (time_loop_same_elements, (_X,), (0,)),
    "accumulate_first_element": (accumulate_first_element, (_X,), (0,)),
    "nonlinear_read_modify_write": (nonlinear_read_modify_write, (_X, 1.3), (0, 1)),
    "overwrite_then_read": (overwrite_then_read, (_X,), (0,)),
    "running_max": (running_max, (_X,), (0,)),
    "running_max_builtin_if": (running_max_builtin_if, (_X,), (0,)),
    "cumulative_sum": (cumulative_sum, (_X, np.linspace(0.5, 2.0, len(_X))), (0,)),
    "cumulative_product": (cumulative_product, (_X,), (0,)),
    "recurrence": (recurrence, (_X, 0.8), (0, 1)),
    "thomas": (thomas_loss, (_rng.uniform(-1.0, 1.0, _N), _rng.uniform(3.0, 4.0, _N),
                             _rng.uniform(-1.0, 1.0, _N), _rng.uniform(-1.0, 1.0, _N)),
               (0, 1, 2, 3)),
    "heat_stencil": (heat_stencil, (np.sin(np.linspace(0.0, 3.0, 9)), 0.2), (0, 1)),
    "rosenbrock_elements": (rosenbrock_elements, (_X[:6] * 0.5 + 0.5,), (0,)),
    "rosenbrock_scalar": (rosenbrock_scalar, (_X[:6] * 0.5 + 0.5,), (0,)),
    "rosenbrock_gradient_loop": (rosenbrock_gradient_loop, (_X[:6] * 0.5 + 0.5,), (0,)),
    "product_accumulator": (product_accumulator, (_X,), (0,)),
    "while_writes": (while_writes, (_X, 0.7), (0, 1)),
    "while_data_dependent": (while_data_dependent, (_X8,), (0,)),
    "loop_with_break": (loop_with_break, (np.array([0.3, -0.6, 0.8, 1.4, 0.2, 0.5]),), (0,)),
    "write_inside_if": (write_inside_if, (_X, 0.7), (0, 1)),
    "loop_with_continue": (loop_with_continue, (_X,), (0,)),
    "slice_write_time_loop": (slice_write_time_loop, (np.sin(np.linspace(0.0, 3.0, 9)), 0.2),
                              (0, 1)),
    "slice_and_element_writes": (slice_and_element_writes, (_X8, 0.3), (0, 1)),
    "index_array_write_unique": (index_array_write_unique, (_X[:5], 0.7), (0, 1)),
    "index_array_write_repeated": (index_array_write_repeated, (_X[:6], 0.7), (0, 1)),
    "index_array_augmented_repeated": (index_array_augmented_repeated, (_X[:6], 0.7), (0, 1)),
    "index_array_read_repeated": (index_array_read_repeated, (_X[:5],), (0,)),
    "index_array_in_loop": (index_array_in_loop, (_X[:5], np.array([1, 1, 0, 4, 1])), (0,)),
    "int_array_written": (int_array_written, (_X,), (0,)),
    "int_argument_written": (int_argument_written, (_X, np.array([0, 3, 3, 6, 2])), (0,)),
    "float32_fill": (float32_fill, (_X.astype(np.float32),), (0,)),
    "float32_recurrence": (float32_recurrence, (_X.astype(np.float32), 0.8), (0,)),
}

# The cases whose Hessian-vector products are checked too.
HVP = ("fill_zeros", "nonlinear_read_modify_write", "recurrence", "thomas", "heat_stencil",
       "rosenbrock_elements", "old_element_then_write", "write_into_argument",
       "slice_write_time_loop", "whole_read_inside_loop", "whole_read_in_a_branch",
       "slice_write_read_whole_each_step", "gauss_seidel_sweeps", "grid_sweeps")

# Constructs that may be refused (a TranspileError at the line of the write) or give NumPy's
# numbers, never other numbers: name -> (function, args, wrt, the source text of the write,
# what the refusal says).
REFUSED_OR_RIGHT = {
    "view_alias_read_after_write": (view_alias_read_after_write, (_X,), (0,), "y[2] = ",
                                    "would also change 'v'"),
    "view_alias_in_loop": (view_alias_in_loop, (_X,), (0,), "y[i] = y[i] * x[i]",
                           "would also change 'v'"),
    "fill_2d_chained_index": (fill_2d_chained_index, (_M,), (0,), "y[i][j] = ",
                              "nested subscript"),
}

# A complex argument written element by element (in a copy).
COMPLEX = (complex_copy_written, (_X, _X + 0.5j))
