"""Read a function's source into a gast FunctionDef located in the user's real file."""

from __future__ import annotations

import inspect
import textwrap

import gast

from transpiler.errors import TranspileError


def parse_function(fn) -> tuple[gast.FunctionDef, str, int]:
    """Return ``(node, filename, indent)`` for ``fn``.

    Line numbers in ``node`` are those of the user's file; ``indent`` is the number of columns
    dedenting removed (errors add it back to column offsets).
    """
    try:
        lines, lineno = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as e:
        name = getattr(fn, "__qualname__", repr(fn))
        code = getattr(fn, "__code__", None)
        raise TranspileError(
            f"cannot read the source of {name}: {e}",
            getattr(code, "co_filename", "<unknown>"), getattr(code, "co_firstlineno", 0),
            hint="define the function with 'def' in a file (or register its source in linecache)",
        ) from e
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(source.splitlines()[0]) - len(dedented.splitlines()[0])
    module = gast.parse(dedented)
    node = module.body[0]
    if not isinstance(node, gast.FunctionDef):
        raise TranspileError(
            f"{fn.__name__} is not defined by a 'def' statement",
            filename, lineno, indent,
            hint="lambdas and async functions are not supported; rewrite it as a plain 'def'",
        )
    if not _same_code(fn, dedented):
        raise TranspileError(
            f"the source of {fn.__name__} in {filename} is not the code that runs (was the file "
            "edited after it was imported?)", filename, lineno, indent,
            hint="reload the module (importlib.reload) or restart, so code and source agree")
    gast.increment_lineno(module, lineno - 1)
    node.decorator_list = []
    return node, filename, indent


def _same_code(fn, source: str) -> bool:
    """Whether ``source`` compiles to what ``fn`` runs: the same constants and names (closure
    variables compile as globals on their own, so free and global names are pooled)."""
    try:
        module = compile(source, "<source check>", "exec", dont_inherit=True)
    except SyntaxError:
        return True  # gast parsed it: leave the judgement to the passes
    found = [c for c in module.co_consts if hasattr(c, "co_code") and c.co_name == fn.__name__]
    free = set(fn.__code__.co_freevars)
    return not found or _fingerprint(found[0], free) == _fingerprint(fn.__code__, free)


def _fingerprint(code, free: set) -> tuple:
    nested = {c.co_name for c in code.co_consts if hasattr(c, "co_code")}
    consts = tuple(_fingerprint(c, free) if hasattr(c, "co_code") else (type(c).__name__, repr(c))
                   for c in code.co_consts if not _qualname(c, nested))
    return consts, tuple(sorted(code.co_varnames)), \
        tuple(sorted((set(code.co_names) | set(code.co_freevars)) - free))


def _qualname(const, nested: set) -> bool:
    """Python 3.10 keeps a nested function's qualified name among the constants (3.11 moved it
    into the code object); it depends on where the source was compiled, so it is not compared."""
    return isinstance(const, str) and const.rsplit(".", 1)[-1] in nested and (
        "<locals>" in const or const in nested)
