"""The Numba backend: the generated source in the subset of Python that ``numba.njit`` compiles
in nopython mode, each function compiled once per argument types on its first call.

``source`` rewrites the final tree where the Python backend's spelling is not Numba's:

- ``for entry in reversed(_tape):`` (Numba has no ``reversed`` of a list) becomes an index loop
  over the tape, ``for _tape_index in range(len(_tape) - 1, -1, -1): entry =
  _tape[_tape_index]`` (of a range, ``entry = r.start + r_index * r.step``: Numba cannot index
  a range);
- ``del`` statements go (Numba refuses them, and frees what is dead itself);
- ``np.concatenate(xs)`` becomes ``concatenate_list(xs)`` and ``np.stack(xs, axis=k)``
  ``stack_list(xs, axis=k)``, and a list written out in a join (``np.stack([a, b])``) a tuple
  (Numba joins tuples, not lists);
- ``r[i]`` of a range becomes ``range_item(r, i)``; ``np.mean(x, axis=k)`` becomes
  ``np.sum(x, axis=k) / x.shape[k]`` (Numba's mean takes no axis);
- a ``+`` adding two gradients (or tangents) of a value not known to be a number or an array
  becomes ``add_grads(a, b)``, which adds lists and tuples item by item (Numba's ``+`` joins
  them; the Python backend's gradient containers add item by item);
- the builtin ``sum(xs)`` becomes ``builtin_sum(xs)``, which adds a list of arrays too;
- ``x.astype(y.dtype, copy=False)`` becomes ``astype_like(x, y)`` (``y`` may be a number in
  Numba where NumPy has a scalar);
- a call of a compiled callee, ``helper_vjp.forward(a)`` (an attribute of a Python object,
  which Numba cannot call) becomes a call of a name bound to the callee's own compiled function,
  ``helper_vjp_forward(a)``.

``load`` wraps each function in a :class:`NativeFunction`, which runs the compiled code and
turns Numba's refusal (a call it does not support, a value of no Numba type) into a
``TranspileError`` at the user's line, or, for ``backend="auto"``, runs the Python function
instead. The runtime helpers the generated code calls get their Numba implementations from
``runtime.native``, registered when this backend is first used.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import logging
import os
import re
import types

import gast
import numpy as np

from transpiler import emit
from transpiler.anno import Anno, getanno, hasanno
from transpiler.backends import python
from transpiler.calls import SplitFunction, TangentFunction
from transpiler.errors import TranspileError

INSTALL = 'pip install "transpiler[numba]" (or pip install numba)'
HINT = 'use backend="python" (or backend="auto", which runs the Python gradient where Numba ' \
       'cannot compile it)'
_CALLEE_PARTS = {SplitFunction: ("forward", "backward"), TangentFunction: ("call",)}


def numba_module():
    """``numba`` (its runtime helpers registered), or an ImportError that says how to get it."""
    try:
        import numba
    except ImportError:
        raise ImportError(f'backend="numba" needs Numba, which is not installed: {INSTALL}') \
            from None
    import runtime.native  # noqa: F401  (registers the helpers' Numba implementations)
    return numba


def available() -> bool:
    try:
        numba_module()
    except ImportError:
        return False
    return True


LOG = logging.getLogger("transpiler")  # (backend="auto" says here why code runs as Python)


class Backend:
    """``backend="numba"`` (``fallback=False``: what Numba cannot compile is refused) or
    ``backend="auto"`` (``fallback=True``: it runs as Python, and says why on the ``transpiler``
    logger, at INFO)."""

    def __init__(self, name: str, fallback: bool):
        self.NAME, self.fallback = name, fallback

    def source(self, tree, bindings: dict) -> str:
        if self.fallback and not available():
            LOG.info("backend='auto': Numba is not installed, so %s runs as Python (pip "
                     "install numba)", getattr(tree, "name", "the generated code"))
            return python.source(tree, bindings)
        _Rewrite(bindings, {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}).visit(tree)
        return emit.to_source(tree)

    def load(self, text: str, names: list[str], label: str, fn, bindings: dict) -> list:
        functions = emit.load(text, names, label, fn, bindings)
        if self.fallback and not available():
            return functions
        numba = numba_module()
        njit = functools.partial(numba.njit, boundscheck=True)
        return [NativeFunction(f, njit, self.fallback, fn) for f in functions]

    def fast_path(self, fn, compiled, count: int, keywords: frozenset, slow):
        return python.fast_path(fn, compiled, count, keywords, slow)


class NativeFunction:
    """A generated function compiled by Numba on its first call (per argument types).

    ``.backend`` says which code runs: ``"numba"``, or ``"python"`` once Numba refused it under
    ``backend="auto"``. Numba's refusal is a ``TranspileError`` naming the user's line the
    refused statement came from; errors of the computation itself pass unchanged."""

    def __init__(self, python_function, njit, fallback: bool, fn):
        self.python, self.fallback, self.fn = _calling_wrappers(python_function), fallback, fn
        self.__name__ = python_function.__name__
        self.__code__ = code = python_function.__code__
        self.backend = "numba"
        self.reason = ""  # why Numba refused it (backend="auto" then runs the Python function)
        self._signature = None
        if code.co_kwonlyargcount:  # (Numba has no keyword-only parameters: all positional)
            self._signature = inspect.signature(python_function)
            python_function = types.FunctionType(
                code.replace(co_argcount=code.co_argcount + code.co_kwonlyargcount,
                             co_kwonlyargcount=0),
                python_function.__globals__, python_function.__name__, None,
                python_function.__closure__)
        self.native = self._run = njit(_with_compiled_helpers(python_function, njit, {}))
        self.native.transpiler_function = self  # (the Python code calls this, not Numba's)

    def __call__(self, *args, **kwargs):
        if self._signature is not None and len(args) > self.__code__.co_argcount:
            # called as Numba's code calls it (keyword-only parameters by position: the
            # Python code of a caller Numba refused): as Python calls it
            code = self.__code__
            kwonly = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
            args, kwargs = args[:code.co_argcount], {
                **dict(zip(kwonly, args[code.co_argcount:], strict=False)), **kwargs}
        try:
            if self._run is self.python:
                return self.python(*args, **kwargs)
            _float64_only(args)
            positional, keywords = args, kwargs
            if self._signature is not None:  # (keyword-only parameters passed by position)
                bound = self._signature.bind(*args, **kwargs)
                bound.apply_defaults()
                positional, keywords = (*bound.args, *bound.kwargs.values()), {}
            return self._run(*positional, **keywords)
        except Exception as e:
            self._fall_back(e)
            return self.python(*args, **kwargs)  # (the call as it was made)

    def compile_for(self, *args) -> None:
        """Compile for these arguments' types without running (``.backend`` then says which
        code a call with them runs)."""
        if self._run is self.python or self._signature is not None \
                or len(args) != self.__code__.co_argcount:  # (defaults: the call compiles)
            return
        try:
            _float64_only(args)
            self.native.compile(tuple(self.native.typeof_pyval(a) for a in args))
        except Exception as e:
            self._fall_back(e)

    def _fall_back(self, e: Exception) -> None:
        """Re-raise ``e`` unless Numba refused the code; then raise the refusal, or under
        ``backend="auto"`` switch to the Python function."""
        if not _refused(e):
            raise e
        if not self.fallback:
            raise self.refusal(e) from None
        self._run, self.backend, self.reason = self.python, "python", _reason(str(e))
        LOG.info("backend='auto': %s runs as Python, as Numba cannot compile it: %s",
                 self.__name__, self.reason)

    def refusal(self, e: Exception) -> TranspileError:
        """Numba's refusal of this code, at the user's line the refused statement came from."""
        text = str(e)
        where = None
        for m in re.finditer(r'File "([^"]+)", line (\d+)', text):
            where = emit.origin_of(m[1], int(m[2])) or where
            if where:
                break
        code = self.fn.__code__
        filename, line = (where[0], where[1]) if where else (code.co_filename,
                                                              code.co_firstlineno)
        return TranspileError(f"Numba cannot compile the {self.kind} of {self.fn.__qualname__}: "
                              f"{_reason(text)}", filename, line, hint=HINT)

    @property
    def kind(self) -> str:
        """What the code computes, for messages: a gradient, or a tangent (forward mode)."""
        return "tangent" if self.__name__.startswith("jvp_") else "gradient"

    def __repr__(self) -> str:
        return f"<{self.backend} function {self.__name__}>"


def _calling_wrappers(function):
    """``function`` (the Python code, run where Numba refused) calling each compiled callee
    through its NativeFunction, which runs Numba's code or falls back itself, where the code
    Numba compiles calls the callee's Numba dispatcher (and a runtime helper compiled by Numba
    as the Python function it compiles)."""
    cells = function.__closure__ or ()
    contents = [_contents(c) for c in cells]
    wrappers = [getattr(v, "transpiler_function", None) or _python_of(v) for v in contents]
    if not any(wrappers):
        return function
    made = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, tuple(
                                  types.CellType(w) if w is not None else c
                                  for c, w in zip(cells, wrappers, strict=True)))
    made.__kwdefaults__ = function.__kwdefaults__
    for name, value in vars(function).items():
        setattr(made, name, value)
    return made


def _python_of(value):
    """The Python function a Numba dispatcher compiles (a runtime helper only Numba's code
    needs, ``range_item``), else None."""
    numba = importlib.import_module("numba")
    return value.py_func if isinstance(value, numba.core.dispatcher.Dispatcher) else None


def _with_compiled_helpers(function, njit, done: dict):
    """``function`` seeing, in place of the plain Python functions it calls by a global or free
    name (the user's helpers called without differentiating them), their Numba-compiled
    versions, which see theirs in turn. Globals and cells are copies (the user's are never
    written): Numba takes a global's value when it compiles anyway."""
    code, scope = function.__code__, function.__globals__
    cells = dict(zip(code.co_freevars, function.__closure__ or (), strict=True))
    names = _global_names(code)
    globals_ = {name: scope[name] for name in names if _plain_helper(scope.get(name))}
    free = {name: cell.cell_contents for name, cell in cells.items()
            if _plain_helper(_contents(cell))}
    if not globals_ and not free:
        return function

    def compiled(helper):
        if helper not in done:
            done[helper] = helper  # (recursion: compiled as the plain function)
            done[helper] = njit(_with_compiled_helpers(helper, njit, done))
        return done[helper]

    scope = {**scope, **{name: compiled(h) for name, h in globals_.items()}}
    closure = tuple(types.CellType(compiled(free[name])) if name in free else cells[name]
                    for name in code.co_freevars)
    return types.FunctionType(code, scope, function.__name__, function.__defaults__,
                              closure or None)


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # (an empty cell)
        return None


def _global_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _plain_helper(value) -> bool:
    """A function of the user's own, in plain Python (not NumPy's, SciPy's or the runtime's)."""
    module = getattr(value, "__module__", None) or ""
    return isinstance(value, types.FunctionType) and not hasattr(value, "py_func") \
        and module.partition(".")[0] not in ("numpy", "scipy", "runtime", "transpiler")


class _NotFloat64(Exception):
    """A floating array other than float64: Numba's type promotion is not NumPy's there (a
    float32 array times a Python float is float64 in Numba, float32 in NumPy), so the numbers
    and types would not be the Python gradient's."""

    def __init__(self, dtype):
        super().__init__(f"an argument is of dtype {dtype}: Numba promotes {dtype} arithmetic "
                         "otherwise than NumPy, so only float64 values are compiled")


def _float64_only(values) -> None:
    """Refuse floating arrays and NumPy scalars other than float64, in tuples and lists too."""
    for a in values:
        kind = type(a)
        if kind is float or kind is int:
            continue
        if kind is tuple or kind is list:
            _float64_only(a)
        elif isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind == "f" \
                and a.dtype.char != "d":
            raise _NotFloat64(a.dtype)


def _refused(e: Exception) -> bool:
    """Whether ``e`` is Numba refusing to compile (its errors, or any raised inside Numba's own
    code), not an error of the computation the compiled code ran."""
    from numba.core.errors import NumbaError
    if isinstance(e, (NumbaError, _NotFloat64)):
        return True
    if isinstance(e, TypeError) and re.fullmatch(r"expected .+, got None", str(e)):
        return True  # (a value Numba typed as optional was None where it is used)
    if isinstance(e, NotImplementedError) and str(e) == "incompatible shape for array":
        return True  # (a reshape Numba cannot do without a copy)
    if isinstance(e, SystemError) and "cannot convert native" in str(e.__context__):
        return True  # (a result with no Python form, such as a range in a vjp's residuals)
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_NUMBA_DIR):
            return True
        tb = tb.tb_next
    return False


_NUMBA_DIR = os.path.dirname(importlib.util.find_spec("numba").origin) + os.sep \
    if importlib.util.find_spec("numba") else "<no numba>"


def _reason(text: str) -> str:
    """The line of Numba's message that says what it could not do."""
    if text.endswith("returned a result with an exception set"):
        return "a value it returns has no Python form in Numba (a range, say)"
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("Failed in", "During:", "File ", "No implementation",
                                         "- Resolution failure", "There are")):
            return line.rstrip(":.")[:300]
    return "Numba's type inference failed"


class _Rewrite(gast.NodeTransformer):
    """The rewrites of the module docstring, in place."""

    def __init__(self, bindings: dict, used: set[str]):
        self.bindings, self.used = bindings, used  # (used: every name the code spells)
        self.ranges: set[str] = set()  # names bound to range(...) (Numba cannot index a range)
        self.index_lists: set[str] = set()  # names of lists of ints used only as indices
        self.empty_lists: dict[str, object] = {}  # names of [] grown by rt.appended: item kind

    def bind(self, preferred: str, obj) -> gast.Name:
        """A name the rewritten code reads ``obj`` by: one already bound to it, else
        ``preferred`` (or a variant of it) where it names nothing the code reads, so that a
        user's own ``len``, ``np`` or ``add_grads`` is never captured or shadowed."""
        if self.bindings.get(preferred) is obj:
            return _load(preferred)
        name, n = preferred, 0
        while name in self.bindings or name in self.used:
            n += 1
            name = f"{preferred}_{n}"
        self.bindings[name] = obj
        self.used.add(name)
        return _load(name)

    def visit_FunctionDef(self, node):
        self.index_lists = _index_lists(node)
        self.empty_lists = _empty_lists(node)
        self.ranges = {n.targets[0].id for n in gast.walk(node)
                       if isinstance(n, gast.Assign) and len(n.targets) == 1
                       and isinstance(n.targets[0], gast.Name) and isinstance(n.value, gast.Call)
                       and isinstance(n.value.func, gast.Name)
                       and self.bindings.get(n.value.func.id) is range}
        self.generic_visit(node)
        for block in gast.walk(node):  # (a block whose only statement was a del)
            if hasattr(block, "body") and isinstance(block.body, list) and not block.body:
                block.body = [gast.Pass()]
        return node

    def visit_Delete(self, node):
        """Numba frees what it no longer needs itself (and refuses ``del``)."""
        return None if all(isinstance(t, gast.Name) for t in node.targets) else node

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                and it.func.id == "reversed" and len(it.args) == 1 and not it.keywords):
            return node
        seq, count = it.args[0], None
        if isinstance(seq, gast.Subscript) and isinstance(seq.slice, gast.Slice) \
                and seq.slice.lower is None and seq.slice.step is None and seq.slice.upper:
            seq, count = seq.value, seq.slice.upper  # reversed(_t1[:_n])
        if not isinstance(seq, gast.Name):
            return node
        index = f"{seq.id}_index"
        count = count or gast.Call(self.bind("len", len), [_load(seq.id)], [])
        minus_one = gast.UnaryOp(gast.USub(), gast.Constant(1, None))
        node.iter = gast.Call(self.bind("range", range), [
            gast.BinOp(count, gast.Sub(), gast.Constant(1, None)), minus_one, minus_one], [])
        if seq.id in self.ranges:  # the range's entry: start + index * step
            entry = gast.BinOp(gast.Attribute(_load(seq.id), "start", gast.Load()), gast.Add(),
                               gast.BinOp(_load(index), gast.Mult(),
                                          gast.Attribute(_load(seq.id), "step", gast.Load())))
        else:
            entry = gast.Subscript(_load(seq.id), _load(index), gast.Load())
        first = gast.copy_location(gast.Assign([node.target], entry, None), node)
        node.target = gast.Name(index, gast.Store(), None, None)
        node.body = [first, *node.body]
        return node

    def visit_Subscript(self, node):
        """``r[i]`` of a range -> ``range_item(r, i)`` (Numba cannot index a range)."""
        self.generic_visit(node)
        if isinstance(node.value, gast.Name) and node.value.id in self.ranges \
                and isinstance(node.ctx, gast.Load) \
                and not isinstance(node.slice, (gast.Slice, gast.Tuple)):
            from runtime.native import range_item
            return gast.copy_location(gast.Call(self.bind("range_item", range_item),
                                                [node.value, node.slice], []), node)
        return node

    def visit_BinOp(self, node):
        """``bxs + part`` adding two gradients (annotated SUM) -> ``add_grads(bxs, part)``:
        item by item for lists and tuples, which Numba's ``+`` would join."""
        self.generic_visit(node)
        if not (hasanno(node, Anno.SUM) and isinstance(node.op, gast.Add)):
            return node
        from runtime.native import add_grads
        return gast.copy_location(gast.Call(self.bind("add_grads", add_grads),
                                            [node.left, node.right], []), node)

    def visit_Assign(self, node):
        """``_t1 = [0, 2]`` -> ``_t1 = np.array([0, 2])`` where ``_t1`` is only an index (Numba
        indexes by arrays, not lists)."""
        name = getattr(node.targets[0], "id", None) if len(node.targets) == 1 else None
        if name in self.index_lists:
            node.value = gast.Call(gast.Attribute(self.bind("np", np), "array", gast.Load()),
                                   [node.value], [])
        if name in self.empty_lists and isinstance(node.value, gast.List) \
                and not node.value.elts:  # [] -> [0.0][:0]: a list of numbers, typed
            kind = self.empty_lists[name]
            first = gast.Constant(0.0, None)
            if kind != "number":  # [np.empty((0,) * ndim)][:0]
                first = gast.Call(gast.Attribute(self.bind("np", np), "empty", gast.Load()), [
                    gast.Constant((0,) * kind, None)], [])
            node.value = gast.Subscript(gast.List([first], gast.Load()), gast.Slice(
                None, gast.Constant(0, None), None), gast.Load())
        return self.generic_visit(node)

    def visit_Call(self, node):
        self.generic_visit(node)
        for k in node.keywords:  # dtype=float: Numba takes NumPy's types only
            if k.arg == "dtype" and isinstance(k.value, gast.Name) and k.value.id in _DTYPES:
                k.value = self.bind(f"_{_DTYPES[k.value.id].__name__}", _DTYPES[k.value.id])
        f = node.func
        if isinstance(f, gast.Name) and f.id == "sum" and len(node.args) == 1 \
                and not node.keywords and self.bindings.get("sum", sum) is sum:
            from runtime.native import builtin_sum  # (Numba's sum adds numbers only)
            node.func = self.bind("builtin_sum", builtin_sum)
            return node
        joins = isinstance(f, gast.Attribute) and f.attr in _JOINS \
            and isinstance(f.value, gast.Name) and self.bindings.get(f.value.id) is np \
            and 1 <= len(node.args) <= 2  # (Numba joins tuples, not lists)
        if joins and isinstance(node.args[0], gast.List):
            node.args[0] = gast.Tuple(node.args[0].elts, gast.Load())
            return node
        if joins and isinstance(node.args[0], gast.Name) and (
                f.attr == "stack" and all(k.arg == "axis" for k in node.keywords)
                or f.attr == "concatenate" and len(node.args) == 1 and not node.keywords):
            import runtime.native
            name = f"{f.attr}_list"
            return gast.copy_location(gast.Call(self.bind(name, getattr(runtime.native, name)),
                                                node.args, node.keywords), node)
        if isinstance(f, gast.Attribute) and f.attr == "mean" and isinstance(f.value, gast.Name) \
                and self.bindings.get(f.value.id) is np and len(node.args) == 1 \
                and isinstance(node.args[0], gast.Name) and [k.arg for k in node.keywords] \
                == ["axis"] and isinstance(node.keywords[0].value, gast.Constant) \
                and type(node.keywords[0].value.value) is int:  # (Numba's mean has no axis)
            x, axis = node.args[0], node.keywords[0].value
            total = gast.Call(gast.Attribute(_load(f.value.id), "sum", gast.Load()), [x],
                              node.keywords)
            count = gast.Subscript(gast.Attribute(_load(x.id), "shape", gast.Load()),
                                   gast.Constant(axis.value, None), gast.Load())
            return gast.copy_location(gast.BinOp(total, gast.Div(), count), node)
        if isinstance(f, gast.Attribute) and f.attr == "astype" and len(node.args) == 1 \
                and isinstance(node.args[0], gast.Attribute) and node.args[0].attr == "dtype":
            from runtime.native import astype_like  # (a NumPy scalar is a number in Numba)
            return gast.copy_location(gast.Call(self.bind("astype_like", astype_like), [
                f.value, node.args[0].value], []), node)
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            callee = self.bindings.get(f.value.id)
            parts = _CALLEE_PARTS.get(type(callee), ())
            if f.attr in parts and getattr(callee, f.attr) is not None:
                compiled = getattr(callee, f.attr)
                node.func = self.bind(f"{f.value.id}_{f.attr}", getattr(compiled, "native",
                                                                          compiled))
                if node.keywords:
                    _positional(node, getattr(compiled, "python", compiled))
        return node


def _empty_lists(function) -> dict[str, object]:
    """The names assigned ``[]`` that ``rt.appended`` grows (through copies ``a = b``) by items
    whose kind the compiler knew (annotated ITEM): name -> "number" or a NumPy array's ndim.
    Numba types an empty list only by an ``append`` of its own; these get a typed empty list
    (``_appended`` checks each item has exactly that type: a wrong kind is refused)."""
    sources: dict[str, set] = {}  # name -> the names its value may come from
    grown: dict[str, set] = {}  # name -> kinds of items appended to a list it holds
    empty = set()
    for node in gast.walk(function):
        if not (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)):
            continue
        target, value = node.targets[0].id, node.value
        if isinstance(value, gast.List) and not value.elts:
            empty.add(target)
        elif isinstance(value, gast.Name):
            sources.setdefault(target, set()).add(value.id)
        elif isinstance(value, gast.Call) and hasanno(value, Anno.ITEM) \
                and value.args and isinstance(value.args[0], gast.Name):
            sources.setdefault(target, set()).add(value.args[0].id)
            grown.setdefault(value.args[0].id, set()).add(getanno(value, Anno.ITEM))
    kinds: dict[str, set] = {}
    for name, added in grown.items():
        seen, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(sources.get(n, ()))
        for origin in seen & empty:
            kinds.setdefault(origin, set()).update(added)
    return {n: next(iter(k)) for n, k in kinds.items() if len(k) == 1}


def _index_lists(function) -> set[str]:
    """The names assigned once a list of int constants and read only as (part of) an index: a
    subscript's, or one passed to a runtime helper."""
    lists, stores, parents = set(), {}, {}
    for node in gast.walk(function):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.List) \
                and node.value.elts and all(isinstance(e, gast.Constant)
                                            and type(e.value) is int for e in node.value.elts):
            lists.add(node.targets[0].id)

    def index_use(name) -> bool:
        up = parents.get(name)
        if isinstance(up, gast.Tuple):
            name, up = up, parents.get(up)
        if isinstance(up, gast.Subscript):
            return up.slice is name
        return isinstance(up, gast.Call) and name in up.args \
            and isinstance(up.func, gast.Attribute) and getattr(up.func.value, "id", "") == "rt"

    lists = {n for n in lists if stores[n] == 1}
    for node in gast.walk(function):
        if isinstance(node, gast.Name) and node.id in lists \
                and isinstance(node.ctx, gast.Load) and not index_use(node):
            lists.discard(node.id)
    return lists


_JOINS = ("concatenate", "stack", "vstack", "hstack", "column_stack", "dstack")
_DTYPES = {"float": np.float64, "int": np.int64, "bool": np.bool_, "complex": np.complex128}


def _positional(call, function) -> None:
    """Pass ``call``'s keyword arguments by position (Numba's callee takes its keyword-only
    parameters by position too), with the defaults of those not passed (numbers only: otherwise
    the call is left for Numba to refuse)."""
    params = list(inspect.signature(function).parameters.values())
    given = {k.arg: k.value for k in call.keywords}
    if None in given or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return
    args = list(call.args)
    for p in params[len(args):]:
        if p.name in given:
            args.append(given.pop(p.name))
        elif type(p.default) in (int, float, bool):
            args.append(gast.Constant(p.default, None))
        else:
            return
    if not given:
        call.args, call.keywords = args, []


def _load(name: str):
    return gast.Name(name, gast.Load(), None, None)
