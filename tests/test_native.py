"""The Numba backend (``backend="numba"`` and ``"auto"``): transpiler/backends/native.py and the
runtime helpers' Numba implementations (runtime/native.py).

1. Gradients, values and tangents from Numba equal the Python backend's to 1e-12 (relative), in
   the same types and shapes, on a focused set of the test corpus (scalar loops, element loops,
   callees, branches; each costs a Numba compile); the caller's arrays are never written.
   ``TRANSPILER_NUMBA_CORPUS=1`` runs the whole corpus: every case agrees or is refused with a
   ``TranspileError``, never another error or another number.
2. Honest limits: what Numba cannot compile is a ``TranspileError`` at the user's line with the
   hint ``backend="python"``; ``backend="auto"`` runs Python there and ``.backend`` says so;
   without Numba, ``backend="numba"`` is an ImportError saying how to install it.
3. The generated source, the export (``--backend numba``, run without the compiler), bounds
   checks, and each runtime helper's Numba implementation against its NumPy definition.
"""

from __future__ import annotations

import copy
import importlib
import math
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime as rt
from tests.benchmarks.bench_grad import newton_cubic
from tests.util import make
from transpiler import TranspileError, forward, grad, jvp, value_and_grad, vjp
from transpiler.backends import native

ROOT = pathlib.Path(__file__).resolve().parents[1]
RTOL = 1e-12

FOCUSED = [
    "control_flow.branch_scalar_true", "control_flow.for_range_bounds_step",
    "control_flow.break_in_for", "control_flow.nested_loops", "control_flow.while_array_state",
    "control_flow.early_return_taken", "control_flow.newton_sqrt", "control_flow.rk4_oscillator",
    "elements.fill_zeros", "elements.fill_2d", "elements.recurrence", "elements.thomas",
    "elements.heat_stencil", "elements.cumulative_product", "elements.write_into_argument",
    "elements.index_array_write_repeated", "elements.while_writes",
    "calls.helper_in_loop_tuple_state", "scientific.rk4_solve", "scientific.piecewise_high",
    "arrays.matrix_indexing",
]
MODULES = ("arrays", "calls", "containers", "control_flow", "elements", "functions",
           "scientific", "statements")


def _case(name: str):
    module, key = name.split(".")
    fn, args, wrt = importlib.import_module(f"tests.corpus.{module}").CASES[key][:3]
    return fn, args, wrt


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _leaves(value[k])]
    return [value]


def _same(got, expected, what: str) -> None:
    """Equal to RTOL, and of the same kinds: a float for a float, an array of the same shape
    and dtype for an array."""
    got, expected = _leaves(got), _leaves(expected)
    assert len(got) == len(expected), what
    for g, e in zip(got, expected, strict=True):
        if isinstance(e, np.ndarray):
            assert type(g) is np.ndarray and g.shape == e.shape and g.dtype == e.dtype, \
                (what, g, e)
        else:
            assert isinstance(g, float) == isinstance(e, float), (what, type(g), type(e))
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(e, float), rtol=RTOL,
                                   atol=1e-300, err_msg=what)


def _agrees_or_refused(name: str, strict: bool) -> str:
    """'agrees' or 'refused' (a TranspileError), for grad of corpus case ``name``."""
    fn, args, wrt = _case(name)
    expected = grad(fn, wrt=wrt)(*copy.deepcopy(args))
    given = copy.deepcopy(args)
    gradient = grad(fn, wrt=wrt, backend="numba")
    try:
        got = gradient(*given)
    except TranspileError as e:
        assert not strict, f"{name} refused: {e}"
        assert "hint: " in str(e) and 'backend="python"' in str(e)
        return "refused"
    _same(got, expected, name)
    for a, b in zip(given, args, strict=True):  # the caller's values are never written
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b)
    assert gradient.compiled_for(*args).backend == "numba"
    return "agrees"


@pytest.mark.parametrize("name", FOCUSED)
def test_focused_corpus_agrees(name):
    assert _agrees_or_refused(name, strict=True) == "agrees"


@pytest.mark.skipif(not os.environ.get("TRANSPILER_NUMBA_CORPUS"),
                    reason="set TRANSPILER_NUMBA_CORPUS=1 (compiles the whole corpus)")
def test_whole_corpus_agrees_or_is_refused():
    verdicts = {}
    for module in MODULES:
        for key, case in importlib.import_module(f"tests.corpus.{module}").CASES.items():
            try:
                grad(case[0], wrt=case[2])(*copy.deepcopy(case[1]))
            except Exception:
                continue  # (a case for the Python backend's own refusals)
            verdicts[f"{module}.{key}"] = _agrees_or_refused(f"{module}.{key}", strict=False)
    counts = {v: sum(1 for x in verdicts.values() if x == v) for v in ("agrees", "refused")}
    print(f"\nNumba backend over the corpus: {counts}")
    assert counts["agrees"] >= 100


# --- other entry points -------------------------------------------------------------------------

def test_value_and_grad_jvp_and_vjp_agree():
    fn, args, wrt = _case("elements.thomas")
    _same(value_and_grad(fn, wrt=wrt, backend="numba")(*args),
          value_and_grad(fn, wrt=wrt)(*args), "value_and_grad")
    tangents = tuple(np.linspace(-1.0, 1.0, np.size(a)).reshape(np.shape(a)) for a in args)
    _same(jvp(fn, args, tangents, backend="numba"), jvp(fn, args, tangents), "jvp")
    fn, args, _ = _case("elements.recurrence")
    value, pullback = vjp(fn, *args, backend="numba")
    expected_value, expected_pullback = vjp(fn, *args)
    _same((value, pullback(1.0)), (expected_value, expected_pullback(1.0)), "vjp")


def rk4(k, c, x0):
    x, v, dt = x0, 0.0, 0.01
    for _ in range(200):
        a1 = -k * x - c * v
        x2, v2 = x + 0.5 * dt * v, v + 0.5 * dt * a1
        a2 = -k * x2 - c * v2
        x3, v3 = x + 0.5 * dt * v2, v + 0.5 * dt * a2
        a3 = -k * x3 - c * v3
        x4, v4 = x + dt * v3, v + dt * a3
        a4 = -k * x4 - c * v4
        x = x + dt / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v = v + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    return x * x + v * v


def test_scalar_loop_gets_floats_and_the_decorator_form():
    decorated = grad(wrt=(0, 1, 2), backend="numba")(rk4)
    got = decorated(1.3, 0.2, 0.9)
    assert all(type(g) is float for g in got)
    _same(got, grad(rk4, wrt=(0, 1, 2))(1.3, 0.2, 0.9), "rk4")
    assert decorated(1.3, 0.2, 0.9) == got  # the fast path of float calls
    source = decorated.source_for(1.3, 0.2, 0.9)  # a range loop: one array per saved number
    assert "    _tape_x2 = np.empty(_tape_n, np.float64)\n" in source
    assert "        _tape_x2[_tape_k] = x2\n" in source
    assert "    for _tape_k in range(_tape_n - 1, -1, -1):\n        v2 = _tape_v2[_tape_k]" \
        in source
    assert "reversed(" not in source and "append" not in source


def test_a_while_loop_keeps_a_list_walked_by_index():
    gradient = grad(newton_cubic, wrt=(0, 1), backend="numba")
    _same(gradient(2.0, 5.0), grad(newton_cubic, wrt=(0, 1))(2.0, 5.0), "newton")
    source = gradient.source_for(2.0, 5.0)
    assert "_tape.append((" in source and "reversed(" not in source
    assert "    for _tape_index in range(len(_tape) - 1, -1, -1):\n" in source


# --- honest limits ------------------------------------------------------------------------------

def uses_gamma(x):
    y = x * x
    return math.lgamma(y) + np.sum(np.sin(y))  # the line Numba refuses (math.lgamma's adjoint)


def holds_mixed_dict(x):
    state = {"scale": x, "steps": 3, "name": "run"}
    return np.sum(state["scale"] * x) * state["steps"]


def _line(fn, text: str) -> int:
    lines = pathlib.Path(__file__).read_text().splitlines()
    start = fn.__code__.co_firstlineno
    return next(i for i, line in enumerate(lines, 1) if i >= start and text in line)


def test_refusal_names_the_users_line_with_a_hint():
    with pytest.raises(TranspileError) as info:
        grad(holds_mixed_dict, backend="numba")(np.ones(3))
    err = info.value
    assert err.filename == __file__
    assert _line(holds_mixed_dict, "def holds_mixed_dict") <= err.lineno \
        <= _line(holds_mixed_dict, "return np.sum")
    text = str(err)
    assert "Numba cannot compile the gradient of holds_mixed_dict" in text
    assert 'hint: use backend="python"' in text
    assert "Failed in nopython mode" not in text and "During:" not in text


def test_forward_mode_refusal_speaks_of_the_tangent():
    with pytest.raises(TranspileError) as info:
        jvp(holds_mixed_dict, (np.ones(3),), (np.ones(3),), backend="numba")
    assert "Numba cannot compile the tangent of holds_mixed_dict" in str(info.value)
    assert info.value.filename == __file__


def test_auto_runs_python_where_numba_refuses_and_says_so(caplog):
    x = np.array([0.3, 0.7])
    auto = grad(holds_mixed_dict, backend="auto")
    with caplog.at_level("INFO", logger="transpiler"):
        np.testing.assert_array_equal(auto(x), grad(holds_mixed_dict)(x))
    assert auto.compiled_for(x).backend == "python"
    reason = auto.compiled_for(x).function.reason  # why Numba refused it
    assert reason
    said = [r.getMessage() for r in caplog.records if r.name == "transpiler"]
    assert any("runs as Python" in m and reason in m for m in said), said
    fast = grad(rk4, wrt=0, backend="auto")
    assert fast.compiled_for(1.0, 0.1, 1.0).backend == "numba"
    assert fast(1.0, 0.1, 1.0) == pytest.approx(grad(rk4)(1.0, 0.1, 1.0), rel=RTOL)


COMPLEX = """
def resonance(c, k):
    total = 0.0
    for i in range(4):
        w = 0.5 * (i + 1)
        z = 1.0 / (k - w * w + 1j * c * w)
        total = total + abs(z) + 0.1 * cmath.phase(z)
    return total

def field(x):
    z = np.exp(1j * x) * (1.0 + 0.5j)
    return np.sum(np.abs(z + x) ** 2 + np.real(z * z)) + np.sum(np.angle(z))

def spectrum(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)
"""


def test_complex_values_compile_as_complex128():
    resonance, field = make(COMPLEX, name="resonance"), make(COMPLEX, name="field")
    np.testing.assert_allclose(grad(resonance, wrt=(0, 1), backend="numba")(0.3, 1.7),
                               grad(resonance, wrt=(0, 1))(0.3, 1.7), rtol=RTOL)
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(grad(field, backend="numba")(x), grad(field)(x), rtol=RTOL)
    with pytest.raises(TranspileError, match="Numba cannot compile .*rfft"):
        grad(make(COMPLEX, name="spectrum"), backend="numba")(x)  # (Numba has no np.fft)


def scaled_sum(x, a):
    return np.sum(np.sin(x) * a)


def test_float32_arrays_are_refused_not_promoted():
    x = np.linspace(0.1, 0.9, 4).astype(np.float32)
    with pytest.raises(TranspileError, match="float32"):
        grad(scaled_sum, backend="numba")(x, 0.5)
    got = grad(scaled_sum, backend="auto")(x, 0.5)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, grad(scaled_sum)(x, 0.5))
    with pytest.raises(TranspileError, match="float32"):  # (a float32 scalar is one too)
        grad(scaled_sum, wrt=1, backend="numba")(x.astype(float), np.float32(0.5))


def reads_past_the_end(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i + 1] * x[i]
    return s


def test_an_index_out_of_range_raises_not_reads_garbage():
    with pytest.raises(IndexError):
        grad(reads_past_the_end, backend="numba")(np.ones(4))


def test_without_numba_an_import_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba now raises ImportError
    with pytest.raises(ImportError, match="pip install"):
        grad(scaled_sum, backend="numba")
    assert not native.available()

    def fresh(x, a):  # (a function no earlier test compiled: auto picks Python now)
        return np.sum(np.cos(x) * a)

    auto = grad(fresh, backend="auto")
    x = np.ones(3)
    np.testing.assert_array_equal(auto(x, 2.0), grad(fresh)(x, 2.0))
    assert auto.compiled_for(x, 2.0).backend == "python"


def test_unknown_backend_is_a_value_error():
    with pytest.raises(ValueError, match="unknown backend 'fortran'"):
        grad(scaled_sum, backend="fortran")


# --- export ---------------------------------------------------------------------------------------

SIMULATION = '''
import numpy as np


def step(x, v, k):
    a = -k * x
    return x + 0.01 * v, v + 0.01 * a


def energy(x0, k, damping=0.1):
    x, v = x0, 0.0
    for _ in range(100):
        x, v = step(x, v, k)
        v = v - damping * 0.01 * v
    return x * x + v * v


def fill(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = np.sin(x[i]) * x[i]
    return np.sum(y)
'''

STANDALONE = '''
import sys
import numpy as np
import energy_grad, fill_grad
g = energy_grad.grad_energy(0.5, 2.0)
h = fill_grad.grad_fill(np.linspace(0.0, 1.0, 5))
assert not [m for m in sys.modules if m == "transpiler" or m.startswith("transpiler.")]
print(repr(g), repr(h.tolist()))
'''


def test_export_with_numba_runs_without_the_compiler(tmp_path):
    (tmp_path / "sim_native.py").write_text(SIMULATION)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    for target, name, args in (("energy", "energy_grad.py", "0.5, 2.0"),
                               ("fill", "fill_grad.py", "np.ones(3)")):
        made = subprocess.run([sys.executable, "-m", "transpiler", "export",
                               f"sim_native.py:{target}", "--wrt", "0,1" if target == "energy"
                               else "0", "--args", args, "--backend", "numba",
                               "-o", str(out / name)],
                              cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert made.returncode == 0, made.stderr
    text = (out / "energy_grad.py").read_text()
    assert "import numba\n" in text
    assert "grad_energy = numba.njit(grad_energy, cache=True" in text  # (it has a default)
    assert "@numba.njit(cache=True, boundscheck=True)\ndef grad_fill(x):" in (
        out / "fill_grad.py").read_text()
    assert "--backend numba" in text and "import transpiler" not in text
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(out), str(ROOT), str(tmp_path)])}
    runs = [subprocess.run([sys.executable, "-c", STANDALONE], cwd=tmp_path, capture_output=True,
                           text=True, env=env, timeout=120) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr + runs[1].stderr
    assert runs[0].stdout == runs[1].stdout  # the second run loads Numba's cache
    assert list((out / "__pycache__").glob("*.nbi"))  # what cache=True keeps on disk
    sys.path.insert(0, str(tmp_path))
    try:
        sim = importlib.import_module("sim_native")
        expected = (grad(sim.energy, wrt=(0, 1))(0.5, 2.0),
                    grad(sim.fill)(np.linspace(0.0, 1.0, 5)).tolist())
    finally:
        sys.path.remove(str(tmp_path))
    g_text, h_text = runs[0].stdout.strip().split(") ", 1)
    got = (eval(g_text + ")", {}), eval(h_text, {}))
    _same(got, expected, "exported")


def test_export_refuses_keyword_only_parameters_under_numba(tmp_path):
    (tmp_path / "sim_kw.py").write_text(SIMULATION)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    made = subprocess.run([sys.executable, "-m", "transpiler", "export", "sim_kw.py:fill",
                           "--mode", "forward", "--args", "np.ones(3)", "--backend", "numba",
                           "-o", str(tmp_path / "f.py")],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert made.returncode == 1 and "keyword-only" in made.stderr
    assert "Traceback" not in made.stderr


# --- the runtime helpers' Numba implementations, against their NumPy definitions ---------------

def _njit(source: str):
    import numba

    import runtime.native  # noqa: F401  (the helpers' Numba implementations)
    namespace = {"rt": rt, "np": np}
    exec(textwrap.dedent(source), namespace)
    return numba.njit(namespace["helper"])


HELPERS = {
    "unbroadcast to a row": ("def helper(g, like): return rt.unbroadcast(g, like)",
                             (np.arange(6.0).reshape(2, 3), np.ones((1, 3)))),
    "unbroadcast leading axes": ("def helper(g, like): return rt.unbroadcast(g, like)",
                                 (np.arange(24.0).reshape(2, 3, 4), np.ones((3, 1)))),
    "unbroadcast to a float": ("def helper(g, like): return rt.unbroadcast(g, like)",
                               (np.arange(3.0), 2.0)),
    "unreduce over an axis": ("def helper(g, like): return rt.unreduce(g, like, -1)",
                              (np.arange(2.0), np.ones((2, 3)))),
    "unreduce of all": ("def helper(g, like): return rt.unreduce(g, like)", (2.5, np.ones(3))),
    "written, repeated index": ("def helper(g, i): return rt.written(g, i)",
                                (np.arange(1.0, 5.0), np.array([1, 3, 1, -1]))),
    "unwritten, repeated index": ("def helper(d, like, i): return rt.unwritten(d, like, i)",
                                  (np.arange(1.0, 5.0), np.ones(5), np.array([1, 3, 1, -2]))),
    "unindex, repeated index": ("def helper(g, like, i): return rt.unindex(g, like, i)",
                                (np.arange(1.0, 4.0), np.ones(4), np.array([0, 2, 0]))),
    "unindex, new axis": ("def helper(g, like): return rt.unindex(g, like, (slice(None), None))",
                          (np.arange(3.0).reshape(3, 1), np.ones(3))),
    "add_into, slice": ("def helper(g, p): return rt.add_into(g.copy(), slice(1, 3), p)",
                        (np.ones(4), np.array([2.0, 3.0]))),
    "add_into, mask": ("def helper(g, m, p): return rt.add_into(g.copy(), m, p)",
                       (np.ones(3), np.array([True, False, True]), np.array([2.0, 3.0]))),
    "zero_index": ("def helper(g): return rt.zero_index(g, 1)", (np.arange(3.0),)),
    "sequence of a range": ("def helper(n): return rt.sequence(range(1, n, 2))[1]", (7,)),
    "written, a mask": ("def helper(g, m): return rt.written(g, m)",
                        (np.arange(4.0), np.array([True, False, True, True]))),
    "unwritten, a mask": ("def helper(d, like, m): return rt.unwritten(d, like, m)",
                          (np.arange(2.0), np.ones(3), np.array([True, False, True]))),
    "unappend of an array": ("def helper(g): return rt.unappend(g, 2)", (np.arange(5.0),)),
    "written, a vector in a tuple": (
        "def helper(g, i): return rt.written(g, (slice(None), i))",
        (np.arange(12.0).reshape(3, 4), np.array([1, 3, 1]))),
    "written, a vector after an int": ("def helper(g, i): return rt.written(g, (1, i))",
                                       (np.arange(12.0).reshape(3, 4), np.array([2, 0, 2]))),
    "unwritten, a vector in a tuple": (
        "def helper(d, like, i): return rt.unwritten(d, like, (i, slice(1, 3)))",
        (np.arange(6.0).reshape(3, 2), np.ones((4, 3)), np.array([0, 3, 0]))),
    "unindex, a vector in a tuple": (
        "def helper(g, like, i): return rt.unindex(g, like, (slice(None), i))",
        (np.arange(6.0).reshape(2, 3), np.ones((2, 4)), np.array([3, 0, 3]))),
    "add_into, a vector on 2-D": ("def helper(g, i, p): return rt.add_into(g.copy(), i, p)",
                                  (np.ones((3, 2)), np.array([2, 2, 0]), 1.5)),
    "broadcast_like, a row": ("def helper(d, g): return rt.broadcast_like(d, g)",
                              (np.arange(3.0), np.ones((2, 3)))),
    "broadcast_like, a float": ("def helper(d, g): return rt.broadcast_like(d, g)",
                                (2.0, np.ones(3))),
    "broadcast_like, 0-d": ("def helper(d, g): return rt.broadcast_like(d, g)",
                            (np.array(2.0), np.array(1.0))),
    "balanced_eq, a tie": ("def helper(x, z, y): return rt.balanced_eq(x, z, y)",
                           (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]),
                            np.array([0.0, 2.5, 3.0]))),
    "tangent_like of floats": ("def helper(t, v): return rt.tangent_like(t, v)", (2.0, 1.0)),
    "zeros_like_grad of None": ("def helper(x): return rt.zeros_like_grad(x)", (None,)),
    "unsum of an array": ("def helper(g, items): return rt.unsum(g, items)",
                          (np.arange(3.0), np.ones((2, 3)))),
    "sequence_tangent of an array": ("def helper(t, s): return rt.sequence_tangent(t, s)",
                                     (np.arange(3.0), np.ones(3))),
    "zeros_like_grad of ints": ("def helper(x): return rt.zeros_like_grad(x)",
                                (np.arange(3),)),
    "grad_like of a scalar": ("def helper(g, x): return rt.grad_like(g, x)", (2.0, np.ones(3))),
    "grad_like to a float": ("def helper(g, x): return rt.grad_like(g, x)", (2, 1.0)),
    "matmul_adjoint_a": ("def helper(g, a, b): return rt.matmul_adjoint_a(g, a, b)",
                         (np.ones(2), np.arange(6.0).reshape(2, 3), np.arange(3.0))),
    "matmul_adjoint_b": ("def helper(g, a, b): return rt.matmul_adjoint_b(g, a, b)",
                         (np.ones((2, 4)), np.arange(6.0).reshape(2, 3),
                          np.arange(12.0).reshape(3, 4))),
    "unjoin, vstack of rows": ("def helper(g, a, b): return rt.unjoin(g, [a, b], 'vstack')",
                               (np.arange(6.0).reshape(2, 3), np.ones(3), np.ones(3))),
    "unjoin, hstack of matrices": (
        "def helper(g, a, b): return rt.unjoin(g, [a, b], 'hstack')",
        (np.arange(10.0).reshape(2, 5), np.ones((2, 2)), np.ones((2, 3)))),
    "unjoin, column_stack of vectors": (
        "def helper(g, a, b): return rt.unjoin(g, [a, b], 'column_stack')",
        (np.arange(6.0).reshape(3, 2), np.ones(3), np.ones(3))),
    "unjoin, dstack of matrices": (
        "def helper(g, a, b): return rt.unjoin(g, [a, b], 'dstack')",
        (np.arange(12.0).reshape(2, 3, 2), np.ones((2, 3)), np.ones((2, 3)))),
    "unstack, axis 1 of a list": ("def helper(g, a, b): return rt.unstack(g, [a, b], 1)",
                                  (np.arange(6.0).reshape(3, 2), np.ones(3), np.ones(3))),
    "unstack of a tuple": ("def helper(g, a, b): return rt.unstack(g, (a, b))",
                           (np.arange(6.0).reshape(2, 3), np.ones(3), np.ones(3))),
    "unconcatenate of a tuple": ("def helper(g, a, b): return rt.unconcatenate(g, (a, b))",
                                 (np.arange(5.0), np.ones(2), np.ones(3))),
    "unindex of a list": ("def helper(g, a, b): return rt.unindex(g, [a, b], -1)",
                          (np.arange(2.0), np.ones(2), np.ones(2))),
    "unindex of a tuple": ("def helper(g, a, b): return rt.unindex(g, (a, b), 0)",
                           (np.arange(2.0), np.ones(2), np.ones(2))),
    "add_into a list": ("def helper(g, a, b): return rt.add_into(rt.unindex(g, [a, b], 0), 1, g)",
                        (np.arange(2.0), np.ones(2), np.ones(2))),
    "add_into a tuple": ("def helper(a, b): return rt.add_into(rt.unindex(a, (a, b), 1), 1, b)",
                         (np.arange(2.0), np.ones(2))),
    "zeros_like_grad of a list": ("def helper(a, b): return rt.zeros_like_grad([a, b])",
                                  (np.arange(2.0), np.ones(2))),
    "zeros_like_grad of a tuple": ("def helper(a, b): return rt.zeros_like_grad((a, b))",
                                   (2.0, 3)),
    "grad_like of a list": ("def helper(g, x): return rt.grad_like([g, g], [x, x])",
                            (np.arange(2.0), np.ones(2))),
    "unsum of a tuple": ("def helper(g, a, b): return rt.unsum(g, (a, b))",
                         (np.arange(6.0).reshape(3, 2), np.ones(2), np.ones((3, 2)))),
    "tie_split of arguments, a tie": (
        "def helper(g, a, b): return rt.tie_split(g, max(a, b, 0.5), (a, b, 0.5, None))",
        (3.0, 0.5, 0.25)),
    "tie_split of a list": ("def helper(g, a, b): return rt.tie_split(g, a, [a, b, a])",
                            (3.0, 0.5, 0.25)),
    "tie_split of an array": ("def helper(g, x): return rt.tie_split(g, np.max(x), x)",
                              (2.0, np.array([0.1, 0.7, 0.7]))),
    "matmul_adjoint_a of vectors": ("def helper(g, a, b): return rt.matmul_adjoint_a(g, a, b)",
                                    (2.0, np.arange(3.0), np.ones(3) * 0.5)),
    "matmul_adjoint_b of vectors": ("def helper(g, a, b): return rt.matmul_adjoint_b(g, a, b)",
                                    (2.0, np.arange(3.0), np.ones(3) * 0.5)),
    "dot_adjoint_a, matrix and vector": (
        "def helper(g, a, b): return rt.dot_adjoint_a(g, a, b)",
        (np.arange(2.0), np.arange(6.0).reshape(2, 3), np.arange(3.0))),
    "dot_adjoint_b of vectors": ("def helper(g, a, b): return rt.dot_adjoint_b(g, a, b)",
                                 (2.0, np.arange(3.0), np.ones(3))),
    "untrace, an offset": ("def helper(g, like): return rt.untrace(g, like, 1)",
                           (2.0, np.ones((3, 4)))),
    "untrace below the diagonal": ("def helper(g, like): return rt.untrace(g, like, -2)",
                                   (2.0, np.ones((4, 3)))),
    "extremum_grad, a tie": ("def helper(g, a): return rt.extremum_grad(g, a, np.max(a))",
                             (3.0, np.array([0.5, 2.0, 1.0, 2.0]))),
    "extremum_grad of a NaN": ("def helper(g, a): return rt.extremum_grad(g, a, np.max(a))",
                               (3.0, np.array([0.5, np.nan, 1.0]))),
    "extremum_tangent, a tie": (
        "def helper(v, a): return rt.extremum_tangent(v, a, np.min(a))",
        (np.array([0.1, 0.2, 0.4]), np.array([0.5, 2.0, 0.5]))),
    "extended by a list": ("def helper(a, b): return rt.extended([a], [b, a])", (0.5, 2.0)),
    "last of a list": ("def helper(a, b): return rt.last([a, b, a], 2)", (0.5, 2.0)),
    "zero_index of a list": ("def helper(a, b): return rt.zero_index([a, b, a], 1)",
                             (np.arange(2.0), np.ones(2))),
    "unindex of a list by a slice": (
        "def helper(a, b): return rt.unindex([a, b], [a, b, a, b], slice(1, 3))", (0.5, 2.0)),
    "clip_partials, both bounds": (
        "def helper(g, a): return rt.clip_partials(g, a, 0.2, 0.6)[0]",
        (np.arange(1.0, 5.0), np.array([0.1, 0.2, 0.4, 0.9]))),
    "clip_partials, an array bound": (
        "def helper(g, a, hi): return rt.clip_partials(g, a, None, hi)[2]",
        (np.arange(1.0, 5.0), np.array([0.1, 0.2, 0.4, 0.9]), np.array([0.3, 0.2, 0.5, 0.5]))),
    "norm_grad of a matrix": (
        "def helper(g, x): return rt.norm_grad(g, x, np.linalg.norm(x))",
        (2.0, np.arange(6.0).reshape(2, 3))),
    "norm_grad at zero": ("def helper(g, x): return rt.norm_grad(g, x, np.linalg.norm(x))",
                          (2.0, np.zeros(3))),
    "norm_tangent": ("def helper(v, x): return rt.norm_tangent(v, x, np.linalg.norm(x))",
                     (np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 2.0]))),
    "cotangent of unpacked rows": ("def helper(a, b, v): return rt.cotangent((a, b), v)",
                                   (np.ones(2), np.zeros(2), np.ones((2, 2)))),
}


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_runtime_helper_matches_its_numpy_definition(name):
    source, args = HELPERS[name]
    namespace = {"rt": rt, "np": np}
    exec(source, namespace)
    expected = namespace["helper"](*copy.deepcopy(args))
    got = _njit(source)(*copy.deepcopy(args))
    assert isinstance(got, (list, tuple)) == isinstance(expected, (list, tuple))
    got, expected = _leaves(got), _leaves(expected)  # (a list's gradient: item by item)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
        assert np.shape(g) == np.shape(e)
        assert isinstance(g, float) == isinstance(e, float)


def scaled(a):
    return a * 2.0


def offset(p, c=0.5):
    return scaled(np.sum(p)) + c


def list_indices_and_a_plain_helper(x, y):
    k = offset(np.ones(3))  # (on constants: called, not differentiated)
    z = x[[0, 2, 0]] * k
    w = np.copy(y)
    w[0, [0, 1]] = z[:2]
    return np.sum(z * z) + np.sum(w ** 2) + np.sum(y[:, [1, 0]])


def test_list_indices_and_the_users_plain_helpers_compile():
    x, y = np.array([1.0, 2.0, 3.0]), np.arange(6.0).reshape(2, 3)
    gradient = grad(list_indices_and_a_plain_helper, wrt=(0, 1), backend="numba")
    _same(gradient(x, y), grad(list_indices_and_a_plain_helper, wrt=(0, 1))(x, y), "lists")
    assert gradient.compiled_for(x, y).backend == "numba"
    source = gradient.source_for(x, y)
    assert "_t1 = np.array([0, 2, 0])" in source and "k = scaled(" in source  # (offset inlined)
    value, tangent = jvp(list_indices_and_a_plain_helper, (x, y), (x, y), backend="numba")
    want = jvp(list_indices_and_a_plain_helper, (x, y), (x, y))
    assert value == pytest.approx(want[0], rel=1e-12)
    assert tangent == pytest.approx(want[1], rel=1e-12)
    assert offset.__globals__["scaled"] is scaled  # (the user's module is not changed)


def maximum_of_numbers(x, y):
    s = np.maximum(np.sum(x), y)  # (a NumPy scalar in Python, a float in Numba)
    return s * 2.0 + np.sum(np.maximum(x, y * 0.5))


def test_casts_of_numpy_scalars_compile():
    x, y = np.array([0.2, 0.9, 0.4]), 1.1
    _same(grad(maximum_of_numbers, wrt=(0, 1), backend="numba")(x, y),
          grad(maximum_of_numbers, wrt=(0, 1))(x, y), "maximum")
    value, tangent = jvp(maximum_of_numbers, (x, y), (x, 1.0), backend="numba")
    want = jvp(maximum_of_numbers, (x, y), (x, 1.0))
    assert value == pytest.approx(want[0], rel=1e-12)
    assert tangent == pytest.approx(want[1], rel=1e-12)
    source = forward(maximum_of_numbers, wrt=(0, 1), backend="numba").source_for(x, y, dx=x, dy=1.0)
    assert "astype_like(" in source and ".astype(" not in source


def sums_a_list_of_arrays(x, y):
    xs = [x * 2.0, np.sin(x)]
    xs.append(x * y)
    k = sum(xs) + sum([y, 2.0 * y])
    return np.sum(k * k)


def test_the_builtin_sum_of_a_list_of_arrays_compiles():
    x, y = np.array([0.2, 0.9, 0.4]), 1.1
    gradient = grad(sums_a_list_of_arrays, wrt=(0, 1), backend="numba")
    _same(gradient(x, y), grad(sums_a_list_of_arrays, wrt=(0, 1))(x, y), "sum")
    assert "builtin_sum(xs_1)" in gradient.source_for(x, y)
    value, tangent = jvp(sums_a_list_of_arrays, (x, y), (x, 1.0), backend="numba")
    assert tangent == pytest.approx(jvp(sums_a_list_of_arrays, (x, y), (x, 1.0))[1], rel=1e-12)


def indexes_a_range(x):
    r = range(1, 7, 2)
    s = 0.0
    for k in range(3):
        s = s + x[k] * r[k] + r[-1]
    return s


def test_a_range_indexed_by_number_compiles():
    x = np.array([0.2, 0.9, 0.4])
    gradient = grad(indexes_a_range, backend="numba")
    _same(gradient(x), grad(indexes_a_range)(x), "range")
    assert "range_item(r, k)" in gradient.source_for(x)


def means_over_an_axis(x):
    return np.sum(np.mean(x, axis=0) ** 2) + np.sum(np.mean(x * x, axis=-1))


def test_a_mean_over_an_axis_compiles():
    x = np.arange(6.0).reshape(2, 3) * 0.3
    gradient = grad(means_over_an_axis, backend="numba")
    _same(gradient(x), grad(means_over_an_axis)(x), "mean")
    code = [line for line in gradient.source_for(x).splitlines() if "#" not in line]
    assert not any("np.mean(" in line for line in code)
    assert any("np.sum(x, axis=0) / x.shape[0]" in line for line in code)


def concatenates_a_list(x, y):
    xs = [x * 2.0, np.sin(x)]
    xs.append(x * y)
    k = np.concatenate(xs)
    return np.sum(k * k)


def test_a_list_of_arrays_concatenated_compiles():
    x, y = np.array([0.2, 0.9, 0.4]), 1.1
    gradient = grad(concatenates_a_list, wrt=(0, 1), backend="numba")
    _same(gradient(x, y), grad(concatenates_a_list, wrt=(0, 1))(x, y), "concatenate")
    assert gradient.compiled_for(x, y).backend == "numba"


def where_of_numbers(x, y, z):
    a = np.where(y > -0.3, z.mean(), x)  # (a 0-d array)
    return a + x


def test_zero_dimensional_values_in_forward_mode_compile():
    args = (0.3, 0.2, np.array([0.1, 0.5, 0.9]))
    tangents = (1.0, 1.0, args[2])
    got = jvp(where_of_numbers, args, tangents, backend="numba")
    want = jvp(where_of_numbers, args, tangents)
    assert got == (pytest.approx(float(want[0]), rel=1e-12),
                   pytest.approx(float(want[1]), rel=1e-12))


# --- lists and tuples -------------------------------------------------------------------------

def joins_a_list_twice(x):
    xs = [x, 2 * x]
    a = np.concatenate(xs)
    b = np.concatenate(xs)  # (the list's gradient is added item by item, never joined)
    return np.sum(a * b) + np.sum(xs[0])


def stacks_along_axes(x):
    xs = [x, np.cos(x)]
    return np.sum(np.stack(xs, axis=-1) ** 2) + np.sum(np.sin(np.stack([x, x * x], axis=1)))


def indexes_tuples(x):
    t = (x[0], x * 2)
    u = (x, x * x)
    return t[0] * np.sum(t[1]) + np.sum(u[0] * u[1])


def pair(x):
    return x * 2.0, np.sin(x)


def unpacks_a_helpers_pair_twice(x):
    a, b = pair(x)
    c, d = pair(a)
    return np.sum(a * b * c * d) + np.sum(np.vstack([a, d]) ** 2) + np.sum(np.hstack([b, c]))


def records_a_trajectory(x, n):
    history = []
    v = x
    for _ in range(n):
        v = np.sin(v) + 0.5 * v
        history.append(v)
    return np.sum(np.stack(history) ** 2)


def grows_lists_of_numbers(x):
    products = [x[i] * x[i + 1] for i in range(len(x) - 1)]
    ys = []
    s = x[0]
    while s < 3.0:
        s = s * 1.5 + 0.1
        ys.append(s)
    return sum(products) + products[0] * products[-1] + sum(ys) * len(ys)


def takes_a_list(xs, y):
    return np.sum(xs[0] * xs[1]) * y + np.sum(np.stack(xs) ** 2)


def clips_elements(x, y):
    s = 0.0
    for i in range(len(x)):
        s = s + max(x[i], 0.5) * min(x[i], y) + max(x[i] * y, y, 0.25)
    return s + max(x[0], x[0])  # (a tie: shared evenly)


CONTAINERS = {
    "max and min of numbers": (clips_elements, (np.array([0.1, 0.6, 0.9, 0.5]), 0.6), 0),
    "a list joined twice": (joins_a_list_twice, (np.array([1.0, 2.0, 3.0]),), 0),
    "stacks along axes": (stacks_along_axes, (np.array([0.1, 0.2, 0.3]),), 0),
    "tuples indexed": (indexes_tuples, (np.array([0.1, 0.2, 0.3]),), 0),
    "a helper's pair": (unpacks_a_helpers_pair_twice, (np.array([0.1, 0.2, 0.3]),), 0),
    "a trajectory": (records_a_trajectory, (np.array([0.1, 0.2, 0.3]), 4), 0),
    "lists of numbers": (grows_lists_of_numbers, (np.array([0.5, 0.2, 0.3, 0.7]),), 0),
    "a list argument": (takes_a_list, ([np.array([0.1, 0.2]), np.array([0.5, 0.7])], 1.5),
                        (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CONTAINERS))
def test_lists_and_tuples_agree_with_the_python_backend(name):
    fn, args, wrt = CONTAINERS[name]
    gradient = grad(fn, wrt=wrt, backend="numba")
    _same(gradient(*copy.deepcopy(args)), grad(fn, wrt=wrt)(*copy.deepcopy(args)), name)
    assert gradient.compiled_for(*args).backend == "numba"
    if isinstance(wrt, int):
        tangents = (copy.deepcopy(args[0]),) + (None,) * (len(args) - 1)
        _same(jvp(fn, args, tangents, backend="numba"), jvp(fn, args, tangents), name)


def appends_indices(x):
    ks = []
    for i in range(3):
        ks.append(i)  # (a list of ints the gradient does not follow: its type is unknown)
    return np.sum(x[ks]) * x[0]


def test_a_list_numba_cannot_type_is_refused():
    with pytest.raises(TranspileError, match="Numba cannot compile the gradient"):
        grad(appends_indices, backend="numba")(np.array([0.5, 0.2, 0.4]))
    assert grad(appends_indices, backend="auto").compiled_for(np.ones(3)).backend == "python"


def test_a_typed_empty_list_takes_no_item_of_another_type():
    import numba

    @numba.njit
    def appends_an_int():
        return rt.appended([0.0][:0], 1)

    with pytest.raises(numba.core.errors.TypingError):
        appends_an_int()


def joins_two_lists(x):
    a = [x[0], x[1]]
    b = [x[2] * 2.0, x[0]]
    c = a + b  # (the tangent of a + b joins the tangents, as the + it comes from)
    return c[0] * c[3] + c[2]


def test_the_tangent_of_joined_lists_joins_them():
    args, tangents = (np.array([0.3, 0.7, 1.1]),), (np.array([1.0, 0.5, -0.3]),)
    value, tangent = jvp(joins_two_lists, args, tangents, backend="numba")
    _same((value, tangent), jvp(joins_two_lists, args, tangents), "jvp")
    x, dx, h = args[0], tangents[0], 1e-6
    difference = (joins_two_lists(x + h * dx) - joins_two_lists(x - h * dx)) / (2 * h)
    assert abs(tangent - difference) < 1e-8
