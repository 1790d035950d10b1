"""The small library that generated gradient code imports as ``rt``.

It depends on NumPy only and never imports ``transpiler``, so an exported gradient module runs
without the compiler installed.
"""

from runtime.broadcast import unbroadcast, unreduce
from runtime.accumulate import grad_like, seed, zeros_like_grad
from runtime.ops import balanced_eq, dot_adjoint_a, dot_adjoint_b, matmul_adjoint_a, matmul_adjoint_b

__all__ = [
    "balanced_eq",
    "dot_adjoint_a",
    "dot_adjoint_b",
    "grad_like",
    "matmul_adjoint_a",
    "matmul_adjoint_b",
    "seed",
    "unbroadcast",
    "unreduce",
    "zeros_like_grad",
]
