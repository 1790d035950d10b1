"""Quick start: the gradient of a small NumPy function, and the code that computes it; then the
same function in forward mode (a directional derivative, and its code).

Run:  python samples/quickstart.py
"""

import numpy as np

from transpiler import check_grad, forward, grad


def energy(x, k):
    """A soft nonlinear potential of the positions ``x`` (a scalar)."""
    stretch = k * x
    return np.sum(np.sin(stretch) * np.exp(-stretch ** 2)) + 0.5 * np.sum(x * x)


def main() -> None:
    x = np.linspace(-0.5, 1.0, 4)
    denergy = grad(energy)  # with respect to the first argument, x
    print("x             =", x)
    print("d energy / dx =", denergy(x, 2.0))
    check_grad(energy, x, 2.0)  # raises AssertionError if it disagrees with finite differences
    print("agrees with central finite differences")
    print()
    print("generated source of grad(energy):")
    print(denergy.source)
    print()
    tangent = forward(energy, wrt="k")  # d energy / dk along dk, in one forward sweep
    value, slope = tangent(x, 2.0, dk=1.0)
    print("energy =", value, "  d energy / dk =", slope)
    print("generated source of forward(energy, wrt='k'):")
    print(tangent.source)


if __name__ == "__main__":
    main()
