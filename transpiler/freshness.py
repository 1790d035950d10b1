"""Whether a compiled gradient still is the one for its function, checked as cheaply as the
names it depends on can be read.

``depends`` lists what the gradient was compiled against: globals of the function's
module (``np``, ``np.sin``, a helper, a helper's defaults), functions called by a module's name,
callees' defaults, callees of other modules. ``conditions`` writes each as a Python expression
(``np.sin is _c1_``); compiled with the function's globals, one function evaluates them all, and
the interpreter caches each global look-up: 20 names cost about what one call does. The call
path's dispatcher (``backends/python.py``) inlines the same expressions; ``checker`` gives them
to ``Compiled.stale``.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import NamedTuple

from transpiler.calls import defaults_of

_MISSING = object()  # a name ``.get`` finds nowhere
# the names the generated code binds itself: a global of the function named so would clash
RESERVED = frozenset({"_make", "_missing_", "fresh"})


def depends(fn, compiled) -> Depends:
    """What ``compiled.stale(fn)`` compares, flattened (``fn``'s own code and defaults aside):
    the globals of ``fn``'s module (``snapshots``, the callees' included), every function
    called by a module's name and every callee's defaults, at any depth; callees living in
    another module check themselves."""
    watched, defaults, foreign = list(compiled.watched), [], []
    todo, seen = list(compiled.callees), set()
    while todo:
        callee = todo.pop()
        if id(callee) in seen or callee.fn is None:  # (recursion; still compiling)
            continue
        seen.add(id(callee))
        if callee.fn.__globals__ is not fn.__globals__:
            foreign.append(callee)
            continue
        watched.extend(callee.watched)
        if callee.defaults is not None:
            defaults.append((callee.fn, callee.defaults))
        todo.extend(callee.callees)
    # each check once: a function called by name in several places, a helper whose defaults
    # are checked by name already (its global and the global's defaults)
    watched = list({(id(o), a): (o, a, f) for o, a, f in watched}.values())
    named = {id(obj): name for name, obj in compiled.snapshots}
    by_name = {name for name, _ in compiled.snapshots}
    defaults = [(f, d) for f, d in defaults if not (
        id(f) in named and {f"{named[id(f)]}.{a}" for a in _read_defaults(f)} <= by_name
        and len(d) == 1)]  # (keyword defaults: their contents are checked one by one)
    return Depends(compiled.snapshots, tuple(watched), tuple(defaults), tuple(foreign))


def _read_defaults(function) -> tuple[str, ...]:
    """The attributes holding defaults that calls of ``function`` read (``__kwdefaults__`` only
    for keyword-only parameters)."""
    return ("__defaults__", "__kwdefaults__") if function.__code__.co_kwonlyargcount \
        else ("__defaults__",)


class Depends(NamedTuple):
    """What a compiled gradient depends on (``depends``)."""
    snapshots: tuple  # (global name, object): each name must still mean that object
    watched: tuple  # (module, attribute, function): each attribute must still be that function
    defaults: tuple  # (callee's function, calls.defaults_of when compiled)
    foreign: tuple  # callees of another module: each .stale() must be False


def conditions(fn, compiled, cell: Callable[[object], str], own: str | None = None) -> list[str]:
    """The expressions, each true while one thing ``compiled`` depends on is unchanged, in
    ``fn``'s globals; ``cell(obj)`` names a value the code is given (``own``: the name of one
    holding ``fn``). None if a global's name clashes with a name the code binds."""
    fresh = depends(fn, compiled)
    checks = [f"{name} is {cell(obj)}" for name, obj in fresh.snapshots]
    checks += [f"{cell(owner)}.{attr} is {cell(obj)}" for owner, attr, obj in fresh.watched]
    mine = compiled.defaults if compiled.defaults is not None else defaults_of(fn)
    for function, (positional, *keyword) in ((fn, mine), *fresh.defaults):
        f = own if function is fn and own else cell(function)
        checks.append(f"{f}.__defaults__ is {cell(positional)}")
        if keyword:  # (a dict: what it holds is checked, as calls.same_defaults does)
            checks += [f"{f}.__kwdefaults__.get({k!r}, _missing_) is {cell(v)}"
                       for k, v in keyword]
            checks.append(f"len({f}.__kwdefaults__) == {len(keyword)}")
        elif function.__code__.co_kwonlyargcount:  # (else never read)
            checks.append(f"not {f}.__kwdefaults__")
    checks += [f"not {cell(callee.stale)}()" for callee in fresh.foreign]
    return checks


def clashes(fn, compiled, names: set[str]) -> bool:
    """Whether a global the checks read is shadowed by one of ``names`` (the code's own), or
    ``fn``'s module has no builtins to read."""
    roots = {name.split(".")[0] for name, _ in compiled.snapshots}
    return bool(roots & (names | RESERVED)) or "__builtins__" not in fn.__globals__


_CHECKER = """\
def _make(_missing_{cells}):
    def fresh():
        try:
            return {checks}
        except (NameError, AttributeError):  # a global deleted: stale
            return False
    return fresh
"""


class Cells:
    """The values generated code is given, each named ``_c<k>_``: ``cells(obj)`` names one."""

    def __init__(self):
        self.names: list[str] = []
        self.objects: list = []

    def __call__(self, obj) -> str:
        self.names.append(f"_c{len(self.names)}_")
        self.objects.append(obj)
        return self.names[-1]

    def parameters(self) -> str:
        """``", _c0_, _c1_"``: the names, as parameters after others."""
        return "".join(", " + c for c in self.names)


def checker(fn, compiled) -> Callable[[], bool] | None:
    """A function of no arguments telling whether ``compiled`` is still fresh for ``fn`` (what
    ``not compiled.stale(fn)`` computes, as ``conditions``), or None where names clash."""
    cells = Cells()
    checks = conditions(fn, compiled, cells)
    if clashes(fn, compiled, set(cells.names)):
        return None
    source = _CHECKER.format(cells=cells.parameters(), checks=" and ".join(checks) or "True")
    namespace: dict = {}
    exec(compile(source, f"<freshness of {fn.__qualname__}>", "exec"), namespace)
    make = types.FunctionType(namespace["_make"].__code__, fn.__globals__, "_make")
    return make(_MISSING, *cells.objects)
