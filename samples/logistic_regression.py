"""Fit a logistic regression by gradient descent, with the gradient compiled from the loss.

Run:  python samples/logistic_regression.py
"""

import numpy as np

from transpiler import value_and_grad


def loss(w, b, X, y):
    """Mean negative log-likelihood of labels ``y`` (0/1) under logits ``X @ w + b``."""
    z = X @ w + b
    # log(1 + exp(z)) - y * z, written stably with logaddexp-free NumPy
    softplus = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    return np.mean(softplus - y * z)


def main() -> None:
    rng = np.random.default_rng(0)
    true_w = np.array([2.0, -1.0, 0.5])
    X = rng.normal(size=(500, 3))
    y = (X @ true_w + 0.3 + 0.5 * rng.normal(size=500) > 0).astype(float)

    step = value_and_grad(loss, wrt=("w", "b"))
    w, b = np.zeros(3), 0.0
    for it in range(301):
        value, (gw, gb) = step(w, b, X, y)
        w, b = w - 1.0 * gw, b - 1.0 * gb
        if it % 100 == 0:
            print(f"iteration {it:3d}  loss {value:.4f}")
    accuracy = np.mean(((X @ w + b) > 0) == (y > 0.5))
    print("weights", np.round(w, 3), "bias", round(b, 3), f"training accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
