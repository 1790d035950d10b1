"""Write a compiled gradient as a standalone Python module (``python -m transpiler export``).

The module holds the generated source of the gradient and of every helper it calls through a
forward/backward pair, and imports what that source refers to: NumPy, ``runtime`` (as ``rt``),
the other modules the rules use, and, by name from the user's module, the globals the code reads
(module data, functions called without being differentiated). It never imports ``transpiler``.
What the code refers to that cannot be imported by name (a value the function closes over, a
function defined inside another one) is refused with :class:`ExportError`.

Names are kept as the generated code spells them; when two pieces of code use one name for
different objects (two helpers each binding ``helper_vjp`` to another pair) the later one is
renamed (``helper_vjp_2``). The output depends only on the function, its variant and the
header text: the same input gives the same bytes.
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import linecache
import re
import symtable
import sys
import textwrap
import tokenize
import types

from transpiler.calls import SplitFunction, TangentFunction
from transpiler.emit import safe_text


class ExportError(Exception):
    """Something the gradient refers to cannot be written into a standalone module."""


def export_module(compiled, header: str, backend: str = "python") -> str:
    """The text of a standalone module defining ``compiled.function`` (a Compiled of grad or
    value_and_grad), with ``header`` (comment lines) on top. ``backend="numba"`` (a variant
    compiled with that backend): every function is compiled with ``numba.njit(cache=True)``."""
    exporter = _Exporter(backend == "numba", compiled.callees)
    return exporter.run(_python(compiled.function), compiled.source, compiled.written, header)


def _python(function):
    """The Python function behind a generated one (the Numba backend wraps it)."""
    return getattr(function, "python", function)


class _Unit:
    """One piece of generated source: the gradient, or a helper's forward/backward pair (or its
    forward-mode function)."""

    def __init__(self, functions: list, source: str,
                 pair: SplitFunction | TangentFunction | None = None):
        self.functions, self.source, self.pair = functions, source, pair
        self.renames: dict[str, str] = {}


class _Exporter:
    def __init__(self, native: bool = False, callees: tuple = ()):
        self.names: dict[tuple, str] = {}  # what a top-level name stands for -> the name
        self.taken: set[str] = set()
        self.units: list[_Unit] = []
        self.pairs: dict[int, tuple[_Unit, str]] = {}  # id(pair) -> (its unit, class name)
        self.native = native  # Numba: functions compiled with numba.njit(cache=True)
        # the Numba backend calls a callee's compiled function by a name of its own: the
        # compiled function -> (its pair, the function)
        self.compiled: dict[int, tuple] = {}
        todo, seen = list(callees), set()
        while todo:
            pair = todo.pop()
            if id(pair) in seen:
                continue
            seen.add(id(pair))
            for part in ("forward", "backward", "call"):
                function = getattr(pair, part, None)
                if hasattr(function, "native"):
                    self.compiled[id(function.native)] = (pair, function.python)
            todo.extend(pair.callees)

    def run(self, function, source: str, written: frozenset, header: str) -> str:
        main = _Unit([function], source)
        self.units.append(main)
        self.claim(("def", function.__name__), function.__name__)
        i = 0
        while i < len(self.units):  # units found while resolving names are appended
            self.resolve(self.units[i])
            i += 1
        return self.assemble(main, written, header)

    # --- names ---

    def claim(self, what: tuple, preferred: str) -> str:
        """The top-level name standing for ``what``: ``preferred`` unless it already stands
        for something else."""
        if what in self.names:
            return self.names[what]
        name, k = preferred, 1
        while name in self.taken or keyword.iskeyword(name):
            k += 1
            name = f"{preferred}_{k}"
        self.names[what] = name
        self.taken.add(name)
        return name

    def resolve(self, unit: _Unit) -> None:
        """Decide the top-level name of everything ``unit``'s source refers to."""
        cells: dict = {}
        for function in unit.functions:
            for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (),
                                  strict=True):
                cells[name] = cell.cell_contents
        module_globals = unit.functions[0].__globals__
        if unit.pair is not None:  # its own functions first: the class body refers to them
            for function in unit.functions:
                self.rename(unit, function.__name__,
                            self.claim(("def", id(function)), function.__name__))
        free, local = _names(unit.source)
        for name in sorted(free):
            if name in cells:
                what = self.what(cells[name], name, module_globals, closure=True)
            elif name in module_globals:
                what = self.what(module_globals[name], name, module_globals, closure=False)
            elif hasattr(builtins, name):
                what = ("builtin", name)
            else:
                raise ExportError(f"the gradient reads the global '{name}', which "
                                  f"{module_globals.get('__name__')} does not define")
            if what[0] == "compiled":  # (Numba) a callee's function, by its own name
                pair, function = self.compiled[what[1]]
                self.pair_name(pair, name.rsplit("_", 1)[0])  # (helper_vjp_forward: helper_vjp)
                self.rename(unit, name, self.claim(("def", id(function)), function.__name__))
            elif what[0] == "pair":
                self.rename(unit, name, self.pair_name(cells[name], name))
            elif what[0] == "lifted":
                self.rename(unit, name, self.lifted_name(cells[name], name))
            else:
                self.rename(unit, name, self.claim(what, name))
        clash = sorted(local & set(unit.renames.values()))
        if clash:  # a local variable spelled like a renamed global: give up rather than guess
            raise ExportError(f"the name {clash[0]} would mean two things in "
                              f"{unit.functions[0].__name__}")

    def rename(self, unit: _Unit, old: str, new: str) -> None:
        if old != new:
            unit.renames[old] = new

    def pair_name(self, pair: SplitFunction | TangentFunction, preferred: str) -> str:
        if id(pair) not in self.pairs:
            name = self.claim(("pair", id(pair)), preferred)
            functions = [_python(pair.call)] if isinstance(pair, TangentFunction) else [
                _python(pair.forward), _python(pair.backward)]
            unit = _Unit(functions, pair.source, pair)
            self.pairs[id(pair)] = (unit, name)
            self.units.append(unit)
        return self.pairs[id(pair)][1]

    def lifted_name(self, function, preferred: str) -> str:
        """A function defined inside the differentiated one, called on values that are not
        differentiated: its source (as the compiler lifted it) goes into the module."""
        what = ("def", id(function))
        if what not in self.names:
            name = self.claim(what, preferred)
            source = "".join(linecache.getlines(function.__code__.co_filename)).strip("\n")
            unit = _Unit([function], source)
            self.rename(unit, function.__name__, name)
            self.units.append(unit)
        return self.names[what]

    def what(self, value, name: str, module_globals: dict, closure: bool) -> tuple:
        """What the generated code's ``name`` stands for, as something an import can give."""
        if id(value) in self.compiled:
            return ("compiled", id(value))
        if isinstance(value, (SplitFunction, TangentFunction)):
            if getattr(value, "forward", None) is None and getattr(value, "call", None) is None:
                raise ExportError(f"'{name}' is still being compiled")
            return ("pair", id(value))
        if isinstance(value, types.ModuleType):
            return ("module", _importable_module(value.__name__, name))
        if getattr(builtins, getattr(value, "__name__", ""), None) is value \
                and getattr(value, "__module__", "builtins") == "builtins":
            return ("builtin", value.__name__)
        found = _importable(value)
        if found is not None:
            return ("from", *found)
        if isinstance(value, types.FunctionType) and linecache.getlines(
                value.__code__.co_filename) and _LIFTED.fullmatch(value.__code__.co_filename):
            return ("lifted", id(value))
        if not closure or module_globals.get(name, _MISSING) is value:  # the module's global
            module = _importable_module(module_globals.get("__name__", "__main__"), name)
            return ("from", module, name)
        where = getattr(value, "__qualname__", None) or f"{type(value).__name__} {value!r:.40}"
        raise ExportError(
            f"the gradient refers to '{name}' ({where}), a value the function closes over or a "
            "function defined inside another one: a standalone module cannot import it. Make it "
            "a module-level global (or a parameter) of your module")

    # --- output ---

    def assemble(self, main: _Unit, written: frozenset, header: str) -> str:
        imports, aliases, froms = [], [], {}
        for what, name in sorted(self.names.items(), key=lambda item: item[1]):
            if what[0] == "module":
                imports.append(f"import {what[1]}" if name == what[1]
                               else f"import {what[1]} as {name}")
            elif what[0] == "builtin" and name != what[1]:
                aliases.append(f"{name} = builtins.{what[1]}")
            elif what[0] == "from":
                froms.setdefault(what[1], []).append(
                    what[2] if name == what[2] else f"{what[2]} as {name}")
        if aliases:
            imports.append("import builtins")
        if self.native:
            imports += ["import numba", "import runtime.native  # the runtime's helpers in Numba"]
        out = [header.rstrip("\n"), ""]
        out += sorted(imports, key=lambda line: line.split()[1])
        runtime = next((name for what, name in self.names.items()
                        if what == ("module", "runtime")), None)
        if runtime is not None:
            out += [f'if not hasattr({runtime}, "unbroadcast"):  # a runtime.py found first',
                    f'    raise ImportError(f"runtime is {{{runtime}.__file__}}, not the '
                    'transpiler\'s: rename that file")']
        if froms:
            out.append("# what the code reads from your modules, imported once (a global "
                       "rebound there later is not seen here)")
        for module in sorted(froms):
            out.append(f"from {module} import {', '.join(sorted(froms[module]))}")
        out += aliases
        function = main.functions[0]
        main_name = self.names[("def", function.__name__)]
        out += ["", "", self.code(main, main.source, main.renames)]
        out += self.defaults(main_name, function)
        if written:
            out += [""] + textwrap.wrap(
                f"{main_name} writes into a private copy of {', '.join(sorted(written))}: do "
                "not pass it arrays that share memory with another argument (the transpiler's "
                "wrapper refuses such calls; this module does not check).", 98,
                initial_indent="# ", subsequent_indent="# ")
        for unit in self.units[1:]:
            if unit.pair is None:  # a lifted function
                out += ["", "", self.code(unit, unit.source, unit.renames)]
                out += self.defaults(self.names[("def", id(unit.functions[0]))],
                                     unit.functions[0])
                continue
            _, name = self.pairs[id(unit.pair)]
            if isinstance(unit.pair, TangentFunction):
                call = self.names[("def", id(unit.functions[0]))]
                out += ["", "", self.code(unit, unit.source, unit.renames)]
                out += self.defaults(call, unit.functions[0])
                helper = _docstring_text(f"{unit.functions[0].__globals__.get('__name__')}."
                                         f"{unit.functions[0].__name__.removeprefix('tangent_')}")
                out += ["", "", f"class {name}:",
                        f'    """{helper} in forward mode: call(*args, **tangents) -> (value, '
                        'tangent)."""',
                        "",
                        f"    call = staticmethod({call})"]
                continue
            forward, backward = (self.names[("def", id(f))] for f in unit.functions)
            out += ["", "", self.code(unit, unit.source, unit.renames)]
            out += self.defaults(forward, unit.functions[0])
            helper = _docstring_text(f"{unit.functions[0].__globals__.get('__name__')}."
                                     f"{unit.functions[0].__name__.removesuffix('_forward')}")
            out += ["", "", f"class {name}:",
                    f'    """The forward/backward pair of {helper}: forward(*args) -> (value, '
                    'residuals),',
                    '    backward(residuals, cotangent) -> gradients of its differentiated '
                    'parameters."""',
                    "",
                    f"    forward = staticmethod({forward})",
                    f"    backward = staticmethod({backward})"]
        return "\n".join(out) + "\n"


    def code(self, unit: _Unit, source: str, renames: dict) -> str:
        """A unit's source, renamed; with Numba, each function without default values decorated
        with ``@numba.njit`` (the others are compiled after their defaults are set)."""
        text = _rename(source, renames).rstrip()
        if not self.native:
            return text
        for function in unit.functions:
            if function.__code__.co_kwonlyargcount:
                raise ExportError(f"{function.__name__} has keyword-only parameters, which "
                                  "Numba does not compile (forward mode's tangents are "
                                  "keyword-only): export it with --backend python")
        plain = {self.names[("def", id(f))] if ("def", id(f)) in self.names else f.__name__
                 for f in unit.functions if not f.__defaults__}
        return re.sub(r"^def (\w+)", lambda m: f"{_NJIT}\n{m[0]}" if m[1] in plain else m[0],
                      text, flags=re.M)

    def defaults(self, name: str, function) -> list[str]:
        out = _defaults(name, function)
        if self.native and function.__defaults__:
            out.append(f"{name} = numba.njit({name}, {_NJIT_OPTIONS})")
        return out


_NJIT_OPTIONS = "cache=True, boundscheck=True"
_NJIT = f"@numba.njit({_NJIT_OPTIONS})"
_MISSING = object()
_LIFTED = re.compile(r"<\w+, defined in .*:\d+>")  # passes/lift.py's name for a lifted function


def _names(source: str) -> tuple[set[str], set[str]]:
    """(free, local): the names the functions in ``source`` read but do not define (globals,
    once at top level), and those they define."""
    free: set[str] = set()
    local: set[str] = set()

    def visit(table) -> None:
        if table.get_type() != "module":
            for symbol in table.get_symbols():
                if symbol.is_global() and symbol.is_referenced():
                    free.add(symbol.get_name())
                elif symbol.is_local():
                    local.add(symbol.get_name())
        for child in table.get_children():
            visit(child)

    visit(symtable.symtable(source, "<generated>", "exec"))
    return free, local


def _importable_module(module: str, name: str) -> str:
    if module == "__main__":
        raise ExportError(f"'{name}' belongs to __main__ (a script or an interactive session), "
                          "which another module cannot import: define the function in a file "
                          "and export from that file")
    if module == "transpiler" or module.startswith("transpiler."):
        raise ExportError(f"the gradient refers to '{name}' of {module}, part of the compiler, "
                          "which an exported module must not import")
    return module


def _importable(value) -> tuple[str, str] | None:
    """``(module, name)`` when ``from module import name`` gives ``value`` itself."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "." in qualname:
        return None
    if getattr(sys.modules.get(module), qualname, None) is not value:
        return None
    return _importable_module(module, qualname), qualname


def _docstring_text(text: str) -> str:
    """``text`` (a module's name, which a file name makes) safe inside a docstring."""
    return safe_text(text.replace("\\", "\\\\").replace('"', '\\"'))


def _defaults(name: str, function) -> list[str]:
    """Statements giving the exported ``name`` the default values of ``function``."""
    out = []
    if function.__defaults__:
        out.append(f"{name}.__defaults__ = {_literal(function.__defaults__, name)}")
    if function.__kwdefaults__:
        out.append(f"{name}.__kwdefaults__ = {_literal(function.__kwdefaults__, name)}")
    return [""] + out if out else []


def _literal(value, name: str) -> str:
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value and type(ast.literal_eval(text)) is type(value)
    except (ValueError, SyntaxError, TypeError):
        same = False
    if not same:
        raise ExportError(f"{name} has default values {text:.60} that are not plain literals; "
                          "pass those arguments explicitly (make them parameters without "
                          "defaults) to export it")
    return text


def _rename(source: str, renames: dict[str, str]) -> str:
    """``source`` with the names in ``renames`` replaced where they are names (not attributes,
    keyword arguments, strings or comments); the rest of the text is untouched."""
    if not renames:
        return source
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []
    previous, depth = None, 0
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP:
            depth += tok.string in "([{"
            depth -= tok.string in ")]}"
        if tok.type == tokenize.NAME and tok.string in renames \
                and not (previous is not None and previous.string == ".") \
                and not (depth and i + 1 < len(tokens) and tokens[i + 1].string == "="):
            (row, col), (_, end) = tok.start, tok.end
            edits.append((row, col, end, renames[tok.string]))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                            tokenize.DEDENT):
            previous = tok
    for row, col, end, new in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[end:]
    return "".join(lines)
