"""Train a small tanh network to fit sin(x) on [-3, 3], with a compiled gradient.

The network is a multilayer perceptron with two hidden layers of 16 tanh units; its parameters
are a dict of NumPy arrays, and ``value_and_grad(loss)`` returns the loss together with a dict
of gradients with the same keys and shapes. The optimiser is Adam, written out in NumPy, with a
step size that decays linearly.

Run:  python samples/neural_network.py [plot.png]
(the plot is written only when a PNG path is given and matplotlib is installed)
"""

import sys

import numpy as np

from transpiler import check_grad, value_and_grad

HIDDEN = 16


def init_params(rng):
    def layer(n_in, n_out):
        return rng.normal(size=(n_in, n_out)) / np.sqrt(n_in), np.zeros(n_out)

    w1, b1 = layer(1, HIDDEN)
    w2, b2 = layer(HIDDEN, HIDDEN)
    w3, b3 = layer(HIDDEN, 1)
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "b3": b3}


def predict(params, x):
    """Network output for inputs ``x`` of shape (n, 1)."""
    h1 = np.tanh(x @ params["w1"] + params["b1"])
    h2 = np.tanh(h1 @ params["w2"] + params["b2"])
    return h2 @ params["w3"] + params["b3"]


def loss(params, x, y):
    """Mean squared error of the network on the samples (x, y)."""
    return np.mean((predict(params, x) - y) ** 2)


def main() -> None:
    rng = np.random.default_rng(0)
    x = np.linspace(-3.0, 3.0, 64)[:, None]
    y = np.sin(x)
    params = init_params(rng)
    check_grad(loss, params, x, y)  # every entry of every array agrees with finite differences

    step = value_and_grad(loss)
    learning_rate, beta1, beta2, eps = 0.01, 0.9, 0.999, 1e-8
    m = {key: np.zeros_like(value) for key, value in params.items()}
    v = {key: np.zeros_like(value) for key, value in params.items()}
    initial_loss = loss(params, x, y)
    print(f"network 1-{HIDDEN}-{HIDDEN}-1, tanh, {sum(p.size for p in params.values())} "
          f"parameters, {len(x)} samples of sin on [-3, 3]")
    steps = 2000
    for it in range(1, steps + 1):
        rate = learning_rate * (1 - it / (steps + 1))  # decays linearly, for a calm finish
        value, grads = step(params, x, y)
        for key in params:
            m[key] = beta1 * m[key] + (1 - beta1) * grads[key]
            v[key] = beta2 * v[key] + (1 - beta2) * grads[key] ** 2
            m_hat = m[key] / (1 - beta1 ** it)
            v_hat = v[key] / (1 - beta2 ** it)
            params[key] = params[key] - rate * m_hat / (np.sqrt(v_hat) + eps)
        if it % 500 == 0:
            print(f"step {it:5d}  loss {value:.6f}")

    final_loss = loss(params, x, y)
    x_test = np.linspace(-3.0, 3.0, 201)[:, None]
    max_error = np.max(np.abs(predict(params, x_test) - np.sin(x_test)))
    print(f"loss before training: {initial_loss:.6f}")
    print(f"loss after training:  {final_loss:.6f}")
    print(f"largest error on a finer grid: {max_error:.4f}")

    if len(sys.argv) > 1:
        plot(sys.argv[1], x, y, x_test, predict(params, x_test))


def plot(path, x, y, x_test, y_test):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot written")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x[:, 0], y[:, 0], ".", label="training data: sin(x)")
    ax.plot(x_test[:, 0], y_test[:, 0], "-", label="network")
    ax.set_xlabel("x")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
