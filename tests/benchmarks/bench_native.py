"""The Numba backend: our gradient compiled by numba.njit vs. the interpreted and njit primals.

Run from the repository root::

    python -m tests.benchmarks.bench_native            # full run (a few minutes at most)
    python -m tests.benchmarks.bench_native --quick    # fewer repeats, the same sizes

Not part of the test suite (pytest ignores tests/benchmarks). The workloads are loops as Numba
users write them, scalar by scalar:

  1. RK4 damped oscillator ``rk4(k, c, x0)`` of bench_grad, 1000 steps in Python floats; wrt
     (k, c, x0).
  2. Newton's method in a ``while`` loop, ``newton_cubic(a, b)`` of bench_grad; wrt (a, b).
  3-7. The element loops of bench_elements (fill loop, Rosenbrock, heat_elements, Thomas,
     running_peak), at 500 and 8000 elements, with their hand-written adjoints.
  8. An n-body integrator written element by element (``nbody`` below): 16 bodies in the plane,
     10 leapfrog steps (drift, kick, drift), the accelerations from a double loop over bodies
     with scalar reads ``p[j, 0]`` and writes ``acc[i, 0] = ax``, loss the final kinetic
     energy; wrt (positions, velocities).

For each workload these rows are measured side by side, in one ``measure_group`` of bench_grad
(both sizes of an element loop in the same group): the interpreted primal, the primal compiled
with ``numba.njit`` (what a Numba user runs; once with Numba's defaults and once with
``boundscheck=True``, which is how the backend compiles our generated code), our gradient with
the Python backend, our gradient with ``backend="numba"``, and where the workload has one the
hand-written adjoint, interpreted and compiled with ``numba.njit`` (a row left out, with Numba's
reason, when it does not compile). Times are best-of and median per call; ratios use the best-of.

Before anything is timed: the Python-backend gradient is checked (against the hand-written
adjoint, itself checked against central finite differences, as bench_elements does; for RK4 and
the n-body against finite differences; for Newton against the implicit-function derivative),
the numba-backend gradient must equal it to 1e-12 relative (per gradient, relative to its
largest entry) with the same types, ``grad(f, backend="numba").compiled_for(*args).backend``
must be ``"numba"``, and the njit primal (and njit hand-written adjoint) must agree with the
interpreted ones. A gradient that Numba refuses (``TranspileError``) is reported and its
workload timed without it.

Compile time: the wall time of ``grad(f, wrt=..., backend="numba")`` and its first call (our
pipeline, then Numba's machine code), after ``cache.clear()``, in this process, where Numba has
already compiled something (its own warm-up, done once per process, is printed at the start);
beside it the same first call with the Python backend and the first call of the njit primal.
The same first call is also measured in a fresh subprocess (``python -c`` that imports numba
and transpiler, then times it): what a user sees in a new interpreter, imports excluded.

Targets (from the issue): the RK4 numba gradient at most 0.25x the interpreted primal and at
most 3x the njit primal, its first call at most 3 s (in a fresh process); the fill loop and
the Thomas solve at 8000 elements at most 0.3x their interpreted primals.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np

from tests.benchmarks import bench_elements
from tests.benchmarks.bench_elements import SIZES, check_workload
from tests.benchmarks.bench_grad import (
    Config,
    _environment,
    _fmt_time,
    _timed,
    assert_fd,
    assert_same_grad,
    measure_group,
    newton_cubic,
    newton_cubic_analytic,
    print_header,
    rk4,
)
from transpiler import TranspileError, cache, grad

NBODY_N, NBODY_STEPS = 16, 10  # bodies, and the step count written (as a literal) in nbody
TARGET_RK4_PRIMAL, TARGET_RK4_NJIT, TARGET_RK4_FIRST_CALL = 0.25, 3.0, 3.0
TARGET_ELEMENTS_PRIMAL, ELEMENTS_WITH_TARGET = 0.3, ("fill", "thomas")
AGREE_RTOL = 1e-12
PRIMAL, NJIT, NJIT_BC = "primal (interpreted)", "primal, numba.njit", "primal, njit(boundscheck)"
PY, NB = "ours: grad, python", "ours: grad, numba"
HAND, HAND_NJIT = "hand-written adjoint", "hand-written, numba.njit"
ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------
# The n-body workload
# --------------------------------------------------------------------------------------------

def nbody(pos, vel, mass):
    """Leapfrog (drift, kick, drift) for bodies in the plane, softened gravity (G = 1); a body's
    pull on itself is 0 (dx = dy = 0), so the double loop needs no branch."""
    n = pos.shape[0]
    dt = 0.01
    soft = 0.01
    p = pos.copy()
    v = vel.copy()
    acc = np.zeros((n, 2))
    for step in range(10):
        for i in range(n):
            p[i, 0] = p[i, 0] + 0.5 * dt * v[i, 0]
            p[i, 1] = p[i, 1] + 0.5 * dt * v[i, 1]
        for i in range(n):
            ax = 0.0
            ay = 0.0
            for j in range(n):
                dx = p[j, 0] - p[i, 0]
                dy = p[j, 1] - p[i, 1]
                r2 = dx * dx + dy * dy + soft
                s = mass[j] / (r2 * np.sqrt(r2))
                ax = ax + dx * s
                ay = ay + dy * s
            acc[i, 0] = ax
            acc[i, 1] = ay
        for i in range(n):
            v[i, 0] = v[i, 0] + dt * acc[i, 0]
            v[i, 1] = v[i, 1] + dt * acc[i, 1]
            p[i, 0] = p[i, 0] + 0.5 * dt * v[i, 0]
            p[i, 1] = p[i, 1] + 0.5 * dt * v[i, 1]
    e = 0.0
    for i in range(n):
        e = e + 0.5 * mass[i] * (v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1])
    return e


def _nbody_args(rng, n):
    del n  # one size
    return (rng.uniform(-1.0, 1.0, (NBODY_N, 2)), 0.3 * rng.standard_normal((NBODY_N, 2)),
            rng.uniform(0.5, 1.5, NBODY_N))


# --------------------------------------------------------------------------------------------
# The workloads and how each gradient is checked
# --------------------------------------------------------------------------------------------

def _check_fd(case, args, g_py, label):
    wrt = case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)
    assert_fd(f"{label} python backend", case.f, args, wrt, g_py)


def _check_newton(case, args, g_py, label):
    exact = newton_cubic_analytic(*args)
    dev = max(abs(g - e) for g, e in zip(g_py, exact))
    assert dev <= 1e-8, f"{label} python backend: {g_py} vs analytic {exact}"


def _check_hand(case, args, g_py, label):
    """As bench_elements: the hand-written adjoint vs. finite differences, ours vs. it."""
    _, failure = check_workload(case.element, lambda *a: g_py, args, label)
    assert failure is None, failure


@dataclass
class Case:
    key: str
    title: str
    f: object
    make_args: object  # (rng, n) -> args
    wrt: int | tuple
    check: object  # (case, args, python gradient, label) -> None; raises if it is wrong
    sizes: tuple = (None,)  # element counts; (None,): one fixed size
    hand: object = None
    element: object = None  # the bench_elements.Workload it comes from


def _element_case(w) -> Case:
    return Case(w.key, w.title, w.f, w.make_args, w.wrt, _check_hand, SIZES, w.hand, w)


CASES = [
    Case("rk4", "RK4 damped oscillator, 1000 steps in Python floats, loss x*x + v*v; wrt "
         "(k, c, x0)", rk4, lambda rng, n: (2.0, 0.3, 1.0), (0, 1, 2), _check_fd),
    Case("newton", "Newton's method in a while loop (root of x**3 + a*x - b, a=2, b=5); wrt "
         "(a, b)", newton_cubic, lambda rng, n: (2.0, 5.0), (0, 1), _check_newton),
    *(_element_case(w) for w in bench_elements.WORKLOADS),
    Case("nbody", f"n-body, {NBODY_N} bodies, {NBODY_STEPS} leapfrog steps, double loop over "
         "bodies (p[j, 0] reads, acc[i, 0] writes), loss final kinetic energy; wrt (pos, vel)",
         nbody, _nbody_args, (0, 1), _check_fd),
]
BY_KEY = {c.key: c for c in CASES}


def case_args(case: Case, n):
    return case.make_args(np.random.default_rng(n if n is not None else 0), n)


def first_call(key: str) -> float:
    """Seconds for ``grad(f, wrt=..., backend="numba")`` and its first call, on the workload's
    first size (the subprocess measurement runs this in a fresh interpreter)."""
    case = BY_KEY[key]
    args = case_args(case, case.sizes[0])
    t0 = time.perf_counter()
    grad(case.f, wrt=case.wrt, backend="numba")(*args)
    return time.perf_counter() - t0


_SUBPROCESS = """\
import time
t0 = time.perf_counter()
import numba, transpiler
t1 = time.perf_counter()
from tests.benchmarks.bench_native import first_call
print(t1 - t0, first_call({key!r}))
"""


def first_call_in_subprocess(key: str) -> tuple:
    """(imports of numba and transpiler, first call) seconds in a fresh interpreter, or
    (None, the error)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    try:
        done = subprocess.run([sys.executable, "-c", _SUBPROCESS.format(key=key)], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "timed out after 300 s"
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return None, tail[0]
    imports, call = map(float, done.stdout.split()[-2:])
    return imports, call


# --------------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------------

def assert_backends_agree(label, got, expected) -> float:
    """The numba-backend gradient equals the Python-backend one to AGREE_RTOL, relative to each
    gradient's largest entry, with the same types; returns the largest relative deviation."""
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected), f"{label}: {len(got)} gradients, expected {len(expected)}"
    worst = 0.0
    for i, (g, e) in enumerate(zip(got, expected)):
        assert type(g) is type(e), f"{label}[{i}]: {type(g).__name__}, python backend: " \
                                   f"{type(e).__name__}"
        scale = float(np.max(np.abs(e))) if np.size(e) else 0.0
        assert_same_grad(f"{label}[{i}]", g, e, rtol=AGREE_RTOL, atol=AGREE_RTOL * scale,
                         ref="the python backend")
        if scale:
            worst = max(worst, float(np.max(np.abs(np.asarray(g) - e))) / scale)
    return worst


def _same_value(label, got, expected) -> None:
    for i, (g, e) in enumerate(zip(_tuple(got), _tuple(expected))):
        np.testing.assert_allclose(g, e, rtol=AGREE_RTOL, atol=AGREE_RTOL * np.max(np.abs(e)),
                                   err_msg=f"{label}: value {i} disagrees with the interpreted")


def _tuple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def _numba_reason(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:160]


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------

@dataclass
class CaseResult:
    case: Case
    results: dict = field(default_factory=dict)  # {(row, n): (median, best)}
    counts: dict = field(default_factory=dict)  # {(row, n): timed repeats}
    compile: dict = field(default_factory=dict)  # {what: seconds}
    subprocess: tuple | None = None  # (imports, first call) or (None, error)
    refused: str | None = None  # the TranspileError of backend="numba"
    skipped: list = field(default_factory=list)  # [(row, reason)]
    deviation: float = 0.0  # numba vs python backend, largest relative difference

    def best(self, row, n):
        return self.results[(row, n)][1]

    def ratio(self, row, ref, n):
        return self.best(row, n) / self.best(ref, n)


def _fresh_first_call(case: Case, args, backend: str):
    """(gradient, seconds of grad(...) and its first call) after cache.clear()."""
    cache.clear()
    gc.collect()
    t0 = time.perf_counter()
    g = grad(case.f, wrt=case.wrt, backend=backend)
    g(*args)
    return g, time.perf_counter() - t0


def _njit(fn, label, args_by_n, out: CaseResult, row: str, **options):
    """``numba.njit(fn)`` checked against ``fn`` at every size, with the seconds of its first
    call, or None (the row skipped with Numba's reason)."""
    jitted = numba.njit(**options)(fn)
    try:
        value, secs = _timed(lambda: jitted(*args_by_n[next(iter(args_by_n))]))
    except Exception as exc:  # noqa: BLE001  (Numba refused it: the row is left out)
        out.skipped.append((row, f"numba.njit does not compile it: {_numba_reason(exc)}"))
        return None, None
    for n, args in args_by_n.items():
        _same_value(f"{label} {row} n={n}", jitted(*args), fn(*args))
    return jitted, secs


def bench_case(case: Case, cfg: Config, in_subprocess: bool) -> CaseResult:
    out = CaseResult(case)
    args_by_n = {n: case_args(case, n) for n in case.sizes}
    first = args_by_n[case.sizes[0]]
    if in_subprocess:
        out.subprocess = first_call_in_subprocess(case.key)

    py, out.compile["python"] = _fresh_first_call(case, first, "python")
    try:
        nb, out.compile["numba"] = _fresh_first_call(case, first, "numba")
    except TranspileError as exc:
        nb, out.refused = None, str(exc)
    jitted, out.compile["njit primal"] = _njit(case.f, case.key, args_by_n, out, NJIT)
    jitted_bc, _ = _njit(case.f, case.key, args_by_n, out, NJIT_BC, boundscheck=True)
    hand_jitted = None
    if case.hand is not None:
        hand_jitted, _ = _njit(case.hand, case.key, args_by_n, out, HAND_NJIT)

    rows = {}
    for n, args in args_by_n.items():
        label = case.key if n is None else f"{case.key} n={n}"
        before = [np.copy(a) for a in args]
        g_py = py(*args)
        case.check(case, args, g_py, label)
        cands = [(PRIMAL, lambda a=args: case.f(*a)), (NJIT, lambda a=args: jitted(*a)),
                 (NJIT_BC, lambda a=args: jitted_bc(*a)), (PY, lambda a=args: py(*a))]
        if nb is not None:
            backend = nb.compiled_for(*args).backend
            assert backend == "numba", f"{label}: compiled_for(...).backend is {backend!r}"
            dev = assert_backends_agree(f"{label} numba backend", nb(*args), g_py)
            out.deviation = max(out.deviation, dev)
            cands.append((NB, lambda a=args: nb(*a)))
        if case.hand is not None:
            cands.append((HAND, lambda a=args: case.hand(*a)))
            if hand_jitted is not None:
                _same_value(f"{label} {HAND_NJIT}", hand_jitted(*args), case.hand(*args))
                cands.append((HAND_NJIT, lambda a=args: hand_jitted(*a)))
        for a, b in zip(args, before):
            assert np.array_equal(a, b), f"{label}: an argument was modified"
        rows[n] = [(name, fn) for name, fn in cands if name not in dict(out.skipped)]

    named = [((name, n), fn) for n, cands in rows.items() for name, fn in cands]
    counts = {}
    results = measure_group([(_key(k), fn) for k, fn in named], cfg, counts)
    out.results = {k: results[_key(k)] for k, _ in named}
    out.counts = {k: counts[_key(k)] for k, _ in named}
    print_case(out)
    return out


def _key(k) -> str:
    name, n = k
    return name if n is None else f"{name} n={n}"


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

def _verdict(ok: bool) -> str:
    return "OK" if ok else "ABOVE TARGET"


def _fmt_s(seconds) -> str:
    return f"{seconds:.2f} s" if seconds is not None else "-"


def _compile_line(r: CaseResult) -> str:
    c = r.compile
    here = (f"{_fmt_s(c['numba'])} in this process" if "numba" in c else "refused")
    sub = ""
    if r.subprocess is not None:
        imports, call = r.subprocess
        sub = (f", {call:.2f} s in a fresh process (after {imports:.2f} s importing numba and "
               f"transpiler)" if imports is not None else f", fresh process failed: {call}")
    return (f"  first call of a fresh grad(..., backend=\"numba\"): {here}{sub};  "
            f"python backend: {_fmt_s(c['python'])}, numba.njit primal: "
            f"{_fmt_s(c.get('njit primal'))}")


def print_case(r: CaseResult) -> None:
    case = r.case
    print(f"\n{CASES.index(case) + 1}. {case.title}")
    if r.refused:
        print("  backend=\"numba\" refused it (TranspileError):\n    "
              + r.refused.replace("\n", "\n    "))
    print(_compile_line(r))
    for row, reason in r.skipped:
        print(f"  {row}: skipped ({reason})")
    for n in case.sizes:
        indent = "  "
        if n is not None:
            print(f"  n = {n}")
            indent = "    "
        header = (f"{indent}{'':26s} {'best':>11s} {'median':>11s} {'best/primal':>12s} "
                  f"{'best/njit':>10s} {'repeats':>8s}")
        print(header)
        print(indent + "-" * (len(header) - len(indent)))
        for (name, m), (med, best) in r.results.items():
            if m != n:
                continue
            print(f"{indent}{name:26s} {_fmt_time(best)} {_fmt_time(med)} "
                  f"{r.ratio(name, PRIMAL, n):12.3f} {r.ratio(name, NJIT, n):10.2f} "
                  f"{r.counts[(name, n)]:8d}")
        if r.refused:
            continue
        (nm, _), (pm, _), (jm, _), (ym, _) = (r.results[(k, n)] for k in (NB, PRIMAL, NJIT, PY))
        print(f"{indent}=> numba grad / interpreted primal = {r.ratio(NB, PRIMAL, n):.3f}x "
              f"(medians {nm / pm:.3f}x);  / njit primal = {r.ratio(NB, NJIT, n):.2f}x "
              f"(medians {nm / jm:.2f}x);  / python grad = {r.ratio(NB, PY, n):.4f}x "
              f"(medians {nm / ym:.4f}x)")
        if (HAND_NJIT, n) in r.results:
            print(f"{indent}   numba grad / njit hand-written adjoint = "
                  f"{r.ratio(NB, HAND_NJIT, n):.2f}x;  numba grad / njit(boundscheck) primal = "
                  f"{r.ratio(NB, NJIT_BC, n):.2f}x")
        else:
            print(f"{indent}   numba grad / njit(boundscheck) primal = "
                  f"{r.ratio(NB, NJIT_BC, n):.2f}x")
    if not r.refused:
        print(f"  numba vs python backend: largest relative difference {r.deviation:.1e} "
              f"(required <= {AGREE_RTOL:g})")
    targets = _targets(r)
    if targets:
        print("  targets: " + ";  ".join(targets))


def _targets(r: CaseResult) -> list:
    key = r.case.key
    if r.refused and (key == "rk4" or key in ELEMENTS_WITH_TARGET):
        return ["not met: backend=\"numba\" refused it"]
    if key == "rk4":
        vs_primal, vs_njit = r.ratio(NB, PRIMAL, None), r.ratio(NB, NJIT, None)
        fresh = r.subprocess[1] if r.subprocess and r.subprocess[0] is not None else None
        call, where = (fresh, "fresh process") if fresh is not None else \
            (r.compile["numba"], "this process; no fresh-process figure")
        return [f"<= {TARGET_RK4_PRIMAL:g}x interpreted primal: "
                f"{_verdict(vs_primal <= TARGET_RK4_PRIMAL)} ({vs_primal:.3f}x)",
                f"<= {TARGET_RK4_NJIT:g}x njit primal: {_verdict(vs_njit <= TARGET_RK4_NJIT)} "
                f"({vs_njit:.2f}x)",
                f"first call <= {TARGET_RK4_FIRST_CALL:g} s: "
                f"{_verdict(call <= TARGET_RK4_FIRST_CALL)} ({call:.2f} s, {where})"]
    if key in ELEMENTS_WITH_TARGET:
        n = SIZES[-1]
        ratio = r.ratio(NB, PRIMAL, n)
        return [f"at n={n}, <= {TARGET_ELEMENTS_PRIMAL:g}x interpreted primal: "
                f"{_verdict(ratio <= TARGET_ELEMENTS_PRIMAL)} ({ratio:.3f}x)"]
    return []


def print_summary(all_results: list) -> None:
    print_header("summary (best-of per call; ratios from one side-by-side group per workload; "
                 "first call: grad(..., backend=\"numba\") and its first call, here / in a fresh "
                 "process)",
                 f"  {'workload':10s} {'n':>5s} {'primal':>11s} {'njit primal':>11s} "
                 f"{'grad python':>11s} {'grad numba':>11s} {'nb/primal':>10s} {'nb/njit':>8s} "
                 f"{'nb/python':>10s} {'first call':>17s}")
    for r in all_results:
        key = r.case.key
        if r.refused:
            print(f"  {key:10s} backend=\"numba\" refused it: {r.refused.splitlines()[0]}")
            continue
        sub = r.subprocess[1] if r.subprocess and r.subprocess[0] is not None else None
        calls = f"{r.compile['numba']:.2f} / " + (f"{sub:.2f} s" if sub is not None else "-")
        for j, n in enumerate(r.case.sizes):
            print(f"  {key if j == 0 else '':10s} {'' if n is None else n:>5} "
                  f"{_fmt_time(r.best(PRIMAL, n))} {_fmt_time(r.best(NJIT, n))} "
                  f"{_fmt_time(r.best(PY, n))} {_fmt_time(r.best(NB, n))} "
                  f"{r.ratio(NB, PRIMAL, n):9.3f}x {r.ratio(NB, NJIT, n):7.2f}x "
                  f"{r.ratio(NB, PY, n):9.4f}x {calls if j == 0 else '':>17s}")
    print(f"  targets: RK4 <= {TARGET_RK4_PRIMAL:g}x interpreted primal, <= {TARGET_RK4_NJIT:g}x "
          f"njit primal, first call <= {TARGET_RK4_FIRST_CALL:g} s; fill and thomas at "
          f"n={SIZES[-1]} <= {TARGET_ELEMENTS_PRIMAL:g}x interpreted primal")
    verdicts = [(r.case.key, t) for r in all_results for t in _targets(r)]
    for key, t in verdicts:
        print(f"    {key:8s} {t}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repeats; the fresh-process first call only for RK4")
    parser.add_argument("--only", metavar="NAMES", default="",
                        help=f"comma-separated workloads to run, of {', '.join(BY_KEY)}")
    opts = parser.parse_args(argv)
    cfg = Config()
    cfg.slow_row_budget = 8.0
    if opts.quick:
        cfg.repeat, cfg.target, cfg.slow_row_budget, cfg.quick = 3, 0.03, 0.0, True
    chosen = opts.only.split(",") if opts.only else list(BY_KEY)
    unknown = [k for k in chosen if k not in BY_KEY]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(BY_KEY)}")

    start = time.perf_counter()
    warm = np.ones(1 << 20)  # see bench_grad.main: glibc's mmap threshold
    del warm
    _, numba_warmup = _timed(lambda: numba.njit(lambda x: x + 1.0)(1.0))
    print("transpiler Numba-backend benchmark (times per call; ratios use best-of, medians "
          "shown)")
    print("\n".join(line for line in _environment().splitlines()
                    if not line.strip().startswith(("autograd", "jax"))))
    print(f"  numba {numba.__version__}; its warm-up in this process (first njit compile): "
          f"{numba_warmup:.2f} s")
    print(f"  repeats {cfg.repeat} x ~{cfg.target:g} s, a call over {cfg.slow_call:g} s gets "
          f"the repeats that fit in {cfg.slow_row_budget:g} s (at least one)")
    results = [bench_case(BY_KEY[k], cfg, in_subprocess=not opts.quick or k == "rk4")
               for k in chosen]
    print_summary(results)
    print(f"\ntotal benchmark time: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
