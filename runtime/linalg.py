"""Runtime helpers of the linalg rules (NumPy only).

Matrices may be stacked: the last two axes are the matrix, leading axes are a batch. Gradients
of real inputs only; the decompositions assume the conditions under which they are smooth
(distinct eigen- and singular values, full rank), as other autodiff systems do.
"""

from __future__ import annotations

import operator
import string

import numpy as np

from runtime.broadcast import unbroadcast
from runtime.containers import GradList, GradTuple


def _is_zero(g) -> bool:
    """True for the zero gradient of an element nothing flowed into (a Python 0)."""
    return type(g) in (int, float) and g == 0


def _flows(g) -> bool:
    """True when the gradient ``g`` of one element of a tuple result is not all zeros."""
    return not _is_zero(g) and bool(np.any(g))


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
    if _is_zero(g):
        return np.zeros(np.shape(like), dtype=like.dtype)
    return np.asarray(g)


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
    return np.transpose(r, np.argsort(source))


def inner_adjoint(g, a, b, wrt=0):
    """Gradient of ``np.inner(a, b)`` (a product when either is a scalar)."""
    x, y = (a, b) if wrt == 0 else (b, a)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.sum(g * y) if np.ndim(x) == 0 else g * y
    if wrt == 1:  # inner(b, a) is inner(a, b) with its two groups of axes swapped
        na = np.ndim(a) - 1
        g = np.moveaxis(np.asarray(g), list(range(na)), list(range(np.ndim(g) - na, np.ndim(g))))
    return tensordot_adjoint(g, x, y, ([-1], [-1]), 0)


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


def multi_dot_adjoint(g, arrays):
    """Gradients of ``np.linalg.multi_dot(arrays)``, one per array: each is the product of
    everything left of it (transposed), ``g``, and everything right of it (transposed)."""
    mats = [np.asarray(x) for x in arrays]
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
    if isinstance(arrays, np.ndarray):
        return np.stack(grads)
    return GradList(grads) if isinstance(arrays, list) else GradTuple(grads)


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
    g = np.asarray(g)
    if keepdims:
        g = np.squeeze(g, axis=a1)
    x, y, ax, ay = (x1, x2, a1, a2) if wrt == 0 else (x2, x1, a2, a1)
    gx = unbroadcast(g[..., np.newaxis] * np.moveaxis(y, ay, -1), np.moveaxis(x, ax, -1))
    return np.moveaxis(gx, -1, ax)


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


# --- diagonals ----------------------------------------------------------------------------------

def undiagonal(g, like, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.diagonal(like, offset, axis1, axis2)``: zeros with ``g`` (diagonal
    last) written back on the diagonal."""
    g = np.asarray(g)
    out = np.zeros(np.shape(like), dtype=_dtype(g, like))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    i = np.arange(g.shape[-1])
    view[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


def untrace(g, like, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.trace(like, offset, axis1, axis2)``: ``g`` on the diagonal."""
    shape = np.shape(like)
    n = max(0, min(shape[axis1] - max(-offset, 0), shape[axis2] - max(offset, 0)))
    g = np.asarray(g)[..., np.newaxis]
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
    g = np.asarray(g)
    if vector:
        g, x = g[..., np.newaxis], x[..., np.newaxis]
    gb = np.linalg.solve(_t(a), g)
    ga = -gb @ _t(x)
    if vector:
        gb = gb[..., 0]
    return unbroadcast(ga, a), unbroadcast(gb, b)


def det_adjoint(g, a, det):
    """Gradient of ``np.linalg.det(a)``: ``g det a^-T``."""
    scale = np.asarray(g * det)[..., np.newaxis, np.newaxis]
    return scale * _t(np.linalg.inv(a))


def slogdet_adjoint(g, a):
    """Gradient of ``np.linalg.slogdet(a)``: only the log-determinant carries one, ``g a^-T``
    (the sign is piecewise constant)."""
    glog = g[1]
    if not _flows(glog):
        return np.zeros(np.shape(a), dtype=a.dtype)
    return np.asarray(glog)[..., np.newaxis, np.newaxis] * _t(np.linalg.inv(a))


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


def pinv_adjoint(g, a, p, hermitian=False, rcond=None, rtol=None):
    """Gradient of ``p = np.linalg.pinv(a)`` where its rank is locally constant (Golub and
    Pereyra): ``-p^T g p^T + (I - a p) g^T p p^T + p^T p g^T (I - p a)``.

    With ``hermitian=True`` NumPy reads only the lower triangle of ``a``."""
    if rcond is not None or rtol is not None:  # a user cut-off may drop nonzero singular values
        s = np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
        cut = np.asarray(rtol if rcond is None else rcond)[..., np.newaxis] * s[..., :1]
        tiny = max(np.shape(a)[-2:]) * np.finfo(s.dtype).eps * 100 * s[..., :1]
        if np.any((s <= cut) & (s > tiny)):
            raise NotImplementedError("the gradient of pinv is not implemented when its cut-off "
                                      "drops nonzero singular values")
    if hermitian:
        a = np.tril(a) + _t(np.tril(a, -1))
    pt, gt = _t(p), _t(g)
    m, n = np.shape(a)[-2:]
    left = np.eye(m, dtype=p.dtype) - a @ p
    right = np.eye(n, dtype=p.dtype) - p @ a
    r = -pt @ g @ pt + left @ gt @ p @ pt + pt @ p @ gt @ right
    return _fold(r) if hermitian else r


def lstsq_adjoint(g, a, b, ans, wrt=0):
    """Gradient of ``x, residuals, rank, s = np.linalg.lstsq(a, b)`` with respect to ``a``
    (``wrt=0``) or ``b``, for a full-rank ``a``: ``x = pinv(a) b``, the residuals are
    ``|b - a x|^2`` per column, ``s`` are ``a``'s singular values (the rank has no gradient)."""
    x, _, rank, _ = ans
    gx, gres, _, gs = g
    m, n = np.shape(a)
    if rank < min(m, n):
        raise NotImplementedError("the gradient of lstsq needs a full-rank matrix")
    vector = np.ndim(b) == 1
    bm, xm = (b[:, np.newaxis], x[:, np.newaxis]) if vector else (b, x)
    gxm = _full(gx, x).reshape(xm.shape)
    p = np.linalg.pinv(a)
    ga, gb = None, p.T @ gxm
    if wrt == 0:
        ga = pinv_adjoint(gxm @ bm.T, a, p)
    if _flows(gres):
        # d|r|^2 = 2 r^T (db - da x), as a^T r = 0 at the solution
        res = bm - a @ xm
        scaled = 2.0 * res * np.asarray(gres)
        gb = gb + scaled
        if wrt == 0:
            ga = ga - scaled @ xm.T
    if wrt == 0:
        if _flows(gs):
            ga = ga + svdvals_adjoint(gs, a)
        return ga
    return gb[:, 0] if vector else gb


# --- decompositions -----------------------------------------------------------------------------

def cholesky_adjoint(g, factor, upper=False):
    """Gradient of the Cholesky factor ``L`` (or ``U = L^T``): ``L^-T Phi(L^T gL) L^-1`` with
    ``Phi`` the lower triangle with a halved diagonal (Murray 2016), folded onto the triangle
    NumPy reads (the lower one, the upper one for ``upper=True``)."""
    lo, gl = (_t(factor), _t(g)) if upper else (factor, g)
    m = _t(lo) @ gl
    phi = np.tril(m) - 0.5 * m * _eye(m)
    left = np.linalg.solve(_t(lo), phi)  # L^-T Phi
    r = _t(np.linalg.solve(_t(lo), _t(left)))  # (L^-T Phi) L^-1
    return _fold(r, lower=not upper)


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


def eigvalsh_adjoint(g, a, uplo="L"):
    """Gradient of ``np.linalg.eigvalsh(a)``: ``v diag(g) v^T``."""
    _, v = np.linalg.eigh(a, UPLO=uplo)
    return _fold((v * np.asarray(g)[..., np.newaxis, :]) @ _t(v), _lower(uplo))


def _copyltu(m):
    """The symmetric matrix with ``m``'s lower triangle."""
    return np.tril(m) + _t(np.tril(m, -1))


def _qr_square(gq, gr, q, r):
    """Gradient of ``q, r = qr(a)`` for ``a`` with at least as many rows as columns:
    ``(gq + q copyltu(M)) r^-T`` with ``M = r gr^T - gq^T q``."""
    m = r @ _t(gr) - _t(gq) @ q
    b = gq + q @ _copyltu(m)
    return _t(np.linalg.solve(r, _t(b)))


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
    elif mode == "complete":
        raise NotImplementedError("the gradient of qr with mode='complete' needs no more rows "
                                  "than columns (the extra columns of q are not unique)")
    else:
        raise NotImplementedError(f"the gradient of qr is not implemented for mode={mode!r}")
    if rows >= cols:
        return _qr_square(gq, gr, q, r)
    y = a[..., rows:]
    gy = q @ gr[..., rows:]
    gx = _qr_square(gq + y @ _t(gr[..., rows:]), gr[..., :rows], q, r[..., :rows])
    return np.concatenate([gx, gy], axis=-1)


def svdvals_adjoint(g, a, hermitian=False):
    """Gradient of the singular values of ``a``: ``u diag(g) v^T``.

    With ``hermitian=True`` NumPy takes them as the sorted ``|w|`` of ``eigh(a)`` (which reads
    the lower triangle): ``|w|`` has the gradient ``sign(w) v diag(g) v^T``."""
    if hermitian:
        w, v = np.linalg.eigh(a)
        order = np.argsort(np.abs(w))[..., ::-1]  # as NumPy sorts them
        gw = np.zeros_like(w, dtype=_dtype(g, w))
        np.put_along_axis(gw, order, np.asarray(g), axis=-1)
        gw = gw * np.sign(w)
        return _fold((v * gw[..., np.newaxis, :]) @ _t(v))
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return (u * np.asarray(g)[..., np.newaxis, :]) @ vh


def svd_adjoint(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Gradient of ``np.linalg.svd(a)`` for distinct nonzero singular values (Townsend 2016):

    ``u [J s + diag(gs) + s K] v^T + (I - u u^T) gu s^-1 v^T + u s^-1 gv^T (I - v v^T)``
    with ``J = F * (u^T gu - gu^T u)``, ``K = F * (v^T gv - gv^T v)``,
    ``F[i, j] = 1 / (s[j]^2 - s[i]^2)``."""
    if hermitian and compute_uv:
        raise NotImplementedError("the gradient of svd is not implemented for hermitian=True "
                                  "with compute_uv=True")
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
