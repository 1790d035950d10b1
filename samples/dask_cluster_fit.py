"""Fit a logistic regression to data spread over a Dask cluster, with a compiled gradient.

A ``LocalCluster`` of two worker processes makes the data on the workers (X of 200,000 x 16,
chunked 8 ways along rows, labels drawn from a logistic model with known weights) and keeps it
there. The loss is ordinary NumPy code; ``value_and_grad`` of it, called on the Dask arrays with
NumPy parameters, returns a float and NumPy gradients from one pass over the chunks, and drives
SciPy's L-BFGS-B. At the solution the gradient is checked against the same call on NumPy arrays.

Run:  pip install -e ".[scipy,dask]" && python samples/dask_cluster_fit.py [--rows N]
(needs the Dask extra: pip install -e ".[dask]")
"""

import argparse
import time

import numpy as np

try:
    from scipy.optimize import minimize
except ImportError:  # (the plain install is NumPy alone)
    raise SystemExit('this sample needs SciPy: pip install -e ".[scipy,dask]"') from None

from transpiler import value_and_grad

try:
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster
except ImportError:
    dask = None

FEATURES, CHUNKS = 16, 8
TRUE_W, TRUE_B = np.linspace(-1.0, 1.0, FEATURES), 0.5


def loss(w, b, X, y):
    """Mean negative log-likelihood of labels ``y`` (0/1) under logits ``X @ w + b``, plus L2."""
    z = X @ w + b
    softplus = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))  # log(1 + exp(z)), stably
    return np.mean(softplus - y * z) + 1e-4 * np.sum(w * w)


def make_data(rows: int) -> tuple["da.Array", "da.Array"]:
    """X and y made chunk by chunk on the workers, and kept there."""
    rng = da.random.default_rng(0)
    X = rng.standard_normal((rows, FEATURES), chunks=(-(-rows // CHUNKS), FEATURES))
    p = 1.0 / (1.0 + np.exp(-(X @ TRUE_W + TRUE_B)))
    y = (rng.random(rows, chunks=X.chunks[0]) < p).astype(float)
    return dask.persist(X, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="number of samples")
    args = parser.parse_args()
    if dask is None:
        print('this sample needs Dask and distributed: pip install -e ".[dask]"')
        return

    with (LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                       dashboard_address=None) as cluster,
          Client(cluster) as client):
        workers = len(client.scheduler_info()["workers"])
        print(f"cluster: {workers} worker processes, 1 thread each")
        Xd, yd = make_data(args.rows)
        print(f"data: X {Xd.shape} in {Xd.npartitions} chunks, y {yd.shape}, "
              f"{np.mean(yd).compute():.3f} positive, on the workers")

        step = value_and_grad(loss, wrt=("w", "b"))
        seconds: list[float] = []

        def fun(p: np.ndarray) -> tuple[float, np.ndarray]:
            start = time.perf_counter()
            value, (gw, gb) = step(p[:-1], p[-1], Xd, yd)
            seconds.append(time.perf_counter() - start)
            return value, np.append(gw, gb)

        result = minimize(fun, np.zeros(FEATURES + 1), jac=True, method="L-BFGS-B")
        w, b = result.x[:-1], result.x[-1]
        print(f"final loss: {result.fun:.6f}  converged: {result.success}")
        print("fitted weights:", np.array2string(w, precision=2, max_line_width=120))
        print("true weights:  ", np.array2string(TRUE_W, precision=2, max_line_width=120))
        print(f"fitted bias: {b:.3f}  true bias: {TRUE_B:.3f}  "
              f"largest weight error: {np.max(np.abs(w - TRUE_W)):.4f}")
        print(f"L-BFGS-B iterations: {result.nit}  function/gradient evaluations: {result.nfev}")
        print(f"time per value_and_grad call: {1e3 * np.mean(seconds):.0f} ms "
              f"(median {1e3 * np.median(seconds):.0f} ms)")

        # the same gradient at the solution, on the data computed to NumPy arrays
        value_d, (gw_d, gb_d) = step(w, b, Xd, yd)
        X, y = dask.compute(Xd, yd)
        value_n, (gw_n, gb_n) = step(w, b, X, y)
        g_d, g_n = np.append(gw_d, gb_d), np.append(gw_n, gb_n)
        difference = max(abs(value_d - value_n) / abs(value_n),
                         np.max(np.abs(g_d - g_n)) / np.max(np.abs(g_n)))
        print(f"value and gradient at the solution, max relative difference vs NumPy: "
              f"{difference:.1e}")


if __name__ == "__main__":
    main()
