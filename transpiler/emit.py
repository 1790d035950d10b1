"""Turn gast into Python source (astor, printing '# ...' comment statements) and load it.

Each generated statement remembers the line of the user's function it came from: ``load`` keeps
that table beside the source it registers in linecache, and ``note_origin`` uses it to tell, in
an exception raised by generated code, which of the user's lines the failing statement computes
(or differentiates).
"""

from __future__ import annotations

import ast
import bisect
import linecache
import re
import textwrap
import threading
import types
import weakref

import astor
import gast

from transpiler.anno import Anno, getanno


class _Comment(str):
    """A string constant that the source generator prints as a comment line."""


class _SourceGenerator(astor.code_gen.SourceGenerator):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.marks: list[tuple[int, tuple[int, bool]]] = []  # (index in result, origin)

    def newline(self, node=None, extra=0):
        super().newline(node, extra)
        origin = getattr(node, _ORIGIN, None)
        if origin is not None:  # the statement's text starts with the next chunk written
            self.marks.append((len(self.result), origin))

    def visit_Expr(self, node):
        text = getattr(node.value, "value", None)
        if isinstance(text, _Comment):
            self.statement(node, "# " + str(text))
            return
        super().visit_Expr(node)


_ORIGIN = "_transpiler_origin"  # on an emitted ast statement: (user line, in the adjoint)
_LAST = threading.local()  # .emitted: (source, {source line: origin}) of the last to_source


def to_source(node) -> str:
    """Python source of a gast node; comment statements become ``# ...`` lines."""
    generator = _SourceGenerator(" " * 4, False, astor.code_gen.pretty_string)
    generator.visit(_to_ast(node))
    result = generator.result
    if result and set(result[0]) == {"\n"}:  # as astor.to_source: no leading blank lines
        result[0] = ""
    source = "".join(result).rstrip()  # no astor line wrapping
    lines, newlines, done = {}, 0, 0
    for index, origin in generator.marks:
        newlines += sum(chunk.count("\n") for chunk in result[done:index + 1])
        done = index + 1
        lines.setdefault(newlines + 1, origin)
    _LAST.emitted = (source, lines)
    return source


_AST_CLASSES: dict = {}  # gast class -> ast class of the same name
_WHOLE = (gast.Module, gast.FunctionDef)  # whose body _to_ast splits into primal and adjoint


def _to_ast(node, adjoint: bool = False):
    """gast -> ast for what the compiler emits (several times faster than gast.gast_to_ast).

    Statements keep their user line, and whether they belong to the adjoint, as ``_ORIGIN``."""
    kind = type(node)
    if kind is list:
        return [_to_ast(n, adjoint) for n in node]
    if not isinstance(node, gast.AST):
        return node
    if kind is gast.Name and type(node.ctx) is gast.Param:
        return ast.arg(arg=node.id, annotation=None, type_comment=None)
    if kind is gast.Expr and getanno(node, Anno.COMMENT) is not None:
        return ast.Expr(value=ast.Constant(value=_Comment(getanno(node, Anno.COMMENT))))
    cls = _AST_CLASSES.get(kind) or _AST_CLASSES.setdefault(kind, getattr(ast, kind.__name__))
    new = cls.__new__(cls)
    for field in cls._fields:
        setattr(new, field, _to_ast(getattr(node, field, None), adjoint)
                if field != "body" or kind not in _WHOLE else None)
    if kind is gast.Module:  # a split pair: the second function is the backward, all adjoint
        new.body = [_to_ast(n, i == 1) for i, n in enumerate(node.body)]
    elif kind is gast.FunctionDef:
        start = 0 if adjoint else _adjoint_start(node.body)
        new.body = [_to_ast(n, i >= start) for i, n in enumerate(node.body)]
    for field in ("body", "orelse"):  # a block of comments alone is not a block
        block = getattr(new, field, None)
        if type(block) is list and block and all(_is_comment(s) for s in block):
            setattr(new, field, block + [ast.Pass()] if field == "body" else [])
    line = getattr(node, "lineno", None)
    if line and isinstance(new, ast.stmt):
        setattr(new, _ORIGIN, (line, adjoint))
    return new


def _adjoint_start(body: list) -> int:
    """Where the adjoint of a whole gradient function starts: at the seed, the statement before
    the first ``# grad of:`` comment (the body's length when there is no adjoint)."""
    for i, stmt in enumerate(body):
        if type(stmt) is gast.Expr and str(getanno(stmt, Anno.COMMENT, "")).startswith("grad of:"):
            return max(i - 1, 0)
    return len(body)


def _is_comment(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(getattr(stmt.value, "value", None), _Comment)


def load(source: str, names: list[str], filename: str, fn, bindings: dict) -> list:
    """Compile ``source`` (``def`` statements for ``names``) into functions living in ``fn``'s
    module; the first gets ``fn``'s default values.

    They run with ``fn``'s live globals (so module data is never stale) and see ``bindings``
    and ``fn``'s free variables through closure cells: nothing is written into the user's
    globals. The source is registered in linecache under ``filename`` for tracebacks,
    ``inspect.getsource`` and pdb, and unregistered when the first function is collected.
    """
    base, k = filename, 1
    while filename in linecache.cache:  # another compile of the same function: keep both
        k += 1
        filename = f"{base[:-1]} #{k}>"
    free = sorted(set(bindings) | set(fn.__code__.co_freevars))
    factory = (f"def _make({', '.join(free)}):\n{textwrap.indent(source, '    ')}\n"
               f"    return {', '.join(names)},\n")
    namespace: dict = {}
    exec(compile(factory, filename, "exec"), namespace)
    inner = namespace["_make"](*[bindings.get(n) for n in free])
    user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    out = []
    for i, (name, made) in enumerate(zip(names, inner, strict=True)):
        code = made.__code__
        cells = tuple(types.CellType(bindings[n]) if n in bindings else user_cells[n]
                      for n in code.co_freevars)
        function = types.FunctionType(code, fn.__globals__, name,
                                      fn.__defaults__ if i == 0 else None, cells)
        if i == 0:
            function.__kwdefaults__ = fn.__kwdefaults__
        function.generated_by_transpiler = True  # its writes all go into fresh copies
        out.append(function)
    linecache.cache[filename] = (len(factory), None, factory.splitlines(keepends=True), filename)
    emitted = getattr(_LAST, "emitted", None)
    if emitted is not None and emitted[0] is source:  # source lines -> the user's lines
        lines = sorted(emitted[1].items())
        _ORIGINS[filename] = (_user_file(fn), [n + 1 for n, _ in lines],  # + 1: 'def _make'
                              [origin for _, origin in lines])
    weakref.finalize(out[0], _forget, filename)
    return out


# linecache name of loaded generated code -> (user file, sorted factory line numbers, their
# (user line, in the adjoint) origins)
_ORIGINS: dict[str, tuple[str, list[int], list[tuple[int, bool]]]] = {}


def _forget(filename: str) -> None:
    linecache.cache.pop(filename, None)
    _ORIGINS.pop(filename, None)


def _user_file(fn) -> str:
    """The file ``fn`` was written in (a lifted function's stand-in names its real file; its
    lines are numbered as in that file)."""
    filename = fn.__code__.co_filename
    lifted = re.fullmatch(r"<\w+, defined in (.*):\d+>", filename)
    return lifted.group(1) if lifted else filename


def origin_of(filename: str, lineno: int) -> tuple[str, int, bool] | None:
    """``(user file, user line, in the adjoint)`` that line ``lineno`` of the generated code
    registered as ``filename`` came from (the nearest located statement at or above it)."""
    found = _ORIGINS.get(filename)
    if found is None:
        return None
    user_file, numbers, origins = found
    i = bisect.bisect_right(numbers, lineno) - 1
    return (user_file, *origins[i]) if i >= 0 else None


def note_origin(exc: BaseException) -> None:
    """Add to ``exc`` a note naming the user's line behind the innermost generated frame of its
    traceback (nothing when no generated frame is found); its type and message are kept."""
    where, forward = None, False
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in _ORIGINS:
            found = origin_of(filename, tb.tb_lineno)
            if found:
                where, forward = found, filename.startswith(("<jvp of", "<tangent of"))
        tb = tb.tb_next
    if where is None or not hasattr(exc, "add_note"):  # add_note: Python 3.11
        return
    user_file, line, adjoint = where
    text = linecache.getline(user_file, line).strip()
    note = (f"in {user_file}:{line} or its tangent (forward mode): {text}" if forward else
            f"in the gradient of {user_file}:{line}: {text}" if adjoint else
            f"in {user_file}:{line} (computed again by the gradient): {text}")
    if note not in getattr(exc, "__notes__", ()):
        exc.add_note(note)
