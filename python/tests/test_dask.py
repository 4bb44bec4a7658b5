"""levelhist.dask.histogram on a distributed LocalCluster of two worker
processes: results identical to numpy.histogram of the computed array.
Skipped where dask or distributed is not installed."""
import logging

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import levelhist  # noqa: E402
import levelhist.dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # Two worker processes on loopback (they import levelhist through PYTHONPATH).
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_counts_on_two_workers_equal_numpy(client):
    rng = np.random.default_rng(3)
    x_np = rng.normal(0.5, 0.3, (1000, 700)).astype(np.float32)
    x_np[::7, ::11] = np.nan
    x = da.from_array(x_np, chunks=(137, 200))
    hist, edges = levelhist.dask.histogram(x, bins=1024, range=(0, 1))
    assert isinstance(hist, da.Array)
    want_hist, want_edges = np.histogram(x_np, 1024, (0, 1))
    np.testing.assert_array_equal(edges, want_edges)
    assert edges.dtype == np.float32  # numpy's float32 edges
    got = hist.compute()
    np.testing.assert_array_equal(got, want_hist)
    assert got.dtype == np.int64
    # Both workers took part.
    assert len(client.scheduler_info()["workers"]) == 2


def test_edges_weights_density_and_integers(client):
    rng = np.random.default_rng(4)
    x_np = rng.integers(0, 1000, 200_000).astype(np.int32)
    w_np = rng.random(200_000)
    x = da.from_array(x_np, chunks=30_000)
    w = da.from_array(w_np, chunks=50_000)  # other chunks: rechunked like x
    hist, edges = levelhist.dask.histogram(x, [0, 10, 100, 500, 999])
    np.testing.assert_array_equal(hist.compute(), np.histogram(x_np, [0, 10, 100, 500, 999])[0])
    whist, _ = levelhist.dask.histogram(x, 100, (0, 1000), weights=w)
    np.testing.assert_allclose(whist.compute(), np.histogram(x_np, 100, (0, 1000), weights=w_np)[0], rtol=1e-12)
    dens, _ = levelhist.dask.histogram(x, 100, (0, 1000), density=True)
    np.testing.assert_allclose(dens.compute(), np.histogram(x_np, 100, (0, 1000), density=True)[0], rtol=1e-12)


def test_needs_a_range_for_a_number_of_bins():
    x = da.zeros(10, chunks=5)
    with pytest.raises(ValueError):
        levelhist.dask.histogram(x, 10)
