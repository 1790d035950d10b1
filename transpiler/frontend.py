"""Read a function's source into a gast FunctionDef located in the user's real file."""

from __future__ import annotations

import ast
import dis
import inspect
import linecache
import textwrap

import gast

from transpiler.errors import TranspileError


def parse_function(fn) -> tuple[gast.FunctionDef, str, int]:
    """Return ``(node, filename, indent)`` for ``fn``.

    Line numbers in ``node`` are those of the user's file; ``indent`` is the number of columns
    dedenting removed (errors add it back to column offsets). A lambda is read from its file as
    ``def lambda_fn(<its parameters>): return <its body>``.
    """
    if fn.__name__ == "<lambda>":
        return _lambda(fn), fn.__code__.co_filename, 0
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
            hint="async functions are not supported; rewrite it as a plain 'def'",
        )
    if not _same_code(fn, dedented):
        raise TranspileError(
            f"the source of {fn.__name__} in {filename} is not the code that runs (was the file "
            "edited after it was imported?)", filename, lineno, indent,
            hint="reload the module (importlib.reload) or restart, so code and source agree")
    gast.increment_lineno(module, lineno - 1)
    node.decorator_list = []
    return node, filename, indent


def _lambda(fn) -> gast.FunctionDef:
    """The lambda of ``fn``'s file, on its first line, that compiles to ``fn``'s code."""
    code = fn.__code__
    source = "".join(linecache.getlines(code.co_filename))
    try:
        module = gast.parse(source)
    except (SyntaxError, ValueError):
        module = gast.Module(body=[], type_ignores=[])
    free = set(code.co_freevars)
    found = {gast.dump(n): n for n in gast.walk(module) if isinstance(n, gast.Lambda)
             and n.lineno == code.co_firstlineno and _lambda_code(n, free) == _fingerprint(
                 code, free)}
    if len(found) != 1:
        raise TranspileError(
            f"cannot read the source of the lambda defined at {code.co_filename}:"
            f"{code.co_firstlineno}" + (": several lambdas on that line compile to its code"
                                        if found else ""), code.co_filename,
            code.co_firstlineno, hint="define the function with 'def' in a file")
    lam = next(iter(found.values()))
    node = gast.FunctionDef(name="lambda_fn", args=lam.args, body=[gast.copy_location(
        gast.Return(value=lam.body), lam)], decorator_list=[], returns=None, type_comment=None,
        type_params=[])
    return gast.copy_location(node, lam)


def _lambda_code(lam: gast.Lambda, free: set):
    """The fingerprint of the code a lambda's source compiles to (None: it does not compile
    on its own)."""
    tree = gast.gast_to_ast(gast.Expression(body=lam))
    try:
        consts = compile(tree, "<lambda check>", "eval").co_consts
    except (SyntaxError, ValueError, TypeError):
        return None
    return next((_fingerprint(c, free) for c in consts if hasattr(c, "co_code")), None)


def _same_code(fn, source: str) -> bool:
    """Whether ``source`` compiles to what ``fn`` runs: the same operations on the same
    constants and names (closure variables compile as globals on their own, so free and global
    names are pooled). Code whose asserts pytest rewrote is compared with the source rewritten
    the same way, so that only an edited file tells them apart."""
    owner = fn.__qualname__.rsplit(".", 2)[-2] if "." in fn.__qualname__ else "<locals>"
    if owner != "<locals>":  # a method: compiled in its class (super(), private names)
        source = f"class {owner}:\n" + textwrap.indent(source, "    ")
    try:
        tree = ast.parse(source)
        if _rewritten_by_pytest(fn.__code__):
            tree = _rewrite_asserts(tree, source)
            if tree is None:
                return True  # (pytest is not importable here: nothing to compare with)
        module = compile(tree, "<source check>", "exec", dont_inherit=True)
    except SyntaxError:
        return True  # gast parsed it: leave the judgement to the passes
    consts = module.co_consts
    if owner != "<locals>":
        consts = next((c.co_consts for c in consts if hasattr(c, "co_code")), ())
    found = [c for c in consts if hasattr(c, "co_code") and c.co_name == fn.__name__]
    free = set(fn.__code__.co_freevars)
    return not found or _fingerprint(found[0], free) == _fingerprint(fn.__code__, free)


def _rewritten_by_pytest(code) -> bool:
    return any(n.startswith("@py") for n in code.co_varnames + code.co_names) or any(
        _rewritten_by_pytest(c) for c in code.co_consts if hasattr(c, "co_code"))


def _rewrite_asserts(tree, source: str):
    """``tree`` with its asserts rewritten as pytest rewrites a test module's (None: no
    pytest)."""
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
    except ImportError:
        return None
    rewrite_asserts(tree, source.encode())
    return tree


# operations that differ between the function compiled in its module and on its own
_SETUP = frozenset({"COPY_FREE_VARS", "MAKE_CELL", "PUSH_NULL", "NOP", "CACHE", "EXTENDED_ARG",
                    "RESUME"})
_FREE_LOADS = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF",
                         "LOAD_NAME"})
_JUMPS = frozenset(dis.hasjrel + dis.hasjabs)
# a method call on a module the file imports compiles as an attribute load and a plain call
_SPELLINGS = {"LOAD_METHOD": "LOAD_ATTR", "CALL_METHOD": "CALL_FUNCTION"} | dict.fromkeys(
    _FREE_LOADS, "LOAD_GLOBAL")


def _operations(code) -> tuple:
    """What ``code`` does, operation by operation: each opcode with its constant or name
    (jump targets, which move with the setup operations, and line numbers are left out)."""
    ops, closure, cells = [], False, set(code.co_freevars) | set(code.co_cellvars)
    nested = {c.co_name for c in code.co_consts if hasattr(c, "co_code")}
    for op in dis.get_instructions(code):
        # a function defined inside that closes over a variable of the enclosing scope gets
        # its cells (LOAD_CLOSURE ..., BUILD_TUPLE; 3.13's dis shows LOAD_FAST); compiled on its
        # own, it reads a global
        loads_cell = op.opname == "LOAD_CLOSURE" or (op.opname == "LOAD_FAST"
                                                     and op.argval in cells)
        if op.opname in _SETUP or loads_cell or (op.opname == "BUILD_TUPLE" and closure) or (
                op.opname == "SET_FUNCTION_ATTRIBUTE" and op.argval == 8):
            closure = loads_cell or (closure and op.opname in _SETUP)
            continue
        closure = False
        name = _SPELLINGS.get(op.opname, op.opname)
        value = None if op.opcode in _JUMPS or hasattr(op.argval, "co_code") \
            or name == "MAKE_FUNCTION" or _qualname(op.argval, nested) else op.argval
        ops.append((name, repr(value)))
    return tuple(ops)


def _fingerprint(code, free: set) -> tuple:
    nested = {c.co_name for c in code.co_consts if hasattr(c, "co_code")}
    consts = tuple(_fingerprint(c, free) if hasattr(c, "co_code") else (type(c).__name__, repr(c))
                   for c in code.co_consts if not _qualname(c, nested))
    return consts, tuple(sorted(code.co_varnames)), \
        tuple(sorted((set(code.co_names) | set(code.co_freevars)) - free)), _operations(code)


def _qualname(const, nested: set) -> bool:
    """Python 3.10 keeps a nested function's qualified name among the constants (3.11 moved it
    into the code object); it depends on where the source was compiled, so it is not compared."""
    return isinstance(const, str) and const.rsplit(".", 1)[-1] in nested and (
        "<locals>" in const or const in nested)
