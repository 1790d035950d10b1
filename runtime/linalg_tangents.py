"""Runtime helpers of the tangent (forward-mode) rules of linear algebra and containers.

Each helper returns one term of a result's tangent given the tangents of the arguments it
reads; tuple results get a ``GradTuple`` (whose ``+`` adds element by element). The conventions
are those of the adjoints in ``runtime.linalg``, whose transposes these are: real inputs,
distinct eigen- and singular values, full rank; a function that reads one triangle of a
symmetric matrix (cholesky, eigh, eigvalsh, hermitian pinv/svd) sees the tangent of that
triangle mirrored onto the other. Where a result is not differentiable (equal eigenvalues for
the eigenvectors, the extra columns of ``svd(..., full_matrices=True)``) its tangent is NaN, so
that only a program that uses it sees it.
"""

from __future__ import annotations

import operator

import numpy as np

from runtime import linalg as _la
from runtime.broadcast import unbroadcast
from runtime.containers import GradList, GradTuple, zeros_of
from runtime.linalg import _flows, _fold, _full, _gap_inverse, _lower, _t


def _is_zero(t) -> bool:
    """True for the zero tangent of a Python number (0 or 0.0)."""
    return type(t) in (int, float) and t == 0


def _float(x):
    """The float dtype of a tangent of ``x``."""
    kind = getattr(x, "dtype", None)
    return kind if kind is not None and kind.kind == "f" else np.dtype(float)


def _zeros(like):
    """A zero tangent of ``like``'s shape and float dtype."""
    return np.zeros(np.shape(like), dtype=_float(np.asarray(like)))


def _diag(m):
    """The diagonal of each matrix in a stack, as a fresh array."""
    return np.diagonal(m, axis1=-2, axis2=-1).copy()


def _sym(t, lower=True):
    """The symmetric matrix a function that reads the lower (upper) triangle sees."""
    if lower:
        return np.tril(t) + _t(np.tril(t, -1))
    return np.triu(t) + _t(np.triu(t, 1))


# --- products and contractions ------------------------------------------------------------------

def vecdot(x1, x2, axis=None, keepdims=False, axes=None, dtype=None):
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


def multi_dot(tangents, arrays, ans):
    """Tangent of ``np.linalg.multi_dot(arrays)``: the sum over the arrays of the product with
    that array replaced by its tangent (zero tangents skipped)."""
    arrays, tangents = list(arrays), list(tangents)
    total = None
    for i, t in enumerate(tangents):
        if _is_zero(t) or not np.any(t):
            continue
        term = np.linalg.multi_dot(arrays[:i] + [np.asarray(t)] + arrays[i + 1:])
        total = term if total is None else total + term
    if total is None:
        return _zeros(ans)
    return total


def einsum(t, position, args, optimize=False, dtype=None):
    """Tangent term of ``np.einsum(*args)`` for the positional argument at ``position``: the
    same einsum with that operand replaced by its tangent ``t``."""
    args = list(args)
    while args and args[-1] is None:  # unused slots of the rule
        args.pop()
    args[position] = t
    kw = {} if dtype is None else {"dtype": dtype}
    return np.einsum(*args, optimize=optimize, **kw)


# --- solvers, inverses, determinants, powers ----------------------------------------------------

def solve_a(da, a, b, x):
    """Tangent term of ``x = np.linalg.solve(a, b)`` for ``a``: ``-a^-1 da x`` (a 1-D ``b`` is
    one vector)."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, da @ x[..., np.newaxis])[..., 0]
    return -np.linalg.solve(a, da @ x)


def det(da, a, ans):
    """Tangent of ``det(a)``: ``det(a) tr(a^-1 da)``."""
    return ans * np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)


def slogdet(da, a, ans):
    """Tangent of ``sign, logabsdet = slogdet(a)``: ``(0, tr(a^-1 da))``."""
    sign = ans[0]
    zero = np.zeros(np.shape(sign), dtype=_float(np.asarray(sign)))
    return GradTuple((zero[()] if zero.ndim == 0 else zero,
                      np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)))


def matrix_power(da, a, n, ans):
    """Tangent of ``np.linalg.matrix_power(a, n)``: ``sum_j B^j dB B^(k-1-j)`` with ``B = a``
    (``B = a^-1``, ``dB = -B da B`` for negative ``n``) and ``k = |n|``."""
    n = operator.index(n)
    if n == 0:
        return np.zeros(np.shape(ans), dtype=np.result_type(da, _float(ans)))
    base, dbase = a, da
    if n < 0:
        base = np.linalg.inv(a)
        dbase = -base @ da @ base
    k = abs(n)
    powers = [np.broadcast_to(np.eye(np.shape(base)[-1], dtype=base.dtype), np.shape(base))]
    for _ in range(k - 1):
        powers.append(powers[-1] @ base)
    return sum(powers[j] @ dbase @ powers[k - 1 - j] for j in range(k))


def _check_cutoff(a, hermitian, rcond, rtol):
    """pinv's cut-off must not drop nonzero singular values (as in ``pinv_adjoint``)."""
    if rcond is None and rtol is None:
        return
    s = np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
    cut = np.asarray(rtol if rcond is None else rcond)[..., np.newaxis] * s[..., :1]
    tiny = max(np.shape(a)[-2:]) * np.finfo(s.dtype).eps * 100 * s[..., :1]
    if np.any((s <= cut) & (s > tiny)):
        raise NotImplementedError("the gradient of pinv is not implemented when its cut-off "
                                  "drops nonzero singular values")


def pinv(da, a, p, hermitian=False, rcond=None, rtol=None):
    """Tangent of ``p = np.linalg.pinv(a)`` where its rank is locally constant (Golub and
    Pereyra): ``-p da p + p p^T da^T (I - a p) + (I - p a) da^T p^T p``."""
    _check_cutoff(a, hermitian, rcond, rtol)
    if hermitian:
        a, da = _sym(a), _sym(da)
    m, n = np.shape(a)[-2:]
    pt, dat = _t(p), _t(da)
    left = np.eye(m, dtype=p.dtype) - a @ p
    right = np.eye(n, dtype=p.dtype) - p @ a
    return -p @ da @ p + p @ pt @ dat @ left + right @ dat @ pt @ p


def lstsq(da, db, a, b, ans):
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
    dx = pinv(da, a, p) @ bm + p @ dbm
    if np.size(res):
        r = bm - a @ xm
        dres = 2.0 * np.sum(r * (dbm - da @ xm), axis=0)
    else:
        dres = np.zeros(np.shape(res), dtype=_float(res))
    return GradTuple((dx[:, 0] if vector else dx, dres, 0.0, svdvals(da, a)))


# --- decompositions -----------------------------------------------------------------------------

def cholesky(da, factor, upper=False):
    """Tangent of the Cholesky factor ``L`` (``U = L^T`` for ``upper``): ``L Phi(L^-1 dA L^-T)``
    with ``Phi`` the lower triangle with a halved diagonal, ``dA`` the triangle NumPy reads
    mirrored."""
    lo = _t(factor) if upper else factor
    s = _sym(da, lower=not upper)
    left = np.linalg.solve(lo, s)  # L^-1 dA
    x = np.linalg.solve(lo, _t(left))  # L^-1 dA L^-T (dA symmetric)
    phi = np.tril(x) - 0.5 * x * np.eye(np.shape(x)[-1], dtype=x.dtype)
    dl = lo @ phi
    return _t(dl) if upper else dl


def eigh(da, ans, uplo="L"):
    """Tangent of ``w, v = np.linalg.eigh(a)``: ``dw = diag(v^T dA v)``,
    ``dv = v (F * (v^T dA v))`` with ``F[i, j] = 1 / (w[j] - w[i])`` (NaN for equal
    eigenvalues)."""
    w, v = ans
    m = _t(v) @ _sym(da, _lower(uplo)) @ v
    with np.errstate(divide="ignore", invalid="ignore"):
        dv = v @ (_gap_inverse(w) * m)
    return GradTuple((_diag(m), dv))


def eigvalsh(da, a, uplo="L"):
    """Tangent of ``np.linalg.eigvalsh(a)``: ``diag(v^T dA v)``."""
    _, v = np.linalg.eigh(a, UPLO=uplo)
    return np.sum(v * (_sym(da, _lower(uplo)) @ v), axis=-2)


def _qr_square(da, q, r):
    """Tangents ``(dq, dr)`` of ``q, r = qr(a)`` for ``a`` with at least as many rows as
    columns: with ``C = q^T da r^-1`` and ``O`` the skew-symmetric part of its strict lower
    triangle, ``dr = (C - O) r`` and ``dq = da r^-1 - q (C - O)``."""
    dar = _t(np.linalg.solve(_t(r), _t(da)))  # da r^-1
    c = _t(q) @ dar
    low = np.tril(c, -1)
    upper = c - low + _t(low)  # C - O, upper triangular
    return dar - q @ upper, upper @ r


def qr(da, ans, a, mode="reduced"):
    """Tangent of ``np.linalg.qr(a, mode)`` for a full-rank ``a`` (modes 'reduced' and 'r';
    'complete' where it equals 'reduced'). A wide ``a = [x | y]`` is ``q [r1 | q^T y]``."""
    rows, cols = np.shape(a)[-2:]
    if mode == "r":
        q, r = np.linalg.qr(a)
    elif mode == "reduced" or (mode == "complete" and rows <= cols):
        q, r = ans
    elif mode == "complete":
        raise NotImplementedError("the gradient of qr with mode='complete' needs no more rows "
                                  "than columns (the extra columns of q are not unique)")
    else:
        raise NotImplementedError(f"the gradient of qr is not implemented for mode={mode!r}")
    if rows >= cols:
        dq, dr = _qr_square(da, q, r)
    else:
        dq, dr1 = _qr_square(da[..., :rows], q, r[..., :rows])
        dr2 = _t(dq) @ a[..., rows:] + _t(q) @ da[..., rows:]
        dr = np.concatenate([dr1, dr2], axis=-1)
    return dr if mode == "r" else GradTuple((dq, dr))


def svdvals(da, a, hermitian=False):
    """Tangent of the singular values of ``a``: ``diag(u^T da v)``. With ``hermitian=True``
    they are the sorted ``|w|`` of ``eigh(a)`` (lower triangle): ``sign(w) diag(v^T dA v)``."""
    if hermitian:
        w, v = np.linalg.eigh(a)
        dw = np.sign(w) * np.sum(v * (_sym(da) @ v), axis=-2)
        order = np.argsort(np.abs(w))[..., ::-1]  # as NumPy sorts them
        return np.take_along_axis(dw, order, axis=-1)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * (da @ _t(vh)), axis=-2)


def svd(da, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of ``np.linalg.svd(a)`` (Townsend 2016), with ``P = u^T da v``,
    ``F[i, j] = 1 / (s[j]^2 - s[i]^2)``: ``ds = diag(P)``,
    ``du = u (F * (P s + s P^T)) + (I - u u^T) da v s^-1``,
    ``dv = v (F * (s P + P^T s)) + (I - v v^T) da^T u s^-1``.

    The singular values' tangent is exact also for equal or zero values; the vectors' is NaN
    there, as it is for the extra columns of ``u`` (rows of ``vh``) of ``full_matrices=True``
    (not unique)."""
    if hermitian and compute_uv:
        raise NotImplementedError("the gradient of svd is not implemented for hermitian=True "
                                  "with compute_uv=True")
    if not compute_uv:
        return svdvals(da, a, hermitian)
    u, s, vh = ans
    rows, cols = np.shape(a)[-2:]
    k = min(rows, cols)
    uk, vk = u[..., :k], _t(vh[..., :k, :])
    p = _t(uk) @ da @ vk
    with np.errstate(divide="ignore", invalid="ignore"):
        f = _gap_inverse(s, square=True)
        ps = p * s[..., np.newaxis, :]  # P s
        sp = s[..., :, np.newaxis] * p  # s P
        du = uk @ (f * (ps + _t(ps)))
        dv = vk @ (f * (sp + _t(sp)))
        if rows > k:
            dav = da @ vk
            du = du + (dav - uk @ (_t(uk) @ dav)) / s[..., np.newaxis, :]
        if cols > k:
            dau = _t(da) @ uk
            dv = dv + (dau - vk @ (_t(vk) @ dau)) / s[..., np.newaxis, :]
    dvh = _t(dv)
    if full_matrices and rows > k:  # the other columns of u are not unique
        du = np.concatenate([du, np.full(np.shape(u)[:-1] + (rows - k,), np.nan, du.dtype)],
                            axis=-1)
    if full_matrices and cols > k:
        dvh = np.concatenate([dvh, np.full(np.shape(vh)[:-2] + (cols - k, cols), np.nan,
                                           dvh.dtype)], axis=-2)
    return GradTuple((du, _diag(p), dvh))


# --- containers ---------------------------------------------------------------------------------

def listed(t, iterable, ans):
    """Tangent of ``list(iterable)`` / ``tuple(iterable)`` (``ans``): the items' tangents (a
    dict's keys have none)."""
    if isinstance(iterable, dict):
        return zeros_of(ans)
    return GradTuple(t) if isinstance(ans, tuple) else GradList(t)


def extended(t_items, t_more):
    """Tangent of ``rt.extended(items, more)``: the items' tangents, then ``more``'s."""
    return GradList([*t_items, *t_more])


def get(t_mapping, key, t_default=None):
    """Tangent of ``mapping.get(key, default)``."""
    return t_mapping[key] if key in t_mapping else t_default


def sequence(t, items):
    """Tangent of ``rt.sequence(items)``: a dict's keys carry none."""
    return zeros_of(list(items)) if isinstance(items, dict) else t


def values(t, mapping):
    """Tangent of ``rt.values(mapping)``: the values' tangents, in ``mapping``'s order."""
    return GradList(t[k] for k in mapping)


def items(t, mapping):
    """Tangent of ``rt.items(mapping)``: ``(0.0, tangent)`` per pair (keys carry none)."""
    return GradList(GradTuple((zeros_of(k), t[k])) for k in mapping)


# --- tangents of the adjoint helpers of runtime.linalg (forward over reverse) --------------------
# Each adjoint helper is linear in its gradient ``g``; the template applies the helper itself to
# ``g``'s tangent. These give the term(s) of its other arguments.

def tensordot_adjoint(g, da, db, a, b, axes=2, wrt=0):
    """Term of ``tensordot_adjoint(g, a, b, axes, wrt)`` for the operand it reads (``b`` for
    ``wrt=0``, ``a`` for ``wrt=1``; the other is only read for its shape)."""
    adjoint = _la.tensordot_adjoint
    return adjoint(g, a, db, axes, 0) if wrt == 0 else adjoint(g, da, b, axes, 1)


def inner_adjoint(g, da, db, a, b, wrt=0):
    """Term of ``inner_adjoint(g, a, b, wrt)`` for the operand it reads."""
    adjoint = _la.inner_adjoint
    return adjoint(g, a, db, 0) if wrt == 0 else adjoint(g, da, b, 1)


def kron_adjoint(g, da, db, a, b, wrt=0):
    """Term of ``kron_adjoint(g, a, b, wrt)`` for the operand it reads."""
    adjoint = _la.kron_adjoint
    return adjoint(g, a, db, 0) if wrt == 0 else adjoint(g, da, b, 1)


def vecdot_adjoint(g, dx1, dx2, x1, x2, wrt=0, axis=-1, keepdims=False, axes=None):
    """Term of ``vecdot_adjoint(g, x1, x2, wrt, ...)`` for the operand it reads."""
    adjoint = _la.vecdot_adjoint
    if wrt == 0:
        return adjoint(g, x1, dx2, 0, axis, keepdims, axes)
    return adjoint(g, dx1, x2, 1, axis, keepdims, axes)


def _operand_slots(args) -> list[int]:
    """The positions of the operands in the arguments of an einsum call."""
    args = list(args)
    while args and args[-1] is None:
        args.pop()
    if isinstance(args[0], str):
        return list(range(1, len(args)))
    return list(range(0, 2 * (len(args) // 2), 2))


def einsum_adjoint(g, position, args, dargs, optimize=False):
    """Term of ``einsum_adjoint(g, position, args)`` for the other operands: the sum over them
    of the same adjoint with that operand replaced by its tangent."""
    adjoint = _la.einsum_adjoint
    total = None
    for k in _operand_slots(args):
        t = dargs[k]
        if k == position or t is None or _is_zero(t):
            continue
        replaced = list(args)
        replaced[k] = t
        term = adjoint(g, position, tuple(replaced), optimize)
        total = term if total is None else total + term
    return total if total is not None else 0.0 * adjoint(g, position, args, optimize)


def multi_dot_adjoint(g, arrays, darrays):
    """Term of ``multi_dot_adjoint(g, arrays)`` for the arrays: array ``i``'s gradient is
    multilinear in the others; each tangent enters all gradients but its own."""
    adjoint = _la.multi_dot_adjoint
    total = None
    for j, t in enumerate(darrays):
        if _is_zero(t) or not np.any(t):
            continue
        replaced = list(arrays)
        replaced[j] = np.asarray(t)
        if isinstance(arrays, np.ndarray):
            replaced = np.stack(replaced)
        elif isinstance(arrays, tuple):
            replaced = tuple(replaced)
        term = adjoint(g, replaced)
        parts = list(term)
        parts[j] = 0.0 * parts[j]  # array j's gradient does not read array j
        term = np.stack(parts) if isinstance(term, np.ndarray) else type(term)(parts)
        total = term if total is None else total + term
    if total is None:
        return zeros_of(list(arrays)) if not isinstance(arrays, np.ndarray) else \
            _zeros(arrays)
    return total


def det_adjoint(g, da, ddet, a, det):
    """Terms of ``det_adjoint(g, a, det) = g det a^-T`` for ``a`` and ``det``."""
    inv_t = _t(np.linalg.inv(a))
    scale = np.asarray(g * det)[..., np.newaxis, np.newaxis]
    dscale = np.asarray(g * ddet)[..., np.newaxis, np.newaxis]
    return dscale * inv_t - scale * (inv_t @ _t(da) @ inv_t)


def slogdet_adjoint(g, da, a):
    """Term of ``slogdet_adjoint(g, a) = g[1] a^-T`` for ``a``: ``-g[1] a^-T da^T a^-T``."""
    glog = g[1]
    if _is_zero(glog) or not np.any(glog):
        return np.zeros(np.shape(a), dtype=_float(a))
    inv_t = _t(np.linalg.inv(a))
    return -np.asarray(glog)[..., np.newaxis, np.newaxis] * (inv_t @ _t(da) @ inv_t)


def solve_adjoint(dg, da, dx, g, a, b, x):
    """Tangent of ``(ga, gb) = solve_adjoint(g, a, b, x)`` (``gb = a^-T g``, ``ga = -gb x^T``;
    ``b`` is only read for its shape): ``dgb = a^-T (dg - da^T gb)``,
    ``dga = -dgb x^T - gb dx^T``."""
    vector = np.ndim(b) == 1
    g, dg = np.asarray(g), np.asarray(dg)
    if vector:
        g, x, dg, dx = (np.asarray(v)[..., np.newaxis] for v in (g, x, dg, dx))
    gb = np.linalg.solve(_t(a), g)
    dgb = np.linalg.solve(_t(a), dg - _t(da) @ gb)
    dga = -dgb @ _t(x) - gb @ _t(dx)
    if vector:
        dgb = dgb[..., 0]
    return GradTuple((unbroadcast(dga, a), unbroadcast(dgb, b)))


def matrix_power_adjoint(g, da, a, n):
    """Term of ``matrix_power_adjoint(g, a, n)`` for ``a`` (the product rule on
    ``sum_j (B^T)^j g (B^T)^(k-1-j)``, ``B = a`` or ``a^-1``)."""
    n = operator.index(n)
    if n == 0:
        return np.zeros(np.shape(a), dtype=np.result_type(g, _float(a)))
    base, dbase = a, da
    if n < 0:
        base = np.linalg.inv(a)
        dbase = -base @ da @ base
    k = abs(n)
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


def pinv_adjoint(dg, da, dp, g, a, p, hermitian=False, rcond=None, rtol=None):
    """Tangent of ``pinv_adjoint(g, a, p, ...)``, a polynomial in ``g``, ``a`` and ``p``:
    ``-p^T g p^T + (I - a p) g^T p p^T + p^T p g^T (I - p a)`` (then folded for
    ``hermitian``)."""
    _check_cutoff(a, hermitian, rcond, rtol)
    if hermitian:
        a, da = _sym(a), _sym(da)
    m, n = np.shape(a)[-2:]
    pt, gt, dpt, dgt = _t(p), _t(g), _t(dp), _t(dg)
    left = np.eye(m, dtype=p.dtype) - a @ p
    right = np.eye(n, dtype=p.dtype) - p @ a
    dleft = -(da @ p + a @ dp)
    dright = -(dp @ a + p @ da)
    r = -(dpt @ g @ pt + pt @ dg @ pt + pt @ g @ dpt)
    r = r + dleft @ gt @ p @ pt + left @ dgt @ p @ pt + left @ gt @ dp @ pt + left @ gt @ p @ dpt
    r = r + dpt @ p @ gt @ right + pt @ dp @ gt @ right + pt @ p @ dgt @ right \
        + pt @ p @ gt @ dright
    return _fold(r) if hermitian else r


def cholesky_adjoint(dg, dfactor, g, factor, upper=False):
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


def _eig_tangent(v, w, s):
    """``(dw, dv)`` of ``eigh`` along the symmetric tangent ``s``."""
    m = _t(v) @ s @ v
    with np.errstate(divide="ignore", invalid="ignore"):
        dv = v @ (_gap_inverse(w) * m)
    return _diag(m), dv


def eigh_adjoint(dg, dans, g, ans, uplo="L"):
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


def eigvalsh_adjoint(g, da, a, uplo="L"):
    """Term of ``eigvalsh_adjoint(g, a) = fold(v diag(g) v^T)`` for ``a`` (``v`` moves with
    ``a``)."""
    w, v = np.linalg.eigh(a, UPLO=uplo)
    _, dv = _eig_tangent(v, w, _sym(da, _lower(uplo)))
    scaled = v * np.asarray(g)[..., np.newaxis, :]
    return _fold(dv @ _t(scaled) + scaled @ _t(dv), _lower(uplo))
