"""Tiny node builders (always by keyword, as gast 0.7 requires) and statement helpers."""

from __future__ import annotations

import gast

from transpiler.anno import Anno, getanno, hasanno, setanno


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


def own_nodes(stmts: list):
    """The nodes of ``stmts``, those of functions defined inside left out."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            stack.extend(gast.iter_child_nodes(node))


def walk(node):
    """Every node under ``node`` (itself included), depth first, as a list (faster to build
    than to yield one by one, and than ``ast.walk``). Expression contexts (``Load``/``Store``
    markers) and operators (``BinOp.op``, ``Compare.ops``: read them from their node) are not
    visited."""
    out: list = []
    stack = [node]
    pop, push, keep, AST = stack.pop, stack.append, out.append, gast.AST
    while stack:
        n = pop()
        keep(n)
        fields = _CHILDREN.get(type(n))
        if fields is None:
            fields = _CHILDREN[type(n)] = _children_fields(type(n))
        for field in fields:
            value = getattr(n, field, None)
            if type(value) is list:
                for v in reversed(value):
                    if isinstance(v, AST):
                        push(v)
            elif isinstance(value, AST):
                push(value)
    return out


# node class -> the fields that may hold nodes (not names, operators' markers or constants)
_CHILDREN: dict[type, tuple[str, ...]] = {}
_NOT_NODES = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "type_comment", "kind",
                        "is_async", "level", "module", "conversion", "simple"})


def _children_fields(cls) -> tuple[str, ...]:
    if cls is gast.Constant:
        return ()
    return tuple(f for f in cls._fields if f not in _NOT_NODES)


def is_atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))


def copy_node(node):
    """A deep copy of a gast tree (several times faster than copy.deepcopy), annotations kept."""
    if isinstance(node, list):
        return [copy_node(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = type(node).__new__(type(node))
    for field in node._fields:
        setattr(new, field, copy_node(getattr(node, field, None)))
    for attribute in node._attributes:
        if hasattr(node, attribute):
            setattr(new, attribute, getattr(node, attribute))
    if "_anno" in node.__dict__:
        new._anno = dict(node._anno)
    return new


def load_names(node) -> list[str]:
    return [n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]


def target_name(stmt) -> str | None:
    """The single Name that ``stmt`` assigns, or None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        t = stmt.targets[0]
        if isinstance(t, gast.Name):
            return t.id
    return None


def builtin(name_: str) -> gast.Name:
    """A Name for a builtin the compiler itself calls (``len``, ``range``): finalize binds it to
    the real builtin, whatever the user's function calls ``len``."""
    node = name(name_)
    setanno(node, Anno.BUILTIN)
    return node


def is_range(node) -> bool:
    """Whether ``node`` calls Python's ``range`` (the user's own ``range`` is another call)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "range" and (hasanno(node.func, Anno.BUILTIN)
                                         or getanno(node, Anno.FUNC) is range)


def index_expression(node):
    """An index as an ordinary expression: ``1:-1`` -> ``slice(1, -1, None)`` (also in tuples)."""
    if isinstance(node, gast.Slice):
        parts = [copy_node(p) if p is not None else const(None)
                 for p in (node.lower, node.upper, node.step)]
        return gast.copy_location(call(builtin("slice"), *parts), node)
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[index_expression(e) for e in node.elts], ctx=gast.Load())
    return node


def index_syntax(node):
    """The inverse of ``index_expression``: ``slice(1, -1, None)`` -> ``1:-1`` (in tuples too)."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == "slice" and len(node.args) == 3 and not node.keywords:
        lower, upper, step = (None if isinstance(a, gast.Constant) and a.value is None
                              else copy_node(a) for a in node.args)
        return gast.Slice(lower=lower, upper=upper, step=step)
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[index_syntax(e) for e in node.elts], ctx=gast.Load())
    return copy_node(node)


def stored_names_of(stmt) -> set[str]:
    """Names a simple statement assigns (not looking inside compound statements' bodies)."""
    if isinstance(stmt, gast.Assign):
        return {n.id for t in stmt.targets for n in walk(t) if isinstance(n, gast.Name)}
    if isinstance(stmt, gast.For):
        return {stmt.target.id} if isinstance(stmt.target, gast.Name) else set()
    return set()


def assigned_always(stmts: list) -> set[str]:
    """The names the assignments of ``stmts`` bind on every path through it: those at its
    top level and in the ``with`` blocks there (rebuilt, or as passes/contexts.py's regions),
    which always run."""
    out: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, gast.Assign):
            out |= {n.id for t in stmt.targets for n in walk(t) if isinstance(n, gast.Name)}
        elif isinstance(stmt, gast.With) or isinstance(stmt, gast.If) and hasanno(stmt, Anno.WITH):
            out |= assigned_always(stmt.body)
    return out
