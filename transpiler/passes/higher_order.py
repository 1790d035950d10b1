"""Library calls that take a function, written out as the comprehensions and loops they stand for.

Python's and NumPy's higher-order functions call a function of the user's per element, per lane
or per piece. Written out, they are ordinary code that the later passes differentiate: the
function's own rule or source, once per element (desugar lowers the comprehensions to loops).

- ``map(f, xs, ys)``                 -> ``[f(_x, _y) for _x, _y in zip(xs, ys)]``
- ``functools.reduce(f, xs, init)``  -> ``_acc = init`` / ``for _v in xs: _acc = f(_acc, _v)``
  before the statement, which reads ``_acc`` (without ``init``: the first item, then the rest)
- ``np.vectorize(f)(x, y)``          -> ``np.reshape(np.array([f(_x, _y) for _x, _y in zip(
  np.ravel(bx), np.ravel(by))]), shape)``, ``bx, by`` the arguments broadcast together; also
  ``vf = np.vectorize(f)`` then ``vf(x)``, and a module's ``@np.vectorize`` function
- ``np.apply_along_axis(f, axis, a, *args)`` -> ``rt.along_axis(np.array([f(_r, *args) for _r
  in rt.lanes(a, axis)]), a, axis)``
- ``np.piecewise(x, [c0, c1], [f0, f1, f2])`` of functions -> masked writes before the
  statement: ``_y = np.zeros_like(_x)``, ``_y[c0] = f0(_x[c0])``, ..., ``f2`` where no condition
  holds (each function sees only its piece, as NumPy calls it)
``f`` may be any function the compiler can call: a module's function, a NumPy function, a
lambda (named first: ``_f = lambda t: ...``, which lift.py lifts), a partial; ``operator.add``
and its kind are their operators. A loop that must run before its statement (``reduce``,
``piecewise``) is written only where the call's value is computed unconditionally; elsewhere (a
conditional expression, a comprehension, a ``while`` test) it is refused with a hint.
``CallRewriter`` is that walk, shared with passes/solvers.py (scipy's solvers and integrals).

>>> import gast
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> import builtins, numpy
>>> fn = gast.parse("def f(x):\\n    return sum(map(np.sin, x))").body[0]
>>> ctx = SimpleNamespace(namer=Namer({"x"}), bind=lambda name, obj: name,
...                       lookup=lambda n: numpy if n == "np" else getattr(builtins, n))
>>> print(to_source(higher_order(fn, ctx)).strip())
def f(x):
    return sum([np.sin(_v) for _v in x])
"""

from __future__ import annotations

import builtins
import functools
import operator
import types

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.anno import Anno, setanno
from transpiler.errors import error_at
from transpiler.passes.resolve import value_of

_OPERATORS = {operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult,
              operator.truediv: gast.Div, operator.pow: gast.Pow, operator.matmul: gast.MatMult,
              operator.mod: gast.Mod, operator.floordiv: gast.FloorDiv}
_VECTORIZE_OPTIONS = frozenset({"otypes", "doc", "cache"})  # what leaves elementwise calls be


def higher_order(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if not any(isinstance(n, gast.Call) for n in A.walk(fn)):
        return fn
    local = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    rewriter = _HigherOrder(ctx, local, _vectorized_locals(fn, ctx, local), fn)
    fn.body = rewriter.block(fn.body)
    return fn


def rewrites(func) -> bool:
    """Whether this pass rewrites a call of ``func`` (a library call that takes a function)."""
    try:
        return func in (builtins.map, functools.reduce, np.apply_along_axis, np.piecewise,
                        np.vectorize) or isinstance(func, np.vectorize)
    except TypeError:  # (an unhashable callable)
        return False


def _vectorized_locals(fn, ctx, local: set[str]) -> dict:
    """Names assigned once, to ``np.vectorize(f)``: name -> the function node ``f``."""
    counts: dict[str, int] = {}
    for n in A.walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            counts[n.id] = counts.get(n.id, 0) + 1
    found = {}
    for stmt in A.walk(fn):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and counts[stmt.targets[0].id] == 1 \
                and isinstance(stmt.value, gast.Call) \
                and value_of(stmt.value.func, local, ctx) is np.vectorize:
            found[stmt.targets[0].id] = stmt
    return found


def bound_call(func, dotted, *args, keywords=()) -> gast.Call:
    """A call the pass writes, of ``func`` by the name ``dotted`` (bound by the caller), its
    function recorded (Anno.FUNC) as resolve.py would: it need not be a name of the module."""
    node = A.call(dotted if isinstance(dotted, gast.AST) else A.dotted(dotted), *args,
                  keywords=keywords)
    setanno(node, Anno.FUNC, func)
    return node


def _ours(obj) -> bool:
    """Whether ``obj`` is a function of this package's API or a derivative it made (the
    derivatives of transpiler/implicit.py that a solver's derivative calls are not)."""
    if obj is None:
        return False
    module = obj.__module__ if isinstance(obj, types.FunctionType) else type(obj).__module__
    return isinstance(module, str) and (module == "transpiler" or module.startswith(
        "transpiler.")) and module != "transpiler.implicit"  # (what generated code calls)


class CallRewriter(gast.NodeTransformer):
    """A walk over a function's statements rewriting calls, where a rewritten call may put
    statements before its statement (``before``: a loop, a solve) or after it (``after``);
    ``unsafe`` counts the expressions around the walk that are not always evaluated (nothing may
    be hoisted out of them). Subclasses rewrite calls (``visit_Call``) and whole statements
    (``statement``)."""

    def __init__(self, ctx, local: set[str], fn=None):
        self.ctx, self.local = ctx, local
        self.before: list = []
        self.after: list = []
        self.unsafe = 0
        walked = list(A.walk(fn)) if fn is not None else []
        self.defs = {n.name: n for n in walked if isinstance(n, gast.FunctionDef) and n is not fn}
        self.defs.update({s.targets[0].id: s.value for s in walked if isinstance(s, gast.Assign)
                          and isinstance(s.value, gast.Lambda) and len(s.targets) == 1
                          and isinstance(s.targets[0], gast.Name)})
        self.stores: dict[str, int] = {}  # name -> how many times it is bound (defs included)
        for n in walked:
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) \
                    or isinstance(n, gast.FunctionDef) and n is not fn:
                name = n.id if isinstance(n, gast.Name) else n.name
                self.stores[name] = self.stores.get(name, 0) + 1

    # --- statements ---

    def statement(self, stmt):
        """``stmt`` rewritten as a whole, or None: its expressions are visited."""
        return None

    def block(self, stmts: list) -> list:
        out = []
        for stmt in stmts:
            self.before, self.after = [], []
            whole = self.statement(stmt)
            if whole is not None:
                stmt = whole
            elif isinstance(stmt, (gast.If, gast.While)):
                self.unsafe += isinstance(stmt, gast.While)
                stmt.test = self.visit(stmt.test)
                self.unsafe -= isinstance(stmt, gast.While)
            elif isinstance(stmt, gast.For):
                stmt.iter = self.visit(stmt.iter)
            elif isinstance(stmt, gast.With):
                for item in stmt.items:
                    item.context_expr = self.visit(item.context_expr)
            elif not isinstance(stmt, (gast.Try, gast.FunctionDef)):  # (a def: compiled on
                stmt = self.visit(stmt)  # its own when it is lifted)
            before, after = self.before, self.after
            if not isinstance(stmt, gast.FunctionDef):
                for field in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(stmt, field, None), list):
                        setattr(stmt, field, self.block(getattr(stmt, field)))
                for handler in getattr(stmt, "handlers", []):
                    handler.body = self.block(handler.body)
            for s in before + after:
                gast.copy_location(s, stmt)
            out += before + [stmt] + after
        self.before, self.after = [], []
        return out

    def once(self, node, like):
        """``node``, evaluated once: an expression other than a name or a constant is bound to
        a fresh name before the statement where that is safe (else it is evaluated again)."""
        if self.unsafe or isinstance(node, (gast.Name, gast.Constant)):
            return node
        name = self.ctx.namer.fresh("_a")
        self.before.append(gast.copy_location(A.assign(name, node), like))
        return A.name(name)

    # --- expressions not always evaluated ---

    def _guarded(self, node):
        self.unsafe += 1
        node = self.generic_visit(node)
        self.unsafe -= 1
        return node

    visit_ListComp = visit_GeneratorExp = visit_SetComp = visit_DictComp = _guarded

    def visit_BoolOp(self, node):
        """``a and b``: ``a`` is always evaluated, ``b`` not."""
        node.values[0] = self.visit(node.values[0])
        self.unsafe += 1
        node.values[1:] = [self.visit(v) for v in node.values[1:]]
        self.unsafe -= 1
        return node

    def visit_IfExp(self, node):
        """``b if t else c``: ``t`` is always evaluated, ``b`` and ``c`` not."""
        node.test = self.visit(node.test)
        self.unsafe += 1
        node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
        self.unsafe -= 1
        return node

    def visit_Lambda(self, node):
        return node  # its calls are rewritten when it is lifted and compiled

    def function_of(self, node, like):
        """An expression calling which calls ``node``'s function: itself for a name, else a
        fresh name it is bound to before the statement (a lambda: lifted from there)."""
        if isinstance(node, (gast.Name, gast.Attribute)):
            return node
        name = self.ctx.namer.fresh("_f")
        self.before.append(gast.copy_location(A.assign(name, node), like))
        return A.name(name)

    def apply(self, function, args: list, keywords=(), func=None):
        """``function(*args)``, an operator's function as its operator; ``func``: the function
        a name the pass bound means (else it is resolved as the user's names are)."""
        if func is None and isinstance(function, (gast.Name, gast.Attribute)):
            if value_of(function, self.local, self.ctx) in _OPERATORS:
                op = _OPERATORS[value_of(function, self.local, self.ctx)]
                if len(args) == 2 and not keywords:
                    return gast.BinOp(left=args[0], op=op(), right=args[1])
        call = gast.Call(func=A.copy_node(function), args=args, keywords=list(keywords))
        if func is not None:
            setanno(call, Anno.FUNC, func)
        return call

    def hoisted(self, node, what: str):
        if self.unsafe:
            raise error_at(node, self.ctx, f"{what} is supported where its value is always "
                           "computed, not in a conditional expression, a comprehension or a "
                           "'while' condition", "assign it to a variable first")


class _HigherOrder(CallRewriter):
    def __init__(self, ctx, local: set[str], vectorized: dict, fn=None):
        super().__init__(ctx, local, fn)
        self.vectorized = vectorized

    def statement(self, stmt):
        if any(stmt is s for s in self.vectorized.values()):  # vf = np.vectorize(f)
            self._check_vectorize(stmt.value)
            stmt.value = stmt.value.args[0]  # vf = f: its calls are rewritten below
            return stmt
        return None

    # --- calls ---

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = value_of(node.func, self.local, self.ctx)
        maker = value_of(node.func.func, self.local, self.ctx) \
            if isinstance(node.func, gast.Call) else None
        if _ours(func) or _ours(maker):
            raise error_at(node, self.ctx, "a derivative taken inside the function being "
                           "differentiated (grad(h)(x), a gradient object called) is not "
                           "supported: nested derivatives are not compiled",
                           "differentiate the derivative itself instead: grad(grad(h)) for "
                           "a function of one number, hessian(h), hvp(h)(x, v); or write the "
                           "first derivative out as a function of its own")
        if func is builtins.map and len(node.args) >= 2 and not node.keywords:
            return self._map(node)
        if func is functools.reduce and 2 <= len(node.args) <= 3 and not node.keywords:
            return self._reduce(node)
        if func is np.apply_along_axis and len(node.args) >= 3:
            return self._along_axis(node)
        if func is np.piecewise and len(node.args) >= 3 and self._has_functions(node.args[2]):
            return self._piecewise(node)
        if isinstance(func, np.vectorize):  # a module's @np.vectorize function
            name = getattr(func.pyfunc, "__name__", "")
            bound = self.ctx.bind(name if name.isidentifier() else "_pyfunc", func.pyfunc)
            return self._vectorized(node, A.name(bound), func.excluded, func.signature,
                                    func.pyfunc, func.otypes or None)
        if isinstance(node.func, gast.Call) \
                and value_of(node.func.func, self.local, self.ctx) is np.vectorize:
            self._check_vectorize(node.func)
            return self._vectorized(node, self.function_of(node.func.args[0], node), (), None)
        if isinstance(node.func, gast.Name) and node.func.id in self.vectorized:
            return self._vectorized(node, A.name(node.func.id), (), None)
        return node

    def _check_vectorize(self, call) -> None:
        """Refuse ``np.vectorize(...)`` options that make its calls other than elementwise, or
        that cast its results to a type that is not a float."""
        options = sorted({k.arg for k in call.keywords} - _VECTORIZE_OPTIONS)
        otypes = next((k.value for k in call.keywords if k.arg == "otypes"), None)
        if otypes is not None and not self._float_types(otypes):
            options.append("otypes other than float")
        if not call.args or options:
            what = ", ".join(options) or "no function"
            raise error_at(call, self.ctx, f"np.vectorize with {what} is not supported",
                           "call the function on each element in a loop")

    def _comprehension(self, elt_of, sources: list, like):
        """``[elt_of(_a, _b) for _a, _b in zip(s0, s1)]`` (one source: no zip)."""
        names = [self.ctx.namer.fresh("_v") for _ in sources]
        if len(sources) == 1:
            target, iterable = A.name(names[0], store=True), sources[0]
        else:
            target = gast.Tuple(elts=[A.name(n, store=True) for n in names], ctx=gast.Store())
            iterable = bound_call(zip, A.builtin("zip"), *sources)
        comp = gast.ListComp(elt=elt_of([A.name(n) for n in names]), generators=[
            gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)])
        return gast.copy_location(comp, like)

    def _map(self, node):
        function = self.function_of(node.args[0], node)
        return self._comprehension(lambda vs: self.apply(function, vs), node.args[1:], node)

    def _reduce(self, node):
        self.hoisted(node, "functools.reduce")
        function = self.function_of(node.args[0], node)
        acc, item = self.ctx.namer.fresh("_acc"), self.ctx.namer.fresh("_v")
        items = node.args[1]
        if len(node.args) == 3:
            start, walked = node.args[2], items
        else:
            seq = self.ctx.namer.fresh("_seq")
            self.before.append(A.assign(seq, bound_call(list, A.builtin("list"), items)))
            start = gast.Subscript(value=A.name(seq), slice=A.const(0), ctx=gast.Load())
            walked = gast.Subscript(value=A.name(seq), slice=gast.Slice(
                lower=A.const(1), upper=None, step=None), ctx=gast.Load())
        self.before.append(A.assign(acc, start))
        step = A.assign(acc, self.apply(function, [A.name(acc), A.name(item)]))
        self.before.append(gast.For(target=A.name(item, store=True), iter=walked,
                                    body=[gast.copy_location(step, node)], orelse=[],
                                    type_comment=None))
        return A.name(acc)

    def _float_types(self, node) -> bool:
        """Whether an ``otypes`` argument names only float types (``[float]``, ``"d"``)."""
        items = node.elts if isinstance(node, (gast.List, gast.Tuple)) else [node]
        for item in items:
            value = item.value if isinstance(item, gast.Constant) else value_of(
                item, self.local, self.ctx)
            try:
                if value is None or np.dtype(value).kind != "f":
                    return False
            except TypeError:
                if not (isinstance(value, str) and all(np.dtype(c).kind == "f" for c in value)):
                    return False
        return True

    def _vectorized(self, node, function, excluded, signature, func=None, otypes=None):
        if otypes is not None and not all(np.dtype(t).kind == "f" for t in otypes):
            raise error_at(node, self.ctx, "np.vectorize with otypes other than float is not "
                           "supported", "call the function on each element in a loop")
        if excluded or signature is not None:
            raise error_at(node, self.ctx, "np.vectorize with 'excluded' or 'signature' is "
                           "not supported", "call the function on each element in a loop")
        args = [self.once(a, node) for a in list(node.args) + [k.value for k in node.keywords]]
        keys = [None] * len(node.args) + [k.arg for k in node.keywords]
        if not args or any(isinstance(a, gast.Starred) for a in args) or None in keys[
                len(node.args):]:
            raise error_at(node, self.ctx, "a vectorized function called with no arguments, "
                           "*args or **kwargs is not supported", "pass the arguments by name")
        np_name = self.ctx.bind("np", np)

        def numpy(name, *a):
            return bound_call(getattr(np, name), f"{np_name}.{name}", *a)

        if len(args) == 1:
            shaped = [args[0]]
        else:
            joint = self.once(numpy("broadcast_arrays", *map(A.copy_node, args)), node)
            shaped = [gast.Subscript(value=A.copy_node(joint), slice=A.const(i), ctx=gast.Load())
                      for i in range(len(args))]

        def call(vs):
            return self.apply(function, [v for v, k in zip(vs, keys, strict=True) if k is None],
                               [gast.keyword(arg=k, value=v)
                                for v, k in zip(vs, keys, strict=True) if k],
                               func)

        comp = self._comprehension(call, [numpy("ravel", s) for s in shaped], node)
        result = numpy("reshape", numpy("array", comp), numpy("shape", A.copy_node(shaped[0])))
        return gast.copy_location(result, node)

    def _along_axis(self, node):
        function = self.function_of(node.args[0], node)
        axis, array, extra = node.args[1], self.once(node.args[2], node), node.args[3:]
        rt = self.ctx.bind("rt", runtime)
        lanes = bound_call(runtime.lanes, f"{rt}.lanes", array, axis)
        comp = self._comprehension(lambda vs: self.apply(function, vs + list(extra),
                                                          node.keywords), [lanes], node)
        stacked = bound_call(np.array, f"{self.ctx.bind('np', np)}.array", comp)
        return gast.copy_location(bound_call(runtime.along_axis, f"{rt}.along_axis", stacked,
                                        A.copy_node(array), A.copy_node(axis)), node)

    @staticmethod
    def _has_functions(funclist) -> bool:
        return isinstance(funclist, (gast.List, gast.Tuple)) and any(
            not isinstance(f, (gast.Constant, gast.UnaryOp)) for f in funclist.elts)

    def _piecewise(self, node):
        self.hoisted(node, "np.piecewise of functions")
        x, conds, funcs = node.args[0], node.args[1], node.args[2].elts
        extra, keywords = node.args[3:], node.keywords
        if isinstance(conds, (gast.Compare, gast.BoolOp)) or (
                isinstance(conds, gast.BinOp) and isinstance(conds.op, (gast.BitAnd, gast.BitOr)))\
                or (isinstance(conds, gast.UnaryOp) and isinstance(conds.op, gast.Invert)):
            conds = gast.List(elts=[conds], ctx=gast.Load())  # one condition
        if not isinstance(conds, (gast.List, gast.Tuple)):
            raise error_at(node, self.ctx, "np.piecewise of functions needs its conditions "
                           "written out in the call", "np.piecewise(x, [x < 0, x >= 0], [f, g])")
        conds = list(conds.elts)
        if len(funcs) not in (len(conds), len(conds) + 1):
            raise error_at(node, self.ctx, "np.piecewise needs as many functions as conditions, "
                           "or one more", "")
        np_name = self.ctx.bind("np", np)
        xs, out = self.ctx.namer.fresh("_x"), self.ctx.namer.fresh("_y")
        self.before += [A.assign(xs, bound_call(np.asarray, f"{np_name}.asarray", x)),
                        A.assign(out, bound_call(np.zeros_like, f"{np_name}.zeros_like",
                                            A.name(xs)))]
        masks = []
        for cond in conds:
            mask = self.ctx.namer.fresh("_c")
            self.before.append(A.assign(mask, bound_call(np.asarray, f"{np_name}.asarray", cond)))
            masks.append(mask)
        if len(funcs) == len(conds) + 1:  # the last function: where no condition holds
            mask = self.ctx.namer.fresh("_c")
            anyone = bound_call(np.any, f"{np_name}.any", gast.List(
                elts=[A.name(m) for m in masks], ctx=gast.Load()), keywords=[
                gast.keyword(arg="axis", value=A.const(0))])
            self.before.append(A.assign(mask, gast.UnaryOp(op=gast.Invert(), operand=anyone)))
            masks.append(mask)
        for mask, func in zip(masks, funcs, strict=True):
            if isinstance(func, (gast.Constant, gast.UnaryOp)):
                value = func
            else:
                piece = gast.Subscript(value=A.name(xs), slice=A.name(mask), ctx=gast.Load())
                value = self.apply(self.function_of(func, node), [piece] + list(extra), keywords)
            target = gast.Subscript(value=A.name(out), slice=A.name(mask), ctx=gast.Store())
            self.before.append(gast.Assign(targets=[target], value=value, type_comment=None))
        return A.name(out)
