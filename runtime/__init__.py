"""The small library that generated gradient code imports as ``rt``.

It depends on NumPy only and never imports ``transpiler``, so an exported gradient module runs
without the compiler installed.
"""

from runtime import helper_tangents, linalg, linalg_tangents, reductions, shapes, special, tangents
from runtime.accumulate import grad_like, seed, tangent_like, zeros_like_grad
from runtime.broadcast import (
                               add_into,
                               broadcast_like,
                               reduce_like,
                               unbroadcast,
                               unindex,
                               unreduce,
                               zero_index,
)
from runtime.containers import (
                                appended,
                                cotangent,
                                extended,
                                items,
                                keys,
                                last,
                                sequence,
                                unappend,
                                unget,
                                unget_default,
                                unitems,
                                unsequence,
                                unsum,
                                unvalues,
                                values,
)
from runtime.ops import (
                                balanced_eq,
                                dot_adjoint_a,
                                dot_adjoint_b,
                                matmul_adjoint_a,
                                matmul_adjoint_b,
                                on_gradient,
                                partial_of,
                                partials,
                         stop_gradient,
                                unconcatenate,
                                unstack,
)
from runtime.stand_in import ShapeOf, shape_of

# Helpers whose argument at this position is only used for its shape and dtype.
SHAPE_ARGUMENTS = {"unbroadcast": 1, "unreduce": 1, "unindex": 1, "zeros_like_grad": 0,
                   "unconcatenate": 1, "unstack": 1}

__all__ = [
    "SHAPE_ARGUMENTS",
    "ShapeOf",
    "add_into",
    "appended",
    "balanced_eq",
    "broadcast_like",
    "cotangent",
    "dot_adjoint_a",
    "dot_adjoint_b",
    "extended",
    "linalg",
    "linalg_tangents",
    "reductions",
    "shapes",
    "special",
    "grad_like",
    "helper_tangents",
    "items",
    "keys",
    "last",
    "matmul_adjoint_a",
    "matmul_adjoint_b",
    "reduce_like",
    "seed",
    "sequence",
    "shape_of",
    "on_gradient",
    "partial_of",
    "partials",
    "stop_gradient",
    "tangents",
    "tangent_like",
    "unappend",
    "unbroadcast",
    "unconcatenate",
    "unget",
    "unget_default",
    "unitems",
    "unsequence",
    "unindex",
    "unreduce",
    "unstack",
    "unsum",
    "unvalues",
    "values",
    "zero_index",
    "zeros_like_grad",
]
