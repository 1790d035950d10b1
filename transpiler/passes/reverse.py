"""Build the reverse-mode function: the primal, then the adjoint in reverse statement order.

Input: ANF, SSA code ending in ``return name``. Output: the primal statements, a seed
``bret = rt.seed(ret)``, then the adjoint of every active statement in reverse order, each block
headed by a ``# grad of: <line>`` comment, then ``return`` of the ``wrt`` gradients (shaped and
typed like their arguments by ``rt.grad_like``).

- An assignment's adjoint is its rule template; partials are Assigns annotated ACCUMULATE, and a
  RESET marker follows (the value before the assignment has a gradient of its own).
- ``if c:`` becomes ``if c:`` around the adjoints of the branches.
- A loop with active statements gets an adjoint loop; what the primal loop saves for it and
  how it runs (a tape of its own walked backwards, ``reversed(range)``, or a trip count) is
  planned by passes/tape.py. Gradients accumulated across iterations are made to exist before
  the adjoint loop (ZERO markers; fix_grads decides).

The dispatch by statement and value kind, rule binding and user calls are passes/lower.py's;
``_Reverse`` fills in its hooks (and keeps branches, loop tapes and powers, its own).
"""

from __future__ import annotations

import functools
import inspect
import linecache
from collections import Counter

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.activity import activity
from transpiler.analysis.scalars import is_number
from transpiler.anno import Anno, getanno, hasanno, setanno
from transpiler.calls import split_pair
from transpiler.context import Mode
from transpiler.errors import error_at
from transpiler.naming import function_name
from transpiler.passes import checkpoint, contexts, tape
from transpiler.passes.lower import Lowering, is_setitem, refuse_discarded_calls
from transpiler.passes.ssa import stored_names
from transpiler.rules.complex_rules import REAL_PARTIALS
from transpiler.rules.registry import ADJOINTS, COMPLEX_ADJOINTS, SPARSE_ADJOINTS
from transpiler.templates import instantiate


def reverse(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    *primal, ret = fn.body
    aux = None
    if ctx.options.aux and ctx.mode != Mode.SPLIT:
        primal, ret, aux = _auxiliary(primal, ret, ctx)
    elements = ret.value.elts if isinstance(ret.value, gast.Tuple) else [ret.value]
    assert all(A.is_atom(e) for e in elements), "ANF returns names or constants"
    if len(elements) > 1 and ctx.mode != Mode.SPLIT:
        raise error_at(ret, ctx, "grad needs a function returning one scalar; this one returns "
                       "a tuple", "return a single value (e.g. the sum of the parts), or pass "
                       "has_aux=True for a function returning (value, aux)")
    results = [e.id if isinstance(e, gast.Name) else None for e in elements]
    active, varied = activity(primal, ctx.wrt, results)
    refuse_discarded_calls(primal, varied, ctx)
    contexts.refuse_differentiated(primal, varied, ctx)
    scalars = ctx.facts.scalars
    builder = _Reverse(ctx, active, primal,
                       {a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs})
    if ctx.mode == Mode.GRAD and results[0] in active:
        builder.ones.add(ctx.namer.grad(results[0]))  # rt.seed gives ones
    primal, adjoint = builder.block(primal)
    if ctx.mode == Mode.SPLIT:
        adjoint = [marker(Anno.SPLIT, True, ret)] + _seed_from(ctx, ret, results, active) + adjoint
    elif results[0] in active and results[0] in scalars:
        adjoint.insert(0, A.assign(ctx.namer.grad(results[0]), A.const(1.0), like=ret))
    elif results[0] in active:
        seed = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.seed"), A.name(results[0]))
        adjoint.insert(0, A.assign(ctx.namer.grad(results[0]), seed, like=ret))
    if ctx.mode == Mode.VALUE_AND_GRAD and results[0] in stored_names(adjoint):
        # the adjoint loop takes the result back from a tape (a loop-carried value whose own
        # value the adjoint reads): return the value the primal ended with
        value = ctx.namer.fresh(f"{results[0]}_value")
        primal.append(A.assign(value, A.name(results[0]), like=ret))
        ret = gast.copy_location(gast.Return(value=A.name(value)), ret)
    fn.body = primal + adjoint + [_return(ctx, ret, aux)]
    return fn


def _auxiliary(primal: list, ret, ctx):
    """``has_aux``: the function returns ``(value, aux)``; the gradient is the value's and
    ``aux`` is passed through, not differentiated. ``return (v, a)`` -> ``return v`` and
    ``a``; a pair held by one name (``return pair``, returns merged) is taken apart first
    (``v = pair[0]; a = pair[1]``)."""
    value = ret.value
    if isinstance(value, gast.Tuple):
        if len(value.elts) != 2:
            raise error_at(ret, ctx, f"has_aux=True needs a function returning a pair (value, "
                           f"aux); this one returns {len(value.elts)} values",
                           "return (loss, aux), aux holding everything else")
        loss, aux = value.elts
    else:
        pair = value
        loss, aux = (A.name(ctx.namer.fresh(n)) for n in ("_value", "_aux"))
        primal = primal + [A.assign(target.id, gast.Subscript(value=A.copy_node(pair),
                                                              slice=A.const(i), ctx=gast.Load()),
                                    like=ret) for i, target in enumerate((loss, aux))]
    return primal, gast.copy_location(gast.Return(value=loss), ret), aux


def _seed_from(ctx, ret, results: list, active: set[str]) -> list:
    """Split mode: the result's gradient arrives as the backward's parameter ``_ct``."""
    ctx.residuals, ctx.cotangent = ctx.namer.fresh("_res"), ctx.namer.fresh("_ct")
    tuple_result = isinstance(ret.value, gast.Tuple)
    seeds = []
    for i, name in enumerate(results):
        if name in active:
            part = A.name(ctx.cotangent)
            if tuple_result:
                part = gast.Subscript(value=part, slice=A.const(i), ctx=gast.Load())
            else:  # a caller may have unpacked an array result into its rows
                part = A.call(A.dotted(f"{ctx.bind('rt', runtime)}.cotangent"), part,
                              A.name(name))
            seeds.append(A.assign(ctx.namer.grad(name), part, like=ret))
            setanno(seeds[-1], Anno.ACCUMULATE)
    return seeds


def _line(ctx, node) -> str:
    return linecache.getline(ctx.filename, node.lineno).strip()


def _return(ctx, ret, aux=None) -> gast.Return:
    rt = ctx.bind("rt", runtime)
    if ctx.mode == Mode.SPLIT:  # raw gradients, always a tuple; the caller accumulates them
        grads = gast.Tuple(elts=[A.name(ctx.namer.grad(w)) for w in ctx.wrt], ctx=gast.Load())
        value = gast.Tuple(elts=[ret.value, grads], ctx=gast.Load())
        return gast.copy_location(gast.Return(value=value), ret)
    to_float = ctx.bind("float", float)
    to_complex = ctx.bind("complex", complex) if ctx.complex_numbers else None
    grads = [A.call(A.name(to_complex), A.name(ctx.namer.grad(w))) if w in ctx.complex_numbers
             else A.call(A.name(to_float), A.name(ctx.namer.grad(w))) if w in ctx.scalars
             else A.call(A.dotted(f"{rt}.grad_like"), A.name(ctx.namer.grad(w)), A.name(w))
             for w in ctx.wrt]  # a Python-number argument gets a float back
    value = grads[0] if len(grads) == 1 else gast.Tuple(elts=grads, ctx=gast.Load())
    if sum(w not in ctx.scalars for w in ctx.wrt) > 1:  # two gradients may be one array
        value = A.call(A.dotted(f"{rt}.distinct"), value)  # (x + y; grad_like sees to a
        # container's entries)
    result = ret.value if aux is None else gast.Tuple(elts=[ret.value, aux], ctx=gast.Load())
    if ctx.mode == Mode.VALUE_AND_GRAD:  # ((value, aux), gradient) with has_aux, as JAX's
        value = gast.Tuple(elts=[result, value], ctx=gast.Load())
    elif aux is not None:  # (gradient, aux)
        value = gast.Tuple(elts=[value, aux], ctx=gast.Load())
    return gast.copy_location(gast.Return(value=value), ret)


def marker(key: Anno, value, like) -> gast.Expr:
    """A placeholder statement for fix_grads (ZERO or RESET); it never reaches the output."""
    node = gast.copy_location(gast.Expr(value=A.const(None)), like)
    setanno(node, key, value)
    return node


class _Reverse(Lowering):
    """Reverse mode's lowering: each statement gives (primal, adjoint); the adjoint of an
    assignment is the partials of its arguments (Assigns annotated ACCUMULATE)."""

    rules, mode, derivative = ADJOINTS, "reverse", "gradient"
    complex_rules = COMPLEX_ADJOINTS
    sparse_rules = SPARSE_ADJOINTS

    def __init__(self, ctx, active: set[str], primal: list, params: set[str]):
        super().__init__(ctx, active)
        # Gradients known to hold only ones (the seed, spread by a sum) and the function's own
        # temporaries: together they let rt.unbroadcast(ones * y, x) drop the product.
        self.ones: set[str] = set()
        assigns = [n for s in primal for n in A.walk(s) if isinstance(n, gast.Assign)]
        self.temporaries = frozenset(_fresh_values(assigns))
        # float parameters the function never rebinds, and those with the float temporaries
        # (active, or of float-valued operations): ones * y is y for these (not for a bool y:
        # True + True is True)
        self.parameters = frozenset(
            p for p in params - stored_names(primal) if p in self.scalars and p in active
            or p in ctx.arrays and np.dtype(ctx.arrays[p][1]).kind == "f")
        candidates = self.temporaries - active
        self.floats = self.parameters | (self.temporaries & active) | (
            _float_values(assigns, candidates, active) if candidates else frozenset())
        self.loads = Counter(n for s in primal for n in A.load_names(s))
        self.powers = _powers(list(primal), self.loads)
        self.absorbed: set[str] = set()  # factors of a power whose adjoint the power's covers
        self.looped = frozenset(n for s in primal for loop in A.walk(s)
                                if isinstance(loop, (gast.For, gast.While))
                                for n in stored_names(loop.body) | stored_names([loop]))
        self.ranges = frozenset(a.targets[0].id for s in primal for a in A.walk(s)
                                if isinstance(a, gast.Assign) and A.is_range(a.value)
                                and isinstance(a.targets[0], gast.Name))

    def grad_of(self, var: str) -> str | None:
        return self.ctx.namer.grad(var) if var in self.active else None

    # --- blocks and compound statements ---

    def block(self, stmts: list, origin=None) -> tuple[list, list]:
        """(primal, adjoint) of a statement list; the adjoint is already in reverse order.

        ``origin`` is the user statement the enclosing block came from: no comment repeats it."""
        primal, pieces = [], []
        for stmt in reversed(stmts):  # adjoint order: facts about gradients flow backwards
            p, a = self.statement(stmt)
            primal[:0] = p
            if a:
                here = None if hasanno(stmt, Anno.PHI) or contexts.is_region(stmt) \
                    else getanno(stmt, Anno.ORIGIN, stmt)  # (a with's body names its lines)
                pieces.append((here, a))
        adjoint = []
        for here, a in pieces:
            if here is not None and here is not origin:
                adjoint.append(A.comment("grad of: " + _line(self.ctx, here)))
                origin = here
            adjoint.extend(a)
        return primal, adjoint

    def simple(self, stmt) -> tuple[list, list]:
        adjoint = [gast.copy_location(s, stmt) for s in self.derivatives(stmt) or []]
        if adjoint and is_setitem(stmt):  # where passes/inplace.py may put back what it wrote
            adjoint.append(marker(Anno.RESTORE, stmt, stmt))
        return self.primal_of(stmt), adjoint

    def branch(self, stmt: gast.If) -> tuple[list, list]:
        if contexts.is_region(stmt):
            return self.region(stmt)
        origin = getanno(stmt, Anno.ORIGIN, stmt)
        p_body, a_body = self.block(stmt.body, origin)
        p_else, a_else = self.block(stmt.orelse, origin)
        primal = gast.If(test=stmt.test, body=p_body or [gast.Pass()], orelse=p_else)
        if contexts.is_attempt(stmt):  # a try: rebuilt as one after the passes
            setanno(primal, Anno.TRY, getanno(stmt, Anno.TRY))
        if not (a_body or a_else):
            return [gast.copy_location(primal, stmt)], []
        adjoint = gast.If(test=A.name(stmt.test.id), body=a_body or [gast.Pass()], orelse=a_else)
        return [gast.copy_location(primal, stmt)], [gast.copy_location(adjoint, stmt)]

    def region(self, stmt: gast.If) -> tuple[list, list]:
        """A ``with`` block (passes/contexts.py): the primal in the ``with``; its adjoint
        under the same settings, or after it."""
        p_body, a_body = self.block(stmt.body, getanno(stmt, Anno.ORIGIN, stmt))
        stmt.body = p_body or [gast.Pass()]
        return [stmt], contexts.adjoint(stmt, a_body) if a_body else []

    def loop(self, stmt) -> tuple[list, list]:
        """The primal loop with its tape pushes, and its adjoint loop (passes/tape.py plans what
        is saved and how the adjoint loop runs)."""
        body = list(stmt.body)
        exit_ = [body.pop()] if body and hasanno(body[-1], Anno.EXIT) else []
        split = len(body)
        while split and hasanno(body[split - 1], Anno.LOOP_COPY):
            split -= 1
        main, copies = body[:split], body[split:]
        origin = getanno(stmt, Anno.ORIGIN, stmt)
        p_main, a_main = self.block(main, origin)
        p_copies, a_copies = self.block(copies, origin)
        if not (a_main or a_copies):
            stmt.body = p_main + p_copies + exit_
            return [stmt], []
        made = tape.plan(tape.Loop(stmt, copies, exit_, p_main + p_copies, a_copies + a_main,
                                   self.looped, self.ranges), self.ctx, self.shapes)
        # gradients accumulated across iterations exist before the adjoint loop
        carried = [A.target_name(c) for c in copies]
        loaded = {n for s in body for n in A.load_names(s)}
        cumulative = sorted(v for v in (loaded - stored_names(main)) | set(carried)
                            if v in self.active)
        zeros = [marker(Anno.ZERO, (self.ctx.namer.grad(v), v), stmt) for v in cumulative]
        stmt.body = p_main + made.push + p_copies + made.counter + exit_
        # the restores read the carried value before the loop header overwrites it with the
        # iteration's own: once before the adjoint loop, then at the end of each iteration
        adjoint = gast.For(target=made.target, iter=made.header,
                           body=made.entries + made.recompute + a_copies + a_main
                           + made.restores + zeros,
                           orelse=[], type_comment=None)
        restores = [A.copy_node(r) for r in made.restores]
        return made.before + [stmt], zeros + restores + [gast.copy_location(adjoint, stmt)]

    # --- assignments ---

    def assignment(self, target: str, value, stmt) -> list:
        if target in self.absorbed:
            return []
        return self.value(target, value) + [marker(Anno.RESET, self.grad_of(target), stmt)]

    def compile_callee(self, func, active: tuple[str, ...], varargs, objects, known=(),
                       sparse=frozenset(), complex_values=frozenset()):
        return split_pair(self.ctx.compile_callee, func, active, self.ctx.options, varargs,
                          objects=objects, known=known, sparse_values=sparse,
                          complex_values=complex_values)

    def call_callee(self, func, pair, call, arguments, active, target, stmt) -> list:
        """``y = helper(a, b)`` through the helper's compiled forward/backward pair."""
        name = self.ctx.bind(f"{function_name(func)}_vjp", pair)
        saved = self.ctx.namer.fresh("_res")
        outputs = target.elts if isinstance(target, gast.Tuple) else [target]
        lhs = gast.Tuple(elts=[A.copy_node(target), A.name(saved, store=True)], ctx=gast.Store())
        forward = gast.Call(func=A.attr(A.name(name), "forward"), args=call.args,
                            keywords=call.keywords)
        self.primal_for[id(stmt)] = [gast.copy_location(gast.Assign(
            targets=[lhs], value=forward, type_comment=None), stmt)]
        grads = [self.grad_of(o.id) for o in outputs]
        zeros = [marker(Anno.ZERO, (g, o.id), stmt)
                 for g, o in zip(grads, outputs, strict=True) if g]
        zeros_like = A.dotted(f"{self.ctx.bind('rt', runtime)}.zeros_like_grad")
        seed = [A.name(g) if g else A.call(A.copy_node(zeros_like), A.name(o.id))
                for g, o in zip(grads, outputs, strict=True)]
        cotangent = seed[0] if isinstance(target, gast.Name) else gast.Tuple(elts=seed,
                                                                              ctx=gast.Load())
        pieces = self.ctx.namer.fresh("_g")
        backward = A.call(A.attr(A.name(name), "backward"), A.name(saved), cotangent)
        adjoint = zeros + [A.assign(pieces, backward)]
        for i, p in enumerate(active):
            adjoint.append(self._partial(self.grad_of(arguments[p].id), gast.Subscript(
                value=A.name(pieces), slice=A.const(i), ctx=gast.Load())))
        return adjoint + [marker(Anno.RESET, g, stmt) for g in grads if g]

    def checkpointed_loop(self, stmt) -> list:
        """``u, D = checkpointed_loop(step, items, u, D, ...)`` (passes/checkpoint.py): the
        primal runs the loop keeping the scheduler's snapshots of the state, the adjoint
        reverses it a step at a time through the step's forward/backward pair."""
        call, outputs = stmt.value, stmt.targets[0].elts
        step, items, *state = call.args
        function = self.ctx.bindings[step.id]
        params = list(inspect.signature(function).parameters)[1:]
        active = checkpoint.carried(
            call, params, {i for i, a in enumerate(state) if isinstance(a, gast.Name)
                   and a.id in self.active},
            {i for i, o in enumerate(outputs) if o.id in self.active})
        # (called=False: the step may write into its state, on copies of its own, since the
        # scheduler hands it states it keeps)
        classes = frozenset((getanno(call, Anno.CLASSES) or {}).items())  # passes/objects.py
        objects = frozenset(p for p, node in zip(params, state, strict=True)
                            if self.ctx.facts.receivers.may_be_object(node)) | classes
        pair = split_pair(self.ctx.compile_callee, function, tuple(params[i] for i in active),
                          self.ctx.options, called=False, objects=objects)
        rt = self.ctx.bind("rt", runtime)
        sweep = self.ctx.namer.fresh("_sweep")
        lhs = gast.Tuple(elts=[gast.Tuple(elts=[A.copy_node(o) for o in outputs],
                                          ctx=gast.Store()), A.name(sweep, store=True)],
                         ctx=gast.Store())
        forward = gast.Call(func=A.dotted(f"{rt}.checkpoint_forward"), args=[
            step, items, gast.Tuple(elts=state, ctx=gast.Load())], keywords=call.keywords)
        names = ", ".join(o.id for o in outputs)
        kept = " or ".join(
            f"at most {gast.unparse(k.value)} snapshots of ({names}), binomial schedule"
            if k.arg == "snapshots" else
            f"a snapshot of ({names}) every {gast.unparse(k.value)} steps"
            for k in call.keywords if k.arg in ("snapshots", "every")
            and not (isinstance(k.value, gast.Constant) and k.value.value is None))
        notes = [A.comment(f"checkpointed loop: {kept}; {step.id} recomputes the steps "
                           "between")]
        self.primal_for[id(stmt)] = [*notes, gast.copy_location(gast.Assign(
            targets=[lhs], value=forward, type_comment=None), stmt)]
        grads = [self.grad_of(o.id) for o in outputs]
        zeros = [marker(Anno.ZERO, (g, o.id), stmt)
                 for g, o in zip(grads, outputs, strict=True) if g]
        seed = [A.name(g) if g else A.call(A.dotted(f"{rt}.zeros_like_grad"), A.name(o.id))
                for g, o in zip(grads, outputs, strict=True)]
        pieces = self.ctx.namer.fresh("_g")
        name = self.ctx.bind(f"{function_name(function)}_vjp", pair)
        backward = A.call(A.dotted(f"{rt}.checkpoint_reverse"), A.name(name), A.name(sweep),
                          gast.Tuple(elts=seed, ctx=gast.Load()),
                          gast.Tuple(elts=[A.const(i) for i in active], ctx=gast.Load()))
        adjoint = zeros + [A.assign(pieces, backward)]
        for k, i in enumerate(active):
            if isinstance(state[i], gast.Name) and self.grad_of(state[i].id):
                adjoint.append(self._partial(self.grad_of(state[i].id), gast.Subscript(
                    value=A.name(pieces), slice=A.const(k), ctx=gast.Load())))
        return adjoint + [marker(Anno.RESET, g, stmt) for g in grads if g]

    def before(self, target: str, value) -> list | None:
        if isinstance(value, gast.Constant):
            return []
        if target in self.powers and self.grad_of(self.powers[target][0]):
            return self.power(target)
        return None

    def copy(self, target: str, value) -> list:
        src = self.grad_of(value.id)
        return [self._partial(src, A.name(self.grad_of(target)))] if src else []

    def container(self, target: str, value) -> list:
        """``p = (a, b)`` / ``[a, b]`` / ``{"k": a}``: ``ba += bp[0]``, ..., ``ba += bp["k"]``."""
        if isinstance(value, gast.Dict):
            pairs = list(zip(value.keys, value.values, strict=True))
        else:
            pairs = [(A.const(i), e) for i, e in enumerate(value.elts)]
        out = []
        for key, element in pairs:
            if isinstance(element, gast.Starred):
                raise error_at(element, self.ctx, "starred items in a container of "
                               "differentiated values are not supported yet", "list the items")
            grad = self.grad_of(element.id) if isinstance(element, gast.Name) else None
            if grad:
                item = gast.Subscript(value=A.name(self.grad_of(target)), slice=A.copy_node(key),
                                      ctx=gast.Load())
                out.append(self._partial(grad, item))
        return out

    def power(self, target: str) -> list:
        """``t = s * x`` where ``s = c * x * ... * x`` (m - 1 factors ``x``, read only here)
        is ``c * x**m``: one partial, ``bx += bt * m * s``, as a person differentiates
        ``x * x * x``; the chain before it needs no adjoint of its own."""
        x, m, factor = self.powers[target]
        term = gast.BinOp(left=gast.BinOp(left=A.name(self.grad_of(target)), op=gast.Mult(),
                                          right=A.const(float(m))),
                          op=gast.Mult(), right=A.name(factor))
        while factor in self.powers:  # the chain's own steps are covered
            self.absorbed.add(factor)
            factor = self.powers[factor][2]
        self.absorbed.add(factor)
        return [self._partial(self.grad_of(x), term)]

    def _partial(self, grad: str, value) -> gast.Assign:
        stmt = A.assign(grad, value)
        setanno(stmt, Anno.ACCUMULATE)
        return stmt

    def apply_rule(self, rule, bound, target: str, node) -> list:
        """The rule's partials, and a zero gradient for each active argument it has none for."""
        ctx = self.ctx
        partials = instantiate(rule, bound, target, self.grad_of, ctx.namer.fresh, ctx.bind,
                               self.scalars, frozenset(self.ones), self.temporaries,
                               self.shapes.same, self.floats)
        if self.is_complex(target, *bound.values()):
            self.real_parts(partials, bound)
        if any(isinstance(s.value, gast.Name) and s.value.id in self.parameters
               for s in partials if isinstance(s, gast.Assign)):
            ctx.gradient_aliases = True  # (a partial is the caller's array: see finalize)
        if self.grad_of(target) in self.ones:
            self.spread_ones(partials)
        self.shape_from_parameters(partials)
        # an active argument the rule gives no partial (constant in it) gets a zero gradient
        written = {A.target_name(s) for s in partials if hasanno(s, Anno.ACCUMULATE)}
        arguments = {n.id for v in bound.values() for n in A.walk(v) if isinstance(n, gast.Name)}
        zeros = [marker(Anno.ZERO, (self.grad_of(a), a), node) for a in sorted(arguments)
                 if self.grad_of(a) and self.grad_of(a) not in written]
        return partials + zeros

    def real_parts(self, partials: list, bound: dict) -> None:
        """Where a real value meets a complex one (``z = x * 1j``), ``x``'s gradient is the
        real part of its partial (``dL/dx``; the imaginary part belongs to no value):
        ``bx = np.real(bz * 1j)``. (The convention: rules/complex_rules.py.)"""
        real = {self.grad_of(n.id) for v in bound.values() for n in A.walk(v)
                if isinstance(n, gast.Name) and self.grad_of(n.id) and not self.is_complex(n)}
        for stmt in partials:
            if hasanno(stmt, Anno.ACCUMULATE) and A.target_name(stmt) in real and not (
                    isinstance(stmt.value, gast.Call)
                    and getanno(stmt.value, Anno.FUNC) in REAL_PARTIALS):
                stmt.value = A.call(A.dotted(f"{self.ctx.bind('np', np)}.real"), stmt.value)
                setanno(stmt.value, Anno.FUNC, np.real)
                setanno(stmt.value, Anno.PURE)

    def shape_from_parameters(self, partials: list) -> None:
        """``rt.unreduce(g, _t2)`` -> ``rt.unreduce(g, x)`` when ``_t2`` has parameter ``x``'s
        shape: a temporary needed only for its shape need not live until the adjoint."""
        for node in (n for s in partials for n in A.walk(s)):
            func = getanno(node, Anno.FUNC) if isinstance(node, gast.Call) else None
            if (func is runtime.unreduce or func is runtime.unbroadcast) \
                    and len(node.args) > 1 and isinstance(node.args[1], gast.Name):
                like = self.shapes.parameter_like(node.args[1].id)
                if like is not None:
                    node.args[1] = A.name(like)

    def spread_ones(self, partials: list) -> None:
        """A partial that only spreads an all-ones gradient (``rt.unreduce(g, x)``, ``g``) is
        all ones too, and so is ``x``'s gradient when that is its only contribution (``x`` is
        read once). Not ``rt.unbroadcast(g, x)``: it sums over broadcast axes, giving counts."""
        for stmt in partials:
            value = stmt.value
            if isinstance(value, gast.Call) and getanno(value, Anno.FUNC) is runtime.unreduce:
                value = value.args[0]
            if isinstance(value, gast.Name) and value.id in self.ones:
                var = self.ctx.namer.var_of(A.target_name(stmt))
                if self.loads[var] == 1:
                    self.ones.add(A.target_name(stmt))



def _powers(body: list, loads: Counter) -> dict[str, tuple[str, int, str]]:
    """``t = s * x`` (or ``x * s``) where ``s`` is ``c * x`` (``c`` a number), ``x * x`` or
    itself such a ``t``, read only there and assigned earlier in the same block (so ``x`` has
    the same value in both): ``t -> (x, m, s)`` with ``t = c * x**m``."""
    powers: dict[str, tuple[str, int, str]] = {}
    chains: dict[str, tuple[str, int]] = {}  # name -> (x, exponent) of c * x**exponent

    def scan(stmts: list) -> None:
        here: set[str] = set()  # chains of this block whose x has not been reassigned since
        for stmt in stmts:
            for block in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)):
                    scan(getattr(stmt, block))
            stored = stored_names([stmt])
            here -= {h for h in here if h in stored or chains[h][0] in stored}
            target, value = A.target_name(stmt), getattr(stmt, "value", None)
            if target is None or not isinstance(value, gast.BinOp) \
                    or not isinstance(value.op, gast.Mult):
                continue
            left, right = value.left, value.right
            names = [n.id for n in (left, right) if isinstance(n, gast.Name)]
            numbers = [n for n in (left, right) if is_number(n)]
            if len(names) == 2 and names[0] == names[1]:
                chains[target] = (names[0], 2)
            elif len(names) == 1 and numbers:
                chains[target] = (names[0], 1)
            elif len(names) == 2:
                for s, x in ((names[0], names[1]), (names[1], names[0])):
                    if s in here and loads[s] == 1 and chains[s][0] == x:
                        chains[target] = (x, chains[s][1] + 1)
                        powers[target] = (x, chains[s][1] + 1, s)
                        break
            if target in chains:
                here.add(target)

    scan(body)
    return powers


def _float_values(assigns: list, candidates: frozenset[str], active: set[str]) -> set[str]:
    """The ``candidates`` assigned only floats: of ``math`` functions, of ufuncs whose every
    loop gives floats (``np.exp``; not ``np.add``, whose sums of bools are ``or``s and of int8s
    wrap), of ``/``, or of arithmetic with a float (a constant, an active value, such a name)."""
    assigns = [s for s in assigns if A.target_name(s) in candidates]
    floats: set[str] = set()

    def is_float(node) -> bool:
        if isinstance(node, gast.Constant):
            return type(node.value) is float
        if isinstance(node, gast.Name):
            return node.id in floats or node.id in active
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, gast.Div) or isinstance(
                node.op, (gast.Add, gast.Sub, gast.Mult, gast.Pow, gast.Mod, gast.FloorDiv)) \
                and (is_float(node.left) or is_float(node.right))
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return is_float(node.operand)
        func = getanno(node, Anno.FUNC) if isinstance(node, gast.Call) else None
        return getattr(func, "__module__", None) == "math" or _float_ufunc(func)

    for _ in range(2):  # (a name read before its assignment, in a loop)
        other = set()
        for stmt in assigns:
            (floats if is_float(stmt.value) else other).add(A.target_name(stmt))
        floats -= other
    return floats


@functools.lru_cache(maxsize=512)
def _float_ufunc(func) -> bool:
    """Whether ``func`` is a ufunc whose every loop gives floats (or objects)."""
    return isinstance(func, np.ufunc) and all(
        t.split("->")[1] in ("e", "f", "d", "g", "F", "D", "G", "O") for t in func.types)


def _fresh_values(assigns: list) -> set[str]:
    """Names assigned only new values (arithmetic, ufuncs, math functions), never views of
    other arrays: safe to hand out as a gradient."""
    fresh, other = set(), set()
    for stmt in assigns:
        func = getanno(stmt.value, Anno.FUNC) if isinstance(stmt.value, gast.Call) else None
        new = isinstance(stmt.value, (gast.BinOp, gast.UnaryOp)) or isinstance(func, np.ufunc) \
            or getattr(func, "__module__", None) == "math"
        for name in stored_names([stmt]):
            (fresh if new else other).add(name)
    return fresh - other


