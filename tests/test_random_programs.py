"""Random programs, differentiated in reverse and forward mode and checked against finite
differences and against each other.

A seeded generator (``random.Random(seed)``, so every failure is reproducible from its seed) writes
small functions of 1-3 arguments (Python floats, arrays of shape (3,) or (2, 3)) from the supported
language: arithmetic with broadcasting, smooth NumPy and ``math`` functions, reductions, indexing,
slices and element writes, tuples/lists/dicts, helper calls, comprehensions fed to ``sum``,
``if``/``elif``/``else``, conditional expressions, ``for``/``while`` loops with ``break``,
``continue``, ``else`` and early ``return``. Every program returns a scalar.

Reverse mode: each program is checked with ``check_grad`` (optimize=True and False) against
central finite differences, and its gradients are cross-checked: optimized vs unoptimized,
all-arguments vs one-argument ``wrt``, the scalar variant (all Python floats) vs the general one
(``np.float64`` arguments), and the arguments must come back unmodified.

Forward mode, on every program reverse mode got right: a random tangent ``v`` per argument (its
shape; a Python float for a float argument, drawn from the argument values so that shrinking
keeps it) and ``jvp(f, args, v)`` (optimize=True and False) must return f's value, a tangent
equal to the central finite difference of ``f`` along ``v`` and, to 1e-9 of the terms' size
(``DOT_RTOL``), to the sum over arguments of ``<grad_i, v_i>`` from the reverse gradient; the
optimized and unoptimized forward code must agree, and arguments and tangents come back
unmodified. Programs with several arguments are also run with one argument's tangent alone (the
others None, held fixed): all of them in a soak or a ``--seed`` check, ``ONE_TANGENT_SHARE`` of
them in the default run. Forward mode refusing (TranspileError) a program reverse mode accepted
is a disagreement; a refusal both modes share for the same ``wrt`` counts as a refusal.

Programs are skipped (not counted) when the primal raises, is not finite or is large, or when a
branch decision or a non-smooth kink (``np.maximum``, ``abs``, masks, ``np.where``) changes between
the sample point and the finite-difference points (each coordinate moved alone, and all moved
along the tangent): an instrumented copy of the program records every comparison result and
every kink side, and these traces must be identical at all points.

A mismatch with finite differences (a gradient entry, or the tangent) is confirmed with several
step sizes and a 5-point stencil before it counts as a disagreement; a program whose finite
differences cannot judge (estimates with different steps disagree, or a gradient entry or the
tangent above 1e6) is skipped as ill-conditioned. A program the compiler refuses in reverse mode
is not counted either: refusals are reported by message. Crashes (exceptions from the compiler or
the generated code) and wrong numbers count, in either mode. Reduced bugs the tester found live
in ``tests/test_random_regressions.py``.

``TRANSPILER_SOAK_BACKEND=numba`` (see ``BACKEND``; slow, for soaks: Numba compiles every
program) also runs every program the Python backend got right with ``backend="numba"``: the
gradient for all arguments and ``jvp`` along the forward check's tangent must equal the Python
backend's to 1e-12 relative, with the same types, shapes and dtypes. Numba refusing
(TranspileError) is counted and reported by message; a crash or a different number fails.

``TRANSPILER_SOAK_CHECKPOINT=1`` (see ``CHECKPOINT``) also marks, in every program the Python
backend got right, each outermost ``for`` loop of ``f`` and of its helpers
``checkpoint(ITER, snapshots=S)`` or ``checkpoint(ITER, every=K)`` (S, K in 1..3, drawn from the
arguments; ``snapshots=`` only over a ``range`` or the function's data; see ``mark_loops``):
``grad`` and ``value_and_grad`` of the marked variant must give the unmarked program's gradients
(the same types, shapes and dtypes, the numbers to 1e-10) and f's value, leaving the arguments
alone. The marked variant refused (TranspileError: a marked loop inside a marked loop, a
write the loop's state makes look shared, ...) is counted and reported by message; a crash or
a different number fails, and a failure prints the marked variant too.

``TRANSPILER_SOAK_BACKEND=auto`` does the same with ``backend="auto"``, which runs Numba's code
or, where Numba refuses, the Python code (its callees' Numba code included): the numbers must be
the Python backend's either way.

Programs also read module globals named like the names the compiler generates or binds (``rt``,
``bx``, ``_t1``, ``_tape``, ``add_grads``, ...; ``ODD_NAMES``), call builtins of their own
(``sum``, ``abs``, ``len``: ``SHADOWS``), and carry a state that starts as a constant and is not
read after a loop. On ``REBIND_SHARE`` of the programs checked (every one with
``TRANSPILER_SOAK_REBIND=1``) one change a user makes between calls is made (a helper's ``def``
run again, a helper's defaults changed, ``np.sin``, ``np.cos``, ``np.tanh``, ``np.exp`` or
``math.sin`` rebound to another function): the gradient and the forward-mode function compiled
before the change, called again, must give the changed program's finite differences.

``TRANSPILER_GEN_DISABLE=ifexp,return`` (see ``DISABLE``) switches generator constructs off, to
look past a known bug (``library`` keeps complex intermediates to arithmetic and functions of
complex numbers, no FFTs, convolutions or linear algebra: what Numba compiles), and
``TRANSPILER_GEN_COMPLEX=0.2`` sets the chance that an expression is computed through complex
values (most programs then are: the soak counts them), and ``TRANSPILER_SOAK_SECONDS=1200``
stops a soak after that long, with its summary; ``--shrink`` reduces a failing program by
deleting statements and simplifying expressions while it keeps failing the same way. A soak of
1000 programs or more (any soak with Numba or checkpointing) prints a progress line every 500
programs (100) and each failure as it is found.

    python -m pytest tests/test_random_programs.py                      # 200 programs
    TRANSPILER_SOAK=3000 python -m pytest tests/test_random_programs.py -k soak -s
    TRANSPILER_SOAK=3000 TRANSPILER_SOAK_SEED=50000 python tests/test_random_programs.py
    TRANSPILER_SOAK_BACKEND=numba TRANSPILER_SOAK=600 python -m pytest \
        tests/test_random_programs.py::test_soak -s          # and the same under Numba
    TRANSPILER_SOAK_CHECKPOINT=1 TRANSPILER_SOAK=300 python -m pytest \
        tests/test_random_programs.py::test_soak -s          # and with the loops checkpointed
    python tests/test_random_programs.py --seed 1234 [--shrink]   # one program and its verdict
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import math
import os
import importlib.metadata
import importlib.util
import inspect
import linecache
import random
import re
import signal
import sys
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.util import make  # noqa: E402
from transpiler import (  # noqa: E402
    TranspileError,
    check_grad,
    checkpoint,
    forward,
    grad,
    hvp,
    jvp,
    value_and_grad,
)

# --------------------------------------------------------------------------------------------
# Kinds of values the generator tracks: a Python float, a NumPy scalar, and arrays of shape
# (2,), (3,), (2, 3). ``SUB[t]`` are the kinds that broadcast into ``t`` (kind-preserving).
PF, NF, V2, V3, M23 = "pf", "nf", "v2", "v3", "m23"
ARRAYS = (V2, V3, M23)
SUB = {PF: (PF,), NF: (PF, NF), V2: (PF, NF, V2), V3: (PF, NF, V3), M23: (PF, NF, V3, M23)}
SHAPES = {V2: (2,), V3: (3,), M23: (2, 3)}


# complex matrices of the generated programs: eigenvalues kept apart (a spread diagonal), one
# Hermitian coupling with complex entries
_SPREAD = "np.array([0.0, 3.0, 6.0])"
_HERMITIAN = "np.array([[0.0, 0.4j, 0.0], [-0.4j, 0.0, 0.3], [0.0, 0.3, 0.0]])"


def _const(rng: random.Random) -> str:
    return rng.choice(["0.5", "1.5", "0.3", "2.0", "0.7", "1.2", "0.25", "0.9", "1.1", "3.0"])


MINIMIZE = '{"gtol": 1e-14, "ftol": 1e-16}'  # an optimizer's options tight enough for differences


@dataclass
class Scope:
    vars: dict = field(default_factory=dict)     # name -> kind
    ints: list = field(default_factory=list)     # loop counters usable as Python numbers
    owned: set = field(default_factory=set)      # arrays created fresh (safe element writes)
    globals: list = field(default_factory=list)  # module constants, read only (Python floats)

    def copy(self) -> Scope:
        return Scope(dict(self.vars), list(self.ints), set(self.owned), list(self.globals))


# Module globals spelled as the names the compiler generates or binds (the runtime, NumPy,
# gradients, temporaries, tapes, Numba's rewrites, the rule templates' placeholders): a program
# reading them must get the numbers the plain program gets. ``SHADOWS`` are module functions
# named like the builtins the compiler interprets, behaving as the builtins do.
SCIPY = importlib.util.find_spec("scipy") is not None  # (the sparse forms need it)
# scipy.integrate.simpson's rule (SciPy 1.11+: Cartwright's last interval)
CARTWRIGHT = SCIPY and tuple(int(p) for p in importlib.metadata.version("scipy").split(".")[:2]) \
    >= (1, 11)
ODD_NAMES = ("rt", "bx", "by", "b_t1", "_t1", "_t2", "np_1", "rt_1", "bp", "_tape", "_tape_k",
             "ans", "d", "len_1", "range_1", "add_grads", "builtin_sum", "_g", "_s1", "dx")
SHADOWS = {
    "sum": "def sum(xs, start=0.0):\n    total = start\n    for v in xs:\n"
           "        total = total + v\n    return total",
    "abs": "def abs(v):\n    return np.abs(v)",
    "len": "def len(xs):\n    return np.shape(xs)[0]",
}


class Gen:
    """Writes one random program (module source with helpers and ``def f``)."""

    def __init__(self, seed: int, disabled: frozenset = frozenset()):
        self.disabled = disabled  # construct names the generator must not use (see DISABLE)
        self.rng = random.Random(seed)
        self.counter = 0
        self.helpers: list = []  # (name, param kinds, has default, result kinds)
        self.features: set = set()
        self.helper_depth = 0
        self.no_comp = False  # a reduce or a solver in a 'while' condition is refused
        # odd names (module globals and builtins of the program's own) are drawn from a stream
        # of their own, so that the programs of earlier seeds stay what they were
        self.odd = random.Random(f"odd names {seed}")
        self.globals: list = []  # (name, value) of module constants named like generated names
        self.shadows: list = []  # builtins the program defines itself (SHADOWS)
        # library calls that take a function, np.r_/np.c_ (``higher``): drawn from a stream of
        # their own too; a reduce needs a place its value is always computed (not ``guarded``)
        self.hof = random.Random(f"higher order {seed}")
        self.guarded = 0
        self.cplx = random.Random(f"complex {seed}")  # complex intermediates: a stream too
        self.chg = random.Random(f"changing {seed}")  # a helper changing an array: one too
        self.obj = random.Random(f"objects {seed}")  # objects holding objects: one too

    # -- names -------------------------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # -- expressions -------------------------------------------------------------------------
    def leaf(self, kind: str, sc: Scope) -> str:
        r = self.rng
        names = [n for n, k in sc.vars.items() if k == kind]
        if kind == PF:
            opts = names + sc.ints
            if sc.globals and self.odd.random() < 0.3:
                return self.odd.choice(sc.globals)
            if opts and r.random() < 0.8:
                return r.choice(opts)
            arrays = [n for n, k in sc.vars.items() if k in (NF,) + ARRAYS]
            if arrays and r.random() < 0.6:
                a = r.choice(arrays)
                return f"float({a})" if sc.vars[a] == NF else f"float({a}.mean())"
            return _const(r)
        if names and r.random() < 0.85:
            return r.choice(names)
        if kind == NF:
            vectors = [n for n, k in sc.vars.items() if k == V3]
            if vectors and sc.ints and r.random() < 0.25:  # an element by the counter: x[i]
                self.features.add("element-read")
                a, i = r.choice(vectors), r.choice(sc.ints)
                return r.choice([f"{a}[{i} % 3]", f"{a}[({i} + 1) % 3]", f"{a}[2 - {i} % 3]"])
            arrays = [n for n, k in sc.vars.items() if k in ARRAYS]
            if arrays and r.random() < 0.7:
                a = r.choice(arrays)
                return r.choice([f"np.sum({a})", f"{a}.mean()", f"np.mean({a})"])
            return f"np.sin({self.leaf(PF, sc)})"
        if kind == V3:
            ms = [n for n, k in sc.vars.items() if k == M23]
            if ms and r.random() < 0.5:
                return r.choice([f"np.sum({r.choice(ms)}, axis=0)", f"{r.choice(ms)}[1]"])
            return f"({self.leaf(r.choice([PF, NF]), sc)} * np.array([0.5, -1.0, 2.0]))"
        if kind == V2:
            v3s = [n for n, k in sc.vars.items() if k == V3]
            ms = [n for n, k in sc.vars.items() if k == M23]
            if v3s and r.random() < 0.5:
                return f"{r.choice(v3s)}{r.choice(['[1:]', '[:2]', '[::2]', '[-2:]'])}"
            if ms and r.random() < 0.5:
                return f"{r.choice(ms)}[:, {r.choice(['0', '1', '-1'])}]"
            return f"({self.leaf(r.choice([PF, NF]), sc)} * np.array([1.5, -0.5]))"
        if kind == M23:
            return f"(np.array([[1.0], [-0.5]]) * {self.leaf(V3, sc)})"
        raise AssertionError(kind)

    def expr(self, kind: str, sc: Scope, depth: int) -> str:
        if depth <= 0 or self.chance(0.18):
            return self.leaf(kind, sc)
        r = self.rng
        d = depth - 1
        if kind in (NF, V3, M23) and "higher" not in self.disabled and self.hof.random() < 0.015:
            return self.higher(kind, sc, d)
        if kind in (NF, V3, M23) and "complex" not in self.disabled \
                and self.cplx.random() < COMPLEX_SHARE:
            return self.complex_value(kind, sc, d)
        choices = ["bin", "bin", "bin", "div", "neg", "unary", "unary", "ifexp"]
        if kind == PF:
            choices += ["math", "math", "float"]
        else:
            choices += ["np", "np", "np", "nonsmooth", "reduce", "reduce", "where"]
        if kind in (NF, V3, PF):  # (in a 'while' condition too: run at each test)
            choices += ["comp"]
        if any(h[3] == (kind,) for h in self.helpers) and self.helper_depth == 0:
            choices += ["call", "call"]
        c = r.choice([c for c in choices if c not in self.disabled] or ["bin"])
        if c == "bin":
            a = self.expr(kind, sc, d)
            b = self.expr(r.choice(SUB[kind]), sc, d)
            if self.chance(0.5):
                a, b = b, a
            return f"({a} {r.choice(['+', '-', '*', '*'])} {b})"
        if c == "div":
            a = self.expr(kind, sc, d)
            if self.chance(0.3):
                return f"({a} / {_const(r)})"
            b = self.expr(r.choice(SUB[kind]), sc, d - 1)
            if self.chance(0.3):  # the array on the right: broadcasting in the divisor
                b, a = self.expr(kind, sc, d - 1), self.expr(r.choice(SUB[kind]), sc, d)
            return f"({a} / (1.0 + {b} * {b}))"
        if c == "neg":
            return f"(-{self.expr(kind, sc, d)})"
        if c == "unary":
            a = self.expr(kind, sc, d)
            self.features.add("power")
            return r.choice([f"({a} ** 2)", f"({a} * {a})", f"((1.0 + {a} * {a}) ** 0.5)",
                             f"(+{a})", f"({a} ** 3)"])
        if c == "ifexp":
            self.features.add("ifexp")
            self.guarded += 1
            a, test, b = self.expr(kind, sc, d), self.cond(sc, d), self.expr(kind, sc, d)
            self.guarded -= 1
            return f"({a} if {test} else {b})"
        if c == "math":
            a = self.expr(PF, sc, d)
            self.features.add("math")
            return r.choice([f"math.sin({a})", f"math.cos({a})", f"math.exp(-{a} * {a})",
                             f"math.tanh({a})", f"math.log(1.0 + {a} * {a})",
                             f"math.sqrt(1.0 + {a} * {a})", f"math.atan({a})",
                             f"math.pow(1.0 + {a} * {a}, 1.5)", f"math.hypot({a}, 0.5)",
                             f"math.sinh({a} * 0.5)", f"math.erf({a})"])
        if c == "float":
            self.features.add("float()")
            return f"float({self.expr(NF, sc, d)})"
        if c == "np":
            a = self.expr(r.choice((PF, NF)) if kind == NF else kind, sc, d)
            self.features.add("np-unary")
            return r.choice([f"np.sin({a})", f"np.cos({a})", f"np.tanh({a})",
                             f"np.exp(-{a} * {a})", f"np.log(1.0 + {a} * {a})",
                             f"np.sqrt(1.0 + {a} * {a})", f"np.arctan({a})",
                             f"np.square({a})", f"np.hypot({a}, 0.5)",
                             f"np.log1p({a} * {a})", f"np.cosh({a} * 0.5)",
                             f"np.arctan2({a}, 1.5)", f"np.power({a}, 2)",
                             f"np.multiply({a}, 0.5)", f"np.reciprocal(1.0 + {a} * {a})"])
        if c == "nonsmooth":
            self.features.add("nonsmooth")
            a = self.expr(kind, sc, d)
            b = self.expr(r.choice(SUB[kind]), sc, d - 1)
            return r.choice([f"np.maximum({a}, {b})", f"np.minimum({a}, {_const(r)})",
                             f"np.abs({a})", f"np.maximum({_const(r)}, {a})"])
        if c == "where":
            self.features.add("np.where")
            t = self.expr(r.choice(SUB[kind]), sc, d - 1)
            a = self.expr(kind, sc, d)
            b = self.expr(r.choice(SUB[kind]), sc, d)
            if self.chance(0.5):
                a, b = b, a
            return f"np.where({t} > {r.choice(['0.0', '0.2', '-0.3'])}, {a}, {b})"
        if c == "reduce":
            return self.reduce(kind, sc, d)
        if c == "comp":
            return self.comprehension(kind, sc, d)
        if c == "call":
            return self.call(kind, sc, d)
        raise AssertionError(c)

    def sparse(self, sc: Scope, d: int, a: str, v: str) -> str:
        """A (3,) array through a scipy.sparse matrix made from the program's values: assembled
        from triplets (a duplicate summed), from diagonals (kept diagonally dominant), indexed,
        transposed, scaled and solved (directly, by its factors, iteratively)."""
        r = self.rng
        w = self.expr(V3, sc, d - 1)
        off = f"0.5 * np.tanh({self.expr(V2, sc, d - 1)})"
        tri = f"sp.diags([{off}, 3.0 + np.tanh({v}), {off}], [-1, 0, 1], format='csr')"
        forms = [f"({tri} @ {w})",
                 f"spla.spsolve({tri}, {w})",
                 f"spla.spsolve({self.paren(tri)}.T * 0.5 + {tri}, {w})",
                 f"(sp.csr_matrix(({self.paren(a)}.ravel(), ([0, 0, 1, 1, 2, 0], "
                 f"[0, 1, 1, 2, 2, 0])), shape=(3, 3)).T @ {w})",
                 f"(sp.coo_matrix(({v}, ([0, 1, 2], [2, 0, 2]))).tocsr()[[2, 0, 1]] @ {w})",
                 f"({w} @ sp.diags({v}, 0))",
                 f"{self.paren(tri)}[:, ::-1].toarray()[1]",
                 f"{self.paren(tri)}.diagonal() * {w}",
                 f"spla.splu({self.paren(tri)}.tocsc()).solve({w})",
                 f"spla.{r.choice(['gmres', 'bicgstab', 'lgmres', 'qmr'])}({tri}, {w}, "
                 "rtol=1e-12, atol=0.0)[0]"]
        return r.choice(forms)

    def reduce(self, kind: str, sc: Scope, d: int) -> str:
        """An expression of ``kind`` made from a larger (or differently shaped) array."""
        r = self.rng
        self.features.add(f"reduce-{kind}")
        if kind == NF:
            src = r.choice(ARRAYS)
            a = self.expr(src, sc, d)
            forms = [f"np.sum({a})", f"np.mean({a})", f"{self.paren(a)}.sum()",
                     f"np.sum({a} ** 2)"]
            if src == V3:
                v = self.leaf(V3, sc)
                forms += [f"np.sum(np.histogram(np.array([-1.0, 0.2, 0.4]), bins=[-2.0, 0.0, "
                          f"0.3, 2.0], weights={a})[0] ** 2)",
                          f"{v}[{r.choice(['0', '1', '-1', '2'])}]", f"np.sum({v}[1:])",
                          f"np.dot({a}, {self.expr(V3, sc, d - 1)})",
                          f"({a} @ {self.expr(V3, sc, d - 1)})",
                          f"np.sum({v}[{v} > 0.1])", f"np.sum({v}[[0, 2, 2]])",
                          f"np.sum(np.concatenate([{a}, {self.expr(V2, sc, d - 1)}]))"]
                if sc.ints:
                    forms += [f"{v}[{r.choice(sc.ints)} % 3]"]
            if src == M23:
                m = self.leaf(M23, sc)
                forms += [f"{m}[{r.choice(['0, 1', '1, 2', '-1, 0'])}]", f"{m}[1][2]",
                          f"np.sum({m}[:, 1:])", f"np.sum(({a}).T)", f"np.sum({m}[..., 1])",
                          f"np.sum({m}.ravel() * np.arange(6.0))",
                          f"np.sum(np.reshape({a}, (3, 2))[0])", f"np.sum({m}[None])"]
            if src == V2:
                v = self.leaf(V2, sc)
                forms += [f"{v}[{r.choice(['0', '1', '-1'])}]",
                          f"({a} @ {self.expr(V2, sc, d - 1)})"]
            return r.choice(forms)
        if kind == V3:
            m = self.leaf(M23, sc)
            a = self.expr(M23, sc, d)
            v = self.leaf(V3, sc)
            forms = [f"np.sum({a}, axis=0)", f"np.mean({a}, axis=0)", f"{m}[{r.choice('01')}]",
                     f"{self.paren(a)}.sum(axis=0)", f"({self.expr(V2, sc, d - 1)} @ {a})",
                     f"np.dot({self.expr(V2, sc, d - 1)}, {m})", f"{v}[[2, 0, 1]]",
                     f"{v}[[0, 0, 1]]", f"{v}[::-1]", f"{m}[-1, :]", f"({m}.T @ np.ones(2))",
                     f"np.concatenate([{self.expr(V2, sc, d - 1)}, {v}[:1]])",
                     f"np.reshape({m}, (6,))[1:4]", f"{m}[:, [0, 2]].ravel()[:3]",
                     # grouped sums: assembly by bins and segments, running sums, outer forms
                     f"np.bincount([0, 2, 2, 1], weights=np.r_[{v}, {self.leaf(NF, sc)}], "
                     "minlength=3)",
                     f"np.add.reduceat({self.paren(a)}.ravel(), [0, 2, 5])",
                     f"np.add.accumulate({v})",
                     f"np.{r.choice(['add', 'multiply', 'subtract'])}.outer("
                     f"{self.expr(V2, sc, d - 1)}, {v})[{r.choice('01')}]"]
            if sc.ints:
                forms += [f"{m}[{r.choice(sc.ints)} % 2]"]
            if "sparse" not in self.disabled and SCIPY and self.chance(0.15):
                form = self.sparse(sc, d, a, v)
                self.features.add("sparse")
                return form
            return r.choice(forms)
        if kind == V2:
            m = self.leaf(M23, sc)
            a = self.expr(M23, sc, d)
            v = self.leaf(V3, sc)
            forms = [f"np.sum({a}, axis=1)", f"np.mean({a}, axis=-1)", f"{m}[:, {r.choice('012')}]",
                     f"({a} @ {self.expr(V3, sc, d - 1)})", f"np.dot({m}, {v})",
                     f"{v}[1:]", f"{self.paren(self.expr(V3, sc, d))}[:2]", f"{v}[::2]",
                     f"{v}[[0, 2]]", f"{m}[0, 1:]", f"np.sum({m}[:, 1:], axis=1)"]
            return r.choice(forms)
        if kind == M23:
            v = self.expr(V3, sc, d)
            w = self.expr(V3, sc, d - 1)
            m = self.leaf(M23, sc)
            forms = [f"np.stack([{v}, {w}])", f"np.reshape({self.paren(m)}.T, (2, 3))",
                     f"np.concatenate([{self.paren(v)}[None], {self.paren(w)}[None]])",
                     f"({self.expr(V2, sc, d - 1)}[:, None] * {v})",
                     f"np.transpose(np.reshape({m}, (3, 2)))", f"{m}[::-1]",
                     f"{m}[:, [2, 0, 1]]", f"np.reshape(np.ravel({m}), (2, 3))",
                     f"(np.stack([{v}, {w}], axis=0) * {m})"]
            return r.choice(forms)
        return self.leaf(kind, sc)

    def higher(self, kind: str, sc: Scope, d: int) -> str:
        """``map``, ``functools.reduce``, ``np.vectorize``, ``np.r_`` and ``np.c_``, and
        scipy.optimize's roots of residuals and minima, scipy.integrate's integrals, as users
        write them, giving a value of ``kind``."""
        r = self.rng
        self.features.add(f"higher-{kind}")
        v, w = self.expr(V3, sc, d), self.leaf(V3, sc)
        if kind == NF:
            forms = [f"sum(map(np.sin, {v}))", f"sum(map(math.tanh, {v}))",
                     f"sum(map(lambda t: t * t + 0.5, {v}))",
                     f"np.sum(np.vectorize(math.atan)({v}))",
                     f"np.sum(np.r_[{v}, {self.expr(V2, sc, d - 1)}] * np.arange(1.0, 6.0))",
                     f"np.sum(np.r_[{self.leaf(NF, sc)}, 1:3, {v}] ** 2)",
                     f"np.sum(np.c_[{v}, {w}] * np.array([1.0, -0.5]))"]
            if not self.guarded and not self.no_comp:
                forms += [f"functools.reduce(operator.add, map(np.cos, {v}))",
                          f"functools.reduce(lambda a, b: a * 0.5 + b, {v}, {self.leaf(PF, sc)})"]
                if SCIPY:  # roots of monotone residuals: the implicit function theorem
                    q = self.expr(NF, sc, d - 1)
                    forms += [f"so.brentq(lambda t: t + 0.5 * np.tanh(t) - 3.0 * np.tanh({q}), "
                              "-10.0, 10.0, xtol=1e-14)",
                              f"so.newton(lambda t: t ** 3 + 2.0 * t - {self.paren(q)}, 0.0, "
                              "tol=1e-14)",
                              "so.brentq(lambda t, c: np.sinh(t) - c, -10.0, 10.0, "
                              f"args=(3.0 * np.tanh({q}),), xtol=1e-14)",
                              # a minimum (strictly convex; L-BFGS-B converges to 1e-14)
                              f"so.minimize(lambda t: np.cosh(t[0] - np.tanh({q})) + 0.5 * "
                              f"t[0] ** 2, np.zeros(1), jac=lambda t: np.sinh(t - np.tanh({q}))"
                              " + t, method='L-BFGS-B', options=" + MINIMIZE + ").x[0]",
                              # least squares: the minimum of half the sum of squares
                              "so.least_squares(lambda w: np.array([w[0] - np.tanh("
                              f"{q}), 0.5 * w[0] ** 3 + w[0]]), [0.0], xtol=1e-15, ftol=1e-15, "
                              "gtol=1e-15).x[0]"]
                    # integrals: differentiated under the integral sign, Leibniz's rule
                    forms += [f"si.quad(lambda t: np.exp(-t * t) * np.tanh({q} * t + 0.3), "
                              "0.0, 1.5, epsabs=1e-13, epsrel=1e-13)[0]",
                              "si.quad(lambda t, c: np.cos(c * t), -0.5, 1.0 + 0.5 * np.tanh("
                              f"{q}), args=({self.leaf(NF, sc)},), epsabs=1e-13, "
                              "epsrel=1e-13)[0]",
                              f"si.fixed_quad(lambda t: np.sin({self.paren(q)} * t), 0.0, 1.0, "
                              "n=6)[0]",
                              # a jump at a fixed point (one that moved would be refused)
                              f"si.quad(lambda t: np.where(t > 0.5, np.tanh({q}) * t, t * t), "
                              "0.0, 1.0, points=[0.5], epsabs=1e-13, epsrel=1e-13)[0]",
                              # ODEs: by the adjoint (reverse) and variational equation (forward)
                              "si.solve_ivp(lambda t, y, c: -c * y + np.sin(t), (0.0, 1.0), "
                              f"[1.0], args=(np.tanh({q}),), method='DOP853', rtol=1e-11, "
                              "atol=1e-12).y[0, -1]",
                              f"si.odeint(lambda y, t: -np.tanh({q}) * y + t, 1.0, np.array("
                              "[0.0, 0.5, 1.0]), rtol=1e-11, atol=1e-12)[-1, 0]",
                              # RK45 (the default): the adjoint of its steps, outputs between
                              f"si.solve_ivp(lambda t, y: -np.tanh({q}) * y + np.cos(t), (0.0, "
                              "1.0), [1.0, 0.5], t_eval=[0.3, 1.0], rtol=1e-11, "
                              "atol=1e-12).y[1, 0]",
                              # dense output: the interpolant, read inside the span
                              f"si.solve_ivp(lambda t, y: -np.tanh({q}) * y + 0.5, (0.0, 1.0), "
                              "[1.0], dense_output=True, method='DOP853', rtol=1e-11, "
                              "atol=1e-12).sol(0.6)[0]"]
                if CARTWRIGHT:  # integrals of samples: in the samples and moving sample points
                    forms += [f"si.simpson({v}, x=np.cumsum(np.exp(0.3 * np.tanh({w}))))",
                              f"si.simpson(np.r_[{v}, {w}[:1]], dx=np.exp(0.2 * {w}[0]))",
                              f"si.trapezoid({v}, np.cumsum(1.5 + np.tanh({w})))",
                              f"si.romb(np.r_[{v}, {w}[:2]], dx=0.5)",
                              f"np.sum(si.cumulative_trapezoid({v}, dx=0.3, initial=0) * {w})"]
        elif kind == V3:
            forms = [f"np.array(list(map(np.tanh, {v})))", f"np.vectorize(math.sin)({v})",
                     f"np.r_[{self.leaf(NF, sc)}, {self.expr(V2, sc, d - 1)}]",
                     f"np.r_[{self.expr(V2, sc, d - 1)}, {self.leaf(PF, sc)}]",
                     f"np.r_[{self.paren(w)}[:1], {self.paren(v)}[1:]]",
                     f"np.c_[{v}, {w}][:, 1]"]
            if SCIPY and not self.guarded and not self.no_comp:  # a system's root: fsolve
                forms += [f"so.fsolve(lambda t: t + 0.3 * np.tanh(t[::-1]) - np.tanh({v}), "
                          "np.zeros(3), xtol=1e-13)",
                          f"so.fixed_point(lambda t: 0.5 * np.tanh(t[::-1]) + np.tanh({v}), "
                          "np.zeros(3), xtol=1e-14)",
                          f"so.minimize(lambda t, c: np.sum(np.cosh(t - c)) + 0.5 * np.sum("
                          f"t ** 2), np.zeros(3), args=(np.tanh({v}),), jac=lambda t, c: "
                          "np.sinh(t - c) + t, method='L-BFGS-B', options=" + MINIMIZE + ").x"]
                forms += [f"si.quad_vec(lambda t: np.cos(t * np.tanh({v})), 0.0, 1.0, "
                          "epsabs=1e-13, epsrel=1e-12)[0]",
                          f"si.solve_ivp(lambda t, y: -np.tanh({v}) * y + 0.5, (0.0, 1.0), "
                          "np.ones(3), method='DOP853', rtol=1e-11, atol=1e-12).y[:, -1]",
                          f"si.solve_ivp(lambda t, y: -np.tanh({v}) * y[::-1] + 0.5, (0.0, "
                          "1.0), np.ones(3), t_eval=[0.4, 1.0], rtol=1e-11, "
                          "atol=1e-12).y[:, 0]"]
        else:
            forms = [f"np.r_['0,2', {v}, {w}]", f"np.c_[{v}, {w}].T",
                     f"np.vectorize(math.cos)({self.expr(M23, sc, d)})"]
        form = r.choice(forms)
        if "functools." in form:
            self.features.add("reduce")
        if "so." in form:
            self.features.add("minimum" if "minimize" in form else "root")
        if "si." in form:
            self.features.add("integral")
        return form

    def complex_value(self, kind: str, sc: Scope, d: int) -> str:
        """A real value of ``kind`` computed through complex ones, as spectral and
        frequency-domain code does: complex arithmetic, np.exp of an imaginary argument,
        moduli, real and imaginary parts, angles away from the branch cut, FFTs, cmath,
        convolutions and padding, eigenvalues of Hermitian and of non-symmetric matrices."""
        r = self.cplx
        self.features.add(f"complex-{kind}")
        p, q = self.leaf(PF, sc), self.expr(NF, sc, d - 1)
        v, w = self.expr(V3, sc, d), self.leaf(V3, sc)
        if kind == NF:
            forms = [f"np.abs({p} + 1j * {self.paren(q)} + 0.5)",
                     f"np.angle(1.5 + 1j * np.tanh({q}))",
                     f"np.real(np.exp(1j * {self.paren(q)}) * (0.5 - 2.0j))",
                     f"np.sum(np.abs(np.fft.fft({v})) ** 2)",
                     f"np.imag(np.fft.ifft({v} * (1.0 + 0.5j))[1])",
                     f"float(np.real(complex({p}, {self.paren(q)}) ** 2))",
                     f"np.sum(np.real(np.fft.rfft({v}, norm='ortho')) * np.array([1.0, -0.5]))",
                     f"abs(1.0 / (1.0 + 1j * {self.paren(q)} * 0.5)) ** 2",
                     f"(cmath.exp(1j * {self.paren(q)}) * cmath.sqrt({p} * {p} + 1.0 + 1j)).real",
                     f"cmath.phase(cmath.rect(1.0 + {p} * {p}, 0.3 * np.tanh({q})))",
                     f"np.sum(np.abs(np.convolve({self.paren(v)} * 1j + 0.5, "
                     "np.array([1.0, 0.5j]))) ** 2)",
                     f"np.linalg.eigvalsh(np.diag({self.paren(v)} + {_SPREAD}) + {_HERMITIAN})[0]",
                     f"np.sum(np.real(np.linalg.eigvals(np.diag({self.paren(v)} + {_SPREAD}) "
                     "+ np.array([[0.0, 0.5, 0.0], [-0.5, 0.0, 0.3], [0.2, 0.0, 0.0]]))) ** 2)"]
        elif kind == V3:
            forms = [f"np.fft.irfft(np.fft.rfft({v}) * np.array([1.0, 0.5 - 0.5j]), 3)",
                     f"np.real(np.fft.ifft(np.fft.fft({v}) * np.array([1.0, 1j, -1j])))",
                     f"np.abs({self.paren(v)} + 1j * {self.paren(w)} + 2.0)",
                     f"np.real(np.exp(1j * {self.paren(v)}) * (0.5 - 1j))",
                     f"np.imag({self.paren(v)} * np.exp(0.3j * {self.paren(w)}))",
                     f"np.fft.fftshift({self.paren(v)} * {p}).real",
                     f"np.real(np.pad({self.paren(v)} * (1.0 + 1j), 1)[1:4] "
                     "* np.array([1.0, 1j, -1.0]))",
                     f"np.abs(np.linalg.eigh(np.diag({self.paren(v)} + {_SPREAD}) "
                     f"+ {_HERMITIAN})[1][0]) ** 2"]
        else:
            m = self.expr(M23, sc, d)
            forms = [f"np.real(np.fft.ifft2(np.fft.fft2({m}) * (0.5 + 0.5j)))",
                     f"np.fft.irfft2(np.fft.rfft2({m}), (2, 3))",
                     f"np.abs(np.fft.fft({m}, axis=0)) ** 2"]
            if "library" in self.disabled:
                forms = [f"np.real(np.exp(1j * {self.paren(m)}) * (0.5 - 1j))",
                         f"np.abs({self.paren(m)} * (1.0 + 0.5j) + 0.3j) ** 2"]
        if "library" in self.disabled:  # (complex arithmetic alone: what Numba compiles)
            forms = [f for f in forms if not re.search(r"np\.(fft|convolve|pad|linalg)", f)]
        return r.choice(forms)

    @staticmethod
    def paren(a: str) -> str:
        return a if a.startswith("(") or a.isidentifier() else f"({a})"

    def comprehension(self, kind: str, sc: Scope, d: int) -> str:
        r = self.rng
        inner = sc.copy()
        t = self.fresh("t")
        form = r.choice(["range", "range", "elements", "rows"])
        self.features.add(f"comprehension-{form}")
        if form == "range" or kind == PF:
            k = r.randint(1, 4)
            inner.ints.append(t)
            it = f"range({k})"
            cond = f" if {t} != 1" if k >= 3 and self.chance(0.3) else ""
        elif form == "elements":
            inner.vars[t] = NF
            it = self.leaf(V3, sc)
            cond = ""
        else:
            inner.vars[t] = V3
            it = self.leaf(M23, sc)
            cond = ""
        self.guarded += 1
        body = self.expr(kind, inner, d)
        self.guarded -= 1
        if self.chance(0.5):
            return f"sum([{body} for {t} in {it}{cond}])"
        return f"sum({body} for {t} in {it}{cond})"

    def call(self, kind: str, sc: Scope, d: int) -> str:
        r = self.rng
        name, params, has_default, _ = r.choice([h for h in self.helpers if h[3] == (kind,)])
        self.features.add("helper-call")
        args = [self.expr(p, sc, d - 1) for p in params]
        if has_default and self.chance(0.5):
            if self.chance(0.5):
                args.append(f"c={self.expr(PF, sc, 0)}")
            else:
                args.append(self.expr(PF, sc, 0))
        return f"{name}({', '.join(args)})"

    def rhs(self, kind: str, sc: Scope, depth: int) -> str:
        """An expression for the right of an assignment: never a bare name (an alias makes
        later in-place updates refused) nor a conditional expression at the top."""
        e = self.expr(kind, sc, depth)
        if e.isidentifier() or isinstance(ast.parse(e, mode="eval").body, ast.IfExp):
            e = f"{e} * 1.0"
        return e

    def iterable(self, kind: str, sc: Scope, lines: list) -> str:
        """A name to loop over (a loop over a call's result is refused)."""
        e = self.leaf(kind, sc)
        if not e.isidentifier():
            t = self.fresh("q")
            lines.append(f"{t} = {e}")
            e = t
        return e

    def scalar(self, sc: Scope, d: int) -> str:
        return self.expr(self.rng.choice([PF, NF, NF]), sc, d)

    def cond(self, sc: Scope, d: int) -> str:
        r = self.rng
        c = r.random()
        s = self.scalar(sc, d)
        thr = r.choice(["0.0", "0.5", "-0.5", "1.0", "0.2", "-1.0", "2.0"])
        if c < 0.5:
            out = f"{s} {r.choice(['>', '<', '>=', '<='])} {thr}"
        elif c < 0.6:
            out = f"-1.0 < {s} < 1.0"
        elif c < 0.75:
            out = f"({s} > {thr} and {self.scalar(sc, d - 1)} < {thr})"
        elif c < 0.85:
            out = f"({s} > {thr} or {self.scalar(sc, d - 1)} > {thr})"
        else:
            out = f"not {s} > {thr}"
        self.features.add("condition")
        return out

    # -- statements --------------------------------------------------------------------------
    def block(self, sc: Scope, n: int, loop_depth: int, in_loop: bool, can_return: bool,
              nest: int) -> list[str]:
        lines: list[str] = []
        for _ in range(n):
            lines += self.statement(sc, loop_depth, in_loop, can_return, nest)
        return lines or ["pass"]

    def target_kind(self) -> str:
        return self.rng.choice([PF, NF, V3, V3, M23, M23, V2])

    def statement(self, sc: Scope, loop_depth: int, in_loop: bool, can_return: bool,
                  nest: int) -> list[str]:
        r = self.rng
        kinds = ["assign_new", "assign_new", "update", "update", "update", "aug", "write",
                 "write", "tuple", "container"]
        if nest < 2:
            kinds += ["if", "if", "for", "for", "while", "converged", "try"]
        if in_loop:
            kinds += ["break", "continue"]
        if can_return:
            kinds += ["return"]
        if SCIPY and "sparse" not in self.disabled and self.chance(0.3):
            kinds += ["sparse_write"]
        k = r.choice([k for k in kinds if k not in self.disabled] or ["assign_new"])
        existing = list(sc.vars)
        if k == "update" and not existing:
            k = "assign_new"
        if k == "assign_new":
            kind = self.target_kind()
            name = self.fresh(r.choice("abcs"))
            e = self.rhs(kind, sc, r.randint(1, 3))
            sc.vars[name] = kind
            sc.owned.discard(name)
            return [f"{name} = {e}"]
        if k == "update":
            name = r.choice(existing)
            kind = sc.vars[name]
            if in_loop and self.chance(0.6):  # a loop-carried update
                self.features.add("loop-carried")
                e = (f"{name} * {r.choice(['0.9', '0.5', '0.8'])} + "
                     f"{self.expr(kind if self.chance(0.5) else r.choice(SUB[kind]), sc, 2)}")
                if sc.ints and self.chance(0.5):
                    e += f" * {r.choice(sc.ints)}"
                return [f"{name} = {e}"]
            sc.owned.discard(name)
            e = self.rhs(kind, sc, r.randint(1, 3))
            if e.isidentifier() and kind in ARRAYS:
                e = f"{e} * 1.0"
            return [f"{name} = {e}"]
        if k == "aug":
            # in-place on an array that other names may share is refused: mostly owned arrays
            names = [n for n in existing if sc.vars[n] not in ARRAYS or n in sc.owned
                     or (self.chance(0.1) and not self.helper_depth)]
            if self.helper_depth:  # a helper may not write into its arguments
                names = [n for n in names if n not in ("p", "q")]
            if not names:
                return []
            name = r.choice(names)
            kind = sc.vars[name]
            self.features.add("augassign")
            op = r.choice(["+=", "-=", "*="])
            return [f"{name} {op} {self.expr(r.choice(SUB[kind]), sc, 2)}"]
        if k == "write":
            return self.write(sc)
        if k == "sparse_write":
            return self.sparse_write(sc)
        if k == "tuple":
            return self.tuple_stmt(sc)
        if k == "container":
            return self.container_stmt(sc)
        if k == "if":
            return self.if_stmt(sc, loop_depth, in_loop, can_return, nest)
        if k == "for":
            return self.for_stmt(sc, loop_depth, can_return, nest)
        if k == "while":
            return self.while_stmt(sc, loop_depth, can_return, nest)
        if k == "converged":
            return self.converged_stmt(sc)
        if k == "try":
            return self.try_stmt(sc, loop_depth, nest)
        if k in ("break", "continue"):
            self.features.add(k)
            return [f"if {self.cond(sc, 1)}:", f"    {k}"]
        if k == "return":
            self.features.add("early-return")
            return [f"if {self.cond(sc, 1)}:", f"    return {self.result(sc)}"]
        raise AssertionError(k)

    def sparse_write(self, sc: Scope) -> list[str]:
        """An assembly: a lil or dok matrix written entry by entry (added to, overwritten, in a
        loop, a row), made diagonally dominant and solved for a (3,) array."""
        r = self.rng
        self.features.add("sparse-write")
        m, out, i = self.fresh("L"), self.fresh("a"), self.fresh("i")
        small = lambda: f"0.5 * np.tanh({self.expr(NF, sc, 2)})"  # noqa: E731
        lines = [f"{m} = sp.{r.choice(['lil_matrix', 'dok_matrix', 'lil_array'])}((3, 3))"]
        for _ in range(r.randint(1, 3)):
            form = r.choice(["add", "set", "loop", "row"])
            row, col = r.randrange(3), r.randrange(3)
            if form == "add":
                lines.append(f"{m}[{row}, {col}] += {small()}")
            elif form == "set":
                lines.append(f"{m}[{row}, {col}] = {small()}")
            elif form == "loop":
                inner = sc.copy()
                inner.ints.append(i)
                lines += [f"for {i} in range(3):",
                          f"    {m}[{i}, ({i} + {col}) % 3] += {small()} * {self.leaf(NF, inner)}"]
            else:
                lines.append(f"{m}[{row}, :] = 0.2 * np.tanh({self.expr(V3, sc, 2)})")
        lines.append(f"{out} = spla.spsolve({m}.tocsr() + 4.0 * sp.identity(3, format='csr'), "
                     f"{self.expr(V3, sc, 2)})")
        sc.vars[out] = V3
        sc.owned.discard(out)
        return lines

    def write(self, sc: Scope) -> list[str]:
        r = self.rng
        self.features.add("element-write")
        arrays = [n for n in sc.vars if sc.vars[n] in (V3, M23)]
        owned = [n for n in arrays if n in sc.owned]
        lines = []
        if owned and not self.helper_depth and self.chg.random() < 0.3:
            # a helper changing the array it is given (or a view of it), returning nothing
            self.features.add("array-inout")
            base = self.chg.choice(owned)
            value = self.expr(NF, sc, 1)
            if self.chg.random() < 0.4:
                view = self.fresh("vw")
                sc.vars[view] = V2 if sc.vars[base] == V3 else V3
                return [f"{view} = {base}[{'1:' if sc.vars[base] == V3 else '-1'}]",
                        f"_nudge({view}, {value})"]
            return [f"_nudge({base}, {value})"]
        if owned and not self.helper_depth and self.chance(0.25):  # through a view of it
            self.features.add("view-write")
            base = r.choice(owned)
            idx, kind = r.choice([("1:", V2), (":2", V2)] if sc.vars[base] == V3
                                 else [("0", V3), ("-1", V3), (":, 1", V2)])
            view = self.fresh("vw")
            widx, rhs = r.choice([("0", NF), ("-1", NF), (":", kind)])
            value = self.expr(rhs, sc, r.randint(1, 2))
            sc.vars[view] = kind
            return [f"{view} = {base}[{idx}]",
                    f"{view}[{widx}] {r.choice(['=', '+=', '*='])} {value}"]
        if owned and self.chance(0.7):
            name = r.choice(owned)
        elif arrays and self.chance(0.15) and not self.helper_depth:  # an argument or any array
            name = r.choice(arrays)
        else:
            name = self.fresh("w")
            kind = r.choice([V3, V3, M23])
            src = [n for n in sc.vars if sc.vars[n] == kind]
            shape = "3" if kind == V3 else "(2, 3)"
            if src and self.chance(0.6):
                init = r.choice([f"{r.choice(src)} * 1.0", f"np.copy({r.choice(src)})",
                                 f"{r.choice(src)}.copy()"])
            else:
                init = r.choice([f"np.zeros({shape})", f"np.ones({shape})"])
            vectors = [n for n in sc.vars if sc.vars[n] == V3]
            if vectors and self.chg.random() < 0.2:  # a join or np.where (its rank is known)
                self.features.add("joined-array")
                a, b = self.chg.choice(vectors), self.chg.choice(vectors)
                init = self.chg.choice([
                    f"np.concatenate([{a}[:1], {b}[1:] * 1.0])", f"np.hstack([{a}[:2], {b}[2:]])",
                    f"np.where({a} > 0.2, {b}, 0.5 * {a})"] if kind == V3 else [
                    f"np.stack([{a}, {b} * 1.0])", f"np.vstack([{a} * 1.0, {b}])",
                    f"np.concatenate([{a}[None], {b}[None]], axis=0)"])
            lines.append(f"{name} = {init}")
            sc.vars[name] = kind
            sc.owned.add(name)
        kind = sc.vars[name]
        op = "+=" if self.chance(0.25) else "="
        if kind == V3:
            idx, rhs = r.choice([("0", NF), ("-1", PF), ("1", NF), ("1:", V2), ("::2", V2),
                                 (":2", NF), (":", V3), ("[0, 2]", V2)])
            if sc.ints and self.chance(0.3):
                idx, rhs = f"{r.choice(sc.ints)} % 3", NF
        else:
            idx, rhs = r.choice([("0", V3), ("1, 2", NF), (":, 0", V2), ("0, 1:", V2),
                                 ("-1", NF), ("1", V3), (":, 1:", NF)])
            if sc.ints and self.chance(0.3):
                idx, rhs = f"{r.choice(sc.ints)} % 2", V3
        if self.chance(0.08):
            self.features.add("mask-write")
            lines.append(f"{name}[{name} > 0.5] = {self.expr(PF, sc, 1)}")
        elif self.chance(0.1):  # a scatter-add (assembly): an index repeated adds each time
            self.features.add("scatter-add")
            at = r.choice(["np.add.at", "np.subtract.at", "np.multiply.at", "np.put",
                           "np.put_along_axis"])
            idx = "[0, 2, 2]" if kind == V3 else "(np.array([0, 1, 1]), np.array([2, 0, 2]))"
            value = self.expr(r.choice([V3, NF]), sc, 2)
            if at == "np.multiply.at":  # (factors near 1: repeated products stay tame)
                value = f"np.cos({value})"
            if at == "np.put":
                idx = r.choice(["[0, -1, 2, 0]", "[4, 1]"])  # (4 wraps round)
                mode = ", mode='wrap'" if idx == "[4, 1]" or self.chance(0.3) else ""
                lines.append(f"np.put({name}, {idx}, {value}{mode})")
            elif at == "np.put_along_axis":
                along = ("np.array([2, 0, 2])" if kind == V3
                         else "np.array([[2, 0], [1, 1]])")
                lines.append(f"np.put_along_axis({name}, {along}, {value}, "
                             f"{'0' if kind == V3 else 'axis=1'})")
            else:
                lines.append(f"{at}({name}, {idx}, {value})")
        else:
            lines.append(f"{name}[{idx}] {op} {self.expr(rhs, sc, r.randint(1, 2))}")
        return lines

    def tuple_stmt(self, sc: Scope) -> list[str]:
        r = self.rng
        self.features.add("tuple")
        names = list(sc.vars)
        same = [(a, b) for a in names for b in names if a < b and sc.vars[a] == sc.vars[b]]
        if same and self.chance(0.3):  # a swap keeps kinds (loops re-run their body)
            a, b = r.choice(same)
            sc.owned.discard(a), sc.owned.discard(b)
            return [f"{a}, {b} = {b}, {a}"]
        ka, kb = self.target_kind(), self.target_kind()
        ea, eb = self.rhs(ka, sc, 2), self.rhs(kb, sc, 2)
        a, b = self.fresh("u"), self.fresh("u")
        if self.chance(0.5):
            p = self.fresh("p")
            lines = [f"{p} = ({ea}, {eb})", f"{a}, {b} = {p}"]
        else:
            lines = [f"{a}, {b} = {ea}, {eb}"]
        sc.vars[a], sc.vars[b] = ka, kb
        sc.owned.discard(a), sc.owned.discard(b)
        return lines

    def container_stmt(self, sc: Scope) -> list[str]:
        r = self.rng
        kind = self.target_kind()
        out = self.fresh("k")
        c = self.fresh("xs")
        es = [self.rhs(kind, sc, 2) for _ in range(r.randint(1, 3))]
        form = r.choice(["list", "dict", "append", "index", "dictcomp", "pop", "inout"]
                        + (["sorted"] if kind in (PF, NF) else []))
        self.features.add(f"container-{form}")
        if form == "list":
            lines = [f"{c} = [{', '.join(es)}]", f"{out} = sum({c})"]
        elif form == "inout":  # a helper updating the dict and list it is given, in place
            lines = [f'{c} = {{"s": {es[0]}}}', f"{c}_h = []"]
            for e in es[1:] or es:
                lines.append(f"_update({c}, {c}_h, {e})")
            lines.append(f'{out} = {c}["s"] + sum({c}_h)')
        elif form == "dictcomp":  # a dict comprehension, keys from enumerate
            lines = [f"{c} = {{i: e * 1.0 for i, e in enumerate([{', '.join(es)}])}}",
                     f"{out} = {c}[0] * 0.5 + {c}[{len(es) - 1}]"]
        elif form == "pop":  # v = xs.pop(0), a bare xs.pop()
            t = self.fresh("k")
            lines = [f"{c} = [{', '.join(es)}, {es[0]} * 0.5]", f"{t} = {c}.pop(0)",
                     f"{c}.pop()", f"{out} = {t} + sum({c}) * 0.5"]
        elif form == "sorted":  # scalars sorted, with a key and reversed
            lines = [f"{c} = sorted([{', '.join(es)}], key=abs)",
                     f"{out} = {c}[0] - 0.5 * sorted({c}, reverse=True)[-1]"]
        elif form == "dict":
            items = ", ".join(f'"k{i}": {e}' for i, e in enumerate(es))
            lines = [f"{c} = {{{items}}}", f'{out} = {c}["k0"] * 0.5 + {c}["k{len(es) - 1}"]']
        elif form == "append":
            lines = [f"{c} = [{es[0]}]"]
            for e in es[1:]:
                lines.append(f"{c}.append({e})")
            lines.append(f"{out} = {c}[-1] + sum({c})")
        else:
            lines = [f"{c} = ({', '.join(es)},)", f"{out} = {c}[0] * {c}[-1]"]
        sc.vars[out] = kind
        return lines

    def if_stmt(self, sc, loop_depth, in_loop, can_return, nest) -> list[str]:
        r = self.rng
        self.features.add("if")
        scopes, lines = [], []
        n_branches = r.choice([1, 2, 2, 3])
        returned_branch = (r.randrange(n_branches) if can_return and self.chance(0.3)
                           and "return" not in self.disabled else -1)
        for i in range(n_branches):
            head = "if" if i == 0 else ("else" if i == n_branches - 1 else "elif")
            inner = sc.copy()
            body = self.block(inner, r.randint(1, 2), loop_depth, in_loop, can_return, nest + 1)
            if i == returned_branch:
                body.append(f"return {self.result(inner)}")
                self.features.add("early-return")
            else:
                scopes.append(inner)
            lines.append(f"{head} {self.cond(sc, 2)}:" if head != "else" else "else:")
            lines += ["    " + ln for ln in body]
        if n_branches == 1:
            scopes.append(sc.copy())  # the path that takes no branch
        self.join(sc, scopes)
        return lines

    def try_stmt(self, sc: Scope, loop_depth: int, nest: int) -> list[str]:
        """What always runs, under a ``finally`` (a cleanup that may compute too) or a handler
        that re-raises; nothing leaves it early."""
        r = self.rng
        body = self.block(sc, r.randint(1, 2), loop_depth, False, False, nest + 1)
        lines = ["try:"] + ["    " + ln for ln in body]
        if self.chance(0.35):
            self.features.add("try-reraise")
            lines += [f"except {r.choice(['FloatingPointError', 'ZeroDivisionError'])}:",
                      "    raise"]
        if not lines[-1].endswith("raise") or self.chance(0.5):
            self.features.add("try-finally")
            cleanup = self.block(sc, 1, loop_depth, False, False, 2) \
                if self.chance(0.5) else [f"{self.fresh('n')} = {r.randint(0, 3)}"]
            lines += ["finally:"] + ["    " + ln for ln in cleanup]
        return lines

    def join(self, sc: Scope, scopes: list) -> None:
        """Keep the variables every path defines with the same kind."""
        if not scopes:
            return
        keep = {n: k for n, k in scopes[0].vars.items()
                if all(s.vars.get(n) == k for s in scopes)}
        sc.vars = keep
        sc.owned = set.intersection(*(s.owned for s in scopes)) & set(keep)

    def loop_body(self, sc: Scope, inner: Scope, loop_depth: int, can_return: bool,
                  nest: int) -> list[str]:
        before = dict(sc.vars)
        body = self.block(inner, self.rng.randint(1, 3), loop_depth + 1, True, can_return,
                          nest + 1)
        # after the loop: variables whose kind the body preserved (the body may not run)
        sc.vars = {n: k for n, k in before.items() if inner.vars.get(n) == k}
        sc.owned &= inner.owned
        return body

    def for_stmt(self, sc, loop_depth, can_return, nest) -> list[str]:
        r = self.rng
        pre: list[str] = []
        inner = sc.copy()
        i = self.fresh("i")
        form = r.choice(["range", "range", "range", "range_step", "reversed", "elements",
                         "rows", "enumerate", "zip"])
        self.features.add(f"for-{form}")
        if form == "range":
            head = f"for {i} in range({r.randint(0, 4)}):"
            inner.ints.append(i)
        elif form == "range_step":
            head = f"for {i} in range({r.choice(['5, 0, -2', '1, 4', '0, 6, 2', '3, 3'])}):"
            inner.ints.append(i)
        elif form == "reversed":
            head = f"for {i} in reversed(range({r.randint(0, 4)})):"
            inner.ints.append(i)
        elif form == "elements":
            head = f"for {i} in {self.iterable(r.choice([V3, V2]), sc, pre)}:"
            inner.vars[i] = NF
        elif form == "rows":
            head = f"for {i} in {self.iterable(M23, sc, pre)}:"
            inner.vars[i] = V3
        elif form == "enumerate":
            e = self.fresh("e")
            head = f"for {i}, {e} in enumerate({self.iterable(V3, sc, pre)}):"
            inner.ints.append(i)
            inner.vars[e] = NF
        else:
            e = self.fresh("e")
            head = (f"for {i}, {e} in zip({self.iterable(V3, sc, pre)}, "
                    f"{self.iterable(V3, sc, pre)}):")
            inner.vars[i] = NF
            inner.vars[e] = NF
        body = self.loop_body(sc, inner, loop_depth, can_return, nest)
        carried = [n for n, k in sc.vars.items() if k in (PF, NF, V3, M23)]
        if carried and "odd" not in self.disabled and self.odd.random() < 0.2:
            # a state that starts as a constant, is carried from step to step and is not read
            # after the loop: its gradient must still cross the steps (checkpointed too)
            self.features.add("coupled-state")
            v, s, c = self.odd.choice(carried), self.fresh("s"), _const(self.odd)
            pre.append(f"{s} = {_const(self.odd)}")
            body = [f"{s} = {s} - {c} * {v}", f"{v} = {v} + {c} * {s}"] + body
            sc.owned.discard(v)
        lines = pre + [head] + ["    " + ln for ln in body]
        if self.chance(0.15):
            self.features.add("for-else")
            names = [n for n in sc.vars]
            if names:
                n = r.choice(names)
                lines += ["else:", f"    {n} = {n} + {self.expr(r.choice(SUB[sc.vars[n]]), sc, 1)}"]
        return lines

    def while_stmt(self, sc, loop_depth, can_return, nest) -> list[str]:
        r = self.rng
        self.features.add("while")
        n = self.fresh("n")
        inner = sc.copy()
        inner.ints.append(n)
        cond = f"{n} < {r.randint(1, 5)}"
        if self.chance(0.6):
            self.no_comp = True
            cond += f" and ({self.cond(sc, 1)})"
            self.no_comp = False
        body = self.loop_body(sc, inner, loop_depth, can_return, nest)
        incr = r.choice([f"{n} += 1", f"{n} = {n} + 1"])
        return [f"{n} = 0", f"while {cond}:", f"    {incr}"] + ["    " + ln for ln in body]

    def converged_stmt(self, sc: Scope) -> list[str]:
        """A fixed-point loop marked ``converged``: a contraction (rate at most 1/2) forced by a
        differentiated value, run past machine precision, as a ``for`` or a ``while`` with a
        counter (held), its state one fresh variable or two."""
        r = self.rng
        self.features.add("converged")
        kind = r.choice([NF, NF, V3])
        z, c = self.fresh("z"), self.fresh("c")
        lines = [f"{c} = {self.expr(kind, sc, 2)}", f"{z} = {self.expr(kind, sc, 1)} * 0.0"]
        body = [f"{z} = 0.5 * np.tanh({z}) + 0.3 * np.sin({c})"]
        if self.chance(0.3):  # a second state variable, coupled to the first
            w = self.fresh("w")
            lines.append(f"{w} = 0.0")
            body = [f"{w} = 0.25 * np.cos({w}) + 0.1 * np.sum({z})",
                    f"{z} = 0.4 * np.tanh({z}) + 0.1 * {w} + 0.3 * np.sin({c})"]
            sc.vars[w] = NF
        if self.chance(0.5):
            head = [f"for _ in converged(range({r.choice([60, 80])})):"]
        else:
            n = self.fresh("n")
            lines.append(f"{n} = 0")
            head = [f"while converged({n} < {r.choice([60, 80])}):"]
            body.append(f"{n} = {n} + 1")
        sc.vars[z] = kind
        sc.vars[c] = kind
        return lines + head + ["    " + ln for ln in body]

    def result(self, sc: Scope) -> str:
        """A scalar built from up to three live variables and one random expression."""
        r = self.rng
        names = list(sc.vars)
        r.shuffle(names)
        parts = []
        for n in names[:3]:
            parts.append(f"np.sum({n})" if sc.vars[n] in ARRAYS else n)
        parts.append(self.expr(r.choice([PF, NF, NF]), sc, 2) if self.chance(0.5)
                     else f"np.sum({self.expr(r.choice(ARRAYS), sc, 2)})")
        return " + ".join(parts)

    # -- programs ----------------------------------------------------------------------------
    def helper(self) -> str:
        r = self.rng
        name = self.fresh("h")
        odd = [n for n in ODD_NAMES if n not in {g for g, _ in self.globals}
               and n not in {h[0] for h in self.helpers}]
        if "odd" not in self.disabled and odd and self.odd.random() < 0.2:
            name = self.odd.choice(odd)  # a helper named like a generated name (rt, bx, ...)
            self.features.add("odd-helper")
        params = [r.choice([PF, NF, V3, M23]) for _ in range(r.randint(1, 2))]
        names = ["p", "q"][:len(params)]
        has_default = self.chance(0.3)
        sc = Scope(dict(zip(names, params, strict=True)), globals=[n for n, _ in self.globals])
        self.helper_depth = 1
        body = self.block(sc, r.randint(0, 2), 0, False, False, 1) if self.chance(0.6) else []
        body = [ln for ln in body if ln != "pass"]
        two = self.chance(0.25)
        outs = [r.choice([PF, NF, V3, M23]) if not all(p == PF for p in params) else PF
                for _ in range(2 if two else 1)]
        if has_default:
            sc.vars["c"] = PF
        rets = [self.rhs(k, sc, 2) for k in outs]
        self.helper_depth = 0
        sig = ", ".join(names + (["c=0.5"] if has_default else []))
        self.helpers.append((name, params, has_default, tuple(outs)))
        self.features.add("helper")
        return "\n".join([f"def {name}({sig}):"] + ["    " + ln for ln in body]
                         + [f"    return {', '.join(rets)}"])

    def classes(self) -> str:
        """Classes of objects holding objects: ``H1`` builds a ``K1`` into a field in its
        ``__init__`` and calls its method; the dataclass ``D1`` declares its field's class and
        is called (``__call__``)."""
        o = self.obj
        k = o.choice(["np.tanh(self.a * v)", "self.a * v * v", "np.sin(v) * self.a + v",
                      "v / (1.0 + self.a * self.a)"])
        h = o.choice(["self.k.m(v) * self.b + np.cos(v)", "self.k.m(v * self.b)",
                      "self.k.m(v) + self.k.m(v * 0.5) * self.b"])
        self.features.add("objects")
        return "\n".join([
            "from dataclasses import dataclass", "",
            "__name__ = '__main__'  # (the classes' module: not builtins)", "", "",
            "class K1:", "    def __init__(self, a):", "        self.a = a", "",
            "    def m(self, v):", f"        return {k}", "", "",
            "class H1:", "    def __init__(self, a, b):", "        self.k = K1(a)",
            "        self.b = b", "", "    def m(self, v):", f"        return {h}", "", "",
            "@dataclass", "class D1:", "    k: K1", "    s: float", "",
            "    def __call__(self, v):", "        return self.k.m(v) * self.s"])

    def objects(self, sc: Scope) -> tuple[list[str], str]:
        """Lines building one of ``classes``' objects from live numbers and calling its
        methods on a live vector, and the scalar they add to the result."""
        o = self.obj
        numbers = sorted(n for n in sc.vars if sc.vars[n] in (PF, NF)) or ["0.7"]
        vectors = sorted(n for n in sc.vars if sc.vars[n] == V3) \
            or ["np.array([0.5, -1.0, 2.0])"]
        a, b, v = o.choice(numbers), o.choice(numbers), o.choice(vectors)
        ob, u = self.fresh("ob"), self.fresh("u")
        lines = o.choice([
            [f"{ob} = H1({a}, 0.5)", f"{u} = {ob}.m({v})"],
            [f"{ob} = D1(K1({a}), 1.5)", f"{u} = {ob}({v}) + {ob}.k.m({v} * 0.5)"],
            [f"{ob} = H1({a}, {b} * 0.3)", f"{u} = {ob}.k.m({v}) + {ob}.m({v} * 0.5)"],
            [f"{ob} = D1(K1({a}), {b})", f"{ob}_k = {ob}.k",  # (a held object, named)
             f"{u} = {ob}_k.m({v}) * {ob}.s + {ob}({v})"]])
        return lines, f"np.sum({u})"

    def program(self) -> tuple[str, tuple]:
        r = self.rng
        n_args = r.randint(1, 3)
        arg_kinds = [r.choice([PF, PF, V3, V3, M23]) for _ in range(n_args)]
        arg_names = ["x", "y", "z"][:n_args]
        n_helpers = 0 if "call" in self.disabled else r.choice([0, 0, 1, 1, 2])
        if "odd" not in self.disabled and self.odd.random() < 0.25:
            self.globals = [(n, _const(self.odd)) for n in self.odd.sample(ODD_NAMES, 2)]
            self.features.add("odd-globals")
        if "odd" not in self.disabled and self.odd.random() < 0.15:
            self.shadows = [self.odd.choice(sorted(SHADOWS))]
            self.features.add("shadowed-builtin")
        chunks = [self.helper() for _ in range(n_helpers)]
        sc = Scope(dict(zip(arg_names, arg_kinds, strict=True)),
                   globals=[n for n, _ in self.globals])
        body = []
        # tuple-returning helpers are called as statements
        for name, params, _, outs in self.helpers:
            if len(outs) == 2 and self.chance(0.8):
                a, b = self.fresh("o"), self.fresh("o")
                args = []
                for p in params:  # arguments named first, or expressions
                    e = self.expr(p, sc, 1)
                    if not e.isidentifier() and self.chance(0.5):
                        t = self.fresh("g")
                        body.append(f"{t} = {e}")
                        e = t
                    args.append(e)
                body.append(f"{a}, {b} = {name}({', '.join(args)})")
                sc.vars[a], sc.vars[b] = outs
        body += self.block(sc, r.randint(2, 6), 0, False, True, 0)
        result = self.result(sc)
        if "objects" not in self.disabled and self.obj.random() < 0.2:
            chunks.insert(0, self.classes())
            used, value = self.objects(sc)
            body += used
            result = f"{result} + {value}"
        body.append(f"return {result}")
        chunks.append("\n".join([f"def f({', '.join(arg_names)}):"] + ["    " + ln for ln in body]))
        values = []
        for k in arg_kinds:
            if k == PF:
                values.append(round(r.uniform(-1.5, 1.5), 3))
            else:
                values.append(np.array([[round(r.uniform(-1.5, 1.5), 3)
                                         for _ in range(SHAPES[k][-1])]
                                        for _ in range(2 if k == M23 else 1)]).reshape(SHAPES[k]))
        head = [f"{n} = {v}" for n, v in self.globals] + [SHADOWS[n] for n in self.shadows]
        if "reduce" in self.features:
            head.insert(0, "import functools\nimport operator")
        if "sparse" in self.features or "sparse-write" in self.features:
            head.insert(0, "import scipy.sparse as sp\nimport scipy.sparse.linalg as spla")
        if "root" in self.features or "minimum" in self.features:
            head.insert(0, "import scipy.optimize as so")
        if "integral" in self.features:
            head.insert(0, "import scipy.integrate as si")
        if "converged" in self.features:
            head.insert(0, "from transpiler import converged")
        if "container-inout" in self.features:
            chunks.insert(0, UPDATE)
        if "array-inout" in self.features:
            chunks.insert(0, NUDGE)
        return "\n\n\n".join(head + chunks) + "\n", tuple(values)


# a helper that changes the array it is given and returns nothing
NUDGE = """def _nudge(a, v):
    a[0] = a[0] * 0.5 + v
    a[-1] = np.tanh(a[-1]) + 0.1 * v"""


# a helper that changes the dict and the list it is given and returns nothing
UPDATE = """def _update(state, history, v):
    state["s"] = state["s"] * 0.5 + v
    history.append(np.tanh(v) * 1.0)"""


# Constructs can be switched off to look past a known bug (the same seed then gives another
# program): TRANSPILER_GEN_DISABLE=ifexp,return runs the generator without conditional
# expressions and early returns. Expression choices: bin div neg unary ifexp math float np
# nonsmooth reduce where comp call higher sparse; statements: assign_new update aug write tuple
# container if for while converged break continue return sparse_write (an assembly into a lil
# or dok matrix; "sparse" switches it off too); and "odd" (module globals named like generated
# names, builtins of the program's own).
DISABLE = frozenset(filter(None, os.environ.get("TRANSPILER_GEN_DISABLE", "").split(",")))
# The chance that an expression is computed through complex values (module docstring).
COMPLEX_SHARE = float(os.environ.get("TRANSPILER_GEN_COMPLEX", "0.025"))


def generate(seed: int) -> tuple[str, tuple, set]:
    # (Numba cannot re-raise, which a 'finally' does on the error path: the Python backend runs
    # those, and the Numba soak checks the rest)
    numba = os.environ.get("TRANSPILER_SOAK_BACKEND") in ("numba", "auto")
    g = Gen(seed, DISABLE | ({"try"} if numba else set()))
    source, args = g.program()
    return source, args, g.features


# --------------------------------------------------------------------------------------------
# Branch stability: an instrumented copy records every comparison and every kink side.

_NONSMOOTH = {"np.maximum", "np.minimum", "np.abs", "abs", "np.absolute", "np.fabs",
              "math.fabs"}


class _Instrument(ast.NodeTransformer):
    def visit_Compare(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Name("_rec", ast.Load()), [node], [])

    def visit_Call(self, node):
        self.generic_visit(node)
        name = ast.unparse(node.func)
        if name in _NONSMOOTH:
            return ast.Call(ast.Name("_kink", ast.Load()),
                            [ast.Constant(name), node.func, *node.args], node.keywords)
        return node


class _Trace:
    def __init__(self):
        self.events: list = []

    def rec(self, value):
        self.events.append(tuple(np.ravel(np.asarray(value, dtype=bool)).tolist()))
        return value

    def kink(self, name, fn, *args):
        if name in ("np.maximum", "np.minimum"):
            a, b = np.asarray(args[0], float), np.asarray(args[1], float)
            self.events.append(("k",) + tuple(np.ravel(a > b).tolist()))
        else:
            a = np.asarray(args[0])
            side = np.abs(a) > 1e-3 if np.iscomplexobj(a) else a.astype(float) > 0
            self.events.append(("k",) + tuple(np.ravel(side).tolist()))
        return fn(*args)


def instrumented(source: str):
    trace = _Trace()
    tree = ast.fix_missing_locations(_Instrument().visit(ast.parse(source)))
    fn = make(ast.unparse(tree), name="f", _rec=trace.rec, _kink=trace.kink)
    return fn, trace


def _entries(args):
    """(argument index, flat index or None, value) for every float entry of the arguments."""
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            for j, v in enumerate(a.ravel()):
                yield i, j, float(v)
        else:
            yield i, None, float(a)


def _moved(args, i, j, value):
    out = [copy.deepcopy(a) for a in args]
    if j is None:
        out[i] = float(value)
    else:
        flat = out[i].reshape(-1)
        flat[j] = value
    return out


def branch_stable(source: str, args, steps=(1e-6, 1e-5, 1e-7)) -> bool:
    fn, trace = instrumented(source)
    fn(*copy.deepcopy(args))
    base = list(trace.events)
    for i, j, v in _entries(args):
        for h in steps:
            for sign in (1, -1):
                trace.events = []
                fn(*_moved(args, i, j, v + sign * h * max(1.0, abs(v))))
                if trace.events != base:
                    return False
    return True


# --------------------------------------------------------------------------------------------
# Finite differences used to confirm a mismatch that check_grad reported.

def _robust_estimates(f, args, i, j, v):
    """Derivative estimates with several steps: central differences and a 5-point stencil."""
    def at(x):
        return float(np.sum(f(*_moved(args, i, j, x))))

    scale = max(1.0, abs(v))
    out = []
    for h in (1e-4, 1e-5, 1e-6, 1e-7):
        hh = h * scale
        out.append((at(v + hh) - at(v - hh)) / (2 * hh))
    for h in (1e-3, 1e-4):
        hh = h * scale
        out.append((-at(v + 2 * hh) + 8 * at(v + hh) - 8 * at(v - hh) + at(v - 2 * hh))
                   / (12 * hh))
    return out


def ill_conditioned(f, args, grads) -> bool:
    """Finite differences cannot judge: an entry of the gradient is huge (values far beyond
    the result's size, lost to rounding), estimates with different steps disagree, or the
    function holds a value so large that O(1) terms beside it are lost (``s + x - x`` with
    ``x`` near 1e82 has finite differences 0 in ``s``; the gradient is still 1)."""
    if any(np.any(np.abs(np.asarray(g, dtype=float)) > 1e6) for g in grads):
        return True
    if _largest_local(f, args) > 1e12:
        return True
    for i, j, v in _entries(args):
        with np.errstate(all="ignore"):
            est = _robust_estimates(f, args, i, j, v)[1:4]  # central, steps 1e-5 .. 1e-7
        if max(est) - min(est) > 1e-5 + 1e-3 * max(abs(e) for e in est):
            return True
    return False


def _largest_local(f, args) -> float:
    """The largest magnitude a float (or float array) local of ``f`` (or of what it calls) takes
    in a run, seen line by line with a trace function."""
    largest = 0.0

    def trace(frame, event, arg):
        nonlocal largest
        if event in ("line", "return"):
            for v in list(frame.f_locals.values()):
                try:
                    if isinstance(v, (float, np.floating)) or (
                            isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size):
                        with np.errstate(all="ignore"):
                            m = float(np.nanmax(np.abs(v)))
                        largest = max(largest, m if np.isfinite(m) else np.inf)
                except (TypeError, ValueError):
                    pass
        return trace

    old = sys.gettrace()
    sys.settrace(trace)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f(*copy.deepcopy(args))
    except Exception:  # noqa: BLE001 (the run is only looked at)
        pass
    finally:
        sys.settrace(old)
    return largest


def confirmed_mismatch(f, args, grads, rtol=1e-4, atol=1e-6) -> str | None:
    """None when every gradient entry agrees with some robust estimate, else a description."""
    for i, j, v in _entries(args):
        g = grads[i]
        got = float(g) if j is None else float(np.asarray(g).reshape(-1)[j])
        with np.errstate(all="ignore"):
            est = _robust_estimates(f, args, i, j, v)
        if not any(abs(got - e) <= atol + rtol * abs(e) for e in est):
            where = f"argument {i}" + ("" if j is None else f" flat index {j}")
            return (f"{where}: compiled {got!r}, finite differences "
                    f"{', '.join(f'{e:.10g}' for e in est)}")
    return None


# --------------------------------------------------------------------------------------------
# Forward mode: a random tangent per argument, and finite differences along it.

def tangents_for(args) -> tuple:
    """A random tangent for every argument (its shape; a Python float for a float), drawn from
    the argument values, so that a program keeps its tangents while it is shrunk."""
    rng = random.Random(repr(args))
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(np.array([round(rng.uniform(-1.0, 1.0), 3) for _ in range(a.size)],
                                dtype=float).reshape(a.shape))
        else:
            out.append(round(rng.uniform(-1.0, 1.0), 3))
    return tuple(out)


def _along(args, v, t):
    """``args + t * v`` (fresh copies: the program may write into its arguments)."""
    return [float(a + t * d) if not isinstance(a, np.ndarray) else
            np.asarray(a, float) + t * np.asarray(d, float) for a, d in zip(args, v, strict=True)]


def _scale(args) -> float:
    return max([1.0] + [float(np.max(np.abs(a))) for a in args])


def directional_fd(f, args, v, h=1e-6) -> float:
    hh = h * _scale(args)
    return (float(np.sum(f(*_along(args, v, hh))))
            - float(np.sum(f(*_along(args, v, -hh))))) / (2 * hh)


def _directional_estimates(f, args, v):
    """Directional-derivative estimates with several steps (central and 5-point stencil)."""
    def at(t):
        return float(np.sum(f(*_along(args, v, t))))

    scale = _scale(args)
    out = []
    for h in (1e-4, 1e-5, 1e-6, 1e-7):
        hh = h * scale
        out.append((at(hh) - at(-hh)) / (2 * hh))
    for h in (1e-3, 1e-4):
        hh = h * scale
        out.append((-at(2 * hh) + 8 * at(hh) - 8 * at(-hh) + at(-2 * hh)) / (12 * hh))
    return out


def branch_stable_along(source: str, args, v, steps=(1e-6, 1e-5, 1e-7)) -> bool:
    """The branch and kink trace is the same at ``args +- h v`` as at ``args``."""
    fn, trace = instrumented(source)
    fn(*copy.deepcopy(args))
    base = list(trace.events)
    for h in steps:
        for sign in (1, -1):
            trace.events = []
            fn(*_along(args, v, sign * h * _scale(args)))
            if trace.events != base:
                return False
    return True


def forward_fd_verdict(f, args, v, tangent, rtol=1e-4, atol=1e-6) -> str | None:
    """None when the tangent agrees with finite differences along ``v`` (one step, or failing
    that some robust estimate), "ill-conditioned" when finite differences cannot judge, else a
    description of the disagreement."""
    got = float(np.sum(tangent))
    with np.errstate(all="ignore"):
        fd = directional_fd(f, args, v)
        if abs(got - fd) <= atol + rtol * abs(fd):
            return None
        est = _directional_estimates(f, args, v)
    if any(abs(got - e) <= atol + rtol * abs(e) for e in est):
        return None
    central = est[1:4]  # steps 1e-5 .. 1e-7
    if abs(got) > 1e6 or not all(map(math.isfinite, central)) or \
            max(central) - min(central) > 1e-5 + 1e-3 * max(abs(e) for e in central):
        return "ill-conditioned"
    return (f"tangent {got!r}, finite differences along the tangent "
            f"{', '.join(f'{e:.10g}' for e in est)}")


def dot_terms(grads, v) -> tuple[float, float]:
    """sum_i <grad_i, v_i> and the magnitude of its terms, sum_i |grad_i| . |v_i|."""
    terms = [np.asarray(g, float) * np.asarray(d, float) for g, d in zip(grads, v, strict=True)]
    return (float(sum(np.sum(t) for t in terms)),
            float(sum(np.sum(np.abs(t)) for t in terms)))


# --------------------------------------------------------------------------------------------
# Checking one program.

@dataclass
class Outcome:
    status: str          # ok, skip, refused, crash, mismatch
    detail: str = ""
    kind: str = ""       # for failures: fd, opt-vs-noopt, wrt, variant, mutation, crash
    # with BACKEND "numba", on a program checked: "grad" and "jvp" -> "" (compared with the
    # Python backend's results) or Numba's refusal message
    numba: dict = field(default_factory=dict)
    # differences from the Python backend's numbers within what a last-bit change of NumPy's
    # transcendental functions makes (_within_spread): rounding, reported, not failures
    numba_noise: str = ""
    # with CHECKPOINT, on a program checked: "compared", "no loops" (nothing to mark) or
    # "refused" (then ``checkpoint_refusal`` holds the message)
    checkpoint: str = ""
    checkpoint_refusal: str = ""
    marked: str = ""     # the marked variant's source, when the checkpoint check ran
    rebound: str = ""    # the change made between calls and checked (_check_rebinding)

    @property
    def failed(self) -> bool:
        return self.status in ("crash", "mismatch")


def _close(a, b, rtol=1e-10, atol=1e-12) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol + rtol * np.maximum(
        np.abs(a), np.abs(b))) or np.array_equal(a, b, equal_nan=True))


def _crash(stage: str, exc: BaseException) -> Outcome:
    tb = traceback.extract_tb(exc.__traceback__)
    last = tb[-1] if tb else None
    where = f" at {last.filename}:{last.lineno} `{(last.line or '').strip()}`" if last else ""
    return Outcome("crash", f"{stage}: {type(exc).__name__}: {exc}{where}", "crash")


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def check_program(source: str, args: tuple, timeout: int = 60) -> Outcome:
    """Check one program; a program taking over ``timeout`` seconds is a failure (a hang)."""
    use_alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(timeout)
    try:
        return _check_program(source, args)
    except _Timeout:
        return Outcome("crash", f"timeout: over {timeout} s", "timeout")
    finally:
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def _arrays_in(value) -> list:
    """The NumPy arrays in a value (containers and objects walked into)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        value = list(vars(value).values())
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays_in(v)]
    return []


def _check_program(source: str, args: tuple) -> Outcome:
    try:
        f = make(source, name="f")
    except Exception as exc:  # the generator wrote invalid Python: a generator bug
        return Outcome("skip", f"source does not compile: {exc}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                value = f(*copy.deepcopy(args))
                value = float(np.sum(value))
            except Exception as exc:
                return Outcome("skip", f"primal raises {type(exc).__name__}: {exc}")
        if not math.isfinite(value) or abs(value) > 1e4:
            return Outcome("skip", f"primal value {value}")
        with np.errstate(all="raise", under="ignore"):
            try:  # an intermediate overflows (or is invalid) yet the value is finite: the
                f(*copy.deepcopy(args))  # generated code would warn there too, rightly
            except FloatingPointError as exc:
                return Outcome("skip", f"primal warns: {exc}")
        try:
            if not branch_stable(source, args):
                return Outcome("skip", "branch or kink changes near the point")
        except Exception as exc:
            return Outcome("skip", f"instrumented primal raises {type(exc).__name__}: {exc}")

    wrt = tuple(range(len(args)))
    saved = copy.deepcopy(args)
    grads = {}
    for optimize in (True, False):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                grads[optimize] = check_grad(f, *args, wrt=wrt, optimize=optimize,
                                             rtol=1e-4, atol=1e-6)
        except TranspileError as exc:
            return Outcome("refused", _refusal(exc))
        except AssertionError as exc:
            computed = grad(f, wrt=wrt, optimize=optimize)(*args)
            why = confirmed_mismatch(f, args, computed)
            if why is not None and ill_conditioned(f, args, computed):
                return Outcome("skip", "ill-conditioned: finite differences disagree with each "
                                       "other, or a gradient entry is huge")
            if why is None:
                grads[optimize] = computed  # finite-difference noise: the robust check agrees
                continue
            return Outcome("mismatch", f"optimize={optimize}: {exc}\n  confirmed: {why}", "fd")
        except Exception as exc:
            return _crash(f"optimize={optimize}", exc)
        if not all(_close(a, b) for a, b in zip(saved, args, strict=True)):
            return Outcome("mismatch", "an argument was modified by the gradient call",
                           "mutation")
    returned = [a for g in grads[True] for a in _arrays_in(g)]
    for i, g in enumerate(returned):
        if any(np.shares_memory(g, a) for a in returned[:i] + _arrays_in(args)):
            return Outcome("mismatch", "a gradient shares memory with an argument or another "
                                       "gradient", "alias")
    for g, arg, pos in zip(grads[True], args, wrt, strict=True):
        if type(arg) is float and type(g) is not float:
            return Outcome("mismatch", f"the gradient of float argument {pos} is a "
                                       f"{type(g).__name__}, not a float", "type")
    for a, b, pos in zip(grads[True], grads[False], wrt, strict=True):
        if not _close(a, b):
            return Outcome("mismatch", f"optimized and unoptimized gradients differ for argument "
                                       f"{pos}: {a!r} vs {b!r}", "opt-vs-noopt")
    try:
        if len(wrt) > 1:  # one argument alone (activity analysis differs)
            pos = random.Random(source).choice(wrt)
            one = grad(f, wrt=pos)(*args)
            if not _close(one, grads[True][pos]):
                return Outcome("mismatch", f"grad(wrt={pos}) gives {one!r}, grad(wrt={wrt}) "
                                           f"gives {grads[True][pos]!r}", "wrt")
        if all(type(a) is float for a in args):
            general = grad(f, wrt=wrt)(*[np.float64(a) for a in args])
            for a, b, pos in zip(general, grads[True], wrt, strict=True):
                if not _close(a, b, rtol=1e-9):
                    return Outcome("mismatch", f"np.float64 arguments (general variant) give "
                                               f"{a!r}, Python floats give {b!r} for argument "
                                               f"{pos}", "variant")
    except TranspileError as exc:
        return Outcome("refused", _refusal(exc))
    except Exception as exc:
        return _crash("cross-check", exc)
    outcome = _check_forward(source, f, args, grads[True])
    if BACKEND in ("numba", "auto") and outcome.status == "ok":
        outcome = _check_numba(f, args, grads[True])
    if outcome.status == "ok" and (REBIND or random.Random(f"rebind {source}").random()
                                   < REBIND_SHARE):
        outcome = _check_rebinding(source, f, args, outcome)
    if CHECKPOINT and outcome.status == "ok":
        outcome = _check_checkpoint(source, f, args, grads[True], outcome)
    if outcome.status == "ok" and SOLVED.search(source):
        outcome = _check_second(source, f, args, outcome)
    return outcome


# --------------------------------------------------------------------------------------------
# Second derivatives through a solver's root or minimum, an integral, an ODE's solution: hvp
# along a random direction against the gradient differenced along it (the solver run again
# each time, so its tolerance bounds the agreement; a missing term is of the size of the
# product itself).

SOLVED = re.compile(r"\bso\.(brentq|brenth|ridder|bisect|toms748|newton|root_scalar|fsolve|root|"
                    r"fixed_point|minimize|minimize_scalar|least_squares)\(|"
                    r"\bsi\.(quad|quad_vec|solve_ivp|odeint)\(")


def _check_second(source: str, f, args: tuple, outcome: Outcome) -> Outcome:
    positions = [i for i, a in enumerate(args) if type(a) is float
                 or isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not positions:
        return outcome
    pos = random.Random(f"second {source}").choice(positions)
    v = tangents_for(args)[pos]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = np.asarray(hvp(f, wrt=pos)(*copy.deepcopy(args), v), dtype=float)
        except (TranspileError, NotImplementedError):  # second derivatives refused there (an
            return outcome  # integral's; a minimum's objective calling a helper): not this check
        except Exception as exc:
            return _crash("hvp", exc)
        gradient = grad(f, wrt=pos)

        def differenced(h):
            up, down = list(copy.deepcopy(args)), list(copy.deepcopy(args))
            up[pos], down[pos] = args[pos] + h * v, args[pos] - h * v
            higher, lower = gradient(*up), gradient(*down)
            return (np.asarray(higher, float) - np.asarray(lower, float)) / (2 * h)

        try:
            step = 1e-4 * _scale(args)
            expected = differenced(step)
            if _close(got, expected, rtol=1e-3, atol=1e-5 * (1.0 + np.max(np.abs(expected)))):
                return outcome
            other = differenced(10.0 * step)
        except Exception:  # (the solver fails beside the point: no verdict)
            return outcome
    if not _close(expected, other, rtol=1e-3, atol=1e-5 * (1.0 + np.max(np.abs(expected)))):
        return outcome  # (the differences disagree with each other: the solver's noise)
    return Outcome("mismatch", f"hvp(wrt={pos}) along {v!r} gives {got!r}, the gradient "
                               f"differenced along it {expected!r}", "hvp")


# --------------------------------------------------------------------------------------------
# What a user changes between calls: a helper's def run again, its defaults or the function's
# own, a library function rebound (as a test's mock does). The gradient compiled before the
# change, called again, must give the changed program's derivatives.

REBIND = os.environ.get("TRANSPILER_SOAK_REBIND", "") not in ("", "0")  # every program, not a share
REBIND_SHARE = 0.25
_LIBRARY_SWAPS = (("np.sin(", "np", "sin", "cos"), ("np.cos(", "np", "cos", "sin"),
                  ("np.tanh(", "np", "tanh", "arctan"), ("math.sin(", "math", "sin", "cos"),
                  ("np.exp(", "np", "exp", "expm1"))


def _rebindings(source: str) -> list:
    """``(kind, the changed program's source, apply(namespace) -> undo)`` for each change this
    program allows."""
    out = []
    for m in re.finditer(r"^def (\w+)\((.*)\):\n((?:    .*\n?)*)", source, re.M):
        name, sig, body = m[1], m[2], m[0]
        if name == "f" or name in SHADOWS:
            continue
        changed = re.sub(r"^    return ", "    return 1.25 * ", body, count=1, flags=re.M)
        if changed != body:
            new = source.replace(body, changed)
            out.append(("helper-redefined", new, _redefine(name, changed)))
        if "c=0.5" in sig:
            new = source.replace(f"def {name}({sig})", f"def {name}({sig.replace('c=0.5', 'c=0.8')})")
            out.append(("defaults-changed", new, _new_defaults(name, (0.8,))))
    for spelled, module, old, new_name in _LIBRARY_SWAPS:
        if spelled in source:  # (every use: map(np.sin, ...) reads the rebound one too)
            new = re.sub(rf"\b{module}\.{old}\b", f"{module}.{new_name}", source)
            out.append((f"{module}.{old}-rebound", new, _swap(module, old, new_name)))
    return out


def _redefine(name: str, text: str):
    def apply(namespace: dict):
        old = namespace[name]
        filename = f"<redefined {name} {id(text)}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        exec(compile(text, filename, "exec"), namespace)
        return lambda: namespace.__setitem__(name, old)
    return apply


def _new_defaults(name: str, defaults: tuple):
    def apply(namespace: dict):
        function = namespace[name]
        old, function.__defaults__ = function.__defaults__, defaults
        return lambda: setattr(function, "__defaults__", old)
    return apply


def _swap(module: str, old: str, new: str):
    def apply(namespace: dict):
        owner = namespace[module]
        saved = getattr(owner, old)
        setattr(owner, old, getattr(owner, new))
        return lambda: setattr(owner, old, saved)
    return apply


def _check_rebinding(source: str, f, args: tuple, outcome: Outcome) -> Outcome:
    """The gradients compiled for ``f`` (reverse, and forward along a tangent), called again
    after one change the program allows (drawn from its source), against the central finite
    differences of the changed program."""
    choices = _rebindings(source)
    if not choices:
        return outcome
    kind, changed, apply = random.Random(source).choice(choices)
    wrt = tuple(range(len(args)))
    v = tangents_for(args)
    try:
        truth = make(changed, name="f")
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = float(np.sum(truth(*copy.deepcopy(args))))
            if not math.isfinite(value) or abs(value) > 1e4 or not branch_stable(changed, args) \
                    or not branch_stable_along(changed, args, v):
                return outcome  # (the changed program is not one to judge here)
    except Exception:
        return outcome
    gradient = grad(f, wrt=wrt)
    try:
        gradient(*args), jvp(f, args, v)  # compiled for the program as it was
    except Exception as exc:
        return _crash(f"{kind}: before the change", exc)
    undo = apply(f.__globals__)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            computed = gradient(*args)
            _, tangent = jvp(f, args, v)
    except TranspileError as exc:
        return Outcome("refused", f"{kind}: {_refusal(exc)}")
    except Exception as exc:
        return _crash(kind, exc)
    finally:
        undo()
    why = confirmed_mismatch(truth, args, computed)
    if why is not None and not ill_conditioned(truth, args, computed):
        return Outcome("mismatch", f"{kind}: the gradient compiled before the change gives "
                                   f"{computed!r} after it: {why}", kind)
    why = forward_fd_verdict(truth, args, v, tangent)
    if why is not None and why != "ill-conditioned":
        return Outcome("mismatch", f"{kind}: the tangent after the change: {why}", kind)
    return dataclasses.replace(outcome, rebound=kind)


def _refusal(exc: TranspileError) -> str:
    return str(exc).splitlines()[0].split(": ", 1)[-1]


def _check_forward(source: str, f, args: tuple, grads: tuple) -> Outcome:
    """Forward mode of a program reverse mode got right: ``jvp`` along a random tangent must
    give f's value, agree with finite differences along the tangent and with the reverse
    gradient (sum of <grad_i, v_i>), agree between optimize=True and False, leave arguments
    and tangents alone; and forward mode must not refuse what reverse mode accepted."""
    v = tangents_for(args)
    saved, saved_v = copy.deepcopy(args), copy.deepcopy(v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            expected = f(*copy.deepcopy(args))
            try:
                if not branch_stable_along(source, args, v):
                    return Outcome("skip", "branch or kink changes along the tangent")
            except Exception as exc:
                return Outcome("skip", f"instrumented primal raises {type(exc).__name__}: {exc}")

    def call(tangents, optimize, stage, wrt):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                out = jvp(f, args, tangents, optimize=optimize)
        except TranspileError as exc:
            try:  # is the refusal forward mode's alone? (reverse mode accepted all of wrt)
                if wrt != tuple(range(len(args))):
                    grad(f, wrt=wrt, optimize=optimize)(*args)
            except TranspileError:  # reverse mode refuses this wrt too: a refusal, as there
                return Outcome("refused", f"with wrt={wrt} only, in both modes: "
                                          f"{_refusal(exc)}")
            except Exception:
                pass
            return Outcome("mismatch", f"{stage}: forward mode refuses a program reverse mode "
                                       f"accepts: {_refusal(exc)}", "forward-refused")
        except Exception as exc:
            return _crash(f"forward {stage}", exc)
        if not all(_close(a, b) for a, b in zip(saved, args, strict=True)):
            return Outcome("mismatch", f"{stage}: an argument was modified by the forward call",
                           "forward-mutation")
        if not all(_close(a, b) for a, b in zip(saved_v, v, strict=True)):
            return Outcome("mismatch", f"{stage}: a tangent was modified by the forward call",
                           "forward-mutation")
        if not (isinstance(out, tuple) and len(out) == 2):
            return Outcome("mismatch", f"{stage}: jvp returned {out!r}, not (value, tangent)",
                           "forward-value")
        value, tangent = out
        if not _close(value, expected, rtol=1e-9):
            return Outcome("mismatch", f"{stage}: forward value {value!r}, f gives {expected!r}",
                           "forward-value")
        if np.shape(tangent) != np.shape(value):
            return Outcome("mismatch", f"{stage}: tangent shape {np.shape(tangent)}, value shape "
                                       f"{np.shape(value)}", "forward-value")
        return out

    results = {}
    for optimize in (True, False):
        out = call(v, optimize, f"optimize={optimize}", tuple(range(len(args))))
        if isinstance(out, Outcome):
            return out
        results[optimize] = out
    for part, a, b in zip(("value", "tangent"), results[True], results[False], strict=True):
        if not _close(a, b):
            return Outcome("mismatch", f"optimized and unoptimized forward code give the {part}s "
                                       f"{a!r} vs {b!r}", "forward-opt-vs-noopt")
    tangent = float(np.sum(results[True][1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        verdict = forward_fd_verdict(f, args, v, tangent)
    if verdict == "ill-conditioned":
        return Outcome("skip", "ill-conditioned along the tangent: finite differences disagree "
                               "with each other, or the tangent is huge")
    if verdict is not None:
        return Outcome("mismatch", f"forward tangent vs finite differences: {verdict}",
                       "forward-fd")
    dot, size = dot_terms(grads, v)
    if not abs(tangent - dot) <= DOT_RTOL * size + 1e-12:
        return Outcome("mismatch", f"forward tangent {tangent!r}, reverse gradient . tangent "
                                   f"{dot!r} (terms of size {size:.3g})", "forward-dot")
    rng = random.Random(repr(args) + "one")  # the arguments' draw: stable while shrinking
    if len(args) > 1 and rng.random() < ONE_TANGENT_SHARE:
        # one argument's tangent alone, the others held fixed (None): activity analysis differs
        pos = rng.randrange(len(args))
        out = call(tuple(d if i == pos else None for i, d in enumerate(v)), True,
                   f"tangent for argument {pos} only", pos)
        if isinstance(out, Outcome):
            return out
        dot, size = dot_terms(grads[pos:pos + 1], v[pos:pos + 1])
        one = float(np.sum(out[1]))
        if not abs(one - dot) <= DOT_RTOL * size + 1e-12:
            return Outcome("mismatch", f"tangent for argument {pos} only: {one!r}, reverse "
                                       f"gradient . tangent {dot!r}", "forward-wrt")
    return Outcome("ok")


DOT_RTOL = 1e-9  # forward tangent vs reverse gradient . tangent, relative to the terms' size
# The share of programs with several arguments whose forward mode is also run with one tangent
# alone: all of them in a soak or a single seed's check, some in the default run (time).
ONE_TANGENT_SHARE = 0.3


# --------------------------------------------------------------------------------------------
# The Numba backend, on programs the Python backend got right: the same numbers.

# TRANSPILER_SOAK_BACKEND=numba also differentiates every program checked with backend="numba"
# (=auto: with backend="auto", which runs Numba's code or, where Numba refuses, the Python code)
BACKEND = os.environ.get("TRANSPILER_SOAK_BACKEND", "python") or "python"
SECONDS = float(os.environ.get("TRANSPILER_SOAK_SECONDS", "0"))  # a soak's time box (0: none)
if BACKEND not in ("python", "numba", "auto"):
    raise ValueError(f"TRANSPILER_SOAK_BACKEND={BACKEND!r}: expected numba or auto (or python)")
NUMBA_RTOL, NUMBA_ATOL = 1e-12, 1e-300


def _numba_differs(python, native) -> str | None:
    """None when Numba's result equals the Python backend's (the same type, shape and dtype;
    the numbers to ``NUMBA_RTOL``), else how they differ. A NumPy scalar from the Python backend
    may come back a Python float (Numba returns its float64 scalars as floats)."""
    if isinstance(python, np.ndarray):
        if not isinstance(native, np.ndarray) or native.shape != python.shape \
                or native.dtype != python.dtype:
            return (f"an array of shape {python.shape} and dtype {python.dtype} from Python, "
                    f"{type(native).__name__} {np.shape(native)} "
                    f"{getattr(native, 'dtype', '')} from Numba")
    elif type(python) is float:
        if type(native) is not float:
            return f"a float from Python, a {type(native).__name__} from Numba"
    elif not isinstance(native, (float, np.floating)) or np.ndim(native) != 0:
        return f"a {type(python).__name__} from Python, a {type(native).__name__} from Numba"
    return _numbers_differ(python, native)


def _numbers_differ(python, native) -> str | None:
    """None when the numbers are equal to ``NUMBA_RTOL``, else both."""
    a, b = np.asarray(python, float), np.asarray(native, float)
    if np.array_equal(a, b, equal_nan=True) or bool(np.all(
            np.abs(a - b) <= NUMBA_ATOL + NUMBA_RTOL * np.maximum(np.abs(a), np.abs(b)))):
        return None
    return f"{python!r} from Python, {native!r} from Numba"


# NumPy's transcendental functions, which Numba computes with other code (LLVM's and its own):
# their results may differ in the last bit (tanh in about a quarter of inputs, exp in 5%)
NUDGED = ("exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "arcsin",
          "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
          "cbrt", "power", "abs", "absolute")  # (abs: a complex modulus, Numba's own hypot)


def _compiled_call(function, args: tuple, kwargs: dict | None = None):
    """A call of the code ``function`` (a grad or forward function) runs for ``args``, made
    without its wrapper: a NumPy function replaced below would make the wrapper compile again,
    where the nudge wants the same code run with other last bits."""
    compiled = function.compiled_for(*args, **(kwargs or {}))
    return lambda: compiled.function(*args, **(kwargs or {}))


def _compiled_jvp(f, args: tuple, v: tuple):
    """``_compiled_call`` of ``jvp(f, args, v)``."""
    params = list(inspect.signature(f).parameters)[:len(args)]
    function = forward(f, wrt=tuple(p for p, t in zip(params, v, strict=True) if t is not None))
    compiled = function.compiled_for(*args)
    tangents = {function.tangent_names[p]: t for p, t in zip(params, v, strict=True)
                if t is not None}
    return lambda: compiled.function(*args, **tangents)


def _ulp_spread(compute) -> list:
    """``compute()`` (the Python backend's results) again with every NUDGED NumPy function's
    results one ulp up, then one ulp down: how far a last-bit difference in them moves the
    results (a gradient computed by cancellation, or through 1 - tanh(x)**2, moves a lot)."""
    spread = []
    originals = {name: getattr(np, name) for name in NUDGED}

    def nudged(value, direction):  # (a complex value: each part)
        if np.iscomplexobj(value):
            return np.nextafter(value.real, direction) + 1j * np.nextafter(value.imag, direction)
        return np.nextafter(value, direction)
    try:
        for direction in (np.inf, -np.inf):
            for name, ufunc in originals.items():
                setattr(np, name, lambda *a, _u=ufunc, _d=direction, **k:
                        nudged(_u(*a, **k), _d))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                spread.append(compute())
    finally:
        for name, ufunc in originals.items():
            setattr(np, name, ufunc)
    return spread


def _within_spread(python, native, moved: list) -> bool:
    """Whether Numba's numbers differ from Python's by no more than twice what a one-ulp nudge
    of NumPy's transcendental functions moves Python's (rounding, not another gradient)."""
    a, b = np.asarray(python, float), np.asarray(native, float)
    reach = max((np.abs(np.asarray(m, float) - a) for m in moved), key=np.max)
    return bool(np.all(np.abs(a - b) <= NUMBA_ATOL + 2 * reach))


def test_rounding_is_told_apart_from_another_number():
    f = make("def f(x):\n    return np.exp(np.sin(x)) * np.tanh(x)\n", np=np)
    g, before = grad(f)(0.7), [getattr(np, name) for name in NUDGED]
    moved = _ulp_spread(_compiled_call(grad(f), (0.7,)))
    assert [getattr(np, name) for name in NUDGED] == before  # (put back)
    assert any(m != g for m in moved)  # (the nudge reaches the gradient)
    assert _within_spread(g, np.nextafter(g, np.inf), moved)
    assert not _within_spread(g, g * (1 + 1e-12), moved)


def _check_numba(f, args: tuple, grads: tuple) -> Outcome:
    """``backend="numba"`` on a program the Python backend got right: ``grad`` for all arguments
    and ``jvp`` along the forward check's tangent give the Python backend's results and leave
    the arguments and tangents alone. Numba refusing (TranspileError) is no failure: ``numba``
    holds the refusal."""
    wrt = tuple(range(len(args)))
    v = tangents_for(args)
    saved, saved_v = copy.deepcopy(args), copy.deepcopy(v)
    python = {"grad": grads}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        python["jvp"] = jvp(f, args, v)
    calls = {"grad": lambda: grad(f, wrt=wrt, backend=BACKEND),
             "jvp": lambda: jvp(f, args, v, backend=BACKEND)}
    numba, noise = {}, []
    python_again = {"grad": lambda: _compiled_call(grad(f, wrt=wrt), args),  # (made before
                    "jvp": lambda: _compiled_jvp(f, args, v)}  # the nudge, run under it)
    for part, call in calls.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (Numba's performance warnings)
                if part == "grad":
                    df = call()
                    native = df(*args)
                    backend = df.compiled_for(*args).backend
                    if backend != "numba" and BACKEND == "numba":
                        return Outcome("mismatch", f"numba grad: backend='numba' runs "
                                                   f"{backend!r} code", "numba-backend")
                else:
                    native = call()
        except TranspileError as exc:
            numba[part] = f"{part}: {_refusal(exc)}"
            continue
        except Exception as exc:
            return _crash(f"numba {part}", exc)
        if not all(_close(a, b) for a, b in zip(saved, args, strict=True)) or \
                not all(_close(a, b) for a, b in zip(saved_v, v, strict=True)):
            return Outcome("mismatch", f"numba {part}: an argument or tangent was modified",
                           "numba-mutation")
        names = [f"gradient {i}" for i in wrt] if part == "grad" else ["value", "tangent"]
        if not (isinstance(native, tuple) and len(native) == len(names)):
            return Outcome("mismatch", f"numba {part}: {native!r}, not {len(names)} results",
                           f"numba-{part}")
        spread, again = None, python_again[part]
        for k, (name, a, b) in enumerate(zip(names, python[part], native, strict=True)):
            why = _numba_differs(a, b)
            if why is not None and why == _numbers_differ(a, b):  # (the types agree)
                spread = spread or _ulp_spread(again())
                if _within_spread(a, b, [m[k] for m in spread]):
                    noise.append(f"{part}: the {name}: {why}")
                    continue
            if why is not None:
                return Outcome("mismatch", f"numba {part}: the {name} differs: {why}",
                               f"numba-{part}")
        numba[part] = ""
    return Outcome("ok", numba=numba, numba_noise="; ".join(noise))


# --------------------------------------------------------------------------------------------
# Checkpointed loops, on programs the Python backend got right: the marked variant's gradient
# is the unmarked program's.

# TRANSPILER_SOAK_CHECKPOINT=1 also differentiates every program checked with its outermost
# for loops marked checkpoint(...)
CHECKPOINT = os.environ.get("TRANSPILER_SOAK_CHECKPOINT", "") not in ("", "0")
CHECKPOINT_COUNTS = (1, 2, 3)  # the snapshots= and every= the marked variants use


class _MarkLoops(ast.NodeTransformer):
    """Wraps the iterable of every outermost ``for`` loop (one inside no other loop) of every
    function in ``checkpoint(ITER, snapshots=S)`` or ``checkpoint(ITER, every=K)``. The choice
    is drawn per function from ``seed`` (the arguments: it stays put while a program is shrunk);
    ``snapshots=`` needs a trip count, so it marks only a ``range(...)`` or the function's data
    (which the compiler walks by index)."""

    def __init__(self, seed: str):
        self.seed = seed
        self.marked = 0
        self.rng = random.Random(seed)
        self.data: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        self.rng = random.Random(f"{self.seed} {node.name}")
        self.data = {a.arg for a in node.args.args} | {
            n.id for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.generic_visit(node)
        return node

    def visit_For(self, node: ast.For) -> ast.For:
        # (not visiting the body: a loop inside this one stays unmarked; one marked converged
        # keeps its marker)
        if isinstance(node.iter, ast.Call) and ast.unparse(node.iter.func) == "converged":
            return node
        mode = self.rng.choice(["snapshots", "every"])
        count = self.rng.choice(CHECKPOINT_COUNTS)
        it = node.iter
        over_range = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) \
            and it.func.id == "range"
        over_data = any(isinstance(n, ast.Name) and n.id in self.data for n in ast.walk(it))
        if not (over_range or over_data):
            mode = "every"
        node.iter = ast.Call(ast.Name("checkpoint", ast.Load()), [it],
                             [ast.keyword(mode, ast.Constant(count))])
        self.marked += 1
        return node

    def visit_While(self, node: ast.While) -> ast.While:
        return node  # its for loops are inside another loop


def mark_loops(source: str, args: tuple) -> tuple[str, int]:
    """The program with its outermost ``for`` loops marked ``checkpoint(...)``, and how many
    loops it marked."""
    marker = _MarkLoops(repr(args))
    tree = ast.fix_missing_locations(marker.visit(ast.parse(source)))
    return ast.unparse(tree) + "\n", marker.marked


def _checkpoint_differs(plain, marked) -> str | None:
    """None when the marked variant's result is the unmarked program's: the same type (and shape
    and dtype for an array), the numbers to 1e-10 relative (1e-12 absolute near zero)."""
    if type(marked) is not type(plain):
        return f"a {type(plain).__name__} unmarked, a {type(marked).__name__} marked"
    if isinstance(plain, np.ndarray) and (plain.shape != marked.shape
                                          or plain.dtype != marked.dtype):
        return (f"shape {plain.shape} and dtype {plain.dtype} unmarked, shape {marked.shape} "
                f"and dtype {marked.dtype} marked")
    if np.shape(plain) != np.shape(marked) or not _close(plain, marked):
        return f"{plain!r} unmarked, {marked!r} marked"
    return None


def _check_checkpoint(source: str, f, args: tuple, grads: tuple, outcome: Outcome) -> Outcome:
    """The program with its outermost for loops marked (``mark_loops``), on a program the Python
    backend got right: ``grad`` for all arguments gives ``grads`` (the unmarked program's) and
    ``value_and_grad`` gives f's value, leaving the arguments alone. The marked variant refused
    (TranspileError) is no failure: ``outcome`` comes back with the refusal."""
    marked, count = mark_loops(source, args)
    if not count:
        return dataclasses.replace(outcome, checkpoint="no loops")
    wrt = tuple(range(len(args)))
    saved = copy.deepcopy(args)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = f(*copy.deepcopy(args))
    try:
        g = make(marked, name="f", checkpoint=checkpoint)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = {"grad": grad(g, wrt=wrt)(*args)}
            if not all(_close(a, b) for a, b in zip(saved, args, strict=True)):
                return Outcome("mismatch", "checkpoint grad: an argument was modified",
                               "checkpoint-mutation", marked=marked)
            results["value_and_grad"] = value_and_grad(g, wrt=wrt)(*args)
    except TranspileError as exc:
        return dataclasses.replace(outcome, checkpoint="refused",
                                   checkpoint_refusal=_refusal(exc), marked=marked)
    except Exception as exc:
        return dataclasses.replace(_crash("checkpoint", exc), marked=marked)
    if not all(_close(a, b) for a, b in zip(saved, args, strict=True)):
        return Outcome("mismatch", "checkpoint value_and_grad: an argument was modified",
                       "checkpoint-mutation", marked=marked)
    value, gradients = results["value_and_grad"]
    checks = [(f"grad: gradient {i}", grads[i], results["grad"][i]) for i in wrt]
    checks += [(f"value_and_grad: gradient {i}", grads[i], gradients[i]) for i in wrt]
    for name, a, b in checks:
        why = _checkpoint_differs(a, b)
        if why is not None:
            return Outcome("mismatch", f"checkpoint {name} differs: {why}", "checkpoint-grad",
                           marked=marked)
    if type(value) is not type(expected) or not np.array_equal(value, expected):
        return Outcome("mismatch", f"checkpoint value_and_grad: the value {value!r}, f gives "
                                   f"{expected!r}", "checkpoint-value", marked=marked)
    return dataclasses.replace(outcome, checkpoint="compared", marked=marked)


# --------------------------------------------------------------------------------------------
# Shrinking a failing program: delete statements, pick one branch, replace sub-expressions by
# one of their operands, while the failure keeps its kind.

def _candidates(source: str):
    tree = ast.parse(source)
    n_nodes = sum(1 for _ in ast.walk(tree))
    for idx in range(n_nodes):
        for variant in range(4):
            t = ast.parse(source)
            nodes = list(ast.walk(t))
            if idx >= len(nodes):
                return
            node = nodes[idx]
            changed = _mutate(t, node, variant)
            if changed:
                try:
                    yield ast.unparse(ast.fix_missing_locations(t)) + "\n"
                except Exception:
                    continue


def _mutate(tree, node, variant) -> bool:
    # statement lists: delete one statement / unwrap a compound statement
    for parent in ast.walk(tree):
        for fld in ("body", "orelse"):
            stmts = getattr(parent, fld, None)
            if not isinstance(stmts, list) or node not in stmts:
                continue
            k = stmts.index(node)
            if variant == 0:
                if isinstance(parent, ast.FunctionDef) and k == len(stmts) - 1:
                    return False
                if isinstance(parent, ast.Module) and getattr(node, "name", None) == "f":
                    return False
                del stmts[k]
                if not stmts and fld == "body":
                    stmts.append(ast.Pass())
                return True
            if variant == 1 and isinstance(node, (ast.If, ast.For, ast.While)) and node.body:
                stmts[k:k + 1] = node.body
                return True
            if variant == 2 and isinstance(node, (ast.If, ast.For, ast.While)) and node.orelse:
                stmts[k:k + 1] = node.orelse
                return True
            if variant == 3 and isinstance(node, (ast.If, ast.For, ast.While)) and node.orelse:
                node.orelse = []
                return True
            return False
    if not isinstance(node, ast.expr) or isinstance(node, (ast.Compare, ast.BoolOp)):
        return False  # conditions stay comparisons (a bare array as a condition raises)
    subs = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)
            and not isinstance(c, (ast.Attribute,)) and not (isinstance(node, ast.Call)
                                                             and c is node.func)]
    if isinstance(node, ast.Attribute):
        return False
    replacement = None
    if variant < len(subs):
        replacement = subs[variant]
    elif variant == len(subs) and not isinstance(node, (ast.Constant, ast.Name)):
        replacement = ast.Constant(0.5)
    if replacement is None:
        return False
    for parent in ast.walk(tree):
        for fld, value in ast.iter_fields(parent):
            if value is node:
                if isinstance(parent, (ast.Assign, ast.AugAssign)) and fld == "targets":
                    return False
                setattr(parent, fld, replacement)
                return True
            if isinstance(value, list) and node in value:
                if fld == "targets":
                    return False
                value[value.index(node)] = replacement
                return True
    return False


def _normalise(message: str) -> str:
    return re.sub(r"'\w+'", "'_'", message)


def _signature(o: Outcome):
    """A crash's stage, exception type, message (names and numbers blanked) and the runtime
    calls on the failing line."""
    stage, rest = o.detail.split(": ", 1)
    kind, _, message = rest.partition(": ")
    message = re.sub(r"\d+", "N", _normalise(message.split(" at ")[0]))[:60]
    return stage, kind, message, " ".join(re.findall(r"rt\.\w+", rest))


def shrink(source: str, args: tuple, outcome: Outcome, budget: float = 120.0) -> str:
    """A smaller program failing the same way (same failure kind; same exception type)."""
    def same(o: Outcome) -> bool:
        if outcome.status == "refused":
            return o.status == "refused" and _normalise(o.detail) == _normalise(outcome.detail)
        if o.kind != outcome.kind:
            return False
        if o.kind == "crash":
            return _signature(o) == _signature(outcome)
        return True

    deadline = time.time() + budget
    progress = True
    while progress and time.time() < deadline:
        progress = False
        for cand in _candidates(source):
            if time.time() > deadline:
                break
            if len(cand) >= len(source):
                continue
            try:
                o = check_program(cand, args)
            except Exception:
                continue
            if same(o):
                source, progress = cand, True
                break
    return source


# --------------------------------------------------------------------------------------------
# Running many programs.

@dataclass
class Report:
    checked: int = 0
    generated: int = 0
    skipped: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)   # (seed, source, args, outcome)
    # BACKEND "numba": programs whose grad and jvp were both compared, those with a refusal
    numba_compared: int = 0
    numba_refusing: int = 0
    numba_refused: dict = field(default_factory=dict)  # Numba's refusal -> count
    numba_parts: dict = field(default_factory=dict)    # "grad compared", "jvp refused" -> count
    numba_noise: list = field(default_factory=list)    # (seed, rounding differences)
    # CHECKPOINT: programs compared with their loops marked, marked variants refused (by
    # message), programs with no for loop to mark
    checkpoint_compared: int = 0
    checkpoint_refused: dict = field(default_factory=dict)
    checkpoint_no_loops: int = 0
    rebound: dict = field(default_factory=dict)  # change between calls -> programs checked
    odd: int = 0  # programs checked with odd names (module globals, builtins of their own)
    complex: int = 0  # programs checked that compute through complex values
    numba_complex: int = 0  # those of them compared under Numba

    def add(self, seed, source, args, outcome: Outcome, features: frozenset = frozenset()) -> None:
        self.generated += 1
        if outcome.status == "skip":
            key = outcome.detail.split(":")[0][:60]
            self.skipped[key] = self.skipped.get(key, 0) + 1
        elif outcome.status == "refused":
            self.refused[outcome.detail] = self.refused.get(outcome.detail, 0) + 1
        else:
            self.checked += 1
            complex_inside = any(f.startswith("complex-") for f in features)
            self.complex += complex_inside
            if outcome.numba:
                refusals = [m for m in outcome.numba.values() if m]
                self.numba_compared += not refusals
                self.numba_complex += complex_inside and not refusals
                self.numba_refusing += bool(refusals)
                for m in refusals:
                    self.numba_refused[m] = self.numba_refused.get(m, 0) + 1
                for part, m in outcome.numba.items():
                    key = f"{part} {'refused' if m else 'compared'}"
                    self.numba_parts[key] = self.numba_parts.get(key, 0) + 1
                if outcome.numba_noise:
                    self.numba_noise.append((seed, outcome.numba_noise))
            if outcome.rebound:
                self.rebound[outcome.rebound] = self.rebound.get(outcome.rebound, 0) + 1
            self.odd += bool(re.match(r"\w+ = |def (sum|abs|len)\(", source))
            if outcome.checkpoint == "compared":
                self.checkpoint_compared += 1
            elif outcome.checkpoint == "no loops":
                self.checkpoint_no_loops += 1
            elif outcome.checkpoint == "refused":
                m = outcome.checkpoint_refusal
                self.checkpoint_refused[m] = self.checkpoint_refused.get(m, 0) + 1
            if outcome.failed:
                self.failures.append((seed, source, args, outcome))


def run(seeds, target: int | None = None, report: Report | None = None,
        progress: int = 0) -> Report:
    """Check the programs of ``seeds``; with ``target``, stop once that many were checked.
    With ``progress``, print a line every ``progress`` checked programs and every failure."""
    report = report or Report()
    t0 = time.time()
    for seed in seeds:
        source, args, features = generate(seed)
        outcome = check_program(source, args)
        report.add(seed, source, args, outcome, frozenset(features))
        if progress and outcome.failed:
            print(f"  seed {seed}: {outcome.kind}: {outcome.detail.splitlines()[0][:200]}",
                  flush=True)
        if progress and outcome.status not in ("skip", "refused") \
                and report.checked % progress == 0:
            compared = f", {report.numba_compared} compared under backend={BACKEND!r}" \
                if BACKEND != "python" else ""
            print(f"  {report.checked} programs, {len(report.failures)} disagreements"
                  f"{compared}, seed {seed}, {time.time() - t0:.0f} s", flush=True)
        if target is not None and report.checked >= target:
            break
        if SECONDS and time.time() - t0 > SECONDS:
            print(f"  stopped after {SECONDS:.0f} s (TRANSPILER_SOAK_SECONDS), seed {seed}",
                  flush=True)
            break
    return report


def describe(seed, source, args, outcome: Outcome) -> str:
    marked = f"--- marked (checkpoint) ---\n{outcome.marked}" if outcome.failed \
        and outcome.marked else ""
    return (f"seed {seed}: {outcome.kind}: {outcome.detail}\nargs = {args!r}\n"
            f"--- source ---\n{source}{marked}")


# The default run checks 200 programs: chunk c takes the first PER_CHUNK programs of seeds
# c * SEEDS_PER_CHUNK ... that are checked (not skipped or refused).
CHUNKS, PER_CHUNK, SEEDS_PER_CHUNK = 20, 10, 25


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_programs(chunk):
    report = run(range(chunk * SEEDS_PER_CHUNK, (chunk + 1) * SEEDS_PER_CHUNK), target=PER_CHUNK)
    if report.failures:
        pytest.fail("\n\n".join(describe(*f) for f in report.failures), pytrace=False)


def test_generator_stays_in_the_language():
    """Most generated programs are checked: few are refused or skipped."""
    report = run(range(1000, 1030))
    assert report.checked >= 20, (report.skipped, report.refused)


def _tally(counts: dict) -> dict:
    """Counts by message with names and numbers blanked, most frequent first."""
    out: dict = {}
    for message, n in counts.items():
        key = re.sub(r"-?(\b\d[\d.e+-]*|\b(inf|nan)\b)", "N", _normalise(message))
        out[key] = out.get(key, 0) + n
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def soak(n: int, seed0: int, shrink_first: bool = True) -> Report:
    global ONE_TANGENT_SHARE
    ONE_TANGENT_SHARE = 1.0
    t0 = time.time()
    every = 100 if BACKEND != "python" or CHECKPOINT else 500 if n >= 1000 else 0  # (slower)
    report = run(range(seed0, seed0 + 50 * n), target=n, progress=every)
    elapsed = time.time() - t0
    print(f"\n{report.checked} programs, {len(report.failures)} disagreements "
          f"(seeds {seed0}..., {report.generated} generated, "
          f"{sum(report.skipped.values())} skipped, {sum(report.refused.values())} refused, "
          f"{elapsed:.0f} s)")
    if DISABLE:
        print("generator constructs disabled:", ",".join(sorted(DISABLE)))
    print(f"complex inside: {report.complex} programs checked"
          + (f", {report.numba_complex} of them compared under Numba"
             if BACKEND in ("numba", "auto") else ""))
    print("skipped:", _tally(report.skipped))
    print("refused:", _tally(report.refused))
    print(f"odd names: {report.odd} programs checked read module globals named like generated "
          "names or call builtins of their own")
    print(f"changed between calls: {sum(report.rebound.values())} programs' gradients called "
          f"again after a change ({', '.join(f'{k} {v}' for k, v in sorted(report.rebound.items()))})")
    if BACKEND in ("numba", "auto"):
        parts = ", ".join(f"{k} {v}" for k, v in sorted(report.numba_parts.items()))
        print(f"numba: {report.numba_compared} programs compared under Numba (grad and jvp), "
              f"{report.numba_refusing} refused by Numba ({parts})")
        print(f"numba: {len(report.numba_noise)} programs differ from Python by rounding only "
              f"(within twice what a one-ulp nudge of NumPy's {', '.join(NUDGED[:3])}, ... "
              f"moves Python's numbers)")
        for seed, detail in report.numba_noise[:10]:
            print(f"  seed {seed}: {detail[:200]}")
        print("numba refused, most frequent first:")
        for message, count in list(_tally(report.numba_refused).items())[:15]:
            print(f"  {count:4d}  {message[:150]}")
    if CHECKPOINT:
        print(f"checkpoint: {report.checkpoint_compared} programs compared under checkpointing "
              f"(grad and value_and_grad), {sum(report.checkpoint_refused.values())} refused "
              f"with their loops marked, {report.checkpoint_no_loops} without a for loop to "
              f"mark (not compared)")
        print("checkpoint refused, most frequent first:")
        for message, count in list(_tally(report.checkpoint_refused).items())[:15]:
            print(f"  {count:4d}  {message[:150]}")
    groups: dict = {}
    for seed, _, _, o in report.failures:
        key = _signature(o) if o.kind == "crash" else (o.kind,)
        groups.setdefault(key, []).append(seed)
    print("failures by kind:")
    for key, seeds in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(seeds):4d}  {' | '.join(key)}  seeds {seeds[:12]}")
    if report.failures:
        seed, source, args, outcome = report.failures[0]
        print("first failure:\n" + describe(seed, source, args, outcome))
        if shrink_first:
            small = shrink(source, args, outcome)
            print("--- shrunk ---\n" + small)
            if outcome.marked:
                print("--- shrunk, marked (checkpoint) ---\n" + mark_loops(small, args)[0])
    return report


@pytest.mark.skipif(not os.environ.get("TRANSPILER_SOAK"), reason="set TRANSPILER_SOAK=N")
def test_soak():
    report = soak(int(os.environ["TRANSPILER_SOAK"]),
                  int(os.environ.get("TRANSPILER_SOAK_SEED", "100000")))
    assert not report.failures


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--seed":
        ONE_TANGENT_SHARE = 1.0
        src, a, feats = generate(int(sys.argv[2]))
        print(src, a, sorted(feats), sep="\n")
        out = check_program(src, a)
        print(out)
        if (out.failed or out.status == "refused") and "--shrink" in sys.argv:
            small = shrink(src, a, out)
            print(small)
            if out.marked:
                print(mark_loops(small, a)[0])
    else:
        soak(int(os.environ.get("TRANSPILER_SOAK", "200")),
             int(os.environ.get("TRANSPILER_SOAK_SEED", "100000")))
