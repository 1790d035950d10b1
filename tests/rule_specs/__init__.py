"""Spec tables of the rule families, one module per family.

Each module in this package defines ``SPECS: list[OpSpec]`` and may define
``FLOAT32: list[tuple[str, tuple]]`` (expression, argument shapes) for the float32 test;
``tests/test_rules.py`` checks every entry against finite differences. Expressions are in the
arguments ``a, b, c`` and may use ``np``, ``math``, ``cmath``, ``rt``, the record classes
``Rec`` and ``Pair`` (common.py) and SciPy's modules (``special``, ``si`` for
``scipy.integrate``, ``sla``, ``sp``, ``stats``...; each None when SciPy is not installed: a
module of scipy specs then defines none). ``make_args`` and
``build`` make a case's arguments and test function (every rule-table test uses them).
"""

from __future__ import annotations

import ast
import cmath
import importlib
import math
import pkgutil
import zlib

import numpy as np

import runtime
from tests.rule_specs.common import OpSpec, Pair, Rec
from tests.util import make, rand
from transpiler.implicit import FIXED_POINT, ROOT_SYSTEM, ROOTS, STATIONARY, UNDER_INTEGRAL

try:
    import scipy.stats as stats
except ImportError:
    stats = None
try:
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
except ImportError:
    sp = spla = None
try:
    import scipy.integrate as si
except ImportError:
    si = None
try:
    import scipy.fft as sfft
    import scipy.linalg as sla
    import scipy.special as special
except ImportError:  # the scipy.special, scipy.fft and scipy.linalg rules are not either
    special = sfft = sla = None

ARG_NAMES = "abc"


def bowl(x, a, b):
    """An objective whose minimum in ``x`` is ``a`` (rt.implicit_minimum's spec)."""
    return np.sum(b * np.cosh(x - a))


def ramp(t, a):
    """An integrand, ``sum(a) t^2 + t``: its integral from 0 to b is ``sum(a) b^3 / 3 + b^2 / 2``
    (rt.integral's spec)."""
    return np.sum(a) * t ** 2 + t


def shrink(t, y, b):
    """A right-hand side, ``y' = -b y``: ``y(t) = y0 exp(-b t)`` (rt.ode_solution's spec)."""
    return -b * y


def halve(x, a, b):
    """A loop body ``x <- x / 2 + a b``: its fixed point is ``2 a b`` (rt.fixed_point's spec)."""
    return 0.5 * x + a * b


def settle(x, a):
    """A loop body ``x <- tanh(x) / 2 + a``, a contraction (rt.fixed_point's spec)."""
    return 0.5 * np.tanh(x) + a


def settled(a):
    """The fixed point of ``settle`` for ``a``, to machine precision."""
    x = np.zeros(np.shape(a))
    for _ in range(200):
        x = settle(x, a)
    return x


def cube(x, a):
    """``x^3 - a``, one equation per unknown: its root is ``cbrt(a)`` (rt.root_of's spec)."""
    return x ** 3 - a


_COUPLING = np.array([[3.0, 0.5, 0.0], [0.2, 2.5, 0.4], [0.0, 0.3, 2.0]])


def coupled(x, a, b):
    """A system ``M x + b tanh(x) - a`` (rt.root_of's spec)."""
    return _COUPLING @ x + b * np.tanh(x) - a


def coupled_root(a, b):
    """The root of ``coupled`` for ``a`` and ``b``, to machine precision (Newton's)."""
    x = np.zeros(3)
    for _ in range(60):
        jacobian = _COUPLING + np.diag(b * (1.0 - np.tanh(x) ** 2))
        x = x - np.linalg.solve(jacobian, coupled(x, a, b))
    return x


SPEC_GLOBALS = {"np": np, "math": math, "cmath": cmath, "special": special, "sfft": sfft,
                "sla": sla, "si": si, "sp": sp, "spla": spla, "stats": stats, "rt": runtime,
                "Rec": Rec, "Pair": Pair, "bowl": bowl, "stationary": STATIONARY, "ramp": ramp,
                "under_integral": UNDER_INTEGRAL, "shrink": shrink, "ode": UNDER_INTEGRAL,
                "halve": halve, "settle": settle, "settled": settled,
                "fixed_point_of": FIXED_POINT, "cube": cube, "coupled": coupled,
                "coupled_root": coupled_root, "roots_of": ROOTS, "root_of": ROOT_SYSTEM}


def runs_here(expr: str) -> bool:
    """Whether every ``np.x.y`` / ``math.x`` / ``special.x`` that ``expr`` names exists on this
    Python and NumPy (``np.vecdot`` is NumPy 2 only, ``math.cbrt`` Python 3.11+)."""
    for node in ast.walk(ast.parse(expr)):
        path = []
        while isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        if path and isinstance(node, ast.Name) and SPEC_GLOBALS.get(node.id) is not None:
            obj = SPEC_GLOBALS[node.id]
            for part in reversed(path):
                if not hasattr(obj, part):
                    return False
                obj = getattr(obj, part)
    return True


def discovered(table: str = "SPECS") -> list:
    """The list ``table`` of every module of this package (if it has one), in name order, less
    the entries for functions this Python or NumPy does not have (``common.newer`` gave them no
    key, or their expression names a missing function): those rules are not registered here."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name != "common":
            found += getattr(importlib.import_module(f"{__name__}.{info.name}"), table, [])
    return here(found)


def here(entries: list) -> list:
    """``entries`` less those for functions or keywords this Python or NumPy does not have."""
    return [entry for entry in entries if entry is not None and runs_here(_expression(entry))
            and not _needs_newer_numpy(entry)]


def _needs_newer_numpy(entry) -> bool:
    oldest = getattr(entry, "numpy", None)
    return oldest is not None and np.lib.NumpyVersion(np.__version__) < oldest


def _expression(entry) -> str:
    expr = entry[0] if isinstance(entry, tuple) else entry.expr
    return expr.replace("; ", "\n")


# --- building a case's arguments and test function -------------------------------------------

def case_seed(text: str) -> int:
    """A case's random seed, from its text (the same on every run)."""
    return zlib.crc32(text.encode())


def make_args(spec: OpSpec, shapes, seed: int, dtype=float) -> tuple:
    """Arguments for one case: Python floats for shape (), arrays otherwise."""
    rng = np.random.default_rng(seed)
    args = []
    for i, shape in enumerate(shapes):
        if i in spec.bools:
            cond = rng.random(shape) < 0.5
            args.append(bool(cond) if shape == () else cond)
            continue
        lo, hi = spec.arg_domain(i)
        x = rng.uniform(lo, hi, size=shape)
        if i in spec.signed:
            x = x * rng.choice([-1.0, 1.0], size=shape)
        args.append(float(x) if shape == () else np.asarray(x, dtype=dtype))
    return tuple(args)


def build(expr: str, args: tuple, seed: int, u_dtype=float):
    """The scalar test function of ``expr``: itself if scalar-valued, else a random VJP.

    ``expr`` may start with statements separated by "; " (``c = a * 1.0; c[1] = b; c``)."""
    names = ARG_NAMES[:len(args)]
    *statements, expr = expr.split("; ")
    scope = {n: a.copy() if isinstance(a, np.ndarray) else a
             for n, a in zip(names, args, strict=True)}
    scope.update(SPEC_GLOBALS)  # one namespace: comprehensions see the arguments
    exec("\n".join(statements), scope)
    value = eval(expr, scope)
    params = ", ".join(names)
    prelude = "".join(f"    {line}\n" for line in statements)
    if np.ndim(value) == 0:
        return make(f"def f({params}):\n{prelude}    return {expr}\n", **SPEC_GLOBALS)
    u = rand(np.shape(value), -1.0, 1.0, seed=seed).astype(u_dtype)
    return make(f"def f({params}):\n{prelude}    return np.sum(({expr}) * u)\n", u=u,
                **SPEC_GLOBALS)
