"""Gradients through scipy.linalg: what they cost beside the primal and a hand-written adjoint.

Run from the repository root::

    python -m tests.benchmarks.bench_linalg            # ~1 minute
    python -m tests.benchmarks.bench_linalg --quick

Not part of the test suite. Workloads:

  1. a Gaussian-process negative log-likelihood at n = 2,000 (``cho_factor``/``cho_solve``),
     gradient with respect to the length scale; target: within 1.5x of the hand-written
     adjoint (``W = (K^-1 - alpha alpha^T) / 2`` contracted with ``dK/dl``);
  2. a tridiagonal system of 200,000 unknowns in band storage (``solve_banded``), gradient with
     respect to its 3n data values and the right-hand side: time beside one primal solve, and
     the peak memory the gradient allocates beside the band's bytes (a dense matrix would take
     320 GB);
  3. the same system as a ``scipy.sparse`` matrix made from its 3n - 2 data values
     (``csr_matrix((data, (rows, cols)))``) and solved by ``spsolve``, gradient with respect to
     the data: targets, time within 4x one primal solve and peak memory within 30x the
     matrix's data and index bytes;
  4. an assembly loop: a 1-D finite-element matrix written element by element into a
     ``lil_matrix`` by a connectivity (``A[nodes[a], nodes[b]] += ...``, four writes per
     element) and solved, gradient with respect to the element conductivities, at two sizes:
     the time per element should not grow with the mesh (the adjoint of a write is O(1)).

Each gradient is checked against the hand-written one before it is timed; rows are timed
round-robin in one process (the minimum over rounds is reported).
"""

from __future__ import annotations

import argparse
import tracemalloc

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from tests.benchmarks.bench_call import table
from transpiler import grad


def gp_loss(length, x, y):
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / length ** 2) + 0.1 * np.eye(x.size)
    factor = sla.cho_factor(K, lower=True)
    alpha = sla.cho_solve(factor, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(factor[0])))


def gp_hand(length, x, y):
    d2 = (x[:, None] - x[None, :]) ** 2
    k0 = np.exp(-0.5 * d2 / length ** 2)
    factor = sla.cho_factor(k0 + 0.1 * np.eye(x.size), lower=True)
    alpha = sla.cho_solve(factor, y)
    w = 0.5 * (sla.cho_solve(factor, np.eye(x.size)) - np.outer(alpha, alpha))
    return np.sum(w * k0 * d2) / length ** 3


def banded_loss(ab, b):
    x = sla.solve_banded((1, 1), ab, b)
    return np.sum(x * x)


def sparse_loss(data, rows, cols, b):
    A = sp.csr_matrix((data, (rows, cols)), shape=(b.size, b.size))
    x = spsolve(A, b)
    return np.sum(x * x)


def lil_assembled(k, conn, f):
    n = f.shape[0]
    A = sp.lil_matrix((n, n))
    for e in range(k.shape[0]):
        nodes = conn[e]
        for a in range(2):
            for b in range(2):
                A[nodes[a], nodes[b]] += k[e] * (1.0 if a == b else -1.0)
    A[0, 0] += 1.0
    u = spsolve(A.tocsr(), f)
    return np.sum(u ** 2)


def tridiagonal(n: int):
    """The 3n - 2 data values and coordinates of a diagonally dominant tridiagonal matrix."""
    i = np.arange(n)
    rows = np.concatenate([i, i[1:], i[:-1]])
    cols = np.concatenate([i, i[:-1], i[1:]])
    data = np.concatenate([np.full(n, 4.0), np.full(n - 1, -1.0), np.full(n - 1, -1.0)])
    return data, rows, cols


def peak_bytes(f, *args) -> int:
    tracemalloc.start()
    f(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    rounds = 3 if quick else 7
    x = np.linspace(0.0, 20.0, 2000)
    y = np.sin(x) + 0.1 * np.cos(7.0 * x)
    dgp = grad(gp_loss)
    np.testing.assert_allclose(dgp(1.3, x, y), gp_hand(1.3, x, y), rtol=1e-7)
    table("GP negative log-likelihood, n = 2000", {
        "primal": lambda: gp_loss(1.3, x, y),
        "hand-written gradient": lambda: gp_hand(1.3, x, y),
        "grad(f)": lambda: dgp(1.3, x, y),
    }, 1, rounds, "hand-written gradient")

    n = 200_000
    ab = np.vstack([np.full(n, -1.0), np.full(n, 4.0), np.full(n, -1.0)])
    b = np.cos(np.arange(n) * 1e-3)
    dband = grad(banded_loss, wrt=(0, 1))
    dband(ab, b)  # (compiled here, not in the timing)
    table("tridiagonal solve, 200,000 unknowns", {
        "primal solve": lambda: sla.solve_banded((1, 1), ab, b),
        "grad(f) wrt (ab, b)": lambda: dband(ab, b),
    }, 3, rounds, "primal solve")
    peak = peak_bytes(dband, ab, b)
    print(f"  peak allocated by the gradient: {peak / 1e6:.1f} MB, "
          f"{peak / (ab.nbytes + b.nbytes):.1f}x the band and right-hand side")

    data, rows, cols = tridiagonal(n)
    A = sp.csr_matrix((data, (rows, cols)), shape=(n, n))
    dsparse = grad(sparse_loss)
    g = dsparse(data, rows, cols, b)  # (compiled here, not in the timing)
    x = spsolve(A, b)
    lam = spsolve(A.T.tocsc(), 2.0 * x)
    np.testing.assert_allclose(g, -lam[rows] * x[cols], rtol=1e-9, atol=1e-14)
    table("the same system as a scipy.sparse matrix from its data, spsolve", {
        "primal solve": lambda: spsolve(A, b),
        "primal (build + solve)": lambda: sparse_loss(data, rows, cols, b),
        "grad(f) wrt data": lambda: dsparse(data, rows, cols, b),
    }, 3, rounds, "primal solve")
    stored = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
    peak = peak_bytes(dsparse, data, rows, cols, b)
    print(f"  peak allocated by the gradient: {peak / 1e6:.1f} MB, "
          f"{peak / stored:.1f}x the matrix's data and index bytes ({stored / 1e6:.1f} MB)")

    dassembled = grad(lil_assembled)
    for m in (2_000, 8_000) if quick else (5_000, 20_000):
        k = np.linspace(1.0, 2.0, m)
        conn = np.stack([np.arange(m), np.arange(1, m + 1)], axis=1)
        f = np.ones(m + 1)
        dassembled(k, conn, f)  # (compiled here, not in the timing)
        table(f"assembly loop into a lil_matrix, {m:,} elements", {
            "primal (assemble + solve)": lambda k=k, conn=conn, f=f: lil_assembled(k, conn, f),
            "grad(f) wrt k": lambda k=k, conn=conn, f=f: dassembled(k, conn, f),
        }, 1, rounds, "primal (assemble + solve)")


if __name__ == "__main__":
    main()
