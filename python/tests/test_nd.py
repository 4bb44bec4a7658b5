"""levelhist.histogramdd and levelhist.histogram2d against numpy itself, case by case.

Every expected value comes from numpy.histogramdd / numpy.histogram2d on the
same arguments: counts (float64, as numpy returns them) and every axis's
edges identical in value and dtype, density equal to the last bit (the same
arithmetic), errors of the same type. Host arrays; GPU arrays are in
test_gpu_arrays.py.
"""
import os

import numpy as np
import pytest

import levelhist
from levelhist import _nd

RNG = np.random.default_rng(int(os.environ.get("LEVELHIST_TEST_SEED", "20240611")))

DTYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.float32, np.float64, np.int64, np.uint64,
          np.float16, np.bool_]


def same_as_numpy(sample, *args, **kwargs):
    try:
        want_hist, want_edges = np.histogramdd(sample, *args, **kwargs)
    except Exception as e:
        with pytest.raises(type(e)):
            levelhist.histogramdd(sample, *args, **kwargs)
        return None
    got_hist, got_edges = levelhist.histogramdd(sample, *args, **kwargs)
    assert got_hist.dtype == want_hist.dtype and got_hist.shape == want_hist.shape
    np.testing.assert_array_equal(got_hist, want_hist)
    assert len(got_edges) == len(want_edges)
    for g, w in zip(got_edges, want_edges):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)
    return got_hist


def counted_by_levelhist(sample, bins, range=None):
    """Whether the call took an N-d plan (not numpy's fallback)."""
    _nd._plans.clear()
    levelhist.histogramdd(sample, bins, range)
    return len(_nd._plans) == 1


def coordinates(dtype, shape):
    if dtype == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        return RNG.normal(0.4, 0.6, shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(max(info.min, -300), min(info.max, 300), shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_interleaved_and_columns(dtype):
    x = coordinates(dtype, (20001, 2))
    for bins, range_ in [(10, None), ((7, 13), None), (16, [(0, 1), (-1, 2)]), (5, [(-300, 300), None]),
                         ([np.array([-1, 0, 0.25, 0.5, 3]), 4], None)]:
        same_as_numpy(x, bins, range_)  # an (N, 2) array
        same_as_numpy([x[:, 0], x[:, 1]], bins, range_)  # one array per axis
        same_as_numpy(np.asfortranarray(x), bins, range_)
    assert counted_by_levelhist(x, 10)


def test_float32_coordinates_on_and_next_to_edges():
    # numpy's float32 edges (range from the data) and float64 edges (a range of
    # Python floats) compare with float32 coordinates exactly; so must levelhist.
    for bins, range_ in [(10, [(0, 1), (0, 1)]), (1000, [(-0.3, 0.7), (0, 1)]), (333, None)]:
        _, edges = np.histogramdd(RNG.random((100, 2)).astype(np.float32), bins, range_)
        e = edges[0].astype(np.float32)
        col = np.concatenate([e, np.nextafter(e, np.float32(2)), np.nextafter(e, np.float32(-2))] * 20)
        x = np.stack([col, RNG.permutation(col)], axis=1)
        same_as_numpy(x, bins, range_)
        assert counted_by_levelhist(x, bins, range_)


def test_three_and_four_axes_and_flows():
    x = RNG.normal(0, 1, (30000, 4))
    x[::97, 1] = np.nan
    x[::89, 2] = np.inf
    x[::83, 3] = -np.inf
    same_as_numpy(x[:, :3], (4, 5, 6), [(-1, 1), (-2, 2), (-3, 3)])
    same_as_numpy(x, 3, [(-1, 1)] * 4)
    assert counted_by_levelhist(x, 3, [(-1, 1)] * 4)
    same_as_numpy(np.ascontiguousarray(x[:, :2]), [np.array([-np.inf, 0, 1]), 5], [None, (-2, 2)])  # fallback
    same_as_numpy(x[:, :2], 10, density=True)
    same_as_numpy(x[:, :3], [3, np.array([-1, 0, 0.5, 1]), 4], [(-1, 1), None, (0, 2)], density=True)


def test_the_last_edge_is_closed_and_constant_points():
    x = np.ones((1000, 2))
    same_as_numpy(x, 4)  # min == max: widened by 0.5, as numpy does
    same_as_numpy(x, 4, [(0, 1), (1, 2)])  # on the last edge of one, the first of the other
    x = np.zeros((0, 3))
    same_as_numpy(x, 5)
    same_as_numpy(x, [2, 3, 4], [(0, 1)] * 3)


def test_histogram2d_like_numpy():
    x, y = RNG.normal(0, 1, 50000), RNG.normal(0, 2, 50000).astype(np.float32)
    for args in [(), (20,), ([10, 30],), (np.linspace(-3, 3, 9),), ([np.linspace(-3, 3, 9), 5],)]:
        want = np.histogram2d(x, y, *args)
        got = levelhist.histogram2d(x, y, *args)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    want = np.histogram2d(x, y, 8, [(-1, 1), (0, 4)], density=True)
    got = levelhist.histogram2d(x, y, 8, [(-1, 1), (0, 4)], density=True)
    np.testing.assert_array_equal(got[0], want[0])


def test_what_numpy_counts_instead():
    x = RNG.random((5000, 5))
    same_as_numpy(x, 3)  # five axes
    same_as_numpy(x[:, 0], 3)  # one axis
    w = RNG.random(5000)
    same_as_numpy(x[:, :2], 4, weights=w)
    same_as_numpy(x[:, :2], [np.array([0, 0.5, 0.5, 1]), 3])  # a repeated edge
    # numpy gets the coordinates in their own dtype (float16 edges from float16 data).
    same_as_numpy(x[:, :2].astype(np.float16), [np.array([0, 0.5, 0.5, 1]), 3])


def test_errors_like_numpy():
    x = RNG.random((100, 2))
    same_as_numpy(x, [3, 4, 5])  # bins of another dimension
    same_as_numpy(x, 0)
    same_as_numpy(x, [2, -1])
    same_as_numpy(x, 2.5)
    same_as_numpy(x, [np.array([0, 1, 0.5]), 3])  # not monotonic
    same_as_numpy(x, [np.zeros((2, 2)), 3])
    same_as_numpy(x, 3, [(0, 1)])  # range of another dimension
    same_as_numpy(x, 3, [(1, 0), (0, 1)])
    same_as_numpy(x, 3, [(0, np.inf), (0, 1)])
    bad = x.copy()
    bad[3, 1] = np.nan
    same_as_numpy(bad, 3)  # autodetected range of NaN
    with pytest.raises(TypeError):
        levelhist.histogramdd(np.array([[1 + 2j, 1]]), 3)
