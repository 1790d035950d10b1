"""Checkpointed loops against the same loop taped whole: time and traced peak memory, side by
side in one run, for a nonlinear reaction-diffusion loop (gradient with respect to the initial
state and the diffusion coefficient).

    PYTHONPATH=. python -m tests.benchmarks.bench_checkpoint [--quick] [--cells N] [--steps T]

Targets (20,000 cells, 1,000 steps, ``snapshots=16``): the gradient equals the plain one to
1e-12, its traced peak is at most 10% of the plain gradient's, its time at most 3x. ``every=``
is measured beside it (every 32 steps: about the square root of the trip count). The plain
gradient's memory report is checked against its traced peak (within 30%).
"""

from __future__ import annotations

import argparse
import gc
import math
import time
import tracemalloc

import numpy as np

from tests.benchmarks.bench_grad import _fmt_time, print_header
from transpiler import checkpoint, grad

TARGET_MEMORY, TARGET_TIME, TARGET_REPORT = 0.10, 3.0, 0.30


def make(steps: int, snapshots: int | None = None, every: int | None = None):
    """The loop over ``steps`` steps, marked ``checkpoint(..., snapshots=)`` or ``every=``."""
    def reaction_diffusion(u0, D):
        u = u0
        for step in checkpoint(range(steps), snapshots=snapshots, every=every):
            lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
            u = u + 0.1 * (D * lap + u * (1.0 - u))
        return np.sum(u * u)
    return reaction_diffusion


def _peak(gradient, args) -> tuple[int, tuple]:
    gc.collect()
    tracemalloc.start()
    try:
        result = gradient(*args)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def _best(gradient, args, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        gradient(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 cells, 200 steps")
    parser.add_argument("--cells", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    cells, steps = (2_000, 200) if args.quick else (args.cells, args.steps)
    every = max(1, round(math.sqrt(steps)))
    u0 = 0.5 + 0.4 * np.sin(np.linspace(0.0, 2 * np.pi, cells))
    call = (u0, 0.2)
    marked = make(steps, snapshots=16)
    variants = {"taped whole": grad(marked, wrt=(0, 1), checkpoint=False),
                "snapshots=16": grad(marked, wrt=(0, 1)),
                f"every={every}": grad(make(steps, every=every), wrt=(0, 1))}
    results = {}
    for name, gradient in variants.items():
        gradient(*call)  # (compiled outside the measurements)
        peak, value = _peak(gradient, call)
        results[name] = (peak, value)
    times = {name: 0.0 for name in variants}
    for name in variants:  # interleaved: the ratios come from one run
        times[name] = _best(variants[name], call, args.repeats)
    plain_peak, plain = results["taped whole"]
    report = variants["taped whole"].memory(*call)
    print(f"reaction-diffusion, {cells} cells, {steps} steps, gradient wrt (u0, D); best of "
          f"{args.repeats}")
    print_header("summary", f"  {'variant':14s} {'time':>11s} {'time/whole':>11s} "
                 f"{'peak':>10s} {'peak/whole':>11s} {'max rel diff':>13s}")
    for name in variants:
        peak, value = results[name]
        diff = max(float(np.max(np.abs(value[0] - plain[0]) / np.maximum(np.abs(plain[0]),
                                                                        1e-300))),
                   abs(value[1] - plain[1]) / abs(plain[1]))
        print(f"  {name:14s} {_fmt_time(times[name])} {times[name] / times['taped whole']:10.2f}x "
              f"{peak / 1e6:8.1f} MB {peak / plain_peak:10.3f}x {diff:13.2e}")
    print(f"\nmemory report of the plain gradient: {report.total_bytes / 1e6:.1f} MB reported, "
          f"{plain_peak / 1e6:.1f} MB traced peak ({report.total_bytes / plain_peak:.2f}x); "
          f"top line {report.rows[0].where}: {report.rows[0].text}")
    print(report)
    print(variants["snapshots=16"].memory(*call))
    marked_peak, marked = results["snapshots=16"]
    ratio_t = times["snapshots=16"] / times["taped whole"]
    equal = np.allclose(marked[0], plain[0], rtol=1e-12, atol=0) and \
        math.isclose(marked[1], plain[1], rel_tol=1e-12)
    checks = [f"equal to 1e-12: {'met' if equal else 'NOT MET'}",
              f"peak <= {TARGET_MEMORY:g}x: "
              f"{'met' if marked_peak <= TARGET_MEMORY * plain_peak else 'NOT MET'} "
              f"({marked_peak / plain_peak:.3f}x)",
              f"time <= {TARGET_TIME:g}x: {'met' if ratio_t <= TARGET_TIME else 'NOT MET'} "
              f"({ratio_t:.2f}x)",
              f"report within {TARGET_REPORT:.0%} of the traced peak: "
              f"{'met' if abs(report.total_bytes / plain_peak - 1) <= TARGET_REPORT else 'NO'}"]
    print("\ntargets (snapshots=16): " + ";  ".join(checks))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
