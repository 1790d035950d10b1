"""Statements that do not change the mathematics: input checks, ``raise``, ``assert``,
reports (``warnings.warn``, logging), ``with`` blocks, and ``return`` on every path.
Checked against finite differences by tests/test_gradients.py (reverse) and
tests/test_forward.py (forward); tests/test_statements.py checks what they do at run time.
"""

import contextlib
import io
import logging
import math
import warnings

import numpy as np

_LOG = logging.getLogger("tests.corpus.statements")


def input_checks(x, w):
    if x.ndim != 1:
        raise ValueError(f"x must be 1-d, got shape {x.shape}")
    if not np.all(np.isfinite(x)) or w <= 0.0:
        raise ValueError("x must be finite and w positive")
    assert x.shape[0] > 1, "need at least two points"
    return np.sum(np.sin(x) * w * x)


def reports_values(x):
    y = np.sum(np.exp(x) * x)
    if y > 1e6:
        warnings.warn(f"large value {y:.3g}", RuntimeWarning, stacklevel=2)
    _LOG.debug("y = %s from %s", y, x)
    logging.debug("norm %s", np.linalg.norm(x))
    return y


def raise_in_loop(x):
    u = x
    for i in range(6):
        u = u - 0.1 * np.sin(u) * u
        if not np.all(np.isfinite(u)):
            raise FloatingPointError(f"the scheme blew up at step {i}")
        if np.max(np.abs(u)) > 1e8:
            raise OverflowError("too large")
    return np.sum(u ** 2)


def _checked_log(v):
    if np.any(v <= 0.0):
        raise ValueError("log of a non-positive value")
    return np.log(v)


def _activation(v, kind):
    if kind == "tanh":
        return np.tanh(v)
    elif kind == "softplus":
        return np.log1p(np.exp(v))
    raise ValueError(f"unknown activation {kind!r}")


def helpers_that_check(x):
    y = _checked_log(x)  # a whole statement: inlined
    z = _activation(y, "softplus")  # ends in a raise: compiled as a pair
    return np.sum(_checked_log(x + 1.0) * z) + np.sum(_activation(x, "tanh"))


def returns_on_every_branch(x, y):
    if x > y:
        return x * y
    elif x > 0.5 * y:
        return math.sin(x) + y
    else:
        return x ** 3 - y


def returns_inside_loop_else_raises(a):
    x = a
    for i in range(60):
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-14:
            return x_new
        x = x_new
    raise RuntimeError("no convergence")


def while_true_returns(x):
    k = 0
    while True:
        x = np.cos(x) + 0.1 * x
        k += 1
        if k >= 4:
            return np.sum(x * x)


def for_else_raises(a):
    x = a
    for _ in range(60):
        x = 0.5 * (x + a / x)
        if abs(x * x - a) < 1e-12:
            break
    else:
        raise RuntimeError("no convergence")
    return x * a


def errstate_guarded_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x)
        y = np.where(np.isfinite(y), y, 0.0)
    return np.sum(y * x)


def errstate_return_inside(x):
    s = np.sum(x)
    with np.errstate(over="ignore"):
        y = np.exp(x * s)
        if s > 10.0:
            return np.sum(np.sqrt(y))
        return np.sum(y * y)


def catch_warnings_filter(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y = np.sqrt(x)
    return np.sum(np.nan_to_num(y) * x)


def errstate_in_loop(x, n):
    acc = 0.0
    for i in range(n):
        with np.errstate(divide="ignore"):
            y = np.log(x * (i + 1))
        acc = acc + np.sum(y * y)
    return acc


def nested_managers_return_in_loop(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(10):
            with np.errstate(over="ignore"), np.errstate(under="ignore"):
                x = x * 1.5
                if np.max(x) > 3.0:
                    return np.sum(np.exp(x))
    return np.sum(x)


def opaque_manager_as(x):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        print("shape", x.shape)
        y = np.sin(x)
    return np.sum(y * len(out.getvalue()))


def _guarded_root(v):
    with np.errstate(invalid="ignore"):
        r = np.sqrt(v)
    return r * v


def helper_with_a_with(x):
    return np.sum(_guarded_root(x) * 2.0) + np.sum(_guarded_root(x * x))


def _log_under(v, mode):
    with np.errstate(divide=mode):
        r = np.log(v)
    return r


def helper_manager_reads_a_parameter(x):
    return np.sum(_log_under(x, "ignore") * x) + np.sum(_log_under(x * 2.0, "warn"))


def manager_varies_in_loop(x, modes):
    acc = 0.0
    for i in range(len(modes)):
        with np.errstate(divide=modes[i], invalid=modes[i]):
            y = np.log(x) * i
        acc = acc + np.sum(y * x)
    return acc


def as_rebinds_a_name(x):
    w = 2.0
    y = x * w
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        z = np.sin(y)
    return np.sum(z) + len(w)


def break_and_raise_in_with_in_loop(x):
    for _ in range(10):
        with np.errstate(over="ignore", invalid="raise"):
            x = x * 1.3
            if np.sum(x) > 10.0:
                break
            if np.any(x > 1e6):
                raise OverflowError("too large")
            x = np.sin(x) + x
    return np.sum(x * x)


def with_in_a_function_defined_inside(x):
    def g(v):
        with np.errstate(divide="ignore"):
            return np.log(v) * v
    return np.sum(g(x) * g(x + 1.0))


def with_without_adjoint(x):
    y = np.sin(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.warn("quiet", stacklevel=2)
    return np.sum(y)


def cholesky_with_jitter(x, c):
    k = np.outer(x, x) + c * np.eye(x.shape[0])
    try:
        chol = np.linalg.cholesky(k)
    except np.linalg.LinAlgError:
        chol = np.linalg.cholesky(k + (1.0 - 2.0 * c) * np.eye(x.shape[0]))
    return 2.0 * np.sum(np.log(np.diag(chol)))


def ratio_or_fallback(x, y):
    try:
        r = x / y
    except ZeroDivisionError as err:
        _LOG.debug("%s: using a large ratio", err)
        r = x * 1e3
    return r * x


def solve_or_raise(a, b):
    try:
        x = np.linalg.solve(a, b)
        r = a @ x - b
    except np.linalg.LinAlgError as err:
        raise ValueError("singular system") from err
    return np.sum(x * x) + np.sum(r * r)


def log_or_return(x):
    total = 0.0
    for v in x:
        try:
            e = math.log(v)
        except ValueError:
            return total * v
        total = total + e * v
    return total


def try_else(x, y):
    try:
        q = x / y
    except ZeroDivisionError:
        return x * x
    else:
        for _ in range(2):
            q = math.sin(q) + q
    return q * y


def simulate_or_explain(x, k):
    try:
        v = np.zeros_like(x)
        for _ in range(20):
            v = v - 0.05 * k * x
            x = x + 0.05 * v
            if not np.all(np.isfinite(x)):
                raise FloatingPointError("diverged")
        e = np.sum(x * x) + np.sum(v * v)
    except FloatingPointError as err:
        raise RuntimeError(f"the oscillator with k={k} diverged") from err
    return e


_EVALUATIONS = []  # (what a cleanup counts: state outside, as the original writes it)


def counted_with_finally(x, k):
    try:
        v = np.tanh(k * x)
        e = np.sum(v * x)
    finally:
        _EVALUATIONS.append(1)
    return e * k


def returns_inside_try_finally(x):
    scale = 2.0
    try:
        return np.sum(np.cos(x) * x) * scale
    finally:
        _LOG.debug("evaluated at %s", x)


def handled_and_cleaned_up(x, y):
    try:
        r = x / y
    except ZeroDivisionError:
        r = x * 1e3
    finally:
        done = True
    return r * x if done else 0.0


_V = np.array([0.3, 1.1, 0.7, 1.9])

CASES = {
    "input_checks": (input_checks, (_V, 0.8), (0, 1)),
    "reports_values": (reports_values, (_V,), (0,)),
    "raise_in_loop": (raise_in_loop, (_V,), (0,)),
    "helpers_that_check": (helpers_that_check, (_V,), (0,)),
    "returns_on_every_branch_if": (returns_on_every_branch, (1.3, 0.9), (0, 1)),
    "returns_on_every_branch_elif": (returns_on_every_branch, (0.7, 0.9), (0, 1)),
    "returns_on_every_branch_else": (returns_on_every_branch, (0.2, 0.9), (0, 1)),
    "returns_inside_loop_else_raises": (returns_inside_loop_else_raises, (2.0,), (0,)),
    "while_true_returns": (while_true_returns, (_V,), (0,)),
    "for_else_raises": (for_else_raises, (3.0,), (0,)),
    "errstate_guarded_log": (errstate_guarded_log, (_V,), (0,)),
    "errstate_return_inside_small": (errstate_return_inside, (_V * 0.1,), (0,)),
    "errstate_return_inside_large": (errstate_return_inside, (_V * 3.0,), (0,)),
    "catch_warnings_filter": (catch_warnings_filter, (_V,), (0,)),
    "errstate_in_loop": (errstate_in_loop, (_V, 3), (0,)),
    "nested_managers_return_in_loop": (nested_managers_return_in_loop, (_V,), (0,)),
    "opaque_manager_as": (opaque_manager_as, (_V,), (0,)),
    "helper_with_a_with": (helper_with_a_with, (_V,), (0,)),
    "helper_manager_reads_a_parameter": (helper_manager_reads_a_parameter, (_V,), (0,)),
    "manager_varies_in_loop": (manager_varies_in_loop, (_V, ["ignore", "raise", "warn"]), (0,)),
    "as_rebinds_a_name": (as_rebinds_a_name, (_V,), (0,)),
    "break_and_raise_in_with_in_loop": (break_and_raise_in_with_in_loop, (_V * 0.5,), (0,)),
    "with_in_a_function_defined_inside": (with_in_a_function_defined_inside, (_V,), (0,)),
    "with_without_adjoint": (with_without_adjoint, (_V,), (0,)),
    "try_cholesky_succeeds": (cholesky_with_jitter, (_V, 1.5), (0, 1)),
    "try_cholesky_falls_back": (cholesky_with_jitter, (_V, -0.2), (0, 1)),
    "try_ratio_succeeds": (ratio_or_fallback, (1.3, 0.4), (0, 1)),
    "try_ratio_falls_back": (ratio_or_fallback, (1.3, 0.0), (0,)),
    "try_of_two_statements_re_raises": (solve_or_raise, (np.eye(3) * 2.0 + 0.1, _V[:3]),
                                        (0, 1)),
    "try_in_loop_returns_from_handler": (log_or_return, (np.array([0.5, 2.0, -1.0, 3.0]),),
                                         (0,)),
    "try_in_loop_never_fails": (log_or_return, (_V,), (0,)),
    "try_else_succeeds": (try_else, (1.3, 0.7), (0, 1)),
    "try_else_handler_returns": (try_else, (1.3, 0.0), (0,)),
    "try_a_loop_whose_handler_re_raises": (simulate_or_explain, (_V, 2.0), (0, 1)),
    "try_finally_counts": (counted_with_finally, (_V, 0.7), (0, 1)),
    "try_finally_returns": (returns_inside_try_finally, (_V,), (0,)),
    "try_except_finally_succeeds": (handled_and_cleaned_up, (1.3, 0.4), (0, 1)),
    "try_except_finally_falls_back": (handled_and_cleaned_up, (1.3, 0.0), (0,)),
}
