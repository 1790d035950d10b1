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
    gast.increment_lineno(module, lineno - 1)
    node.decorator_list = []
    return node, filename, indent
