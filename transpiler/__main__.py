"""Command line: ``python -m transpiler {show,export,check,memory,coverage}``; ``--help`` on
each.

Exit codes: 0 success; 1 the operation failed (a TranspileError, a gradient that disagrees with
finite differences, a function that raised, something that cannot be exported); 2 a usage error
(argparse's own, a missing file or function, an unknown ``--wrt`` parameter, bad ``--args``).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import io
import keyword
import math
import os
import pathlib
import re
import shlex
import sys
import tokenize

import numpy as np

from transpiler.api import grad, value_and_grad
from transpiler.coverage import BEGIN, END, comparison, markdown
from transpiler.emit import safe_text
from transpiler.errors import TranspileError
from transpiler.gradient import GradientFunction, normalise_wrt
from transpiler.jvp import forward, jvp
from transpiler.version import __version__


class UsageError(Exception):
    """A bad command line: exit code 2."""


class Failure(Exception):
    """The operation failed: exit code 1."""


# --- loading the user's function and reading the options ---------------------------------------

def _load(target: str):
    """``(module, function)`` for ``FILE.py:FUNCTION``; the file's directory goes on sys.path,
    as when it runs as a script, so it can import its neighbours."""
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise UsageError(f"expected FILE.py:FUNCTION, got {target!r}")
    file = pathlib.Path(path)
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(file.stem, file)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    argv, sys.argv = sys.argv, [str(file)]  # (the module sees its own path, not our options)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # the user's module failed (or exited) on import
        sys.modules.pop(file.stem, None)
        raise UsageError(f"cannot import {path}: {type(e).__name__}: {e}") from e
    finally:
        sys.argv = argv
    fn = getattr(module, name, None)
    if not callable(fn):
        functions = sorted(n for n, v in vars(module).items() if inspect.isfunction(v)
                           and v.__module__ == module.__name__)
        raise UsageError(f"{path} defines no function {name!r}"
                         + (f" (functions: {', '.join(functions)})" if functions else ""))
    return module, fn


def _wrt(text: str, fn):
    """``--wrt a,b`` or ``--wrt 0`` as grad's ``wrt`` (a name/position, or a tuple of them)."""
    parts = [p.strip() for p in text.split(",")]
    if not all(parts):
        raise UsageError(f"--wrt {text!r}: expected comma-separated parameter names or positions")
    wrt = tuple(int(p) if p.lstrip("-").isdigit() else p for p in parts)
    wrt = wrt[0] if len(wrt) == 1 else wrt
    try:
        normalise_wrt(fn, wrt)
    except (ValueError, TypeError) as e:
        raise UsageError(f"--wrt: {e}") from e
    return wrt


def _arguments(text: str | None, fn, module) -> tuple | None:
    """``--args EXPR``: evaluated with ``np``, ``math`` and the names of FILE's module; a tuple
    is the argument list, anything else the only argument."""
    if text is None:
        return None
    namespace = {**vars(module), "np": np, "numpy": np, "math": math}
    try:
        value = eval(compile(text, "<--args>", "eval"), namespace)  # the user's own expression
    except Exception as e:
        raise UsageError(f"--args {text!r}: {type(e).__name__}: {e}") from e
    args = value if isinstance(value, tuple) else (value,)
    try:
        inspect.signature(fn).bind(*args)
    except TypeError as e:
        raise UsageError(f"--args {text!r} do not fit {fn.__name__}"
                         f"{inspect.signature(fn)}: {e}") from e
    return args


def _gradient(args) -> tuple:
    """(module, function, gradient function, example arguments or None) for show/export/check;
    in forward mode the "gradient" is the forward-mode function (value and tangent)."""
    module, fn = _load(args.target)
    wrt = _wrt(args.wrt, fn)
    example = _arguments(args.args, fn, module)
    if args.mode == "forward" and getattr(args, "value", False):
        raise UsageError("--value is for reverse mode; forward mode returns the value with "
                         "the tangent already")
    make = forward if args.mode == "forward" else \
        value_and_grad if getattr(args, "value", False) else grad
    try:
        gradient = make(fn, wrt=wrt, backend=getattr(args, "backend", "python"))
    except TranspileError as e:
        raise Failure(str(e)) from e
    return module, fn, gradient, example


def _compiled(gradient: GradientFunction, example: tuple | None):
    """The Compiled variant that ``example`` runs (the general one without arguments)."""
    try:
        return gradient.compiled_for(*(example or ()))  # no arguments: the general variant
    except (TranspileError, ValueError, TypeError) as e:
        raise Failure(str(e)) from e


# --- colour ---------------------------------------------------------------------------------------

_KEYWORD, _COMMENT, _STRING, _NUMBER, _RESET = ("\x1b[1;35m", "\x1b[2;37m", "\x1b[32m",
                                                  "\x1b[36m", "\x1b[0m")


def _use_colour(choice: str, stream) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def highlight(source: str) -> str:
    """``source`` with ANSI colours on keywords, comments, strings and numbers."""
    lines = source.splitlines(keepends=True)
    spans = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.start[0] != tok.end[0]:
                continue
            colour = (_KEYWORD if tok.type == tokenize.NAME and keyword.iskeyword(tok.string)
                      else _COMMENT if tok.type == tokenize.COMMENT
                      else _STRING if tok.type == tokenize.STRING
                      else _NUMBER if tok.type == tokenize.NUMBER else None)
            if colour:
                spans.append((tok.start[0], tok.start[1], tok.end[1], colour))
    except (tokenize.TokenError, SyntaxError):
        return source
    for row, start, end, colour in reversed(spans):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + colour + line[start:end] + _RESET + line[end:]
    return "".join(lines)


# --- commands -------------------------------------------------------------------------------------

def _show(args) -> int:
    _, _, gradient, example = _gradient(args)
    source = _compiled(gradient, example).source
    print(highlight(source) if _use_colour(args.color, sys.stdout) else source)
    return 0


def _export(args) -> int:
    from transpiler.export import ExportError, export_module

    source = pathlib.Path(args.target.rpartition(":")[0])
    if args.output != "-" and not args.force and pathlib.Path(args.output).exists() \
            and source.is_file() and pathlib.Path(args.output).resolve() == source.resolve():
        raise UsageError(f"-o {args.output} is the file the function is read from; writing it "
                         "would destroy the source (choose another name, or add --force)")
    if source.stem == "runtime" or pathlib.Path(args.output).stem == "runtime":
        raise UsageError(f"{'the source' if source.stem == 'runtime' else 'the output'} is named "
                         "runtime.py, which the exported module could not tell from the "
                         "transpiler's `runtime` package it imports: rename it")
    module, fn, gradient, example = _gradient(args)
    compiled = _compiled(gradient, example)
    header = _header(args, fn, compiled, gradient.wrt)
    try:
        text = export_module(compiled, header, args.backend)
    except ExportError as e:
        raise Failure(f"cannot export {fn.__name__}: {e}") from e
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
    except OSError as e:
        raise UsageError(f"cannot write {args.output}: {e.strerror or e}") from e
    params = ", ".join(inspect.signature(fn).parameters)
    print(f"wrote {args.output}: {compiled.function.__name__}({params})")
    return 0


def _header(args, fn, compiled, wrt: tuple[str, ...]) -> str:
    """Comment lines naming what the module was generated from and how to regenerate it."""
    command = ["python", "-m", "transpiler", "export", args.target, "-o", args.output]
    if args.wrt != "0":
        command += ["--wrt", args.wrt]
    if args.mode == "forward":
        command += ["--mode", "forward"]
    if args.value:
        command.append("--value")
    if args.args is not None:
        command += ["--args", args.args]
    if args.backend != "python":
        command += ["--backend", args.backend]
    what = "forward mode (value and tangent)" if args.mode == "forward" else \
        "value and gradient" if args.value else "gradient"
    variant = (f"the variant for arguments like ({args.args})" if args.args is not None
               else "the general variant (arguments of any kind)")
    lines = [
        f"{compiled.function.__name__}: the {what} of {fn.__name__} "
        f"({args.target}, line {fn.__code__.co_firstlineno}) with respect to "
        f"{', '.join(wrt)};",
        f"{variant}.",
        "Generated by the transpiler package; it needs NumPy and the `runtime` package (not",
        "`transpiler`) and, when imported below, the module it was generated from.",
        "Do not edit: after changing the function, regenerate with",
        "    " + shlex.join(command),
    ]  # (what the user typed is text in comments, escaped so that no line can end early)
    return "\n".join("# " + safe_text(line) for line in lines)


def _check(args) -> int:
    from transpiler.checking import get_leaf, leaves, numeric_grad

    _, fn, _, example = _gradient(args)
    names, positions, _ = normalise_wrt(fn, _wrt(args.wrt, fn))
    if -1 in positions:
        raise UsageError("check differentiates positional parameters only (--wrt names a "
                         "keyword-only one)")
    try:
        computed = grad(fn, wrt=positions)(*example) if args.mode == "reverse" else \
            [_forward_gradient(fn, example, p) for p in positions]
        expected = [numeric_grad(fn, example, p) for p in positions]
    except TranspileError as e:
        raise Failure(str(e)) from e
    except Exception as e:
        notes = "".join(f"\n{n}" for n in getattr(e, "__notes__", ()))
        raise Failure(f"{fn.__name__} raised {type(e).__name__}: {e}{notes}") from e
    worst = None  # the first entry outside the tolerance, as check_grad words it
    for name, pos, got, want in zip(names, positions, computed, expected, strict=True):
        for path, leaf in leaves(want):
            label = name + "".join(f"[{k!r}]" for k in path)
            mine = get_leaf(got, path)
            if np.shape(mine) != np.shape(get_leaf(example[pos], path)):
                worst = worst or (f"the gradient for {label} has shape {np.shape(mine)}, "
                                  f"expected {np.shape(get_leaf(example[pos], path))}")
                continue
            mine, leaf = np.asarray(mine, dtype=float), np.asarray(leaf, dtype=float)
            err = np.abs(mine - leaf)
            scale = np.maximum(np.abs(leaf), np.abs(mine))
            with np.errstate(all="ignore"):
                rel = np.where(err == 0, 0.0, err / scale)  # NaN stays NaN
            print(f"{label}: shape {np.shape(leaf)}, max abs error "
                  f"{np.max(err, initial=0.0):.3g}, max rel error {np.max(rel, initial=0.0):.3g}")
            excess = err - (args.atol + args.rtol * np.abs(leaf))
            if worst is None and np.any(~(excess <= 0)):  # NaN counts as a mismatch
                at = np.unravel_index(np.nanargmax(np.where(np.isnan(excess), np.inf, excess)),
                                      np.shape(err)) if np.ndim(err) else ()
                index = f"[{', '.join(str(int(i)) for i in at)}]" if at else ""
                worst = (f"{label}{index}: compiled {float(mine[at]):.10g}, finite "
                         f"differences {float(leaf[at]):.10g} (|diff| {float(err[at]):.3g} > "
                         f"{args.atol + args.rtol * abs(float(leaf[at])):.3g})")
    if worst:
        print(f"MISMATCH: {worst} (rtol={args.rtol:g}, atol={args.atol:g})")
        return 1
    print(f"ok: the gradient agrees with central finite differences (rtol={args.rtol:g}, "
          f"atol={args.atol:g})")
    return 0


def _memory(args) -> int:
    if args.mode == "forward":
        raise UsageError("memory reports what reverse mode stores; forward mode stores nothing")
    module, fn = _load(args.target)
    example = _arguments(args.args, fn, module)
    try:
        gradient = grad(fn, wrt=_wrt(args.wrt, fn), checkpoint=not args.no_checkpoint)
        print(gradient.memory(*example))
    except TranspileError as e:
        raise Failure(str(e)) from e
    except Exception as e:
        raise Failure(f"{fn.__name__} raised {type(e).__name__}: {e}") from e
    return 0


def _forward_gradient(fn, example: tuple, position: int):
    """The gradient for argument ``position`` by forward mode: one tangent per element."""
    x = example[position]
    if not isinstance(x, (float, int, np.ndarray)):
        raise UsageError("check --mode forward takes float and array arguments only")
    tangents = [None] * len(example)
    entries = []
    for i in range(np.size(x)):
        unit = np.zeros(np.shape(x))
        unit.flat[i] = 1.0
        tangents[position] = unit if isinstance(x, np.ndarray) else 1.0
        entries.append(float(jvp(fn, example, tangents)[1]))
    return np.reshape(entries, np.shape(x)) if isinstance(x, np.ndarray) else entries[0]


def _coverage(args) -> int:
    if args.compare:
        print(comparison())
    elif args.update:
        path = pathlib.Path(args.update)
        if not path.is_file():
            raise UsageError(f"no such file: {args.update}")
        text = path.read_text()
        if BEGIN not in text or END not in text:
            raise UsageError(f"{args.update} has no {BEGIN} ... {END} section")
        start, end = text.index(BEGIN), text.index(END) + len(END)
        section = markdown()
        print(_changes(args.update, text[start:end], section))
        if section != text[start:end]:
            path.write_text(text[:start] + section + text[end:])
    else:
        print(markdown())
    return 0


def _changes(where: str, old: str, new: str) -> str:
    """What ``coverage --update`` changed: the names added to and removed from the section."""
    if old == new:
        return f"{where}: the coverage section is up to date"
    before, after = (set(re.findall(r"`([^`]+)`", text)) for text in (old, new))
    added, removed = sorted(after - before), sorted(before - after)
    parts = [f"{where}: the coverage section updated"]
    for sign, names in (("+", added), ("-", removed)):
        if names:
            shown = ", ".join(names[:20]) + (f", ... ({len(names) - 20} more)"
                                             if len(names) > 20 else "")
            parts.append(f"{sign}{len(names)}: {shown}")
    if not added and not removed:
        parts.append("(the same names, rearranged)")
    return "\n".join(parts)


# --- the parser -----------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m transpiler",
        description="Gradients (reverse mode) and tangents (forward mode) of Python/NumPy "
                    "functions, as readable source.",
        epilog="exit codes: 0 success, 1 the operation failed (cannot differentiate, gradient "
               "mismatch, cannot export), 2 usage error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def target(sub, args_help: str, required: bool = False) -> None:
        sub.add_argument("target", metavar="FILE.py:FUNCTION",
                         help="the function to differentiate, in a Python file")
        sub.add_argument("--wrt", default="0", metavar="A,B",
                         help="comma-separated parameter names or positions (default: 0)")
        sub.add_argument("--mode", choices=("reverse", "forward"), default="reverse",
                         help="reverse: the gradient (grad_FUNCTION); forward: value and "
                              "tangent (jvp_FUNCTION, tangents as keyword arguments dx, ...)")
        sub.add_argument("--args", metavar="EXPR", help=args_help, required=required)

    args_help = ("example arguments, a Python expression evaluated with np, math and the "
                 "file's own names, e.g. \"np.ones(3), 0.5\": {}")
    show = commands.add_parser(
        "show", help="print the generated gradient source of a function",
        description="Print the generated source of the gradient of FUNCTION.",
        epilog="example: python -m transpiler show model.py:loss --wrt w,b "
               "--args \"np.ones(3), 0.5\"")
    target(show, args_help.format("show the variant these arguments run (default: the "
                                  "general variant)"))
    show.add_argument("--value", action="store_true", help="value_and_grad instead of grad")
    show.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto",
                      help="colour the source (auto: when stdout is a terminal and NO_COLOR is "
                           "not set)")
    show.set_defaults(run=_show)

    export = commands.add_parser(
        "export", help="write the gradient as a standalone module (NumPy + runtime only)",
        description="Write a deterministic, standalone Python module defining the gradient "
                    "of FUNCTION (grad_FUNCTION), which imports NumPy and `runtime`, never "
                    "`transpiler`.",
        epilog="example: python -m transpiler export model.py:loss -o loss_grad.py --wrt w")
    target(export, args_help.format("export the variant these arguments run (default: the "
                                    "general variant)"))
    export.add_argument("-o", "--output", required=True, metavar="OUT.py",
                        help="the file to write ('-' for stdout)")
    export.add_argument("--value", action="store_true", help="value_and_grad instead of grad")
    export.add_argument("--force", action="store_true",
                        help="write OUT.py even when it is the file FUNCTION is read from")
    export.add_argument("--backend", choices=("python", "numba"), default="python",
                        help="numba: the module's functions are compiled with "
                             "@numba.njit(cache=True) (the module then imports numba)")
    export.set_defaults(run=_export)

    check = commands.add_parser(
        "check", help="compare the gradient with central finite differences",
        description="Run FUNCTION's gradient on --args and compare it with central finite "
                    "differences (as check_grad does); exit 0 when they agree, 1 when not.",
        epilog="example: python -m transpiler check model.py:loss --args \"np.ones(3), 0.5\"")
    target(check, args_help.format("the point to check at (required)"), required=True)
    check.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance (1e-5)")
    check.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance (1e-6)")
    check.set_defaults(run=_check)

    memory = commands.add_parser(
        "memory", help="print what the gradient stores for its reverse sweep, by source line",
        description="Run FUNCTION's gradient on --args once and print, for each line of "
                    "FUNCTION that stores values for the reverse sweep (a loop's tape, a "
                    "checkpointed loop's snapshots), the bytes per iteration, the iterations "
                    "and the total.",
        epilog="example: python -m transpiler memory sim.py:loss --args \"np.ones(1000), 0.1\"")
    target(memory, args_help.format("the call to measure (required)"), required=True)
    memory.add_argument("--no-checkpoint", action="store_true",
                        help="tape loops marked checkpoint(...) whole, as if unmarked")
    memory.set_defaults(run=_memory)

    coverage = commands.add_parser(
        "coverage", help="print the functions with rules (markdown)",
        description="Print the functions and operators that have rules, as markdown.")
    coverage.add_argument("--update", metavar="FILE", help="rewrite the coverage section of FILE")
    coverage.add_argument("--compare", action="store_true",
                          help="count NumPy/SciPy/math functions with rules, beside autograd's")
    coverage.set_defaults(run=_coverage)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # argparse exits with 2 on its own usage errors
    try:
        return args.run(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Failure as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # stdout closed early (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
