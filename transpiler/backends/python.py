"""The Python backend: generated source printed as Python (``emit.to_source``), compiled with
``compile`` into functions that live in the user's module (``emit.load``), and, for calls whose
arguments are all Python floats, a dispatcher generated per variant that calls the compiled
function without the general path's checks (``fast_path``)."""

from __future__ import annotations

import types

from transpiler import emit
from transpiler.emit import note_origin

NAME = "python"


def source(tree, bindings: dict) -> str:
    """The text of the compiler's final tree, as the code this backend runs (``bindings``: the
    values it refers to by name, which a backend may add to)."""
    return emit.to_source(tree)


def load(text: str, names: list[str], label: str, fn, bindings: dict) -> list:
    """The functions ``names`` defined by ``text`` (see ``emit.load``)."""
    return emit.load(text, names, label, fn, bindings)


_DISPATCH = """\
def _make(_fast_, _slow_, _fn_, _code_, _note_, _keywords_, _missing_, _type_, _float_,
          _defaults_, _kwdefaults_{cells}):
    def dispatch({params}, /, *args, **kwargs):
        if {floats} and not args and {keywords} and _fn_.__code__ is _code_ \
                and _fn_.__defaults__ is _defaults_ and _fn_.__kwdefaults__ is _kwdefaults_{fresh}:
            try:
                return _fast_({values}{pass_keywords})
            except Exception as e:
                _note_(e)  # name the user's line the failing statement came from
                raise
        return _slow_(*[a for a in ({values},) if a is not _missing_], *args, **kwargs)
    return dispatch
"""
_DISPATCH_NAMES = {"_make", "_fast_", "_slow_", "_fn_", "_code_", "_note_", "_keywords_",
                   "_missing_", "_type_", "_float_", "_defaults_", "_kwdefaults_", "dispatch",
                   "args", "kwargs", "e"}


def fast_path(fn, compiled, count: int, keywords: frozenset, slow):
    """A function taking ``fn``'s arguments that calls ``compiled.function`` directly when it
    is given ``count`` positional Python floats, exactly the keyword arguments ``keywords``, ``fn``
    still has the code and the defaults it was compiled from, each global the code was compiled
    against (``compiled.snapshots``) still names the same object and each function it calls by a
    module's name is still that module's (``compiled.watched``); any other call goes to
    ``slow``.

    It is compiled with ``fn``'s globals, so it reads those globals as ``fn`` does (the
    interpreter caches the look-ups) without writing anything into them. None if a global's
    name would clash with the dispatcher's own names."""
    names = [name for name, _ in compiled.snapshots]  # (np, np.sin, ...)
    values = [f"a{i}" for i in range(count)]
    cells = [f"_s{i}_" for i in range(len(names))]
    owners = [f"_o{i}_" for i in range(len(compiled.watched))]  # (a rule's np.sin, ...)
    functions = [f"_w{i}_" for i in range(len(compiled.watched))]
    if {n.split(".")[0] for n in names} & (_DISPATCH_NAMES | set(values) | set(cells)
                                           | set(owners) | set(functions)) \
            or "__builtins__" not in fn.__globals__:
        return None
    source = _DISPATCH.format(
        cells="".join(", " + c for c in cells + owners + functions),
        params=", ".join(f"{v}=_missing_" for v in values),
        floats=" and ".join(f"_type_({v}) is _float_" for v in values),
        keywords="kwargs.keys() == _keywords_" if keywords else "not kwargs",
        fresh="".join(f" and {n} is {c}" for n, c in zip(names, cells, strict=True)) + "".join(
            f" and {o}.{attr} is {w}"
            for o, w, (_, attr, _) in zip(owners, functions, compiled.watched, strict=True)),
        values=", ".join(values), pass_keywords=", **kwargs" if keywords else "")
    namespace: dict = {}
    exec(compile(source, f"<dispatch of {fn.__qualname__}>", "exec"), namespace)
    make = types.FunctionType(namespace["_make"].__code__, fn.__globals__, "_make")
    return make(compiled.function, slow, fn, fn.__code__, note_origin, keywords, _MISSING, type,
                float, fn.__defaults__, fn.__kwdefaults__,  # (those compiled against: just now)
                *[obj for _, obj in compiled.snapshots], *[o for o, _, _ in compiled.watched],
                *[f for _, _, f in compiled.watched])


_MISSING = object()  # a parameter of the dispatcher the caller did not pass
