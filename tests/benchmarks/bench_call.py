"""What one call costs beyond the arithmetic: small and large arrays, a float, and the runtime
helpers that generated code calls on small arrays.

Run from the repository root::

    python -m tests.benchmarks.bench_call            # ~40 s
    python -m tests.benchmarks.bench_call --quick

Not part of the test suite. Rows of a table are timed round-robin in one process (each round
calls every row ``number`` times; the minimum over rounds is reported), so the ratios beside
the hand-written gradient are measured under the same load. Each gradient is checked against
the hand-written one before it is timed.
"""

from __future__ import annotations

import argparse
import linecache
import math
import timeit

import numpy as np

import runtime as rt
from transpiler import grad


def f(x):
    return np.sum(np.sin(x) * x)


def f_hand(x):
    return np.cos(x) * x + np.sin(x)


def g(x):
    return x * x + math.sin(x)


def g_hand(x):
    return 2.0 * x + math.cos(x)


def interleaved(rows: dict, number: int, rounds: int) -> dict:
    """The minimum over ``rounds`` of each row's time per call, rows timed round-robin."""
    best = {name: math.inf for name in rows}
    for _ in range(rounds):
        for name, call in rows.items():
            best[name] = min(best[name], timeit.timeit(call, number=number) / number)
    return best


def table(title: str, rows: dict, number: int, rounds: int, base: str | None = None) -> None:
    best = interleaved(rows, number, rounds)
    print(f"\n{title}")
    for name, t in best.items():
        ratio = f"  {t / best[base]:6.2f}x {base}" if base else ""
        print(f"  {name:28s} {t * 1e6:10.3f} us{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    rounds = 3 if quick else 9
    for n, number in ((10, 20000), (10**6, 5)):
        x = np.random.default_rng(0).uniform(-1, 1, n)
        df = grad(f)
        np.testing.assert_allclose(df(x), f_hand(x), rtol=1e-12, atol=1e-14)
        generated = df.compiled_for(x).function if hasattr(df, "compiled_for") else None
        rows = {"hand-written gradient": lambda x=x: f_hand(x),
                "grad(f)(x)": lambda x=x, df=df: df(x)}
        if generated is not None:
            rows["generated function alone"] = lambda x=x, fn=generated: fn(x)
        table(f"np.sum(np.sin(x) * x), {n} elements", rows, number if not quick else number // 4
              or 1, rounds, "hand-written gradient")
    dg = grad(g)
    assert abs(dg(0.3) - g_hand(0.3)) < 1e-14
    table("x * x + math.sin(x), a float", {"hand-written gradient": lambda: g_hand(0.3),
                                          "grad(g)(x)": lambda: dg(0.3)},
          100000 if not quick else 20000, rounds, "hand-written gradient")
    path_costs(rounds, 20000 if not quick else 4000)
    compile_costs(rounds)
    helper_costs(rounds, 50000 if not quick else 10000)


def helper_costs(rounds: int, number: int) -> None:
    """Each runtime helper generated code calls to give gradients and tangents their shapes,
    on 10-element arrays of matching shapes (each has a fast path for that case), beside
    ``np.sin(x)`` for scale."""
    x, v = np.random.default_rng(1).uniform(-1, 1, 10), np.random.default_rng(2).uniform(-1, 1, 10)
    table("runtime helpers on 10 elements", {
        "np.sin(x) (for scale)": lambda: np.sin(x),
        "rt.unreduce(1.0, x)": lambda: rt.unreduce(1.0, x),
        "rt.unbroadcast(v, x)": lambda: rt.unbroadcast(v, x),
        "rt.grad_like(v, x)": lambda: rt.grad_like(v, x),
        "rt.broadcast_like(v, x)": lambda: rt.broadcast_like(v, x),
        "rt.reduce_like(v, x)": lambda: rt.reduce_like(v, x),
        "rt.reshape_like(v, x)": lambda: rt.reshape_like(v, x),
        "rt.tangent_like(v, x)": lambda: rt.tangent_like(v, x),
        "rt.zeros_like_grad(x)": lambda: rt.zeros_like_grad(x),
        "rt.zero_tangent(x)": lambda: rt.zero_tangent(x),
        "rt.shape_of(x)": lambda: rt.shape_of(x),
        "rt.copied(v)": lambda: rt.copied(v),
        "rt.distinct((v, x))": lambda: rt.distinct((v, x)),
        "rt.unsum(v[0], x)": lambda: rt.unsum(v[0], x),
        "rt.unindex(v[:3], x, slice)": lambda: rt.unindex(v[:3], x, slice(0, 3)),
        "rt.add_into(v, slice, x[:3])": lambda: rt.add_into(v, slice(0, 3), x[:3] * 0.0),
        "rt.cotangent(v, x)": lambda: rt.cotangent(v, x),
        "rt.unview(v, x)": lambda: rt.unview(v, x),
        "rt.seed(1.0)": lambda: rt.seed(1.0),
    }, number, rounds, "np.sin(x) (for scale)")


def with_globals(count: int, helpers: int):
    """``f(x)`` reading ``count`` globals (constants ``c0``...) and calling ``helpers`` helpers
    of its module (each small enough to be inlined, each a global too)."""
    lines = [f"c{i} = {1.0 + i / 10}" for i in range(count)]
    lines += [f"def h{j}(x):\n    return x * c{j % count}" for j in range(helpers)]
    terms = [f"c{i}" for i in range(count)] + [f"h{j}(x)" for j in range(helpers)]
    lines.append("def f(x):\n    return np.sum(x * (" + " + ".join(terms) + "))")
    return defined("\n".join(lines) + "\n", f"<bench globals {count} helpers {helpers}>")


def defined(source: str, name: str):
    """The function ``f`` that ``source`` defines (registered as file ``name``)."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace = {"np": np}
    exec(compile(source, name, "exec"), namespace)
    return namespace["f"]


def path_costs(rounds: int, number: int) -> None:
    """What the call path adds to the generated function, for 1, 5 and 20 globals and 0, 1
    and 3 helpers: the direct path (a dispatcher for the first pattern of argument kinds
    called twice: a float, a 10-element array, by position or by keyword) and the general path
    (the same call once another pattern has the dispatcher: the checked path)."""
    for what, x in (("a float", 0.5), ("10 elements", np.linspace(0.0, 1.0, 10))):
        rows = {}
        for count, helpers in ((1, 0), (5, 0), (20, 0), (5, 1), (5, 3)):
            f = with_globals(count, helpers)
            df, checked = grad(f), grad(f)
            df(x)
            generated = df.compiled_for(x).function
            other = np.ones(3) if type(x) is float else np.ones((2, 5))
            checked(x)  # (another pattern called twice first has the dispatcher: x's pattern
            checked(other)  # takes the checked path)
            checked(other)
            label = f"{count:2d} globals, {helpers} helpers"
            rows[f"{label}: generated"] = lambda x=x, fn=generated: fn(x)
            rows[f"{label}: grad(f)(x)"] = lambda x=x, df=df: df(x)
            rows[f"{label}: grad(f)(x=x)"] = lambda x=x, df=df: df(x=x)
            rows[f"{label}: general path"] = lambda x=x, df=checked: df(x)
        best = interleaved(rows, number, 3 * rounds)  # (differences of minimums: more rounds)
        print(f"\nthe call path, {what} (added to the generated function)")
        for name, t in best.items():
            label, kind = name.split(": ")
            added = "" if kind == "generated" else \
                f"  +{(t - best[label + ': generated']) * 1e6:7.3f} us"
            print(f"  {name:40s} {t * 1e6:8.3f} us{added}")


def straight_line(n: int, tag: str):
    """``f(x, p)``: ``n`` statements of elementwise NumPy, each reading the two before it."""
    ops = ("np.sin({a})", "np.exp(-{a} * {b})", "{a} * {b} + p[1]", "np.tanh({a}) * p[2]",
           "np.sqrt({a} * {b} + 1.0)")
    lines = ["def f(x, p):", "    a0 = x * p[0]"]
    for i in range(1, n):
        a, b = f"a{i - 1}", f"a{max(0, i - 2)}"
        lines.append(f"    a{i} = " + ops[i % len(ops)].format(a=a, b=b)
                     + (f" + 0.1 * {b}" if i % 3 == 0 else ""))
    lines.append(f"    return np.sum(a{n - 1})")
    return defined("\n".join(lines) + "\n", f"<bench straight line {n} {tag}>")


def compile_costs(rounds: int) -> None:
    """First-call compile time of straight-line functions of 50, 100 and 200 statements (the
    minimum over ``rounds`` fresh functions each, interleaved), and its growth."""
    x, p = np.linspace(0.1, 1.0, 5), np.array([0.5, 0.2, 0.3])
    best = {n: math.inf for n in (50, 100, 200)}
    for r in range(rounds):
        for n in best:
            df = grad(straight_line(n, f"{r}"))
            start = timeit.default_timer()
            df(x, p)
            best[n] = min(best[n], timeit.default_timer() - start)
    print("\nfirst-call compile of a straight-line function")
    for n, t in best.items():
        print(f"  {n:4d} statements {t * 1e3:10.1f} ms  {t / best[50]:5.2f}x the 50-statement one")


if __name__ == "__main__":
    main()
