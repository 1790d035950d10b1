"""Gradients of Dask (and CuPy) arrays: the generated code runs on them as on NumPy arrays, a
gradient mirrors its argument (NumPy in, NumPy out; Dask in, lazy Dask out) and one call
computes what must be concrete in one pass over the data (``runtime.lazy``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from transpiler import grad, value_and_grad

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

N, FEATURES, CHUNKS = 200_000, 16, 8


class Source:
    """An array-like that counts how often Dask loads a chunk of it."""

    def __init__(self, a: np.ndarray):
        self.a, self.shape, self.dtype, self.ndim = a, a.shape, a.dtype, a.ndim
        self.loads = 0

    def __getitem__(self, index):
        self.loads += 1
        return self.a[index]


def mlp_loss(params, X, y):
    W1, b1, w2, b2 = params
    h = np.tanh(X @ W1 + b1)
    out = h @ w2 + b2
    return np.mean((out - y) ** 2)


def data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, FEATURES))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    params = (0.3 * rng.normal(size=(FEATURES, 8)), np.zeros(8), 0.3 * rng.normal(size=8), 0.1)
    return params, X, y


def close(a, b, rtol=1e-10):
    return np.allclose(a, b, rtol=rtol, atol=1e-14)


def check_mirrors_numpy(params, got, want):
    value, grads = got
    want_value, want_grads = want
    assert isinstance(value, float) and close(value, want_value)
    for p, g, w in zip(params, grads, want_grads, strict=True):
        if isinstance(p, np.ndarray):
            assert type(g) is np.ndarray and g.shape == p.shape and g.dtype == p.dtype
            assert g.flags.writeable
        else:
            assert type(g) is float
        assert close(g, w)


def test_one_call_reads_each_chunk_once():
    params, X, y = data()
    sx, sy = Source(X), Source(y)
    Xd = da.from_array(sx, chunks=(N // CHUNKS, FEATURES), meta=np.empty((0, 0)))
    yd = da.from_array(sy, chunks=N // CHUNKS, meta=np.empty(0))
    vg = value_and_grad(mlp_loss)
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("error")
        got = vg(params, Xd, yd)
    assert (sx.loads, sy.loads) == (CHUNKS, CHUNKS)
    check_mirrors_numpy(params, got, vg(params, X, y))


def test_the_gradient_of_a_dask_argument_is_lazy():
    params, X, y = data(1, n=4000)
    Xd, yd = da.from_array(X, chunks=(500, FEATURES)), da.from_array(y, chunks=500)
    vg = value_and_grad(mlp_loss, wrt=(1, 2))
    with dask.config.set(scheduler="synchronous"):
        value, (gX, gy) = vg(params, Xd, yd)
    want_value, (want_X, want_y) = vg(params, X, y)
    for g, want, arg in ((gX, want_X, Xd), (gy, want_y, yd)):
        assert isinstance(g, da.Array) and g.chunks == arg.chunks and g.dtype == arg.dtype
        assert close(g.compute(), want)
    assert isinstance(value, da.Array)  # every argument differentiated is lazy: so is the value
    assert close(float(value), want_value)


def test_a_mixed_gradient_computes_the_numpy_part_only():
    params, X, y = data(2, n=3000)
    Xd = da.from_array(X, chunks=(1000, FEATURES))
    g_params, g_X = grad(mlp_loss, wrt=(0, 1))(params, Xd, y)
    want_params, want_X = grad(mlp_loss, wrt=(0, 1))(params, X, y)
    assert all(type(g) in (np.ndarray, float) for g in g_params)
    assert all(close(g, w) for g, w in zip(g_params, want_params, strict=True))
    assert isinstance(g_X, da.Array) and close(g_X.compute(), want_X)


def test_a_float_argument_gets_a_float():
    X = da.from_array(np.linspace(0.0, 1.0, 12).reshape(6, 2), chunks=(2, 2))

    def f(s, X):
        return np.sum(np.exp(s * X))

    g = grad(f)(0.5, X)
    assert type(g) is float and close(g, grad(f)(0.5, X.compute()))


def test_a_function_dask_does_not_implement_is_refused_by_name():
    y = da.from_array(np.arange(8.0), chunks=4)

    def f(w, y):
        return np.sum(w * y) / np.size(y)

    with pytest.raises(TypeError, match=r"np\.size is not implemented for Dask arrays.*\.size"):
        grad(f)(np.ones(8), y)


def test_the_value_of_a_plain_numpy_call_is_unchanged():
    params, X, y = data(3, n=50)
    value, _ = value_and_grad(mlp_loss)(params, X, y)
    assert type(value) is np.float64


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the cluster's own start-up notices)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as c, distributed.Client(c) as client:
            yield client


def test_on_a_local_cluster_of_two_worker_processes(cluster):
    params, _, _ = data(4)
    rng = da.random.RandomState(4)  # the data made on the workers, chunk by chunk
    Xd = rng.normal(size=(N, FEATURES), chunks=(N // CHUNKS, FEATURES))
    yd = da.sin(Xd[:, 0]) + 0.1 * rng.normal(size=N, chunks=N // CHUNKS)
    assert len(cluster.scheduler_info()["workers"]) == 2
    vg = value_and_grad(mlp_loss)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vg(params, Xd, yd)
    X, y = dask.compute(Xd, yd)
    check_mirrors_numpy(params, got, vg(params, X, y))


def _gpu() -> str | None:
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no CuPy, or no device
        return f"needs CuPy and a GPU ({type(e).__name__}: {e})"
    return None


@pytest.mark.skipif(_gpu() is not None, reason=str(_gpu()))
def test_cupy_arrays_get_cupy_gradients():
    import cupy
    params, X, y = data(5, n=1000)
    Xc, yc = cupy.asarray(X), cupy.asarray(y)
    g = grad(mlp_loss, wrt=1)(params, Xc, yc)
    assert isinstance(g, cupy.ndarray)
    assert close(cupy.asnumpy(g), grad(mlp_loss, wrt=1)(params, X, y))
