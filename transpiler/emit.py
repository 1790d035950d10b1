"""Turn gast into Python source (astor, printing '# ...' comment statements) and load it."""

from __future__ import annotations

import ast
import linecache
import textwrap
import types
import weakref

import astor
import gast

from transpiler.anno import Anno, getanno


class _Comment(str):
    """A string constant that the source generator prints as a comment line."""


class _SourceGenerator(astor.code_gen.SourceGenerator):
    def visit_Expr(self, node):
        text = getattr(node.value, "value", None)
        if isinstance(text, _Comment):
            self.statement(node, "# " + str(text))
            return
        super().visit_Expr(node)


def to_source(node) -> str:
    """Python source of a gast node; comment statements become ``# ...`` lines."""
    return astor.to_source(_to_ast(node), source_generator_class=_SourceGenerator,
                           pretty_source="".join).rstrip()  # no astor line wrapping


_AST_CLASSES: dict = {}  # gast class -> ast class of the same name


def _to_ast(node):
    """gast -> ast for what the compiler emits (several times faster than gast.gast_to_ast)."""
    kind = type(node)
    if kind is list:
        return [_to_ast(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    if kind is gast.Name and type(node.ctx) is gast.Param:
        return ast.arg(arg=node.id, annotation=None, type_comment=None)
    if kind is gast.Expr and getanno(node, Anno.COMMENT) is not None:
        return ast.Expr(value=ast.Constant(value=_Comment(getanno(node, Anno.COMMENT))))
    cls = _AST_CLASSES.get(kind) or _AST_CLASSES.setdefault(kind, getattr(ast, kind.__name__))
    new = cls.__new__(cls)
    for field in cls._fields:
        setattr(new, field, _to_ast(getattr(node, field, None)))
    for field in ("body", "orelse"):  # a block of comments alone is not a block
        block = getattr(new, field, None)
        if type(block) is list and block and all(_is_comment(s) for s in block):
            setattr(new, field, block + [ast.Pass()] if field == "body" else [])
    return new


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
        out.append(function)
    linecache.cache[filename] = (len(factory), None, factory.splitlines(keepends=True), filename)
    weakref.finalize(out[0], linecache.cache.pop, filename, None)
    return out
