"""Command line: ``python -m transpiler show FILE.py:FUNC [--wrt a,b]`` and ``coverage``."""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys

from transpiler.api import grad, value_and_grad
from transpiler.coverage import BEGIN, END, comparison, markdown
from transpiler.errors import TranspileError


def _load(target: str):
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"error: expected FILE.py:FUNCTION, got {target!r}")
    file = pathlib.Path(path)
    if not file.is_file():
        raise SystemExit(f"error: no such file: {path}")
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    spec.loader.exec_module(module)
    if not callable(getattr(module, name, None)):
        raise SystemExit(f"error: {path} defines no function {name!r}")
    return getattr(module, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m transpiler")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print the generated gradient source of a function")
    show.add_argument("target", help="FILE.py:FUNCTION")
    show.add_argument("--wrt", default="0", help="comma-separated parameter names or positions")
    show.add_argument("--value", action="store_true", help="show value_and_grad instead of grad")
    coverage = commands.add_parser("coverage", help="print the functions with rules (markdown)")
    coverage.add_argument("--update", metavar="FILE", help="rewrite the coverage section of FILE")
    coverage.add_argument("--compare", action="store_true",
                          help="count NumPy/SciPy/math functions with rules, beside autograd's")
    args = parser.parse_args(argv)
    if args.command == "coverage":
        if args.compare:
            print(comparison())
        elif args.update:
            path = pathlib.Path(args.update)
            text = path.read_text()
            start, end = text.index(BEGIN), text.index(END) + len(END)
            path.write_text(text[:start] + markdown() + text[end:])
        else:
            print(markdown())
        return 0
    fn = _load(args.target)
    wrt = tuple(int(w) if w.isdigit() else w for w in args.wrt.split(","))
    make = value_and_grad if args.value else grad
    try:
        print(make(fn, wrt=wrt[0] if len(wrt) == 1 else wrt).source)
    except (TranspileError, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
