"""Build the forward-mode function: each statement of the primal followed by its tangent.

Input: ANF, SSA code ending in ``return name``. Output: the same statements in the same order,
each assignment of a value that depends on a differentiated argument followed by the assignment
of its tangent (``dy = dx * np.cos(x)`` after ``y = np.sin(x)``), and ``return value, tangent``.
The tangents of ``wrt`` arrive as keyword-only parameters (``dx``).

- An assignment's tangent is its rule's tangent template: the sum of the terms of the arguments
  that have tangents (templates.instantiate_tangent).
- Control flow stays as it is: a branch or loop runs once, carrying primal and tangent together,
  so forward mode needs no tape.
- ``y[i] = v`` writes a copy (``y_1 = y.copy(); y_1[i] = v``) and so does its tangent.
- A value that has a tangent on some paths only (``s = 0.0`` before a loop that makes it depend
  on ``x``) gets a zero tangent where it has none: ``ds = 0.0`` or ``rt.zero_tangent(s)``.
- A call of a user function calls its forward-mode function (calls.tangent_function), which
  returns ``(value, tangent)``.

The dispatch by statement and value kind, rule binding and user calls are passes/lower.py's;
``_Forward`` fills in its hooks.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import gast

import runtime
from transpiler import ast_util as A
from transpiler.analysis.activity import activity, never_varied, reads
from transpiler.analysis.scalars import is_scalar
from transpiler.anno import Anno, getanno, setanno
from transpiler.calls import tangent_function
from transpiler.context import Mode
from transpiler.errors import error_at
from transpiler.naming import function_name, tangent_parameters
from transpiler.passes import contexts, tape
from transpiler.passes.lower import Lowering, refuse_discarded_calls
from transpiler.rules.registry import COMPLEX_TANGENTS, SPARSE_TANGENTS, TANGENTS
from transpiler.templates import instantiate_tangent


def forward(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    *primal, ret = fn.body
    elements = ret.value.elts if isinstance(ret.value, gast.Tuple) else [ret.value]
    results = [e.id for e in elements if isinstance(e, gast.Name)]
    stacks = tape.pushes(primal, ctx.locals) if tape.is_generated(ctx.fn) else []
    pushes = [A.assign(stack, gast.BinOp(left=A.name(stack), op=gast.Add(), right=item))
              for stack, item in stacks]  # for the analyses only: the stack holds its items
    allowed = frozenset(id(n) for s in primal for n in A.walk(s) if _push(n, ctx))
    # only values that depend on wrt and reach the result carry a tangent
    active, varied = activity(primal + pushes, ctx.wrt, results)
    refuse_discarded_calls(primal, varied, ctx, allowed)
    contexts.refuse_differentiated(primal, varied, ctx)
    builder = _Forward(ctx, active, primal)
    builder.stacks = {stack for stack, _ in stacks} & active
    names = tangent_parameters(ctx.fn, ctx.wrt)
    for w in ctx.wrt:  # the tangent parameters are named before anything else is
        ctx.namer.name_tangent(w, names[w])
    body = builder.block(primal)
    fn.args.kwonlyargs += [gast.Name(id=names[w], ctx=gast.Param(), annotation=None,
                                     type_comment=None) for w in ctx.wrt]
    fn.args.kw_defaults += [None] * len(ctx.wrt)
    fn.body = body + [builder.result(ret)]
    return fn


def _negation_pulled(term) -> tuple[bool, object]:
    """``-b * c / d`` -> (True, ``b * c / d``): a leading minus of a product or quotient."""
    if isinstance(term, gast.UnaryOp) and isinstance(term.op, gast.USub):
        return True, term.operand
    if isinstance(term, gast.BinOp) and isinstance(term.op, (gast.Mult, gast.Div)):
        negated, left = _negation_pulled(term.left)
        if negated:
            return True, gast.BinOp(left=left, op=term.op, right=term.right)
    return False, term


def _push(stmt, ctx) -> tuple[str, object] | None:
    """``(tape, entry)`` of a push onto a generated gradient's loop tape (passes/tape.py; the
    user's own ``xs.append(v)`` is rewritten before, by desugar)."""
    return tape.push_of(stmt, ctx.locals) if tape.is_generated(ctx.fn) else None


class _Forward(Lowering):
    """Forward mode's lowering: each statement gives itself followed by its tangent; control
    flow keeps its shape."""

    rules, mode, derivative = TANGENTS, "forward", "tangent"
    complex_rules = COMPLEX_TANGENTS
    sparse_rules = SPARSE_TANGENTS

    def __init__(self, ctx, active: set[str], primal: list):
        super().__init__(ctx, active)
        # Values assigned once whose tangent is certainly zero (a rule with no term for the
        # arguments that have tangents, as rt.unreduce(1.0, x) in x's shape): they get no
        # tangent variable, and terms that read it are dropped like those of constants.
        stores = Counter(n.id for s in primal for n in A.walk(s) if isinstance(n, gast.Name)
                         and isinstance(n.ctx, gast.Store))
        self.once = {n for n, k in stores.items() if k == 1}
        self.zeros: set[str] = set()
        self.stacks: set[str] = set()  # a generated gradient's tapes, with tangents too
        self.joint: set[int] = set()  # statements calling a callee for value and tangent

    def name(self, var: str) -> str:
        return self.ctx.namer.tangent(var)

    def tangent_of(self, node):
        """The tangent of an argument, or None when it has none (inactive or a constant)."""
        if isinstance(node, gast.Name):
            return A.name(self.name(node.id)) if self.differentiated(node.id) else None
        if isinstance(node, (gast.Tuple, gast.List)):
            if not any(self.tangent_of(e) is not None for e in node.elts):
                return None
            return type(node)(elts=[self.tangent_of(e) or self.zero_of(e) for e in node.elts],
                              ctx=gast.Load())
        return None

    def zero_of(self, node):
        """A zero tangent for the value of ``node``."""
        if is_scalar(node, self.scalars) or (isinstance(node, gast.Constant)
                                             and node.value is None):
            return A.const(0.0)
        if isinstance(node, (gast.Tuple, gast.List)):
            return type(node)(elts=[self.zero_of(e) for e in node.elts], ctx=gast.Load())
        zero = A.call(A.dotted(f"{self.ctx.bind('rt', runtime)}.zero_tangent"),
                      A.copy_node(node))
        setanno(zero, Anno.FUNC, runtime.zero_tangent)
        return zero

    # --- statements ---

    def block(self, stmts: list) -> list:
        return [s for stmt in stmts for s in self.statement(stmt)]

    def differentiated(self, name: str) -> bool:
        return name in self.active and name not in self.zeros

    def branch(self, stmt) -> list:
        """A branch or a loop keeps its shape, its body lowered. What a ``try`` tries is the
        primal alone: its tangents follow, once it succeeded (a tangent that raises must not
        send the primal down the handler's path)."""
        if contexts.is_attempt(stmt) and not getanno(stmt, Anno.TRY).raises:
            parts = [self.parts(s) for s in stmt.body]
            if any(isinstance(s, (gast.If, gast.For, gast.While)) for s in stmt.body):
                raise error_at(stmt, self.ctx, "a branch or a loop inside 'try' is not "
                               "supported in forward mode", "compute it before the 'try'")
            joint = next((s for s in stmt.body if id(s) in self.joint), None)
            if joint is not None:
                raise error_at(joint, self.ctx, "a call of your function inside 'try' is not "
                               "supported in forward mode (its tangent would be tried too)",
                               "call it before the 'try', or use reverse mode")
            tangents = [s for _, t in parts for s in t]
            stmt.body = [s for p, _ in parts for s in p] or [gast.Pass()]
            stmt.orelse = self.block(stmt.orelse)
            after = gast.If(test=A.copy_node(stmt.test), body=tangents, orelse=[])
            return [stmt] + ([gast.copy_location(after, stmt)] if tangents else [])
        stmt.body = self.block(stmt.body) or [gast.Pass()]
        stmt.orelse = self.block(stmt.orelse)
        return [stmt]

    loop = branch

    def simple(self, stmt) -> list:
        push = _push(stmt, self.ctx)
        if push is not None and push[0] in self.active:  # the tangent stack keeps step
            stack, item = push
            items = item.elts if isinstance(item, gast.Tuple) else [item]
            tangents = [A.const(None) if isinstance(e, gast.Call) and never_varied(e)
                        else self.tangent_of(e) or self.zero_of(e) for e in items]  # shapes: None
            tangent = A.call(A.attr(A.name(self.name(stack)), "append"), tangents[0] if not
                             isinstance(item, gast.Tuple) else gast.Tuple(elts=tangents,
                                                                         ctx=gast.Load()))
            return [stmt, gast.copy_location(gast.Expr(value=tangent), stmt)]
        if not isinstance(stmt, gast.Assign):
            return [stmt]
        stack = tape.popped(stmt.value)  # (of a tape an outer tape holds: a version of it)
        if stack is not None and (stack in self.stacks
                                  or self.ctx.facts.variable(stack) in self.stacks):
            pop = A.call(A.attr(A.name(self.name(stack)), "pop"))
            tangent = gast.Assign(targets=[self.tangent_target(stmt.targets[0])], value=pop,
                                  type_comment=None)
            return [stmt, gast.copy_location(tangent, stmt)]
        primal, tangent = self.parts(stmt)
        return primal + tangent

    def parts(self, stmt) -> tuple[list, list]:
        """(primal, tangent) of a simple statement."""
        tangent = [gast.copy_location(s, stmt) for s in self.derivatives(stmt) or []]
        return self.primal_of(stmt), tangent

    def assignment(self, target: str, value, stmt) -> list:
        """The statements that compute the tangent of ``target = value``."""
        self.name(target)  # named before the rule's temporaries
        return self.value(target, value)

    def before(self, target: str, value) -> list | None:
        if not (set(reads(value)) & (self.active - self.zeros)) or never_varied(value):
            if target in self.once and target not in self.stacks:
                self.zeros.add(target)
                return []
            return [self.assign_tangent(target, self.zero_of(value))]
        return None

    def copy(self, target: str, value) -> list:
        return [self.assign_tangent(target, self.tangent_of(value))]

    def container(self, target: str, value) -> list:
        if not isinstance(value, gast.Dict):
            return [self.assign_tangent(target, self.tangent_of(value))]
        tangents = gast.Dict(keys=[A.copy_node(k) for k in value.keys],
                             values=[self.tangent_of(v) or self.zero_of(v) for v in value.values])
        return [self.assign_tangent(target, tangents)]

    def element_write(self, target: str, value) -> list:
        """As the primal: a copy, written into."""
        array, index, item = value.args
        copy = A.call(A.attr(self.tangent_of(array), "copy")) \
            if self.tangent_of(array) is not None else self.zero_of(array)
        put = gast.Assign(targets=[gast.Subscript(value=A.name(self.name(target)),
                                                  slice=A.copy_node(index), ctx=gast.Store())],
                          value=self.tangent_of(item) or A.const(0.0), type_comment=None)
        made = self.assign_tangent(target, copy)
        if self.tangent_of(array) is not None:
            setanno(made, Anno.WRITE_COPY)  # (passes/inplace.py may write in place)
        return [made, put]

    def assign_tangent(self, target: str, value) -> gast.Assign:
        own = A.name(self.name(target), store=True)
        return gast.Assign(targets=[own], value=value, type_comment=None)

    def apply_rule(self, rule, bound, target: str, node) -> list:
        """The rule's setup, then the tangent: the sum of the terms of the arguments that have
        tangents."""
        ctx = self.ctx
        setup, terms = instantiate_tangent(rule, bound, target, self.tangent_of, self.zero_of,
                                           ctx.namer.fresh, ctx.bind, self.scalars,
                                           self.shapes.same)
        if not terms and target in self.once:
            self.zeros.add(target)
            return setup
        value = terms[0] if terms else self.zero_of(A.name(target))
        for term in terms[1:]:  # a + -b * c is a - b * c
            negated, term = _negation_pulled(term)
            value = gast.BinOp(left=value, op=gast.Sub() if negated else gast.Add(), right=term)
            if target not in self.scalars and target not in ctx.facts.ranks \
                    and not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add)):
                setanno(value, Anno.SUM)  # (a list's: item by item; of a + b: as its +)
        return setup + [A.assign(self.name(target), value)]

    def tangent_target(self, target):
        """``a`` -> ``da``, ``(a, (b, c))`` -> ``(da, (db, dc))``."""
        if isinstance(target, gast.Name):
            return A.name(self.name(target.id), store=True)
        return gast.Tuple(elts=[self.tangent_target(e) for e in target.elts], ctx=gast.Store())

    def compile_callee(self, func, active: tuple[str, ...], varargs, objects, known=(),
                       sparse=frozenset(), complex_values=frozenset()):
        options = dataclasses.replace(self.ctx.options, value=True)
        return tangent_function(self.ctx.compile_callee, func, active, options, varargs,
                                objects, known, sparse, complex_values)

    def call_callee(self, func, holder, call, arguments, active, target, stmt) -> list:
        """``y = helper(a, b)`` -> ``y, dy = helper_jvp.call(a, b, da=da_1)``, in place of the
        primal."""
        name = self.ctx.bind(f"{function_name(func)}_jvp", holder)
        names = tangent_parameters(func, tuple(active))
        keywords = list(call.keywords) + [
            gast.keyword(arg=names[p], value=A.name(self.name(arguments[p].id))) for p in active]
        value = gast.Call(func=A.attr(A.name(name), "call"), args=call.args, keywords=keywords)
        lhs = gast.Tuple(elts=[A.copy_node(target), self.tangent_target(target)],
                         ctx=gast.Store())
        self.joint.add(id(stmt))  # its value and tangent come from one call
        self.primal_for[id(stmt)] = [gast.copy_location(gast.Assign(
            targets=[lhs], value=value, type_comment=None), stmt)]
        return []

    def result(self, ret) -> gast.Return:
        """``return value, tangent`` (``return tangent`` when the options say so); at the top
        level the tangent is shaped like the value."""
        elements = ret.value.elts if isinstance(ret.value, gast.Tuple) else [ret.value]
        tangents = [self.tangent_of(e) or self.zero_of(e) for e in elements]
        if self.ctx.mode == Mode.JVP and self.ctx.options.value:
            like = A.dotted(f"{self.ctx.bind('rt', runtime)}.tangent_like")
            tangents = [t if is_scalar(e, self.scalars) or isinstance(t, gast.Constant)
                        else A.call(A.copy_node(like), t, A.copy_node(e))
                        for t, e in zip(tangents, elements, strict=True)]
        tangent = tangents[0] if not isinstance(ret.value, gast.Tuple) else gast.Tuple(
            elts=tangents, ctx=gast.Load())
        if self.ctx.mode == Mode.JVP and not self.ctx.options.value:
            # the tangent alone, as computed (for hvp, whose last step, rt.grad_like, shapes
            # it): the value's own last steps are dead code
            return gast.copy_location(gast.Return(value=tangent), ret)
        value = gast.Tuple(elts=[ret.value, tangent], ctx=gast.Load())
        return gast.copy_location(gast.Return(value=value), ret)
