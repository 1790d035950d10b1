"""Element-by-element loops: this compiler's gradient vs. the primal and a hand-written adjoint.

Run from the repository root::

    python -m tests.benchmarks.bench_elements            # full run (a few minutes at most)
    python -m tests.benchmarks.bench_elements --quick    # fewer repeats, the same sizes

Not part of the test suite (pytest ignores tests/benchmarks). The workloads are loops as
Numba or Fortran users write them: plain NumPy functions of 1-D float64 arrays, with explicit
``for i in range(...)`` loops, scalar element reads (``x[i + 1]``) and writes (``y[i] = ...``):

  1. fill loop: ``y[i] = np.sin(x[i]) * x[i]``, loss ``np.sum(y)``.
  2. element-wise Rosenbrock, accumulated in a Python float.
  3. 1-D heat equation per element, 4 time steps (``un = u.copy()`` per step); wrt (u0, a).
  4. Thomas tridiagonal solve (forward elimination + back substitution into np.zeros arrays),
     loss ``np.sum(x * x)``; wrt (a, b, c, d), diagonally dominant input.
  5. running sum minus running maximum (a branch in the loop), loss ``np.sum(c * c)``.

Each workload has a hand-written adjoint, element by element as well: the practical bound, what
a careful person writes by hand (O(1) work per element, gradient buffers allocated once with
np.zeros and accumulated in place). Before anything is timed, the hand-written adjoint is
checked against central finite differences (one random direction per argument) and our
gradient against the hand-written one, so a wrong gradient is never measured silently.

Every workload runs at two sizes 16x apart, 500 and 8000 elements. At each size the primal,
ours (``transpiler.grad(f, wrt=...)``) and the hand-written adjoint are measured side by side in
one ``measure_group`` of bench_grad, both sizes in the same group (interleaved repeats of all
six rows, so the growth compares numbers taken under the same load; best-of and medians; ratios
use the best-of). A call longer than ``Config.slow_call`` gets only as many repeats as fit in
``Config.slow_row_budget`` seconds, so the run stays short while our gradient is slow and
repeats more once it is fast. The growth of a ratio is its value at 8000 elements over its
value at 500: 1.0 means the same complexity as the primal, 16 a gradient a factor n slower.

Peak memory: one extra call of each row, after the timed ones, under ``tracemalloc`` (started
just before the call, so the peak counts what the call allocates and holds at its high point:
NumPy's array buffers and Python objects; tracemalloc slows that call, it is not timed).

Targets for ours: at most 6x its primal, growth at most 1.6x, Rosenbrock within 1.25x of the
hand-written adjoint.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from dataclasses import dataclass, field

import numpy as np

from tests.benchmarks.bench_grad import (
    Config,
    _environment,
    _fmt_time,
    assert_fd,
    assert_same_grad,
    measure_group,
    print_header,
)
from transpiler import grad

SIZES = (500, 8000)
HEAT_STEPS = 4  # the time steps written (as a literal) in heat_elements
TARGET_PRIMAL, TARGET_GROWTH, TARGET_ROSENBROCK_HAND = 6.0, 1.6, 1.25
PRIMAL, OURS, HAND = "primal (NumPy)", "ours: grad", "hand-written adjoint"


# --------------------------------------------------------------------------------------------
# The workloads and their hand-written adjoints
# --------------------------------------------------------------------------------------------

def fill_loop(x):
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sin(x[i]) * x[i]
    return np.sum(y)


def fill_loop_hand(x):
    """d/dx[i] = cos(x[i]) x[i] + sin(x[i]) (the seed of np.sum is 1 for every y[i])."""
    n = x.shape[0]
    bx = np.zeros(n)
    for i in range(n - 1, -1, -1):
        xi = x[i]
        bx[i] += np.cos(xi) * xi + np.sin(xi)
    return bx


def rosenbrock(x):
    n = x.shape[0]
    s = 0.0
    for i in range(n - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosenbrock_hand(x):
    """Each term adds to bx[i + 1] and bx[i]; the seed of s is 1 throughout."""
    n = x.shape[0]
    bx = np.zeros(n)
    for i in range(n - 2, -1, -1):
        xi = x[i]
        g = 200.0 * (x[i + 1] - xi ** 2)
        bx[i + 1] += g
        bx[i] += -2.0 * xi * g - 2.0 * (1.0 - xi)
    return bx


def heat_elements(u0, a):
    n = u0.shape[0]
    u = u0.copy()
    for t in range(4):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + a * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        u = un
    return np.sum(u * u)


def heat_elements_hand(u0, a):
    """Keeps the HEAT_STEPS + 1 states, then sweeps the stencil backwards, two buffers swapped."""
    n = u0.shape[0]
    states = [u0.copy()]
    u = states[0]
    for t in range(HEAT_STEPS):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + a * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        states.append(un)
        u = un
    bu = 2.0 * u
    bprev = np.zeros(n)
    ba = 0.0
    for t in range(HEAT_STEPS - 1, -1, -1):
        u = states[t]
        bprev.fill(0.0)
        bprev[0] = bu[0]  # the ends pass through un = u.copy()
        bprev[n - 1] = bu[n - 1]
        for i in range(n - 2, 0, -1):
            g = bu[i]
            ag = a * g
            bprev[i - 1] += ag
            bprev[i] += g - 2.0 * ag
            bprev[i + 1] += ag
            ba += g * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        bu, bprev = bprev, bu
    return bu, float(ba)


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


def thomas_hand(a, b, c, d):
    """The solve, keeping the pivots m; then both loops reversed (back substitution first)."""
    n = d.shape[0]
    cp = np.zeros(n)
    dp = np.zeros(n)
    x = np.zeros(n)
    m = np.zeros(n)
    m[0] = b[0]
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        mi = b[i] - a[i] * cp[i - 1]
        m[i] = mi
        cp[i] = c[i] / mi
        dp[i] = (d[i] - a[i] * dp[i - 1]) / mi
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]

    ba, bb, bc, bd = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    bcp, bdp = np.zeros(n), np.zeros(n)
    bx = 2.0 * x
    for i in range(n - 1):  # x[i] = dp[i] - cp[i] * x[i + 1], i descending
        g = bx[i]
        bdp[i] += g
        bcp[i] -= g * x[i + 1]
        bx[i + 1] -= g * cp[i]
    bdp[n - 1] += bx[n - 1]
    for i in range(n - 1, 0, -1):
        mi = m[i]
        g = bdp[i] / mi  # dp[i] = (d[i] - a[i] * dp[i - 1]) / m
        bd[i] += g
        ba[i] -= g * dp[i - 1]
        bdp[i - 1] -= g * a[i]
        h = bcp[i] / mi  # cp[i] = c[i] / m
        bc[i] += h
        bm = -g * dp[i] - h * cp[i]  # m = b[i] - a[i] * cp[i - 1]
        bb[i] += bm
        ba[i] -= bm * cp[i - 1]
        bcp[i - 1] -= bm * a[i]
    g = bdp[0] / b[0]
    h = bcp[0] / b[0]
    bd[0] += g
    bc[0] += h
    bb[0] -= g * dp[0] + h * cp[0]
    return ba, bb, bc, bd


def running_peak(x):
    n = x.shape[0]
    c = np.zeros(n)
    acc = 0.0
    peak = x[0]
    for i in range(n):
        acc = acc + x[i]
        if x[i] > peak:
            peak = x[i]
        c[i] = acc - peak
    return np.sum(c * c)


def running_peak_hand(x):
    """Records where each running maximum came from; the running sum's adjoint is a suffix sum."""
    n = x.shape[0]
    c = np.zeros(n)
    where = np.zeros(n, dtype=np.intp)
    acc = 0.0
    peak = x[0]
    k = 0
    for i in range(n):
        acc = acc + x[i]
        if x[i] > peak:
            peak = x[i]
            k = i
        c[i] = acc - peak
        where[i] = k
    bx = np.zeros(n)
    bacc = 0.0
    for i in range(n - 1, -1, -1):
        bc = 2.0 * c[i]
        bacc += bc
        bx[i] += bacc
        bx[where[i]] -= bc
    return bx


def _fill_args(rng, n):
    return (rng.uniform(-2.0, 2.0, n),)


def _rosenbrock_args(rng, n):
    return (rng.uniform(-1.5, 1.5, n),)


def _heat_args(rng, n):
    return np.sin(np.pi * np.linspace(0.0, 1.0, n)) + 0.1 * rng.standard_normal(n), 0.2


def _thomas_args(rng, n):
    # |b| >= 4 > |a| + |c|: diagonally dominant, pivots stay above 2
    return (rng.uniform(-1.0, 1.0, n), rng.uniform(4.0, 5.0, n), rng.uniform(-1.0, 1.0, n),
            rng.uniform(-1.0, 1.0, n))


def _running_args(rng, n):
    return (rng.standard_normal(n),)


@dataclass
class Workload:
    key: str
    title: str
    f: object
    hand: object
    make_args: object
    wrt: int | tuple = 0
    hand_target: float | None = None  # ours / hand-written at most this (None: no target)


WORKLOADS = [
    Workload("fill", "fill loop: y[i] = np.sin(x[i]) * x[i], loss np.sum(y)",
             fill_loop, fill_loop_hand, _fill_args),
    Workload("rosenbrock", "element-wise Rosenbrock, s = s + 100 (x[i+1] - x[i]**2)**2 + "
             "(1 - x[i])**2", rosenbrock, rosenbrock_hand, _rosenbrock_args,
             hand_target=TARGET_ROSENBROCK_HAND),
    Workload("heat", f"heat equation per element, {HEAT_STEPS} steps of un[i] = u[i] + a (u[i+1] "
             f"- 2 u[i] + u[i-1]), loss np.sum(u * u); wrt (u0, a)",
             heat_elements, heat_elements_hand, _heat_args, (0, 1)),
    Workload("thomas", "Thomas tridiagonal solve (elimination + back substitution), loss "
             "np.sum(x * x); wrt (a, b, c, d)", thomas, thomas_hand, _thomas_args, (0, 1, 2, 3)),
    Workload("running", "running sum minus running maximum (if x[i] > peak), loss "
             "np.sum(c * c)", running_peak, running_peak_hand, _running_args),
]


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------

@dataclass
class SizeResult:
    n: int
    results: dict  # {row: (median, best)} seconds per call
    counts: dict  # {row: timed repeats}
    peaks: dict  # {row: peak bytes of one traced call}

    def best(self, row):
        return self.results[row][1]

    def ratio(self, row, ref=PRIMAL):
        return self.best(row) / self.best(ref)


@dataclass
class WorkloadResult:
    workload: Workload
    sizes: list = field(default_factory=list)
    failure: str | None = None  # our gradient raised (then only primal and hand are timed)

    def growth(self, row, ref=PRIMAL):
        small, large = self.sizes[0], self.sizes[-1]
        return large.ratio(row, ref) / small.ratio(row, ref)


def traced_peak(fn) -> int:
    """Peak bytes allocated (and alive at once) during one call of ``fn``, by tracemalloc."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def check_workload(w: Workload, ours, args, label) -> tuple:
    """The hand-written adjoint vs. finite differences, ours vs. the hand-written adjoint.

    Returns (our gradient or None, the failure message or None). A wrong gradient raises."""
    wrt = w.wrt if isinstance(w.wrt, tuple) else (w.wrt,)
    before = [np.copy(a) for a in args]
    g_hand = w.hand(*args)
    hand_tuple = g_hand if isinstance(w.wrt, tuple) else (g_hand,)
    for k, i in enumerate(wrt):
        assert_fd(f"{label} hand-written, argument {i}", w.f, args, (i,), (hand_tuple[k],),
                  seed=i + 1)
    try:
        g_ours = ours(*args)
    except Exception as exc:  # noqa: BLE001  (reported, and the row is left out)
        return None, f"{type(exc).__name__}: {exc}"
    assert_same_grad(f"{label} ours", g_ours, g_hand)
    for a, b in zip(args, before):
        assert np.array_equal(a, b), f"{label}: an argument was modified"
    return g_ours, None


def _rows(w: Workload, ours, args, with_ours: bool) -> list:
    rows = [(PRIMAL, lambda: w.f(*args)), (HAND, lambda: w.hand(*args))]
    if with_ours:
        rows.insert(1, (OURS, lambda: ours(*args)))
    return rows


def bench_workload(w: Workload, cfg: Config) -> WorkloadResult:
    """Both sizes in one measure_group (six rows interleaved), so that the growth of a ratio
    compares numbers taken under the same load."""
    out = WorkloadResult(w)
    ours = grad(w.f, wrt=w.wrt)
    rows = {}
    for n in SIZES:
        rng = np.random.default_rng(n)
        args = w.make_args(rng, n)
        _, failure = check_workload(w, ours, args, f"{w.key} n={n}")
        out.failure = out.failure or failure
        rows[n] = args
    rows = {n: _rows(w, ours, args, not out.failure) for n, args in rows.items()}
    counts = {}
    results = measure_group([(f"{name} n={n}", fn) for n, cands in rows.items()
                             for name, fn in cands], cfg, counts)
    for n, cands in rows.items():
        peaks = {name: traced_peak(fn) for name, fn in cands}
        out.sizes.append(SizeResult(n, {name: results[f"{name} n={n}"] for name, _ in cands},
                                    {name: counts[f"{name} n={n}"] for name, _ in cands}, peaks))
    print_workload(out)
    return out


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

def _fmt_bytes(b: float) -> str:
    if b < 1 << 20:
        return f"{b / 1024:8.1f} KiB"
    return f"{b / (1 << 20):8.2f} MiB"


def _verdict(ok: bool) -> str:
    return "OK" if ok else "ABOVE TARGET"


def print_workload(r: WorkloadResult) -> None:
    w = r.workload
    print(f"\n{WORKLOADS.index(w) + 1}. {w.title}")
    if r.failure:
        print(f"  ours: grad failed: {r.failure}")
    for s in r.sizes:
        input_bytes = s.n * 8
        print(f"  n = {s.n} (one input array: {_fmt_bytes(input_bytes).strip()})")
        header = (f"    {'':22s} {'best':>11s} {'median':>11s} {'best/primal':>12s} "
                  f"{'best/hand':>10s} {'repeats':>8s} {'peak memory':>13s}")
        print(header)
        print("    " + "-" * (len(header) - 4))
        for name, (med, best) in s.results.items():
            print(f"    {name:22s} {_fmt_time(best)} {_fmt_time(med)} {s.ratio(name):12.2f} "
                  f"{s.ratio(name, HAND):10.2f} {s.counts[name]:8d} {_fmt_bytes(s.peaks[name])}")
        if not r.failure:
            (om, _), (pm, _), (hm, _) = (s.results[k] for k in (OURS, PRIMAL, HAND))
            print(f"    => ours / primal = {s.ratio(OURS):.2f}x (medians: {om / pm:.2f}x);  "
                  f"ours / hand-written = {s.ratio(OURS, HAND):.2f}x (medians: {om / hm:.2f}x)")
    if r.failure:
        return
    small, large = r.sizes[0].n, r.sizes[-1].n
    g_ours, g_hand = r.growth(OURS), r.growth(HAND)
    print(f"  growth {small} -> {large} elements (x{large // small}): ours / primal "
          f"{g_ours:.2f}x, hand-written / primal {g_hand:.2f}x, ours / hand-written "
          f"{r.growth(OURS, HAND):.2f}x")
    worst = max(s.ratio(OURS) for s in r.sizes)
    lines = [f"ours <= {TARGET_PRIMAL:g}x primal: {_verdict(worst <= TARGET_PRIMAL)} "
             f"(worst {worst:.2f}x)",
             f"growth <= {TARGET_GROWTH:g}x: {_verdict(g_ours <= TARGET_GROWTH)}"]
    if w.hand_target is not None:
        vs = max(s.ratio(OURS, HAND) for s in r.sizes)
        lines.append(f"ours <= {w.hand_target:g}x hand-written: {_verdict(vs <= w.hand_target)} "
                     f"(worst {vs:.2f}x)")
    print("  targets: " + ";  ".join(lines))


def print_summary(all_results: list) -> None:
    print_header("summary (best-of per call; ratios from one side-by-side group per row; "
                 f"growth: ratio at {SIZES[-1]} / ratio at {SIZES[0]})",
                 f"  {'workload':11s} {'n':>5s} {'primal':>11s} {'ours':>11s} {'hand':>11s} "
                 f"{'ours/primal':>12s} {'hand/primal':>12s} {'ours/hand':>10s} {'growth':>7s} "
                 f"{'peak ours':>13s}")
    for r in all_results:
        key = r.workload.key
        if r.failure:
            print(f"  {key:11s} ours failed: {r.failure}")
            continue
        for j, s in enumerate(r.sizes):
            growth = f"{r.growth(OURS):6.2f}x" if j == len(r.sizes) - 1 else ""
            print(f"  {key if j == 0 else '':11s} {s.n:5d} {_fmt_time(s.best(PRIMAL))} "
                  f"{_fmt_time(s.best(OURS))} {_fmt_time(s.best(HAND))} "
                  f"{s.ratio(OURS):11.2f}x {s.ratio(HAND):11.2f}x {s.ratio(OURS, HAND):9.2f}x "
                  f"{growth:>7s} {_fmt_bytes(s.peaks[OURS])}")
    print(f"  targets for ours: <= {TARGET_PRIMAL:g}x its primal, growth <= {TARGET_GROWTH:g}x, "
          f"Rosenbrock <= {TARGET_ROSENBROCK_HAND:g}x the hand-written adjoint")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (smoke test)")
    parser.add_argument("--only", metavar="NAMES", default="",
                        help="comma-separated workloads to run (e.g. fill,thomas)")
    opts = parser.parse_args(argv)
    cfg = Config()
    cfg.slow_row_budget = 8.0
    if opts.quick:
        cfg.repeat, cfg.target, cfg.slow_row_budget, cfg.quick = 3, 0.03, 0.0, True

    chosen = opts.only.split(",") if opts.only else [w.key for w in WORKLOADS]
    by_key = {w.key: w for w in WORKLOADS}
    unknown = [k for k in chosen if k not in by_key]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(by_key)}")

    start = time.perf_counter()
    warm = np.ones(1 << 20)  # see bench_grad.main: glibc's mmap threshold
    del warm
    print("transpiler element-loop benchmark (times per call; ratios use best-of, medians shown; "
          "peak memory: tracemalloc, one separate call)")
    print("\n".join(line for line in _environment().splitlines()
                    if not line.strip().startswith(("autograd", "jax"))))
    print(f"  sizes {', '.join(map(str, SIZES))}; repeats {cfg.repeat} x ~{cfg.target:g} s, a call "
          f"over {cfg.slow_call:g} s gets the repeats that fit in {cfg.slow_row_budget:g} s "
          f"(at least one)")
    results = [bench_workload(by_key[k], cfg) for k in chosen]
    print_summary(results)
    print(f"\ntotal benchmark time: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
