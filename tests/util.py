"""Test helpers: build functions from source text (registered in linecache, as a notebook does)."""

from __future__ import annotations

import cmath
import itertools
import linecache
import math
import textwrap

import numpy as np

_counter = itertools.count(1)


def make(source: str, name: str | None = None, **globals_):
    """Execute ``source`` (dedented) and return the function it defines (the last one, or ``name``).

    The source is registered in linecache so the compiler can read it back.
    """
    source = textwrap.dedent(source).strip("\n") + "\n"
    filename = f"<test source {next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "math": math, "cmath": cmath, **globals_}
    exec(compile(source, filename, "exec"), namespace)
    if name is None:
        name = [line.split()[1].split("(")[0] for line in source.splitlines()
                if line.startswith("def ")][-1]
    return namespace[name]


def rand(shape=(), low=-2.0, high=2.0, seed=0, dtype=float):
    """Uniform random float (shape ``()``) or array in ``[low, high)``."""
    rng = np.random.default_rng(seed)
    if shape == ():
        return float(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape).astype(dtype)


def central_differences(f, x, h=1e-6):
    """The gradient of scalar ``f`` at ``x`` (a float or an array) by central differences,
    entry by entry: a float for a float."""
    a = np.asarray(x, dtype=float)
    out = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i] = h
        up, down = (a + e, a - e) if a.ndim else (float(a + e), float(a - e))
        out[i] = (f(up) - f(down)) / (2 * h)
    return out if a.ndim else float(out)


def readme_block(start: str) -> str:
    """The README's Python block that starts with ``start`` (a comment line), registered in
    linecache so that the compiler can read the functions it defines."""
    import pathlib
    import re
    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S)
                 if b.startswith(start))
    filename = f"<README {start}>"
    linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)
    return block


def run_readme_block(start: str, capsys) -> None:
    """Run the README block starting with ``start`` and check that each ``print(...)  # shown``
    line prints what its comment shows."""
    block = readme_block(start)
    exec(compile(block, f"<README {start}>", "exec"), {})
    shown = [line.split("# ")[-1] for line in block.splitlines() if line.startswith("print(")]
    assert capsys.readouterr().out.split("\n")[:len(shown)] == shown
