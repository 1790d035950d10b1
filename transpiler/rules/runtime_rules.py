"""Adjoints of the runtime helpers generated gradients call, so that a generated gradient can
itself be differentiated (``hvp``, ``hessian``: reverse over reverse). Each helper is linear in
its first argument; its adjoint is the transposed map."""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d


@adjoint(rt.unbroadcast)  # sums over broadcast axes: the transpose broadcasts back
def adj_unbroadcast(ans, g, like):
    d[g] = rt.broadcast_like(d[ans], g)


@adjoint(rt.unreduce)  # spreads over the reduced axes: the transpose sums them again
def adj_unreduce(ans, g, like, axis=None, keepdims=False):
    d[g] = rt.reduce_like(d[ans], g, axis, keepdims)


@adjoint(rt.grad_like)  # reshapes and casts g like x
def adj_grad_like(ans, g, x):
    d[g] = rt.unbroadcast(d[ans], g)


@adjoint(rt.zero_index)  # g with g[index] = 0
def adj_zero_index(ans, g, index):
    d[g] = rt.zero_index(d[ans], index)


# The product adjoints are bilinear: <u, Ma(g, b)> = <g, u @ b> gives both partials.
@adjoint(rt.matmul_adjoint_a)
def adj_matmul_adjoint_a(ans, g, a, b):
    d[g] = np.matmul(d[ans], b)
    d[b] = rt.matmul_adjoint_b(g, d[ans], b)


@adjoint(rt.matmul_adjoint_b)
def adj_matmul_adjoint_b(ans, g, a, b):
    d[g] = np.matmul(a, d[ans])
    d[a] = rt.matmul_adjoint_a(g, a, d[ans])


@adjoint(rt.dot_adjoint_a)
def adj_dot_adjoint_a(ans, g, a, b):
    d[g] = np.dot(d[ans], b)
    d[b] = rt.dot_adjoint_b(g, d[ans], b)


@adjoint(rt.dot_adjoint_b)
def adj_dot_adjoint_b(ans, g, a, b):
    d[g] = np.dot(a, d[ans])
    d[a] = rt.dot_adjoint_a(g, a, d[ans])
