"""Test helpers: build functions from source text (registered in linecache, as a notebook does)."""

from __future__ import annotations

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
    namespace = {"np": np, "math": math, **globals_}
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
