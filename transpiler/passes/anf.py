"""One operation per statement (administrative normal form) for every value that may vary.

Postcondition: each assignment whose value may depend on a differentiated argument has one of
the forms

    y = a                      y = a.attr
    y = a op b                 y = f(a, b, key=c)
    y = op a                   (anything else: left whole, refused later if active)

where ``a``, ``b``, ``c`` are names, numbers, or inactive cheap expressions (``n - 1``,
``x.shape[0]``). ``return`` returns a name, a constant or a tuple of those, an ``if`` tests a
name, and a ``for`` loop iterates over a name bound to its ``range(...)`` just before it (so the
adjoint can walk it backwards). Values that cannot vary are left as the user wrote them.

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> ctx = SimpleNamespace(namer=Namer({"x", "y", "np"}), wrt=("x",))
>>> fn = gast.parse("def f(x, y):\\n    return x * y + np.sin(x) * (y - 1)").body[0]
>>> print(to_source(anf(fn, ctx)))
def f(x, y):
    _t1 = x * y
    _t2 = np.sin(x)
    _t3 = _t2 * (y - 1)
    _t4 = _t1 + _t3
    return _t4
"""

from __future__ import annotations

import operator

import gast

from transpiler import ast_util as A
from transpiler.anno import Anno, getanno, hasanno, setanno
from transpiler.passes.checkpoint import is_checkpointed_loop
from transpiler.rules.registry import is_user_function

_OPERATIONS = (gast.BinOp, gast.UnaryOp, gast.Call, gast.Attribute, gast.Subscript)


def anf(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    fn.body = _block(fn.body, ctx, _varying(fn, ctx.wrt))
    return fn


def _varying(fn, wrt) -> set[str]:
    """Names that may depend on ``wrt`` (flow-insensitive, to a fixed point)."""
    varying = set(wrt)
    edges = [({n.id for t in stmt.targets for n in A.walk(t) if isinstance(n, gast.Name)},
              {n.id for n in A.walk(stmt.value) if isinstance(n, gast.Name)})
             for stmt in A.walk(fn) if isinstance(stmt, gast.Assign)]
    changed = True
    while changed:
        changed = False
        for targets, mentioned in edges:
            if mentioned & varying and not targets <= varying:
                varying |= targets
                changed = True
    return varying


def _block(stmts: list, ctx, varying: set[str]) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.For)):
            field = "test" if isinstance(stmt, gast.If) else "iter"
            value = getattr(stmt, field)
            if not A.is_atom(value) and not hasanno(stmt, Anno.WITH):  # (a with's manager)
                flat = _ANF(ctx, varying, stmt)
                setattr(stmt, field, A.name(flat.emit(value)))
                out.extend(flat.out)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = _block(stmt.body, ctx, varying)
            stmt.orelse = _block(stmt.orelse, ctx, varying)
            out.append(stmt)
        else:
            out.extend(_ANF(ctx, varying, stmt).run())
    return out


def _mentions(node, names: set[str]) -> bool:
    return any(isinstance(n, gast.Name) and n.id in names for n in A.walk(node))


def _calls_user(call) -> bool:
    """Whether ``call`` calls one of the user's functions (or a method of the user's class)."""
    func = getanno(call, Anno.FUNC)
    return is_user_function(getattr(func, "__func__", func))


def _cheap(node) -> bool:
    """Inactive expressions worth repeating instead of naming (no calls)."""
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, gast.Attribute):
        return _cheap(node.value)
    if isinstance(node, gast.Subscript):
        return _cheap(node.value) and _cheap(node.slice)
    if isinstance(node, gast.UnaryOp):
        return _cheap(node.operand)
    if isinstance(node, gast.BinOp):
        return _cheap(node.left) and _cheap(node.right)
    if isinstance(node, gast.Tuple):
        return all(_cheap(e) for e in node.elts)
    if isinstance(node, gast.Slice):
        return all(_cheap(p) for p in (node.lower, node.upper, node.step) if p is not None)
    return False


class _ANF:
    def __init__(self, ctx, varying: set[str], stmt):
        self.ctx, self.varying, self.stmt = ctx, varying, stmt
        self.out: list = []

    def run(self) -> list:
        stmt = self.stmt
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], (gast.Tuple, gast.List)) \
                and _mentions(stmt.value, self.varying) \
                and not isinstance(stmt.value, (gast.Tuple, gast.List)) \
                and not is_user_function(getanno(stmt.value, Anno.FUNC)) \
                and not is_checkpointed_loop(stmt.value):
            return self.unpack(stmt)  # a, b = pair -> a = pair[0]; b = pair[1]
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], (gast.Tuple, gast.List)) \
                and isinstance(stmt.value, gast.Call) and _mentions(stmt.value, self.varying):
            stmt.value = self.operation(stmt.value)  # a, b = helper(x * 2): operands named
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and _mentions(stmt.value, self.varying):
            value = stmt.value
            stmt.value = A.name(self.branch(value)) if isinstance(value, gast.IfExp) \
                else self.operation(value)
        elif isinstance(stmt, gast.Return) and isinstance(stmt.value, gast.Tuple):
            stmt.value.elts = [e if A.is_atom(e) else A.name(self.emit(
                self.operation(e) if _mentions(e, self.varying) else e)) for e in stmt.value.elts]
        elif isinstance(stmt, gast.Return) and isinstance(stmt.value, gast.IfExp) \
                and _mentions(stmt.value, self.varying):
            stmt.value = A.name(self.branch(stmt.value))
        elif isinstance(stmt, gast.Return) and not A.is_atom(stmt.value):
            value = stmt.value
            if _mentions(value, self.varying):
                value = self.operation(value)
            stmt.value = A.name(self.emit(value))
        self.out.append(stmt)
        return self.out

    def unpack(self, stmt) -> list:
        source = self.atom(stmt.value)
        for i, element in enumerate(stmt.targets[0].elts):
            if not isinstance(element, gast.Name):
                return self.out + [stmt]  # nested or starred: refused by the reverse pass
            item = gast.Subscript(value=A.copy_node(source), slice=A.const(i), ctx=gast.Load())
            new = gast.copy_location(A.assign(element.id, item), stmt)
            setanno(new, Anno.ORIGIN, getanno(stmt, Anno.ORIGIN, stmt))
            self.out.append(new)
        return self.out

    def emit(self, value) -> str:
        name = self.ctx.namer.temp()
        like = value if hasattr(value, "lineno") else self.stmt
        new = gast.copy_location(A.assign(name, value), like)
        setanno(new, Anno.ORIGIN, getanno(self.stmt, Anno.ORIGIN, self.stmt))
        self.out.append(new)
        return name

    def atom(self, node):
        """An operand: a name, a number or a cheap inactive expression; anything else is named."""
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) \
                and isinstance(node.operand, gast.Constant) \
                and type(node.operand.value) in (int, float):
            return A.const(-node.operand.value)
        if A.is_atom(node) or (_cheap(node) and not _mentions(node, self.varying)):
            return node
        if isinstance(node, (gast.Tuple, gast.List)) and _mentions(node, self.varying):
            node.elts = [self.atom(e) for e in node.elts]  # a literal of operands stays one
            return node
        if isinstance(node, gast.IfExp) and _mentions(node, self.varying):
            return A.name(self.branch(node))
        if _mentions(node, self.varying):
            node = self.operation(node)
        return A.name(self.emit(node))

    def element(self, node):
        """An element of a container literal: an atom, with nested literals named too."""
        if isinstance(node, (gast.Tuple, gast.List, gast.Dict)) and _mentions(node, self.varying):
            return A.name(self.emit(self.operation(node)))
        return self.atom(node)

    def branch(self, node: gast.IfExp) -> str:
        """``a if c else b`` -> ``if c: t = a`` / ``else: t = b`` (only one side is evaluated)."""
        test = self.atom(node.test)
        if not isinstance(test, gast.Name):
            test = A.name(self.emit(test))
        result = self.ctx.namer.temp()
        sides = []
        for value in (node.body, node.orelse):
            side = _ANF(self.ctx, self.varying, self.stmt)
            side.out.append(A.assign(result, side.atom(value), like=self.stmt))
            setanno(side.out[-1], Anno.ORIGIN, getanno(self.stmt, Anno.ORIGIN, self.stmt))
            sides.append(side.out)
        branch = gast.copy_location(gast.If(test=test, body=sides[0], orelse=sides[1]), node)
        setanno(branch, Anno.ORIGIN, getanno(self.stmt, Anno.ORIGIN, self.stmt))
        self.out.append(branch)
        return result

    def operation(self, node):
        """``node`` with atomic operands (one operation); operands are named first."""
        if isinstance(node, gast.BinOp):
            node.left, node.right = self.atom(node.left), self.atom(node.right)
        elif isinstance(node, gast.UnaryOp):
            node.operand = self.atom(node.operand)
        elif isinstance(node, gast.Call) and getanno(node, Anno.FUNC) is operator.setitem:
            array, index, value = node.args
            node.args = [self.atom(array), self.index(index), self.atom(value)]
        elif isinstance(node, gast.Call):
            if isinstance(node.func, gast.Attribute) and (
                    _mentions(node.func, self.varying) or isinstance(node.func.value, gast.Call)):
                # a method's receiver: x.T.dot(w); one that is a call's result too, varying or
                # not (splu(A).solve(b): the rules see the factorization by name)
                node.func.value = self.atom(node.func.value)
            # a helper of the user's receives a literal's value by name: energy((x, y))
            operand = self.element if _calls_user(node) else self.atom
            node.args = [gast.Starred(value=self.atom(a.value), ctx=gast.Load())
                         if isinstance(a, gast.Starred) else operand(a) for a in node.args]
            for kw in node.keywords:
                kw.value = operand(kw.value)
        elif isinstance(node, (gast.Tuple, gast.List)):  # a container of operands
            node.elts = [self.element(e) for e in node.elts]
        elif isinstance(node, gast.Dict):
            node.keys = [k if k is None or _cheap(k) else A.name(self.emit(k)) for k in node.keys]
            node.values = [self.element(v) for v in node.values]
        elif isinstance(node, gast.Attribute):
            node.value = self.atom(node.value)
        elif isinstance(node, gast.Subscript):
            node.value = self.atom(node.value)
            node.slice = self.index(node.slice)
        return node

    def index(self, node):
        """An index: cheap parts stay inline, anything else is named (slices part by part)."""
        if isinstance(node, gast.Slice):
            for part in ("lower", "upper", "step"):
                if getattr(node, part) is not None:
                    setattr(node, part, self.index(getattr(node, part)))
            return node
        if isinstance(node, gast.Tuple):
            node.elts = [self.index(e) for e in node.elts]
            return node
        if _cheap(node):
            return node
        return A.name(self.emit(self.operation(node) if _mentions(node, self.varying) else node))
