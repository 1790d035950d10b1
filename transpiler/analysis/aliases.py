"""Which values may share memory, at each statement: a flow-sensitive points-to analysis.

Every value is mapped to the abstract *objects* (buffers, containers) it may be or hold:

- a parameter ``p`` is ``("param", p)``, whatever it holds ``("inside", p)``; the values the
  function reads from globals and closures are one ``("global",)`` (modules, functions, classes,
  numbers and strings are no memory at all);
- a fresh result (arithmetic, ``.copy()``, ``np.copy``, ``np.array(...)``, ``np.zeros``, any
  NumPy function but the ones returning views, a literal) is the object of the expression that
  made it, ``("site", id, True)``; when that expression runs again (a loop) the objects it made
  before become ``("site", id, False)`` (the recency abstraction), so ``un = u.copy()`` in a time
  loop is told apart from last iteration's ``un`` that ``u`` now holds;
- a view (``y[1:]``, ``y.T``, ``np.reshape(y, ...)``, an element of a 2-D array) is the object of
  its base; an element of a container is what the container holds at that key (by constant key
  or index, else any); a scalar read (``w[-1]`` of a 1-D array, a full integer index of an
  array whose number of axes is known) and every known Python number are nothing.

Rebinding a name replaces what it points to, so ``u = un`` ends ``u``'s old aliases; joins (after
an ``if``, at a loop head, to a fixed point) take unions. Calls of the user's functions and
anything unknown may return any object their arguments reach, or a global.

``Aliases(fn, ctx).conflicts(stmt, old, new)`` gives, for an element write ``new = <write>(old,
...)``, the names read later (before being rebound) that reach a buffer ``old`` may be, so would
see the write in Python; ``written(stmt, old)`` the parameters it may write into. Liveness is
computed backwards over the same structured control flow (``lower_exits`` has turned ``break``,
``continue`` and early ``return`` into flags). A ``for`` loop's iterable counts as read by every
iteration: NumPy walks the array as it is at each step.
"""

from __future__ import annotations

import builtins
import inspect
import itertools
import operator
import types

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.activity import SHAPE_ATTRIBUTES
from transpiler.analysis.facts import NONE, Facts
from transpiler.anno import Anno, getanno, hasanno
from transpiler.context import Context, Mode
from transpiler.errors import TranspileError
from transpiler.frontend import parse_function
from transpiler.passes.checkpoint import is_checkpointed_loop
from transpiler.passes.resolve import resolve
from transpiler.rules.registry import is_user_function

ANY = object()  # the key of a container's elements at unknown positions
# the runtime's functions returning their first argument: a value held constant, a solver's
# solution (passes/solvers.py) and a converged loop's state (passes/converged.py)
_HELD = (runtime.stop_gradient, runtime.implicit_root, runtime.implicit_system,
         runtime.implicit_minimum, runtime.fixed_point, runtime.root_of)
GLOBAL = ("global",)
ARRAY, CONTAINER = "array", "container"

_VIEW_METHODS = frozenset({"reshape", "transpose", "ravel", "squeeze", "view", "swapaxes",
                           "diagonal", "__array__", "real", "imag"})
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat", "base"})
# NumPy functions whose result may share memory with their first argument (test_aliases
# checks every function with a rule against this list)
_VIEW_FUNCTIONS = frozenset({
    np.reshape, np.transpose, np.ravel, np.squeeze, np.asarray, np.asanyarray, np.atleast_1d,
    np.atleast_2d, np.atleast_3d, np.swapaxes, np.moveaxis, np.rollaxis, np.expand_dims,
    np.broadcast_to, np.broadcast_arrays, np.diagonal, np.diag, np.real, np.imag, np.flip,
    np.fliplr, np.flipud, np.rot90, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
    np.trim_zeros, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite, np.require,
    np.meshgrid, np.ix_, np.lib.stride_tricks.as_strided,
    np.lib.stride_tricks.sliding_window_view, np.frombuffer, np.ndarray.view,
    np.nan_to_num, np.linalg.matrix_power, np.einsum, np.diff,  # (copy=False, n=1, n=0)
    *(getattr(np, n) for n in ("matrix_transpose", "permute_dims", "unstack", "astype")
      if hasattr(np, n)),
    *(getattr(np.linalg, n) for n in ("matrix_transpose", "diagonal") if hasattr(np.linalg, n))})
try:  # scipy.linalg's factorizations and solves with overwrite_a=True work in their argument
    import scipy.linalg as _sla
    _VIEW_FUNCTIONS |= {_sla.lu_factor, _sla.cho_factor, _sla.cholesky, _sla.solve,
                        _sla.solve_triangular, _sla.inv}
except ImportError:
    pass
# the writes into their first argument (result: the same object): an element write, a list's
# append, extend or pop, and NumPy's scatters (np.add.at, np.put, np.put_along_axis, desugar.py)
SCATTERS = (runtime.added_at, runtime.subtracted_at, runtime.multiplied_at, runtime.put,
            runtime.put_along)
WRITES = (operator.setitem, runtime.appended, runtime.extended, runtime.popped) + SCATTERS
RESIZES = (runtime.appended, runtime.extended, runtime.popped)  # (the items themselves kept)
_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, sorted, reversed, enumerate, zip,
                         iter, runtime.sequence, runtime.values, runtime.items, runtime.keys,
                         dict.items, dict.values, dict.keys, dict.copy})
_PICKS = frozenset({min, max, next, getattr, dict.get, runtime.sequence})  # one of the arguments
_NUMBERS = frozenset({float, int, bool, len, str, repr, isinstance, hash, id, callable, range,
                      print, format, type})  # results holding no memory
_NEW = frozenset({sum, abs, round, divmod})  # a new value
_FRESH_METHODS = frozenset({
    "sum", "mean", "prod", "max", "min", "var", "std", "cumsum", "cumprod", "dot", "trace",
    "clip", "repeat", "take", "flatten", "round", "argmax", "argmin", "all", "any", "tolist",
    "item", "conj", "conjugate", "nonzero", "argsort", "sort_values", "count", "index",
    "keys", "__len__", "__contains__"})
# a scipy.sparse matrix's changes of format: a new matrix, or the matrix itself (A.tolil() of a
# lil_matrix; A.tocoo() of a csr_matrix may share its data)
_FORMAT_METHODS = frozenset({"tocsr", "tocsc", "tocoo", "tolil", "todok", "tobsr", "todia",
                             "asformat", "toarray", "todense"})
_LITERALS = (gast.List, gast.Tuple, gast.Set, gast.Dict, gast.ListComp, gast.SetComp,
             gast.DictComp, gast.GeneratorExp)
_SHAPED = frozenset({np.zeros, np.ones, np.empty, np.full})  # the shape first
_LIKE = frozenset({np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy})


class State:
    """Points-to sets of names (``env``) and the contents of container objects (``heap``)."""

    def __init__(self, env=None, heap=None):
        self.env: dict[str, frozenset] = dict(env or {})
        self.heap: dict[tuple, dict] = {o: dict(c) for o, c in (heap or {}).items()}

    def copy(self) -> State:
        return State(self.env, self.heap)

    def join(self, other: State) -> State:
        out = self.copy()
        for n, objs in other.env.items():
            out.env[n] = out.env.get(n, frozenset()) | objs
        for o, contents in other.heap.items():
            mine = out.heap.setdefault(o, {})
            for k, objs in contents.items():
                mine[k] = mine.get(k, frozenset()) | objs
        return out

    def __eq__(self, other) -> bool:
        return self.env == other.env and self.heap == other.heap

    def covers(self, other: State) -> bool:
        """Whether every binding of ``other`` is one of this state's."""
        return all(objs <= self.env.get(n, frozenset()) for n, objs in other.env.items()) and \
            all(objs <= self.heap.get(o, {}).get(k, frozenset())
                for o, contents in other.heap.items() for k, objs in contents.items())

    def store(self, obj, key, objs: frozenset) -> None:
        contents = self.heap.setdefault(obj, {})
        contents[key] = contents.get(key, frozenset()) | objs

    def age(self, site: tuple) -> None:
        """The expression making ``site`` runs again: what it made before becomes old."""
        old = (*site[:2], False)

        def aged(objs):
            return frozenset(old if o == site else o for o in objs) if site in objs else objs
        self.env = {n: aged(v) for n, v in self.env.items()}
        heap = {}
        for o, contents in self.heap.items():
            o = old if o == site else o
            mine = heap.setdefault(o, {})
            for k, objs in contents.items():
                mine[k] = mine.get(k, frozenset()) | aged(objs)
        self.heap = heap


_VARIANTS = 8  # states kept apart at a program point, at most


def _merge(states: list, limit: int = _VARIANTS) -> list:
    """The states, without those another one covers; joined into one if more than ``limit``."""
    out: list = []
    for s in states:
        if any(o.covers(s) for o in out):
            continue
        out = [o for o in out if not s.covers(o)] + [s]
    if len(out) > limit:
        joined = out[0]
        for s in out[1:]:
            joined = joined.join(s)
        out = [joined]
    return out


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(any(x == y for y in b) for x in a)


class Aliases:
    """The points-to sets before every element write of ``fn`` (SSA form) and the names live
    after it. ``ctx`` gives the parameters known to be arrays or numbers and the globals."""

    def __init__(self, fn: gast.FunctionDef, ctx, writes: set[int], calls: tuple = (),
                 returns: bool = False):
        self.ctx, self.writes, self.calls = ctx, writes, (*calls, ctx.fn)
        self.returned = frozenset() if returns else None  # (what a callee's returns give)
        self.callees: dict[tuple, tuple | None] = {}  # (function, number parameters) -> _returned
        self.scalars = ctx.facts.scalars
        self.params = [a.id for a in fn.args.args + fn.args.kwonlyargs] + \
            [a.id for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
        self.locals = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, (gast.Store, gast.Param))} | set(self.params)
        given = {("param", p): (ARRAY, ctx.arrays[p][0]) if p in ctx.arrays else (None, None)
                 for p in self.params}
        self.info: dict[tuple, tuple] = dict(given)  # object -> (kind, axes or None)
        self.before: dict[int, State] = {}  # write statement -> state before it (joined)
        self.taken: dict[int, list] = {}  # v = y[s] -> the states before it (is_view)
        self.loops: dict[int, dict] = {}  # write -> {loop's id: (loop, what it walks)}
        self.fn = fn
        self.walks = _walk_reads(fn.body, _ranges(fn))  # v = xs[i] heading loops: -> (loop, xs)
        # y = <setitem>(y, s, v) after a write into its view v (passes/views.py): what it reads
        # of y is what the write did not change
        self.write_backs = {id(n): n.value.args[0].id for n in A.walk(fn)
                            if hasanno(n, Anno.WRITE_BACK) and isinstance(n.value, gast.Call)}
        self.parents: dict[tuple, frozenset] = {}  # a row of a walk -> the arrays it is of
        self.live: dict[frozenset, dict] = {}  # liveness, ignoring some walks' reads
        self.live_after = self.liveness(frozenset())
        start = State({p: frozenset() if p in self.scalars else frozenset({("param", p)})
                       for p in self.params})
        self.plain = False  # (after too many rounds) nothing known of objects made here
        for round_ in range(6):  # the kinds of objects found refine the first rounds' answers
            known = dict(self.info)
            self.plain = round_ == 5
            if self.plain:
                self.info = dict(given)
            self.before.clear()
            self.taken.clear()
            self.loops.clear()
            self.returned = None if self.returned is None else frozenset()
            self.returned_heap = State()
            self.block(fn.body, [start.copy()], ())
            if known == self.info:
                break

    # --- what a write would change ---------------------------------------------------------
    def conflicts(self, stmt, old: str, new: str, rows: bool = True) -> list:
        """Names read after the write that reach what ``old`` may be, then the loops (their
        statements) walking it. ``rows`` False: the write changes which items a list holds
        (``append``, ``extend``, ``pop``), not the items: a name holding one of them does not
        see it, only one holding the list itself.

        A loop over ``i`` headed by ``v = xs[i]`` (what ``for v in xs`` becomes) reads in later
        iterations only rows it has not reached yet: a write into this row (or an earlier one)
        is not seen there, so ``xs`` read only so does not count."""
        out: list = []
        overlap = self.overlap if rows else lambda a, b: bool(set(a) & set(b))
        loops = {i for i, _ in self.loops.get(id(stmt), {}).items()}
        heads = frozenset(w for w, (loop, _) in self.walks.items() if id(loop) in loops)
        walking = self.liveness(heads)[id(stmt)] if heads else self.live_after[id(stmt)]
        for state in self.before.get(id(stmt), []):
            written = self.value_of_name(state, old)
            for name in sorted(self.live_after[id(stmt)] - {new}):
                reached = self.reach(state, self.value_of_name(state, name))
                if name in out or not overlap(written, reached):
                    continue
                if name not in walking:  # read only by the walks: are the rows written theirs?
                    mine = {("row", w) for w in heads if self.walks[w][1] == name}
                    if all(self.descends(o, mine) for o in written
                           if self.overlap({o}, reached)):
                        continue
                out.append(name)
        for loop, walked in self.loops.get(id(stmt), {}).values():
            if any(self.overlap(self.value_of_name(state, old), self.reach(state, walked))
                   for state in self.before[id(stmt)]):
                out.append(loop)
        return out

    def liveness(self, ignored: frozenset) -> dict:
        if ignored not in self.live:
            liveness = _Liveness({**self.write_backs,
                                  **{w: self.walks[w][1] for w in ignored}})
            liveness.block(self.fn.body, set())
            self.live[ignored] = liveness.after
        return self.live[ignored]

    def overlap(self, a, b) -> bool:
        """Whether some object of ``a`` may share memory with some object of ``b``: the same
        one, or one a row of the other; rows of one walk met in different iterations do not."""
        return any(self._overlap(x, y) for x in a for y in b)

    def _overlap(self, x, y) -> bool:
        if x == y:
            return True
        if x[0] == "row" and y[0] == "row" and x[1] == y[1]:
            return False  # this iteration's row and earlier ones
        if x[0] == "row":
            return any(self._overlap(p, y) for p in self.parents.get(x, ()))
        if y[0] == "row":
            return any(self._overlap(x, p) for p in self.parents.get(y, ()))
        return False

    def descends(self, obj, walks: set) -> bool:
        """Whether ``obj`` is a row (or a row of a row) of one of ``walks``."""
        return obj[0] == "row" and ((obj[0], obj[1]) in walks or any(
            self.descends(p, walks) for p in self.parents.get(obj, ())))

    def arrays(self, stmt, name: str) -> bool:
        """Whether ``name`` holds a NumPy array wherever ``stmt`` (``v = y[s]``,
        ``v = rt.sequence(y)``) runs."""
        states = self.taken.get(id(stmt))
        return bool(states) and all(
            objs and all(self.info.get(o, (None,))[0] == ARRAY for o in objs)
            for objs in (self.value_of_name(state, name) for state in states))

    def is_view(self, stmt) -> bool:
        """Whether ``v = y[s]`` certainly makes a view: ``y`` a NumPy array wherever it runs,
        ``s`` a basic index with a slice. (An object's number of axes is its base's, which a
        view of it may have fewer of: an index of integers only is a view by ranks alone.)"""
        index = stmt.value.slice
        return basic_index(index, self.scalars) and integers(index, self.scalars) is None \
            and self.arrays(stmt, stmt.value.value.id)

    def written(self, stmt, old: str) -> set[str]:
        """The parameters whose memory the write into ``old`` may change."""
        return {o[1] for state in self.before.get(id(stmt), [])
                for o in self.value_of_name(state, old) if o[0] in ("param", "inside")}

    def reach(self, state: State, objs) -> frozenset:
        """``objs`` and everything they hold, transitively."""
        seen, todo = set(objs), list(objs)
        while todo:
            o = todo.pop()
            for n in self.elements(state, o, ANY, views=False):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return frozenset(seen)

    # --- statements ------------------------------------------------------------------------
    # A program point has a few states (``_VARIANTS`` at most), one per way the names may be
    # bound: after ``u, un = un, u`` in a loop, u and un are either way round, never the same.
    def block(self, stmts: list, states: list, loops: tuple) -> list:
        for stmt in stmts:
            states = self.statement(stmt, states, loops)
        return states

    def statement(self, stmt, states: list, loops: tuple) -> list:
        if id(stmt) in self.writes:
            self.before[id(stmt)] = _merge(self.before.get(id(stmt), []) +
                                           [s.copy() for s in states])
            mine = self.loops.setdefault(id(stmt), {})
            for loop, walked in loops:
                mine[id(loop)] = (loop, mine.get(id(loop), (loop, frozenset()))[1] | walked)
        if isinstance(stmt, gast.Assign) and is_checkpointed_loop(stmt.value):
            for state in states:
                self.checkpointed(stmt, state)
            return states
        if isinstance(stmt, gast.Assign):
            if isinstance(stmt.value, gast.Subscript) and isinstance(stmt.value.value, gast.Name) \
                    or isinstance(stmt.value, gast.Call) \
                    and getanno(stmt.value, Anno.FUNC) is runtime.sequence:
                self.taken[id(stmt)] = self.taken.get(id(stmt), []) + [s.copy() for s in states]
            for state in states:
                objs = self.row(stmt, state) if id(stmt) in self.walks else None
                objs = self.value(stmt.value, state, stmt) if objs is None else objs
                for target in stmt.targets:
                    self.bind(target, objs, state)
            return states
        if isinstance(stmt, gast.If):
            for state in states:
                self.value(stmt.test, state, stmt)
            return _merge(self.block(stmt.body, [s.copy() for s in states], loops) +
                          self.block(stmt.orelse, states, loops))
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt, states, loops)
        for state in states:
            for child in gast.iter_child_nodes(stmt):  # Expr, Return, and what else may come
                if isinstance(child, gast.expr):
                    objs = self.value(child, state, stmt)
                    if isinstance(stmt, gast.Return) and self.returned is not None:
                        self.returned |= objs
                        self.returned_heap = self.returned_heap.join(state)
        if isinstance(stmt, gast.Raise):
            return []  # (no path goes on: a try's handler starts from the states before it)
        bodies = [getattr(stmt, f) for f in ("body", "orelse", "handlers", "finalbody")
                  if isinstance(getattr(stmt, f, None), list)]
        if bodies:  # a statement of bodies of its own: run each any number of times
            return self.loop(gast.While(test=gast.Constant(value=True, kind=None),
                                        body=[s for b in bodies for s in b], orelse=[]),
                             states, loops)
        return states

    def loop(self, stmt, states: list, loops: tuple) -> list:
        walked = frozenset()
        if isinstance(stmt, gast.For):
            walked = frozenset().union(*(self.value(stmt.iter, s, stmt) for s in states))
        head = states
        for rounds in itertools.count():
            body = [s.copy() for s in head]
            for state in body:
                if isinstance(stmt, gast.For):
                    self.bind(stmt.target, self.elements_of(state, walked), state)
                else:
                    self.value(stmt.test, state, stmt)
            joined = _merge(head + self.block(stmt.body, body, (*loops, (stmt, walked))),
                            limit=1 if rounds > 20 else _VARIANTS)
            if _same(joined, head):
                break
            head = joined
        return self.block(stmt.orelse, head, loops)

    def row(self, stmt, state: State) -> frozenset | None:
        """``v = xs[i]`` heading a loop over ``i``, ``xs`` an array: this iteration's row."""
        base = self.value_of_name(state, self.walks[id(stmt)][1])
        infos = {self.info.get(o, (None, None)) for o in base}
        if not base or any(kind != ARRAY for kind, _ in infos):
            return None
        ndims = {ndim for _, ndim in infos}
        ndim = ndims.pop() if len(ndims) == 1 else None
        if ndim == 1:
            return frozenset()  # a number
        site = ("row", id(stmt), True)
        state.age(site)
        for obj in (site, site[:2] + (False,)):
            self.parents[obj] = self.parents.get(obj, frozenset()) | base
        self.note(site, ARRAY, None if ndim is None else ndim - 1)
        return frozenset({site})

    def checkpointed(self, stmt, state: State) -> None:
        """``u, D = checkpointed_loop(step, items, u, D, ...)`` (passes/checkpoint.py): each
        entry of the state may be what the step returns for it after any number of steps."""
        call, targets = stmt.value, stmt.targets[0].elts
        self.value(call.args[1], state, stmt)
        current = [self.value(a, state, stmt) for a in call.args[2:]]
        step = self.ctx.bindings.get(call.args[0].id)
        for _ in range(len(current) + 2):  # (the state's entries pass among each other)
            returned = self.returns(step, call, [frozenset(), *current], {}, state) \
                if step is not None else None
            if returned is None:  # not followed: any of them, or anything they reach
                everything = frozenset().union(*current)
                current = [self.reach(state, everything) | everything | {GLOBAL}] * len(current)
                break
            grown = [c | self.elements_of(state, returned, i + 1)
                     for i, c in enumerate(current)]
            if grown == current:
                break
            current = grown
        for target, objs in zip(targets, current, strict=True):
            self.bind(target, objs, state)

    def bind(self, target, objs: frozenset, state: State) -> None:
        if isinstance(target, gast.Name):
            state.env[target.id] = frozenset() if target.id in self.scalars else objs
        elif isinstance(target, (gast.Tuple, gast.List)):
            for i, t in enumerate(target.elts):
                key = ANY if any(isinstance(e, gast.Starred) for e in target.elts) else i
                part = self.elements_of(state, objs, key)
                self.bind(t.value if isinstance(t, gast.Starred) else t, part, state)
        elif isinstance(target, gast.Starred):
            self.bind(target.value, objs, state)
        elif isinstance(target, (gast.Subscript, gast.Attribute)):  # o.a = v, d[k] = v
            base = self.value(target.value, state, target)
            for o in base:
                state.store(o, ANY, objs)

    # --- values ----------------------------------------------------------------------------
    def value_of_name(self, state: State, name: str) -> frozenset:
        if name in self.scalars:
            return frozenset()
        if name in self.locals:
            return state.env.get(name, frozenset())
        try:
            found = self.ctx.bindings[name] if name in self.ctx.bindings else \
                self.ctx.lookup(name)
        except (AttributeError, ValueError):
            return frozenset()  # undefined (Python would raise) or an empty closure cell
        return frozenset() if _immutable(found) else frozenset({GLOBAL})

    def value(self, node, state: State, stmt) -> frozenset:
        """What ``node`` may evaluate to (objects), evaluating it in ``state``."""
        if node is None or isinstance(node, (gast.Constant, gast.JoinedStr, gast.Lambda,
                                             gast.Slice)):
            return frozenset()
        if isinstance(node, gast.Name):
            return self.value_of_name(state, node.id)
        if isinstance(node, gast.Starred):
            return self.value(node.value, state, stmt)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, state, stmt)
        if isinstance(node, gast.Attribute):
            base = self.value(node.value, state, stmt)
            if node.attr in SHAPE_ATTRIBUTES or not base:
                return frozenset()
            if node.attr in _VIEW_ATTRIBUTES:
                return self.reshaped(base)
            return base | self.elements_of(state, base, ANY)
        if isinstance(node, gast.Call):
            made = self.call(node, state, stmt)
            position = getanno(stmt, Anno.IN_PLACE) if getattr(stmt, "value", None) is node \
                else None
            if type(position) is int and position < len(node.args):  # (changed in place: the
                return self.value(node.args[position], state, stmt)  # argument itself)
            return made
        if isinstance(node, (gast.IfExp, gast.BoolOp)):
            return frozenset().union(*(self.value(c, state, stmt)
                                       for c in gast.iter_child_nodes(node)
                                       if isinstance(c, gast.expr)))
        if isinstance(node, _LITERALS):
            return self.literal(node, state, stmt)
        parts = [self.value(c, state, stmt) for c in gast.iter_child_nodes(node)
                 if isinstance(c, gast.expr)]  # arithmetic, comparisons: a new value
        if hasanno(stmt, Anno.IN_PLACE) and isinstance(node, gast.BinOp) \
                and stmt.value is node:
            return parts[0]  # x += e: x itself
        held = self.elements_of(state, frozenset().union(*parts), ANY, views=False)
        arrays = any(p and all(self.info.get(o, (None,))[0] == ARRAY for o in p) for p in parts)
        return self.fresh(node, state, held, self.ndim(node, state),
                          ARRAY if arrays or not isinstance(node, gast.BinOp) else None)

    def fresh(self, node, state: State, held=frozenset(), ndim=None, kind=None) -> frozenset:
        site = ("site", id(node), True)
        state.age(site)
        state.heap.pop(site, None)
        if held:
            state.store(site, ANY, frozenset(held))
        if kind is None:
            kind = ARRAY if ndim is not None else None
        self.note(site, kind, ndim)
        return frozenset({site})

    def note(self, obj, kind, ndim) -> None:
        if self.plain:
            kind = ndim = None
        elif obj in self.info and self.info[obj] != (kind, ndim):
            was = self.info[obj]
            kind = kind if was[0] == kind else None
            ndim = ndim if was[1] == ndim else None
        self.info[obj] = (kind, ndim)
        if obj[0] in ("site", "row") and obj[2]:
            self.note((*obj[:2], False), kind, ndim)  # what the expression made before

    def literal(self, node, state: State, stmt) -> frozenset:
        site = ("site", id(node), True)
        held: list[tuple] = []
        if isinstance(node, (gast.List, gast.Tuple, gast.Set)):
            starred = any(isinstance(e, gast.Starred) for e in node.elts)
            for i, e in enumerate(node.elts):
                objs = self.value(e, state, stmt)
                if isinstance(e, gast.Starred):
                    objs = self.elements_of(state, objs, ANY)
                held.append((ANY if starred or isinstance(node, gast.Set) else i, objs))
        elif isinstance(node, gast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                objs = self.value(v, state, stmt)
                if k is None:  # {**other}
                    held.append((ANY, self.elements_of(state, objs, ANY)))
                else:
                    self.value(k, state, stmt)
                    held.append((k.value if isinstance(k, gast.Constant) else ANY, objs))
        else:  # a comprehension: anything it reads, and what that holds
            names = [self.value_of_name(state, n) for n in A.load_names(node)]
            objs = frozenset().union(*names) if names else frozenset()
            held.append((ANY, self.reach(state, objs)))
        state.age(site)
        state.heap.pop(site, None)
        for key, objs in held:
            state.store(site, key, objs)
        self.note(site, CONTAINER, None)
        return frozenset({site})

    def subscript(self, node, state: State, stmt) -> frozenset:
        base = self.value(node.value, state, stmt)
        index = node.slice
        self.value(index, state, stmt)
        key = _key(index)
        out, sliced = set(), set()
        for o in base:
            kind, ndim = self.info.get(o, (None, None))
            if kind == CONTAINER and _is_slice(index):  # a new list of the same items
                sliced |= self.elements(state, o, ANY, views=False)
            elif kind == CONTAINER:
                out |= self.elements(state, o, key, views=False)
            elif kind == ARRAY and _advanced(index, self.scalars):
                out.add(("site", id(node), True))  # a copy
            elif kind == ARRAY and ndim is not None and integers(index, self.scalars) == ndim:
                continue  # a NumPy scalar
            else:
                out |= {o} | (self.elements(state, o, key) if kind is None else set())
                if integers(index, self.scalars) is None and not basic_index(index, self.scalars):
                    self.reshaped({o})  # x[None], x[..., 0]: more axes, or not known how many
        copy = ("site", id(node), True)
        if copy in out:
            out.discard(copy)
            out |= self.fresh(node, state, kind=ARRAY)
        if sliced or any(self.info.get(o, (None,))[0] == CONTAINER for o in base) \
                and _is_slice(index):
            out |= self.fresh(node, state, frozenset(sliced), kind=CONTAINER)
        return frozenset(out)

    def reshaped(self, objs) -> frozenset:
        """``objs`` seen through a view of other axes: their number of axes is not known now
        (known numbers only ever exceed a view's: a row of a 2-D array is still a view)."""
        for o in objs:
            self.note(o, self.info.get(o, (None, None))[0], None)
        return frozenset(objs)

    def elements(self, state: State, obj, key, views: bool = True) -> set:
        """What container ``obj`` holds at ``key`` (with ``views``: a row of an array too)."""
        kind, ndim = self.info.get(obj, (None, None))
        out = set()
        if views and kind != CONTAINER and not (kind == ARRAY and ndim == 1):
            out.add(obj)
        if kind == ARRAY and obj[0] in ("site", "row"):
            return out
        contents = state.heap.get(obj, {})
        if key is ANY:
            for objs in contents.values():
                out |= objs
        else:
            out |= contents.get(key, frozenset()) | contents.get(ANY, frozenset())
        if obj[0] in ("param", "inside") and kind != ARRAY:
            out.add(("inside", obj[1]))
        elif obj == GLOBAL:
            out.add(GLOBAL)
        return out

    def elements_of(self, state: State, objs, key=ANY, views: bool = True) -> frozenset:
        out = set()
        for o in objs:
            out |= self.elements(state, o, key, views)
        return frozenset(out)

    def call(self, node: gast.Call, state: State, stmt) -> frozenset:
        func = getanno(node, Anno.FUNC)
        if func is None and hasanno(node.func, Anno.BUILTIN):
            func = getattr(builtins, node.func.id)
        receiver = node.func.value if isinstance(node.func, gast.Attribute) and \
            (func is None or inspect.ismethod(func)) else None
        mine = self.value(receiver, state, stmt) if receiver is not None else frozenset()
        if receiver is None and func is None:
            mine = self.value(node.func, state, stmt)
        args = [self.value(a, state, stmt) for a in node.args]
        keywords = {kw.arg: self.value(kw.value, state, stmt) for kw in node.keywords}
        everything = frozenset().union(mine, *args, *keywords.values())
        first = args[0] if args else frozenset()
        if any(func is f for f in WRITES):
            held = self.elements_of(state, args[-1]) if func is runtime.extended else args[2] \
                if any(func is f for f in SCATTERS) and len(args) > 2 else frozenset() \
                if func is runtime.popped else args[-1]  # (a pop stores nothing)
            key = _key(node.args[1]) if func is operator.setitem else ANY
            for o in first:
                if self.info.get(o, (None,))[0] != ARRAY:
                    state.store(o, key, held)
            return first
        if receiver is not None and func is None:
            return self.method(node, node.func.attr, mine, everything, state)
        if any(func is f for f in _HELD):  # (its first argument itself)
            return first
        if _is(func, _NUMBERS) or (getattr(func, "__module__", None) == "math"):
            return frozenset()
        if may_return_view(func) or (func is np.array and _no_copy(node)):
            return self.reshaped(first)
        if _is(func, _NEW):  # sum(xs, start) may concatenate lists: holding their items
            held = self.elements_of(state, everything, ANY, views=False) \
                if func is sum and len(node.args) + len(node.keywords) > 1 else frozenset()
            return self.fresh(node, state, held | self.elements_of(state, held, ANY, views=False))
        if _is(func, _PICKS):
            return everything | self.elements_of(state, everything, ANY, views=False)
        if _is(func, _CONTAINERS):
            held = self.elements_of(state, everything)
            return self.fresh(node, state, held | self.elements_of(state, held), kind=None)
        if func is np.array and node.args and isinstance(node.args[0], (gast.List, gast.Tuple)):
            return self.fresh(node, state, ndim=_depth(node.args[0]))
        if _numpy(func) and not keywords.get("out"):
            return self.fresh(node, state, ndim=self.ndim(node, state), kind=ARRAY)
        if is_user_function(func):
            returned = self.returns(func, node, args, keywords, state)
            if returned is not None:
                return returned
        # objects' methods, anything unknown: may return what it is given
        reached = self.reach(state, everything)
        return self.fresh(node, state, reached) | reached | {GLOBAL}

    def returns(self, func, node, args: list, keywords: dict, state: State):
        """What a call of the user's ``func`` may return: the arguments its ``return`` values
        may be or hold (the callee analysed alike), a new object holding them, or a global."""
        if any(isinstance(a, gast.Starred) for a in node.args) or None in keywords:
            return None
        try:
            bound = inspect.signature(func).bind(*args, **keywords).arguments
        except TypeError:
            return None
        given = {p: v for p, v in bound.items() if isinstance(v, frozenset)}
        if len(given) != len(bound):
            return None  # *args or **kwargs
        key = (func, frozenset(p for p, v in given.items() if not v))
        if key not in self.callees:  # (once: the rounds must meet the same objects)
            self.callees[key] = _returned(func, key[1], self.ctx, self.calls)
        found = self.callees[key]
        if found is None:
            return None
        objs, heap, info = found

        def mapped(o):  # a callee's object as the caller's
            if o[0] == "param":
                return given.get(o[1], frozenset({GLOBAL}))
            if o[0] == "inside":
                return self.reach(state, given.get(o[1], frozenset({GLOBAL})))
            if o == GLOBAL:
                return frozenset({GLOBAL})
            return frozenset({("site", (id(node), o[0], o[1]), True)})
        made = {m for o in {*objs, *heap} if o[0] in ("site", "row") for m in mapped(o)}
        for site in made:
            state.age(site)
            state.heap.pop(site, None)
        for o, contents in heap.items():
            for target in mapped(o) & made:
                for key, held in contents.items():
                    state.store(target, key, frozenset().union(*(mapped(h) for h in held)))
        for o, (kind, ndim) in info.items():
            for target in mapped(o) & made if o[0] in ("site", "row") else ():
                self.note(target, kind, ndim)
        return frozenset().union(*(mapped(o) for o in objs)) if objs else frozenset()

    def method(self, node, name: str, receiver, everything, state: State) -> frozenset:
        if name in _VIEW_METHODS:
            return self.reshaped(receiver)
        receivers = self.ctx.facts.receivers  # (not known in a callee: may be an object)
        maybe_object = receivers is None or receivers.may_be_object(node.func.value)
        if name in ("copy", "astype") and not maybe_object:  # a new array, or a shallow copy
            ndim = {self.info.get(o, (None, None))[1] for o in receiver}
            kind = {self.info.get(o, (None, None))[0] for o in receiver}
            made = self.fresh(node, state, frozenset(), ndim.pop() if len(ndim) == 1 else None,
                              kind.pop() if len(kind) == 1 else None)
            for o in receiver:  # the same items, key by key
                for key in set(state.heap.get(o, {})) | {ANY}:
                    state.store(*made, key, self.elements(state, o, key, views=False))
            return made
        if name == "get" and not maybe_object:
            return self.elements_of(state, receiver, _key(node.args[0]) if node.args else ANY,
                                    views=False) | everything - receiver
        if name in ("items", "values") and not maybe_object:
            held = self.elements_of(state, receiver, ANY, views=False)
            return self.fresh(node, state, held, kind=None)
        if name in _FRESH_METHODS and not maybe_object:
            return self.fresh(node, state)
        if name in _FORMAT_METHODS and not maybe_object:
            return self.fresh(node, state) | receiver
        reached = self.reach(state, everything)
        return self.fresh(node, state, reached) | reached | {GLOBAL}

    # --- numbers of axes -------------------------------------------------------------------
    def ndim(self, node, state: State):
        """The number of axes of array expression ``node`` if known (0 for a number)."""
        if isinstance(node, gast.Constant):
            return 0 if type(node.value) in (int, float) else None
        if isinstance(node, gast.Name):
            if node.id in self.scalars:
                return 0
            found = {self.info.get(o, (None, None)) for o in self.value_of_name(state, node.id)}
            if len(found) == 1:
                kind, ndim = found.pop()
                return ndim if kind == ARRAY else None
            return None
        if isinstance(node, gast.UnaryOp):
            return self.ndim(node.operand, state)
        if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.MatMult):
            parts = [self.ndim(node.left, state), self.ndim(node.right, state)]
            return None if None in parts else max(parts)
        if isinstance(node, gast.Call):
            func = getanno(node, Anno.FUNC)
            args = node.args
            if func in (np.eye, np.identity, np.outer):
                return 2
            if func in _SHAPED and args:
                shape = args[0]
                if isinstance(shape, gast.Tuple):
                    return len(shape.elts)
                return 1 if self.ndim(shape, state) == 0 else None
            if (func in (np.linspace, np.arange)) and not node.keywords:
                return 1 if all(self.ndim(a, state) == 0 for a in args) else None
            if _is(func, _LIKE) and args:
                return self.ndim(args[0], state)
            if isinstance(func, np.ufunc) and func.nout == 1 and args:
                parts = [self.ndim(a, state) for a in args]
                return None if None in parts else max(parts)
        return None


def _ranges(fn) -> set[str]:
    """Names assigned once, a ``range(...)``."""
    values: dict[str, list] = {}
    for node in A.walk(fn):
        if isinstance(node, gast.Assign):
            for t in node.targets:
                for n in _stored(t):
                    values.setdefault(n, []).append(node.value if t.__class__ is gast.Name
                                                    else None)
        elif isinstance(node, (gast.For, gast.comprehension)):
            for n in _stored(node.target):
                values.setdefault(n, []).append(None)
    return {n for n, v in values.items() if len(v) == 1 and A.is_range(v[0])}


def _walk_reads(stmts: list, ranges: set[str]) -> dict:
    """``v = xs[i]`` statements heading the body of a ``for i in range(...)`` loop (what ``for
    v in xs`` becomes): id -> (the loop, ``xs``). Each iteration reads another row."""
    out = {}
    for stmt in stmts:
        for field in ("body", "orelse"):
            out.update(_walk_reads(getattr(stmt, field, None) or [], ranges))
        if not (isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name)
                and (A.is_range(stmt.iter) or isinstance(stmt.iter, gast.Name)
                     and stmt.iter.id in ranges)):
            continue
        counter = stmt.target.id
        for head in stmt.body:
            if not isinstance(head, gast.Assign) or counter in _stored(head.targets[0]):
                break
            value = head.value
            if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                    and isinstance(value.slice, gast.Name) and value.slice.id == counter \
                    and isinstance(head.targets[0], gast.Name):
                out[id(head)] = (stmt, value.value.id)
            elif set(A.load_names(value)) - {counter}:
                break  # (``k = _i + 1`` of an enumerate may come first)
    return out


class _Liveness:
    """Names read later, before being rebound: ``after[id(stmt)]`` for every statement;
    ``ignored`` statements' reads of the given names do not count. After a ``raise`` comes the
    handler of the ``try`` around it (``if ok:`` annotated TRY, its ``else``), or nothing: the
    handler of a ``finally`` (``except BaseException: F; raise``) does not reach the code after
    the ``try``."""

    def __init__(self, ignored: dict | None = None):
        self.after: dict[int, frozenset] = {}
        self.ignored = ignored or {}
        self.raised: frozenset = frozenset()  # live where a raise goes

    def block(self, stmts: list, live: set) -> set:
        for stmt in reversed(stmts):
            live = self.statement(stmt, live)
        return live

    def statement(self, stmt, live: set) -> set:
        self.after[id(stmt)] = frozenset(live)
        if isinstance(stmt, gast.Raise):
            return set(self.raised) | {n for c in (stmt.exc, stmt.cause) if c is not None
                                       for n in A.load_names(c)}
        if isinstance(stmt, gast.If) and hasanno(stmt, Anno.TRY):
            handler = self.block(stmt.orelse, set(live))
            outer, self.raised = self.raised, frozenset(handler)
            body = self.block(stmt.body, set(live))
            self.raised = outer
            return body | handler | set(A.load_names(stmt.test))
        if isinstance(stmt, gast.If):
            return self.block(stmt.body, set(live)) | self.block(stmt.orelse, set(live)) \
                | set(A.load_names(stmt.test))
        if isinstance(stmt, (gast.For, gast.While)):
            exit_ = self.block(stmt.orelse, set(live))
            head = set(exit_)
            while True:
                body = self.block(stmt.body, set(head))
                if isinstance(stmt, gast.For):
                    body = (body - _stored(stmt.target)) | set(A.load_names(stmt.target))
                else:
                    body |= set(A.load_names(stmt.test))
                new = head | body
                if new == head:
                    break
                head = new
            if isinstance(stmt, gast.For):
                return head | set(A.load_names(stmt.iter))
            return head
        bodies = [s for f in ("body", "orelse", "handlers", "finalbody")
                  for s in (getattr(stmt, f, None) or []) if isinstance(s, gast.AST)]
        own = [c for c in gast.iter_child_nodes(stmt) if isinstance(c, gast.expr)]
        killed = {n for t in stmt.targets for n in _stored(t)} \
            if isinstance(stmt, gast.Assign) else set()
        if isinstance(stmt, gast.Assign) and all(isinstance(t, gast.Name) for t in stmt.targets) \
                and not killed & live and not any(isinstance(n, gast.Call)
                                                  for n in A.walk(stmt.value)):
            return live  # a value nobody reads, made without calls: its reads see nothing
        read = {n for c in own for n in A.load_names(c)} - {self.ignored.get(id(stmt))}
        live = (live - killed) | read
        if bodies:  # any number of times, in any order
            while True:
                new = live | self.block(bodies, set(live))
                if new == live:
                    return live
                live = new
        return live


def _stored(target) -> set[str]:
    return {n.id for n in A.walk(target) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}


_DEPTH = 6  # how deep calls of the user's functions are followed


def _returned(func, numbers: frozenset, ctx, calls: tuple):
    """What ``func``'s ``return`` values may be (its parameters ``("param", p)``, what they hold,
    objects it made, globals), the contents of the objects it made and what is known of them;
    None when not known (no source, too deep). ``numbers``: parameters given no memory."""
    if func in calls or len(calls) >= _DEPTH:
        return None
    try:
        tree, filename, indent = parse_function(func)
        callee = Context(fn=func, filename=filename, indent=indent, wrt=(), mode=Mode.GRAD,
                         options=ctx.options)
        resolve(tree, callee)
    except (TranspileError, TypeError, OSError, ValueError):
        return None
    callee.facts = Facts(NONE.versions, numbers, NONE.ranks, None, None)
    analysis = Aliases(tree, callee, set(), calls, returns=True)
    heap = analysis.returned_heap.heap
    return analysis.returned, heap, {o: analysis.info.get(o, (None, None)) for o in heap}


def may_return_view(func) -> bool:
    """Whether a NumPy function's result may share memory with its arguments (this analysis
    takes every other NumPy function's result for a new array)."""
    return _is(func, _VIEW_FUNCTIONS)


def _immutable(value) -> bool:
    """A global holding no memory a write could reach (a module, a function, a number...)."""
    return isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                              types.MethodType, type, int, float, complex, str, bytes, bool,
                              type(None), np.ufunc, np.generic, range)) \
        or type(value).__module__.split(".")[0] in ("numpy", "builtins") and callable(value) \
        and not isinstance(value, np.ndarray)


def _is(func, group) -> bool:
    try:
        return func in group
    except TypeError:  # unhashable
        return False


def _numpy(func) -> bool:
    if isinstance(func, np.ufunc):
        return True
    module = getattr(func, "__module__", None) or ""
    return module.split(".")[0] in ("numpy", "scipy") and not is_user_function(func)


def _no_copy(node: gast.Call) -> bool:
    """``np.array(x, copy=False)`` (or ``copy=None``) may return ``x`` itself."""
    return any(kw.arg == "copy" and not (isinstance(kw.value, gast.Constant)
                                         and kw.value.value is True) for kw in node.keywords)


def _depth(node) -> int | None:
    """Axes of ``np.array`` of a literal: nested lists of numbers."""
    if isinstance(node, (gast.List, gast.Tuple)):
        inner = {_depth(e) for e in node.elts}
        return 1 + inner.pop() if len(inner) == 1 and None not in inner else None
    if isinstance(node, gast.Constant) and type(node.value) in (int, float):
        return 0
    if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant):
        return 0
    return None


def _key(index):
    if isinstance(index, gast.Constant) and (type(index.value) is str or
                                             (type(index.value) is int and index.value >= 0)):
        return index.value
    return ANY


def _is_slice(index) -> bool:
    return isinstance(index, gast.Slice) or (
        isinstance(index, gast.Call) and isinstance(index.func, gast.Name)
        and index.func.id == "slice")


def _parts(index) -> list:
    return index.elts if isinstance(index, gast.Tuple) else [index]


def integers(index, scalars) -> int | None:
    """How many axes a basic index of integers only takes away (None if not only integers)."""
    count = 0
    for p in _parts(index):
        if isinstance(p, gast.UnaryOp) and isinstance(p.operand, gast.Constant):
            p = p.operand
        if isinstance(p, gast.Constant) and type(p.value) is int:
            count += 1
        elif isinstance(p, gast.Name) and p.id in scalars:
            count += 1
        else:
            return None
    return count


def basic_index(index, scalars) -> bool:
    """Integers and slices only: a view with as many axes or fewer."""
    return all(_is_slice(p) or integers(p, scalars) == 1 for p in _parts(index))


def _advanced(index, scalars) -> bool:
    """An index making a copy: a list of integers or a comparison (a mask) in it."""
    return any(isinstance(p, (gast.List, gast.Compare)) for p in _parts(index))

