"""Instantiate a rule template at one call site.

Parameters become the call's arguments (names or constants, as ANF guarantees), ``d[ans]``
becomes the result's adjoint, ``d[x] = e`` becomes a partial for ``x`` (dropped when ``x`` is
inactive or constant), names local to the template get fresh names, and the modules a template
uses are bound in the generated function under non-colliding names. Small simplifications make
the output read like hand-written code: constant arithmetic is folded, ``e ** 1`` is ``e``, and
``rt.unbroadcast(e, x)`` is just ``e`` when every other operand is a scalar constant.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.scalars import is_number, is_scalar, selects_entry, selects_once
from transpiler.anno import Anno, getanno, setanno
from transpiler.rules.registry import Rule

_ANS = object()
_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
         gast.Div: operator.truediv, gast.Pow: operator.pow}


def bind_call(rule: Rule, args: list, keywords: dict) -> dict[str, gast.AST]:
    """Map each template parameter to the call-site node (or a Constant of its default)."""
    bound = rule.signature.bind(_ANS, *args, **keywords)  # TypeError if the call does not fit
    bound.apply_defaults()
    out = {}
    for param, value in list(bound.arguments.items())[1:]:
        out[param] = value if isinstance(value, gast.AST) else A.const(value)
    return out


class _Builder:
    """Copy a template statement in one pass: substitute names, expand ``d[ans]``, fold
    constants, drop default arguments and mark calls pure."""

    def __init__(self, bound: dict, ans: str, grad_ans: str | None, locals_: dict, names,
                 tangents: dict | None = None, scalars: frozenset[str] = frozenset(),
                 replaced: Callable | None = None):
        self.bound, self.ans, self.grad_ans, self.scalars = bound, ans, grad_ans, scalars
        self.locals, self.names = locals_, names
        self.replaced = replaced  # a call's function, where its dotted name now means another
        self.tangents = tangents  # forward mode: parameter -> its tangent's expression
        self.slopes: set[int] = set()  # ids of folded constant pow_slopes, y * x ** (y - 1)
        self.entries: set[int] = set()  # ids of g[i, j] read of a sparse matrix's gradient

    def build(self, node):
        if isinstance(node, list):
            return [self.build(n) for n in node]
        if not isinstance(node, gast.AST):
            return node
        if isinstance(node, gast.Name):
            if node.id in self.bound:
                return A.copy_node(self.bound[node.id])
            if node.id == "ans":
                return A.name(self.ans)
            if node.id in self.locals:
                return A.name(self.locals[node.id], store=isinstance(node.ctx, gast.Store))
            return A.name(self.names(node.id))
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and node.value.id == "d":  # d[ans], or d[x] in a tangent rule
            if self.tangents is not None:
                return A.copy_node(self.tangents[node.slice.id])
            return A.name(self.grad_ans)
        new = type(node).__new__(type(node))
        for field in node._fields:
            setattr(new, field, self.build(getattr(node, field, None)))
        for attribute in node._attributes:
            if hasattr(node, attribute):
                setattr(new, attribute, getattr(node, attribute))
        if "_anno" in node.__dict__:
            new._anno = dict(node._anno)
        if isinstance(new, gast.BinOp):
            if isinstance(new.op, gast.Mult) and id(new.right) in self.slopes:  # g * (2 * x)
                new.left = fold_binop(gast.BinOp(left=new.left, op=gast.Mult(),  # as g * 2 * x
                                                 right=new.right.left))
                new.right = new.right.right
            return fold_binop(new)
        if isinstance(new, gast.UnaryOp) and isinstance(new.op, gast.USub) \
                and is_number(new.operand):
            return A.const(-new.operand.value)
        if isinstance(new, gast.Call):
            if getanno(new, Anno.FUNC) is runtime.pow_slope and is_number(new.args[1]):
                slope = _constant_pow_slope(new.args[0], new.args[1].value)
                if isinstance(slope, gast.BinOp) and isinstance(slope.op, gast.Mult):
                    self.slopes.add(id(slope))
                return slope
            if getanno(new, Anno.FUNC) is runtime.written and len(new.args) == 2 \
                    and selects_once(new.args[1], self.scalars):  # no repeats: g[index]
                part = gast.Subscript(value=new.args[0], slice=A.index_syntax(new.args[1]),
                                      ctx=gast.Load())
                index = new.args[1].elts if isinstance(new.args[1], gast.Tuple) \
                    else [new.args[1]]
                if any(isinstance(i, gast.Call) for i in index):  # a slice: not a view of g,
                    part = A.call(A.attr(A.name(self.names("np")), "copy"), part)  # which is
                    setanno(part, Anno.FUNC, np.copy)  # zeroed next, in place
                return part
            if getanno(new, Anno.FUNC) is runtime.sparse_written and len(new.args) == 3 \
                    and selects_entry(new.args[1], self.scalars):  # one entry: g[i, j]
                entry = gast.Subscript(value=new.args[0], slice=A.index_syntax(new.args[1]),
                                       ctx=gast.Load())
                self.entries.add(id(entry))  # (a number)
                return entry
            if getanno(new, Anno.FUNC) is runtime.unbroadcast and id(new.args[0]) in \
                    self.entries and is_scalar(new.args[1], self.scalars):
                return new.args[0]  # (a number's gradient is a number)
            if self.replaced is not None:
                new.func = self.replaced(node) or new.func
            _drop_default_arguments(new)
            setanno(new, Anno.PURE)
        return new


def _constant_pow_slope(x, y):
    """``rt.pow_slope(x, y)`` of a constant ``y`` as the arithmetic it is: ``y * x ** (y - 1)``
    (``2 * x`` for ``y = 2``), 1 for ``y = 1`` and 0.0 for ``y = 0`` (``x ** 0`` is 1 everywhere:
    the formula would give ``0 * inf`` at 0)."""
    if y in (0, 1):
        return A.const(float(y))
    power = fold_binop(gast.BinOp(left=x, op=gast.Pow(), right=A.const(y - 1)))
    return fold_binop(gast.BinOp(left=A.const(y), op=gast.Mult(), right=power))


def _replaced(namespace, module_name: Callable[[str, object], str]) -> Callable:
    """For a template's call by a dotted name (``np.sin(x)``) that now means another object
    than when the rule was registered (a test replaced ``np.sin``), a name bound to the
    function the rule was written for; None for every other call."""
    def replaced(call: gast.Call):
        func, path, node = getanno(call, Anno.FUNC), [], call.func
        if func is None or not isinstance(node, gast.Attribute):
            return None
        while isinstance(node, gast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or node.id not in namespace:
            return None
        now = namespace[node.id]
        for part in reversed(path):
            now = getattr(now, part, None)
        if now is func:
            return None
        return A.name(module_name(getattr(func, "__name__", path[0]), func))

    return replaced


def _element_partials(elements, value, grad_of, fresh) -> list:
    """``d[xs] = e`` for a literal ``(a, b, c)``: ``_g = e``, then ``ba += _g[0]``, ...; for a
    nested literal (``np.array([[a, b], [b, a]])``), ``bb += _g[0][1]`` and so on."""
    paths = list(_element_paths(elements, ()))
    for e, _ in paths:
        if not isinstance(e, gast.Name) and any(
                grad_of(n.id) for n in A.walk(e) if isinstance(n, gast.Name)):
            raise AssertionError(f"compiler bug: active element {gast.unparse(e)!r} was not "
                                 "reduced to a name before the adjoint")
    grads = [(grad_of(e.id), path) for e, path in paths if isinstance(e, gast.Name)]
    if not any(g for g, _ in grads):
        return []
    pieces = fresh("_g")
    out = [A.assign(pieces, value)]
    for grad, path in grads:
        if grad is not None:
            part = A.name(pieces)
            for i in path:
                part = gast.Subscript(value=part, slice=A.const(i), ctx=gast.Load())
            out.append(A.assign(grad, part))
            setanno(out[-1], Anno.ACCUMULATE)
    return out


def _element_paths(elements, path: tuple):
    """``(element, its indices)`` of each element of a literal, nested ones walked into."""
    for i, e in enumerate(elements.elts):
        if isinstance(e, (gast.Tuple, gast.List)):
            yield from _element_paths(e, path + (i,))
        else:
            yield e, path + (i,)


def _unbroadcast_known(value: gast.Call, same_shape, scalars, module_name):
    """``rt.unbroadcast(e, x)`` -> ``e`` when their shapes are equal; ``rt.unbroadcast(g * y,
    x)`` -> ``np.vdot(g, y)`` for a scalar ``x`` and ``g``, ``y`` arrays of one shape (the sum
    of their products, as a person writes the gradient of a scalar factor)."""
    e, like = value.args[:2]
    if same_shape(e, like):
        return e
    if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Mult) and is_scalar(like, scalars) \
            and not is_scalar(e.left, scalars) and not is_scalar(e.right, scalars) \
            and same_shape(e.left, e.right) and not same_shape(e.left, like):
        vdot = A.attr(A.name(module_name("np", np)), "vdot")
        made = A.call(vdot, e.left, e.right)
        setanno(made, Anno.FUNC, np.vdot)
        setanno(made, Anno.PURE)
        return made
    return value


def _drop_ones(value, ones: str, temporaries: frozenset[str], arg, same_shape,
               floats: frozenset[str]):
    """``rt.unbroadcast(g * y, x)`` -> ``rt.unbroadcast(y, x)`` for an all-ones ``g``: the
    product is ``y`` broadcast, and unbroadcast restores ``x``'s shape either way. ``g * y``
    alone (the partial of ``x``, ``arg``) is ``y`` where ``y`` has ``x``'s shape and is one of
    the ``floats`` (a parameter's array among them: passes/finalize.py copies a gradient
    returned that may be it; not a bool array, whose sums are ``or``)."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult) \
            and same_shape is not None:
        for one, other in ((value.left, value.right), (value.right, value.left)):
            if isinstance(one, gast.Name) and one.id == ones and isinstance(other, gast.Name) \
                    and other.id in floats and same_shape(other, arg):
                return other
        return value
    if not (isinstance(value, gast.Call) and getanno(value, Anno.FUNC) is runtime.unbroadcast):
        return value
    product = value.args[0]
    if isinstance(product, gast.BinOp) and isinstance(product.op, gast.Mult):
        for one, other in ((product.left, product.right), (product.right, product.left)):
            if isinstance(one, gast.Name) and one.id == ones and isinstance(other, gast.Name) \
                    and other.id in temporaries:
                value.args[0] = other
                break
    return value


def _static_test(test, bound) -> bool | None:
    """Decide ``p is None`` / ``p is not None`` on a parameter at compile time."""
    if (isinstance(test, gast.Compare) and len(test.ops) == 1
            and isinstance(test.left, gast.Name) and test.left.id in bound
            and isinstance(test.comparators[0], gast.Constant) and test.comparators[0].value is None
            and isinstance(test.ops[0], (gast.Is, gast.IsNot))):
        arg = bound[test.left.id]
        is_none = isinstance(arg, gast.Constant) and arg.value is None
        return is_none if isinstance(test.ops[0], gast.Is) else not is_none
    return None


def _flatten(body, bound) -> list:
    out = []
    for stmt in body:
        if isinstance(stmt, gast.If):
            verdict = _static_test(stmt.test, bound)
            if verdict is None:
                raise TypeError("rule templates may only branch on 'param is None'")
            out.extend(_flatten(stmt.body if verdict else stmt.orelse, bound))
        else:
            out.append(stmt)
    return out


def instantiate(rule: Rule, bound: dict, ans: str, grad_of: Callable[[str], str | None],
                fresh: Callable[[str], str], module_name: Callable[[str, object], str],
                scalars: frozenset[str] = frozenset(), ones: frozenset[str] = frozenset(),
                temporaries: frozenset[str] = frozenset(),
                same_shape: Callable[[gast.AST, gast.AST], bool] | None = None,
                floats: frozenset[str] = frozenset()) -> list:
    """The adjoint statements of one call. Partials are Assigns annotated ACCUMULATE.

    ``scalars`` names variables known to be 0-d (see analysis.scalars). ``ones`` names
    gradients known to hold only ones (the seed of a sum): ``rt.unbroadcast(g * y, x)`` is then
    ``rt.unbroadcast(y, x)`` when ``y`` is one of the function's own ``temporaries``, and
    ``g * y`` of ``x``'s shape is ``y`` for the ``floats`` (active temporaries, float parameters
    never rebound).
    ``same_shape(a, b)`` tells when two expressions certainly have equal shapes (see
    analysis.shapes): ``rt.unbroadcast(e, x)`` is then ``e``.
    """
    locals_: dict[str, str] = {}
    namespace = rule.namespace

    def names(n: str) -> str:
        return module_name(n, namespace[n]) if n in namespace else n  # builtins keep their names

    scalar_params = {p for p, v in bound.items() if is_scalar(v, scalars)}
    builder = _Builder(bound, ans, grad_of(ans), locals_, names, scalars=scalars,
                       replaced=_replaced(namespace, module_name))
    stmts = []
    for stmt in _flatten(rule.body, bound):
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
        if isinstance(target, gast.Subscript):  # d[x] = ...
            arg = bound[target.slice.id]
            if isinstance(arg, (gast.Tuple, gast.List)):  # one partial per element
                stmts.extend(_element_partials(arg, builder.build(stmt.value), grad_of, fresh))
                continue
            partial_of = grad_of(arg.id) if isinstance(arg, gast.Name) else None
            if partial_of is None:
                if any(grad_of(n.id) for n in A.walk(arg) if isinstance(n, gast.Name)):
                    raise AssertionError(f"compiler bug: active argument {gast.unparse(arg)!r} "
                                         "was not reduced to a name before the adjoint")
                continue
            value = _elide_unbroadcast(stmt.value, target.slice.id, rule, bound, scalar_params)
            value = builder.build(value)
            if same_shape is not None and isinstance(value, gast.Call) \
                    and getanno(value, Anno.FUNC) is runtime.unbroadcast:
                value = _unbroadcast_known(value, same_shape, scalars, module_name)
            if grad_of(ans) in ones:
                value = _drop_ones(value, grad_of(ans), temporaries & floats, arg, same_shape,
                                   floats)
            new = A.assign(partial_of, value)
            setanno(new, Anno.ACCUMULATE)
        else:
            for n in A.walk(stmt):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    locals_.setdefault(n.id, fresh(n.id))
            new = builder.build(stmt)
        stmts.append(new)
    return stmts


def _drop_default_arguments(node: gast.Call) -> None:
    """``rt.unreduce(g, x, None, False)`` -> ``rt.unreduce(g, x)``: omit arguments that equal the
    callee's own defaults (where its signature is known). (The builder calls it on each call it
    builds, inner ones first.)"""
    func = getanno(node, Anno.FUNC)
    try:
        params = _parameters(func)
    except TypeError:  # unhashable callable
        return
    if params is None:
        return
    while node.args and len(node.args) <= len(params):
        param, arg = params[len(node.args) - 1], node.args[-1]
        if not (isinstance(arg, gast.Constant) and param.default is not param.empty
                and type(arg.value) is type(param.default) and arg.value == param.default):
            break
        node.args.pop()
    by_name = {p.name: p.default for p in params}
    if by_name.get("keepdims") is np._NoValue:  # NumPy's reductions: not passed is False
        by_name["keepdims"] = False
    node.keywords = [kw for kw in node.keywords if not (
        isinstance(kw.value, gast.Constant) and kw.arg in by_name
        and type(kw.value.value) is type(by_name[kw.arg])
        and kw.value.value == by_name[kw.arg])]


@functools.cache
def _parameters(func) -> list | None:
    try:
        return list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):  # no signature (C functions, ufuncs) or no func
        return None


def _elide_unbroadcast(value, param, rule, bound, scalars):
    """``rt.unbroadcast(e, x)`` -> ``e`` in the rule of an operator or ufunc (elementwise, so
    its result has the broadcast shape of its operands) when every other argument is a scalar or
    a constant, so the result has ``x``'s shape."""
    elementwise = isinstance(rule.key, np.ufunc) or (
        isinstance(rule.key, type) and issubclass(rule.key, gast.AST))
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and isinstance(value.func.value, gast.Name)
            and rule.namespace.get(value.func.value.id) is runtime
            and value.func.attr == "unbroadcast"):
        return value
    others = [p for p in bound if p != param]
    if elementwise and others and all(p in scalars or isinstance(bound[p], gast.Constant)
                                      for p in others):
        return value.args[0]
    return value


def fold_binop(node):
    """Fold number arithmetic, ``e ** 1`` and multiplication by 1 (of a BinOp whose operands
    are already folded)."""
    left, right, op = node.left, node.right, type(node.op)
    if is_number(left) and is_number(right) and op in _FOLD:
        try:
            return A.const(_FOLD[op](left.value, right.value))
        except (ArithmeticError, ValueError):
            return node
    if op in (gast.Pow, gast.Mult) and is_number(right) and right.value == 1:
        return left
    if op is gast.Mult and is_number(left) and left.value == 1:
        return right
    return node


def instantiate_tangent(rule: Rule, bound: dict, ans: str, tangent_of: Callable[[gast.AST],
                        gast.AST | None], zero_of: Callable[[gast.AST], gast.AST],
                        fresh: Callable[[str], str], module_name: Callable[[str, object], str],
                        scalars: frozenset[str] = frozenset(),
                        same_shape: Callable[[gast.AST, gast.AST], bool] | None = None
                        ) -> tuple[list, list]:
    """The tangent of one call: (statements computing local values, the terms of ``d[ans]``).

    ``tangent_of(node)`` is the tangent expression of an argument (None when it has none:
    inactive, or a constant); ``zero_of(node)`` a zero tangent for it. A term whose tangents are
    all None is dropped; in a term that keeps some, the others are zeros.
    ``rt.broadcast_like(d[x], ans)`` is ``d[x]`` when ``x`` certainly has ``ans``'s shape.
    """
    locals_: dict[str, str] = {}
    namespace = rule.namespace

    def names(n: str) -> str:
        return module_name(n, namespace[n]) if n in namespace else n

    own = {p: tangent_of(v) for p, v in bound.items()}
    scalar_params = {p for p, v in bound.items() if is_scalar(v, scalars)}
    elementwise = isinstance(rule.key, np.ufunc) or (
        isinstance(rule.key, type) and issubclass(rule.key, gast.AST))
    body = _flatten(rule.body, bound)

    def reads(stmt) -> list[str]:
        return [n.slice.id for n in A.walk(stmt.value) if isinstance(n, gast.Subscript)
                and isinstance(n.value, gast.Name) and n.value.id == "d"]

    def is_term(stmt) -> bool:
        return isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)

    kept = {p for stmt in body if is_term(stmt) and any(own[q] is not None for q in reads(stmt))
            for p in reads(stmt)}
    # An operator or ufunc's result has the broadcast shape of its operands; so does the sum of
    # the terms when every operand without one is a scalar: no term needs rt.broadcast_like.
    summed = elementwise and all(p in kept or p in scalar_params
                                 or isinstance(bound[p], gast.Constant) for p in bound)
    setup, terms = [], []
    for stmt in body:
        read = reads(stmt) if isinstance(stmt, gast.Assign) else []
        if is_term(stmt) and read and all(own[p] is None for p in read):
            continue  # a term of inactive or constant arguments only
        tangents = {p: own[p] if own[p] is not None else zero_of(bound[p]) for p in read}
        builder = _Builder(bound, ans, None, locals_, names, tangents,
                           replaced=_replaced(namespace, module_name))
        if not is_term(stmt):
            for n in A.walk(stmt):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    locals_.setdefault(n.id, fresh(n.id))
            setup.append(builder.build(stmt))
            continue
        value = stmt.value
        if _is_broadcast(value, namespace):  # rt.broadcast_like(<term of d[x]>, ans)
            param = read[0] if len(read) == 1 else None
            same = summed or param is not None and (
                (param in scalar_params and ans in scalars) or (
                    same_shape is not None and isinstance(value.args[0], gast.Subscript)
                    and same_shape(bound[param], A.name(ans))))
            if same:
                value = value.args[0]
        terms.append(builder.build(value))
    return setup, terms


def _is_broadcast(value, namespace) -> bool:
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and isinstance(value.func.value, gast.Name)
            and namespace.get(value.func.value.id) is runtime
            and value.func.attr == "broadcast_like")
