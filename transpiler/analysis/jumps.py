"""Where an integrand or an ODE's right-hand side jumps (or bends) at a point that moves.

Differentiating under the integral sign integrates the integrand's derivative point by point.
Where the integrand jumps at a point ``c(p)`` that moves with the differentiated values
(``np.where(t > c, ...)``), its derivative has a term ``(f(c-) - f(c+)) dc/dp`` there that no
point sees: the pointwise derivative is silently wrong. A kink that moves (``abs(t - c)``) is
right in the first derivative and wrong in the second (its derivative jumps). An ODE's
right-hand side that switches on the state (``np.where(y > 1, ...)``) or at a time that moves
makes the solution's sensitivities jump at the switch, which an adjoint solved through it does
not see either.

This analysis reads the function's source (a lambda, a function defined inside, one of the
module, and the functions of yours it calls, a few deep) and tags each value with what it
depends on: ``"t"`` (the integration variable, or an ODE's time), ``"y"`` (an ODE's state) and
``"p"`` (a value that varies with the differentiated arguments). A discontinuity is a
comparison, a test, ``%``, ``//`` or a call of ``floor``, ``sign``, ``where``'s condition and
their kin; a kink is ``abs``, ``maximum``, ``clip`` and their kin. ``moving(tags)`` says which
sites the caller refuses: for an integral, those depending on both ``t`` and ``p``; for an ODE,
those depending on ``y``, or on both ``t`` and ``p``.

>>> import gast
>>> fn = gast.parse("def f(t, c):\\n    bend = abs(t - c)\\n"
...                 "    return np.where(t > 1.0, bend, 0.0) + (t > c)").body[0]
>>> found = discontinuities(fn, {"t": T, "c": P}, {"np": np}, lambda tags: {T, P} <= tags)
>>> [gast.unparse(n).strip() for n in found.jumps], [gast.unparse(n).strip() for n in found.kinks]
(['t > c'], ['abs(t - c)'])
"""

from __future__ import annotations

import builtins
import inspect
import math
from dataclasses import dataclass, field

import gast
import numpy as np

T, Y, P = "t", "y", "p"
_NONE: frozenset = frozenset()

_JUMPS = {np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix, np.sign,
          np.heaviside, np.mod, np.remainder, np.fmod, np.floor_divide, np.greater,
          np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal, np.isclose,
          np.logical_and, np.logical_or, np.logical_not, np.logical_xor, math.floor, math.ceil,
          math.trunc, math.fmod, builtins.round, builtins.int, builtins.bool}
_CONDITIONED = {np.where: 0, np.select: 0, np.piecewise: 1}  # the condition's argument
_KINKS = {np.abs, np.absolute, np.fabs, np.maximum, np.minimum, np.fmax, np.fmin, np.clip,
          np.max, np.min, np.amax, np.amin, np.sort, np.median, builtins.abs, builtins.max,
          builtins.min, math.fabs}
_DEPTH = 3


@dataclass
class Found:
    jumps: list = field(default_factory=list)  # nodes (a callee's: the call that reaches it)
    kinks: list = field(default_factory=list)
    where: dict = field(default_factory=dict)  # id(node) -> "in helper"

    def add(self, sites: list, node) -> None:
        if not any(n is node for n in sites):  # (a loop's body is walked more than once)
            sites.append(node)


def discontinuities(fn, tags: dict, namespace: dict, moving, depth: int = 0,
                    found: Found | None = None) -> Found:
    """The jumps and kinks of ``fn`` (a gast FunctionDef or Lambda) that ``moving`` selects,
    its parameters tagged by ``tags`` (name -> tag, or a set of tags), other names read from
    ``namespace`` (constants: untagged) or, when ``tags`` gives them, from the caller."""
    found = Found() if found is None else found
    walker = _Walker({k: frozenset([v]) if isinstance(v, str) else frozenset(v)
                      for k, v in tags.items()}, namespace, moving, depth, found)
    if isinstance(fn, gast.Lambda):
        walker.returned |= walker.expr(fn.body)
    else:
        for _ in range(3):  # (loops: what a name depends on grows to a fixed point)
            before = dict(walker.env)
            walker.block(fn.body)
            if walker.env == before:
                break
    return found


def varied(fn, wrt) -> set[str]:
    """The names of ``fn`` (a gast FunctionDef) that vary with its parameters ``wrt`` (all of
    them for None): bound, directly or through others, from an expression reading one."""
    params = [a.id for a in fn.args.args + fn.args.kwonlyargs]
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            params.append(extra.id)
    walker = _Walker({p: frozenset([P]) for p in (params if wrt is None else wrt)}, {},
                     lambda tags: False, _DEPTH, Found())
    for _ in range(3):
        before = dict(walker.env)
        walker.block(fn.body)
        if walker.env == before:
            break
    return {name for name, tags in walker.env.items() if P in tags}


class _Walker:
    def __init__(self, env: dict, namespace: dict, moving, depth: int, found: Found):
        self.env, self.namespace, self.moving = env, namespace, moving
        self.depth, self.found = depth, found
        self.returned: frozenset = _NONE
        self.seen: set = set()

    # --- statements ---

    def block(self, body: list) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt) -> None:
        if isinstance(stmt, (gast.FunctionDef, gast.ClassDef, gast.Import, gast.ImportFrom)):
            return
        if isinstance(stmt, gast.Assign):
            tags = self.expr(stmt.value)
            for target in stmt.targets:
                self.bind(target, tags)
        elif isinstance(stmt, (gast.AugAssign, gast.AnnAssign)):
            tags = self.expr(stmt.value) if stmt.value is not None else _NONE
            if isinstance(stmt, gast.AugAssign):
                tags |= self.expr(stmt.target)
                self.operator(stmt.op, tags, stmt)
            self.bind(stmt.target, tags)
        elif isinstance(stmt, gast.For):
            self.bind(stmt.target, self.expr(stmt.iter))
            self.block(stmt.body)
            self.block(stmt.orelse)
        elif isinstance(stmt, (gast.If, gast.While)):
            self.test(stmt.test)
            self.block(stmt.body)
            self.block(stmt.orelse)
        elif isinstance(stmt, gast.Return) and stmt.value is not None:
            self.returned |= self.expr(stmt.value)
        elif isinstance(stmt, (gast.With, gast.Try)):
            self.block(stmt.body)
            for part in getattr(stmt, "handlers", []):
                self.block(part.body)
            self.block(getattr(stmt, "orelse", []))
            self.block(getattr(stmt, "finalbody", []))
        else:
            for child in gast.iter_child_nodes(stmt):
                if isinstance(child, gast.expr):
                    self.expr(child)

    def bind(self, target, tags: frozenset) -> None:
        if isinstance(target, gast.Name):
            self.env[target.id] = self.env.get(target.id, _NONE) | tags
        elif isinstance(target, (gast.Tuple, gast.List)):
            for element in target.elts:
                self.bind(element.value if isinstance(element, gast.Starred) else element, tags)
        elif isinstance(target, (gast.Subscript, gast.Attribute)):  # (x[i] = v: x holds v)
            root = target
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            self.expr(target)
            self.bind(root, tags)

    # --- expressions ---

    def test(self, node) -> None:
        tags = self.expr(node)
        if not isinstance(node, gast.Compare) and self.moving(tags):
            self.found.add(self.found.jumps, node)

    def operator(self, op, tags: frozenset, node) -> None:
        if isinstance(op, (gast.Mod, gast.FloorDiv)) and self.moving(tags):
            self.found.add(self.found.jumps, node)

    def expr(self, node) -> frozenset:
        if node is None:
            return _NONE
        if isinstance(node, gast.Name):
            return self.env.get(node.id, _NONE)
        if isinstance(node, gast.Constant):
            return _NONE
        if isinstance(node, (gast.Lambda, gast.ListComp, gast.GeneratorExp, gast.SetComp,
                             gast.DictComp)):
            return self.generic(node)
        if isinstance(node, gast.Compare):
            tags = self.expr(node.left)
            for other in node.comparators:
                tags |= self.expr(other)
            if self.moving(tags):
                self.found.add(self.found.jumps, node)
            return tags
        if isinstance(node, gast.IfExp):
            self.test(node.test)
            return self.expr(node.test) | self.expr(node.body) | self.expr(node.orelse)
        if isinstance(node, gast.BinOp):
            tags = self.expr(node.left) | self.expr(node.right)
            self.operator(node.op, tags, node)
            return tags
        if isinstance(node, gast.Call):
            return self.call(node)
        return self.generic(node)

    def generic(self, node) -> frozenset:
        tags = _NONE
        for child in gast.iter_child_nodes(node):
            if isinstance(child, gast.expr):
                tags |= self.expr(child)
            elif isinstance(child, gast.comprehension):
                tags |= self.expr(child.iter)
                self.bind(child.target, self.expr(child.iter))
                for condition in child.ifs:
                    self.test(condition)
            elif isinstance(child, gast.keyword):
                tags |= self.expr(child.value)
        return tags

    def call(self, node) -> frozenset:
        positional = [self.expr(a.value if isinstance(a, gast.Starred) else a)
                      for a in node.args]
        keywords = {k.arg: self.expr(k.value) for k in node.keywords}
        receiver = self.expr(node.func.value) if isinstance(node.func, gast.Attribute) \
            else _NONE
        tags = receiver.union(*positional, *keywords.values())
        func = self.resolve(node.func)
        try:
            jump, kink = func in _JUMPS, func in _KINKS
            conditioned = _CONDITIONED.get(func)
        except TypeError:  # (an unhashable value)
            jump = kink = False
            conditioned = None
        if jump and self.moving(tags):
            self.found.add(self.found.jumps, node)
        if kink and self.moving(tags):
            self.found.add(self.found.kinks, node)
        if conditioned is not None and len(positional) > conditioned \
                and self.moving(positional[conditioned]):
            self.found.add(self.found.jumps, node)
        if inspect.isfunction(func) and self.depth < _DEPTH and func not in self.seen:
            self.seen.add(func)
            self.callee(node, func, positional, keywords)
        return tags

    def callee(self, node, func, positional: list, keywords: dict) -> None:
        """The sites inside a function of the user's that this call reaches, its parameters
        tagged by the arguments; reported at the call."""
        from transpiler.frontend import parse_function

        try:
            definition = parse_function(func)[0]
            parameters = list(inspect.signature(func).parameters)
        except Exception:  # (no source: a builtin, a compiled function)
            return
        tags = dict(zip(parameters, positional, strict=False))
        tags.update((k, v) for k, v in keywords.items() if k is not None)
        inner = Found()
        discontinuities(definition, tags, func.__globals__, self.moving, self.depth + 1, inner)
        where = f"in {func.__qualname__}"
        if inner.jumps:
            self.found.add(self.found.jumps, node)
            self.found.where[id(node)] = where
        if inner.kinks:
            self.found.add(self.found.kinks, node)
            self.found.where.setdefault(id(node), where)

    def resolve(self, node):
        """The object a call's function names (None when it is not a module's name)."""
        path = []
        while isinstance(node, gast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or node.id in self.env:
            return None
        value = self.namespace.get(node.id, getattr(builtins, node.id, None))
        for attr in reversed(path):
            value = getattr(value, attr, None)
        return value
