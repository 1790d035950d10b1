"""Element writes and gradient updates in loops, in place where nothing sees the old value.

The lowering keeps every value: an element write ``y_2 = <setitem>(y_1, i, v)`` becomes
``y_2 = y_1.copy(); y_2[i] = v``, the adjoint zeroes the overwritten part of a gradient in a
copy (``by_1 = rt.zero_index(by_2, i)``) and adds an element's gradient into a new array
(``bx = bx + rt.unindex(p, x, i)``). In a loop each costs the whole array per element. This
pass rewrites them (in each loop, then in what runs once) as what a person writes by hand::

    y_2 = y_1; y_2[i] = v                  # (optimize then reads: y_1[i] = v)
    by_2[i] = 0.0; by_1 = by_2
    bx[i] += p                             # (rt.add_into(bx, idx, p) for an integer array)

when the old array is no longer needed: no name that may refer to it is read afterwards, in
the primal or the adjoint (liveness over the whole generated function, its loops' next
iterations included), and it is the loop's own. Which names may refer to the same array is a
flow-insensitive closure over the loop's statements: a copy ``a = b``, a view (``y[1:]``, a
call that may return its argument) or a site rewritten here joins them; arithmetic, element
reads of known rank (``x[i]`` of a 1-D array) and allocations (``np.zeros``, ``.copy()``,
``rt.unindex``) start a new array. A class holding a name the loop does not assign (a
parameter, a value from before the loop that stays live), a value passed to a call that may
keep it, or a value no allocation here made (``rt.unreduce``'s read-only broadcast) is left as
it was. An array carried into the loop gets one copy before the loop (``by_1 =
rt.owned(by_1)``), unless it was just made there and nothing else refers to it.

Where only the adjoint still reads the old array (a loop's tape holds it, or a read after the
loop: ``s = s + np.sum(y * y)`` beside ``y[i] = ...``), the write is made in place anyway and,
as Tapenade does, only what it overwrites is saved: ``_overwritten.append((y, i, y[i]))``
before it, and at its mirror in the adjoint (the RESTORE marker the reverse pass left there)
``_array, _index, _old = _overwritten.pop(); _array[_index] = _old`` puts it back. The adjoint
then reads every array, at the mirror of each statement, as the primal had it there. The stack
is the function's own list, whose pushes and pops nest as the loops do.
"""

from __future__ import annotations

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.scalars import selects_entry, selects_once
from transpiler.anno import Anno, getanno, hasanno, setanno
from transpiler.passes import tape
from transpiler.passes.ssa import stored_names

_FRESH_CALLS = frozenset({np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
                          np.empty_like, np.full_like, np.copy, np.array,
                          runtime.zeros_like_grad, runtime.zero_tangent})
# new arrays when what they spread or select is an array; for a tuple, list or dict a container
# holding the gradient it was given (unindex, written) or entries of the old one (zero_index)
_FRESH_FOR_ARRAYS = {runtime.unindex: 1, runtime.zero_index: 0, runtime.written: 0,
                     runtime.sparse_index_adjoint: 1, runtime.sparse_unindex: 1,
                     runtime.sparse_written: 0}
# rt.unindex(p, x, i) and its sparse kin: the gradient of reading x[i] (a SparseGrad for a sparse
# x), the tangent of writing it (a sparse matrix), both written bx[i] += p into an owned bx
_SPREADS = frozenset({runtime.unindex, runtime.sparse_index_adjoint, runtime.sparse_unindex})
_PASSING = frozenset({runtime.unbroadcast})  # the first argument itself, or a new array
_LOOPS = (gast.For, gast.While)


def inplace(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    if not isinstance(fn, gast.FunctionDef):  # a split pair: its halves share residuals
        return _expand(fn)
    if not any(_may_be_site(s) for s in _statements(fn.body)):
        return _expand(fn)  # (no element write, no gradient of one)
    rewriter = _InPlace(fn, ctx)
    for loop in (n for n in A.walk(fn) if isinstance(n, _LOOPS)):  # outer loops first: an
        rewriter.region(loop, loop.body)  # inner loop's sites are its own
    rewriter.region(fn, fn.body)  # and what runs once
    if rewriter.stack is not None:
        fn.body.insert(0, gast.copy_location(
            A.assign(rewriter.stack, gast.List(elts=[], ctx=gast.Load())), fn.body[0]))
    return _expand(fn)


class _InPlace:
    def __init__(self, fn, ctx):
        self.fn, self.ctx = fn, ctx
        self.rt = ctx.bind("rt", runtime)
        self.variables: dict[str, str] = {}  # derivative name -> its variable
        self.live_out: dict = {}
        _liveness(fn.body, set(), self.live_out, self.rt)
        # the RESTORE markers at the mirrors of the writes (reverse mode), and the liveness of
        # the primal alone (what the adjoint reads is put back before it reads it)
        self.restores = {id(getanno(s, Anno.RESTORE)): s for s in _statements(fn.body)
                         if hasanno(s, Anno.RESTORE)}
        self.primal_live: dict | None = None
        self.stack: str | None = None  # the stack of overwritten values, once one is needed
        self.rewritten: set[int] = set()  # the statements written in place so far

    # --- what is known of a name ---

    def rank(self, name: str) -> int | None:
        """The number of dimensions of a NumPy array's or a 2-D sparse matrix's value."""
        facts = self.ctx.facts
        if name not in facts.ranks and name not in facts.matrices:
            name = self.variable(name)  # a gradient or tangent has its variable's shape
        return 2 if name in facts.matrices else facts.ranks.get(name)

    def matrix(self, name: str) -> bool:
        """Whether ``name`` certainly holds a scipy.sparse matrix (its slices are copies)."""
        return name in self.ctx.facts.matrices or self.variable(name) in self.ctx.facts.matrices

    def scalar(self, name: str) -> bool:
        scalars = self.ctx.facts.scalars
        return name in scalars or self.variable(name) in scalars

    def variable(self, name: str) -> str:
        found = self.variables.get(name)
        if found is None:
            found = self.variables[name] = self.ctx.namer.variable(name)
        return found

    def element(self, node) -> bool:
        """``x[i]``, ``x[i, j]`` of an array of known rank with scalar indices: a number."""
        if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)):
            return False
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        return self.rank(node.value.id) == len(parts) and all(
            not isinstance(p, gast.Slice) and all(
                isinstance(n, (gast.Constant, gast.BinOp, gast.UnaryOp))
                or (isinstance(n, gast.Name) and self.scalar(n.id)) for n in A.walk(p))
            for p in parts)

    # --- one loop ---

    def region(self, owner, body: list) -> None:
        """The sites of a loop's body (or of the function's, ``owner`` the function)."""
        sites = [s for s in _own_statements(body) if self.site(s) is not None]
        if not sites:
            return
        classes = _Classes()
        assigned = stored_names(body) | ({owner.target.id} if isinstance(owner, gast.For)
                                       and isinstance(owner.target, gast.Name) else set())
        for stmt in _statements(body):
            self.record(stmt, classes)
            found = self.site(stmt)  # (an inner loop's too: it may be rewritten after this)
            if found is not None:
                classes.union(found[1], found[2])
        for name in classes.names():
            if name not in assigned and not self.scalar(name):
                classes.spoil(name)  # not the loop's own (a parameter, an outer value)
        live_in = self.live_out.get(("in", id(owner)), set())  # (none for the function)
        carried = {n for n in assigned if n in live_in}
        bound = self.bound_before(owner) if carried else (set(), set())
        copies = set()
        for stmt in sites:
            kind, old, new = self.site(stmt)
            members = classes.members(old)
            entering = members & carried
            if any(n in bound[1] and n not in bound[0] for n in entering):
                continue  # bound before the loop on some paths only: no copy can be made
            if classes.spoiled(old) or any(n != new and n in self.live_out.get(id(stmt), ())
                                           for n in members):
                if not (kind == "write" and owner is not self.fn
                        and self.restorable(stmt, old, new, members, classes)):
                    continue
                self.save(stmt, new)  # the adjoint reads the old values: put them back there
            copies |= entering & bound[0]
            self.rewrite(stmt, kind)
        if copies:
            self.own_before(owner, sorted(copies))

    def restorable(self, stmt, old: str, new: str, members: set[str], classes) -> bool:
        """Whether the write may be made in place, the overwritten elements saved and put back
        at its mirror in the adjoint (Tapenade's way): only the adjoint reads the old array
        (a tape holding it, a read after the loop), not the primal, and the adjoint loop has
        the write's RESTORE marker."""
        if id(getanno(stmt, Anno.WRITE_COPY)) not in self.restores \
                or classes.spoiled(old, but=classes.pushed):
            return False
        if self.primal_live is None:
            self.primal_live = {}
            start = _first_adjoint(self.fn.body)
            _liveness(self.fn.body[:start], _reads(self.fn.body[-1], self.rt), self.primal_live,
                      self.rt, pushes=False)
            # what the adjoint binds to a primal array (bx = rt.unbroadcast(y, x), a view of
            # it): such a name would see the values put back
            self.adjoint_aliases = {n for s in _statements(self.fn.body[start:])
                                    if isinstance(s, gast.Assign) for n in self.aliases(s.value)}
        if any(n != new and n in self.primal_live.get(id(stmt), ()) for n in members) \
                or members & self.adjoint_aliases:
            return False
        return not members & _reads(self.fn.body[-1], self.rt)  # (returned: never put back)

    def save(self, stmt, new: str) -> None:
        """``_overwritten.append((y, i, y[i]))`` before the write; its RESTORE marker becomes
        ``_a, _i, _v = _overwritten.pop(); _a[_i] = _v`` (the stack is the function's: pushes
        and pops nest as the loops do)."""
        block = _block_of(self.fn.body, stmt)
        write = block[block.index(stmt) + 1]
        index = write.targets[0].slice
        if self.stack is None:
            self.stack = self.ctx.namer.fresh("_overwritten")
        part = gast.Subscript(value=A.name(new), slice=A.copy_node(index), ctx=gast.Load())
        if self.matrix(new) and not self.element(part):  # (a sparse matrix's row: a copy,
            part = A.call(A.attr(part, "copy"))  # which the write puts back as it is)
        elif not self.element(part):  # (a slice, a row: a view, which the write would change)
            part = A.call(A.attr(A.name(self.ctx.bind("np", np)), "copy"), part)
            setanno(part, Anno.FUNC, np.copy)
        entry = gast.Tuple(elts=[A.name(new), A.index_expression(index), part], ctx=gast.Load())
        push = gast.Expr(value=A.call(A.attr(A.name(self.stack), "append"), entry))
        setanno(write, Anno.BEFORE, getanno(write, Anno.BEFORE, [])
                + [gast.copy_location(push, write)])
        marker = self.restores[id(getanno(stmt, Anno.WRITE_COPY))]
        names = [self.ctx.namer.fresh(n) for n in ("_array", "_index", "_old")]
        pop = A.assign(gast.Tuple(elts=[A.name(n, store=True) for n in names],
                                  ctx=gast.Store()), A.call(A.attr(A.name(self.stack), "pop")))
        put = gast.Assign(targets=[gast.Subscript(value=A.name(names[0]),
                                                  slice=A.name(names[1]), ctx=gast.Store())],
                          value=A.name(names[2]), type_comment=None)
        setanno(marker, Anno.REPLACE, [gast.copy_location(s, marker) for s in (
            A.comment("put back what the write overwrote"), pop, put)])

    def site(self, stmt):
        """``(kind, old, new)`` of a statement this pass may rewrite, or None."""
        if not isinstance(stmt, gast.Assign) or not isinstance(stmt.targets[0], gast.Name):
            return None
        new, value = stmt.targets[0].id, stmt.value
        if hasanno(stmt, Anno.WRITE_COPY) and isinstance(value, gast.Call) \
                and isinstance(value.func.value, gast.Name):
            return "write", value.func.value.id, new
        func = getanno(value, Anno.FUNC) if isinstance(value, gast.Call) else None
        if func is runtime.zero_index and isinstance(value.args[0], gast.Name) \
                and self.rank(value.args[0].id):
            return "zero", value.args[0].id, new
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) \
                and isinstance(value.left, gast.Name) and value.left.id == new \
                and isinstance(value.right, gast.Call) \
                and getanno(value.right, Anno.FUNC) in _SPREADS \
                and len(value.right.args) == 3 and self.rank(new) \
                and isinstance(value.right.args[1], gast.Name) \
                and self.rank(value.right.args[1].id) == self.rank(new):
            return "add", new, new
        return None

    def record(self, stmt, classes: _Classes) -> None:
        """What ``stmt`` tells of which names may hold the same array."""
        if isinstance(stmt, gast.Assign):
            targets = [n.id for t in stmt.targets for n in A.walk(t)
                       if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
            bases = [t.value for t in stmt.targets if isinstance(t, gast.Subscript)]
            if bases:  # y[i] = v: v's value is copied into y
                return
            for target in targets:
                classes.add(target)
                if self.scalar(target):
                    continue
                held = self.held(stmt.value)
                if held is None:  # (a list holding y, a call that may return it: y's class)
                    classes.spoil(target)
                    held = [n for n in _reads(stmt.value, self.rt) if not self.scalar(n)]
                for name in held:
                    classes.union(target, name)
                if len(stmt.targets) > 1 or not isinstance(stmt.targets[0], gast.Name):
                    classes.spoil(target)  # unpacked from something
        elif isinstance(stmt, gast.AugAssign):
            pass  # bx[i] += p (fix_grads): in place into an array it owns
        elif isinstance(stmt, gast.For) and not _counted(stmt):
            for n in A.walk(stmt.target):
                if isinstance(n, gast.Name) and not self.scalar(n.id):
                    classes.spoil(n.id)  # an element of a sequence (a row of an array)
        elif isinstance(stmt, gast.Expr):
            pushed = tape.push_of(stmt) is not None
            for name in A.load_names(stmt.value):  # tape.append(v), print(v): may keep it
                if not self.scalar(name) and not _shape_only(stmt.value, name, self.rt):
                    classes.add(name)
                    classes.spoil(name)
                    if pushed:  # (read by the adjoint: fine once the writes are undone)
                        classes.pushed.add(name)

    def aliases(self, value) -> list[str]:
        """The names whose array ``value`` may be, or share memory with."""
        held = self.held(value)
        return held if held is not None else [n for n in _reads(value, self.rt)
                                              if not self.scalar(n)]

    def held(self, value) -> list[str] | None:
        """The names whose array ``value`` may be (or be a view of); None if it may be an
        array not made here (or not writable)."""
        if isinstance(value, gast.Name):
            return [value.id]
        if isinstance(value, (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare,
                              gast.BoolOp)):
            return []
        if self.element(value):
            return []
        if isinstance(value, gast.Subscript):
            return [n for n in A.load_names(value.value) if not self.scalar(n)]
        if isinstance(value, gast.Call):
            func = getanno(value, Anno.FUNC)
            try:
                fresh = func in _FRESH_CALLS or (isinstance(func, np.ufunc)
                                                 and not value.keywords)
                passing = func in _PASSING
            except TypeError:
                fresh = passing = False
            if isinstance(value.func, gast.Attribute) and value.func.attr == "copy" \
                    and not value.args and func is None:
                fresh = True
            try:
                shaped = _FRESH_FOR_ARRAYS.get(func)
            except TypeError:  # (an unhashable callable)
                shaped = None
            if shaped is not None and len(value.args) > shaped:
                like = value.args[shaped]
                if isinstance(like, gast.Name) and self.rank(like.id):
                    return []
                return None  # (a container's entries may be the gradients it was given)
            if fresh:
                return []
            if passing:  # (what its argument holds: an element read, a number, holds none)
                inner = self.held(value.args[0])
                return inner if inner is not None else [
                    n for n in A.load_names(value.args[0]) if not self.scalar(n)]
            if func is runtime.add_into:
                return [n for n in A.load_names(value.args[0])]
        return None

    # --- rewriting ---

    def rewrite(self, stmt, kind: str) -> None:
        self.rewritten.add(id(stmt))
        value = stmt.value
        if kind == "write":  # y_2 = y_1.copy() -> y_2 = y_1 (the write follows)
            stmt.value = A.name(value.func.value.id)
            return  # (an outer region sees y_2 = y_1: the same array, as it now is)
        if kind == "zero":  # by_1 = rt.zero_index(by_2, i) -> by_2[i] = 0.0; by_1 = by_2
            old, index = value.args[0].id, value.args[1]
            zero = gast.Assign(targets=[gast.Subscript(
                value=A.name(old), slice=A.index_syntax(index), ctx=gast.Store())],
                value=A.const(0.0), type_comment=None)
            setanno(stmt, Anno.BEFORE, [gast.copy_location(zero, stmt)])
            stmt.value = A.name(old)
            return
        # bx = bx + rt.unindex(p, x, i) -> bx[i] += p (or rt.add_into for an integer array)
        grad, (part, _, index) = stmt.targets[0].id, value.right.args
        if selects_entry(index, self.ctx.facts.scalars) if getanno(
                value.right, Anno.FUNC) is not runtime.unindex else selects_once(
                index, self.ctx.facts.scalars):  # (of a sparse matrix: one entry, a number)
            setanno(stmt, Anno.REPLACE, gast.copy_location(gast.AugAssign(
                target=gast.Subscript(value=A.name(grad), slice=A.index_syntax(index),
                                      ctx=gast.Store()), op=gast.Add(), value=part), stmt))
        else:
            stmt.value = A.call(A.dotted(f"{self.rt}.add_into"), A.name(grad), index, part)
            setanno(stmt.value, Anno.FUNC, runtime.add_into)

    def bound_before(self, loop) -> tuple[set[str], set[str]]:
        """The names certainly bound when ``loop`` starts (parameters, assignments before it
        on every path), and those that may be (assigned anywhere before it, or in a loop
        around it)."""
        always = {a.id for a in self.fn.args.args + self.fn.args.kwonlyargs}
        maybe = set(always)

        def path(stmts: list) -> bool:
            for i, stmt in enumerate(stmts):
                if stmt is loop:
                    always.update(A.assigned_always(stmts[:i]))
                    maybe.update(stored_names(stmts[:i]))
                    return True
                for field in ("body", "orelse"):
                    block = getattr(stmt, field, None)
                    if isinstance(block, list) and path(block):
                        always.update(A.assigned_always(stmts[:i]))
                        maybe.update(stored_names(stmts[:i + 1]) if isinstance(stmt, _LOOPS)
                                     else stored_names(stmts[:i]))
                        return True
            return False

        path(self.fn.body)
        return always, maybe

    def own_before(self, loop, names: list[str]) -> None:
        """A private copy, before the loop, of each array it carries in and writes in place
        (once: an inner loop may ask for the copy of an outer one's, see ``hoisted``)."""
        before = getanno(loop, Anno.BEFORE, [])
        copied = {A.target_name(s) for s in before if isinstance(s, gast.Assign)
                  and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
                  and s.value.func.attr == "owned"}
        copies = [gast.copy_location(A.assign(n, A.call(A.dotted(f"{self.rt}.owned"),
                                                        A.name(n))), loop)
                  for n in names if n not in copied and not self.made_for(loop, n)]
        if copies:
            setanno(loop, Anno.BEFORE, getanno(loop, Anno.BEFORE, []) + copies)

    def made_for(self, loop, name: str) -> bool:
        """Whether ``name`` holds, at the loop, an array just made for it: the loop's block
        assigns it (or a name it copies) an allocation, and nothing else refers to that one."""
        block = _block_of(self.fn.body, loop)
        if block is None:
            return False
        i = next(k for k, s in enumerate(block) if s is loop)
        target = name
        for stmt in reversed(block[:i]):
            if A.target_name(stmt) == target:
                held = self.held(stmt.value)
                if held == []:
                    return True
                if held is None or len(held) != 1 or held[0] in self.live_out.get(
                        ("in", id(loop)), set()):
                    return False
                target = held[0]
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript) \
                    and isinstance(stmt.targets[0].value, gast.Name) \
                    and stmt.targets[0].value.id == target and target not in _reads(
                        stmt.value, self.rt) | _reads(stmt.targets[0].slice, self.rt):
                continue  # an element written into it
            elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript) \
                    and isinstance(stmt.target.value, gast.Name) \
                    and stmt.target.value.id == target and target not in _reads(
                        stmt.value, self.rt) | _reads(stmt.target.slice, self.rt):
                continue  # an element's gradient added into it (bx[i] += p)
            elif isinstance(stmt, gast.Assign) and self.element(stmt.value) \
                    and A.target_name(stmt) != target:
                continue  # an element read (a number)
            elif target in {n.id for n in A.walk(stmt) if isinstance(n, gast.Name)}:
                return False  # read (maybe kept) or written on the way
        return self.hoisted(loop, target)

    def hoisted(self, loop, name: str) -> bool:
        """Whether ``name`` holds, when ``loop`` starts, the array a loop around it carries
        round its body, which nothing else there refers to: its other names only copy it
        (``a_2 = a_1``), read its elements or write into it in place. One private copy before
        that loop then serves every start of this one (none, if the array was just made for
        it), where a copy at each start would cost the whole array per outer iteration::

            for e in ...:              a_1 = rt.owned(a_1)
                a_2 = a_1              for e in ...:
                for b in ...:    ->        a_2 = a_1
                    a_2[...] = ...         for b in ...:
                a_1 = a_2                      a_2[...] = ...
                                           a_1 = a_2
        """
        outer = next((s for s in _statements(self.fn.body) if isinstance(s, _LOOPS)
                      and any(b is loop for b in s.body)), None)
        if outer is None:
            return False
        chain, inside = {name}, {id(s) for s in _statements([loop])}
        copies = {id(s): s for s in _statements(outer.body) if id(s) not in inside
                  and isinstance(s, gast.Assign) and len(s.targets) == 1
                  and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)}
        grown = True
        while grown:
            grown = False
            for stmt in copies.values():
                pair = {stmt.targets[0].id, stmt.value.id}
                if pair & chain and not pair <= chain:
                    chain |= pair
                    grown = True
        for stmt in _statements(outer.body):
            if id(stmt) in inside or id(stmt) in copies or id(stmt) in self.rewritten:
                continue
            written = stmt.targets[0] if isinstance(stmt, gast.Assign) else getattr(
                stmt, "target", None)
            if isinstance(stmt, (gast.Assign, gast.AugAssign)) \
                    and isinstance(written, gast.Subscript) \
                    and isinstance(written.value, gast.Name) \
                    and not chain & (set(A.load_names(stmt.value))
                                     | set(A.load_names(written.slice))):
                continue  # an element written in place (y[i] = v, bx[i] += p)
            if isinstance(stmt, gast.Assign) and self.element(stmt.value) \
                    and isinstance(stmt.targets[0], gast.Name):
                continue  # an element read: a number
            if isinstance(stmt, (gast.For, gast.While, gast.If)):
                header = [stmt.test] if not isinstance(stmt, gast.For) else [stmt.iter,
                                                                             stmt.target]
            else:
                header = [stmt]
            if chain & {n.id for h in header for n in A.walk(h) if isinstance(n, gast.Name)}:
                return False
        entering = chain & self.live_out.get(("in", id(outer)), set())
        if len(entering) != 1 or not entering <= self.bound_before(outer)[0]:
            return False
        self.own_before(outer, sorted(entering))
        return True


def _expand(fn: gast.FunctionDef) -> gast.FunctionDef:
    """Splice in what ``_InPlace`` annotated: statements BEFORE a statement, REPLACE."""
    def block(stmts: list) -> list:
        out = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    kept = block(getattr(stmt, field))
                    setattr(stmt, field, kept or ([gast.Pass()] if field == "body"
                                                  and getattr(stmt, field) else kept))
            out.extend(getanno(stmt, Anno.BEFORE, []))
            replaced = getanno(stmt, Anno.REPLACE, stmt)
            if isinstance(replaced, list):
                out.extend(replaced)
            elif not hasanno(replaced, Anno.RESTORE):  # (a marker left as it was goes)
                out.append(replaced)
        return out

    fn.body = block(fn.body)
    return fn


# --- may-alias classes ---

class _Classes:
    """Union-find over names; a class is spoiled when one of its names may hold an array the
    loop does not own (or one something may keep)."""

    def __init__(self):
        self.parent: dict[str, str] = {}
        self.bad: set[str] = set()  # names that spoil their class
        self.pushed: set[str] = set()  # of those, the ones pushed on a loop's tape

    def add(self, name: str) -> None:
        self.parent.setdefault(name, name)

    def find(self, name: str) -> str:
        self.add(name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)

    def spoil(self, name: str) -> None:
        self.add(name)
        self.bad.add(name)

    def names(self) -> list[str]:
        return list(self.parent)

    def members(self, name: str) -> set[str]:
        root = self.find(name)
        return {n for n in self.parent if self.find(n) == root}

    def spoiled(self, name: str, but: set[str] = frozenset()) -> bool:
        """Whether the class is spoiled by a name, not counting those in ``but``."""
        return any(n in self.bad and n not in but for n in self.members(name))


# --- liveness over the whole function ---

def _liveness(stmts: list, live: set[str], out: dict, rt: str,
              pushes: bool = True) -> set[str]:
    """Names live before ``stmts`` given those live after; ``out[id(stmt)]`` gets each simple
    statement's live-out set, ``out[("in", id(loop))]`` each loop's live-in. A name read only
    for its shape (``rt.shape_of(y)``, ``rt.unindex(p, y, i)``) is not live there: writing
    elements keeps it. Without ``pushes``, a loop tape's push reads nothing (the adjoint reads
    what it keeps, at the mirror of where the primal read it)."""
    live = set(live)
    for stmt in reversed(stmts):
        if isinstance(stmt, gast.If):
            body = _liveness(stmt.body, live, out, rt, pushes)
            orelse = _liveness(stmt.orelse, live, out, rt, pushes)
            live = body | orelse | _reads(stmt.test, rt)
        elif isinstance(stmt, _LOOPS):
            header = _reads(stmt.iter if isinstance(stmt, gast.For) else stmt.test, rt)
            target = {n.id for n in A.walk(stmt.target) if isinstance(n, gast.Name)} \
                if isinstance(stmt, gast.For) else set()
            around = live | header
            while True:  # the body's live-out holds its own live-in (the next iteration)
                scratch: dict = {}
                inside = _liveness(stmt.body, around, scratch, rt, pushes) - target
                if inside <= around:
                    break
                around |= inside
            inside = _liveness(stmt.body, around, out, rt, pushes) - target
            out[("in", id(stmt))] = around | inside
            live = around | inside
            _liveness(stmt.orelse, live, out, rt, pushes)
        else:
            out[id(stmt)] = set(live)
            stored = {n.id for t in _targets(stmt) for n in A.walk(t)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            if pushes or tape.push_of(stmt) is None:
                live = (live - stored) | _reads(stmt, rt)
    return live


def _reads(node, rt: str) -> set[str]:
    """The names ``node`` reads for their value (not those read only for a shape)."""
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Name):
            if isinstance(n.ctx, gast.Load):
                out.add(n.id)
            continue
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                and isinstance(n.func.value, gast.Name) and n.func.value.id == rt:
            position = 0 if n.func.attr == "shape_of" else runtime.SHAPE_ARGUMENTS.get(
                n.func.attr)
            if position is not None and len(n.args) > position \
                    and isinstance(n.args[position], gast.Name):
                stack.extend(a for i, a in enumerate(n.args) if i != position)
                stack.extend(kw.value for kw in n.keywords)
                continue
        stack.extend(gast.iter_child_nodes(n))
    return out


def _targets(stmt) -> list:
    if isinstance(stmt, gast.Assign):
        return stmt.targets
    if isinstance(stmt, gast.AugAssign):
        return [stmt.target]
    return []


# --- walking ---

def _statements(stmts: list):
    """Every statement of ``stmts``, nested blocks included (loops themselves too)."""
    for stmt in stmts:
        yield stmt
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                yield from _statements(block)


def _own_statements(stmts: list):
    """The statements of ``stmts`` and its branches, not those of loops inside it."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, gast.If):
            yield from _own_statements(stmt.body)
            yield from _own_statements(stmt.orelse)


def _block_of(stmts: list, target):
    for stmt in stmts:
        if stmt is target:
            return stmts
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                found = _block_of(block, target)
                if found is not None:
                    return found
    return None


def _first_adjoint(body: list) -> int:
    """The index of the first statement of the adjoint in a gradient's body (its first
    ``# grad of:`` comment); the primal is what comes before."""
    return next((i for i, s in enumerate(body)
                 if str(getanno(s, Anno.COMMENT, "")).startswith("grad of:")), len(body))


def _may_be_site(stmt) -> bool:
    if hasanno(stmt, Anno.WRITE_COPY):
        return True
    value = getattr(stmt, "value", None) if isinstance(stmt, gast.Assign) else None
    if isinstance(value, gast.BinOp):
        value = value.right
    return isinstance(value, gast.Call) and getanno(value, Anno.FUNC) in (
        _SPREADS | {runtime.zero_index})


def _counted(loop: gast.For) -> bool:
    """A loop over a range, or over a tape backwards (``reversed(_tape)``: what the pushes put
    there, which spoiled their own classes)."""
    walked = loop.iter
    if isinstance(walked, gast.Call) and isinstance(walked.func, gast.Name) \
            and walked.func.id == "reversed" and len(walked.args) == 1:
        walked = walked.args[0]
    return isinstance(walked, gast.Name) or getanno(walked, Anno.FUNC) is range


def _shape_only(value, name: str, rt: str) -> bool:
    """Whether ``value`` reads ``name`` only as ``rt.shape_of(name)``."""
    uses = [n for n in A.walk(value) if isinstance(n, gast.Name) and n.id == name]
    shaped = [c.args[0] for c in A.walk(value) if isinstance(c, gast.Call)
              and isinstance(c.func, gast.Attribute) and c.func.attr == "shape_of"
              and isinstance(c.func.value, gast.Name) and c.func.value.id == rt
              and c.args and isinstance(c.args[0], gast.Name) and c.args[0].id == name]
    return len(uses) == len(shaped)
