"""Linear algebra: the adjoints of products (``matmul``, ``dot``, ``tensordot``, ``einsum``...)
and of ``numpy.linalg`` (solve, det, inverses, decompositions), each next to its tangents:
``<function>_tangent`` is the tangent of the NumPy function (``cholesky_tangent``), and
``<helper>_tangent`` that of the adjoint helper itself (``cholesky_adjoint_tangent``, for forward
over reverse). An adjoint helper is linear in its gradient ``g``; the tangent template applies the
helper itself to ``g``'s tangent, and its ``_tangent`` gives the term(s) of its other arguments.
"""

from __future__ import annotations

import operator
import string

import numpy as np

from runtime.arrays import asarray, inverse_axes, is_array, is_lazy, is_zero
from runtime.broadcast import tangent_array, unbroadcast
from runtime.containers import GradList, GradTuple, zeros_of


def _promote(a, b, g):
    """Make matmul operands at least 2-D (and ``g`` to match), as NumPy does internally."""
    a2 = a[np.newaxis, :] if np.ndim(a) == 1 else a
    b2 = b[:, np.newaxis] if np.ndim(b) == 1 else b
    g2 = asarray(g)
    if np.ndim(b) == 1:
        g2 = g2[..., np.newaxis]
    if np.ndim(a) == 1:
        g2 = np.expand_dims(g2, -2)
    return asarray(a2), asarray(b2), g2


def _unbatch(g, like):
    """Sum broadcast batch axes of a matmul operand's gradient down to ``like``'s shape."""
    if np.ndim(like) == 1:
        g = g[..., 0, :]
    return unbroadcast(g, like)


def matmul_adjoint_a(g, a, b):
    """Gradient of ``a @ b`` with respect to ``a``, given the result's gradient ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2:
        return g @ b.T  # the common case, without the batch bookkeeping
    a2, b2, g2 = _promote(a, b, g)
    return _unbatch(g2 @ np.swapaxes(b2, -1, -2), a)


def matmul_adjoint_b(g, a, b):
    """Gradient of ``a @ b`` with respect to ``b``, given the result's gradient ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    a2, b2, g2 = _promote(a, b, g)
    gb = np.swapaxes(a2, -1, -2) @ g2
    if np.ndim(b) == 1:
        gb = gb[..., 0]
    return unbroadcast(gb, b)


def dot_adjoint_a(g, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``a``.

    ``dot`` contracts the last axis of ``a`` with the second-to-last of ``b`` (the only axis of a
    1-D ``b``); a 0-d operand makes it a product.
    """
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * b) if np.ndim(a) == 0 else g * b
    nb = np.ndim(b)
    # g has axes a[:-1] + b[:-2] + b[-1:]; contract g's b-axes with b's non-contracted axes.
    b_free = [i for i in range(nb) if i != max(nb - 2, 0)]
    g_b_axes = list(range(np.ndim(a) - 1, np.ndim(g)))
    ga = np.tensordot(g, b, axes=(g_b_axes, b_free))
    return ga


def dot_adjoint_b(g, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``b``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * a) if np.ndim(b) == 0 else g * a
    na, nb = np.ndim(a), np.ndim(b)
    # Contract g's a-axes with a's free axes, leaving (contracted,) + b's free axes.
    gb = np.tensordot(a, g, axes=(list(range(na - 1)), list(range(na - 1))))
    if nb >= 2:  # gb axes: (k,) + b[:-2] + b[-1:]; move k to position nb - 2
        gb = np.moveaxis(gb, 0, nb - 2)
    return gb


def _flows(g) -> bool:
    """True when the gradient ``g`` of one element of a tuple result is not all zeros."""
    return not is_zero(g) and bool(np.any(g))


def _t(x):
    """The transpose of each matrix in a stack."""
    return np.swapaxes(x, -1, -2)


def _dtype(g, like):
    """The float dtype of a gradient for ``like`` given the incoming gradient ``g``."""
    kind = getattr(like, "dtype", None)
    if kind is not None and kind.kind == "f":
        return np.result_type(g, kind)
    return np.result_type(g, float)


def _eye(x):
    """An identity matrix matching the last axis and dtype of ``x``."""
    return np.eye(np.shape(x)[-1], dtype=x.dtype)


def _full(g, like):
    """``g`` as an array of ``like``'s shape: a zero gradient (0.0) becomes zeros."""
    if is_zero(g):
        return np.zeros(np.shape(like), dtype=like.dtype)
    return asarray(g)


def _fold(s, lower=True):
    """Gradient of a function that reads only the lower (or upper) triangle of its argument as
    a symmetric matrix, given ``s``, its gradient for symmetric perturbations.

    An off-diagonal element read from one triangle stands for both (i, j) and (j, i)."""
    both = s + _t(s)
    tri = np.tril(both, -1) if lower else np.triu(both, 1)
    return tri + s * _eye(s)


# --- products and contractions ------------------------------------------------------------------

def _tensordot_axes(na, nb, axes):
    """``tensordot``'s ``axes`` as two lists of non-negative axes of ``a`` and ``b``."""
    if np.ndim(axes) == 0:
        n = operator.index(axes)
        return list(range(na - n, na)), list(range(n))
    ia, ib = axes
    ia = [operator.index(i) % na for i in np.atleast_1d(ia)]
    ib = [operator.index(i) % nb for i in np.atleast_1d(ib)]
    return ia, ib


def tensordot_adjoint(g, a, b, axes=2, wrt=0):
    """Gradient of ``np.tensordot(a, b, axes)`` with respect to ``a`` (``wrt=0``) or ``b``."""
    na, nb = np.ndim(a), np.ndim(b)
    ia, ib = _tensordot_axes(na, nb, axes)
    free_a = [i for i in range(na) if i not in ia]
    free_b = [i for i in range(nb) if i not in ib]
    fa = len(free_a)
    if wrt == 0:
        # contract g's b-part with b's free axes; what is left of b pairs with a's axes ia
        r = np.tensordot(g, b, axes=(list(range(fa, np.ndim(g))), free_b))
        source = free_a + [ia[ib.index(j)] for j in sorted(ib)]
    else:
        r = np.tensordot(a, g, axes=(free_a, list(range(fa))))
        source = [ib[ia.index(j)] for j in sorted(ia)] + free_b
    return np.transpose(r, inverse_axes(source))



def tensordot_adjoint_tangent(g, da, db, a, b, axes=2, wrt=0):
    """Term of ``tensordot_adjoint(g, a, b, axes, wrt)`` for the operand it reads (``b`` for
    ``wrt=0``, ``a`` for ``wrt=1``; the other is only read for its shape)."""
    adjoint = tensordot_adjoint
    return adjoint(g, a, db, axes, 0) if wrt == 0 else adjoint(g, da, b, axes, 1)


def inner_adjoint(g, a, b, wrt=0):
    """Gradient of ``np.inner(a, b)`` (a product when either is a scalar)."""
    x, y = (a, b) if wrt == 0 else (b, a)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * y) if np.ndim(x) == 0 else g * y
    if wrt == 1:  # inner(b, a) is inner(a, b) with its two groups of axes swapped
        na = np.ndim(a) - 1
        g = np.moveaxis(asarray(g), list(range(na)), list(range(np.ndim(g) - na, np.ndim(g))))
    return tensordot_adjoint(g, x, y, ([-1], [-1]), 0)


def inner_adjoint_tangent(g, da, db, a, b, wrt=0):
    """Term of ``inner_adjoint(g, a, b, wrt)`` for the operand it reads."""
    adjoint = inner_adjoint
    return adjoint(g, a, db, 0) if wrt == 0 else adjoint(g, da, b, 1)


def kron_adjoint(g, a, b, wrt=0):
    """Gradient of ``np.kron(a, b)``: the result's axis i splits into (a's axis i, b's axis i)."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    g = np.reshape(g, [n for pair in zip(sa, sb, strict=True) for n in pair])
    even, odd = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
    if wrt == 0:
        r = np.tensordot(g, np.reshape(b, sb), axes=(odd, list(range(nd))))
        return np.reshape(r, np.shape(a))
    r = np.tensordot(np.reshape(a, sa), g, axes=(list(range(nd)), even))
    return np.reshape(r, np.shape(b))


def kron_adjoint_tangent(g, da, db, a, b, wrt=0):
    """Term of ``kron_adjoint(g, a, b, wrt)`` for the operand it reads."""
    adjoint = kron_adjoint
    return adjoint(g, a, db, 0) if wrt == 0 else adjoint(g, da, b, 1)


def multi_dot_adjoint(g, arrays):
    """Gradients of ``np.linalg.multi_dot(arrays)``, one per array: each is the product of
    everything left of it (transposed), ``g``, and everything right of it (transposed)."""
    mats = [asarray(x) for x in arrays]
    first, last = mats[0].ndim == 1, mats[-1].ndim == 1
    if first:
        mats[0] = mats[0][np.newaxis, :]
    if last:
        mats[-1] = mats[-1][:, np.newaxis]
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    right = [g]  # built right to left, then right[i] = g (M[i+1] ... M[-1])^T
    for m in mats[:0:-1]:
        right.append(right[-1] @ m.T)
    right.reverse()
    grads, prefix = [], None  # prefix = M[0] ... M[i-1]
    for x, m, r in zip(arrays, mats, right, strict=True):
        grads.append(np.reshape(r if prefix is None else prefix.T @ r, np.shape(x)))
        prefix = m if prefix is None else prefix @ m
    if is_array(arrays):
        return np.stack(grads)
    return GradList(grads) if isinstance(arrays, list) else GradTuple(grads)


def multi_dot_tangent(tangents, arrays, ans):
    """Tangent of ``np.linalg.multi_dot(arrays)``: the sum over the arrays of the product with
    that array replaced by its tangent (zero tangents skipped)."""
    arrays, tangents = list(arrays), list(tangents)
    total = None
    for i, t in enumerate(tangents):
        if is_zero(t) or not np.any(t):
            continue
        term = np.linalg.multi_dot(arrays[:i] + [asarray(t)] + arrays[i + 1:])
        total = term if total is None else total + term
    if total is None:
        return _zeros(ans)
    return total


def multi_dot_adjoint_tangent(g, arrays, darrays):
    """Term of ``multi_dot_adjoint(g, arrays)`` for the arrays: array ``i``'s gradient is
    multilinear in the others; each tangent enters all gradients but its own."""
    adjoint = multi_dot_adjoint
    total = None
    for j, t in enumerate(darrays):
        if is_zero(t) or not np.any(t):
            continue
        replaced = list(arrays)
        replaced[j] = asarray(t)
        if is_array(arrays):
            replaced = np.stack(replaced)
        elif isinstance(arrays, tuple):
            replaced = tuple(replaced)
        term = adjoint(g, replaced)
        parts = list(term)
        parts[j] = 0.0 * parts[j]  # array j's gradient does not read array j
        term = np.stack(parts) if is_array(term) else type(term)(parts)
        total = term if total is None else total + term
    if total is None:
        return zeros_of(list(arrays)) if not is_array(arrays) else \
            _zeros(arrays)
    return total


def vecdot_adjoint(g, x1, x2, wrt=0, axis=-1, keepdims=False, axes=None):
    """Gradient of ``vecdot(x1, x2)`` with respect to ``x1`` (``wrt=0``) or ``x2``; ``axis``
    (or ``axes``, one 1-tuple per input) names the contracted axis of each input."""
    if axes is not None:
        if keepdims or len(axes) > 2 and tuple(np.atleast_1d(axes[2])):
            raise NotImplementedError("the gradient of vecdot supports axes=[(i,), (j,)] "
                                      "without keepdims")
        a1, a2 = (operator.index(np.atleast_1d(axes[k])[0]) for k in (0, 1))
    else:
        a1 = a2 = -1 if axis is None else operator.index(axis)
    g = asarray(g)
    if keepdims:
        g = np.squeeze(g, axis=a1)
    x, y, ax, ay = (x1, x2, a1, a2) if wrt == 0 else (x2, x1, a2, a1)
    gx = unbroadcast(g[..., np.newaxis] * np.moveaxis(y, ay, -1), np.moveaxis(x, ax, -1))
    return np.moveaxis(gx, -1, ax)


def _float(x):
    """The float dtype of a tangent of ``x``."""
    kind = getattr(x, "dtype", None)
    return kind if kind is not None and kind.kind == "f" else np.dtype(float)


def _zeros(like):
    """A zero tangent of ``like``'s shape and float dtype."""
    return np.zeros(np.shape(like), dtype=_float(asarray(like)))


def _diag(m):
    """The diagonal of each matrix in a stack, as a fresh array."""
    return np.diagonal(m, axis1=-2, axis2=-1).copy()


def _sym(t, lower=True):
    """The symmetric matrix a function that reads the lower (upper) triangle sees."""
    if lower:
        return np.tril(t) + _t(np.tril(t, -1))
    return np.triu(t) + _t(np.triu(t, 1))



def vecdot_tangent(x1, x2, axis=None, keepdims=False, axes=None, dtype=None):
    """``np.vecdot(x1, x2, ...)`` with only the keywords that were given (NumPy refuses
    ``axis=None`` and ``axes`` together)."""
    kw = {"keepdims": keepdims}
    if axes is not None:
        kw["axes"] = axes
    elif axis is not None:
        kw["axis"] = axis
    if dtype is not None:
        kw["dtype"] = dtype
    return np.vecdot(x1, x2, **kw)


def vecdot_adjoint_tangent(g, dx1, dx2, x1, x2, wrt=0, axis=-1, keepdims=False, axes=None):
    """Term of ``vecdot_adjoint(g, x1, x2, wrt, ...)`` for the operand it reads."""
    adjoint = vecdot_adjoint
    if wrt == 0:
        return adjoint(g, x1, dx2, 0, axis, keepdims, axes)
    return adjoint(g, dx1, x2, 1, axis, keepdims, axes)


# --- einsum -------------------------------------------------------------------------------------

_LABELS = string.ascii_uppercase + string.ascii_lowercase  # interleaved integer labels 0..51


def _sublist(labels) -> str:
    return "".join("..." if x is Ellipsis else _LABELS[operator.index(x)] for x in labels)


def _einsum_parse(args):
    """The operands, their subscripts and the output subscript of an einsum call (string or
    interleaved form), with ellipses and the implicit output written out in letters."""
    if isinstance(args[0], str):
        spec = args[0].replace(" ", "")
        operands = list(args[1:])
        inputs, arrow, output = spec.partition("->")
        inputs = inputs.split(",")
        output = output if arrow else None
    else:
        n = len(args) // 2
        operands = list(args[0:2 * n:2])
        inputs = [_sublist(s) for s in args[1:2 * n:2]]
        output = _sublist(args[-1]) if len(args) % 2 else None
    used = set("".join(inputs) + (output or ""))
    spare = [c for c in string.ascii_letters if c not in used]
    widths = [np.ndim(x) - len(s.replace("...", "")) if "..." in s else 0
              for x, s in zip(operands, inputs, strict=True)]
    ellipsis = "".join(spare[:max(widths, default=0)])
    inputs = [s.replace("...", ellipsis[len(ellipsis) - w:])
              for s, w in zip(inputs, widths, strict=True)]
    if output is None:  # implicit: broadcast axes, then the labels used once, in order
        joined = "".join(inputs)
        output = ellipsis + "".join(sorted(c for c in set(joined)
                                           if joined.count(c) == 1 and c not in ellipsis))
    else:
        output = output.replace("...", ellipsis)
    return operands, inputs, output


def einsum_adjoint(g, position, args, optimize=False):
    """Gradient of ``np.einsum(*args)`` with respect to the positional argument at
    ``position``: the einsum of ``g`` with the other operands, summed over the labels this
    operand broadcasts, spread over the labels only it has, and put back on its diagonals
    (for a repeated label such as the trace 'ii->')."""
    args = list(args)
    while args and args[-1] is None:  # unused slots of the rule
        args.pop()
    k = position - 1 if isinstance(args[0], str) else position // 2
    operands, inputs, output = _einsum_parse(args)
    x, labels = operands[k], inputs[k]
    others = [(g, output)] + [(o, s) for j, (o, s) in enumerate(zip(operands, inputs,
                                                                     strict=True)) if j != k]
    present = set("".join(s for _, s in others))
    unique = "".join(dict.fromkeys(labels))
    kept = "".join(c for c in unique if c in present)
    if not isinstance(optimize, (bool, str)):  # a path computed for the primal's operands
        optimize = True
    r = np.einsum(",".join(s for _, s in others) + "->" + kept, *(o for o, _ in others),
                  optimize=optimize)
    size = dict(zip(labels, np.shape(x), strict=True))
    r = np.expand_dims(r, tuple(i for i, c in enumerate(unique) if c not in present))
    ones = tuple(i for i, c in enumerate(unique) if size[c] == 1 and r.shape[i] != 1)
    if ones:  # this operand's size-1 axes were broadcast
        r = np.sum(r, axis=ones, keepdims=True)
    r = np.broadcast_to(r, tuple(size[c] for c in unique))
    if len(unique) == len(labels):
        return r
    out = np.zeros(np.shape(x), dtype=_dtype(r, x))
    strides = [sum(out.strides[i] for i, c in enumerate(labels) if c == u) for u in unique]
    diagonal = np.lib.stride_tricks.as_strided(out, r.shape, strides, writeable=True)
    diagonal[...] = r
    return out


def einsum_tangent(t, position, args, optimize=False, dtype=None):
    """Tangent term of ``np.einsum(*args)`` for the positional argument at ``position``: the
    same einsum with that operand replaced by its tangent ``t``."""
    args = list(args)
    while args and args[-1] is None:  # unused slots of the rule
        args.pop()
    args[position] = t
    kw = {} if dtype is None else {"dtype": dtype}
    return np.einsum(*args, optimize=optimize, **kw)


def _operand_slots(args) -> list[int]:
    """The positions of the operands in the arguments of an einsum call."""
    args = list(args)
    while args and args[-1] is None:
        args.pop()
    if isinstance(args[0], str):
        return list(range(1, len(args)))
    return list(range(0, 2 * (len(args) // 2), 2))


def einsum_adjoint_tangent(g, position, args, dargs, optimize=False):
    """Term of ``einsum_adjoint(g, position, args)`` for the other operands: the sum over them
    of the same adjoint with that operand replaced by its tangent."""
    adjoint = einsum_adjoint
    total = None
    for k in _operand_slots(args):
        t = dargs[k]
        if k == position or t is None or is_zero(t):
            continue
        replaced = list(args)
        replaced[k] = t
        term = adjoint(g, position, tuple(replaced), optimize)
        total = term if total is None else total + term
    return total if total is not None else 0.0 * adjoint(g, position, args, optimize)


# --- diagonals ----------------------------------------------------------------------------------

def undiagonal(g, like, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.diagonal(like, offset, axis1, axis2)``: zeros with ``g`` (diagonal
    last) written back on the diagonal."""
    g = asarray(g)
    out = np.zeros(np.shape(like), dtype=_dtype(g, like))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    i = np.arange(g.shape[-1])
    view[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


def untrace(g, like, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.trace(like, offset, axis1, axis2)``: ``g`` on the diagonal."""
    shape = np.shape(like)
    n = max(0, min(shape[axis1] - max(-offset, 0), shape[axis2] - max(offset, 0)))
    g = asarray(g)[..., np.newaxis]
    return undiagonal(np.broadcast_to(g, g.shape[:-1] + (n,)), like, offset, axis1, axis2)


def diag_adjoint(g, v, k=0):
    """Gradient of ``np.diag(v, k)``: the k-th diagonal of ``g`` for a vector ``v``, the
    matrix with ``g`` on that diagonal for a matrix ``v``."""
    if np.ndim(v) == 1:
        return np.diag(g, k)
    return undiagonal(g, v, k, 0, 1)


# --- solvers and inverses -----------------------------------------------------------------------

def solve_adjoint(g, a, b, x):
    """Gradients ``(ga, gb)`` of ``x = np.linalg.solve(a, b)``: ``gb = a^-T g`` and
    ``ga = -gb x^T``. A 1-D ``b`` is one vector (NumPy 2), else a stack of matrices."""
    vector = np.ndim(b) == 1
    g = asarray(g)
    if vector:
        g, x = g[..., np.newaxis], x[..., np.newaxis]
    gb = np.linalg.solve(_t(a), g)
    ga = -gb @ _t(x)
    if vector:
        gb = gb[..., 0]
    return unbroadcast(ga, a), unbroadcast(gb, b)



def solve_tangent_a(da, a, b, x):
    """Tangent term of ``x = np.linalg.solve(a, b)`` for ``a``: ``-a^-1 da x`` (a 1-D ``b`` is
    one vector)."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, da @ x[..., np.newaxis])[..., 0]
    return -np.linalg.solve(a, da @ x)


def solve_adjoint_tangent(dg, da, dx, g, a, b, x):
    """Tangent of ``(ga, gb) = solve_adjoint(g, a, b, x)`` (``gb = a^-T g``, ``ga = -gb x^T``;
    ``b`` is only read for its shape): ``dgb = a^-T (dg - da^T gb)``,
    ``dga = -dgb x^T - gb dx^T``."""
    vector = np.ndim(b) == 1
    g, dg = asarray(g), asarray(dg)
    if vector:
        g, x, dg, dx = (asarray(v)[..., np.newaxis] for v in (g, x, dg, dx))
    gb = np.linalg.solve(_t(a), g)
    dgb = np.linalg.solve(_t(a), dg - _t(da) @ gb)
    dga = -dgb @ _t(x) - gb @ _t(dx)
    if vector:
        dgb = dgb[..., 0]
    return GradTuple((unbroadcast(dga, a), unbroadcast(dgb, b)))


def det_adjoint(g, a, det):
    """Gradient of ``np.linalg.det(a)``: ``g det a^-T``."""
    scale = asarray(g * det)[..., np.newaxis, np.newaxis]
    return scale * _t(np.linalg.inv(a))


def det_tangent(da, a, ans):
    """Tangent of ``det(a)``: ``det(a) tr(a^-1 da)``."""
    return ans * np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)


def det_adjoint_tangent(g, da, ddet, a, det):
    """Terms of ``det_adjoint(g, a, det) = g det a^-T`` for ``a`` and ``det``."""
    inv_t = _t(np.linalg.inv(a))
    scale = asarray(g * det)[..., np.newaxis, np.newaxis]
    dscale = asarray(g * ddet)[..., np.newaxis, np.newaxis]
    return dscale * inv_t - scale * (inv_t @ _t(da) @ inv_t)


def slogdet_adjoint(g, a):
    """Gradient of ``np.linalg.slogdet(a)``: only the log-determinant carries one, ``g a^-T``
    (the sign is piecewise constant)."""
    glog = g[1]
    if not _flows(glog):
        return np.zeros(np.shape(a), dtype=a.dtype)
    return asarray(glog)[..., np.newaxis, np.newaxis] * _t(np.linalg.inv(a))


def slogdet_tangent(da, a, ans):
    """Tangent of ``sign, logabsdet = slogdet(a)``: ``(0, tr(a^-1 da))``."""
    sign = ans[0]
    zero = np.zeros(np.shape(sign), dtype=_float(asarray(sign)))
    return GradTuple((zero[()] if zero.ndim == 0 else zero,
                      np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)))


def slogdet_adjoint_tangent(g, da, a):
    """Term of ``slogdet_adjoint(g, a) = g[1] a^-T`` for ``a``: ``-g[1] a^-T da^T a^-T``."""
    glog = g[1]
    if is_zero(glog) or not np.any(glog):
        return np.zeros(np.shape(a), dtype=_float(a))
    inv_t = _t(np.linalg.inv(a))
    return -asarray(glog)[..., np.newaxis, np.newaxis] * (inv_t @ _t(da) @ inv_t)


def matrix_power_adjoint(g, a, n):
    """Gradient of ``np.linalg.matrix_power(a, n)`` (any integer ``n``)."""
    n = operator.index(n)
    if n == 0:
        return np.zeros(np.shape(a), dtype=_dtype(g, a))
    base = a if n > 0 else np.linalg.inv(a)
    k = abs(n)
    bt = _t(base)
    powers = [np.broadcast_to(_eye(bt), bt.shape)]  # powers[j] = (base^T)^j
    for _ in range(k - 1):
        powers.append(powers[-1] @ bt)
    # d(B^k) = sum_j B^j dB B^(k-1-j)
    gb = sum(powers[j] @ g @ powers[k - 1 - j] for j in range(k))
    return gb if n > 0 else -bt @ gb @ bt


def _power_base(a, da, n: int):
    """``(B, dB, k)`` of ``a^n = B^k``: ``B = a`` and ``dB = da``, or ``B = a^-1`` and
    ``dB = -B da B`` for negative ``n``; ``k = |n|``."""
    if n >= 0:
        return a, da, n
    base = np.linalg.inv(a)
    return base, -base @ da @ base, -n


def matrix_power_tangent(da, a, n, ans):
    """Tangent of ``np.linalg.matrix_power(a, n)``: ``sum_j B^j dB B^(k-1-j)`` with ``B = a``
    (``B = a^-1``, ``dB = -B da B`` for negative ``n``) and ``k = |n|``."""
    n = operator.index(n)
    if n == 0:
        return np.zeros(np.shape(ans), dtype=np.result_type(da, _float(ans)))
    base, dbase, k = _power_base(a, da, n)
    powers = [np.broadcast_to(np.eye(np.shape(base)[-1], dtype=base.dtype), np.shape(base))]
    for _ in range(k - 1):
        powers.append(powers[-1] @ base)
    return sum(powers[j] @ dbase @ powers[k - 1 - j] for j in range(k))


def matrix_power_adjoint_tangent(g, da, a, n):
    """Term of ``matrix_power_adjoint(g, a, n)`` for ``a`` (the product rule on
    ``sum_j (B^T)^j g (B^T)^(k-1-j)``, ``B = a`` or ``a^-1``)."""
    n = operator.index(n)
    if n == 0:
        return np.zeros(np.shape(a), dtype=np.result_type(g, _float(a)))
    base, dbase, k = _power_base(a, da, n)
    bt, dbt = _t(base), _t(dbase)
    eye = np.broadcast_to(np.eye(np.shape(bt)[-1], dtype=bt.dtype), np.shape(bt))
    powers, dpowers = [eye], [np.zeros_like(eye)]
    for _ in range(k - 1):
        dpowers.append(dpowers[-1] @ bt + powers[-1] @ dbt)
        powers.append(powers[-1] @ bt)
    gb = sum(powers[j] @ g @ powers[k - 1 - j] for j in range(k))
    dgb = sum(dpowers[j] @ g @ powers[k - 1 - j] + powers[j] @ g @ dpowers[k - 1 - j]
              for j in range(k))
    return dgb if n > 0 else -(dbt @ gb @ bt + bt @ dgb @ bt + bt @ gb @ dbt)


def _complex_form(*values) -> bool:
    """Whether a formula below takes its complex form (one of ``values`` is complex): its
    transposes conjugate (``_h``), and an adjoint maps the conjugate of its gradient and
    conjugates the result (see the section on complex matrices at the end)."""
    return any(np.iscomplexobj(v) for v in values)


def _refuse_hermitian_vectors():
    raise NotImplementedError("the gradient of svd is not implemented for hermitian=True "
                              "with compute_uv=True")


def pinv_adjoint(g, a, p, hermitian=False, rcond=None, rtol=None):
    """Gradient of ``p = np.linalg.pinv(a)`` where its rank is locally constant (Golub and
    Pereyra): ``-p^T g p^T + (I - a p) g^T p p^T + p^T p g^T (I - p a)`` (of a complex ``a``,
    its conjugate at the conjugate of ``g``, with conjugate transposes).

    With ``hermitian=True`` NumPy reads only the lower triangle of ``a``."""
    _check_cutoff(a, hermitian, rcond, rtol)
    complex_form = _complex_form(a, g)
    if complex_form and hermitian:  # the pinv of the Hermitian matrix NumPy's eigh sees
        return _fold_hermitian(pinv_adjoint(g, _hermitian(a), p))
    if hermitian:
        a = np.tril(a) + _t(np.tril(a, -1))
    t = _h if complex_form else _t
    g = np.conjugate(g) if complex_form else g
    pt, gt = t(p), t(g)
    m, n = np.shape(a)[-2:]
    left = np.eye(m, dtype=p.dtype) - a @ p
    right = np.eye(n, dtype=p.dtype) - p @ a
    r = -pt @ g @ pt + left @ gt @ p @ pt + pt @ p @ gt @ right
    if complex_form:
        return np.conjugate(r)
    return _fold(r) if hermitian else r


def _check_cutoff(a, hermitian, rcond, rtol):
    """pinv's cut-off must not drop nonzero singular values (as in ``pinv_adjoint``)."""
    if rcond is None and rtol is None:
        return
    s = np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
    cut = asarray(rtol if rcond is None else rcond)[..., np.newaxis] * s[..., :1]
    tiny = max(np.shape(a)[-2:]) * np.finfo(s.dtype).eps * 100 * s[..., :1]
    if np.any((s <= cut) & (s > tiny)):
        raise NotImplementedError("the gradient of pinv is not implemented when its cut-off "
                                  "drops nonzero singular values")


def pinv_tangent(da, a, p, hermitian=False, rcond=None, rtol=None):
    """Tangent of ``p = np.linalg.pinv(a)`` where its rank is locally constant (Golub and
    Pereyra): ``-p da p + p p^T da^T (I - a p) + (I - p a) da^T p^T p`` (conjugate
    transposes for a complex ``a``)."""
    _check_cutoff(a, hermitian, rcond, rtol)
    complex_form = _complex_form(a, da)
    if complex_form and hermitian:
        return pinv_tangent(_hermitian(da), _hermitian(a), p)
    if hermitian:
        a, da = _sym(a), _sym(da)
    m, n = np.shape(a)[-2:]
    t = _h if complex_form else _t
    pt, dat = t(p), t(da)
    left = np.eye(m, dtype=p.dtype) - a @ p
    right = np.eye(n, dtype=p.dtype) - p @ a
    return -p @ da @ p + p @ pt @ dat @ left + right @ dat @ pt @ p


def pinv_adjoint_tangent(dg, da, dp, g, a, p, hermitian=False, rcond=None, rtol=None):
    """Tangent of ``pinv_adjoint(g, a, p, ...)``, a polynomial in ``g``, ``a`` and ``p``:
    ``-p^T g p^T + (I - a p) g^T p p^T + p^T p g^T (I - p a)`` (then folded for
    ``hermitian``; of complex values, its complex form)."""
    _check_cutoff(a, hermitian, rcond, rtol)
    complex_form = _complex_form(a, g, dg, da)
    if complex_form and hermitian:
        return _fold_hermitian(pinv_adjoint_tangent(dg, _hermitian(da), dp, g, _hermitian(a), p))
    if complex_form:
        g, dg = np.conjugate(g), np.conjugate(dg)
    if hermitian:
        a, da = _sym(a), _sym(da)
    m, n = np.shape(a)[-2:]
    t = _h if complex_form else _t
    pt, gt, dpt, dgt = t(p), t(g), t(dp), t(dg)
    left = np.eye(m, dtype=p.dtype) - a @ p
    right = np.eye(n, dtype=p.dtype) - p @ a
    dleft = -(da @ p + a @ dp)
    dright = -(dp @ a + p @ da)
    r = -(dpt @ g @ pt + pt @ dg @ pt + pt @ g @ dpt)
    r = r + dleft @ gt @ p @ pt + left @ dgt @ p @ pt + left @ gt @ dp @ pt + left @ gt @ p @ dpt
    r = r + dpt @ p @ gt @ right + pt @ dp @ gt @ right + pt @ p @ dgt @ right \
        + pt @ p @ gt @ dright
    if complex_form:
        return np.conjugate(r)
    return _fold(r) if hermitian else r


def _lstsq_frame(a, b, ans):
    """The solution ``x`` of ``ans = np.linalg.lstsq(a, b)``, whether ``b`` is a vector, and
    ``b`` and ``x`` as matrices; NotImplementedError for a rank-deficient ``a``."""
    x, _, rank, _ = ans
    m, n = np.shape(a)
    if rank < min(m, n):
        raise NotImplementedError("the gradient of lstsq needs a full-rank matrix")
    vector = np.ndim(b) == 1
    return x, vector, *((b[:, np.newaxis], x[:, np.newaxis]) if vector else (b, x))


def lstsq_adjoint(g, a, b, ans, wrt=0):
    """Gradient of ``x, residuals, rank, s = np.linalg.lstsq(a, b)`` with respect to ``a``
    (``wrt=0``) or ``b``, for a full-rank ``a``: ``x = pinv(a) b``, the residuals are
    ``|b - a x|^2`` per column, ``s`` are ``a``'s singular values (the rank has no gradient).
    Of complex values, the conjugate of the formula's complex form at the conjugate of ``g``."""
    x, vector, bm, xm = _lstsq_frame(a, b, ans)
    gx, gres, _, gs = g
    complex_form = _complex_form(a, b, gx)
    t = _h if complex_form else _t
    gxm = _full(gx, x).reshape(xm.shape)
    gxm = np.conjugate(gxm) if complex_form else gxm
    p = np.linalg.pinv(a)
    ga, gb = None, t(p) @ gxm
    if wrt == 0:  # (pinv_adjoint conjugates as it maps)
        ga = pinv_adjoint(np.conjugate(gxm @ t(bm)) if complex_form else gxm @ t(bm), a, p)
        ga = np.conjugate(ga) if complex_form else ga
    if _flows(gres):
        # d|r|^2 = 2 Re(r^H (db - da x)), as a^H r = 0 at the solution
        res = bm - a @ xm
        scaled = 2.0 * res * np.real(asarray(gres))
        gb = gb + scaled
        if wrt == 0:
            ga = ga - scaled @ t(xm)
    out = gb[:, 0] if vector else gb
    if wrt == 0:
        out = ga + (svdvals_adjoint(np.real(gs), a) if _flows(gs) else 0.0)
    return np.conjugate(out) if complex_form else out


def lstsq_adjoint_tangent(g, dg, a, da, b, db, res, dres, wrt=0):
    """Tangent of ``lstsq_adjoint(g, a, b, res, wrt)`` along the tangents of ``g``,
    ``a``, ``b`` and the solution ``res[0]``."""
    flows, full = _flows, _full
    x, vector, bm, xm = _lstsq_frame(a, b, res)
    residuals = res[1]
    gx, gres, _, gs = g
    dgx, dgres, _, dgs = dg
    da = tangent_array(da, a)
    dbm = tangent_array(db, b).reshape(bm.shape)
    dxm = tangent_array(dres[0], x).reshape(xm.shape)
    gxm = full(gx, x).reshape(xm.shape)
    dgxm = tangent_array(dgx, x).reshape(xm.shape)
    complex_form = _complex_form(a, b, gxm, dgxm)
    t = _h if complex_form else _t
    if complex_form:  # (the formula's complex form, at the conjugate gradients)
        gxm, dgxm = np.conjugate(gxm), np.conjugate(dgxm)
    p = np.linalg.pinv(a)
    dp = pinv_tangent(da, a, p)
    dgb = t(dp) @ gxm + t(p) @ dgxm
    dga = None
    if wrt == 0:
        if complex_form:
            dga = np.conjugate(pinv_adjoint_tangent(
                np.conjugate(dgxm @ t(bm) + gxm @ t(dbm)), da, dp, np.conjugate(gxm @ t(bm)),
                a, p))
        else:
            dga = pinv_adjoint_tangent(dgxm @ t(bm) + gxm @ t(dbm), da, dp, gxm @ t(bm), a, p)
    if flows(gres) or flows(dgres):
        r = bm - a @ xm
        dr = dbm - da @ xm - a @ dxm
        gr, dgr = np.real(full(gres, residuals)), np.real(tangent_array(dgres, residuals))
        scaled, dscaled = 2.0 * r * gr, 2.0 * (dr * gr + r * dgr)
        dgb = dgb + dscaled
        if wrt == 0:
            dga = dga - dscaled @ t(xm) - scaled @ t(dxm)
    out = dgb[:, 0] if vector else dgb
    if wrt == 0:
        out = dga
        if flows(gs) or flows(dgs):
            s = np.linalg.svd(a, compute_uv=False)
            gs, dgs = np.real(full(gs, s)), np.real(tangent_array(dgs, s))
            second = np.conjugate(svdvals_complex_adjoint_tangent(gs, da, a)) if complex_form \
                else svdvals_adjoint_tangent(gs, da, a)
            out = out + svdvals_adjoint(dgs, a) + second
    return np.conjugate(out) if complex_form else out


def lstsq_tangent(da, db, a, b, ans):
    """Tangent of ``x, residuals, rank, s = np.linalg.lstsq(a, b)`` for a full-rank ``a``:
    ``dx = dpinv(a) b + pinv(a) db``, ``d|r|^2 = 2 r^T (db - da x)`` per column, ``ds`` the
    tangent of the singular values (the rank has none)."""
    x, res, rank, _ = ans
    m, n = np.shape(a)
    if rank < min(m, n):
        raise NotImplementedError("the gradient of lstsq needs a full-rank matrix")
    vector = np.ndim(b) == 1
    bm, xm = (b[:, np.newaxis], x[:, np.newaxis]) if vector else (b, x)
    dbm = np.reshape(db, np.shape(bm))
    p = np.linalg.pinv(a)
    dx = pinv_tangent(da, a, p) @ bm + p @ dbm
    if np.size(res):
        r = bm - a @ xm
        dres = np.reshape(2.0 * np.real(np.sum(np.conjugate(r) * (dbm - da @ xm), axis=0)),
                          np.shape(res))  # (SciPy's of a vector b is a number)
    else:
        dres = np.zeros(np.shape(res), dtype=_float(res))
    ds = svdvals_complex_tangent(da, a) if np.iscomplexobj(a) else svdvals_tangent(da, a)
    return GradTuple((dx[:, 0] if vector else dx, dres, 0.0, ds))


# --- decompositions -----------------------------------------------------------------------------

def _triangular_solve(t, b, lower: bool):
    """``t^-1 b`` for a triangular ``t`` (``lower`` or upper): SciPy's triangular solve for one
    matrix where SciPy is installed (a third of a general solve's work), else NumPy's."""
    if np.ndim(t) == 2 and np.ndim(b) == 2:
        try:
            from scipy.linalg import solve_triangular
        except ImportError:
            pass
        else:
            return solve_triangular(t, b, lower=lower, check_finite=False)
    return np.linalg.solve(t, b)


def cholesky_adjoint(g, factor, upper=False):
    """Gradient of the Cholesky factor ``L`` (or ``U = L^T``): ``L^-T Phi(L^T gL) L^-1`` with
    ``Phi`` the lower triangle with a halved diagonal (Murray 2016), folded onto the triangle
    NumPy reads (the lower one, the upper one for ``upper=True``). A solve's part already on
    the matrix (``FactorGrad`` of this factor) is added as it is; a diagonal ``gL`` (a log
    determinant's) makes ``Phi`` diagonal, and ``L^-T Phi L^-1`` is taken from the triangle's
    inverse (the inverse matrix itself for a constant diagonal)."""
    dense, solves = _factor_parts(g)
    if solves is not None and solves.c is not factor:
        dense, solves = np.asarray(g), None  # (another factor's: read as the array it is)
    out = _cholesky_adjoint(_full(dense, factor), factor, upper) if not is_zero(dense) else 0.0
    if solves is not None:
        out = _plus(out, solves.matrix_part(not upper))
    return np.zeros(np.shape(factor), dtype=factor.dtype) if is_zero(out) else out


def _cholesky_adjoint(g, factor, upper=False):
    diagonal = _diagonal_only(g, factor)
    if diagonal is not None:
        return _diagonal_cholesky_adjoint(diagonal, factor, upper)
    lo, gl = (_t(factor), _t(g)) if upper else (factor, g)
    m = _t(lo) @ gl
    phi = np.tril(m) - 0.5 * m * _eye(m)
    left = _triangular_solve(_t(lo), phi, False)  # L^-T Phi
    r = _t(_triangular_solve(_t(lo), _t(left), False))  # (L^-T Phi) L^-1
    return _fold(r, lower=not upper)



def _diagonal_only(g, factor):
    """The diagonal of a float64 2-D ``g`` that is zero off it (None: it is not, or SciPy's
    LAPACK, which the shortcut needs, is not installed)."""
    if type(g) is not np.ndarray or g.ndim != 2 or g.dtype != np.float64 \
            or type(factor) is not np.ndarray or factor.dtype != np.float64 or _lapack() is None:
        return None
    d = np.diagonal(g)
    return d.copy() if np.count_nonzero(g) == np.count_nonzero(d) else None


def _lapack():
    try:
        from scipy.linalg import lapack
    except ImportError:
        return None
    return lapack


def _diagonal_cholesky_adjoint(d, factor, upper: bool):
    """``fold(L^-T D L^-1)`` for ``Phi = D = diag(L_ii gL_ii) / 2``: ``c A^-1`` by LAPACK's
    potri for a constant ``D = c I`` (to rounding: ``log(diag(L))``'s ``gL_ii = 1 / L_ii``),
    else from ``L^-1`` (trtri)."""
    lapack = _lapack()
    lo = _t(factor) if upper else factor
    scale = 0.5 * np.diagonal(lo) * d
    if np.ptp(scale) <= 8 * np.finfo(float).eps * np.max(np.abs(scale)):  # (to rounding)
        inv, info = lapack.dpotri(lo, lower=1)  # (the lower triangle of A^-1)
        if info == 0:  # (folded: the strict triangle twice, the diagonal once)
            out = np.tril(inv)
            out *= 2.0 * np.mean(scale)
            out[np.diag_indices_from(out)] *= 0.5
            return out.T if upper else out
    linv, info = lapack.dtrtri(lo, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError("singular Cholesky factor")
    return _fold(_t(linv) @ (scale[:, np.newaxis] * linv), lower=not upper)


def cholesky_tangent(da, factor, upper=False):
    """Tangent of the Cholesky factor ``L`` (``U = L^T`` for ``upper``): ``L Phi(L^-1 dA L^-T)``
    with ``Phi`` the lower triangle with a halved diagonal, ``dA`` the triangle NumPy reads
    mirrored."""
    lo = _t(factor) if upper else factor
    s = _sym(da, lower=not upper)
    left = _triangular_solve(lo, s, True)  # L^-1 dA
    x = _triangular_solve(lo, _t(left), True)  # L^-1 dA L^-T (dA symmetric)
    phi = np.tril(x) - 0.5 * x * np.eye(np.shape(x)[-1], dtype=x.dtype)
    dl = lo @ phi
    return _t(dl) if upper else dl


def cholesky_adjoint_tangent(dg, dfactor, g, factor, upper=False):
    """Tangent of ``cholesky_adjoint(g, factor, upper) = fold(L^-T Phi(L^T gL) L^-1)``."""
    lo, gl = (_t(factor), _t(g)) if upper else (factor, g)
    dlo, dgl = (_t(dfactor), _t(dg)) if upper else (dfactor, dg)
    eye = np.eye(np.shape(lo)[-1], dtype=lo.dtype)

    def phi(m):
        return np.tril(m) - 0.5 * m * eye

    inv = np.linalg.inv(lo)
    dinv = -inv @ dlo @ inv
    m = _t(lo) @ gl
    dm = _t(dlo) @ gl + _t(lo) @ dgl
    dr = _t(dinv) @ phi(m) @ inv + _t(inv) @ phi(dm) @ inv + _t(inv) @ phi(m) @ dinv
    return _fold(dr, lower=not upper)


def _lower(uplo) -> bool:
    uplo = str(uplo).upper()
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return uplo == "L"


def _gap_inverse(w, square=False):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal (of squares for ``square``), 0 on it."""
    if square:
        w = w * w
    gap = w[..., np.newaxis, :] - w[..., :, np.newaxis]
    eye = np.eye(w.shape[-1], dtype=bool)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, gap))


def eigh_adjoint(g, ans, uplo="L"):
    """Gradient of ``w, v = np.linalg.eigh(a)`` for distinct eigenvalues:
    ``v (diag(gw) + F * (v^T gv)) v^T`` with ``F[i, j] = 1 / (w[j] - w[i])``."""
    w, v = ans
    inner = _full(g[0], w)[..., np.newaxis, :] * _eye(v)
    if _flows(g[1]):  # (without, equal eigenvalues would give 0 * inf)
        inner = inner + _gap_inverse(w) * (_t(v) @ g[1])
    return _fold(v @ inner @ _t(v), _lower(uplo))


def eigh_tangent(da, ans, uplo="L"):
    """Tangent of ``w, v = np.linalg.eigh(a)``: ``dw = diag(v^T dA v)``,
    ``dv = v (F * (v^T dA v))`` with ``F[i, j] = 1 / (w[j] - w[i])`` (NaN for equal
    eigenvalues)."""
    w, v = ans
    m = _t(v) @ _sym(da, _lower(uplo)) @ v
    with np.errstate(divide="ignore", invalid="ignore"):
        dv = v @ (_gap_inverse(w) * m)
    return GradTuple((_diag(m), dv))


def _eig_tangent(v, w, s):
    """``(dw, dv)`` of ``eigh`` along the symmetric tangent ``s``."""
    m = _t(v) @ s @ v
    with np.errstate(divide="ignore", invalid="ignore"):
        dv = v @ (_gap_inverse(w) * m)
    return _diag(m), dv


def eigh_adjoint_tangent(dg, dans, g, ans, uplo="L"):
    """Tangent of ``eigh_adjoint(g, (w, v), uplo) = fold(v (diag(gw) + F * (v^T gv)) v^T)``
    with ``F[i, j] = 1 / (w[j] - w[i])`` (``dF = -F^2 * (dw[j] - dw[i])``)."""
    w, v = ans
    dw, dv = (_full(t, x) for t, x in zip(dans, ans, strict=True))
    eye = np.eye(np.shape(v)[-1], dtype=v.dtype)
    inner = _full(g[0], w)[..., np.newaxis, :] * eye
    dinner = _full(dg[0], w)[..., np.newaxis, :] * eye
    if _flows(g[1]) or _flows(dg[1]):
        gv, dgv = _full(g[1], v), _full(dg[1], v)
        f = _gap_inverse(w)
        df = -f * f * (dw[..., np.newaxis, :] - dw[..., :, np.newaxis])
        inner = inner + f * (_t(v) @ gv)
        dinner = dinner + df * (_t(v) @ gv) + f * (_t(dv) @ gv + _t(v) @ dgv)
    dr = dv @ inner @ _t(v) + v @ dinner @ _t(v) + v @ inner @ _t(dv)
    return _fold(dr, _lower(uplo))


def eigvalsh_adjoint(g, a, uplo="L"):
    """Gradient of ``np.linalg.eigvalsh(a)``: ``v diag(g) v^T``."""
    _, v = np.linalg.eigh(a, UPLO=uplo)
    return _fold((v * asarray(g)[..., np.newaxis, :]) @ _t(v), _lower(uplo))


def eigvalsh_tangent(da, a, uplo="L"):
    """Tangent of ``np.linalg.eigvalsh(a)``: ``diag(v^T dA v)``."""
    _, v = np.linalg.eigh(a, UPLO=uplo)
    return np.sum(v * (_sym(da, _lower(uplo)) @ v), axis=-2)


def eigvalsh_adjoint_tangent(g, da, a, uplo="L"):
    """Term of ``eigvalsh_adjoint(g, a) = fold(v diag(g) v^T)`` for ``a`` (``v`` moves with
    ``a``)."""
    w, v = np.linalg.eigh(a, UPLO=uplo)
    _, dv = _eig_tangent(v, w, _sym(da, _lower(uplo)))
    scaled = v * asarray(g)[..., np.newaxis, :]
    return _fold(dv @ _t(scaled) + scaled @ _t(dv), _lower(uplo))


def _copyltu(m):
    """The symmetric matrix with ``m``'s lower triangle."""
    return np.tril(m) + _t(np.tril(m, -1))


def _qr_square(gq, gr, q, r):
    """Gradient of ``q, r = qr(a)`` for ``a`` with at least as many rows as columns:
    ``(gq + q copyltu(M)) r^-T`` with ``M = r gr^T - gq^T q``. Of a complex ``a`` (whose
    ``r`` has a real diagonal), ``(gq + conj(q) C) r^-T`` with ``U = gr r^T - q^T gq`` and
    ``C`` its upper triangle, the real part of its diagonal and the conjugate transpose of its
    strict upper triangle below."""
    if _complex_form(q, gq, gr):
        u = gr @ _t(r) - _t(q) @ gq
        c = np.triu(u, 1) + np.real(_diag(u))[..., np.newaxis, :] * _eye(u) + np.tril(_h(u), -1)
        b = gq + np.conjugate(q) @ c
    else:
        m = r @ _t(gr) - _t(gq) @ q
        b = gq + q @ _copyltu(m)
    return _t(np.linalg.solve(r, _t(b)))


def _refuse_qr_mode(mode: str):
    """The error for a qr mode whose gradient is not defined here."""
    if mode == "complete":
        raise NotImplementedError("the gradient of qr with mode='complete' of a matrix with more "
                                  "rows than columns is implemented where the extra columns of "
                                  "q get no gradient (they are not unique), and not in forward "
                                  "mode: use mode='reduced' (SciPy: mode='economic')")
    raise NotImplementedError(f"the gradient of qr is not implemented for mode={mode!r}")


def qr_adjoint(g, ans, a, mode="reduced"):
    """Gradient of ``np.linalg.qr(a, mode)`` for a full-rank ``a`` (modes 'reduced' and 'r';
    'complete' where it equals 'reduced'). A wide ``a = [x | y]`` is ``q [r1 | q^T y]`` with
    ``q, r1 = qr(x)``."""
    rows, cols = np.shape(a)[-2:]
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = np.zeros_like(q), _full(g, r)
    elif mode == "reduced" or (mode == "complete" and rows <= cols):
        q, r = ans
        gq, gr = _full(g[0], q), _full(g[1], r)
    elif mode == "complete" and not _flows(_full(g[0], ans[0])[..., cols:]):
        # the extra columns of q (not unique) get no gradient: the reduced factors' formula
        q, r = ans[0][..., :cols], ans[1][..., :cols, :]
        gq, gr = _full(g[0], ans[0])[..., :cols], _full(g[1], ans[1])[..., :cols, :]
    else:
        _refuse_qr_mode(mode)
    if rows >= cols:
        return _qr_square(gq, gr, q, r)
    y = a[..., rows:]  # r = [r1 | q^H y]
    if _complex_form(a, gq, gr):
        gy = np.conjugate(q) @ gr[..., rows:]
        gq = gq + np.conjugate(y @ _t(gr[..., rows:]))
    else:
        gy = q @ gr[..., rows:]
        gq = gq + y @ _t(gr[..., rows:])
    gx = _qr_square(gq, gr[..., :rows], q, r[..., :rows])
    return np.concatenate([gx, gy], axis=-1)


def _qr_square_adjoint_tangent(gq, dgq, gr, dgr, q, dq, r, dr):
    """Tangent of ``_qr_square(gq, gr, q, r) = B r^-T``, ``B = gq + q copyltu(M)``,
    ``M = r gr^T - gq^T q``: ``(dB - out dr^T) r^-T``."""
    t, copyltu = _t, _copyltu
    if _complex_form(q, gq, gr, dgq, dgr):  # (the complex _qr_square's terms)
        def c_of(u):
            return np.triu(u, 1) + np.real(_diag(u))[..., np.newaxis, :] * _eye(u) \
                + np.tril(_h(u), -1)
        u = gr @ t(r) - t(q) @ gq
        du = dgr @ t(r) + gr @ t(dr) - t(dq) @ gq - t(q) @ dgq
        b = gq + np.conjugate(q) @ c_of(u)
        db = dgq + np.conjugate(dq) @ c_of(u) + np.conjugate(q) @ c_of(du)
    else:
        m = r @ t(gr) - t(gq) @ q
        dm = dr @ t(gr) + r @ t(dgr) - t(dgq) @ q - t(gq) @ dq
        b = gq + q @ copyltu(m)
        db = dgq + dq @ copyltu(m) + q @ copyltu(dm)
    out = t(np.linalg.solve(r, t(b)))
    return t(np.linalg.solve(r, t(db - out @ t(dr))))


def qr_adjoint_tangent(g, dg, res, dres, a, da, mode="reduced"):
    """Tangent of ``qr_adjoint(g, res, a, mode)`` along the tangents of ``g``, of the
    factors ``res = (q, r)`` and of ``a`` (mode 'r' factors ``a`` again; a wide ``a`` reads its
    last columns)."""
    rows, cols = np.shape(a)[-2:]
    full = _full
    if mode == "r":
        q, r = np.linalg.qr(a)
        dq, dr = qr_tangent(tangent_array(da, a), (q, r), a, "reduced")
        gq, dgq = np.zeros_like(q), np.zeros_like(q)
        gr, dgr = full(g, r), tangent_array(dg, r)
    elif mode == "reduced" or (mode == "complete" and rows <= cols):
        q, r = res
        dq, dr = tangent_array(dres[0], q), tangent_array(dres[1], r)
        gq, gr = full(g[0], q), full(g[1], r)
        dgq, dgr = tangent_array(dg[0], q), tangent_array(dg[1], r)
    else:
        _refuse_qr_mode(mode)
    if rows >= cols:
        return _qr_square_adjoint_tangent(gq, dgq, gr, dgr, q, dq, r, dr)
    t = _t
    y, dy = a[..., rows:], tangent_array(da, a)[..., rows:]
    gr2, dgr2 = gr[..., rows:], dgr[..., rows:]
    if _complex_form(a, gq, gr, dgq, dgr):  # (gy = conj(q) gr2, gq + conj(y gr2^T))
        dgy = np.conjugate(dq) @ gr2 + np.conjugate(q) @ dgr2
        gq1 = gq + np.conjugate(y @ t(gr2))
        dgq1 = dgq + np.conjugate(dy @ t(gr2) + y @ t(dgr2))
    else:
        dgy = dq @ gr2 + q @ dgr2
        gq1 = gq + y @ t(gr2)
        dgq1 = dgq + dy @ t(gr2) + y @ t(dgr2)
    dgx = _qr_square_adjoint_tangent(gq1, dgq1, gr[..., :rows], dgr[..., :rows], q, dq,
                                     r[..., :rows], dr[..., :rows])
    return np.concatenate([dgx, dgy], axis=-1)


def _qr_square_tangent(da, q, r):
    """Tangents ``(dq, dr)`` of ``q, r = qr(a)`` for ``a`` with at least as many rows as
    columns: with ``C = q^T da r^-1`` and ``O`` the skew-symmetric part of its strict lower
    triangle, ``dr = (C - O) r`` and ``dq = da r^-1 - q (C - O)`` (of a complex ``a``,
    ``C = q^H da r^-1``, ``O`` skew-Hermitian with the imaginary part of ``C``'s diagonal)."""
    dar = _t(np.linalg.solve(_t(r), _t(da)))  # da r^-1
    if _complex_form(q, da):  # (O skew-Hermitian, and imaginary on the diagonal: r's is real)
        c = _h(q) @ dar
        low = np.tril(c, -1)
        upper = c - low + _h(low) - 1j * np.imag(_diag(c))[..., np.newaxis, :] * _eye(c)
    else:
        c = _t(q) @ dar
        low = np.tril(c, -1)
        upper = c - low + _t(low)  # C - O, upper triangular
    return dar - q @ upper, upper @ r


def qr_tangent(da, ans, a, mode="reduced"):
    """Tangent of ``np.linalg.qr(a, mode)`` for a full-rank ``a`` (modes 'reduced' and 'r';
    'complete' where it equals 'reduced'). A wide ``a = [x | y]`` is ``q [r1 | q^T y]``."""
    rows, cols = np.shape(a)[-2:]
    if mode == "r":
        q, r = np.linalg.qr(a)
    elif mode == "reduced" or (mode == "complete" and rows <= cols):
        q, r = ans
    else:
        _refuse_qr_mode(mode)
    if rows >= cols:
        dq, dr = _qr_square_tangent(da, q, r)
    else:
        dq, dr1 = _qr_square_tangent(da[..., :rows], q, r[..., :rows])
        t = _h if _complex_form(a, da) else _t
        dr2 = t(dq) @ a[..., rows:] + t(q) @ da[..., rows:]
        dr = np.concatenate([dr1, dr2], axis=-1)
    return dr if mode == "r" else GradTuple((dq, dr))


def svdvals_adjoint(g, a, hermitian=False):
    """Gradient of the singular values of ``a``: ``u diag(g) v^T``.

    With ``hermitian=True`` NumPy takes them as the sorted ``|w|`` of ``eigh(a)`` (which reads
    the lower triangle): ``|w|`` has the gradient ``sign(w) v diag(g) v^T``."""
    if hermitian:
        w, v = np.linalg.eigh(a)
        order = np.argsort(np.abs(w))[..., ::-1]  # as NumPy sorts them
        gw = np.zeros_like(w, dtype=_dtype(g, w))
        np.put_along_axis(gw, order, asarray(g), axis=-1)
        gw = gw * np.sign(w)
        return _fold((v * gw[..., np.newaxis, :]) @ _t(v))
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return (u * asarray(g)[..., np.newaxis, :]) @ vh



def svdvals_adjoint_tangent(g, da, a, hermitian=False):
    """Term of ``a`` in the tangent of ``svdvals_adjoint(g, a) = u diag(g) v^T`` (the
    singular vectors move with ``a``)."""
    t = _t
    if hermitian:
        w, v = np.linalg.eigh(a)
        order = np.argsort(np.abs(w))[..., ::-1]
        gw = np.zeros_like(w, dtype=_dtype(g, w))
        np.put_along_axis(gw, order, asarray(g), axis=-1)
        scaled = v * (gw * np.sign(w))[..., np.newaxis, :]
        _, dv = eigh_tangent(tangent_array(da, a), (w, v))
        return _fold(dv @ t(scaled) + scaled @ t(dv))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    du, _, dvh = svd_tangent(tangent_array(da, a), (u, s, vh), a, full_matrices=False)
    gg = asarray(g)[..., np.newaxis, :]
    return (du * gg) @ vh + (u * gg) @ dvh


def svdvals_tangent(da, a, hermitian=False):
    """Tangent of the singular values of ``a``: ``diag(u^T da v)``. With ``hermitian=True``
    they are the sorted ``|w|`` of ``eigh(a)`` (lower triangle): ``sign(w) diag(v^T dA v)``."""
    if hermitian:
        w, v = np.linalg.eigh(a)
        dw = np.sign(w) * np.sum(v * (_sym(da) @ v), axis=-2)
        order = np.argsort(np.abs(w))[..., ::-1]  # as NumPy sorts them
        return np.take_along_axis(dw, order, axis=-1)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * (da @ _t(vh)), axis=-2)


def svd_adjoint(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Gradient of ``np.linalg.svd(a)`` for distinct nonzero singular values (Townsend 2016):

    ``u [J s + diag(gs) + s K] v^T + (I - u u^T) gu s^-1 v^T + u s^-1 gv^T (I - v v^T)``
    with ``J = F * (u^T gu - gu^T u)``, ``K = F * (v^T gv - gv^T v)``,
    ``F[i, j] = 1 / (s[j]^2 - s[i]^2)``."""
    if hermitian and compute_uv:
        _refuse_hermitian_vectors()
    if not compute_uv:
        return svdvals_adjoint(g, a, hermitian)
    u, s, vh = ans
    rows, cols = np.shape(a)[-2:]
    if not (_flows(g[0]) or _flows(g[2])):  # values only: also fine for equal or zero ones
        k = min(rows, cols)
        return (u[..., :k] * _full(g[1], s)[..., np.newaxis, :]) @ vh[..., :k, :]
    if full_matrices and rows != cols:
        raise NotImplementedError("the gradient of svd with full_matrices=True needs a square "
                                  "matrix; use full_matrices=False")
    gu, gs, gvh = _full(g[0], u), _full(g[1], s), _full(g[2], vh)
    v, gv = _t(vh), _t(gvh)
    f = _gap_inverse(s, square=True)
    j = f * (_t(u) @ gu - _t(gu) @ u)
    k = f * (vh @ gv - _t(gv) @ v)
    core = j * s[..., np.newaxis, :] + gs[..., np.newaxis, :] * _eye(j) + s[..., :, np.newaxis] * k
    out = u @ core @ vh
    if rows > cols:
        out = out + (gu - u @ (_t(u) @ gu)) / s[..., np.newaxis, :] @ vh
    if cols > rows:
        out = out + (u / s[..., np.newaxis, :]) @ (_t(gv) - (_t(gv) @ v) @ vh)
    return out


def svd_adjoint_tangent(g, dg, res, dres, a, da, full_matrices=True, compute_uv=True,
                        hermitian=False):
    """Tangent of ``svd_adjoint(g, res, a, ...)`` (Townsend's formula) along the
    tangents of ``g`` and of the decomposition ``res = (u, s, vh)`` (or of ``a`` for the
    singular values alone)."""
    flows = _flows
    if hermitian and compute_uv:
        _refuse_hermitian_vectors()
    if not compute_uv:
        return svdvals_adjoint(tangent_array(dg, res), a, hermitian) \
            + svdvals_adjoint_tangent(g, da, a, hermitian)
    t, full = _t, _full
    u, s, vh = res
    du, ds, dvh = (tangent_array(d, x) for d, x in zip(dres, res, strict=True))
    rows, cols = np.shape(a)[-2:]
    gs, dgs = full(g[1], s), tangent_array(dg[1], s)
    if not (flows(g[0]) or flows(g[2]) or flows(dg[0]) or flows(dg[2])):
        k = min(rows, cols)
        uk, duk, vk, dvk = u[..., :k], du[..., :k], vh[..., :k, :], dvh[..., :k, :]
        return (duk * gs[..., np.newaxis, :] + uk * dgs[..., np.newaxis, :]) @ vk \
            + (uk * gs[..., np.newaxis, :]) @ dvk
    if full_matrices and rows != cols:
        raise NotImplementedError("the gradient of svd with full_matrices=True needs a square "
                                  "matrix; use full_matrices=False")
    gu, gvh = full(g[0], u), full(g[2], vh)
    dgu, dgvh = tangent_array(dg[0], u), tangent_array(dg[2], vh)
    v, gv, dv, dgv = t(vh), t(gvh), t(dvh), t(dgvh)
    f = _gap_inverse(s, square=True)
    ds2 = 2.0 * s * ds
    df = -f * f * (ds2[..., np.newaxis, :] - ds2[..., :, np.newaxis])
    su, dsu = t(u) @ gu - t(gu) @ u, t(du) @ gu + t(u) @ dgu - t(dgu) @ u - t(gu) @ du
    sv, dsv = vh @ gv - t(gv) @ v, dvh @ gv + vh @ dgv - t(dgv) @ v - t(gv) @ dv
    j, dj = f * su, df * su + f * dsu
    k, dk = f * sv, df * sv + f * dsv
    eye = _eye(j)
    row, col = s[..., np.newaxis, :], s[..., :, np.newaxis]
    drow, dcol = ds[..., np.newaxis, :], ds[..., :, np.newaxis]
    core = j * row + gs[..., np.newaxis, :] * eye + col * k
    dcore = dj * row + j * drow + dgs[..., np.newaxis, :] * eye + dcol * k + col * dk
    out = du @ core @ vh + u @ dcore @ vh + u @ core @ dvh
    if rows > cols:  # + (gu - u u^T gu) s^-1 v^T
        m = gu - u @ (t(u) @ gu)
        dm = dgu - du @ (t(u) @ gu) - u @ (t(du) @ gu) - u @ (t(u) @ dgu)
        out = out + (dm / row - m * drow / (row * row)) @ vh + (m / row) @ dvh
    if cols > rows:  # + u s^-1 (gv^T - gv^T v v^T)
        m = t(gv) - (t(gv) @ v) @ vh
        dm = t(dgv) - (t(dgv) @ v) @ vh - (t(gv) @ dv) @ vh - (t(gv) @ v) @ dvh
        out = out + (du / row - u * drow / (row * row)) @ m + (u / row) @ dm
    return out


def _singular_vectors_tangent(da, uk, s, vk, t):
    """``(P, du, dv)`` of the reduced singular vectors ``uk``, ``vk`` (Townsend 2016):
    ``P = u^T da v``, ``du = u (F * (P s + s P^T)) + (I - u u^T) da v s^-1``,
    ``dv = v (F * (s P + P^T s)) + (I - v v^T) da^T u s^-1``, ``F[i, j] = 1 / (s[j]^2 -
    s[i]^2)``; with ``t`` the conjugate transpose (a complex matrix), ``du`` also turns each
    ``u`` by ``i Im(P[k, k]) / s[k]`` (``v``'s phase kept)."""
    p = t(uk) @ da @ vk
    f = _gap_inverse(s, square=True)
    ps = p * s[..., np.newaxis, :]  # P s
    sp = s[..., :, np.newaxis] * p  # s P
    du = uk @ (f * (ps + t(ps)))
    dv = vk @ (f * (sp + t(sp)))
    if t is _h:
        du = du + uk * (1j * np.imag(_diag(p)) / s)[..., np.newaxis, :]
    rows, cols = np.shape(da)[-2:]
    if rows > s.shape[-1]:
        dav = da @ vk
        du = du + (dav - uk @ (t(uk) @ dav)) / s[..., np.newaxis, :]
    if cols > s.shape[-1]:
        dau = t(da) @ uk
        dv = dv + (dau - vk @ (t(vk) @ dau)) / s[..., np.newaxis, :]
    return p, du, dv


def svd_tangent(da, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of ``np.linalg.svd(a)`` (Townsend 2016), with ``P = u^T da v``,
    ``F[i, j] = 1 / (s[j]^2 - s[i]^2)``: ``ds = diag(P)``,
    ``du = u (F * (P s + s P^T)) + (I - u u^T) da v s^-1``,
    ``dv = v (F * (s P + P^T s)) + (I - v v^T) da^T u s^-1``.

    The singular values' tangent is exact also for equal or zero values; the vectors' is NaN
    there, as it is for the extra columns of ``u`` (rows of ``vh``) of ``full_matrices=True``
    (not unique)."""
    if hermitian and compute_uv:
        _refuse_hermitian_vectors()
    if not compute_uv:
        return svdvals_tangent(da, a, hermitian)
    u, s, vh = ans
    rows, cols = np.shape(a)[-2:]
    k = min(rows, cols)
    uk, vk = u[..., :k], _t(vh[..., :k, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        p, du, dv = _singular_vectors_tangent(da, uk, s, vk, _t)
    dvh = _t(dv)
    if full_matrices and rows > k:  # the other columns of u are not unique
        du = np.concatenate([du, np.full(np.shape(u)[:-1] + (rows - k,), np.nan, du.dtype)],
                            axis=-1)
    if full_matrices and cols > k:
        dvh = np.concatenate([dvh, np.full(np.shape(vh)[:-2] + (cols - k, cols), np.nan,
                                           dvh.dtype)], axis=-2)
    return GradTuple((du, _diag(p), dvh))


# --- complex matrices and eig ---------------------------------------------------------------------
# Gradients here follow the convention of transpiler/rules/complex_rules.py: a loss L changes by
# ``Re(sum(g * dz))`` for a change ``dz`` of a complex value whose gradient is ``g``. So a map
# ``dz -> M dz N`` has the adjoint ``g -> M^T g N^T`` (no conjugate), and a real value's gradient
# is real. The eigenvector tangents are those of NumPy's own normalisation: unit columns whose
# reference component (``eigh``: the first row, the last for ``UPLO='U'``; ``eig``: the largest
# one) is real, as LAPACK returns them.

def _h(x):
    """The conjugate transpose of each matrix in a stack."""
    return np.conjugate(np.swapaxes(x, -1, -2))


def _hermitian(t, lower=True):
    """The Hermitian matrix a function that reads the lower (upper) triangle of ``t`` and the
    real part of its diagonal sees."""
    off = np.tril(t, -1) if lower else np.triu(t, 1)
    return off + _h(off) + np.real(_diag(t))[..., np.newaxis, :] * np.eye(np.shape(t)[-1])


def _fold_hermitian(s, lower=True):
    """Gradient for the triangle ``_hermitian`` reads, given ``s``, the gradient for Hermitian
    changes of the matrix it makes: an element below the diagonal stands for itself and, as its
    conjugate, for its mirror; of the diagonal only the real part is read."""
    both = s + np.conjugate(np.swapaxes(s, -1, -2))
    off = np.tril(both, -1) if lower else np.triu(both, 1)
    return off + np.real(_diag(s))[..., np.newaxis, :] * np.eye(np.shape(s)[-1])


def _reference(v, rows):
    """Each column's reference component ``v[rows[k], k]`` and whether NumPy made it real (and
    nonzero): there its phase is fixed, elsewhere the column's phase is not defined."""
    ref = np.take_along_axis(v, np.asarray(rows)[..., np.newaxis, :], axis=-2)[..., 0, :]
    return ref, (np.imag(ref) == 0) & (np.real(ref) != 0)


def _rows_of_eigh(v, lower: bool):
    return np.full(np.shape(v)[:-2] + np.shape(v)[-1:], 0 if lower else np.shape(v)[-1] - 1)


def _rows_of_eig(v):
    return np.argmax(np.abs(v), axis=-2)


def _gauge(v, dv, rows):
    """``dv`` plus the multiple of each column of ``v`` that keeps it of unit norm and its
    reference component real: ``dv + v c``, ``c = -Re(v^H dv) - i Im(dv_ref) / v_ref``."""
    ref, fixed = _reference(v, rows)
    dref = np.take_along_axis(dv, np.asarray(rows)[..., np.newaxis, :], axis=-2)[..., 0, :]
    turn = np.where(fixed, np.imag(dref) / np.where(fixed, np.real(ref), 1.0), 0.0)
    c = -np.real(np.sum(np.conjugate(v) * dv, axis=-2)) - 1j * turn
    return dv + v * c[..., np.newaxis, :]


def _gauge_adjoint(gv, v, rows, name: str):
    """The adjoint of ``_gauge`` (``dv`` to ``dv + v c``) at the gradient ``gv``. Where a
    column's phase is not fixed, the loss must not depend on it (``Im(v_k^T gv_k) = 0``)."""
    if not np.iscomplexobj(v):  # (real eigenvectors of a real matrix: their norm alone)
        gv = np.real(gv)
        return gv - v * np.sum(v * gv, axis=-2)[..., np.newaxis, :]
    s = np.sum(v * gv, axis=-2)  # the gradient of c
    ref, fixed = _reference(v, rows)
    scale = np.sqrt(np.sum(np.abs(gv) ** 2, axis=-2))
    if np.any(~fixed & (np.abs(np.imag(s)) > 1e-8 * np.maximum(scale, 1e-300))):
        raise NotImplementedError(f"the gradient of {name} is not supported here: the loss "
                                  "depends on the phase of an eigenvector whose reference "
                                  "component is 0, where NumPy's choice of its phase is not "
                                  "known; use a loss of |v|^2 or of v v^H")
    g = gv - np.conjugate(v) * np.real(s)[..., np.newaxis, :]
    turn = np.where(fixed, -1j * np.imag(s) / np.where(fixed, np.real(ref), 1.0), 0.0)
    rows = np.asarray(rows)[..., np.newaxis, :]
    at = np.take_along_axis(g, rows, axis=-2) + turn[..., np.newaxis, :]
    np.put_along_axis(g, rows, at, axis=-2)
    return g


def _eig_gaps(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (complex ``w``)."""
    gap = w[..., np.newaxis, :] - w[..., :, np.newaxis]
    eye = np.eye(w.shape[-1], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, gap))


def eig_adjoint(g, ans):
    """Gradient of ``w, v = np.linalg.eig(a)`` for distinct eigenvalues (of a real ``a``, its
    real part):
    ``v^-T (diag(gw) + F * (v^T gv')) v^T`` with ``F[i, j] = 1 / (w[j] - w[i])`` and ``gv'``
    the adjoint of NumPy's normalisation of the columns at ``gv``."""
    w, v = ans
    inner = _full(g[0], w)[..., np.newaxis, :] * _eye(v)
    if _flows(g[1]):
        gv = _gauge_adjoint(asarray(g[1]), v, _rows_of_eig(v), "eig")
        inner = inner + _eig_gaps(w) * (_t(v) @ gv)
    return _t(np.linalg.inv(v)) @ inner @ _t(v)


def eig_tangent(da, ans):
    """Tangent of ``w, v = np.linalg.eig(a)``: with ``P = v^-1 da v``, ``dw = diag(P)`` and
    ``dv = v (F * P)``, ``F[i, j] = 1 / (w[j] - w[i])``, normalised as NumPy's columns are."""
    w, v = ans
    p = np.linalg.solve(v, da @ v)
    dv = _gauge(v, v @ (_eig_gaps(w) * p), _rows_of_eig(v))
    return GradTuple((_diag(p), dv))


def _eigvectors(a, w):
    """The eigenvectors of ``a`` in the order of its eigenvalues ``w`` (``np.linalg.eigvals``)."""
    found, v = np.linalg.eig(a)
    if not np.allclose(found, w):
        order = np.argmin(np.abs(found[..., np.newaxis, :] - w[..., :, np.newaxis]), axis=-1)
        v = np.take_along_axis(v, order[..., np.newaxis, :], axis=-1)
    return v


def eigvals_adjoint(g, a, w):
    """Gradient of ``w = np.linalg.eigvals(a)`` (distinct eigenvalues): ``v^-T diag(g) v^T``."""
    v = _eigvectors(a, w)
    return _t(np.linalg.inv(v)) @ (asarray(g)[..., :, np.newaxis] * _t(v))


def eigvals_tangent(da, a, w):
    """Tangent of ``w = np.linalg.eigvals(a)``: ``diag(v^-1 da v)``."""
    v = _eigvectors(a, w)
    return _diag(np.linalg.solve(v, da @ v))


def eigh_complex_adjoint(g, ans, uplo="L"):
    """Gradient of ``w, v = np.linalg.eigh(a)`` of a complex ``a`` (distinct eigenvalues):
    ``conj(v) (diag(gw) + F * (v^T gv')) v^T``, ``F[i, j] = 1 / (w[j] - w[i])``, ``gv'`` the
    adjoint of NumPy's phases at ``gv``, folded onto the triangle NumPy reads."""
    w, v = ans
    lower = _lower(uplo)
    inner = np.real(_full(g[0], w))[..., np.newaxis, :] * _eye(v)
    if _flows(g[1]):
        gv = _gauge_adjoint(asarray(g[1]), v, _rows_of_eigh(v, lower), "eigh")
        inner = inner + _gap_inverse(w) * (_t(v) @ gv)
    return _fold_hermitian(np.conjugate(v) @ inner @ _t(v), lower)


def eigh_complex_tangent(da, ans, uplo="L"):
    """Tangent of ``w, v = np.linalg.eigh(a)`` of a complex ``a``: with ``P = v^H dA v``
    (``dA`` the Hermitian matrix NumPy reads), ``dw = Re diag(P)``, ``dv = v (F * P)`` with
    NumPy's phases (NaN for equal eigenvalues)."""
    w, v = ans
    lower = _lower(uplo)
    m = _h(v) @ _hermitian(da, lower) @ v
    with np.errstate(divide="ignore", invalid="ignore"):
        dv = _gauge(v, v @ (_gap_inverse(w) * m), _rows_of_eigh(v, lower))
    return GradTuple((np.real(_diag(m)), dv))


def eigvalsh_complex_adjoint(g, a, uplo="L"):
    """Gradient of ``np.linalg.eigvalsh(a)`` of a complex ``a``: ``conj(v) diag(g) v^T``,
    folded onto the triangle NumPy reads."""
    _, v = np.linalg.eigh(a, UPLO=uplo)
    scaled = np.conjugate(v) * np.real(asarray(g))[..., np.newaxis, :]
    return _fold_hermitian(scaled @ _t(v), _lower(uplo))


def eigvalsh_complex_tangent(da, a, uplo="L"):
    """Tangent of ``np.linalg.eigvalsh(a)`` of a complex ``a``: ``Re diag(v^H dA v)``."""
    _, v = np.linalg.eigh(a, UPLO=uplo)
    return np.real(np.sum(np.conjugate(v) * (_hermitian(da, _lower(uplo)) @ v), axis=-2))


def cholesky_complex_adjoint(g, factor, upper=False):
    """Gradient of the Cholesky factor ``L`` of a complex ``a = L L^H`` (``U = L^H`` for
    ``upper``): ``L^-T Phi(L^T gL) conj(L)^-1``, ``Phi`` the lower triangle with a halved
    diagonal, folded onto the triangle NumPy reads."""
    lo, gl = (_h(factor), _h(g)) if upper else (factor, asarray(g))
    m = _t(lo) @ gl
    phi = np.tril(m) - 0.5 * m * _eye(m)
    left = np.linalg.solve(_t(lo), phi)  # L^-T Phi
    return _fold_hermitian(_t(np.linalg.solve(_h(lo), _t(left))), lower=not upper)


def cholesky_complex_tangent(da, factor, upper=False):
    """Tangent of the Cholesky factor of a complex ``a``: ``L Phi(L^-1 dA L^-H)``."""
    lo = _h(factor) if upper else factor
    left = np.linalg.solve(lo, _hermitian(da, lower=not upper))  # L^-1 dA
    x = np.linalg.solve(lo, _h(left))  # L^-1 dA L^-H (dA Hermitian)
    dl = lo @ (np.tril(x) - 0.5 * x * _eye(x))
    return _h(dl) if upper else dl


def slogdet_complex_adjoint(g, a, ans):
    """Gradient of ``sign, logabsdet = np.linalg.slogdet(a)`` of a complex ``a``: with
    ``t = tr(a^-1 da)``, ``dlogabsdet = Re t`` and ``dsign = i sign Im t``, so the gradient is
    ``(g_log + i Im(g_sign sign)) a^-T``."""
    sign = ans[0]
    scale = np.real(_full(g[1], ans[1])) + 1j * np.imag(_full(g[0], sign) * sign)
    return asarray(scale)[..., np.newaxis, np.newaxis] * _t(np.linalg.inv(a))


def slogdet_complex_tangent(da, a, ans):
    """Tangent of ``np.linalg.slogdet(a)`` of a complex ``a``: ``(i sign Im t, Re t)`` with
    ``t = tr(a^-1 da)``."""
    t = np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)
    return GradTuple((ans[0] * 1j * np.imag(t), np.real(t)))


def svdvals_complex_adjoint(g, a):
    """Gradient of the singular values of a complex ``a``: ``conj(u diag(g) v^H)``."""
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return np.conjugate((u * np.real(asarray(g))[..., np.newaxis, :]) @ vh)


def svdvals_complex_tangent(da, a):
    """Tangent of the singular values of a complex ``a``: ``Re diag(u^H da v)``."""
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return np.real(np.sum(np.conjugate(u) * (da @ _h(vh)), axis=-2))


def svd_complex_adjoint(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Gradient of ``np.linalg.svd(a)`` of a complex ``a`` for distinct nonzero singular
    values: Townsend's formula with conjugate transposes (``svd_adjoint``), the imaginary part
    of ``diag(u^H gu) / s`` on the diagonal of its core, at the conjugate of ``g``, conjugated.
    NumPy fixes no phase of a pair of singular vectors, so the loss must not depend on it
    (``Im(diag(u^H gu + v^H gv)) = 0``). With ``hermitian=True``, the singular values of
    the Hermitian matrix NumPy's eigh sees (its lower triangle, the diagonal's real part)."""
    if hermitian and compute_uv:
        _refuse_hermitian_vectors()
    if hermitian:
        return _fold_hermitian(svdvals_complex_adjoint(g, _hermitian(a)))
    if not compute_uv:
        return svdvals_complex_adjoint(g, a)
    u, s, vh = ans
    rows, cols = np.shape(a)[-2:]
    k = min(rows, cols)
    gs = np.real(_full(g[1], s))
    if not (_flows(g[0]) or _flows(g[2])):
        return np.conjugate((u[..., :k] * gs[..., np.newaxis, :]) @ vh[..., :k, :])
    if full_matrices and rows != cols:
        raise NotImplementedError("the gradient of svd with full_matrices=True needs a square "
                                  "matrix; use full_matrices=False")
    gu, gvh = np.conjugate(_full(g[0], u)), np.conjugate(_full(g[2], vh))
    v, gv = _h(vh), _h(gvh)
    uhgu, vhgv = _h(u) @ gu, vh @ gv
    turn = np.imag(_diag(uhgu))
    scale = np.sqrt(np.sum(np.abs(gu) ** 2, axis=-2) + np.sum(np.abs(gv) ** 2, axis=-2))
    if np.any(np.abs(turn + np.imag(_diag(vhgv))) > 1e-8 * np.maximum(scale, 1e-300)):
        raise NotImplementedError("the gradient of svd of a complex matrix is not supported "
                                  "here: the loss depends on the phases of singular vectors, "
                                  "which NumPy does not fix; use a loss of |u|^2, |v|^2 or of "
                                  "u diag(s) v^H")
    f = _gap_inverse(s, square=True)
    j = f * (uhgu - _h(uhgu))
    kk = f * (vhgv - _h(vhgv))
    core = j * s[..., np.newaxis, :] + (gs + 1j * turn / s)[..., np.newaxis, :] * _eye(j) \
        + s[..., :, np.newaxis] * kk
    out = u @ core @ vh
    if rows > cols:
        out = out + (gu - u @ uhgu) / s[..., np.newaxis, :] @ vh
    if cols > rows:
        out = out + (u / s[..., np.newaxis, :]) @ (_h(gv) - (_h(gv) @ v) @ vh)
    return np.conjugate(out)


def svd_complex_tangent(da, a, compute_uv=True, hermitian=False):
    """Tangent of ``np.linalg.svd(a)`` of a complex ``a``: its singular values (the vectors'
    phases follow no convention a tangent could follow, and forward mode cannot tell whether
    the result depends on them: refused)."""
    if hermitian and not compute_uv:
        return svdvals_complex_tangent(_hermitian(da), _hermitian(a))
    if compute_uv:
        raise NotImplementedError("the forward-mode derivative of svd of a complex matrix is "
                                  "not supported with compute_uv=True: NumPy fixes no phase of "
                                  "its singular vectors; use grad, or compute_uv=False")
    return svdvals_complex_tangent(da, a)


# --- their tangents (forward over reverse: hvp, hessian) --------------------------------------

def _inverse_tangent(vi, dv):
    """The tangent of ``inv(v)`` (``vi``) along ``dv``: ``-vi dv vi``."""
    return -vi @ dv @ vi


def _gauge_adjoint_tangent(gv, dgv, v, dv, rows):
    """The tangent of ``_gauge_adjoint(gv, v, rows)`` along ``dgv`` and ``dv`` (the tangent of
    NumPy's vectors: their reference components stay real)."""
    gv, dgv = asarray(gv), asarray(dgv)
    if not np.iscomplexobj(v):
        gv, dgv = np.real(gv), np.real(dgv)
        s = np.sum(v * gv, axis=-2)[..., np.newaxis, :]
        ds = np.sum(dv * gv + v * dgv, axis=-2)[..., np.newaxis, :]
        return dgv - dv * s - v * ds
    s = np.sum(v * gv, axis=-2)
    ds = np.sum(dv * gv + v * dgv, axis=-2)
    ref, fixed = _reference(v, rows)
    rows = np.asarray(rows)[..., np.newaxis, :]
    dref = np.real(np.take_along_axis(dv, rows, axis=-2)[..., 0, :])
    out = dgv - np.conjugate(dv) * np.real(s)[..., np.newaxis, :] \
        - np.conjugate(v) * np.real(ds)[..., np.newaxis, :]
    r = np.where(fixed, np.real(ref), 1.0)
    dturn = np.where(fixed, -1j * (np.imag(ds) / r - np.imag(s) * dref / (r * r)), 0.0)
    at = np.take_along_axis(out, rows, axis=-2) + dturn[..., np.newaxis, :]
    np.put_along_axis(out, rows, at, axis=-2)
    return out


def _inner_tangent(gw, dgw, gv, dgv, v, dv, w, dw, rows, gaps, name: str):
    """The core ``diag(gw) + F * (v^T gv')`` of eig's and eigh's adjoints and its tangent
    (``F = gaps(w)``, ``F[i, j] = 1 / (w[j] - w[i])``, ``gv'`` NumPy's phases' adjoint)."""
    inner = gw[..., np.newaxis, :] * _eye(v)
    dinner = dgw[..., np.newaxis, :] * _eye(v)
    if _flows(gv) or _flows(dgv):
        gv, dgv = _full(gv, v), _full(dgv, v)
        f = gaps(w)
        df = -f * f * (dw[..., np.newaxis, :] - dw[..., :, np.newaxis])
        g1 = _gauge_adjoint(gv, v, rows, name)
        dg1 = _gauge_adjoint_tangent(gv, dgv, v, dv, rows)
        inner = inner + f * (_t(v) @ g1)
        dinner = dinner + df * (_t(v) @ g1) + f * (_t(dv) @ g1 + _t(v) @ dg1)
    return inner, dinner


def eigvals_adjoint_tangent(g, da, a, w):
    """Term of ``a`` in the tangent of ``eigvals_adjoint(g, a, w) = v^-T diag(g) v^T`` (which
    does not depend on the scale or phase of ``v``'s columns: any tangent of them serves)."""
    v = _eigvectors(a, w)
    vi = np.linalg.inv(v)
    dv = v @ (_eig_gaps(w) * (vi @ da @ v))
    gt = asarray(g)[..., :, np.newaxis] * _t(v)  # diag(g) v^T
    return _t(_inverse_tangent(vi, dv)) @ gt + _t(vi) @ (asarray(g)[..., :, np.newaxis] * _t(dv))


def eig_adjoint_tangent(dg, dres, g, res):
    """Tangent of ``eig_adjoint(g, (w, v)) = v^-T inner v^T`` along the tangents of ``g`` and
    of NumPy's ``(w, v)``."""
    w, v = res
    dw, dv = _full(dres[0], w), _full(dres[1], v)
    vi = np.linalg.inv(v)
    inner, dinner = _inner_tangent(_full(g[0], w), _full(dg[0], w), g[1], dg[1], v, dv, w, dw,
                                   _rows_of_eig(v), _eig_gaps, "eig")
    return _t(_inverse_tangent(vi, dv)) @ inner @ _t(v) + _t(vi) @ dinner @ _t(v) \
        + _t(vi) @ inner @ _t(dv)


def eigh_complex_adjoint_tangent(dg, dres, g, res, uplo="L"):
    """Tangent of ``eigh_complex_adjoint(g, (w, v), uplo) = fold(conj(v) inner v^T)`` along
    the tangents of ``g`` and of NumPy's ``(w, v)``."""
    w, v = res
    lower = _lower(uplo)
    dw, dv = np.real(_full(dres[0], w)), _full(dres[1], v)
    inner, dinner = _inner_tangent(np.real(_full(g[0], w)), np.real(_full(dg[0], w)), g[1],
                                   dg[1], v, dv, w, dw, _rows_of_eigh(v, lower), _gap_inverse,
                                   "eigh")
    out = np.conjugate(dv) @ inner @ _t(v) + np.conjugate(v) @ dinner @ _t(v) \
        + np.conjugate(v) @ inner @ _t(dv)
    return _fold_hermitian(out, lower)


def eigvalsh_complex_adjoint_tangent(g, da, a, uplo="L"):
    """Term of ``a`` in the tangent of ``eigvalsh_complex_adjoint(g, a) =
    fold(conj(v) diag(g) v^T)`` (phase-free: any tangent of ``v`` serves)."""
    lower = _lower(uplo)
    w, v = np.linalg.eigh(a, UPLO=uplo)
    with np.errstate(divide="ignore", invalid="ignore"):
        dv = v @ (_gap_inverse(w) * (_h(v) @ _hermitian(da, lower) @ v))
    g = np.real(asarray(g))[..., np.newaxis, :]
    return _fold_hermitian((np.conjugate(dv) * g) @ _t(v) + (np.conjugate(v) * g) @ _t(dv),
                           lower)


def slogdet_complex_adjoint_tangent(g, dg, da, dres, a, res):
    """Tangent of ``slogdet_complex_adjoint(g, a, res) = c a^-T``,
    ``c = Re(g_log) + i Im(g_sign sign)``."""
    sign = res[0]
    gs, dgs = _full(g[0], sign), _full(dg[0], sign)
    c = np.real(_full(g[1], res[1])) + 1j * np.imag(gs * sign)
    dc = np.real(_full(dg[1], res[1])) + 1j * np.imag(dgs * sign + gs * _full(dres[0], sign))
    inv = np.linalg.inv(a)
    return asarray(dc)[..., np.newaxis, np.newaxis] * _t(inv) \
        + asarray(c)[..., np.newaxis, np.newaxis] * _t(_inverse_tangent(inv, da))


def _svd_complex_vectors_tangent(da, u, s, vh):
    """Tangents ``(du, dvh)`` of a complex matrix's singular vectors (reduced), in the phase
    that leaves ``v``'s diagonal of ``v^H dv`` zero: right for anything phase-free."""
    _, du, dv = _singular_vectors_tangent(da, u, s, _h(vh), _h)
    return du, _h(dv)


def svdvals_complex_adjoint_tangent(g, da, a):
    """Term of ``a`` in the tangent of ``svdvals_complex_adjoint(g, a) = conj(u diag(g) v^H)``
    (phase-free)."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    du, dvh = _svd_complex_vectors_tangent(da, u, s, vh)
    g = np.real(asarray(g))[..., np.newaxis, :]
    return np.conjugate((du * g) @ vh + (u * g) @ dvh)


def svd_complex_adjoint_tangent(g, dg, res, dres, a, da, full_matrices=True, compute_uv=True,
                                hermitian=False):
    """Tangent of ``svd_complex_adjoint`` for the singular values alone."""
    if hermitian and not compute_uv:
        h = _hermitian(a)
        return _fold_hermitian(svdvals_complex_adjoint(dg, h)
                               + svdvals_complex_adjoint_tangent(g, _hermitian(da), h))
    if compute_uv:
        raise NotImplementedError("second derivatives through the singular vectors of a "
                                  "complex matrix are not supported yet (through its singular "
                                  "values, compute_uv=False, they are)")
    return svdvals_complex_adjoint(dg, a) + svdvals_complex_adjoint_tangent(g, da, a)


def cholesky_complex_adjoint_tangent(dg, dfactor, g, factor, upper=False):
    """Tangent of ``cholesky_complex_adjoint(g, factor, upper) =
    fold(L^-T Phi(L^T gL) conj(L)^-1)``."""
    lo, gl = (_h(factor), _h(g)) if upper else (factor, asarray(g))
    dlo, dgl = (_h(dfactor), _h(dg)) if upper else (asarray(dfactor), asarray(dg))
    eye = _eye(lo)
    inv = np.linalg.inv(lo)
    dinv = _inverse_tangent(inv, dlo)
    m = _t(lo) @ gl
    dm = _t(dlo) @ gl + _t(lo) @ dgl
    phi, dphi = np.tril(m) - 0.5 * m * eye, np.tril(dm) - 0.5 * dm * eye
    out = _t(dinv) @ phi @ np.conjugate(inv) + _t(inv) @ dphi @ np.conjugate(inv) \
        + _t(inv) @ phi @ np.conjugate(dinv)
    return _fold_hermitian(out, lower=not upper)


# --- scipy.linalg (real matrices; SciPy imported where called: it is optional) -----------------

def _scipy_linalg(name: str, *values):
    """``scipy.linalg``, once ``values`` are known not to be Dask arrays (SciPy would compute
    them at once, behind the graph's back)."""
    if any(is_lazy(v) for v in values):
        raise TypeError(f"scipy.linalg.{name} computes Dask arrays at once (SciPy converts them "
                        "to NumPy): compute them first (x.compute()), or use np.linalg's "
                        "function, which Dask keeps lazy")
    import scipy.linalg
    return scipy.linalg


def _columns(v, like):
    """``v`` as a matrix of columns where ``like`` (the right-hand side) is a vector."""
    v = asarray(v)
    return v[..., np.newaxis] if np.ndim(like) == 1 else v


def _uncolumns(v, like):
    return v[..., 0] if np.ndim(like) == 1 else v


_TRANS = {0: "N", 1: "T", 2: "C", "N": "N", "T": "T", "C": "C"}


def _read_triangle(m, lower: bool, unit: bool):
    """What ``solve_triangular`` reads of ``m``: one triangle, without the diagonal for
    ``unit_diagonal``."""
    t = np.tril(m) if lower else np.triu(m)
    return t - t * _eye(t) if unit else t


def solve_triangular_adjoint(g, a, b, x, trans=0, lower=False, unit_diagonal=False):
    """Gradients ``(ga, gb)`` of ``x = scipy.linalg.solve_triangular(a, b, trans, lower,
    unit_diagonal)``, ``op(T) x = b``: ``gb = op(T)^-T g`` (one triangular solve) and
    ``ga = -gb x^T`` (transposed back through ``op``) on the triangle it reads."""
    sla = _scipy_linalg("solve_triangular", a, b)
    op = _TRANS[trans]
    gm, xm = _columns(g, b), _columns(x, b)
    gb = sla.solve_triangular(a, gm, trans="N" if op != "N" else "T", lower=lower,
                              unit_diagonal=unit_diagonal)
    gop = -gb @ _t(xm)
    ga = gop if op == "N" else _t(gop)
    return _read_triangle(ga, lower, unit_diagonal), _uncolumns(gb, b)


def solve_triangular_tangent(da, db, a, b, x, trans=0, lower=False, unit_diagonal=False):
    """Tangent of ``scipy.linalg.solve_triangular``: ``op(T)^-1 (db - op(dT) x)``."""
    sla = _scipy_linalg("solve_triangular", a, b, da, db)
    dt = _read_triangle(tangent_array(da, a), lower, unit_diagonal)
    dop = dt if _TRANS[trans] == "N" else _t(dt)
    rhs = _columns(tangent_array(db, b), b) - dop @ _columns(x, b)
    return _uncolumns(sla.solve_triangular(a, rhs, trans=trans, lower=lower,
                                           unit_diagonal=unit_diagonal), b)


def _solved_matrix(a, lower, assume_a):
    """``(m, fold)``: the matrix ``scipy.linalg.solve(a, b, lower, assume_a)`` solves with (from
    what it reads of ``a``), and the map of a gradient for it back onto what it read."""
    if assume_a in (None, "gen", "general"):
        return a, lambda s: s
    if assume_a in ("sym", "symmetric", "her", "hermitian", "pos", "positive definite"):
        return _sym(a, lower), lambda s: _fold(s, lower)  # (real: one triangle, mirrored)
    if assume_a in ("upper triangular", "lower triangular"):
        tri = np.tril if assume_a == "lower triangular" else np.triu
        return tri(a), tri
    if assume_a == "diagonal":
        return _diag(a)[..., np.newaxis, :] * _eye(a), lambda s: _diag(s)[..., np.newaxis, :] \
            * _eye(s)
    raise NotImplementedError("the gradient of scipy.linalg.solve is not supported yet with "
                              f"assume_a={assume_a!r}")


def scipy_solve_adjoint(g, a, b, x, lower=False, assume_a=None, transposed=False):
    """Gradients ``(ga, gb)`` of ``x = scipy.linalg.solve(a, b, ...)``, ``op(m) x = b`` with
    ``m`` what it reads of ``a``: ``gb = op(m)^-T g``, ``ga = fold(-gb x^T)`` (transposed back
    for ``transposed=True``)."""
    _scipy_linalg("solve", a, b)
    m, fold = _solved_matrix(a, lower, assume_a)
    op = _t(m) if transposed else m
    gm, xm = _columns(g, b), _columns(x, b)
    gb = np.linalg.solve(_t(op), gm)
    gop = -gb @ _t(xm)
    return fold(_t(gop) if transposed else gop), _uncolumns(gb, b)


def scipy_solve_tangent(da, db, a, b, x, lower=False, assume_a=None, transposed=False):
    """Tangent of ``scipy.linalg.solve``: ``op(m)^-1 (db - op(dm) x)``."""
    _scipy_linalg("solve", a, b, da, db)
    m, _ = _solved_matrix(a, lower, assume_a)
    dm, _ = _solved_matrix(tangent_array(da, a), lower, assume_a)
    op, dop = (_t(m), _t(dm)) if transposed else (m, dm)
    rhs = _columns(tangent_array(db, b), b) - dop @ _columns(x, b)
    return _uncolumns(np.linalg.solve(op, rhs), b)


def scipy_cholesky_adjoint(g, factor, a, lower=False):
    """Gradient of ``scipy.linalg.cholesky(a, lower)`` (``np.linalg.cholesky``'s, with
    ``upper=not lower``: the triangle it reads)."""
    _scipy_linalg("cholesky", a)
    return cholesky_adjoint(g, factor, not lower)


def scipy_cholesky_tangent(da, factor, a, lower=False):
    _scipy_linalg("cholesky", a, da)
    return cholesky_tangent(tangent_array(da, a), factor, not lower)


def _factor_and_rest(c, lower: bool):
    """``cho_factor``'s matrix split: its Cholesky factor's triangle, and the strict other
    triangle (a copy of the argument's)."""
    return (np.tril(c), np.triu(c, 1)) if lower else (np.triu(c), np.tril(c, -1))


def cho_factor_adjoint(g, ans, a):
    """Gradient of ``(c, lower) = scipy.linalg.cho_factor(a, lower)``: the factor's triangle
    through the Cholesky adjoint, the other triangle (``a``'s own entries) as it is; a solve's
    part already on ``a`` (``FactorGrad``) folded onto the triangle it reads."""
    _scipy_linalg("cho_factor", a)
    c, lower = ans
    dense, solves = _factor_parts(g[0])
    factor = np.tril(c) if lower else np.triu(c)
    out = 0.0
    diagonal = None if is_zero(dense) else _diagonal_only(dense, c)
    if diagonal is not None:  # (a log determinant's: the other triangle gets nothing)
        out = _diagonal_cholesky_adjoint(diagonal, factor, not lower)
    elif not is_zero(dense):
        gfactor, grest = _factor_and_rest(asarray(dense), lower)
        out = cholesky_adjoint(gfactor, factor, not lower) + grest
    if solves is not None:
        out = _plus(out, solves.matrix_part(lower))
    return _full(out, c)


def cho_factor_tangent(da, ans, a):
    """Tangent of ``scipy.linalg.cho_factor``: the factor's tangent in its triangle, ``da``'s
    other triangle."""
    _scipy_linalg("cho_factor", a, da)
    c, lower = ans
    factor, _ = _factor_and_rest(c, lower)
    da = tangent_array(da, a)
    dfactor = cholesky_tangent(da, factor, not lower)
    return GradTuple((_factor_and_rest(dfactor, lower)[0] + _factor_and_rest(da, lower)[1],
                      0.0))


def _lower_factor(c, lower: bool):
    """The lower factor ``L`` (``a = L L^T``) of ``cho_factor``'s matrix."""
    return np.tril(c) if lower else _t(np.triu(c))


class FactorGrad(np.lib.mixins.NDArrayOperatorsMixin):
    """The gradient of a Cholesky factor ``c`` (``cho_factor``'s matrix, or a lower ``L``) held
    as ``dense + pullback(U V^T)``: ``U V^T`` is a gradient already on the matrix ``a = L L^T``
    (a solve's ``-gb x^T``, ``cho_solve_adjoint``), which ``pullback`` takes to the factor's
    triangle (``tril((M + M^T) L)``). The factorization's adjoint (``cho_factor_adjoint``,
    ``cholesky_adjoint``) adds ``U V^T`` to ``a``'s gradient as it is instead of taking it to
    the factor and back: two products of n x n matrices saved, the gradient the same. Added to
    a gradient of the same factor it stays one; any other use reads it as the array it stands
    for (``__array__``), so no rule can misread it."""

    def __init__(self, dense, u, v, c, lower: bool):
        self.dense, self.u, self.v, self.c, self.lower = dense, u, v, c, lower

    def __array__(self, dtype=None, copy=None):
        low = _lower_factor(self.c, self.lower)
        gl = self.u @ _t(_t(low) @ self.v) + self.v @ _t(_t(low) @ self.u)  # (M + M^T) L
        out = np.tril(gl) if self.lower else np.triu(_t(gl))
        if not is_zero(self.dense):
            out = out + self.dense
        return out if dtype is None else out.astype(dtype)

    @property
    def shape(self) -> tuple:
        return np.shape(self.c)

    @property
    def ndim(self) -> int:
        return np.ndim(self.c)

    @property
    def dtype(self):
        return self.c.dtype

    def __getattr__(self, name: str):  # (g.T, g.sum(...), ...: the array's)
        if name.startswith("__") or name in ("dense", "u", "v", "c", "lower"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)

    def matrix_part(self, lower: bool) -> np.ndarray:
        """``U V^T`` folded onto the triangle of ``a`` the factorization reads."""
        return _fold(self.u @ _t(self.v), lower)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.add and method == "__call__" and len(inputs) == 2 and not kwargs:
            a, b = inputs
            mine, other = (a, b) if isinstance(a, FactorGrad) else (b, a)
            if is_zero(other):
                return mine
            if isinstance(other, FactorGrad) and other.c is mine.c:
                return FactorGrad(_plus(mine.dense, other.dense), np.hstack([mine.u, other.u]),
                                  np.hstack([mine.v, other.v]), mine.c, mine.lower)
            if type(other) is np.ndarray and other.shape == mine.shape:
                return FactorGrad(_plus(mine.dense, other), mine.u, mine.v, mine.c, mine.lower)
        inputs = tuple(np.asarray(x) if isinstance(x, FactorGrad) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)


def _plus(a, b):
    return b if is_zero(a) else a if is_zero(b) else a + b


def _factor_parts(g):
    """``(the factor's gradient as an array or 0.0, FactorGrad or None)``."""
    if isinstance(g, FactorGrad):
        return g.dense, g
    return g, None


def cho_solve_adjoint(g, c_and_lower, b, x):
    """Gradients ``((gc, 0), gb)`` of ``x = scipy.linalg.cho_solve((c, lower), b)``,
    ``a x = b`` with ``a = L L^T``: ``gb = a^-1 g`` (the same factor), ``ga = -gb x^T``,
    ``gL = (ga + ga^T) L`` on the factor's triangle of ``c``: a ``FactorGrad`` of a real
    matrix, whose factorization's adjoint takes ``ga`` as it is."""
    c, lower = c_and_lower
    sla = _scipy_linalg("cho_solve", c, b)
    gm, xm = _columns(g, b), _columns(x, b)
    gb = sla.cho_solve((c, lower), gm)
    if type(c) is np.ndarray and c.ndim == 2 and c.dtype.kind == "f" and gb.dtype.kind == "f":
        return GradTuple((FactorGrad(0.0, -gb, np.asarray(xm, dtype=float), c, lower), 0.0)), \
            _uncolumns(gb, b)
    ga = -gb @ _t(xm)
    gl = (ga + _t(ga)) @ _lower_factor(c, lower)
    gc = np.tril(gl) if lower else np.triu(_t(gl))
    return GradTuple((gc, 0.0)), _uncolumns(gb, b)


def cho_solve_tangent(dcl, db, c_and_lower, b, x):
    """Tangent of ``scipy.linalg.cho_solve((c, lower), b)``: ``a^-1 (db - da x)``,
    ``da = dL L^T + L dL^T``."""
    c, lower = c_and_lower
    sla = _scipy_linalg("cho_solve", c, b, db)
    dc = tangent_array(dcl[0] if isinstance(dcl, (tuple, list)) else dcl, c)
    low = _lower_factor(c, lower)
    dlow = _lower_factor(_factor_and_rest(dc, lower)[0], lower)
    da = dlow @ _t(low) + low @ _t(dlow)
    rhs = _columns(tangent_array(db, b), b) - da @ _columns(x, b)
    return _uncolumns(sla.cho_solve((c, lower), rhs), b)


def _general_only(name: str, assume_a):
    if assume_a not in (None, "gen", "general"):
        raise NotImplementedError(f"the gradient of scipy.linalg.{name} is not supported yet "
                                  f"with assume_a={assume_a!r}")


def scipy_inv_adjoint(g, ans, a, assume_a=None):
    """Gradient of ``scipy.linalg.inv(a)``: ``-inv^T g inv^T``."""
    _scipy_linalg("inv", a)
    _general_only("inv", assume_a)
    return -_t(ans) @ g @ _t(ans)


def scipy_inv_tangent(da, ans, a, assume_a=None):
    _scipy_linalg("inv", a, da)
    _general_only("inv", assume_a)
    return -ans @ tangent_array(da, a) @ ans


def scipy_det_adjoint(g, a, ans):
    """Gradient of ``scipy.linalg.det(a)`` (``np.linalg.det``'s)."""
    _scipy_linalg("det", a)
    return det_adjoint(g, a, ans)


def scipy_det_tangent(da, a, ans):
    _scipy_linalg("det", a, da)
    return det_tangent(tangent_array(da, a), a, ans)


# --- their tangents (forward over reverse: hvp, hessian) --------------------------------------

def scipy_solve_adjoint_tangent(dg, da, dx, g, a, b, x, lower=False, assume_a=None,
                                transposed=False):
    """Tangent of ``scipy_solve_adjoint(g, a, b, x, ...)`` (``gb = op(m)^-T g``,
    ``ga = fold(-gb x^T)``): ``dgb = op^-T (dg - dop^T gb)``, ``dga = fold(-dgb x^T - gb dx^T)``
    (``b`` is only read for its shape)."""
    _scipy_linalg("solve", a, b)
    m, fold = _solved_matrix(a, lower, assume_a)
    dm, _ = _solved_matrix(tangent_array(da, a), lower, assume_a)
    op, dop = (_t(m), _t(dm)) if transposed else (m, dm)
    gm, dgm = _columns(g, b), _columns(tangent_array(dg, x), b)
    xm, dxm = _columns(x, b), _columns(tangent_array(dx, x), b)
    gb = np.linalg.solve(_t(op), gm)
    dgb = np.linalg.solve(_t(op), dgm - _t(dop) @ gb)
    dgop = -dgb @ _t(xm) - gb @ _t(dxm)
    return GradTuple((fold(_t(dgop) if transposed else dgop), _uncolumns(dgb, b)))


def solve_triangular_adjoint_tangent(dg, da, dx, g, a, b, x, trans=0, lower=False,
                                     unit_diagonal=False):
    """Tangent of ``solve_triangular_adjoint``: ``dgb = op(T)^-T (dg - op(dT)^T gb)``,
    ``dga = -(dgb x^T + gb dx^T)`` (through ``op``, on the triangle read)."""
    sla = _scipy_linalg("solve_triangular", a, b)
    op = _TRANS[trans]
    dt = _read_triangle(tangent_array(da, a), lower, unit_diagonal)
    dop = dt if op == "N" else _t(dt)
    gm, dgm = _columns(g, b), _columns(tangent_array(dg, x), b)
    xm, dxm = _columns(x, b), _columns(tangent_array(dx, x), b)
    flip = "N" if op != "N" else "T"
    gb = sla.solve_triangular(a, gm, trans=flip, lower=lower, unit_diagonal=unit_diagonal)
    dgb = sla.solve_triangular(a, dgm - _t(dop) @ gb, trans=flip, lower=lower,
                               unit_diagonal=unit_diagonal)
    dgop = -dgb @ _t(xm) - gb @ _t(dxm)
    dga = dgop if op == "N" else _t(dgop)
    return GradTuple((_read_triangle(dga, lower, unit_diagonal), _uncolumns(dgb, b)))


def scipy_cholesky_adjoint_tangent(dg, dfactor, g, factor, a, lower=False):
    _scipy_linalg("cholesky", a)
    return cholesky_adjoint_tangent(dg, dfactor, g, factor, not lower)


def cho_factor_adjoint_tangent(dg, dans, g, ans, a):
    """Tangent of ``cho_factor_adjoint(g, (c, lower), a)``."""
    _scipy_linalg("cho_factor", a)
    c, lower = ans
    factor, _ = _factor_and_rest(c, lower)
    dc = _full(dans[0] if isinstance(dans, (tuple, list)) else dans, c)
    dfactor, _ = _factor_and_rest(dc, lower)
    gfactor, _ = _factor_and_rest(_full(g[0], c), lower)
    dgfactor, dgrest = _factor_and_rest(_full(dg[0], c), lower)
    return cholesky_adjoint_tangent(dgfactor, dfactor, gfactor, factor, not lower) + dgrest


def cho_solve_adjoint_tangent(dg, dcl, dx, g, c_and_lower, b, x):
    """Tangent of ``cho_solve_adjoint(g, (c, lower), b, x)``: with ``a = L L^T``,
    ``dgb = a^-1 (dg - da gb)``, ``dga = -(dgb x^T + gb dx^T)``,
    ``dgL = (dga + dga^T) L + (ga + ga^T) dL``."""
    c, lower = c_and_lower
    sla = _scipy_linalg("cho_solve", c, b)
    dc = tangent_array(dcl[0] if isinstance(dcl, (tuple, list)) else dcl, c)
    low = _lower_factor(c, lower)
    dlow = _lower_factor(_factor_and_rest(dc, lower)[0], lower)
    gm, dgm = _columns(g, b), _columns(tangent_array(dg, x), b)
    xm, dxm = _columns(x, b), _columns(tangent_array(dx, x), b)
    gb = sla.cho_solve((c, lower), gm)
    dgb = sla.cho_solve((c, lower), dgm - (dlow @ _t(low) + low @ _t(dlow)) @ gb)
    ga = -gb @ _t(xm)
    dga = -dgb @ _t(xm) - gb @ _t(dxm)
    dgl = (dga + _t(dga)) @ low + (ga + _t(ga)) @ dlow
    dgc = np.tril(dgl) if lower else np.triu(_t(dgl))
    return GradTuple((GradTuple((dgc, 0.0)), _uncolumns(dgb, b)))


def scipy_inv_adjoint_tangent(dg, dans, g, ans, a, assume_a=None):
    """Tangent of ``-inv^T g inv^T``."""
    _scipy_linalg("inv", a)
    _general_only("inv", assume_a)
    dinv = tangent_array(dans, ans)
    return -(_t(dinv) @ g @ _t(ans) + _t(ans) @ dg @ _t(ans) + _t(ans) @ g @ _t(dinv))


def scipy_det_adjoint_tangent(g, dg, da, ddet, a, ans):
    _scipy_linalg("det", a)
    return det_adjoint(dg, a, ans) + det_adjoint_tangent(g, da, ddet, a, ans)


# the matrix functions of scipy.linalg: primary functions, whose Fréchet derivatives are blocks
# of the function of a block matrix (Higham 2008, 3.2 and 3.6), each of the adjoint at ``a^T``
MATRIX_FUNCTIONS = ("expm", "logm", "sqrtm", "cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm")


def _matrix_function(name: str, ans, a, *values):
    """``scipy.linalg``'s function ``name`` (of one argument); NotImplementedError where the
    result of a real matrix is complex (``sqrtm`` or ``logm`` of a matrix with negative
    eigenvalues): its derivative would leave the real values the rest of the code assumes."""
    if name not in MATRIX_FUNCTIONS:
        raise ValueError(f"not a matrix function of scipy.linalg: {name!r}")
    if isinstance(ans, tuple):
        raise NotImplementedError(f"the gradient of scipy.linalg.{name} is not implemented "
                                  "with disp=False (it returns an error estimate too)")
    sla = _scipy_linalg(name, a, *values)
    if np.iscomplexobj(ans) and not np.iscomplexobj(a):
        raise NotImplementedError(f"the gradient of scipy.linalg.{name} of a real matrix whose "
                                  f"{name} is complex (negative eigenvalues) is not supported: "
                                  "pass a complex matrix (a + 0j)")
    return getattr(sla, name)


def _blocks(rows):
    """The block matrix of these rows of blocks (stacks of matrices)."""
    return np.concatenate([np.concatenate(row, axis=-1) for row in rows], axis=-2)


def _frechet(f, x, e):
    """The Fréchet derivative of the matrix function ``f`` at ``x`` along ``e``: the upper right
    block of ``f([[x, e], [0, x]])``."""
    n = np.shape(x)[-1]
    z = np.zeros_like(x, dtype=np.result_type(x, e))
    return f(_blocks([[x, e], [z, x]]))[..., :n, n:]


def matrix_function_adjoint(g, ans, a, name):
    """Gradient of ``ans = scipy.linalg.<name>(a)`` (``expm``, ``logm``, ``sqrtm``, ``cosm``,
    ...): its Fréchet derivative at ``a^T`` along ``g``."""
    return _frechet(_matrix_function(name, ans, a), _t(a), asarray(g))


def matrix_function_tangent(da, ans, a, name):
    """Tangent of ``scipy.linalg.<name>(a)``: its Fréchet derivative along ``da``."""
    return _frechet(_matrix_function(name, ans, a, da), a, tangent_array(da, a))


def matrix_function_adjoint_tangent(dg, da, g, ans, a, name):
    """Tangent of ``matrix_function_adjoint(g, ans, a, name) = L(a^T, g)``: ``L(a^T, dg)`` and
    the second Fréchet derivative along ``g`` and ``da^T``, the upper right block of the
    function of the 4x4 block matrix with ``a^T`` on its diagonal."""
    f = _matrix_function(name, ans, a)
    x, g, d2 = _t(a), asarray(g), _t(tangent_array(da, a))
    n = np.shape(x)[-1]
    z = np.zeros_like(x, dtype=np.result_type(x, g, d2))
    second = f(_blocks([[x, g, d2, z], [z, x, z, d2], [z, z, x, g], [z, z, z, x]]))
    return _frechet(f, x, tangent_array(dg, g)) + second[..., :n, 3 * n:]


def _lu_parts(lu, piv):
    """``(L, U, perm)`` of ``scipy.linalg.lu_factor``'s result: ``a[perm] = L U``."""
    n = np.shape(lu)[-1]
    perm = np.arange(n)
    for i, p in enumerate(piv):  # (LAPACK's row interchanges, in order)
        perm[i], perm[p] = perm[p], perm[i]
    low = np.tril(lu, -1) + np.eye(n, dtype=lu.dtype)
    return low, np.triu(lu), perm


def _unpermuted(m, perm, axis=0):
    """``out`` with ``m`` the permutation ``perm`` of it along ``axis`` (``out[perm] = m``)."""
    return np.take(m, np.argsort(perm), axis=axis)


def lu_factor_adjoint(g, ans, a):
    """Gradient of ``(lu, piv) = scipy.linalg.lu_factor(a)``, ``a[perm] = L U``:
    ``L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T``, rows put back in ``a``'s order."""
    _scipy_linalg("lu_factor", a)
    low, up, perm = _lu_parts(*ans)
    glu = _full(g[0], ans[0])
    x = np.tril(_t(low) @ np.tril(glu, -1), -1) + np.triu(np.triu(glu) @ _t(up))
    gm = _t(np.linalg.solve(up, _t(np.linalg.solve(_t(low), x))))  # L^-T x U^-T
    return _unpermuted(gm, perm)


def lu_factor_tangent(da, ans, a):
    """Tangent of ``scipy.linalg.lu_factor(a)``: with ``X = L^-1 da[perm] U^-1``,
    ``dL = L tril(X, -1)``, ``dU = triu(X) U``, packed as ``lu`` is."""
    _scipy_linalg("lu_factor", a, da)
    low, up, perm = _lu_parts(*ans)
    dm = tangent_array(da, a)[perm]
    x = _t(np.linalg.solve(_t(up), _t(np.linalg.solve(low, dm))))
    return GradTuple((low @ np.tril(x, -1) + np.triu(x) @ up, 0.0))


def _lu_matrix_gradient(ga, lu_and_piv):
    """The gradient of ``lu_factor``'s packed factors given that of ``a = P L U``:
    ``gL = P^T ga U^T`` below the diagonal, ``gU = L^T P^T ga`` on and above it."""
    low, up, perm = _lu_parts(*lu_and_piv)
    gm = ga[perm]
    return np.tril(gm @ _t(up), -1) + np.triu(_t(low) @ gm)


def lu_solve_adjoint(g, lu_and_piv, b, x, trans=0):
    """Gradients ``((glu, 0), gb)`` of ``x = scipy.linalg.lu_solve((lu, piv), b, trans)``,
    ``op(a) x = b``: ``gb = op(a)^-T g`` (the same factors), ``ga = -gb x^T`` (through
    ``op``), taken to the packed factors."""
    lu, piv = lu_and_piv
    sla = _scipy_linalg("lu_solve", lu, b)
    op = _TRANS[trans]
    gm, xm = _columns(g, b), _columns(x, b)
    gb = sla.lu_solve((lu, piv), gm, trans=0 if op != "N" else 1)
    gop = -gb @ _t(xm)
    ga = gop if op == "N" else _t(gop)
    return GradTuple((_lu_matrix_gradient(ga, lu_and_piv), 0.0)), _uncolumns(gb, b)


def lu_solve_tangent(dlp, db, lu_and_piv, b, x, trans=0):
    """Tangent of ``scipy.linalg.lu_solve``: ``op(a)^-1 (db - op(da) x)``,
    ``da = P (dL U + L dU)``."""
    lu, piv = lu_and_piv
    sla = _scipy_linalg("lu_solve", lu, b, db)
    dlu = tangent_array(dlp[0] if isinstance(dlp, (tuple, list)) else dlp, lu)
    low, up, perm = _lu_parts(lu, piv)
    da = _unpermuted(np.tril(dlu, -1) @ up + low @ np.triu(dlu), perm)
    dop = da if _TRANS[trans] == "N" else _t(da)
    rhs = _columns(tangent_array(db, b), b) - dop @ _columns(x, b)
    return _uncolumns(sla.lu_solve((lu, piv), rhs, trans=trans), b)


def _packed_tangent(dlp, lu):
    """``(dL, dU)`` of a tangent of ``lu_factor``'s ``(lu, piv)`` (zeros where it has none)."""
    dlu = tangent_array(dlp[0] if isinstance(dlp, (tuple, list)) else dlp, lu)
    return np.tril(dlu, -1), np.triu(dlu)


def lu_factor_adjoint_tangent(dg, dans, g, ans, a):
    """Tangent of ``lu_factor_adjoint(g, (lu, piv), a)`` (forward over reverse): with ``x =
    tril(L^T gL, -1) + triu(gU U^T)`` and ``gm = L^-T x U^-T``, ``dgm = L^-T dx U^-T -
    L^-T dL^T gm - gm dU^T U^-T``, ``dx`` the same of the factors' and ``g``'s tangents."""
    _scipy_linalg("lu_factor", a)
    low, up, perm = _lu_parts(*ans)
    glu = _full(g[0] if isinstance(g, (tuple, list)) else g, ans[0])
    dglu = tangent_array(dg[0] if isinstance(dg, (tuple, list)) else dg, ans[0])
    dlow, dup = _packed_tangent(dans, ans[0])
    gl, gu, dgl, dgu = np.tril(glu, -1), np.triu(glu), np.tril(dglu, -1), np.triu(dglu)
    x = np.tril(_t(low) @ gl, -1) + np.triu(gu @ _t(up))
    dx = np.tril(_t(dlow) @ gl + _t(low) @ dgl, -1) + np.triu(dgu @ _t(up) + gu @ _t(dup))

    def inner(m):  # L^-T m U^-T
        return _t(np.linalg.solve(up, _t(np.linalg.solve(_t(low), m))))

    gm = inner(x)
    dgm = inner(dx) - np.linalg.solve(_t(low), _t(dlow) @ gm) \
        - _t(np.linalg.solve(up, dup @ _t(gm)))
    return _unpermuted(dgm, perm)


def lu_solve_adjoint_tangent(dg, dlp, dx, g, lu_and_piv, b, x, trans=0):
    """Tangent of ``lu_solve_adjoint(g, (lu, piv), b, x, trans)``: ``gb = op(a)^-T g`` moves as
    ``op(a)^-T (dg - op(da)^T gb)`` (the same factors), ``ga = -gb x^T`` as its product, and
    the factors' gradient ``tril(P^T ga U^T, -1) + triu(L^T P^T ga)`` with ``ga``, ``L``, ``U``."""
    lu, piv = lu_and_piv
    sla = _scipy_linalg("lu_solve", lu, b)
    op = _TRANS[trans]
    back = 0 if op != "N" else 1
    low, up, perm = _lu_parts(lu, piv)
    dlow, dup = _packed_tangent(dlp, lu)
    da = _unpermuted(dlow @ up + low @ dup, perm)
    dop = da if op == "N" else _t(da)
    gm, xm = _columns(_full(g, b), b), _columns(x, b)
    dgm, dxm = _columns(tangent_array(dg, b), b), _columns(tangent_array(dx, x), b)
    gb = sla.lu_solve((lu, piv), gm, trans=back)
    dgb = sla.lu_solve((lu, piv), dgm - _t(dop) @ gb, trans=back)
    gop, dgop = -gb @ _t(xm), -dgb @ _t(xm) - gb @ _t(dxm)
    ga, dga = (gop, dgop) if op == "N" else (_t(gop), _t(dgop))
    gp, dgp = ga[perm], dga[perm]
    dglu = np.tril(dgp @ _t(up) + gp @ _t(dup), -1) + np.triu(_t(dlow) @ gp + _t(low) @ dgp)
    return GradTuple((GradTuple((dglu, 0.0)), _uncolumns(dgb, b)))


# --- scipy.linalg's banded solves (the matrix stored by diagonals; never made dense) ----------

def _band_span(offset: int, n: int):
    """The columns ``j`` of a stored diagonal of ``offset`` (its entries ``A[j + offset, j]``)
    inside an ``n x n`` matrix."""
    return max(0, -offset), min(n, n - offset)


def _band_times(ab, offsets, x, symmetric=False):
    """``A @ x`` for ``x`` a matrix of columns and ``A`` stored by diagonals: row ``k`` of ``ab``
    holds ``A[j + offsets[k], j]`` at column ``j`` (a symmetric ``A``: one triangle of it)."""
    n = np.shape(ab)[-1]
    y = np.zeros(np.shape(x), np.result_type(ab, x, float))
    for k, o in enumerate(offsets):
        lo, hi = _band_span(o, n)
        y[lo + o:hi + o] += ab[k, lo:hi, np.newaxis] * x[lo:hi]
        if symmetric and o != 0:
            y[lo:hi] += ab[k, lo:hi, np.newaxis] * x[lo + o:hi + o]
    return y


def _band_outer(p, q, offsets, symmetric=False):
    """The entries of ``p q^T`` (matrices of columns) that a band storage holds: row ``k``,
    column ``j``, ``p[j + o] . q[j]`` (and ``+ p[j] . q[j + o]`` off the diagonal of a
    symmetric matrix, whose stored entry stands for both); zero where no entry is."""
    n = np.shape(p)[0]
    out = np.zeros((len(offsets), n), np.result_type(p, q, float))
    for k, o in enumerate(offsets):
        lo, hi = _band_span(o, n)
        out[k, lo:hi] = np.sum(p[lo + o:hi + o] * q[lo:hi], axis=-1)
        if symmetric and o != 0:
            out[k, lo:hi] += np.sum(p[lo:hi] * q[lo + o:hi + o], axis=-1)
    return out


def _band_transposed(ab, lower: int, upper: int):
    """The band storage of ``A^T`` (``upper`` diagonals below, ``lower`` above) from ``A``'s."""
    n = np.shape(ab)[-1]
    out = np.zeros_like(ab)
    for k in range(lower + upper + 1):
        s = k - lower  # A^T[j + s, j] = A[j, j + s]
        lo, hi = _band_span(s, n)
        out[k, lo:hi] = ab[upper + lower - k, lo + s:hi + s]
    return out


def _general_band(l_and_u, ab):
    lower, upper = (int(v) for v in l_and_u)
    if np.ndim(ab) != 2:
        raise NotImplementedError("the gradient of scipy.linalg.solve_banded is implemented "
                                  "for one matrix (a 2-D ab)")
    return lower, upper, [k - upper for k in range(lower + upper + 1)]


def solve_banded_adjoint(g, l_and_u, ab, b, x):
    """Gradients ``(gab, gb)`` of ``x = scipy.linalg.solve_banded((l, u), ab, b)``: ``gb =
    A^-T g`` (one banded solve with ``A^T``'s storage), ``gab = -gb x^T`` on the stored
    diagonals (zero at the corners the storage pads)."""
    sla = _scipy_linalg("solve_banded", ab, b)
    lower, upper, offsets = _general_band(l_and_u, ab)
    gb = sla.solve_banded((upper, lower), _band_transposed(ab, lower, upper), _columns(g, b))
    return -_band_outer(gb, _columns(x, b), offsets), _uncolumns(gb, b)


def solve_banded_tangent(dab, db, l_and_u, ab, b, x):
    """Tangent of ``scipy.linalg.solve_banded``: ``A^-1 (db - dA x)``."""
    sla = _scipy_linalg("solve_banded", ab, b, dab, db)
    lower, upper, offsets = _general_band(l_and_u, ab)
    rhs = _columns(tangent_array(db, b), b) \
        - _band_times(tangent_array(dab, ab), offsets, _columns(x, b))
    return _uncolumns(sla.solve_banded((lower, upper), ab, rhs), b)


def solve_banded_adjoint_tangent(dg, dab, dx, g, l_and_u, ab, b, x):
    """Tangent of ``solve_banded_adjoint``: ``dgb = A^-T (dg - dA^T gb)``,
    ``dgab = -(dgb x^T + gb dx^T)`` on the stored diagonals."""
    sla = _scipy_linalg("solve_banded", ab, b)
    lower, upper, offsets = _general_band(l_and_u, ab)
    abt = _band_transposed(ab, lower, upper)
    dabt = _band_transposed(tangent_array(dab, ab), lower, upper)
    back = [k - lower for k in range(lower + upper + 1)]
    gm, dgm = _columns(_full(g, x), b), _columns(tangent_array(dg, x), b)
    xm, dxm = _columns(x, b), _columns(tangent_array(dx, x), b)
    gb = sla.solve_banded((upper, lower), abt, gm)
    dgb = sla.solve_banded((upper, lower), abt, dgm - _band_times(dabt, back, gb))
    dgab = -(_band_outer(dgb, xm, offsets) + _band_outer(gb, dxm, offsets))
    return GradTuple((dgab, _uncolumns(dgb, b)))


def _symmetric_band(ab, lower: bool):
    """The offsets of ``solveh_banded``'s rows: its upper form holds ``A[j + k - u, j]``, its
    lower form ``A[j + k, j]``."""
    if np.ndim(ab) != 2:
        raise NotImplementedError("the gradient of scipy.linalg.solveh_banded is implemented "
                                  "for one matrix (a 2-D ab)")
    rows = np.shape(ab)[0]
    return list(range(rows)) if lower else [k - rows + 1 for k in range(rows)]


def solveh_banded_adjoint(g, ab, b, x, lower=False):
    """Gradients ``(gab, gb)`` of ``x = scipy.linalg.solveh_banded(ab, b, lower=lower)``
    (``A`` symmetric positive definite, one triangle stored): ``gb = A^-1 g`` (the same
    storage), ``gab = -(gb x^T + x gb^T)`` off the diagonal, ``-gb x^T`` on it."""
    sla = _scipy_linalg("solveh_banded", ab, b)
    offsets = _symmetric_band(ab, lower)
    gb = sla.solveh_banded(ab, _columns(g, b), lower=lower)
    return -_band_outer(gb, _columns(x, b), offsets, True), _uncolumns(gb, b)


def solveh_banded_tangent(dab, db, ab, b, x, lower=False):
    """Tangent of ``scipy.linalg.solveh_banded``: ``A^-1 (db - dA x)``."""
    sla = _scipy_linalg("solveh_banded", ab, b, dab, db)
    offsets = _symmetric_band(ab, lower)
    rhs = _columns(tangent_array(db, b), b) \
        - _band_times(tangent_array(dab, ab), offsets, _columns(x, b), True)
    return _uncolumns(sla.solveh_banded(ab, rhs, lower=lower), b)


def solveh_banded_adjoint_tangent(dg, dab, dx, g, ab, b, x, lower=False):
    """Tangent of ``solveh_banded_adjoint``: ``dgb = A^-1 (dg - dA gb)``,
    ``dgab = -(dgb x^T + gb dx^T)`` folded as the adjoint folds."""
    sla = _scipy_linalg("solveh_banded", ab, b)
    offsets = _symmetric_band(ab, lower)
    gm, dgm = _columns(_full(g, x), b), _columns(tangent_array(dg, x), b)
    xm, dxm = _columns(x, b), _columns(tangent_array(dx, x), b)
    gb = sla.solveh_banded(ab, gm, lower=lower)
    dgb = sla.solveh_banded(
        ab, dgm - _band_times(tangent_array(dab, ab), offsets, gb, True), lower=lower)
    dgab = -(_band_outer(dgb, xm, offsets, True) + _band_outer(gb, dxm, offsets, True))
    return GradTuple((dgab, _uncolumns(dgb, b)))


# --- scipy.linalg's decompositions, in NumPy's terms -------------------------------------------

def _eigh_frame(a, ans, b, eigvals_only, subset_by_index, subset_by_value):
    """``(w, v, picked)``: the whole eigendecomposition of what ``scipy.linalg.eigh`` reads of
    ``a`` (``v``'s columns with the signs of ``ans``'s vectors) and the indices of the
    eigenvalues ``ans`` holds; NotImplementedError for the generalized problem (``b``)."""
    if b is not None:
        raise NotImplementedError("the gradient of scipy.linalg.eigh is not implemented for "
                                  "the generalized problem (b given)")
    w, v = np.linalg.eigh(a)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        picked = np.arange(int(lo), int(hi) + 1)
    elif subset_by_value is not None:
        lo, hi = subset_by_value
        picked = np.flatnonzero((w > lo) & (w <= hi))
    else:
        picked = np.arange(np.shape(w)[-1])
    if not eigvals_only:
        mine = ans[1]
        signs = np.sign(np.sum(v[..., picked] * mine, axis=-2))
        v[..., picked] = v[..., picked] * np.where(signs == 0, 1.0, signs)[..., np.newaxis, :]
    return w, v, picked


def scipy_eigh_adjoint(g, ans, a, b=None, lower=True, eigvals_only=False,
                       subset_by_index=None, subset_by_value=None):
    """Gradient of ``scipy.linalg.eigh`` (and ``eigvalsh``, ``eigvals_only=True``) for
    distinct eigenvalues: NumPy's ``eigh`` adjoint on the whole decomposition, the gradient of
    the eigenvalues (and vectors) outside a subset zero."""
    _scipy_linalg("eigh", a)
    whole = subset_by_index is None and subset_by_value is None
    if eigvals_only and whole and b is None:
        return eigvalsh_adjoint(g, a, "L" if lower else "U")
    if not eigvals_only and whole and b is None:
        return eigh_adjoint(g, ans, "L" if lower else "U")
    w, v, picked = _eigh_frame(_sym(asarray(a), lower), ans, b, eigvals_only, subset_by_index,
                               subset_by_value)
    gw, gv = np.zeros_like(w), np.zeros_like(v)
    if eigvals_only:
        gw[..., picked] = _full(g, ans)
    else:
        gw[..., picked] = _full(g[0], ans[0])
        gv[..., picked] = _full(g[1], ans[1])
    return eigh_adjoint(GradTuple((gw, gv)), (w, v), "L" if lower else "U")


def scipy_eigh_tangent(da, ans, a, b=None, lower=True, eigvals_only=False,
                       subset_by_index=None, subset_by_value=None):
    """Tangent of ``scipy.linalg.eigh`` (NumPy's, restricted to the subset computed)."""
    _scipy_linalg("eigh", a, da)
    uplo = "L" if lower else "U"
    da = tangent_array(da, a)
    if subset_by_index is None and subset_by_value is None and b is None:
        return eigvalsh_tangent(da, a, uplo) if eigvals_only else eigh_tangent(da, ans, uplo)
    w, v, picked = _eigh_frame(_sym(asarray(a), lower), ans, b, eigvals_only, subset_by_index,
                               subset_by_value)
    dw, dv = eigh_tangent(da, (w, v), uplo)
    return dw[..., picked] if eigvals_only else GradTuple((dw[..., picked], dv[..., picked]))


def scipy_eigh_adjoint_tangent(dg, dres, da, g, res, a, b=None, lower=True,
                               eigvals_only=False, subset_by_index=None, subset_by_value=None):
    """Tangent of ``scipy_eigh_adjoint``: NumPy's, on the whole decomposition."""
    _scipy_linalg("eigh", a)
    uplo = "L" if lower else "U"
    whole = subset_by_index is None and subset_by_value is None
    if whole and b is None:
        if eigvals_only:
            return eigvalsh_adjoint(dg, a, uplo) + eigvalsh_adjoint_tangent(g, da, a, uplo)
        return eigh_adjoint_tangent(dg, dres, g, res, uplo)
    w, v, picked = _eigh_frame(_sym(asarray(a), lower), res, b, eigvals_only, subset_by_index,
                               subset_by_value)

    def whole_gradient(h):
        hw, hv = np.zeros_like(w), np.zeros_like(v)
        if eigvals_only:
            hw[..., picked] = _full(h, res)
        else:
            hw[..., picked] = _full(h[0], res[0])
            hv[..., picked] = _full(h[1], res[1])
        return GradTuple((hw, hv))

    dwhole = eigh_tangent(tangent_array(da, a), (w, v), uplo)
    return eigh_adjoint_tangent(whole_gradient(dg), dwhole, whole_gradient(g), (w, v), uplo)


_QR_MODES = {"full": "complete", "economic": "reduced", "r": "r"}


def _qr_frame(ans, a, mode, pivoting):
    """``(numpy_mode, factors, a_read)``: scipy.linalg.qr's result in np.linalg.qr's terms
    (``a``'s columns permuted for ``pivoting``); NotImplementedError for mode 'raw'."""
    if mode not in _QR_MODES:
        raise NotImplementedError(f"the gradient of scipy.linalg.qr is not implemented for "
                                  f"mode={mode!r}")
    items = tuple(ans)
    perm = items[-1] if pivoting else None
    factors = items[:-1] if pivoting else items
    read = a if perm is None else asarray(a)[..., perm]
    return _QR_MODES[mode], (factors[0] if mode == "r" else tuple(factors)), read, perm


def _qr_gradient_frame(g, mode):
    """A gradient (or tangent) of scipy.linalg.qr's result in np.linalg.qr's terms."""
    items = tuple(g)
    return items[0] if mode == "r" else GradTuple(items[:2])


def scipy_qr_adjoint(g, ans, a, mode="full", pivoting=False):
    """Gradient of ``scipy.linalg.qr(a, mode=, pivoting=)`` (NumPy's modes 'complete',
    'reduced', 'r'; with pivoting, of ``a[:, p] = q r``, taken back through the permutation)."""
    _scipy_linalg("qr", a)
    numpy_mode, factors, read, perm = _qr_frame(ans, a, mode, pivoting)
    ga = qr_adjoint(_qr_gradient_frame(g, mode), factors, read, numpy_mode)
    return ga if perm is None else _unpermuted(ga, perm, -1)


def scipy_qr_tangent(da, ans, a, mode="full", pivoting=False):
    """Tangent of ``scipy.linalg.qr`` (the permutation, piecewise constant, has none)."""
    _scipy_linalg("qr", a, da)
    numpy_mode, factors, read, perm = _qr_frame(ans, a, mode, pivoting)
    da = tangent_array(da, a)
    out = qr_tangent(da if perm is None else da[..., perm], factors, read, numpy_mode)
    items = (out,) if mode == "r" else tuple(out)
    return GradTuple((*items, 0.0) if pivoting else items)


def scipy_qr_adjoint_tangent(g, dg, ans, dans, a, da, mode="full", pivoting=False):
    """Tangent of ``scipy_qr_adjoint``."""
    _scipy_linalg("qr", a)
    numpy_mode, factors, read, perm = _qr_frame(ans, a, mode, pivoting)
    dfactors = _qr_gradient_frame(dans, mode)
    da = tangent_array(da, a)
    out = qr_adjoint_tangent(_qr_gradient_frame(g, mode),
                             _qr_gradient_frame(dg, mode), factors, dfactors, read,
                             da if perm is None else da[..., perm], numpy_mode)
    return out if perm is None else _unpermuted(out, perm, -1)


# --- scipy.linalg's special matrices (constructions: their gradients are gathers) ------------

def _block_spans(arrs):
    """The (rows, columns) slices of each block of ``scipy.linalg.block_diag(*arrs)`` (an
    argument of 0 or 1 axes is one row)."""
    spans, r, c = [], 0, 0
    for x in arrs:
        shape = np.shape(x)
        if len(shape) > 2:
            raise NotImplementedError("the gradient of scipy.linalg.block_diag is implemented "
                                      "for blocks of at most 2 axes")
        rows, cols = shape if len(shape) == 2 else (1, shape[0] if shape else 1)
        spans.append((slice(r, r + rows), slice(c, c + cols)))
        r, c = r + rows, c + cols
    return spans


def _present(arrs):
    """The arguments before the first ``None`` (the template's absent ones)."""
    ends = [i for i, x in enumerate(arrs) if x is None]
    return arrs[:ends[0]] if ends else arrs


def unblock_diag(g, index, *arrs):
    """The gradient of block ``index`` of ``scipy.linalg.block_diag(*arrs)``: its block of
    ``g``, in the argument's shape (``arrs`` ends at the first ``None``: absent ones)."""
    rows, cols = _block_spans(_present(arrs))[index]
    return np.reshape(asarray(g)[rows, cols], np.shape(arrs[index]))


def into_block_diag(ans, index, t, *arrs):
    """The tangent of ``scipy.linalg.block_diag(*arrs)`` along block ``index``'s tangent ``t``:
    zeros but that block."""
    arrs = _present(arrs)
    rows, cols = _block_spans(arrs)[index]
    out = np.zeros(np.shape(ans), np.result_type(ans, asarray(t), float))
    out[rows, cols] = np.reshape(tangent_array(t, arrs[index]), (rows.stop - rows.start,
                                                                 cols.stop - cols.start))
    return out


def _vector(name, v):
    v = np.atleast_1d(asarray(v))
    if v.ndim != 1:
        raise NotImplementedError(f"the gradient of scipy.linalg.{name} is implemented for "
                                  "1-D arguments")
    return v


def _diagonal_sums(g, offsets):
    """The sums of ``g``'s diagonals ``offsets`` (``g[i + k, i]`` for ``k`` of them, ``k``
    below the main diagonal)."""
    return np.array([np.trace(g, offset=-k) for k in offsets], dtype=np.result_type(g, float))


def toeplitz_adjoint(g, c, r=None, wrt=0):
    """Gradient for ``c`` (``wrt=0``) or ``r`` of ``t = scipy.linalg.toeplitz(c, r)``,
    ``t[i, j] = c[i - j]`` on and below the diagonal, ``r[j - i]`` above it (``r[0]`` is not
    read): the sums of the diagonals. Without ``r`` (``r = c``, real), ``c`` takes both."""
    c, g = _vector("toeplitz", c), asarray(g)
    if wrt == 1:
        r = _vector("toeplitz", r)
        return np.concatenate([[0.0], _diagonal_sums(_t(g), range(1, len(r)))])
    gc = _diagonal_sums(g, range(len(c)))
    if r is None:
        gc[1:] = gc[1:] + _diagonal_sums(_t(g), range(1, len(c)))
    return gc


def circulant_adjoint(g, c):
    """Gradient of ``scipy.linalg.circulant(c)``, ``C[i, j] = c[(i - j) mod n]``: the sums of
    the wrapped diagonals."""
    c = _vector("circulant", c)
    g = asarray(g)
    n = len(c)
    rows = np.arange(n)
    return np.array([np.sum(g[rows, (rows - k) % n]) for k in range(n)],
                    dtype=np.result_type(g, float))
