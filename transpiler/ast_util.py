"""Tiny node builders (always by keyword, as gast 0.7 requires) and statement helpers."""

from __future__ import annotations

import copy

import gast

from transpiler.anno import Anno, setanno


def name(id_: str, store: bool = False) -> gast.Name:
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=id_, ctx=ctx, annotation=None, type_comment=None)


def const(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def assign(target: str, value, like=None) -> gast.Assign:
    node = gast.Assign(targets=[name(target, store=True)], value=value, type_comment=None)
    return gast.copy_location(node, like) if like is not None else node


def call(func, *args, keywords=()) -> gast.Call:
    return gast.Call(func=func, args=list(args), keywords=list(keywords))


def attr(value, attr_: str) -> gast.Attribute:
    return gast.Attribute(value=value, attr=attr_, ctx=gast.Load())


def dotted(path: str):
    """``"rt.unbroadcast"`` -> Attribute(Name('rt'), 'unbroadcast')."""
    head, *rest = path.split(".")
    node = name(head)
    for part in rest:
        node = attr(node, part)
    return node


def comment(text: str) -> gast.Expr:
    node = gast.Expr(value=const(text))
    setanno(node, Anno.COMMENT, text)
    return node


def is_atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))


def copy_node(node):
    return copy.deepcopy(node)


def load_names(node) -> list[str]:
    return [n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


def target_name(stmt) -> str | None:
    """The single Name that ``stmt`` assigns, or None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        t = stmt.targets[0]
        if isinstance(t, gast.Name):
            return t.id
    return None
