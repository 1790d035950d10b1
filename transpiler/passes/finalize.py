"""Give the generated function its name and the user's parameters, minus defaults.

Defaults and annotations are dropped from the AST: the loader copies the user's default values
onto the compiled function, so they are evaluated once, in the user's module, as Python does.
"""

from __future__ import annotations

import gast


def finalize(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    fn.name = f"{ctx.mode}_{fn.name}"
    fn.args.defaults = []
    fn.args.kw_defaults = [None] * len(fn.args.kwonlyargs)
    for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs:
        a.annotation = None
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            extra.annotation = None
    fn.returns = None
    fn.decorator_list = []
    return fn
