"""The spec record and the shape sets every family of rule specs shares."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OpSpec:
    """One way of exercising the rule of ``key``.

    ``domain`` is ``(lo, hi)`` for every argument or a tuple with one ``(lo, hi)`` per argument.
    ``signed`` lists argument positions drawn as ``±uniform(lo, hi)`` (away from a kink at 0).
    ``bools`` lists argument positions that get a random boolean array (never differentiated).
    ``shapes`` is a tuple of per-argument shape tuples; shape ``()`` means a Python float.
    ``xfail`` is a known bug ``(exception type, reason)`` (all shapes) or a dict
    {shapes: (exception type, reason)}.
    ``numpy`` is the oldest NumPy the case runs on, where it uses a newer keyword or behaviour
    (``np.clip(a, min=b)``: NumPy 2.1); ``discovered()`` drops it on older ones.
    """

    key: Any
    expr: str
    nargs: int
    domain: Any = (-2.0, 2.0)
    shapes: tuple = (((),),)  # one case: a single Python-float argument
    signed: tuple = ()
    bools: tuple = ()
    rtol: float = 1e-5
    atol: float = 1e-6
    xfail: Any = None
    numpy: str | None = None

    def arg_domain(self, i: int) -> tuple[float, float]:
        if isinstance(self.domain[0], tuple):
            return self.domain[i]
        return self.domain

    @property
    def diff_positions(self) -> tuple[int, ...]:
        return tuple(i for i in range(self.nargs) if i not in self.bools)


# --- shape sets -------------------------------------------------------------------------------

UNARY = (((),), ((3,),), ((2, 3),))
BINARY = (
    ((), ()),  # scalar + scalar
    ((3,), (3,)),  # same shape
    ((), (2, 3)),  # scalar + array
    ((2, 3), ()),  # array + scalar
    ((3, 1), (1, 4)),  # both broadcast
    ((2, 3), (3,)),  # leading-axis broadcast
    ((3,), (2, 3)),
)
SCALAR1 = (((),),)
SCALAR2 = (((), ()),)
CONST_OPERAND = (((),), ((3,),), ((2, 3),))  # one argument, the other operand is a number

POS = (0.5, 3.0)  # log, sqrt, reciprocal, positive bases
AWAY = (0.3, 2.0)  # with ``signed``: |x| >= 0.3, away from kinks and poles at 0

REDUCE_IN = (((2, 3, 4),),)


def newer(module, attr: str):
    """``module.attr``, or None where this Python or NumPy does not have it yet: a spec whose
    key is None is dropped by ``discovered()``, as the rule is not registered."""
    return getattr(module, attr, None)


def unary_np(fn, expr=None, domain=(-2.0, 2.0), signed=(), shapes=UNARY, **kw):
    if fn is None:
        return None
    return OpSpec(fn, expr or f"np.{fn.__name__}(a)", 1, domain, shapes, signed, **kw)


def unary_math(fn, domain=(-2.0, 2.0), signed=(), **kw):
    if fn is None:
        return None
    return OpSpec(fn, f"math.{fn.__name__}(a)", 1, domain, SCALAR1, signed, **kw)


@dataclasses.dataclass
class Rec:
    """A record for the object specs (objects.py)."""

    k: object
    c: object


class Pair(typing.NamedTuple):
    """A NamedTuple for the object specs (objects.py)."""

    k: object
    c: object
