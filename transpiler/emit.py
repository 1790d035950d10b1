"""Turn gast into Python source (printing '# ...' comment statements) and load it.

Two printers make the same text: astor's, the design's dependency, and one built on the standard
library's ``ast`` unparser, used where astor cannot import or cannot print a construct (astor
0.8.1 reads ``ast.Num`` and ``ast.Str``, which Python 3.14 removed; f-strings are always printed
by the standard library's). ``TRANSPILER_EMITTER=unparse`` forces the second, as the tests do.

Each generated statement remembers the line of the user's function it came from: ``load`` keeps
that table beside the source it registers in linecache, and ``note_origin`` uses it to tell, in
an exception raised by generated code, which of the user's lines the failing statement computes
(or differentiates).
"""

from __future__ import annotations

import ast
import bisect
import linecache
import os
import re
import textwrap
import threading
import types
import warnings
import weakref

import gast

from transpiler.anno import Anno, getanno

try:
    with warnings.catch_warnings():  # astor 0.8.1 reads ast.Num at import (deprecated in 3.12)
        warnings.simplefilter("ignore", DeprecationWarning)
        import astor
except ImportError:  # pragma: no cover - astor is a dependency; the other printer stands in
    astor = None


class _Comment(str):
    """A string constant that the source generator prints as a comment line."""


def safe_text(text: str) -> str:
    """``text`` with each character that could end a comment line or a string early (a line
    break of any kind, a control character) written as its escape: user text (a file name, a
    command line) placed in generated code stays inside its comment."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


_ORIGIN = "_transpiler_origin"  # on an emitted ast statement: (user line, in the adjoint)
_LAST = threading.local()  # .emitted: (source, {source line: origin}) of the last to_source


def _source_lines(result: list[str], marks: list) -> tuple[str, dict]:
    """The source of a printer's chunks, and its line -> origin table from ``marks`` (index of
    the chunk a statement's text starts at, its origin)."""
    if result and set(result[0]) == {"\n"}:  # as astor.to_source: no leading blank lines
        result[0] = ""
    source = "".join(result).rstrip()
    lines, newlines, done = {}, 0, 0
    for index, origin in marks:
        newlines += sum(chunk.count("\n") for chunk in result[done:index + 1])
        done = index + 1
        lines.setdefault(newlines + 1, origin)
    return source, lines


if astor is not None:
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

        def visit_JoinedStr(self, node):  # astor's reads ast.Str (gone in Python 3.14)
            self.write(ast.unparse(node))


def _astor(tree) -> tuple[str, dict]:
    generator = _SourceGenerator(" " * 4, False, astor.code_gen.pretty_string)
    generator.visit(tree)
    return _source_lines(generator.result, generator.marks)  # no astor line wrapping


class _Unparser(ast._Unparser):
    """The standard library's unparser, printing what astor prints: comment statements, and a
    tuple unparenthesised where it stands alone (``return a, b``; ``a, b = b, a``)."""

    _ALONE = {ast.Return: ("value",), ast.Assign: ("targets", "value"), ast.AugAssign: ("value",),
              ast.AnnAssign: ("value",), ast.Expr: ("value",), ast.For: ("target",),
              ast.comprehension: ("target",)}

    def __init__(self, **kwargs):  # the f-string printer makes nested ones with a keyword
        super().__init__(**kwargs)
        self.marks: list[tuple[int, tuple[int, bool]]] = []
        self._pending = None

    def traverse(self, node):
        if isinstance(node, ast.stmt):
            self._pending = getattr(node, _ORIGIN, None)
        for field in self._ALONE.get(type(node), ()):
            for value in (lambda v: v if isinstance(v, list) else [v])(getattr(node, field)):
                if isinstance(value, ast.Tuple):
                    self.set_precedence(ast._Precedence.TUPLE, value)
        super().traverse(node)

    def visit_Tuple(self, node):  # as Python 3.11's, also on 3.10 (which always parenthesises)
        bare = node.elts and self.get_precedence(node) <= ast._Precedence.TUPLE
        with self.delimit_if("(", ")", not bare):
            self.items_view(self.traverse, node.elts)

    def fill(self, text=""):
        self.maybe_newline()
        if self._pending is not None:
            self.marks.append((len(self._source), self._pending))
            self._pending = None
        self.write("    " * self._indent + text)

    def visit_Expr(self, node):
        text = getattr(node.value, "value", None)
        if isinstance(text, _Comment):
            self.fill("# " + safe_text(str(text)))
            return
        super().visit_Expr(node)

    def visit_BoolOp(self, node):  # each operand one level above the operator, as astor (the
        # library raises the level operand by operand, printing 'a and (not b)')
        operator = self.boolops[node.op.__class__.__name__]
        precedence = self.boolop_precedence[operator]
        with self.require_parens(precedence, node):
            for value in node.values:
                self.set_precedence(precedence.next(), value)
            self.interleave(lambda: self.write(f" {operator} "), self.traverse, node.values)

    def get_type_comment(self, node):  # generated code has none (nor the lines they key on)
        return None


def _unparse(tree) -> tuple[str, dict]:
    printer = _Unparser()
    printer.traverse(tree)
    return _source_lines(printer._source, printer.marks)


PRINTERS = {"astor": _astor, "unparse": _unparse}  # ast tree -> (source, {line: origin})
PRINTER = "unparse" if astor is None or os.environ.get("TRANSPILER_EMITTER") == "unparse" \
    else "astor"  # chosen once, at import


def to_source(node, printer: str | None = None) -> str:
    """Python source of a gast node; comment statements become ``# ...`` lines. ``printer``
    names one of ``PRINTERS`` (default ``PRINTER``); where astor fails on a construct, the
    standard library's printer prints the whole node instead."""
    tree = _to_ast(node)
    try:
        source, lines = PRINTERS[printer or PRINTER](tree)
    except (AttributeError, AssertionError):  # a construct astor cannot print on this Python
        source, lines = _unparse(tree)
    _LAST.emitted = (source, lines)
    return source


_AST_CLASSES: dict = {}  # gast class -> ast class of the same name
_SHARED: dict = {}  # gast class without fields (Load, Add, ...) -> one ast instance, shared
_WHOLE = (gast.Module, gast.FunctionDef)  # whose body _to_ast splits into primal and adjoint
_BLOCKS = ("body", "orelse")


def _to_ast(node, adjoint: bool = False):
    """gast -> ast for what the compiler emits (several times faster than gast.gast_to_ast).

    Statements keep their user line, and whether they belong to the adjoint, as ``_ORIGIN``."""
    kind = type(node)
    if kind is list:
        return [_to_ast(n, adjoint) for n in node]
    shared = _SHARED.get(kind)
    if shared is not None:
        return shared
    if not isinstance(node, gast.AST):
        return node
    if kind is gast.Name and type(node.ctx) is gast.Param:
        return ast.arg(arg=node.id, annotation=None, type_comment=None)
    if kind is gast.Expr and getanno(node, Anno.COMMENT) is not None:
        return ast.Expr(value=ast.Constant(value=_Comment(getanno(node, Anno.COMMENT))))
    cls = _AST_CLASSES.get(kind) or _AST_CLASSES.setdefault(kind, getattr(ast, kind.__name__))
    if not cls._fields and not kind._fields and not issubclass(cls, ast.stmt):  # a marker
        return _SHARED.setdefault(kind, cls())
    new = cls.__new__(cls)
    for field in cls._fields:
        value = getattr(node, field, None)
        if field == "body" and kind in _WHOLE:
            value = None
        elif type(value) is list:
            value = [_to_ast(n, adjoint) for n in value]
        elif isinstance(value, gast.AST):
            value = _SHARED.get(type(value)) or _to_ast(value, adjoint)
        setattr(new, field, value)
    if kind is gast.ExceptHandler:  # (gast names the exception with a Name, ast with a str)
        new.name = node.name.id if node.name is not None else None
    if kind is gast.Module:  # a split pair: the second function is the backward, all adjoint
        new.body = [_to_ast(n, i == 1) for i, n in enumerate(node.body)]
    elif kind is gast.FunctionDef:
        start = 0 if adjoint else _adjoint_start(node.body)
        new.body = [_to_ast(n, i >= start) for i, n in enumerate(node.body)]
    if isinstance(new, ast.stmt):
        if "body" in cls._fields:
            for field in _BLOCKS:  # a block of comments alone is not a block
                block = getattr(new, field, None)
                if type(block) is list and block and all(_is_comment(s) for s in block):
                    setattr(new, field, block + [ast.Pass()] if field == "body" else [])
        line = getattr(node, "lineno", None)
        if line:
            setattr(new, _ORIGIN, (line, adjoint))
    return new


def _adjoint_start(body: list) -> int:
    """Where the adjoint of a whole gradient function starts: at the seed before the first
    ``# grad of:`` comment (``b = 1.0``, ``b = rt.seed(y)``), or at the comment where the seed
    was folded into the code after it (the body's length when there is no adjoint)."""
    for i, stmt in enumerate(body):
        if type(stmt) is gast.Expr and str(getanno(stmt, Anno.COMMENT, "")).startswith("grad of:"):
            seed = body[i - 1] if i else None
            value = getattr(seed, "value", None) if type(seed) is gast.Assign else None
            if isinstance(value, gast.Constant) or (
                    isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                    and value.func.attr == "seed"):
                return i - 1
            return i
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
    if where is None:
        return
    user_file, line, adjoint = where
    text = linecache.getline(user_file, line).strip()
    note = (f"in {user_file}:{line} or its tangent (forward mode): {text}" if forward else
            f"in the gradient of {user_file}:{line}: {text}" if adjoint else
            f"in {user_file}:{line} (computed again by the gradient): {text}")
    notes = getattr(exc, "__notes__", [])
    if note not in notes:  # add_note is Python 3.11's; 3.10 keeps the list PEP 678 defines
        exc.__notes__ = [*notes, note]
