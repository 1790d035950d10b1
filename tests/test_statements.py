"""What statements that do not change the mathematics do at run time: a check raises as the
original does, in every entry point; the derivative code of an ``np.errstate`` or
``warnings.catch_warnings`` block runs under the same settings; any other context manager is
entered and exited once per call; returns on every path; refusals that remain.
(Their gradients are checked against finite differences in the corpus, tests/corpus/statements.py.)
"""

import contextlib
import warnings

import numpy as np
import pytest

from tests.corpus import statements as S
from tests.test_forward import check_hessian
from tests.util import make
from transpiler import TranspileError, check_grad, forward, grad, hvp, jvp, value_and_grad

_V = np.array([0.3, 1.1, 0.7, 1.9])


def _entry_points(f, *args):
    """Each way of calling the derivative of ``f`` at ``args`` (wrt the first argument)."""
    x = args[0]
    return {
        "grad": lambda: grad(f)(*args),
        "grad_noopt": lambda: grad(f, optimize=False)(*args),
        "value_and_grad": lambda: value_and_grad(f)(*args),
        "jvp": lambda: jvp(f, args, (np.ones_like(x),) + (None,) * (len(args) - 1)),
        "hvp": lambda: hvp(f)(*args, np.ones_like(x)),
    }


@pytest.mark.parametrize("entry", ["grad", "grad_noopt", "value_and_grad", "jvp", "hvp"])
@pytest.mark.parametrize("args, error, message", [
    ((np.ones((2, 2)), 0.5), ValueError, r"x must be 1-d, got shape \(2, 2\)"),
    ((np.array([1.0, np.nan]), 0.5), ValueError, "x must be finite and w positive"),
    ((np.ones(3), -1.0), ValueError, "x must be finite and w positive"),
    ((np.ones(1), 0.5), AssertionError, "need at least two points"),
], ids=["ndim", "nan", "negative_w", "assert"])
def test_an_input_check_raises_as_the_original_does(entry, args, error, message):
    with pytest.raises(error, match=message):
        S.input_checks(*args)
    with pytest.raises(error, match=message):
        _entry_points(S.input_checks, *args)[entry]()


@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.parametrize("entry", ["grad", "jvp", "hvp"])
def test_a_raise_inside_a_loop_and_in_a_helper_raises_as_the_original(entry):
    with pytest.raises(FloatingPointError, match="blew up at step 0"):
        _entry_points(S.raise_in_loop, np.array([np.inf, 1.0]))[entry]()
    with pytest.raises(ValueError, match="log of a non-positive value"):
        _entry_points(S.helpers_that_check, np.array([-1.0, 1.0]))[entry]()
    with pytest.raises(RuntimeError, match="no convergence"):
        grad(S.for_else_raises)(-4.0)  # Heron's iteration for a negative number never ends
    with pytest.raises(RuntimeError, match="no convergence"):
        jvp(S.returns_inside_loop_else_raises, (-4.0,), (1.0,))


def test_the_check_stays_in_the_primal_and_has_no_adjoint():
    source = grad(S.input_checks).source
    primal, adjoint = source.split("# grad of:", 1)
    assert source.count("raise ValueError") == 2 and "raise" not in adjoint
    assert "assert x.shape[0] > 1" in primal and "assert" not in adjoint


def test_reports_run_in_the_primal_and_read_the_values(caplog):
    f = make("""
        def f(x):
            y = np.sum(x * x)
            warnings.warn(f"y is {y:.2f}")
            print("y =", y)
            return y
    """, warnings=warnings)
    with pytest.warns(UserWarning, match="y is 5.00"):
        g = grad(f)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [2.0, 4.0])
    with caplog.at_level("DEBUG", logger="tests.corpus.statements"):
        grad(S.reports_values)(_V)
    assert f"y = {S.reports_values(_V)}" in caplog.text


@pytest.mark.parametrize("mode", ["reverse", "forward", "hvp"])
def test_errstate_covers_the_derivative_code_too(mode):
    """Under an outer errstate that raises, the function's own errstate lets log(0) through,
    and its derivative (1/x at 0) too."""
    x = np.array([0.0, 1.0, 2.0])
    run = {"reverse": lambda: grad(S.errstate_guarded_log)(x),
           "forward": lambda: jvp(S.errstate_guarded_log, (x,), (np.ones(3),))[1],
           "hvp": lambda: hvp(S.errstate_guarded_log)(x, np.ones(3))}[mode]
    with np.errstate(all="raise"):
        S.errstate_guarded_log(x)  # the original runs
        run()  # and so does its derivative
    f = make("""
        def f(x):
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.log(x)
            return np.sum(np.where(np.isfinite(y), y, 0.0) * x)
    """)
    source = grad(f).source
    assert source.count("with np.errstate(divide='ignore', invalid='ignore'):") == 2
    assert "with np.errstate" in forward(f).source


def test_catch_warnings_covers_the_adjoint_with_its_filters():
    x = np.array([-1.0, 1.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S.catch_warnings_filter(x)
        g = grad(S.catch_warnings_filter)(x)  # the adjoint's 0.5 / sqrt(-1) warns nowhere
        jvp(S.catch_warnings_filter, (x,), (np.ones(3),))
    assert np.isnan(g[0]) and np.isfinite(g[1:]).all()
    adjoint = grad(S.catch_warnings_filter).source.split("# grad of:", 1)[1]
    assert "with warnings.catch_warnings():" in adjoint
    assert "warnings.simplefilter('ignore', RuntimeWarning)" in adjoint


class _Counting:
    """A context manager that counts how often it is entered and exited."""

    def __init__(self):
        self.entered = self.exited = 0
        self.scale = 3.0

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        self.exited += 1
        return False


def test_another_manager_is_entered_and_exited_once_per_call():
    manager = _Counting()
    f = make("""
        def f(x):
            with manager as m:
                y = np.sin(x) * m.scale
                if np.sum(y) > 100.0:
                    return np.sum(y)
            return np.sum(y * y)
    """, manager=manager)
    for optimize in (True, False):
        grad(f, optimize=optimize)(_V)
        jvp(f, (_V,), (np.ones(4),), optimize=optimize)
    assert manager.entered == manager.exited == 4
    np.testing.assert_allclose(grad(f)(_V), 2.0 * 9.0 * np.sin(_V) * np.cos(_V))
    assert "with rt.unsuppressed(manager) as m:" in grad(f).source


def test_a_manager_that_swallows_an_exception_is_an_error_not_a_gradient():
    f = make("""
        def f(x):
            y = x
            with contextlib.suppress(ZeroDivisionError):
                y = x * 2.0
                y = y / (x - 1.0)
            return y
    """, contextlib=contextlib)
    assert grad(f)(3.0) == pytest.approx(-2.0 / 4.0)  # nothing suppressed: as written
    with pytest.raises(RuntimeError, match="suppressed ZeroDivisionError"):
        grad(f)(1.0)


def test_returns_on_every_path_read_as_branches():
    source = grad(S.returns_on_every_branch, wrt=(0, 1)).source
    assert "_returned" not in source  # the flag a later statement would test is not needed
    assert grad(S.returns_on_every_branch)(1.3, 0.9) == pytest.approx(0.9)


@pytest.mark.parametrize("name", ["input_checks", "raise_in_loop", "helpers_that_check",
                                  "errstate_guarded_log", "errstate_return_inside_small",
                                  "while_true_returns", "nested_managers_return_in_loop",
                                  "helper_with_a_with", "helper_manager_reads_a_parameter",
                                  "manager_varies_in_loop", "break_and_raise_in_with_in_loop",
                                  "with_in_a_function_defined_inside", "try_cholesky_succeeds",
                                  "try_cholesky_falls_back", "try_of_two_statements_re_raises",
                                  "try_in_loop_returns_from_handler",
                                  "try_a_loop_whose_handler_re_raises"])
def test_hessians_of_functions_with_these_statements(name):
    fn, args, _ = S.CASES[name]
    check_hessian(fn, args)


@pytest.mark.parametrize("body, message, line", [
    ("if np.sum(x) > 0.0:\n        return np.sum(x)\n    y = x", "may end without 'return", 4),
    ("raise ValueError('never')", "never returns a value", 1),
    ("with np.errstate(all=str(x)):\n        x = x * 2\n    return np.sum(x)",
     "context manager built from differentiated values", 2),
    ("try:\n        x = x * 2\n    finally:\n        return np.sum(x)",
     "'return' inside 'finally' is not supported", 5),
    ("try:\n        x = x * 2\n    except ValueError:\n        pass\n    except TypeError:\n"
     "        pass\n    return np.sum(x)", "more than one 'except'", 6),
    ("try:\n        x = x * 2\n    except:\n        pass\n    return np.sum(x)",
     "bare 'except:'", 4),
    ("try:\n        for i in range(2):\n            x = x * 2\n    except ValueError:\n"
     "        pass\n    return np.sum(x)", "'for' inside 'try'", 3),
    ("try:\n        for i in range(2):\n            x = x * 2\n    except ValueError:\n"
     "        if np.sum(x) > 0:\n            raise\n    return np.sum(x)", "'for' inside 'try'",
     3),
    ("try:\n        x = x * 2\n        x = np.log(x)\n    except ValueError:\n"
     "        x = x + 1.0\n    return np.sum(x)", "only when its handler raises", 2),
    ("try:\n        x = x * 2 if np.sum(x) > 0 else x\n    except ValueError:\n        pass\n"
     "    return np.sum(x)", "conditional expression or a comprehension inside 'try'", 3),
    ("kind = ValueError\n    try:\n        x = x * 2\n    except kind:\n        pass\n"
     "    return np.sum(x)", "must not be a variable", 5),
    ("with open('f') as (a, b):\n        pass\n    return np.sum(x)", "'with ... as' into", 2),
])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_what_stays_refused_is_named_at_its_line(body, message, line, mode):
    f = make(f"def f(x):\n    {body}\n")
    run = grad(f) if mode == "reverse" else forward(f)
    with pytest.raises(TranspileError, match=message) as info:
        run(np.ones(3)) if mode == "reverse" else run(np.ones(3), dx=np.ones(3))
    assert info.value.lineno == line


def test_the_as_value_of_each_iteration_is_the_one_its_adjoint_reads():
    class Scale:
        def __init__(self, s):
            self.scale = s

    class Cycling:  # each entry hands out another scale: 2, 3, 1, 2
        def __init__(self):
            self.n = 0

        def __enter__(self):
            self.n += 1
            return Scale(float(self.n % 3 + 1))

        def __exit__(self, *exc):
            return False

    manager = Cycling()
    f = make("""
        def f(x):
            acc = 0.0
            for i in range(4):
                with manager as s:
                    y = x * s.scale
                acc = acc + np.sum(np.sin(y))
            return acc
    """, manager=manager)
    x = np.array([0.3, 0.8])
    expected = sum(np.cos(x * (k % 3 + 1)) * (k % 3 + 1) for k in range(1, 5))
    for optimize in (True, False):
        manager.n = 0
        np.testing.assert_allclose(grad(f, optimize=optimize)(x), expected, rtol=1e-12)
        manager.n = 0
        _, tangent = jvp(f, (x,), (np.ones(2),), optimize=optimize)
        assert tangent == pytest.approx(np.sum(expected), rel=1e-12)


_REPORTING = """
def status(step, u, every=2):
    if step % every == 0:
        n = 0
        for v in u:
            n += 1
        print("step {}: energy {:.4f}, {} cells".format(step, float(np.sum(u * u)), n))
        detail(u)

def detail(u):
    s = f"{np.linalg.norm(u):.3f}"
    if len(s) > 100:
        warnings.warn("long", stacklevel=2)

def writes_an_element(u):
    u[0] = 0.0

def adds_in_place(u):
    u += 1.0

def adds_in_place_through_a_name(u):
    w = u
    w += 1.0

def appends(xs):
    xs.append(1.0)

def calls_a_method(u):
    u.sort()

def f(u, alpha):
    for i in range(4):
        u = u + alpha * np.sin(u)
        status(i, u)
    return np.sum(u ** 2)
"""


def test_a_helper_of_yours_that_only_reports_runs_in_the_primal(capsys):
    f = make(_REPORTING, warnings=warnings)
    u = np.array([0.3, 0.9, 1.4])
    for optimize in (True, False):
        expected = f(u, 0.2)
        printed = capsys.readouterr().out
        assert printed.count("step ") == 2
        value, gradient = value_and_grad(f, wrt=(0, 1), optimize=optimize)(u, 0.2)
        assert value == expected and capsys.readouterr().out == printed  # as the original
        jvp(f, (u, 0.2), (np.ones(3), 1.0), optimize=optimize)
        assert capsys.readouterr().out == printed
    check_hessian(f, (u, 0.2))


def test_a_helper_writing_an_element_of_the_array_it_is_given_changes_it():
    """(a write into the array, as ``u[0] = 0.0`` written in the loop would be)"""
    f = make(_REPORTING.replace("status(i, u)", "writes_an_element(u)"), warnings=warnings)
    check_grad(f, np.array([0.3, 0.9, 1.4]), 0.2, wrt=(0, 1))


@pytest.mark.parametrize("helper", ["adds_in_place", "adds_in_place_through_a_name", "appends",
                                    "calls_a_method"])
def test_a_helper_that_may_change_its_arguments_stays_refused(helper):
    f = make(_REPORTING.replace("status(i, u)", f"{helper}(u)"), warnings=warnings)
    with pytest.raises(TranspileError, match="result of this call is discarded|changes its "
                       r"argument '\w+' in place"):
        grad(f)(np.ones(3), 0.2)


@pytest.mark.parametrize("entry", ["grad", "jvp", "hvp"])
def test_a_handler_that_re_raises_raises_as_the_original(entry):
    singular = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="singular system") as info:
        _entry_points(S.solve_or_raise, singular, np.ones(3))[entry]()
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)


def test_what_a_try_tries_is_the_primal_alone():
    """The tangent of sqrt at 0 divides by zero; tried with the primal, the handler would take
    it for the primal's error and change the path."""
    f = make("""
        def f(x):
            try:
                r = math.sqrt(x)
            except ZeroDivisionError:
                r = 5.0 * x
            return r + x
    """)
    assert f(0.0) == 0.0
    with pytest.raises(ZeroDivisionError):  # as the derivative's own rule does without try
        jvp(f, (0.0,), (1.0,))
    assert jvp(f, (4.0,), (1.0,))[1] == pytest.approx(1.25)
    source = forward(f).source
    assert source.index("dr = ") > source.index("except ZeroDivisionError:")


def test_an_exception_the_handler_does_not_catch_propagates():
    f = make("""
        def f(x):
            try:
                y = math.log(x)
            except ZeroDivisionError:
                y = 0.0
            return y * x
    """)
    for run in (lambda: grad(f)(-1.0), lambda: jvp(f, (-1.0,), (1.0,)),
                lambda: hvp(f)(-1.0, 1.0)):
        with pytest.raises(ValueError, match="math domain error"):
            run()


def test_a_try_reads_as_written():
    source = grad(S.ratio_or_fallback, wrt=(0, 1)).source
    assert "try:\n        r = x / y" in source
    assert "except ZeroDivisionError as err:" in source
    adjoint = source.split("# grad of: try:", 1)[1]
    assert "if _ok:" in adjoint and "try" not in adjoint


@pytest.mark.parametrize("entry", ["grad", "grad_noopt", "value_and_grad", "jvp", "hvp"])
def test_a_finally_block_runs_once_however_the_try_is_left(entry):
    f = make("""
        def f(x):
            try:
                y = np.sqrt(x)
                if np.any(x > 5.0):
                    raise ValueError("too far")
            finally:
                cleanups.append(len(cleanups))
            return np.sum(y * x)
    """, cleanups=(cleanups := []))
    _entry_points(f, _V)[entry]()
    assert cleanups == [0]
    with pytest.raises(ValueError, match="too far"):
        _entry_points(f, _V + 5.0)[entry]()
    assert cleanups == [0, 1]


def test_a_history_the_module_keeps_is_appended_to_as_python_does():
    f = make("""
        def f(x):
            loss = np.sum(x * x)
            history.append(loss)
            return loss
    """, history=(history := []))
    value, _ = value_and_grad(f)(_V)
    assert history == [value]
    np.testing.assert_allclose(grad(f)(_V), 2.0 * _V)
    jvp(f, (_V,), (np.ones(4),))
    assert len(history) == 3 and "rt.record(history, loss)" in grad(f).source_for(_V)
    g = make("""
        def g(x):
            kept.append(x * 2.0)
            return np.sum(kept[-1]) * 3.0
    """, kept=[])
    with pytest.raises(TranspileError, match="appending a differentiated value to 'kept'"):
        grad(g)(_V)  # (read back: the gradient would have to follow the module's state)


def test_a_finally_block_reads_as_a_cleanup_on_both_paths():
    source = grad(S.counted_with_finally, wrt=(0, 1)).source
    assert "except BaseException:" in source and source.count("rt.record(_EVALUATIONS, 1)") == 2


@pytest.mark.parametrize("body,says", [
    ("try:\n        y = x * 2.0\n    finally:\n        return x", "'return' inside 'finally'"),
    ("for i in range(2):\n        try:\n            y = x * 2.0\n            break\n"
     "        finally:\n            z = 1", "'break' inside a 'try' with 'finally'"),
    ("try:\n        if x > 0:\n            return x\n        y = x\n    finally:\n        z = 1",
     "'return' inside a 'try' with 'finally'"),
])
def test_leaving_a_finally_early_is_refused(body, says):
    f = make(f"def f(x):\n    {body}\n    return y\n")
    with pytest.raises(TranspileError, match=says):
        grad(f)(1.0)


def test_a_call_of_yours_inside_try_is_refused_in_forward_mode_only():
    f = make("""
        def g(v):
            return v * v

        def f(x):
            try:
                y = g(x)
            except ValueError:
                y = x
            return np.sum(y)
    """)
    np.testing.assert_allclose(grad(f)(_V), 2.0 * _V)
    with pytest.raises(TranspileError, match="call of your function inside 'try'"):
        jvp(f, (_V,), (np.ones(4),))


def test_a_value_that_is_no_context_manager_fails_as_in_with():
    f = make("""
        def f(x):
            with thing:
                y = x * 2.0
            return y
    """, thing=object())
    with pytest.raises(TypeError, match="context manager protocol"):
        grad(f)(1.0)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.parametrize("entry", ["grad", "jvp", "hvp"])
def test_a_try_of_a_loop_whose_handler_re_raises(entry):
    with pytest.raises(RuntimeError, match="diverged") as info:
        _entry_points(S.simulate_or_explain, np.array([1.0, np.inf]), 2.0)[entry]()
    assert isinstance(info.value.__cause__, FloatingPointError)
