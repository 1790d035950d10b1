"""Gradients of ``scipy.sparse`` matrices: linear functionals on their entries, never dense.

A sparse matrix ``A`` is made from data (``csr_matrix((data, (rows, cols)))``, ``diags(...)``)
and read by products, solves and reductions. The gradient of a loss with respect to ``A`` is the
matrix ``G`` with ``G[i, j] = dL/dA[i, j]``; for ``y = A @ x`` it is the outer product ``g x^T``,
dense in general, and only its entries where ``A``'s data sits are ever needed. So the gradient
of a sparse matrix is a ``SparseGrad``: a sum of terms that each say how to compute ``G``'s
entries at given coordinates (``g[rows] * x[cols]`` for the product), read once, by the rule of
the call that made the matrix, at the coordinates of its data (``G.at(rows, cols)``). Nothing is
materialised on a pattern SciPy chose, which is what makes it exact: SciPy drops entries that
cancel to zero (``A + B``, ``diags(..., format="csr")``), but their data still has a gradient.

The cost is the data's: reading a term at ``nnz`` coordinates is ``O(nnz)`` (``O(nnz k)`` for
a product with ``k`` columns). Adding gradients (``bA = bA + ...`` in a loop) links terms in
``O(1)``; a term keeps the vectors it was made of until it is read.

A tangent (forward mode) of a sparse matrix is a sparse matrix of the same format, SciPy's own:
its products and solves are the tangent rules'. SciPy is imported on first use only: the
runtime needs NumPy alone.
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import is_zero
from runtime.containers import GradList, GradTuple


def scipy_sparse():
    import scipy.sparse as sp  # (only a program making sparse matrices calls these helpers)

    return sp


def is_sparse(x) -> bool:
    """Whether ``x`` is a scipy.sparse matrix or array (False without importing SciPy)."""
    return type(x).__module__.startswith("scipy.sparse") and scipy_sparse().issparse(x)


# --- the gradient of a sparse matrix -----------------------------------------------------------

class SparseGrad:
    """``dL/dA`` for a sparse matrix ``A`` of ``shape``, read at coordinates: ``G.at(rows, cols)``.

    It is a sum of terms, each a function ``(rows, cols) -> values`` (an outer product, a dense
    array, a term transposed or weighted). It is not an array: NumPy's arithmetic on it raises,
    so no rule written for arrays can read it by mistake.
    """

    __slots__ = ("shape", "_left", "_right", "_term")
    __array_ufunc__ = None  # (NumPy's operators defer to ours, and ufuncs refuse it)

    def __init__(self, shape: tuple, term=None, left=None, right=None):
        self.shape = tuple(int(n) for n in shape)
        self._term, self._left, self._right = term, left, right

    def at(self, rows, cols) -> np.ndarray:
        """The gradient's entries at ``(rows[k], cols[k])``, each summed over its terms."""
        rows, cols = np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)
        out = np.zeros(rows.shape)
        pending = [self]  # (terms linked by +: walked without recursion)
        while pending:
            node = pending.pop()
            if node is None:  # (a zero gradient: no terms)
                continue
            if node._term is not None:
                out = out + node._term(rows, cols)
            else:
                pending += (node._left, node._right)
        return out

    def total(self, like) -> float:
        """``sum(G * A)`` for a sparse ``like``: the gradient of a factor scaling ``like``."""
        coo = like.tocoo()
        return float(np.dot(self.at(coo.row, coo.col), coo.data))

    # (a sum, a multiple, a transpose holds a snapshot of its operands, never the operand
    # itself: a gradient the adjoint changes in place later must not change them)
    def __add__(self, other):
        if is_zero(other):
            return self.snapshot()
        if isinstance(other, SparseGrad):
            return SparseGrad(self.shape, left=self.snapshot(), right=other.snapshot())
        return NotImplemented

    __radd__ = __add__

    def scaled(self, c) -> SparseGrad:
        return SparseGrad(self.shape, _Scaled(c, self.snapshot()))

    def __neg__(self) -> SparseGrad:
        return self.scaled(-1.0)

    @property
    def T(self) -> SparseGrad:
        return SparseGrad(self.shape[::-1], _Transposed(self.snapshot()))

    def snapshot(self) -> SparseGrad:
        """This gradient as it is now, whatever is later written into this one: the same terms
        (they never change), or of a table of written entries a copy sharing the table until
        one of them is written (O(1))."""
        if type(self._term) is _Entries:
            return self.copy()
        return SparseGrad(self.shape, self._term, self._left, self._right)

    def __array__(self, *args, **kwargs):
        raise TypeError("the gradient of a scipy.sparse matrix is read at coordinates "
                        "(SparseGrad.at), never made a dense array")

    # --- entries, for the adjoint of writes into the matrix (``A[i, j] += v`` of a lil_matrix) ---

    def __getitem__(self, index):
        """The gradient's entries ``A[index]`` selects: a number for ``A[i, j]`` of two numbers,
        else an array of the selection's shape (NumPy's indexing of a 2-D array)."""
        if type(self._term) is _Entries and _pair(index):
            return self._term.entry(index[0] % self.shape[0], index[1] % self.shape[1])
        rows, cols = _entry_coordinates(index, self.shape)
        values = self.at(rows.ravel(), cols.ravel())
        return float(values[0]) if rows.shape == () else values.reshape(rows.shape)

    def __setitem__(self, index, value) -> None:
        """Overwrite the entries ``A[index]`` selects (a repeated one: its last value), in place:
        only for a gradient the adjoint owns (a copy it made, ``rt.zero_index``)."""
        table = self._own_entries()
        if _pair(index):
            table.values[(index[0] % self.shape[0]) * self.shape[1] + index[1] % self.shape[1]] \
                = float(value)
            return
        rows, cols = _entry_coordinates(index, self.shape)
        values = np.broadcast_to(np.asarray(value, dtype=float), rows.shape)
        keys = (rows * self.shape[1] + cols).ravel().tolist()
        for key, v in zip(keys, values.ravel().tolist(), strict=True):
            table.values[key] = v

    def added(self, index, part) -> SparseGrad:
        """``self[index] += part`` in place, an entry selected twice receiving both parts
        (``part`` the gradient of ``A[index]``: numbers, or a ``SparseGrad`` of a selection that
        is a sparse matrix itself, read at each of its entries)."""
        table = self._own_entries()
        if _pair(index) and not isinstance(part, SparseGrad):  # (one entry: the common case)
            row, col = index[0] % self.shape[0], index[1] % self.shape[1]
            table.values[row * self.shape[1] + col] = table.entry(row, col) + float(part)
            return self
        rows, cols = _entry_coordinates(index, self.shape)
        if isinstance(part, SparseGrad):
            if int(np.prod(part.shape)) != rows.size:
                raise ValueError(f"a gradient of shape {part.shape} added at {rows.size} entries")
            inner = np.indices(part.shape).reshape(2, -1)
            part = part.at(inner[0], inner[1])
        part = np.asarray(part, dtype=float)  # (as many as the entries, or broadcast to them)
        parts = (part.reshape(-1) if part.size == rows.size
                 else np.broadcast_to(part, rows.shape).reshape(-1)).tolist()
        keys = (rows * self.shape[1] + cols).ravel().tolist()
        for key, row, col, v in zip(keys, rows.ravel().tolist(), cols.ravel().tolist(), parts,
                                    strict=True):
            table.values[key] = table.entry(row, col) + v
        return self

    def written(self, index):
        """``self[index]`` where an entry selected several times keeps its last selection's value
        and the others read zero: the gradient of ``v`` in ``A[index] = v`` (the last write
        stays, as SciPy keeps it)."""
        if _pair(index):
            return self[index]
        rows, cols = _entry_coordinates(index, self.shape)
        keys = (rows * self.shape[1] + cols).ravel()
        last = np.zeros(keys.size, dtype=bool)
        last[keys.size - 1 - np.unique(keys[::-1], return_index=True)[1]] = True
        values = np.where(last, self.at(rows.ravel(), cols.ravel()), 0.0)
        return float(values[0]) if rows.shape == () else values.reshape(rows.shape)

    def copy(self) -> SparseGrad:
        """A gradient of the same entries that can be changed in place without changing this
        one: a table of written entries is shared until either is written (copy on write: the
        copy the adjoint makes of a gradient it then writes into, ``rt.owned``, costs O(1) once
        the old name is dropped)."""
        table = self._term
        if type(table) is _Entries:
            table.sharers[0] += 1
            return SparseGrad(self.shape, _Entries(table.base, table.values, table.width,
                                                   table.sharers))
        return SparseGrad(self.shape, _Entries(self.snapshot(), {}, self.shape[1]))

    __copy__ = copy  # (rt.owned: a gradient of its own, whose table changes alone)

    def _own_entries(self) -> _Entries:
        """This gradient's table of changed entries, made now if it has none (its terms become
        the table's base: the object stays the same, as an array written in place does), and
        its own: a table another gradient still shares is copied first."""
        table = self._term
        if type(table) is not _Entries:
            base = SparseGrad(self.shape, self._term, self._left, self._right)
            self._term, self._left, self._right = _Entries(base, {}, self.shape[1]), None, None
        elif table.sharers[0] > 1:
            table.sharers[0] -= 1
            self._term = _Entries(table.base, dict(table.values), table.width)
        return self._term

    def __del__(self):
        table = self._term  # (a table this gradient shared is one sharer shorter)
        if type(table) is _Entries:
            table.sharers[0] -= 1

    def __repr__(self) -> str:
        return f"SparseGrad(shape={self.shape})"


class _Entries:
    """The term of a gradient whose entries the adjoint of element writes changed: ``values``
    (keyed ``row * width + col``) where it says, ``base``'s entries elsewhere. Reading or
    changing one entry costs O(1) beside one read of ``base``, so an assembly loop's adjoint
    is O(1) per write."""

    __slots__ = ("base", "values", "width", "sharers")

    def __init__(self, base: SparseGrad, values: dict, width: int, sharers: list | None = None):
        self.base, self.values, self.width = base, values, width
        self.sharers = sharers or [1]  # (how many gradients hold these values: copy on write)

    def entry(self, row: int, col: int) -> float:
        found = self.values.get(row * self.width + col)
        if found is not None:
            return found
        return float(self.base.at(np.array([row]), np.array([col]))[0])

    def __call__(self, rows, cols):
        out = self.base.at(rows, cols)
        if self.values:
            keys = np.fromiter(self.values, dtype=np.intp, count=len(self.values))
            values = np.fromiter(self.values.values(), dtype=float, count=len(self.values))
            query, found = _where(keys, rows * self.width + cols)
            out = np.array(out, dtype=float)
            out[query] = values[found]
        return out


def sparse_written(g, index, value):
    """The gradient of ``value`` in ``A[index] = value`` (``g`` the matrix's after the write):
    its entries at the selection, an entry selected twice from its last write; as many as
    ``value`` has, in its shape (a row of a ``*_matrix`` is 1 x n where NumPy's is n)."""
    if is_zero(g):
        return g
    part = g.written(index)
    if np.size(part) == np.size(value) and np.shape(part) != np.shape(value):
        return np.reshape(part, np.shape(value))
    return part


def _matrix_index(index, a):
    """``index`` of ``a`` as NumPy reads it: for a ``*_matrix`` (not a ``*_array``), a number
    beside a slice or an array becomes a one-item list (SciPy keeps its axis)."""
    if type(index) is not tuple or len(index) != 2 or _pair(index) \
            or not isinstance(a, scipy_sparse().spmatrix):
        return index
    return tuple([i] if np.ndim(i) == 0 and not isinstance(i, slice) else i for i in index)


def sparse_unindex(t, like, index):
    """A sparse matrix of ``like``'s format and shape holding ``t`` (broadcast) at the entries
    ``like[index]`` selects, an entry selected twice the sum: the tangent of a write into a
    sparse matrix."""
    if is_zero(t):
        return t
    rows, cols = _entry_coordinates(_matrix_index(index, like), like.shape)
    values = np.broadcast_to(np.asarray(t, dtype=float), rows.shape).ravel()
    made = scipy_sparse().coo_matrix((values, (rows.ravel(), cols.ravel())), shape=like.shape)
    return type(like)(made.asformat(like.format))


def _pair(index) -> bool:
    """``A[i, j]`` of two Python or NumPy integers."""
    return type(index) is tuple and len(index) == 2 and all(
        isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in index)


def _entry_coordinates(index, shape: tuple):
    """The coordinates ``A[index]`` selects in a matrix of ``shape``: two integer arrays of the
    selection's shape, by NumPy's rules for a 2-D array (integer arrays pair up, broadcast; a
    slice spans its range; one integer array beside a slice keeps its axis in place)."""
    if not isinstance(index, tuple):
        index = (index,)
    if len(index) == 1:
        index = (index[0], slice(None))
    if len(index) != 2 or any(i is None or i is Ellipsis for i in index):
        raise NotImplementedError(f"a sparse matrix's entries selected by {index!r} are not "
                                  "differentiated: select them by two indices (numbers, slices "
                                  "or integer arrays)")
    (rows, fancy_rows), (cols, fancy_cols) = (_axis_positions(i, n)
                                               for i, n in zip(index, shape, strict=True))
    if fancy_rows and fancy_cols:
        return np.broadcast_arrays(rows, cols)
    if fancy_rows:  # (an integer array, or a number, beside a slice)
        return np.broadcast_arrays(rows[..., None], cols)
    if fancy_cols:
        return np.broadcast_arrays(rows.reshape(rows.shape + (1,) * cols.ndim), cols)
    return np.broadcast_arrays(rows[:, None], cols[None, :])


def _axis_positions(index, n: int):
    """``(positions, fancy)``: what one index selects along an axis of length ``n``."""
    if isinstance(index, slice):
        return np.arange(*index.indices(n)), False
    chosen = np.asarray(index)
    if chosen.dtype == bool:
        return np.flatnonzero(chosen), True
    if chosen.dtype.kind not in "iu":
        raise NotImplementedError(f"a sparse matrix indexed by {index!r} is not differentiated")
    return np.where(chosen < 0, chosen + n, chosen).astype(np.intp), True


class _Scaled:
    __slots__ = ("c", "g")

    def __init__(self, c, g):
        self.c, self.g = c, g

    def __call__(self, rows, cols):
        return self.c * self.g.at(rows, cols)


class _Transposed:
    __slots__ = ("g",)

    def __init__(self, g):
        self.g = g

    def __call__(self, rows, cols):
        return self.g.at(cols, rows)


class _Outer:
    """``u @ v.T`` at coordinates: ``u[rows] * v[cols]`` (summed over the columns of 2-D
    ``u`` and ``v``)."""

    __slots__ = ("u", "v")

    def __init__(self, u, v):
        self.u, self.v = np.asarray(u), np.asarray(v)

    def __call__(self, rows, cols):
        if self.u.ndim == 1:
            return self.u[rows] * self.v[cols]
        return np.einsum("kj,kj->k", self.u[rows], self.v[cols])


def _pattern(m):
    """``m``'s stored coordinates as a CSR matrix of ones (duplicates merged)."""
    sp = scipy_sparse()
    ones = sp.csr_matrix(m, copy=True)
    ones.sum_duplicates()
    ones.data = np.ones_like(ones.data, dtype=float)
    return ones


class _SparseProduct:
    """The gradient of one sparse factor of ``C = A @ B`` (both sparse): ``G B^T`` for ``A``,
    ``A^T G`` for ``B``, where ``G``, ``C``'s gradient, is read where ``C`` may be nonzero: the
    product of the two patterns (ones: nothing cancels, though SciPy drops the entries of ``C``
    that do). Computed once, as a sparse product, when first read."""

    __slots__ = ("g", "a", "b", "wrt", "_m")

    def __init__(self, g, a, b, wrt: int):
        self.g, self.a, self.b, self.wrt, self._m = g, a, b, wrt, None

    def __call__(self, rows, cols):
        if self._m is None:
            sp = scipy_sparse()
            reach = (_pattern(self.a) @ _pattern(self.b)).tocoo()
            gc = sp.csr_matrix((self.g.at(reach.row, reach.col), (reach.row, reach.col)),
                               shape=reach.shape)
            a, b = sp.csr_matrix(self.a), sp.csr_matrix(self.b)
            self._m = (gc @ b.T if self.wrt == 0 else a.T @ gc).tocsr()
        if rows.size == 0:  # (SciPy gives an empty matrix, not an empty array)
            return np.zeros(0)
        return np.asarray(self._m[np.asarray(rows), np.asarray(cols)]).ravel()


class _Dense:
    """A dense gradient (of ``A.toarray()``, or weighted by a dense factor) at coordinates."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def __call__(self, rows, cols):
        return self.a[rows, cols]


class _Weighted:
    """``G * W`` at coordinates, for a dense ``W`` broadcast to the matrix's shape."""

    __slots__ = ("g", "w")

    def __init__(self, g, w):
        self.g, self.w = g, w

    def __call__(self, rows, cols):
        return self.g.at(rows, cols) * self.w[rows, cols]


class _Diagonal:
    """The gradient of ``A.diagonal(k)``: ``g[i]`` at ``(i, i + k)``, zero elsewhere."""

    __slots__ = ("g", "k")

    def __init__(self, g, k):
        self.g, self.k = np.asarray(g), int(k)

    def __call__(self, rows, cols):
        on = cols - rows == self.k
        i = np.where(on, rows if self.k >= 0 else cols, 0)
        return np.where(on, self.g[i] if self.g.size else 0.0, 0.0)


class _Summed:
    """The gradient of ``A.sum(axis)``: ``g`` spread over the axis summed (a number: every
    entry; axis 0: ``g[cols]``; axis 1: ``g[rows]``)."""

    __slots__ = ("g", "axis")

    def __init__(self, g, axis):
        self.g, self.axis = np.asarray(g), axis

    def __call__(self, rows, cols):
        if self.axis is None:
            return np.full(rows.shape, float(self.g))
        return self.g.ravel()[cols if self.axis in (0, -2) else rows]


def _refuse_sparse_operand(x, what: str) -> None:
    if is_sparse(x):
        raise NotImplementedError(f"{what} of two scipy.sparse matrices is not differentiated "
                                  "yet; make one of them a dense array (.toarray()) if it is "
                                  "small, or ask for this rule")


def is_operator(x) -> bool:
    """Whether ``x`` is a ``scipy.sparse.linalg.LinearOperator`` (products only, no entries)."""
    return type(x).__module__.startswith("scipy.sparse.linalg") and hasattr(x, "matvec")


def _operator_adjoint(g, a, b, wrt: int):
    """The gradient of ``op @ x`` (``op * x``, ``op.matvec(x)``, ``op.dot(x)``): ``x``'s is
    ``op.T @ g`` (its ``rmatvec``); the operator, whose entries are not data, gets none."""
    if not is_operator(a) or is_sparse(b) or is_operator(b):
        raise NotImplementedError("a product with a LinearOperator on its right (x @ op), or of "
                                  "two operators or an operator and a sparse matrix, is not "
                                  "differentiated yet; write op @ x, or op.T @ x")
    if wrt == 0:
        return 0.0
    g = np.asarray(g)
    return np.asarray(a.T @ g).reshape(np.shape(b))


def _dense_partial(g, like):
    from runtime.broadcast import unbroadcast

    return unbroadcast(g, like)


def _dense_matmul_adjoint(g, a, b, wrt: int):
    if np.ndim(a) > 2 or np.ndim(b) > 2:  # (A.dot of arrays: not a matmul there)
        raise NotImplementedError("A.dot of arrays of more than two dimensions, where A may be "
                                  "a scipy.sparse matrix, is not differentiated; call np.dot")
    from runtime.linalg import matmul_adjoint_a, matmul_adjoint_b

    return (matmul_adjoint_a if wrt == 0 else matmul_adjoint_b)(g, a, b)


def _is_matrix_product(a) -> bool:
    """Whether ``*`` of sparse ``a`` is a matrix product: a ``*_matrix``'s is, a ``*_array``'s
    multiplies elementwise, as NumPy's. (By the class's name: before SciPy 1.11 the
    ``*_array`` classes derive from ``spmatrix``.)"""
    return type(a).__name__.endswith("_matrix")


# --- making a sparse matrix from its data ------------------------------------------------------

def _coordinates(arg1, ans):
    """``(rows, cols)`` of the data a ``(data, (rows, cols))`` or ``(data, indices, indptr)``
    argument places, in the data's order."""
    if len(arg1) == 2:
        rows, cols = arg1[1]
        return np.asarray(rows), np.asarray(cols)
    _, indices, indptr = arg1
    indptr = np.asarray(indptr)
    outer = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if ans.format == "csc":
        return np.asarray(indices), outer
    return outer, np.asarray(indices)


def sparse_made_adjoint(g, arg1, ans):
    """The gradient of ``arg1`` in ``csr_matrix(arg1, shape)`` (csc, coo; ``*_array``): the
    data's at its coordinates, a dense array's everywhere, a sparse matrix's the same."""
    if is_zero(g):
        return g
    if isinstance(arg1, tuple):
        rows, cols = _coordinates(arg1, ans)
        data = g.at(rows, cols).reshape(np.shape(arg1[0]))
        if len(arg1) == 2:
            return GradTuple((data, GradTuple((0.0, 0.0))))
        return GradTuple((data, 0.0, 0.0))
    if is_sparse(arg1):
        return g
    m, n = ans.shape
    rows, cols = np.indices((m, n))
    return g.at(rows.ravel(), cols.ravel()).reshape(np.shape(arg1))


def sparse_made_tangent(t, arg1, ans):
    """The tangent of ``csr_matrix(arg1, shape)``: the same matrix with the data's tangent."""
    if isinstance(arg1, tuple):
        data = _tangent_item(t[0] if isinstance(t, tuple) else t, arg1[0])
        rest = tuple(arg1[1:])
        return type(ans)((data,) + rest, shape=ans.shape)
    if is_sparse(t):
        return _like(t, ans)
    return type(ans)(np.broadcast_to(t, ans.shape), shape=ans.shape)


def _like(t, ans):
    """Sparse tangent ``t`` of ``ans``'s class (a ``*_array``'s ``*`` is not a ``*_matrix``'s)."""
    return t if type(t) is type(ans) else type(ans)(t)


def _tangent_item(t, like):
    """A tangent of ``like`` as an array of its shape (a zero tangent: zeros)."""
    if is_zero(t):
        return np.zeros(np.shape(like))
    return np.broadcast_to(t, np.shape(like))


# --- diags and spdiags -------------------------------------------------------------------------

def _diagonal_coordinates(length: int, k: int):
    i = np.arange(length)
    return (i, i + k) if k >= 0 else (i - k, i)


def _diagonal_list(diagonals, offsets):
    """``diags``' arguments as a list of diagonals and a list of offsets (one diagonal may be
    given alone, with one offset)."""
    if np.ndim(offsets) == 0 and np.ndim(diagonals) <= 1:
        return [diagonals], [int(offsets)], True
    return list(diagonals), [int(k) for k in offsets], False


def diags_adjoint(g, diagonals, offsets, ans):
    """The gradient of ``diagonals`` in ``diags(diagonals, offsets, shape)``: each diagonal's
    entries read on its diagonal (a number spread along it: their sum; a diagonal longer than
    the matrix's: zero where SciPy leaves it out)."""
    if is_zero(g):
        return g
    parts, ks, alone = _diagonal_list(diagonals, offsets)
    m, n = ans.shape
    grads = []
    for part, k in zip(parts, ks, strict=True):
        length = min(m + min(k, 0), n - max(k, 0))
        if np.ndim(part):
            length = min(length, np.shape(part)[-1])
        rows, cols = _diagonal_coordinates(length, k)
        values = g.at(rows, cols)
        if np.ndim(part) == 0:
            grads.append(float(np.sum(values)))
        else:
            full = np.zeros(np.shape(part))
            full[..., :length] = values
            grads.append(full)
    if alone:
        return grads[0]
    if isinstance(diagonals, np.ndarray):  # (the diagonals as the rows of an array)
        return np.stack(grads)
    return GradTuple(grads) if isinstance(diagonals, tuple) else GradList(grads)


def diags_tangent(t, diagonals, offsets, ans):
    """The tangent of ``diags(diagonals, offsets, shape)``: the same with the diagonals'."""
    parts, ks, alone = _diagonal_list(diagonals, offsets)
    tangents = [t] if alone else list(t) if isinstance(t, (tuple, list)) else [t] * len(parts)
    made = [np.broadcast_to(_tangent_item(dt, part), np.shape(part)).astype(float)
            for dt, part in zip(tangents, parts, strict=True)]
    return _like(scipy_sparse().diags(made, ks, shape=ans.shape, format=ans.format), ans)


def spdiags_adjoint(g, data, diags, ans):
    """The gradient of ``data`` in ``spdiags(data, diags, m, n)``: ``data[i, j]`` sits at
    ``(j - diags[i], j)`` where that is inside the matrix (elsewhere it is not read)."""
    if is_zero(g):
        return g
    data = np.asarray(data)
    m, n = ans.shape
    out = np.zeros(np.shape(data) if data.ndim == 2 else (1, data.shape[-1]))
    for i, k in enumerate(np.atleast_1d(diags)):
        cols = np.arange(out.shape[1])
        rows = cols - int(k)
        inside = (rows >= 0) & (rows < m) & (cols < n)
        out[i, inside] = g.at(rows[inside], cols[inside])
    return out.reshape(np.shape(data))


def spdiags_tangent(t, data, diags, ans):
    return _like(scipy_sparse().spdiags(_tangent_item(t, data), diags, ans.shape[0], ans.shape[1],
                               format=ans.format), ans)


# --- products, sums and conversions ------------------------------------------------------------

def sparse_matmul_adjoint(g, a, b, wrt: int):
    """The gradient of ``a @ b`` with respect to operand ``wrt`` (0: ``a``), one of them sparse:
    a ``SparseGrad`` (an outer product read at coordinates) for the sparse one, a product with
    the transpose for the dense one. (Neither sparse when run, for a value that only may have
    been: NumPy's matmul adjoint.)"""
    if is_operator(a) or is_operator(b):
        return _operator_adjoint(g, a, b, wrt)
    if not (is_sparse(a) or is_sparse(b)):
        return _dense_matmul_adjoint(g, a, b, wrt)
    if is_sparse(a) and is_sparse(b):
        return SparseGrad((a, b)[wrt].shape, _SparseProduct(g, a, b, wrt))
    g = np.asarray(g)
    if is_sparse(a):
        if wrt == 1:  # b's: A^T g
            return (a.T @ g).reshape(np.shape(b))
        return SparseGrad(a.shape, _Outer(g, np.asarray(b)))
    if wrt == 0:  # a dense a @ sparse b: a's gradient is g B^T
        return np.asarray((b @ g.T).T).reshape(np.shape(a))
    a2 = np.asarray(a)  # B's: a^T g, as rows a[:, i] against g[:, j]
    if a2.ndim == 1:
        return SparseGrad(b.shape, _Outer(a2, g))
    return SparseGrad(b.shape, _Outer(a2.T, g.T))


def sparse_mul_adjoint(g, a, b, wrt: int):
    """The gradient of ``a * b`` with respect to operand ``wrt``, one of them sparse: a scaling
    by a number, the matrix product of an ``spmatrix`` with an array, or the elementwise
    product of a ``sparray`` with one (``A.multiply``). (Neither sparse: NumPy's product.)"""
    if is_operator(a) and np.ndim(b) > 0:  # (a LinearOperator's * applies it)
        return _operator_adjoint(g, a, b, wrt)
    if not (is_sparse(a) or is_sparse(b)):
        return _dense_partial(g * (b if wrt == 0 else a), a if wrt == 0 else b)
    sparse, other = (a, b) if is_sparse(a) else (b, a)
    if np.ndim(other) == 0 and not is_sparse(other):
        if (sparse is a) == (wrt == 0):
            return g.scaled(other) if not is_zero(g) else g
        return g.total(sparse) if not is_zero(g) else 0.0
    if _is_matrix_product(sparse):
        return sparse_matmul_adjoint(g, a, b, wrt)
    _refuse_sparse_operand(other, "the elementwise product")
    return sparse_multiply_adjoint(g, sparse, other, 0 if (sparse is a) == (wrt == 0) else 1)


def sparse_div_adjoint(g, a, c, wrt: int):
    """The gradient of ``A / c`` (a number ``c``) with respect to ``A`` (0) or ``c`` (1)."""
    if is_zero(g):
        return g
    if not is_sparse(a):
        return _dense_partial(g / c if wrt == 0 else -g * a / c ** 2, c if wrt else a)
    if np.ndim(c) != 0 or is_sparse(c):
        raise NotImplementedError("a scipy.sparse matrix divided by an array or a matrix is not "
                                  "differentiated; divide by a number, or use A.multiply(1 / w)")
    if wrt == 0:
        return g.scaled(1.0 / c)
    return -g.total(a) / c ** 2


def sparse_multiply_adjoint(g, a, w, wrt: int):
    """The gradient of ``A.multiply(w)`` (``w`` dense, broadcast to ``A``'s shape) with respect
    to ``A`` (0: ``G * w``) or ``w`` (1: ``G * A`` on ``A``'s entries, summed to ``w``'s
    shape)."""
    if is_zero(g):
        return g
    _refuse_sparse_operand(w, "A.multiply")
    if wrt == 0:
        return SparseGrad(a.shape, _Weighted(g, np.broadcast_to(np.asarray(w), a.shape)))
    coo = a.tocoo()
    full = np.zeros(a.shape)
    np.add.at(full, (coo.row, coo.col), g.at(coo.row, coo.col) * coo.data)
    from runtime.broadcast import unbroadcast

    return unbroadcast(full, w)


def _zero_grad(x):
    """The zero gradient of ``x``: an empty ``SparseGrad`` of a sparse matrix, zeros of an
    array or a number (a tangent of the gradients of arrays is an array)."""
    return SparseGrad(x.shape) if is_sparse(x) else np.zeros(np.shape(x))


def _other_operand_term(adjoint, g, da, db, a, b, wrt: int):
    """The term of the tangent of ``adjoint(g, a, b, wrt)`` (a product's gradient: linear in
    ``g`` and in the other operand, reading the operand ``wrt`` only for its shape and kind)
    from the other operand's tangent: the same gradient with that operand's tangent."""
    other = db if wrt == 0 else da
    operator = is_operator(a) or is_operator(b)
    if operator and not is_zero(other):
        raise NotImplementedError("a LinearOperator's products are not differentiated: its "
                                  "tangent must be zero")
    if is_zero(g) or is_zero(other):
        x = (a, b)[wrt]
        return 0.0 if is_operator(x) else _zero_grad(x)
    return adjoint(g, a, other, wrt) if wrt == 0 else adjoint(g, other, b, wrt)


def sparse_matmul_adjoint_tangent(g, da, db, a, b, wrt: int):
    """The term of ``sparse_matmul_adjoint(g, a, b, wrt)``'s tangent from the operands'
    (forward over reverse; the term from ``g``'s is the gradient itself of ``dg``)."""
    return _other_operand_term(sparse_matmul_adjoint, g, da, db, a, b, wrt)


def sparse_mul_adjoint_tangent(g, da, db, a, b, wrt: int):
    """The term of ``sparse_mul_adjoint(g, a, b, wrt)``'s tangent from the operands'."""
    return _other_operand_term(sparse_mul_adjoint, g, da, db, a, b, wrt)


def sparse_multiply_adjoint_tangent(g, da, dw, a, w, wrt: int):
    """The term of ``sparse_multiply_adjoint(g, a, w, wrt)``'s tangent from the operands'."""
    return _other_operand_term(sparse_multiply_adjoint, g, da, dw, a, w, wrt)


def sparse_div_adjoint_tangent(dg, da, dc, g, a, c, wrt: int):
    """The tangent of ``sparse_div_adjoint(g, A, c, wrt)`` (``A / c``, ``c`` a number): ``A``'s
    ``G / c`` moves as ``dG / c - G dc / c^2``; ``c``'s ``-<G, A> / c^2`` as ``-(<dG, A> +
    <G, dA>) / c^2 + 2 <G, A> dc / c^3``."""
    out = _zero_grad((a, c)[wrt]) if is_zero(dg) else sparse_div_adjoint(dg, a, c, wrt)
    if wrt == 1 and not is_zero(da):
        out = out + sparse_div_adjoint(g, da, c, 1)
    if not is_zero(dc) and not is_zero(g):
        if wrt == 0:
            out = out + sparse_div_adjoint(g, a, c, 0).scaled(-dc / c) if is_sparse(a) \
                else out - _dense_partial(g * dc / c ** 2, a)
        else:
            out = out + sparse_div_adjoint(g, a, c, 1) * (-2.0 * dc / c)
    return out


def sparse_add_adjoint(g, a, b, wrt: int, sign: float = 1.0):
    """The gradient of ``a + b`` (``sign`` -1: ``a - b``) with respect to operand ``wrt``, both
    sparse."""
    if not (is_sparse(a) or is_sparse(b)):
        return _dense_partial(-g if wrt and sign != 1.0 else g, b if wrt else a)
    if not (is_sparse(a) and is_sparse(b)):
        raise NotImplementedError("a scipy.sparse matrix plus a dense array (an np.matrix) is "
                                  "not differentiated; add .toarray() of the matrix instead")
    if is_zero(g) or wrt == 0 or sign == 1.0:
        return g
    return -g


def sparse_transpose_adjoint(g):
    """The gradient of ``A.T`` taken back to ``A``: transposed (nothing flowed: nothing)."""
    return g if is_zero(g) else g.T


def sparse_dense_adjoint(g, a):
    """The gradient of ``A.toarray()``: the dense gradient, read at the data's coordinates."""
    return SparseGrad(a.shape, _Dense(np.asarray(g)))


def sparse_sum_adjoint(g, a, axis=None):
    """The gradient of ``A.sum(axis)`` (``axis`` of a ``sparray``; an ``spmatrix``'s is an
    np.matrix, refused)."""
    if not is_sparse(a):
        from runtime.broadcast import unreduce

        return unreduce(g, a, axis)
    _refuse_matrix_axis_sum(a, axis)
    return SparseGrad(a.shape, _Summed(g, axis))


def sparse_sum_tangent(t, a, axis=None):
    """The tangent of ``A.sum(axis)``: the tangent's sum."""
    _refuse_matrix_axis_sum(a, axis)
    return t.sum(axis=axis)


def _refuse_matrix_axis_sum(a, axis) -> None:
    if axis is not None and is_sparse(a) and _is_matrix_product(a):
        raise NotImplementedError("A.sum(axis=...) of a scipy.sparse *_matrix is an np.matrix, "
                                  "which is not differentiated; use A @ np.ones(n) (row sums) or "
                                  "A.T @ np.ones(m) (column sums), or a *_array")


def sparse_diagonal_adjoint(g, a, k=0):
    """The gradient of ``A.diagonal(k)``."""
    if not is_sparse(a):
        raise NotImplementedError("the diagonal of a value that may be a scipy.sparse matrix "
                                  "is differentiated only when it is one; call np.diagonal")
    return SparseGrad(a.shape, _Diagonal(g, k))


def _selector(index, n: int) -> np.ndarray:
    """The positions a slice or an integer array selects along an axis of length ``n``."""
    if isinstance(index, slice):
        return np.arange(*index.indices(n))
    chosen = np.asarray(index)
    if chosen.dtype == bool:
        return np.flatnonzero(chosen)
    if chosen.ndim != 1 or chosen.dtype.kind not in "iu":
        raise NotImplementedError("a scipy.sparse matrix indexed by anything but slices and "
                                  "1-D integer or boolean arrays is not differentiated")
    return np.where(chosen < 0, chosen + n, chosen)


def _rows_and_cols(index, a):
    """``(I, J, paired)``: ``A[index]`` is ``A[np.ix_(I, J)]`` (slices, integer or boolean
    arrays, an integer beside a slice of a ``*_matrix``: a row or column of it), or, paired,
    ``A[I, J]`` (numbers, or two integer arrays: the entries at ``(I[k], J[k])``)."""
    if not isinstance(index, tuple):
        index = (index, slice(None))
    if len(index) == 1:
        index = (index[0], slice(None))
    if len(index) == 2 and all(not isinstance(i, slice) and np.ndim(i) <= 1
                               and np.asarray(i).dtype.kind in "iu" for i in index):
        rows, cols = (np.atleast_1d(np.asarray(i, dtype=np.intp)) for i in index)
        if rows.shape != cols.shape:
            raise NotImplementedError("A[rows, cols] of integer arrays of different lengths is "
                                      "not differentiated (they pair up)")
        return (np.where(rows < 0, rows + a.shape[0], rows),
                np.where(cols < 0, cols + a.shape[1], cols), True)
    if len(index) == 2 and isinstance(a, scipy_sparse().spmatrix):  # (a row or column: 1 x n)
        index = tuple([i] if np.ndim(i) == 0 and not isinstance(i, slice) else i for i in index)
    if len(index) != 2 or not all(isinstance(i, slice) or np.ndim(i) == 1 for i in index):
        raise NotImplementedError("a scipy.sparse array indexed by anything but numbers, two "
                                  "slices, or integer arrays and slices is not differentiated "
                                  "(A[i, :] of a *_array, a 1-D sparse array: write A[[i], :])")
    return _selector(index[0], a.shape[0]), _selector(index[1], a.shape[1]), False


def _where(chosen: np.ndarray, at: np.ndarray):
    """``(query, position)`` pairs: for each ``at[q]``, every position ``p`` with
    ``chosen[p] == at[q]`` (none, one, or several when ``chosen`` repeats)."""
    order = np.argsort(chosen, kind="stable")
    ranked = chosen[order]
    lo = np.searchsorted(ranked, at, "left")
    hi = np.searchsorted(ranked, at, "right")
    counts = hi - lo
    query = np.repeat(np.arange(at.size), counts)
    starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
    return query, order[starts + np.arange(query.size)]


class _Selected:
    """The gradient of ``B = A[np.ix_(I, J)]`` at ``A``'s coordinates: ``B``'s at every
    ``(i, j)`` with ``I[i] == r`` and ``J[j] == c``, summed (zero where none)."""

    __slots__ = ("g", "rows", "cols")

    def __init__(self, g, rows, cols):
        self.g, self.rows, self.cols = g, rows, cols

    def __call__(self, rows, cols):
        q, i = _where(self.rows, rows)
        q2, j = _where(self.cols, cols[q])
        return np.bincount(q[q2], self.g.at(i[q2], j), minlength=rows.size)


class _Paired:
    """The gradient of ``b = A[I, J]`` (entries at ``(I[k], J[k])``: numbers, an np.matrix or
    a 1-D array of them) at ``A``'s coordinates: ``b``'s at every ``k`` reading ``(r, c)``,
    summed (zero where none)."""

    __slots__ = ("g", "keys", "width")

    def __init__(self, g, rows, cols, width: int):
        self.g = np.ravel(np.asarray(g, dtype=float))
        self.keys, self.width = rows * width + cols, width

    def __call__(self, rows, cols):
        q, k = _where(self.keys, rows * self.width + cols)
        return np.bincount(q, self.g[k], minlength=rows.size)


def sparse_index_adjoint(g, a, index):
    """The gradient of ``A[index]`` (rows and columns by slices or integer arrays, or entries
    by numbers or paired integer arrays)."""
    if is_zero(g):
        return g
    if not is_sparse(a):
        from runtime.broadcast import unindex

        return unindex(g, a, index)
    rows, cols, paired = _rows_and_cols(index, a)
    if paired:
        return SparseGrad(a.shape, _Paired(g, rows, cols, a.shape[1]))
    return SparseGrad(a.shape, _Selected(g, rows, cols))


# --- matrices made of matrices: hstack, vstack, bmat, block_diag, kron -------------------------

class _Shifted:
    """A block's gradient inside a larger matrix's: the larger one's, read ``(dr, dc)`` further."""

    __slots__ = ("g", "dr", "dc")

    def __init__(self, g, dr, dc):
        self.g, self.dr, self.dc = g, int(dr), int(dc)

    def __call__(self, rows, cols):
        return self.g.at(rows + self.dr, cols + self.dc)


def _block_grad(g, block, dr: int, dc: int):
    """The gradient of one block placed at ``(dr, dc)``: a ``SparseGrad`` of a sparse block, the
    entries of a dense one (none of a missing one)."""
    if block is None:
        return None
    if is_sparse(block):
        return SparseGrad(block.shape, _Shifted(g, dr, dc))
    shape = np.shape(block)
    if len(shape) != 2:
        raise NotImplementedError("a block of a sparse matrix that is not 2-D is not "
                                  "differentiated; make it a matrix (np.atleast_2d)")
    rows, cols = np.indices(shape)
    return g.at(rows.ravel() + dr, cols.ravel() + dc).reshape(shape)


def _block_sizes(grid):
    """Row heights and column widths of a grid of blocks (None: a missing block)."""
    heights = [next(np.shape(b)[0] for b in row if b is not None) for row in grid]
    widths = [next(np.shape(row[j])[1] for row in grid if row[j] is not None)
              for j in range(len(grid[0]))]
    return np.concatenate([[0], np.cumsum(heights)]), np.concatenate([[0], np.cumsum(widths)])


def sparse_blocks_adjoint(g, blocks, how: str):
    """The gradient of the blocks of ``sp.hstack``, ``vstack``, ``bmat`` or ``block_diag``:
    each block's, read from the whole's at its place (a container like ``blocks``)."""
    if is_zero(g):
        return g
    if how == "block_diag":
        tops = np.concatenate([[0], np.cumsum([np.shape(b)[0] for b in blocks])])
        lefts = np.concatenate([[0], np.cumsum([np.shape(b)[1] for b in blocks])])
        grads = [_block_grad(g, b, tops[i], lefts[i]) for i, b in enumerate(blocks)]
    else:
        grid = [list(blocks)] if how == "hstack" else [[b] for b in blocks] \
            if how == "vstack" else [list(row) for row in blocks]
        tops, lefts = _block_sizes(grid)
        rows = [[_block_grad(g, b, tops[i], lefts[j]) for j, b in enumerate(row)]
                for i, row in enumerate(grid)]
        grads = rows[0] if how == "hstack" else [r[0] for r in rows] if how == "vstack" \
            else [GradList(0.0 if x is None else x for x in r) for r in rows]
    grads = [0.0 if x is None else x for x in grads]
    return GradTuple(grads) if isinstance(blocks, tuple) else GradList(grads)


def sparse_blocks_tangent(t, blocks, how: str, ans):
    """The tangent of ``sp.hstack(blocks)`` (``vstack``, ``bmat``, ``block_diag``): the same of
    the blocks' tangents (zero blocks where a block has none)."""
    sp = scipy_sparse()

    def tangent_of(dt, block):
        if block is None:
            return None
        if is_zero(dt):
            return sp.coo_matrix(np.shape(block))
        return dt

    if how == "bmat":
        made = [[tangent_of(dt, b) for dt, b in zip(trow, row, strict=True)]
                for trow, row in zip(t, blocks, strict=True)]
    else:
        made = [tangent_of(dt, b) for dt, b in zip(t, blocks, strict=True)]
    made_by = {"hstack": sp.hstack, "vstack": sp.vstack, "bmat": sp.bmat,
               "block_diag": sp.block_diag}[how]
    return _like(made_by(made, format=ans.format), ans)


class _KronPart:
    """The gradient of one factor of ``K = kron(A, B)``: for ``A``, ``K``'s at ``(r mB + i,
    c nB + j)`` times ``B[i, j]``, summed over ``B``'s entries (for ``B``, the other way)."""

    __slots__ = ("g", "rows", "cols", "values", "scale", "left")

    def __init__(self, g, other, scale, left: bool):
        coo = scipy_sparse().coo_matrix(other)
        self.g, self.rows, self.cols, self.values = g, coo.row, coo.col, coo.data
        self.scale, self.left = scale, left

    def __call__(self, rows, cols):
        mb, nb = self.scale
        r, c = rows[:, None], cols[:, None]
        if self.left:  # (A's entry (r, c) meets B's (i, j) at (r mB + i, c nB + j))
            at_r, at_c = r * mb + self.rows, c * nb + self.cols
        else:  # (B's entry (r, c) meets A's (i, j) at (i mB + r, j nB + c))
            at_r, at_c = self.rows * mb + r, self.cols * nb + c
        if not self.values.size:
            return np.zeros(rows.shape)
        values = self.g.at(at_r.ravel(), at_c.ravel()).reshape(at_r.shape)
        return values @ self.values


def sparse_kron_adjoint(g, a, b, wrt: int):
    """The gradient of ``kron(A, B)`` with respect to ``A`` (0) or ``B`` (1), either sparse or
    dense."""
    if is_zero(g):
        return g
    mb, nb = np.shape(b)
    x = a if wrt == 0 else b
    term = _KronPart(g, b if wrt == 0 else a, (mb, nb), wrt == 0)
    if is_sparse(x):
        return SparseGrad(x.shape, term)
    rows, cols = np.indices(np.shape(x))
    return term(rows.ravel(), cols.ravel()).reshape(np.shape(x))


def sparse_kron_adjoint_tangent(g, da, db, a, b, wrt: int):
    """The term of ``sparse_kron_adjoint(g, a, b, wrt)``'s tangent from the other factor's."""
    return _other_operand_term(sparse_kron_adjoint, g, da, db, a, b, wrt)


def sparse_kron_tangent(ta, tb, a, b, ans):
    """The tangent of ``kron(A, B)``: ``kron(dA, B) + kron(A, dB)``."""
    sp = scipy_sparse()
    out = 0.0
    if not is_zero(ta):
        out = sp.kron(ta, b, format=ans.format)
    if not is_zero(tb):
        out = out + sp.kron(a, tb, format=ans.format)
    return _like(out.asformat(ans.format), ans) if is_sparse(out) else out


# --- solves ------------------------------------------------------------------------------------

def spsolve_adjoint(g, a, b, x):
    """``(A's gradient, b's)`` of ``x = spsolve(A, b)``: ``lam = spsolve(A.T, g)``, one
    transposed sparse solve; ``b``'s is ``lam``, ``A``'s is ``-lam x^T`` read at the data's
    coordinates."""
    if is_sparse(b):
        raise NotImplementedError("spsolve with a sparse right-hand side is not differentiated "
                                  "yet; pass b.toarray()")
    spsolve = _spsolve()
    g = np.asarray(g)
    lam = spsolve(a.T.tocsc(), g.reshape(np.shape(x)))
    lam = np.asarray(lam).reshape(np.shape(x))
    xs = np.asarray(x)
    ga = SparseGrad(a.shape, _Outer(-lam, xs))
    return ga, lam.reshape(np.shape(b))


def _solve_adjoint_tangent(solve_t, t_g, t_a, t_x, g, a, b, x, outer=True):
    """Tangent of ``(ga, gb)`` of a solve ``x = A^-1 b`` whose adjoint is ``gb = lam =
    solve_t(g)`` (``A^-T g``) and ``ga = -lam x^T`` (``outer=False``: ``-x lam^T``, a solve
    with ``A^T``): ``dlam = solve_t(dg - dA^T lam)``, ``dga = -(dlam x^T + lam dx^T)``, read at
    the data of a sparse ``A`` (or its factorization), dense for an array."""
    xs = np.asarray(x)
    lam = np.asarray(solve_t(np.asarray(g, dtype=float).reshape(xs.shape))).reshape(xs.shape)
    rhs = np.zeros(xs.shape) if is_zero(t_g) else np.asarray(t_g, dtype=float).reshape(xs.shape)
    if not is_zero(t_a):
        rhs = rhs - np.asarray((t_a.T if outer else t_a) @ lam).reshape(xs.shape)
    dlam = np.asarray(solve_t(rhs)).reshape(xs.shape)

    def term(u, v):  # (-u v^T, or -v u^T, read at the data; dense for an array A)
        u, v = (u, v) if outer else (v, u)
        if isinstance(a, np.ndarray):
            return -(np.outer(u, v) if u.ndim == 1 else u @ v.T)
        return SparseGrad(a.shape, _Outer(-u, v))

    dga = term(dlam, xs)
    if not is_zero(t_x):
        dga = dga + term(lam, np.broadcast_to(np.asarray(t_x, dtype=float), xs.shape))
    return GradTuple((dga, dlam.reshape(np.shape(b))))


def spsolve_adjoint_tangent(t_g, t_a, t_x, g, a, b, x):
    """Tangent of ``(ga, gb) = spsolve_adjoint(g, A, b, x)`` (forward over reverse): the
    transposed solve of ``dg - dA^T lam``."""
    at = a.T.tocsc()
    return _solve_adjoint_tangent(lambda r: _spsolve()(at, r), t_g, t_a, t_x, g, a, b, x)


def spsolve_tangent(t_a, a, x):
    """The term of ``x = spsolve(A, b)``'s tangent from ``A``'s: ``-A^{-1} (dA x)``."""
    rhs = t_a @ np.asarray(x)
    return -np.asarray(_spsolve()(a, rhs)).reshape(np.shape(x))


def spsolve_b_tangent(t_b, a, x):
    """The term of ``x = spsolve(A, b)``'s tangent from ``b``'s: ``A^{-1} db``."""
    return np.asarray(_spsolve()(a, t_b)).reshape(np.shape(x))


# --- a factorization reused, and iterative solvers ---------------------------------------------

def _factors(lu):
    """The SuperLU factors of ``splu(A)``, or of ``factorized(A)`` (its bound ``solve``)."""
    owner = getattr(lu, "__self__", lu)
    if not hasattr(owner, "solve") or not hasattr(owner, "perm_c"):
        raise NotImplementedError("a solve made by factorized() with UMFPACK is not "
                                  "differentiated (its factors cannot be reused transposed); "
                                  "use scipy.sparse.linalg.splu(A).solve")
    return owner


def factor_solve_adjoint(g, lu, b, x, trans="N"):
    """``(the factor's gradient, b's)`` of ``x = lu.solve(b, trans)`` for ``lu = splu(A)`` (or
    ``x = solve(b)`` for ``solve = factorized(A)``): one solve with the same factors,
    transposed (``lam = lu.solve(g, "T")``); the factor's gradient is ``A``'s, ``-lam x^T``
    read at the data (``-x lam^T`` for ``trans="T"``), which ``splu``'s rule passes on to
    ``A``."""
    lu = _factors(lu)
    if trans not in ("N", "T"):
        raise NotImplementedError("lu.solve(b, trans='H') is not differentiated (real "
                                  "matrices: 'T' is the same)")
    if is_sparse(b):
        raise NotImplementedError("lu.solve of a sparse right-hand side is not differentiated "
                                  "yet; pass b.toarray()")
    g = np.asarray(g, dtype=float).reshape(np.shape(x))
    lam = lu.solve(np.ascontiguousarray(g), "T" if trans == "N" else "N")
    term = _Outer(-lam, np.asarray(x)) if trans == "N" else _Outer(-np.asarray(x), lam)
    return SparseGrad(lu.shape, term), lam.reshape(np.shape(b))


def factor_solve_tangent(t_lu, t_b, lu, x, trans="N"):
    """The tangent of ``x = lu.solve(b, trans)``: ``lu.solve(db - dA x)``, the factor's tangent
    being the matrix's."""
    lu = _factors(lu)
    rhs = 0.0 if is_zero(t_b) else np.asarray(t_b, dtype=float)
    if not is_zero(t_lu):
        rhs = rhs - (t_lu if trans == "N" else t_lu.T) @ np.asarray(x)
    if is_zero(rhs):
        return np.zeros(np.shape(x))
    return lu.solve(np.ascontiguousarray(np.broadcast_to(rhs, np.shape(x))), trans)


def factor_solve_adjoint_tangent(t_g, t_lu, t_x, g, lu, b, x, trans="N"):
    """Tangent of ``factor_solve_adjoint(g, lu, b, x, trans)``: the same factors' transposed
    solve of ``dg - dA^T lam`` (the factor's tangent is the matrix's)."""
    lu = _factors(lu)
    back = "T" if trans == "N" else "N"

    def solve_t(r):
        return lu.solve(np.ascontiguousarray(r, dtype=float), back)

    return _solve_adjoint_tangent(solve_t, t_g, t_lu, t_x, g, lu, b, x, outer=trans == "N")


_SYMMETRIC = frozenset({"cg", "minres"})  # (the methods for symmetric A: A.T is A)


def _iterative(name: str):
    import scipy.sparse.linalg as spla

    return getattr(spla, name)


def _transposed(a, symmetric: bool):
    """``a.T`` (a matrix, an array, a LinearOperator), or ``a`` itself for the symmetric
    methods."""
    if a is None or symmetric:
        return a
    return a.T


def _transposed_preconditioner(m, symmetric: bool):
    """A preconditioner for the transposed system: ``M.T``, or none where ``M`` is an operator
    of a ``matvec`` alone (``LinearOperator(shape, ilu.solve)``: no ``rmatvec``), so that the
    adjoint solve runs unpreconditioned (a solve that then fails to converge raises)."""
    if m is None or symmetric or not hasattr(m, "rmatvec"):
        return _transposed(m, symmetric)
    try:
        m.rmatvec(np.zeros(m.shape[0]))
    except NotImplementedError:
        return None
    return m.T


def _options(name: str, rtol, atol, maxiter, options: dict, transposed: bool) -> dict:
    """The keywords the method is called with: the relative tolerance (``tol`` where the caller
    gave that, SciPy before 1.12's name; passed by the name this SciPy takes), ``maxiter``,
    ``atol`` but for ``minres``, which has none, and ``options`` (its preconditioners ``M``, or
    qmr's left and right ``M1``, ``M2``, and its own settings). For the transposed system the
    preconditioners are transposed, and qmr's swap sides: ``(M1 A M2)^T = M2^T A^T M1^T``."""
    import inspect

    options = dict(options)
    tol = options.pop("tol", None)
    keyword = "rtol" if "rtol" in inspect.signature(_iterative(name)).parameters else "tol"
    out = {keyword: rtol if tol is None else tol, "maxiter": maxiter, **options}
    if name != "minres":
        out["atol"] = atol
    if transposed:
        symmetric = name in _SYMMETRIC
        for key in ("M", "M1", "M2"):
            if key in out:
                out[key] = _transposed_preconditioner(options[key], symmetric)
        if name == "qmr":
            out["M1"], out["M2"] = out["M2"], out["M1"]
    return out


def _converged(info, name: str, which: str) -> None:
    if info != 0:
        raise RuntimeError(f"scipy.sparse.linalg.{name} did not converge (info={info}) in "
                           f"{which}: its result is not the solution whose derivative the "
                           "implicit function theorem gives; raise maxiter or loosen rtol, or "
                           "precondition (M=...)")


def iterative_adjoint(g, name: str, a, b, ans, rtol, atol, maxiter, options: dict):
    """``(A's gradient, b's)`` of ``x, info = <name>(A, b, ...)`` (cg, minres, gmres, lgmres,
    gcrotmk, bicg, bicgstab, cgs, qmr, tfqmr): the same method on the transposed system with
    the caller's tolerances, settings and preconditioners (transposed), ``lam = <name>(A.T,
    g)``; ``b``'s is ``lam`` and ``A``'s ``-lam x^T``: read at the data of a sparse ``A``, dense
    for an array, none for a ``LinearOperator`` (not differentiated). Its error is the
    solver's: ``rtol`` relative to ``|g|``, times ``A``'s conditioning."""
    x, info = ans
    gx = g[0] if isinstance(g, tuple) else g
    if is_zero(gx):
        return 0.0, 0.0
    _converged(info, name, "the primal solve")
    gx = np.asarray(gx, dtype=float)
    lam, back = _iterative(name)(_transposed(a, name in _SYMMETRIC), gx,
                                 **_options(name, rtol, atol, maxiter, options, True))
    _converged(back, name, "the adjoint solve (with A.T)")
    x = np.asarray(x)
    if is_sparse(a):
        ga = SparseGrad(a.shape, _Outer(-lam, x))
    elif isinstance(a, np.ndarray):
        ga = -np.outer(lam, x)
    else:
        ga = 0.0  # (a LinearOperator: its products are not differentiated)
    return ga, lam.reshape(np.shape(b))


def iterative_adjoint_tangent(t_g, t_a, t_ans, g, name: str, a, b, ans, rtol, atol, maxiter,
                              options: dict):
    """Tangent of ``iterative_adjoint(g, name, A, b, ans, ...)``: the same method on the
    transposed system, of ``dg - dA^T lam``, with the caller's tolerances (its error is the
    solver's, as the gradient's)."""
    x, info = ans
    gx = g[0] if isinstance(g, tuple) else g
    if is_zero(gx):
        return GradTuple((0.0, 0.0))
    dgx = t_g[0] if isinstance(t_g, tuple) else t_g
    dx = t_ans[0] if isinstance(t_ans, tuple) else t_ans
    _converged(info, name, "the primal solve")
    if not (is_sparse(a) or isinstance(a, np.ndarray)):
        t_a, dx = 0.0, 0.0  # (a LinearOperator: its products are not differentiated)
    method = _iterative(name)
    at = _transposed(a, name in _SYMMETRIC)
    settings = _options(name, rtol, atol, maxiter, options, True)

    def solve_t(r):
        if not np.any(r):
            return np.zeros(np.shape(r))
        lam, back = method(at, r, **settings)
        _converged(back, name, "the adjoint solve (with A.T)")
        return lam

    ga, gb = _solve_adjoint_tangent(solve_t, dgx, t_a, dx, gx, a, b, x)
    return GradTuple((ga if is_sparse(a) or isinstance(a, np.ndarray) else 0.0, gb))


def iterative_tangent(t_a, t_b, name: str, a, ans, rtol, atol, maxiter, options: dict):
    """The tangent of ``x, info = <name>(A, b, ...)``: ``(<name>(A, db - dA x), 0)``, with the
    caller's tolerances, settings and preconditioners."""
    from runtime.containers import GradTuple

    x, info = ans
    _converged(info, name, "the primal solve")
    rhs = np.zeros(np.shape(x)) if is_zero(t_b) else np.asarray(t_b, dtype=float)
    if not is_zero(t_a):
        rhs = rhs - t_a @ np.asarray(x)
    if not np.any(rhs):
        return GradTuple((np.zeros(np.shape(x)), 0.0))
    dx, done = _iterative(name)(a, rhs, **_options(name, rtol, atol, maxiter, options, False))
    _converged(done, name, "the tangent solve")
    return GradTuple((dx, 0.0))


def _spsolve():
    from scipy.sparse.linalg import spsolve

    return spsolve


def sparse_grad_like(g, a):
    """The gradient of a sparse argument ``a``: a sparse matrix of its format and pattern (its
    stored entries, duplicates each read whole) holding the gradient's entries there."""
    sp = scipy_sparse()
    if is_zero(g):
        g = SparseGrad(a.shape)
    if a.format in ("csr", "csc"):
        rows, cols = _coordinates((a.data, a.indices, a.indptr), a)
        return type(a)((g.at(rows, cols), a.indices.copy(), a.indptr.copy()), shape=a.shape)
    if a.format == "dia":  # (its data, zeros too: tocoo would drop them)
        data = np.zeros(a.data.shape)
        for i, k in enumerate(a.offsets):
            cols = np.arange(a.data.shape[1])
            rows = cols - k
            inside = (rows >= 0) & (rows < a.shape[0]) & (cols < a.shape[1])
            data[i, inside] = g.at(rows[inside], cols[inside])
        return type(a)((data, a.offsets.copy()), shape=a.shape)
    coo = a.tocoo()
    out = sp.coo_matrix((g.at(coo.row, coo.col), (coo.row, coo.col)), shape=a.shape)
    return out.asformat(a.format) if isinstance(a, sp.spmatrix) else \
        sp.coo_array(out).asformat(a.format)
