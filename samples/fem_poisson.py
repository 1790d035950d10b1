"""Sensitivities of a finite-element solution to the conductivity of every element.

The model is the Poisson problem -div(k grad u) = f with u = 0 on the boundary, discretised by
linear finite elements: in 1-D on a uniform mesh of the unit interval, in 2-D on a mesh of right
triangles over the unit square. Each element adds its stiffness matrix, scaled by its own
conductivity ``k[e]``, into COO data (rows, columns, values; SciPy sums the duplicates), or
entry by entry into a ``lil_matrix`` in a loop over the elements; the load
vector is assembled with ``np.add.at``; the boundary rows and columns are dropped by indexing the
sparse matrix, and ``spsolve`` gives the nodal values. The loss is the squared misfit to a
target field, and ``grad`` gives its derivative with respect to every ``k[e]`` at once: one
transposed sparse solve, the outer product of the adjoint and the solution read only where the
matrix has data, and the assembly taken back to the elements. The matrix is never dense.

Run:  pip install -e ".[scipy]" && python samples/fem_poisson.py
"""

import numpy as np

try:
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve
except ImportError:  # (the plain install is NumPy alone)
    raise SystemExit('this sample needs SciPy: pip install -e ".[scipy]"') from None

from transpiler import check_grad, grad

# --- 1-D: n elements on [0, 1] ---------------------------------------------------------------


def misfit_1d(k, f, target):
    """Squared misfit of the finite-element solution with element conductivities ``k``."""
    n = k.size
    h = 1.0 / n
    e = np.arange(n)
    rows = np.concatenate([e, e, e + 1, e + 1])
    cols = np.concatenate([e, e + 1, e, e + 1])
    values = np.concatenate([k, -k, -k, k]) / h
    K = sp.coo_matrix((values, (rows, cols)), shape=(n + 1, n + 1)).tocsr()
    F = np.zeros(n + 1)
    np.add.at(F, e, 0.5 * h * f)  # each element's load, half to each of its nodes
    np.add.at(F, e + 1, 0.5 * h * f)
    u = spsolve(K[1:-1, 1:-1], F[1:-1])
    return np.sum((u - target) ** 2)


def misfit_1d_loop(k, f, target):
    """The same model assembled as many codes do: element by element, into a lil_matrix."""
    n = k.size
    h = 1.0 / n
    K = sp.lil_matrix((n + 1, n + 1))
    F = np.zeros(n + 1)
    for e in range(n):
        K[e, e] += k[e] / h
        K[e, e + 1] -= k[e] / h
        K[e + 1, e] -= k[e] / h
        K[e + 1, e + 1] += k[e] / h
        F[e] += 0.5 * h * f[e]
        F[e + 1] += 0.5 * h * f[e]
    u = spsolve(K.tocsr()[1:-1, 1:-1], F[1:-1])
    return np.sum((u - target) ** 2)


# --- 2-D: 2 m^2 right triangles on the unit square --------------------------------------------


def mesh(m):
    """Nodes (x, y) of an (m + 1) x (m + 1) grid, the triangles (three node numbers each), and
    the interior nodes."""
    xs = np.linspace(0.0, 1.0, m + 1)
    x, y = np.meshgrid(xs, xs, indexing="ij")
    nodes = np.column_stack([x.ravel(), y.ravel()])
    number = np.arange((m + 1) ** 2).reshape(m + 1, m + 1)
    a, b = number[:-1, :-1].ravel(), number[1:, :-1].ravel()
    c, d = number[:-1, 1:].ravel(), number[1:, 1:].ravel()
    triangles = np.concatenate([np.column_stack([a, b, d]), np.column_stack([a, d, c])])
    inside = number[1:-1, 1:-1].ravel()
    return nodes, triangles, inside


def misfit_2d(k, nodes, triangles, inside, f, target):
    """Squared misfit of the 2-D finite-element solution with triangle conductivities ``k``."""
    p = nodes[triangles]  # (elements, 3 corners, 2 coordinates)
    e1, e2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    area = 0.5 * np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0])
    # gradients of the three hat functions on each triangle: (elements, 3, 2)
    edges = np.stack([p[:, 2] - p[:, 1], p[:, 0] - p[:, 2], p[:, 1] - p[:, 0]], axis=1)
    grads = np.stack([-edges[:, :, 1], edges[:, :, 0]], axis=2) / (2.0 * area[:, None, None])
    local = np.einsum("eik,ejk->eij", grads, grads) * (k * area)[:, None, None]
    rows = np.repeat(triangles, 3, axis=1).ravel()
    cols = np.tile(triangles, (1, 3)).ravel()
    n = nodes.shape[0]
    K = sp.coo_matrix((local.ravel(), (rows, cols)), shape=(n, n)).tocsr()
    F = np.zeros(n)
    np.add.at(F, triangles.ravel(), np.repeat(f * area / 3.0, 3))
    u = spsolve(K[inside][:, inside], F[inside])
    return np.sum((u - target) ** 2)


def main():
    n = 8
    k = 1.0 + 0.5 * np.sin(np.linspace(0.0, 3.0, n))
    f = np.ones(n)
    target = np.full(n - 1, 0.05)
    g = grad(misfit_1d)(k, f, target)
    print(f"1-D, {n} elements: loss {misfit_1d(k, f, target):.6f}")
    print("d loss / d k =", np.array2string(g, precision=5))
    check_grad(misfit_1d, k, f, target)  # (against central differences: raises if they differ)
    g_loop = grad(misfit_1d_loop)(k, f, target)  # (written entry by entry: the same gradient)
    print("assembled in a loop into a lil_matrix, the same:", np.allclose(g_loop, g, rtol=1e-10))

    m = 6
    nodes, triangles, inside = mesh(m)
    rng = np.random.default_rng(0)
    k2 = rng.uniform(0.5, 2.0, len(triangles))
    f2 = np.ones(len(triangles))
    target2 = np.full(inside.size, 0.02)
    g2 = grad(misfit_2d)(k2, nodes, triangles, inside, f2, target2)
    print(f"2-D, {len(triangles)} triangles: loss "
          f"{misfit_2d(k2, nodes, triangles, inside, f2, target2):.6e}")
    print(f"largest |d loss / d k|: {np.abs(g2).max():.6e} (triangle {np.abs(g2).argmax()})")
    check_grad(misfit_2d, k2, nodes, triangles, inside, f2, target2)
    print("both gradients match central differences")
    print()
    print("The adjoint of the 1-D model, as compiled:")
    print(grad(misfit_1d).source)


if __name__ == "__main__":
    main()
