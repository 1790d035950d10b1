"""The analyses of the SSA form, computed once and handed to the mode's pass as frozen data.

After ``ssa`` and ``hoist`` the tree no longer changes until the reverse or forward pass
rewrites it in place, so what is known of its values is computed here, once, and read by every
later pass (``ctx.facts``) instead of being recomputed or set piecemeal on the context:

- ``versions``: each SSA name -> the user's variable it is a version of (``ssa``);
- ``scalars``: every value known to be 0-d, a number (``analysis.scalars``), and ``ranks``:
  those known to be NumPy arrays of one number of dimensions (an element ``x[i]`` of a 1-D
  array is a scalar), and ``matrices``: those known to be 2-D scipy.sparse matrices;
- ``receivers``: which expressions may evaluate to objects (``analysis.receivers``), solved
  before the mode's pass adds statements whose names are not yet defined;
- ``shapes``: the symbolic shape of each value (``analysis.shapes``), which the lowering uses to
  drop ``rt.unbroadcast`` and the tape planner and ``release`` use to skip shape-only entries;
- ``complex``: the values that may be complex, recorded by ``check_kinds`` (which finds them for
  its refusals): the lowering picks their rules (rules/complex_rules.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import gast
import numpy as np

from transpiler.analysis.receivers import Receivers
from transpiler.analysis.scalars import known_ranks
from transpiler.analysis.shapes import ShapeKeys
from transpiler.anno import Anno, getanno
from transpiler.passes.tape import is_generated


@dataclass(frozen=True)
class Facts:
    versions: Mapping[str, str]
    scalars: frozenset[str]
    ranks: Mapping[str, int]  # names certainly NumPy arrays of that many dimensions
    receivers: Receivers
    shapes: ShapeKeys
    complex: frozenset[str] = frozenset()  # names that may hold complex values
    sparse: frozenset[str] = frozenset()  # names that may hold scipy.sparse matrices
    matrices: frozenset[str] = frozenset()  # names certainly 2-D scipy.sparse matrices

    def variable(self, name: str) -> str:
        """The user's variable an SSA name is a version of (itself if not a version)."""
        return self.versions.get(name, name)


NONE = Facts(MappingProxyType({}), frozenset(), MappingProxyType({}), None, None)  # (not yet run)


def analyse(fn: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Compute the facts of ``fn``'s SSA form (``ctx.facts``); the tree is left as it is."""
    primal = fn.body[:-1] if fn.body and isinstance(fn.body[-1], gast.Return) else fn.body
    numeric = {**_global_ranks(primal, ctx),
               **{p: ndim for p, (ndim, dtype) in ctx.arrays.items() if dtype[1] in "biuf"}}
    scalars, ranks, matrices = known_ranks(primal, ctx.scalars, numeric)
    scalars = frozenset(scalars)
    spelled = getattr(ctx, "spelled", {})  # (a comprehension's variable, renamed)
    versions = {k: spelled.get(v, v) for k, v in getanno(fn, Anno.VERSIONS, {}).items()}
    versions.update({k: v for k, v in spelled.items() if k not in versions})
    ctx.facts = Facts(versions=MappingProxyType(versions),
                      scalars=scalars, ranks=MappingProxyType(ranks),
                      matrices=frozenset(matrices),
                      receivers=Receivers(fn, ctx).solved(),
                      shapes=ShapeKeys(list(primal), scalars, ctx.arrays, ctx.namer, ranks))
    return fn


def _global_ranks(primal: list, ctx) -> dict[str, int]:
    """The ranks of the module's numbers and NumPy arrays the function reads (``_g =
    np.array([...])``, ``dt = 0.01``): 0 for a number, ``ndim`` for an array. Each is a snapshot
    (``ctx.snapshots``): rebinding the global compiles the gradient again (an array changed in
    place keeps its number of dimensions)."""
    fn = getattr(ctx, "fn", None)
    globals_ = getattr(fn, "__globals__", None)
    if globals_ is None or is_generated(fn):
        return {}
    local = set(ctx.locals) | set(fn.__code__.co_freevars)
    out: dict[str, int] = {}
    for node in (n for stmt in primal for n in gast.walk(stmt)):
        if not isinstance(node, gast.Name) or not isinstance(node.ctx, gast.Load) \
                or node.id in local or node.id in out or node.id not in globals_:
            continue
        value = globals_[node.id]
        if type(value) in (float, int) or isinstance(value, (np.floating, np.integer)):
            rank = 0
        elif type(value) is np.ndarray and value.dtype.kind in "biuf":
            rank = value.ndim
        else:
            continue
        out[node.id] = rank
        ctx.snapshots.setdefault(node.id, value)
    return out
