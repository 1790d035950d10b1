"""Adjoints of the runtime helpers generated gradients call, so that a generated gradient can
itself be differentiated (``hvp``, ``hessian``: reverse over reverse). Each helper is linear in
its first argument; its adjoint is the transposed map.

Their tangents (forward over reverse) apply the same helper to the tangent; the helpers whose
other arguments are only read for their shape (``like``, ``index``, ...) have one term. Some
helpers have a tangent but no adjoint (yet): ``rt.unindex``, ``rt.add_into``, the container
helpers. ``rt.seed`` and ``rt.zeros_like_grad`` are constants (nondiff.py)."""

import numpy as np

import runtime as rt
import runtime.linalg_tangents  # noqa: F401  (rt.linalg_tangents in tangent templates)
from transpiler.rules.registry import adjoint, d, tangent


@adjoint(rt.unbroadcast)  # sums over broadcast axes: the transpose broadcasts back
def adj_unbroadcast(ans, g, like):
    d[g] = rt.broadcast_like(d[ans], g)


@tangent(rt.unbroadcast)
def tan_unbroadcast(ans, g, like):
    d[ans] = rt.unbroadcast(d[g], like)


@adjoint(rt.unreduce)  # spreads over the reduced axes: the transpose sums them again
def adj_unreduce(ans, g, like, axis=None, keepdims=False):
    d[g] = rt.reduce_like(d[ans], g, axis, keepdims)


@tangent(rt.unreduce)
def tan_unreduce(ans, g, like, axis=None, keepdims=False):
    d[ans] = rt.unreduce(d[g], like, axis, keepdims)


@adjoint(rt.grad_like)  # reshapes and casts g like x
def adj_grad_like(ans, g, x):
    d[g] = rt.unbroadcast(d[ans], g)


@tangent(rt.grad_like)
def tan_grad_like(ans, g, x):
    d[ans] = rt.grad_like(d[g], x)


@adjoint(rt.zero_index)  # g with g[index] = 0
def adj_zero_index(ans, g, index):
    d[g] = rt.zero_index(d[ans], index)


@tangent(rt.zero_index)
def tan_zero_index(ans, g, index):
    d[ans] = rt.zero_index(d[g], index)


# The product adjoints are bilinear: <u, Ma(g, b)> = <g, u @ b> gives both partials.
@adjoint(rt.matmul_adjoint_a)
def adj_matmul_adjoint_a(ans, g, a, b):
    d[g] = np.matmul(d[ans], b)
    d[b] = rt.matmul_adjoint_b(g, d[ans], b)


@tangent(rt.matmul_adjoint_a)  # a is only read for its shape
def tan_matmul_adjoint_a(ans, g, a, b):
    d[ans] = rt.matmul_adjoint_a(d[g], a, b)
    d[ans] = rt.matmul_adjoint_a(g, a, d[b])


@adjoint(rt.matmul_adjoint_b)
def adj_matmul_adjoint_b(ans, g, a, b):
    d[g] = np.matmul(a, d[ans])
    d[a] = rt.matmul_adjoint_a(g, a, d[ans])


@tangent(rt.matmul_adjoint_b)  # b is only read for its shape
def tan_matmul_adjoint_b(ans, g, a, b):
    d[ans] = rt.matmul_adjoint_b(d[g], a, b)
    d[ans] = rt.matmul_adjoint_b(g, d[a], b)


@adjoint(rt.dot_adjoint_a)
def adj_dot_adjoint_a(ans, g, a, b):
    d[g] = np.dot(d[ans], b)
    d[b] = rt.dot_adjoint_b(g, d[ans], b)


@tangent(rt.dot_adjoint_a)
def tan_dot_adjoint_a(ans, g, a, b):
    d[ans] = rt.dot_adjoint_a(d[g], a, b)
    d[ans] = rt.dot_adjoint_a(g, a, d[b])


@adjoint(rt.dot_adjoint_b)
def adj_dot_adjoint_b(ans, g, a, b):
    d[g] = np.dot(a, d[ans])
    d[a] = rt.dot_adjoint_a(g, a, d[ans])


@tangent(rt.dot_adjoint_b)
def tan_dot_adjoint_b(ans, g, a, b):
    d[ans] = rt.dot_adjoint_b(d[g], a, b)
    d[ans] = rt.dot_adjoint_b(g, d[a], b)


# --- tangents of the other helpers generated gradients call (all linear in their first
# argument; the others are only read for their shape, an index or the structure of a container)

@tangent(rt.unindex)
def tan_unindex(ans, g, like, index):
    d[ans] = rt.unindex(d[g], like, index)


# rt.add_into(g, index, part) is g + rt.unindex(part, g, index), computed in place in g; the
# tangent is the sum, a new value (the tangent of g is not touched). g is only read for its shape.
@tangent(rt.add_into)
def tan_add_into(ans, g, index, part):
    d[ans] = d[g]
    d[ans] = rt.unindex(d[part], g, index)


# broadcast_like(d, g) and reduce_like(d, g, ...): their first parameter is renamed (d is the
# template's placeholder); generated code passes it by position.
@tangent(rt.broadcast_like)
def tan_broadcast_like(ans, v, g):
    d[ans] = rt.broadcast_like(d[v], g)


@tangent(rt.reduce_like)
def tan_reduce_like(ans, v, g, axis=None, keepdims=False):
    d[ans] = rt.reduce_like(d[v], g, axis, keepdims)


@tangent(rt.cotangent)
def tan_cotangent(ans, ct, value):
    d[ans] = rt.cotangent(d[ct], value)


@tangent(rt.unconcatenate)
def tan_unconcatenate(ans, g, arrays, axis=0):
    d[ans] = rt.unconcatenate(d[g], arrays, axis)


@tangent(rt.unstack)
def tan_unstack(ans, g, arrays, axis=0):
    d[ans] = rt.unstack(d[g], arrays, axis)


@tangent(rt.unappend)
def tan_unappend(ans, g, n=1):
    d[ans] = rt.unappend(d[g], n)


@tangent(rt.last)
def tan_last(ans, g, n):
    d[ans] = rt.last(d[g], n)


@tangent(rt.unsum)
def tan_unsum(ans, g, items):
    d[ans] = rt.unsum(d[g], items)


@tangent(rt.unget)
def tan_unget(ans, g, mapping, key):
    d[ans] = rt.unget(d[g], mapping, key)


@tangent(rt.unget_default)
def tan_unget_default(ans, g, mapping, key):
    d[ans] = rt.unget_default(d[g], mapping, key)


@tangent(rt.unitems)
def tan_unitems(ans, g, mapping):
    d[ans] = rt.unitems(d[g], mapping)


@tangent(rt.unvalues)
def tan_unvalues(ans, g, mapping):
    d[ans] = rt.unvalues(d[g], mapping)


@tangent(rt.unsequence)
def tan_unsequence(ans, g, items):
    d[ans] = rt.unsequence(d[g], items)


# --- tangents of the adjoint helpers of rt.linalg (forward over reverse through linear algebra).
# Each is linear in g (the first term applies the helper to g's tangent); the other terms are
# those of the primal values it reads (runtime/linalg_tangents.py). Arguments only read for
# their shape (like, and the operand a product's adjoint does not read) have none.

@tangent(rt.linalg.untrace)
def tan_untrace(ans, g, like, offset=0, axis1=0, axis2=1):
    d[ans] = rt.linalg.untrace(d[g], like, offset, axis1, axis2)


@tangent(rt.linalg.undiagonal)
def tan_undiagonal(ans, g, like, offset=0, axis1=0, axis2=1):
    d[ans] = rt.linalg.undiagonal(d[g], like, offset, axis1, axis2)


@tangent(rt.linalg.diag_adjoint)
def tan_diag_adjoint(ans, g, v, k=0):
    d[ans] = rt.linalg.diag_adjoint(d[g], v, k)


@tangent(rt.linalg.tensordot_adjoint)
def tan_tensordot_adjoint(ans, g, a, b, axes=2, wrt=0):
    d[ans] = rt.linalg.tensordot_adjoint(d[g], a, b, axes, wrt)
    d[ans] = rt.linalg_tangents.tensordot_adjoint(g, d[a], d[b], a, b, axes, wrt)


@tangent(rt.linalg.inner_adjoint)
def tan_inner_adjoint(ans, g, a, b, wrt=0):
    d[ans] = rt.linalg.inner_adjoint(d[g], a, b, wrt)
    d[ans] = rt.linalg_tangents.inner_adjoint(g, d[a], d[b], a, b, wrt)


@tangent(rt.linalg.kron_adjoint)
def tan_kron_adjoint(ans, g, a, b, wrt=0):
    d[ans] = rt.linalg.kron_adjoint(d[g], a, b, wrt)
    d[ans] = rt.linalg_tangents.kron_adjoint(g, d[a], d[b], a, b, wrt)


@tangent(rt.linalg.vecdot_adjoint)
def tan_vecdot_adjoint(ans, g, x1, x2, wrt=0, axis=-1, keepdims=False, axes=None):
    d[ans] = rt.linalg.vecdot_adjoint(d[g], x1, x2, wrt, axis, keepdims, axes)
    d[ans] = rt.linalg_tangents.vecdot_adjoint(g, d[x1], d[x2], x1, x2, wrt, axis, keepdims,
                                               axes)


@tangent(rt.linalg.einsum_adjoint)
def tan_einsum_adjoint(ans, g, position, args, optimize=False):
    d[ans] = rt.linalg.einsum_adjoint(d[g], position, args, optimize)
    d[ans] = rt.linalg_tangents.einsum_adjoint(g, position, args, d[args], optimize)


@tangent(rt.linalg.multi_dot_adjoint)
def tan_multi_dot_adjoint(ans, g, arrays):
    d[ans] = rt.linalg.multi_dot_adjoint(d[g], arrays)
    d[ans] = rt.linalg_tangents.multi_dot_adjoint(g, arrays, d[arrays])


@tangent(rt.linalg.det_adjoint)
def tan_det_adjoint(ans, g, a, det):
    d[ans] = rt.linalg.det_adjoint(d[g], a, det)
    d[ans] = rt.linalg_tangents.det_adjoint(g, d[a], d[det], a, det)


@tangent(rt.linalg.slogdet_adjoint)
def tan_slogdet_adjoint(ans, g, a):
    d[ans] = rt.linalg.slogdet_adjoint(d[g], a)
    d[ans] = rt.linalg_tangents.slogdet_adjoint(g, d[a], a)


@tangent(rt.linalg.solve_adjoint)  # a tuple (ga, gb): one term; b is only read for its shape
def tan_solve_adjoint(ans, g, a, b, x):
    d[ans] = rt.linalg_tangents.solve_adjoint(d[g], d[a], d[x], g, a, b, x)


@tangent(rt.linalg.matrix_power_adjoint)
def tan_matrix_power_adjoint(ans, g, a, n):
    d[ans] = rt.linalg.matrix_power_adjoint(d[g], a, n)
    d[ans] = rt.linalg_tangents.matrix_power_adjoint(g, d[a], a, n)


@tangent(rt.linalg.pinv_adjoint)
def tan_pinv_adjoint(ans, g, a, p, hermitian=False, rcond=None, rtol=None):
    d[ans] = rt.linalg_tangents.pinv_adjoint(d[g], d[a], d[p], g, a, p, hermitian, rcond, rtol)


@tangent(rt.linalg.cholesky_adjoint)
def tan_cholesky_adjoint(ans, g, factor, upper=False):
    d[ans] = rt.linalg_tangents.cholesky_adjoint(d[g], d[factor], g, factor, upper)


# eigh_adjoint(g, ans, uplo): its second parameter (the primal's result) is renamed here
@tangent(rt.linalg.eigh_adjoint)
def tan_eigh_adjoint(ans, g, res, uplo="L"):
    d[ans] = rt.linalg_tangents.eigh_adjoint(d[g], d[res], g, res, uplo)


@tangent(rt.linalg.eigvalsh_adjoint)
def tan_eigvalsh_adjoint(ans, g, a, uplo="L"):
    d[ans] = rt.linalg.eigvalsh_adjoint(d[g], a, uplo)
    d[ans] = rt.linalg_tangents.eigvalsh_adjoint(g, d[a], a, uplo)
