"""Turn partial contributions into assignments, and make every gradient exist where it is read.

The reverse pass emits each partial as ``bx = e`` annotated ACCUMULATE ("add e to bx"), plus
RESET markers (bx's value is dead: the next write starts anew) and ZERO markers (bx must exist
here). Walking the adjoint in order with the set of gradients certainly defined:

- the first write of a gradient stays ``bx = e``; later ones become ``bx = bx + e`` (never
  ``+=``: a gradient may alias another array, and the user's arrays are never written), whose
  ``+`` is annotated SUM unless ``x`` is known to be a number or an array (it may be a list's
  gradient, which a backend adds item by item);
- a ZERO marker becomes ``bx = rt.zeros_like_grad(x)`` only where ``bx`` may be undefined;
- after an ``if``, a gradient defined in one branch only is zeroed in the other, and one defined
  when a loop body starts is zeroed at the body's end if the body left it undefined (in both
  cases only when the gradient is used afterwards);
- a returned gradient that nothing wrote is zero. Never ``bx = 0`` followed by ``bx += ...``;
- ``bx = bx + rt.unindex(p, x, i)`` becomes ``bx = rt.add_into(bx, i, p)`` (an in-place
  ``bx[i] += p``) when ``bx`` holds an array the adjoint just created (by ``rt.unindex`` or
  ``rt.zero_index``) and nothing has read it since, in the same block; written out as
  ``bx[i] += p`` when ``bx`` is certainly an array (made by ``rt.zero_index``) and ``i`` selects
  each element at most once (numbers, slices, counters).

>>> import gast
>>> from transpiler.anno import Anno, setanno
>>> from transpiler.emit import to_source
>>> from transpiler.naming import Namer
>>> from types import SimpleNamespace
>>> fn = gast.parse("def g(x, y):\\n    bx = a\\n    bx = b\\n    return bx, by").body[0]
>>> for s in fn.body[:2]: setanno(s, Anno.ACCUMULATE)
>>> namer = Namer({"x", "y"}); _ = namer.grad("x"), namer.grad("y")
>>> ctx = SimpleNamespace(wrt=("x", "y"), namer=namer, bind=lambda name, obj: name,
...                       facts=SimpleNamespace(scalars=frozenset(), ranks={}))
>>> print(to_source(fix_grads(fn, ctx)))
def g(x, y):
    bx = a
    bx = bx + b
    by = rt.zeros_like_grad(y)
    return bx, by
"""

from __future__ import annotations

import gast

import runtime
from transpiler import ast_util as A
from transpiler.analysis.scalars import selects_entry, selects_once
from transpiler.anno import Anno, getanno, hasanno, setanno


def fix_grads(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    *body, ret = fn.body
    fixer = _Fixer(ctx)
    defined: set[str] = set()
    body = fixer.block(body, defined, set(ctx.namer.grad(w) for w in ctx.wrt))
    for w in ctx.wrt:
        grad = ctx.namer.grad(w)
        if grad not in defined:
            body.append(gast.copy_location(fixer.zero(grad, w), ret))
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs}
    # A zero made for a value some path never assigns (a branch that returned early): define
    # the value as None first, so the zero (0.0 then; the path never uses it) cannot fail.
    unbound = [A.assign(v, A.const(None), like=ret) for v in sorted(fixer.zeroed - params)]
    fn.body = unbound + body + [ret]
    return fn


# rt.unindex(p, x, i) and its sparse kin (the gradient of reading entries of a sparse x, the
# tangent of writing them): each ``bx[i] += p`` into a bx the adjoint owns
_SPREADS = ("unindex", "sparse_index_adjoint", "sparse_unindex")


def _rt_call(node, rt: str, name: str) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
        and isinstance(node.func.value, gast.Name) and node.func.value.id == rt \
        and node.func.attr == name


def _names(stmt) -> set[str]:
    return {n.id for n in A.walk(stmt) if isinstance(n, gast.Name)}


class _Fixer:
    def __init__(self, ctx):
        self.ctx = ctx
        self.zeroed: set[str] = set()  # values whose gradient a fix-up zeroes on some path

    def fresh(self, value) -> bool:
        """Whether ``value`` creates a new array that nothing else refers to."""
        rt = self.ctx.bind("rt", runtime)
        return any(_rt_call(value, rt, name) for name in _SPREADS + ("zero_index",))

    def basic(self, index) -> bool:
        """An index selecting each element at most once (analysis.scalars.selects_once)."""
        return selects_once(index, self.ctx.facts.scalars)

    def spread(self, value, grad: str):
        """``rt.unindex(p, x, i)`` with ``x`` the variable of ``grad``: ``(p, i)``, else None."""
        rt = self.ctx.bind("rt", runtime)
        if any(_rt_call(value, rt, name) for name in _SPREADS) and len(value.args) == 3 \
                and isinstance(value.args[1], gast.Name) \
                and self.ctx.namer.grad(value.args[1].id) == grad:
            return value.args[0], value.args[2]
        return None

    def increment(self, value) -> bool:
        """Whether ``bx = bx + spread(p, x, i)`` may be written ``bx[i] += p``: an index
        selecting each element once; of a sparse matrix, one entry (``p`` a number: the
        gradient of a row of one is a ``SparseGrad``, added by ``rt.add_into``)."""
        index = value.args[2]
        if _rt_call(value, self.ctx.bind("rt", runtime), "unindex"):
            return self.basic(index)
        return selects_entry(index, self.ctx.facts.scalars)

    def accumulate(self, grad: str, value, in_place: bool):
        if in_place:
            part, index = self.spread(value, grad)
            add_into = A.dotted(f"{self.ctx.bind('rt', runtime)}.add_into")
            call = A.call(add_into, A.name(grad), index, part)
            setanno(call, Anno.FUNC, runtime.add_into)
            return call
        op = gast.Add()
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
            value, op = value.operand, gast.Sub()  # bx + -e -> bx - e
        total = gast.BinOp(left=A.name(grad), op=op, right=value)
        var = self.ctx.namer.var_of(grad)
        if var not in self.ctx.facts.scalars and var not in self.ctx.facts.ranks:
            setanno(total, Anno.SUM)  # (may be a list's: item by item)
        return total

    def zero(self, grad: str, var: str) -> gast.Assign:
        if var in self.ctx.facts.scalars:
            return A.assign(grad, A.const(0.0))
        zeros = A.call(A.dotted(f"{self.ctx.bind('rt', runtime)}.zeros_like_grad"), A.name(var))
        setanno(zeros, Anno.FUNC, runtime.zeros_like_grad)
        return A.assign(grad, zeros)

    def zero_missing(self, grads: set[str], like) -> list:
        variables = [self.ctx.namer.var_of(g) for g in sorted(grads)]
        self.zeroed.update(v for v in variables if v not in self.ctx.facts.scalars)
        return [gast.copy_location(self.zero(g, v), like)
                for g, v in zip(sorted(grads), variables, strict=True)]

    def block(self, stmts: list, defined: set[str], after: set[str]) -> list:
        """Fix ``stmts``; ``after`` holds the names used once the block is done."""
        out: list = []
        owned: set[str] = set()  # gradients holding a fresh array no other name refers to
        arrays: set[str] = set()  # owned gradients certainly NumPy arrays (from rt.zero_index)
        if not stmts:
            return out
        used_later = [after] * len(stmts)  # only compound statements need it exactly
        if any(isinstance(s, (gast.If, gast.For, gast.While)) for s in stmts):
            used_later = [set(after)]
            for stmt in reversed(stmts[1:]):
                used_later.append(used_later[-1] | _names(stmt))
            used_later.reverse()
        for stmt, later in zip(stmts, used_later, strict=True):
            if hasanno(stmt, Anno.RESET):
                defined.discard(getanno(stmt, Anno.RESET))
                continue
            if hasanno(stmt, Anno.ZERO):
                grad, var = getanno(stmt, Anno.ZERO)
                if grad not in defined:
                    if var not in self.ctx.facts.scalars:
                        self.zeroed.add(var)
                    out.append(gast.copy_location(self.zero(grad, var), stmt))
                    defined.add(grad)
                continue
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                owned.clear()  # ownership is tracked within one straight-line block
                arrays.clear()
            if isinstance(stmt, gast.If) and hasanno(stmt, Anno.WITH):  # runs once, always
                stmt.body = self.block(stmt.body, defined, later) or [gast.Pass()]
            elif isinstance(stmt, gast.If):
                in_body, in_else = set(defined), set(defined)
                stmt.body = self.block(stmt.body, in_body, later) or [gast.Pass()]
                stmt.orelse = self.block(stmt.orelse, in_else, later)
                stmt.body += self.zero_missing((in_else - in_body) & later, stmt)
                stmt.orelse += self.zero_missing((in_body - in_else) & later, stmt)
                defined |= (in_body & in_else) | ((in_body | in_else) & later)
            elif isinstance(stmt, (gast.For, gast.While)):
                inside = set(defined)
                around = later | _names(stmt)  # the next iteration uses the body again
                stmt.body = self.block(stmt.body, inside, around) or [gast.Pass()]
                stmt.body += self.zero_missing((defined - inside) & around, stmt)
            elif isinstance(stmt, gast.Assign):
                grad = A.target_name(stmt)
                in_place = False
                if hasanno(stmt, Anno.ACCUMULATE) and grad in defined:
                    in_place = grad in owned and self.spread(stmt.value, grad) is not None
                    if in_place and grad in arrays and self.increment(stmt.value):
                        part, index = self.spread(stmt.value, grad)
                        owned -= set(A.load_names(part))
                        out.append(gast.copy_location(gast.AugAssign(
                            target=gast.Subscript(value=A.name(grad), slice=A.index_syntax(index),
                                                  ctx=gast.Store()), op=gast.Add(), value=part),
                            stmt))
                        continue
                    stmt.value = self.accumulate(grad, stmt.value, in_place)
                owned -= set(A.load_names(stmt.value)) - ({grad} if in_place else set())
                if in_place or (grad and self.fresh(stmt.value)):
                    owned.add(grad)
                else:
                    owned.discard(grad)
                if grad and _rt_call(stmt.value, self.ctx.bind("rt", runtime), "zero_index"):
                    arrays.add(grad)
                elif not in_place:
                    arrays.discard(grad)
                defined.update(n.id for t in stmt.targets for n in A.walk(t)
                               if isinstance(n, gast.Name) and self.ctx.namer.is_grad(n.id))
            out.append(stmt)
        return out
