"""Refuse, with a message that says what to rename, a module named ``runtime`` that would take
the place of the transpiler's own ``runtime`` package (a user's ``runtime.py`` next to the
script, which Python finds first): the generated code imports ``runtime``."""

from __future__ import annotations

import importlib.util
import pathlib
import sys


def runtime_shadowed_by() -> str | None:
    """Where the ``runtime`` Python would import comes from, if it is not the package installed
    beside ``transpiler``; None when it is ours."""
    spec = importlib.util.find_spec("runtime")
    origin = getattr(spec, "origin", None)
    ours = pathlib.Path(__file__).resolve().parent.parent
    if origin is not None and pathlib.Path(origin).resolve().parent.parent == ours:
        return None
    return origin or "a module named runtime without a file"


_shadow = runtime_shadowed_by()
if _shadow is not None:
    _message = (f"the transpiler's `runtime` package is shadowed by {_shadow}: a file or folder "
                "named runtime next to your script (or earlier on sys.path) takes its place; "
                "rename it")
    if "transpiler" in sys.orig_argv[2:3] and "-m" in sys.orig_argv[1:2]:  # the command line
        print(f"error: {_message}", file=sys.stderr)
        raise SystemExit(2)
    raise ImportError(_message)
