"""Quick start: the gradient of a small NumPy function, and the code that computes it.

Run:  python samples/quickstart.py
"""

import numpy as np

from transpiler import check_grad, grad


def energy(x, k):
    """A soft nonlinear potential of the positions ``x`` (a scalar)."""
    stretch = k * x
    return np.sum(np.sin(stretch) * np.exp(-stretch ** 2)) + 0.5 * np.sum(x * x)


def main() -> None:
    x = np.linspace(-1.0, 1.0, 5)
    denergy = grad(energy)  # with respect to the first argument, x
    print("x             =", x)
    print("d energy / dx =", denergy(x, 2.0))
    check_grad(energy, x, 2.0)  # raises AssertionError if it disagrees with finite differences
    print("agrees with central finite differences")
    print()
    print("generated source of grad(energy):")
    print(denergy.source)


if __name__ == "__main__":
    main()
