"""Refuse complex values that a differentiated computation would carry through real rules.

Every rule is written for real numbers: ``np.abs``'s adjoint is ``sign(x) * g``, a gradient is
``float(bx)``. A complex value reaching one of them gives a wrong number, not an error, so this
pass finds, before any rule is applied, each value that may be complex and refuses the first
differentiated statement that reads one, at its line. A value may be complex when it is a
complex literal (``1j``), the result of a call that makes complex values (``complex(a, b)``,
``np.fft.fft``, ``cmath.exp``, ``np.linalg.eig``, ``dtype=complex``, ``.astype(complex)``), a
global or closure variable holding one, a parameter the variant knows to be a complex array, or
computed from any of those. ``np.abs``, ``np.real``, ``np.imag``, ``np.angle``, ``.real`` and
``.imag`` give real values, so complex data that is not differentiated may still be used:

>>> from types import SimpleNamespace
>>> from transpiler.errors import TranspileError
>>> fn = gast.parse("def f(x, c):\\n    w = (c * 1j).imag\\n    y = x * w\\n    return y").body[0]
>>> ctx = SimpleNamespace(wrt=("x",), arrays={}, bindings={}, fn=None, indent=0,
...                       filename="f.py", facts=None, lookup={}.__getitem__)
>>> check_complex(fn, ctx) is fn
True
>>> fn = gast.parse("def f(x, c):\\n    z = c * 1j\\n    y = x * z\\n    return y").body[0]
>>> try:
...     check_complex(fn, ctx)
... except TranspileError as e:
...     print(e.msg.splitlines()[0])
complex numbers are not supported yet: 'z' may be complex here (from line 2), and the gradient would carry it through rules for real numbers
"""

from __future__ import annotations

import builtins
import cmath

import gast
import numpy as np

from transpiler import ast_util as A
from transpiler.analysis.activity import activity
from transpiler.anno import Anno, getanno
from transpiler.errors import error_at
from transpiler.passes import tape

# calls whose result is real whatever their argument (and .real / .imag below)
_REAL_RESULTS = frozenset({np.abs, np.absolute, builtins.abs, np.real, np.imag, np.angle,
                           np.isreal, np.iscomplex, np.iscomplexobj, np.isrealobj, np.isnan,
                           np.isfinite, np.isinf, np.linalg.norm, np.shape, np.ndim, np.size,
                           len, builtins.isinstance, np.fft.fftfreq, np.fft.rfftfreq})
_COMPLEX_RESULTS = frozenset({builtins.complex, np.linalg.eig, np.linalg.eigvals, np.roots,
                              np.vectorize})
_COMPLEX_MODULES = ("cmath", "numpy.fft", "scipy.fft", "numpy.lib.scimath", "numpy.emath",
                    "numpy.lib._scimath_impl")
_REAL_ATTRIBUTES = frozenset({"real", "imag", "shape", "ndim", "size", "dtype"})


def check_complex(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if tape.is_generated(getattr(ctx, "fn", None)):
        return fn  # a gradient differentiated again: its values are those of a checked one
    found = _Complex(fn, ctx)
    if not found.origins:
        return fn
    _, varied = activity(fn.body, tuple(ctx.wrt), [])
    for stmt in A.walk(fn):
        if not isinstance(stmt, gast.Assign):
            continue
        targets = {n.id for t in stmt.targets for n in A.walk(t) if isinstance(n, gast.Name)}
        source = found.source(stmt.value)
        if source is None or not (targets & varied or _reads(stmt.value) & varied):
            continue
        if isinstance(source, gast.Name) and found.origins.get(source.id) is fn:
            what = f"the argument '{source.id}' is complex"
        elif isinstance(source, gast.Name) and source.id in found.origins:
            origin = found.origins[source.id]
            variable = ctx.facts.variable(source.id) if ctx.facts else source.id
            what = f"'{variable}' may be complex here (from line {getattr(origin, 'lineno', '?')})"
        else:
            what = "this value is complex"
        raise error_at(source, ctx, f"complex numbers are not supported yet: {what}, and the "
                       "gradient would carry it through rules for real numbers",
                       "compute with the real and imaginary parts as two real values, or keep "
                       "complex values to data that is not differentiated (np.abs, np.real, "
                       "np.imag and np.angle of it are real)")
    return fn


def _reads(value) -> set[str]:
    return {n.id for n in A.walk(value) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


class _Complex:
    """The names of ``fn`` that may hold complex values, each with the node it comes from."""

    def __init__(self, fn: gast.FunctionDef, ctx) -> None:
        self.ctx = ctx
        self.assigned = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                         and isinstance(n.ctx, (gast.Store, gast.Param))}
        self.origins: dict[str, gast.AST] = {
            p: fn for p, (_, dtype) in getattr(ctx, "arrays", {}).items() if dtype[1] == "c"}
        defaults = getattr(getattr(ctx, "fn", None), "__defaults__", None) or ()
        params = [a.id for a in fn.args.args]
        for p, value in zip(params[len(params) - len(defaults):], defaults, strict=True):
            if _complex(value):
                self.origins[p] = fn
        assigns = [s for s in A.walk(fn) if isinstance(s, gast.Assign)]
        changed = True
        while changed:  # to a fixed point: loops carry complex values round
            changed = False
            for stmt in assigns:
                source = self.source(stmt.value)
                if source is None:
                    continue
                for t in stmt.targets:
                    for n in A.walk(t):
                        if isinstance(n, gast.Name) and n.id not in self.origins:
                            self.origins[n.id] = source
                            changed = True

    def source(self, node):
        """The first node in ``node`` that may be complex (None: it is real)."""
        if isinstance(node, gast.Constant):
            return node if isinstance(node.value, complex) else None
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            if node.id in self.origins:
                return node
            return node if node.id not in self.assigned and _complex(self._global(node.id)) \
                else None
        if isinstance(node, gast.Attribute) and node.attr in _REAL_ATTRIBUTES:
            return None
        if isinstance(node, (gast.Compare, gast.BoolOp)):
            return None
        if isinstance(node, gast.Call):
            func = getanno(node, Anno.FUNC)
            if _is(func, _REAL_RESULTS):
                return None
            if _makes_complex(func) or any(_complex_type(k.value, self)
                                           for k in node.keywords if k.arg == "dtype") \
                    or (isinstance(node.func, gast.Attribute) and node.func.attr == "astype"
                        and node.args and _complex_type(node.args[0], self)):
                return node
        for child in gast.iter_child_nodes(node):
            found = self.source(child)
            if found is not None:
                return found
        return None

    def _global(self, name: str):
        if name in getattr(self.ctx, "bindings", {}):
            return None
        try:
            return self.ctx.lookup(name)
        except (AttributeError, ValueError, KeyError):
            return None


def _is(func, table: frozenset) -> bool:
    try:
        return func in table
    except TypeError:  # unhashable callable
        return False


def _makes_complex(func) -> bool:
    if func is None:
        return False
    if _is(func, _COMPLEX_RESULTS) or (isinstance(func, type)
                                       and issubclass(func, np.complexfloating)):
        return True
    module = getattr(func, "__module__", None) or ""
    return func is not cmath.isfinite and any(module == m or module.startswith(m + ".")
                                              for m in _COMPLEX_MODULES) \
        and func not in (np.fft.fftfreq, np.fft.rfftfreq)


def _complex_type(node, found: _Complex) -> bool:
    """Whether a dtype argument names a complex type (``complex``, ``np.complex128``,
    ``"c16"``)."""
    if isinstance(node, gast.Constant) and isinstance(node.value, str):
        try:
            return np.dtype(node.value).kind == "c"
        except TypeError:
            return False
    value = None
    if isinstance(node, gast.Name):
        value = found._global(node.id) if node.id not in found.assigned else None
    elif isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
        value = getattr(found._global(node.value.id), node.attr, None)
    try:
        return value is not None and np.dtype(value).kind == "c"
    except TypeError:
        return False


def _complex(value) -> bool:
    """Whether a global's value is complex (a number, a NumPy value, or a list or tuple of
    them)."""
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    if isinstance(value, (list, tuple)):
        return any(_complex(v) for v in value[:64])
    if isinstance(value, dict):
        return any(_complex(v) for v in list(value.values())[:64])
    return False
