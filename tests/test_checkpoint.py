"""Loops marked ``checkpoint(...)``: their gradient equals the same loop taped whole (to 1e-12:
the same operations, but a loop-invariant's gradient is summed per step, then across steps),
agrees with finite differences, keeps few states, and the marker changes nothing else (the
plain function, forward mode, hvp, vjp)."""

import dataclasses
import tracemalloc

import numpy as np
import pytest

from transpiler import TranspileError, check_grad, checkpoint, grad, hvp, jvp, value_and_grad, vjp


def reaction_diffusion(u0, D):
    u = u0
    for _step in checkpoint(range(40), snapshots=4):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + 0.1 * (D * lap + u * (1.0 - u))
    return np.sum(u * u)


def reaction_diffusion_every(u0, D):
    u = u0
    for _step in checkpoint(range(40), every=6):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + 0.1 * (D * lap + u * (1.0 - u))
    return np.sum(u * u)


def branches(x, a):
    s = 0.0
    y = x.copy()
    for _k in checkpoint(range(30), snapshots=3):
        if np.sum(y) > 1.0:
            y = y * 0.9 + a * np.sin(y)
        else:
            y = y + 0.1 * a
        s = s + np.sum(y * y) * 0.01
    return s + np.sum(y)


def element_stencil(x, a):
    u = x.copy()
    for _k in checkpoint(range(12), snapshots=2):
        v = np.empty_like(u)
        for i in range(u.shape[0]):
            v[i] = u[i] * a + np.cos(u[i - 1])
        u = v
    return np.sum(u ** 2)


def writes_into_its_state(x, a):
    u = x.copy()
    for _k in checkpoint(range(10), every=3):
        u[0] = u[0] * a
        u += 0.1 * np.sin(u)
    return np.sum(u * u)


def breaks_out(x, a):
    u = x.copy()
    t = 0.0
    for k in checkpoint(range(40), snapshots=4):
        u = u * 0.95 + a * 0.01 * k
        t = t + a
        if np.sum(u) < 1.5:
            break
    return np.sum(u) + t


def continues_and_breaks(x, a):
    u = x.copy()
    for k in checkpoint(range(25), every=4):
        if k % 3 == 0:
            continue
        u = np.tanh(u * a + 0.1)
        if k > 20:
            break
    return np.sum(u * x)


def floats_swapped(x, a):
    p = 1.0
    q = a
    for _k in checkpoint(range(20), snapshots=5):
        p, q = q, p * 0.5 + q * np.sum(x) * 0.1
    return p * q


def loop_variable_after(x, a):
    u = x.copy()
    k = 0
    for k in checkpoint(range(7), snapshots=2):  # noqa: B007  (read after the loop)
        u = u * a
    return np.sum(u) * k


def over_the_data(x, a):
    u = 0.0
    for i, v in checkpoint(enumerate(x), every=2):
        u = u * a + v * i
    return u


def over_two_arrays(x, a):
    u = a
    for v, w in checkpoint(zip(x, x[::-1]), snapshots=2):  # noqa: B905
        u = np.sin(u * v) + w
    return u


def body_value_read_after(x, a):
    u = x.copy()
    for _k in checkpoint(range(5), snapshots=2):
        w = u * a
        u = w + 1.0
    return np.sum(w)


def several_carried(x, a):
    u, v, e = x.copy(), x * 0.5, 0.0
    for _k in checkpoint(range(15), snapshots=3):
        u, v = u + 0.1 * v, v - 0.1 * a * u
        e = e + 0.5 * np.sum(v * v) + 0.5 * a * np.sum(u * u)
    return e


def snapshots_from_a_parameter(x, a, s):
    u = x.copy()
    for k in checkpoint(range(9), snapshots=s):
        u = np.sin(u) * a + 0.1 * k
    return np.sum(u)


def in_place_on_the_argument(x, a):
    for _k in checkpoint(range(6), every=2):
        x += a * np.cos(x)
    return np.sum(x * x)


CASES = [reaction_diffusion, reaction_diffusion_every, branches, element_stencil,
         writes_into_its_state, breaks_out, continues_and_breaks, floats_swapped,
         loop_variable_after, over_the_data, over_two_arrays, body_value_read_after,
         several_carried]
X = np.linspace(0.2, 1.0, 6)
A = 0.7


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_equals_the_loop_taped_whole(f):
    got = grad(f, wrt=(0, 1))(X, A)
    whole = grad(f, wrt=(0, 1), checkpoint=False)(X, A)
    np.testing.assert_allclose(got[0], whole[0], rtol=1e-12, atol=1e-300)
    assert got[1] == pytest.approx(whole[1], rel=1e-12) and type(got[1]) is float
    assert got[0].dtype == whole[0].dtype and got[0].shape == whole[0].shape
    assert "rt.checkpoint_forward(" in grad(f, wrt=(0, 1)).source_for(X, A)
    assert "rt.checkpoint" not in grad(f, wrt=(0, 1), checkpoint=False).source_for(X, A)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_agrees_with_finite_differences(f):
    check_grad(f, X, A, wrt=(0, 1), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_and_grad_and_the_plain_function(f):
    value, _ = value_and_grad(f, wrt=(0, 1))(X, A)
    assert value == f(X, A)


def test_a_float_argument_and_the_snapshot_count_from_a_parameter():
    for s in (1, 2, 5, 20):
        got = grad(snapshots_from_a_parameter, wrt=(0, 1))(X, A, s)
        whole = grad(snapshots_from_a_parameter, wrt=(0, 1), checkpoint=False)(X, A, s)
        np.testing.assert_array_equal(got[0], whole[0])
        assert got[1] == whole[1]


def test_the_arguments_are_not_changed():
    x = X.copy()
    got = grad(in_place_on_the_argument, wrt=(0, 1))(x, A)
    np.testing.assert_array_equal(x, X)
    whole = grad(in_place_on_the_argument, wrt=(0, 1), checkpoint=False)(x, A)
    np.testing.assert_array_equal(got[0], whole[0])
    assert got[1] == whole[1]
    np.testing.assert_array_equal(x, X)


def test_forward_mode_ignores_the_marker():
    v = np.linspace(-1.0, 1.0, 6)
    value, tangent = jvp(reaction_diffusion, (X, A), (v, 0.5))
    h = 1e-6
    fd = (reaction_diffusion(X + h * v, A + 0.5 * h)
          - reaction_diffusion(X - h * v, A - 0.5 * h)) / (2 * h)
    assert value == reaction_diffusion(X, A)
    assert abs(tangent - fd) < 1e-6 * max(1.0, abs(fd))


def test_hvp_of_a_checkpointed_loop():
    v = np.linspace(-1.0, 1.0, 6)
    got = hvp(reaction_diffusion, 0)(X, A, v)
    h = 1e-5
    g = grad(reaction_diffusion)
    fd = (g(X + h * v, A) - g(X - h * v, A)) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-8)


def test_vjp_and_a_pullback_called_twice():
    value, pullback = vjp(several_carried, X, A)
    first, second = pullback(1.0), pullback(1.0)
    whole = grad(several_carried, wrt=(0, 1), checkpoint=False)(X, A)
    assert value == several_carried(X, A)
    for got in (first, second):
        np.testing.assert_allclose(got[0], whole[0], rtol=1e-12)
        assert got[1] == pytest.approx(whole[1], rel=1e-12)


def stepped(u, a):
    for _k in checkpoint(range(8), snapshots=3):
        u = np.sin(u) * a
    return u


def calls_a_checkpointed_helper(x, a):
    return np.sum(stepped(x, a) ** 2)


def test_in_a_helper_the_caller_differentiates():
    got = grad(calls_a_checkpointed_helper, wrt=(0, 1))(X, A)
    whole = grad(calls_a_checkpointed_helper, wrt=(0, 1), checkpoint=False)(X, A)
    np.testing.assert_allclose(got[0], whole[0], rtol=1e-12)
    assert got[1] == pytest.approx(whole[1], rel=1e-12)
    check_grad(calls_a_checkpointed_helper, X, A, wrt=(0, 1))


def long_run(u0, D, n):
    u = u0
    for _step in checkpoint(range(n), snapshots=8):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + 0.1 * (D * lap + u * (1.0 - u))
    return np.sum(u * u)


def _peak(gradient, *args) -> int:
    gradient(*args)  # (compiled outside the measurement)
    tracemalloc.start()
    try:
        gradient(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_within_the_snapshots():
    u0, n = np.linspace(0.0, 1.0, 4000), 300
    marked = _peak(grad(long_run, wrt=(0, 1)), u0, 0.2, n)
    whole = _peak(grad(long_run, wrt=(0, 1), checkpoint=False), u0, 0.2, n)
    state = u0.nbytes
    assert whole > 0.5 * n * state  # (the whole loop's tape: a state or more per step)
    assert marked < 40 * state  # 8 snapshots, one step's tape and temporaries, the gradients
    assert marked < 0.1 * whole


def nested_markers(x):
    for _k in checkpoint(range(3), snapshots=2):
        for _j in checkpoint(range(3), snapshots=2):
            x = x * 1.1
    return x


def no_snapshots(x):
    for _k in checkpoint(range(3), snapshots=0):
        x = x * 2.0
    return x


@pytest.mark.parametrize("f, words", [
    (nested_markers, "checkpointed loop inside a checkpointed loop"),
    (no_snapshots, "snapshots must be a positive int"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refusals_name_the_line(f, words):
    with pytest.raises(TranspileError, match=words) as info:
        grad(f)(0.5)
    assert info.value.filename == __file__


def test_the_marker_returns_its_iterable_and_checks_its_arguments():
    r = range(5)
    assert checkpoint(r, snapshots=3) is r
    assert checkpoint(iter([1]), every=2) is not None
    with pytest.raises(ValueError, match="exactly one"):
        checkpoint(r)
    with pytest.raises(ValueError, match="exactly one"):
        checkpoint(r, snapshots=2, every=2)
    with pytest.raises(TypeError, match="int"):
        checkpoint(r, every=2.5)


def test_numba_refuses_a_checkpointed_loop_and_auto_runs_python():
    pytest.importorskip("numba")
    with pytest.raises(TranspileError, match="Numba cannot compile a checkpointed loop") as info:
        grad(reaction_diffusion, backend="numba")(X, A)
    assert info.value.filename == __file__
    auto = grad(reaction_diffusion, wrt=(0, 1), backend="auto")
    np.testing.assert_allclose(auto(X, A)[0], grad(reaction_diffusion, wrt=(0, 1))(X, A)[0],
                               rtol=1e-12)
    assert auto.compiled_for(X, A).backend == "python"


# --- the memory report ---

def _line_of(fn, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_the_report_of_a_tape_accounts_for_the_traced_peak_and_names_its_lines():
    u0, n = np.linspace(0.0, 1.0, 5000), 120
    gradient = grad(long_run, wrt=(0, 1), checkpoint=False)
    report = gradient.memory(u0, 0.2, n)
    peak = _peak(gradient, u0, 0.2, n)
    assert 0.7 * peak <= report.total_bytes <= 1.3 * peak
    top = report.rows[0]  # the line whose values fill the tape
    assert (top.filename, top.line) == (__file__, _line_of(long_run, "u = u + 0.1"))
    assert top.what == "tape" and top.iterations == n
    assert top.bytes_per_iteration >= 2 * u0.nbytes  # (u before the step and 1 - u)
    lines = {r.line for r in report if r.what == "tape"}
    assert _line_of(long_run, "lap = np.roll") in lines
    assert report.total_bytes == sum(r.total_bytes for r in report)
    text = str(report)
    assert "u = u + 0.1 * (D * lap + u * (1.0 - u))" in text and f":{top.line}" in text


def test_the_report_of_a_checkpointed_loop_shows_its_snapshots():
    u0, n = np.linspace(0.0, 1.0, 5000), 120
    gradient = grad(long_run, wrt=(0, 1))
    report = gradient.memory(u0, 0.2, n)
    rows = {r.what: r for r in report}
    assert set(rows) == {"snapshots", "one step"}
    assert rows["snapshots"].iterations == 8
    assert rows["snapshots"].total_bytes >= 8 * u0.nbytes
    assert rows["snapshots"].line == _line_of(long_run, "in checkpoint(range(n), snapshots=8)")
    peak = _peak(gradient, u0, 0.2, n)
    assert report.total_bytes <= 1.3 * peak  # (besides: the backward's own temporaries)
    whole = grad(long_run, wrt=(0, 1), checkpoint=False).memory(u0, 0.2, n)
    assert report.total_bytes < 0.1 * whole.total_bytes


def test_every_reports_its_segments():
    report = grad(reaction_diffusion_every, wrt=(0, 1)).memory(X, A)
    rows = {r.what: r for r in report}
    assert rows["snapshots"].iterations == 7 + 6  # one per 6 of 40 steps, one segment's six


def no_loop(x):
    return np.sum(np.sin(x))


def test_a_function_without_loops_reports_nothing():
    report = grad(no_loop).memory(X)
    assert report.total_bytes == 0 and len(report) == 0
    assert "nothing" in str(report)


def test_the_command_line_prints_the_report(tmp_path):
    import subprocess
    import sys
    path = tmp_path / "sim.py"
    path.write_text(
        "import numpy as np\n"
        "from transpiler import checkpoint\n\n"
        "def loss(u0, D):\n"
        "    u = u0\n"
        "    for step in checkpoint(range(50), snapshots=4):\n"
        "        u = u + 0.1 * (D * (np.roll(u, 1) - 2.0 * u) + u * (1.0 - u))\n"
        "    return np.sum(u * u)\n")
    run = [sys.executable, "-m", "transpiler", "memory", f"{path}:loss", "--args",
           "np.linspace(0, 1, 100), 0.2", "--wrt", "0,1"]
    marked = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    whole = subprocess.run(run + ["--no-checkpoint"], capture_output=True, text=True,
                           check=True).stdout
    assert f"{path}:6  snapshots" in marked
    assert f"{path}:7  tape" in whole and "  snapshots  " not in whole
    failed = subprocess.run(run[:-2] + ["--mode", "forward"], capture_output=True, text=True)
    assert failed.returncode == 2


@dataclasses.dataclass
class Rod:
    u: np.ndarray
    heat: float


def writes_an_objects_fields(x, a):
    rod = Rod(x.copy(), 0.0)
    for _k in checkpoint(range(9), snapshots=2):
        un = rod.u.copy()
        un[1:] = rod.u[1:] + a * (rod.u[:-1] - rod.u[1:])
        rod.u = un
        rod.heat = rod.heat + np.sum(rod.u ** 2)
    return rod.heat


def test_a_state_object_written_in_place_is_copied_for_each_step():
    got = grad(writes_an_objects_fields, wrt=(0, 1))(X, A)
    whole = grad(writes_an_objects_fields, wrt=(0, 1), checkpoint=False)(X, A)
    np.testing.assert_allclose(got[0], whole[0], rtol=1e-12)
    assert got[1] == pytest.approx(whole[1], rel=1e-12)
    check_grad(writes_an_objects_fields, X, A, wrt=(0, 1))


def reads_the_state_after_the_loop(z):
    for _k in checkpoint(range(2), every=1):
        w = z * 2.0
    return np.sum(z.T) + z.mean() + np.sum(w)


def writes_after_the_loop(x):
    w = x * 1.0
    for _k in checkpoint(range(2), every=1):
        w = w * 0.5 + x
    w[0] = 2.0
    return np.sum(w * x)


def swaps_then_writes(x):
    w = x * 1.0
    v = x
    for _k in checkpoint(range(3), every=1):
        w, v = v, w
    w[0] = 2.0  # (w may be x itself: refused, as without the marker)
    return np.sum(w * x)


@pytest.mark.parametrize("f", [reads_the_state_after_the_loop, writes_after_the_loop],
                         ids=lambda f: f.__name__)
def test_the_state_after_the_loop_keeps_its_kind_and_its_aliases(f):
    for z in (np.arange(6.0).reshape(2, 3) * 0.1, X):
        np.testing.assert_allclose(grad(f)(z), grad(f, checkpoint=False)(z), rtol=1e-12)


def test_a_state_that_may_be_the_argument_after_the_loop_is_not_written():
    for marked in (True, False):
        with pytest.raises(TranspileError, match="would also change 'x'"):
            grad(swaps_then_writes, checkpoint=marked)(X)


def returns_from_inside(x, a):
    u = x.copy()
    for k in checkpoint(range(30), snapshots=3):
        u = np.tanh(u * a + 0.1 * k)
        for j in range(2):
            if np.sum(u) > 2.5 + j:
                return np.sum(u * u) * a
    return np.sum(u)


def else_after_no_break(x, a):
    u = x.copy()
    for _k in checkpoint(range(12), every=5):
        u = u * a + 0.1
        if np.max(u) > 3.0:
            break
    else:
        u = u * 2.0
    return np.sum(u * x)


@pytest.mark.parametrize("f", [returns_from_inside, else_after_no_break],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("a", [0.4, 0.9, 1.6])
def test_return_and_else_in_a_checkpointed_loop(f, a):
    got = grad(f, wrt=(0, 1))(X, a)
    whole = grad(f, wrt=(0, 1), checkpoint=False)(X, a)
    np.testing.assert_allclose(got[0], whole[0], rtol=1e-12, atol=1e-300)
    assert got[1] == pytest.approx(whole[1], rel=1e-12)
    assert value_and_grad(f, wrt=(0, 1))(X, a)[0] == f(X, a)
    check_grad(f, X, a, wrt=(0, 1), rtol=1e-5, atol=1e-7)


def options_from_the_caller(x, a, s, k):
    u = x.copy()
    for _k in checkpoint(range(9), snapshots=s, every=k):
        u = np.sin(u) * a
    return np.sum(u)


def test_snapshots_or_every_from_variables():
    whole = grad(options_from_the_caller, wrt=(0, 1), checkpoint=False)(X, A, 2, None)
    for s, k in ((2, None), (None, 3)):
        got = grad(options_from_the_caller, wrt=(0, 1))(X, A, s, k)
        np.testing.assert_allclose(got[0], whole[0], rtol=1e-12)
    with pytest.raises(ValueError, match="exactly one"):
        grad(options_from_the_caller, wrt=(0, 1))(X, A, 2, 3)


def both_none(x):
    for _k in checkpoint(range(3), snapshots=None):
        x = x * 2.0
    return x


def test_a_marker_without_a_count_is_refused():
    with pytest.raises(TranspileError, match="one of snapshots= or every="):
        grad(both_none)(0.5)


def writes_into_an_argument_it_does_not_differentiate(x, y, z):
    _p, q = 1.0, 0.5
    for _i, _e in checkpoint(zip(z, z), every=3):  # noqa: B905
        z[:] = 1.0
    return q * x


def test_a_loop_without_gradient_leaves_the_arguments_alone():
    z = X.copy()
    assert grad(writes_into_an_argument_it_does_not_differentiate, wrt=(0, 1, 2))(
        0.1, 0.2, z)[0] == 0.5
    np.testing.assert_array_equal(z, X)
