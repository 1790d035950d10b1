"""Build the reverse-mode function: the primal, then the adjoint in reverse statement order.

Input: a straight-line body in ANF and SSA form ending in ``return name``. Output: the same
primal statements, a seed ``bret = rt.seed(ret)``, then for each active assignment (reversed) a
``# grad of: <line>`` comment and the instantiated rule template, whose partials are Assigns
annotated ACCUMULATE (fix_grads turns them into ``=`` or ``+``), and finally ``return`` of the
gradients of the ``wrt`` arguments (shaped and typed like them by ``rt.grad_like``).
"""

from __future__ import annotations

import linecache

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.activity import SHAPE_ATTRIBUTES, active_names
from transpiler.analysis.scalars import known_scalars
from transpiler.anno import Anno, getanno, setanno
from transpiler.errors import NoRuleError, error_at
from transpiler.rules.registry import ADJOINTS, key_name
from transpiler.templates import bind_call, instantiate

_RULE_HINT = ("register a rule for it:\n"
              "    from transpiler import adjoint, d\n"
              "    @adjoint({name})\n"
              "    def adj_{short}(ans, x):\n"
              "        d[x] = d[ans] * ...  # the partial derivative times the incoming gradient")


def reverse(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    *primal, ret = fn.body
    assert A.is_atom(ret.value), "ANF returns a name or a constant"
    result = ret.value.id if isinstance(ret.value, gast.Name) else None
    active = active_names(primal, ctx.wrt, result)
    builder = _Adjoint(ctx, active, known_scalars(primal))
    adjoint = []
    if result in active:
        seed = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.seed"), A.name(result))
        adjoint.append(A.assign(ctx.namer.grad(result), seed, like=ret))
    origin = None
    for stmt in reversed(primal):
        block = builder.visit(stmt)
        if block:
            here = getanno(stmt, Anno.ORIGIN, stmt)
            if here is not origin:
                adjoint.append(A.comment("grad of: " + _line(ctx, here)))
                origin = here
            adjoint.extend(gast.copy_location(s, stmt) for s in block)
    fn.body = primal + adjoint + [_return(ctx, ret, active)]
    return fn


def _line(ctx, node) -> str:
    return linecache.getline(ctx.filename, node.lineno).strip()


def _return(ctx, ret, active) -> gast.Return:
    rt = ctx.bind("rt", runtime)
    grads = [A.call(A.dotted(f"{rt}.grad_like"), A.name(ctx.namer.grad(w)), A.name(w))
             for w in ctx.wrt]
    value = grads[0] if len(grads) == 1 else gast.Tuple(elts=grads, ctx=gast.Load())
    if ctx.mode == "value_and_grad":
        value = gast.Tuple(elts=[ret.value, value], ctx=gast.Load())
    return gast.copy_location(gast.Return(value=value), ret)


class _Adjoint:
    """Adjoint statements of one primal statement (empty when it is inactive)."""

    def __init__(self, ctx, active: set[str], scalars: set[str]):
        self.ctx, self.active, self.scalars = ctx, active, frozenset(scalars)

    def grad_of(self, var: str) -> str | None:
        return self.ctx.namer.grad(var) if var in self.active else None

    def visit(self, stmt) -> list:
        if not isinstance(stmt, gast.Assign):
            return []
        targets = [n.id for t in stmt.targets for n in gast.walk(t) if isinstance(n, gast.Name)]
        if not any(t in self.active for t in targets):
            return []
        target, value = stmt.targets[0], stmt.value
        if not isinstance(target, gast.Name):
            raise error_at(stmt, self.ctx, "unpacking a differentiated value is not supported yet",
                           "assign each element separately")
        if isinstance(value, gast.Name):
            src = self.grad_of(value.id)
            return [self._partial(src, A.name(self.grad_of(target.id)))] if src else []
        if isinstance(value, gast.Constant):
            return []
        if isinstance(value, gast.BinOp):
            return self._rule(type(value.op), [value.left, value.right], {}, target.id, value)
        if isinstance(value, gast.UnaryOp):
            return self._rule(type(value.op), [value.operand], {}, target.id, value)
        if isinstance(value, gast.Call):
            return self._call(value, target.id)
        if isinstance(value, gast.Attribute) and value.attr not in SHAPE_ATTRIBUTES:
            key = getattr(np.ndarray, value.attr, None)
            return self._rule(key, [value.value], {}, target.id, value, f".{value.attr}")
        raise error_at(value, self.ctx, _unsupported(value),
                       "rewrite it with NumPy functions that have rules (see transpiler.supported())")

    def _partial(self, grad: str, value) -> gast.Assign:
        stmt = A.assign(grad, value)
        setanno(stmt, Anno.ACCUMULATE)
        return stmt

    def _call(self, call, target: str) -> list:
        func = getanno(call, Anno.FUNC)
        if func is None:
            raise error_at(call, self.ctx, "method calls on differentiated values are not supported"
                           " yet", "call the NumPy function instead: np.sum(x) rather than x.sum()")
        if any(kw.arg is None for kw in call.keywords):
            raise error_at(call, self.ctx, "'**kwargs' in a call is not supported yet",
                           "pass keyword arguments explicitly")
        keywords = {kw.arg: kw.value for kw in call.keywords}
        return self._rule(func, call.args, keywords, target, call, gast.unparse(call.func))

    def _rule(self, key, args, keywords, target, node, spelled: str = "") -> list:
        try:
            rule = ADJOINTS.get(key)
        except TypeError:  # unhashable
            rule = None
        if rule is None:
            name = key_name(key) if key is not None else spelled
            short = name.rsplit(".", 1)[-1].strip("<>") or "f"
            raise error_at(node, self.ctx, f"no gradient rule for {spelled or name} ({name})",
                           _RULE_HINT.format(name=spelled or name, short=short), cls=NoRuleError)
        try:
            bound = bind_call(rule, args, keywords)
        except TypeError as e:
            raise error_at(node, self.ctx, f"the gradient rule of {key_name(key)} does not accept "
                           f"these arguments: {e}", "pass only the arguments the rule lists "
                           f"({', '.join(rule.params[1:])})") from e
        ctx = self.ctx
        return instantiate(rule, bound, target, self.grad_of, ctx.namer.fresh, ctx.bind,
                           self.scalars)


def _unsupported(value) -> str:
    kinds = {gast.Subscript: "indexing a differentiated value is not supported yet",
             gast.IfExp: "a conditional expression on differentiated values is not supported yet",
             gast.Tuple: "a tuple of differentiated values is not supported yet",
             gast.List: "a list of differentiated values is not supported yet"}
    return kinds.get(type(value), f"{type(value).__name__} expressions cannot be differentiated")
