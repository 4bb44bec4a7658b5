"""levelhist.histogram and levelhist.bincount against numpy itself, case by case.

Every expected value here comes from numpy.histogram / numpy.bincount run on
the same arguments: counts and edges must be identical (values and dtype),
weighted sums equal to rounding (numpy adds in another order), errors of the
same type.
"""
import os
import warnings

import numpy as np
import pytest

import levelhist
from levelhist import _edges

RNG = np.random.default_rng(int(os.environ.get("LEVELHIST_TEST_SEED", "20240611")))

INT_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32]
ALL_TYPES = INT_TYPES + [np.float32, np.float64, np.int64, np.uint64, np.float16]


def same_as_numpy(a, *args, **kwargs):
    """levelhist.histogram(a, ...) == numpy.histogram(a, ...): counts and edges
    identical, or the same exception type."""
    try:
        want_hist, want_edges = np.histogram(a, *args, **kwargs)
    except Exception as e:  # numpy refuses: levelhist must too, the same way
        with pytest.raises(type(e)):
            levelhist.histogram(a, *args, **kwargs)
        return None
    got_hist, got_edges = levelhist.histogram(a, *args, **kwargs)
    assert got_edges.dtype == want_edges.dtype, (got_edges.dtype, want_edges.dtype)
    np.testing.assert_array_equal(got_edges, want_edges)
    assert got_hist.dtype == want_hist.dtype, (got_hist.dtype, want_hist.dtype)
    weights = kwargs.get("weights")
    if weights is not None and np.asarray(weights).dtype == np.float32:
        # numpy adds float32 weights in float32 (per block of 65536 samples, or
        # as a float32 running sum for explicit edges); levelhist adds in double
        # and rounds once: compare with the double sums, rounded.
        exact = dict(kwargs, weights=np.asarray(weights, dtype=np.float64))
        want64 = np.histogram(a, *args, **exact)[0].astype(np.float32)
        np.testing.assert_allclose(got_hist, want64, rtol=2e-7)
        np.testing.assert_allclose(got_hist, want_hist, rtol=1e-4)
    elif weights is not None or kwargs.get("density"):
        np.testing.assert_allclose(got_hist, want_hist, rtol=1e-12)
    else:
        np.testing.assert_array_equal(got_hist, want_hist)
    return got_hist


def random_samples(dtype, n):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = RNG.normal(0.3, 0.4, n)
        x[RNG.integers(0, n, n // 50)] = np.nan
        x[RNG.integers(0, n, n // 100)] = np.inf
        x[RNG.integers(0, n, n // 100)] = -np.inf
        return x.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -(1 << 40)), min(info.max, 1 << 40)
    return RNG.integers(lo, hi, n, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("bins", [1, 7, 10, 256, 1000])
def test_random_data_every_dtype_autodetected_range(dtype, bins):
    x = random_samples(dtype, 5000)
    if np.dtype(dtype).kind == "f":
        x = x[np.isfinite(x)]  # numpy refuses a non-finite autodetected range
    same_as_numpy(x, bins)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("range_", [(0, 1), (0.1, 0.7), (-1e9, 1e9), (0.7, 1.0), (-3, 300), (5, 5), (-0.5, 255.5)])
def test_random_data_every_dtype_given_range(dtype, range_):
    x = random_samples(dtype, 4000)
    for bins in (3, 10, 64):
        same_as_numpy(x, bins, range_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda t: np.dtype(t).name)
def test_samples_on_the_edges_and_their_neighbours(dtype):
    # The adversarial case of numpy's float rules: samples exactly on every edge
    # (numpy's edges, in their own dtype) and one ulp to either side.
    for bins, range_ in [(10, (0, 1)), (10, (0.0, 1.0)), (1024, (0, 1)), (7, (0.1, 0.7)), (1000, (-0.3, 0.7)),
                         (333, (-1e3, 2e4)), (12, (np.float32(0.1), np.float32(0.9))), (5, None)]:
        if range_ is None:
            base = np.array([0.1, 0.7], dtype=dtype)
            edges = np.histogram_bin_edges(base, bins)
        else:
            edges = np.histogram_bin_edges(np.zeros(1, dtype), bins, range_)
        e = edges.astype(dtype)
        x = np.concatenate([e, np.nextafter(e, dtype(np.inf)), np.nextafter(e, dtype(-np.inf))])
        if range_ is None:
            x = np.concatenate([x[(x >= base[0]) & (x <= base[1])], base])
        RNG.shuffle(x)
        hist = same_as_numpy(x, bins, range_)
        assert hist is not None and hist.sum() > 0


def test_numpys_float32_example():
    # numpy puts np.float32(0.7) in bin 7 of 10 over (0, 1): its float32 edges.
    hist, edges = levelhist.histogram(np.float32([0.7]), 10, (0, 1))
    assert hist.tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0]
    assert edges.dtype == np.float32
    # float64 samples use double edges: the same value is in bin 6.
    hist64, _ = levelhist.histogram(np.float64([np.float32(0.7)]), 10, (0, 1))
    assert hist64.tolist() == [0, 0, 0, 0, 0, 0, 1, 0, 0, 0]


@pytest.mark.parametrize(
    "dtype,range_,rounding",
    [(np.float64, (0, 1), "none"), (np.float32, (0, 1), "f32"), (np.float32, (0.1, 0.7), "f32"),
     (np.float32, None, "f32_arithmetic"), (np.int32, (0, 1000), "none"), (np.uint8, None, "none"),
     (np.float32, (np.float32(0.1), np.float32(0.7)), "f32_arithmetic")],
)
def test_even_bins_are_counted_as_even_bins(dtype, range_, rounding):
    # The fast even binning (not explicit edges) serves numpy's usual cases,
    # float32 edges included (Binning EdgeRounding).
    x = np.array([0.1, 0.7, 3.0], dtype=dtype)
    axis = _edges.uniform_axis(np.dtype(dtype), 1024, range_, x.size, lambda: (x.min(), x.max()))
    assert axis.binning.kind == "even"
    assert axis.binning.rounding == rounding


def test_float16_edges_are_numpys():
    x = (RNG.random(3000) * 10).astype(np.float16)
    for bins, range_ in [(10, None), (100, (0, 10)), (7, (1, 2))]:
        same_as_numpy(x, bins, range_)


def test_explicit_edges():
    x = RNG.normal(0, 2, 20000)
    x[::97] = np.nan
    x[::89] = np.inf
    x[::83] = -np.inf
    for edges in ([-1, 0, 1], [0, 0.1, 0.5, 0.7, 1.0], np.linspace(-3, 3, 101), [-10, 10],
                  np.array([-2, -1, 0, 5], dtype=np.int64), np.float32([0.1, 0.2, 0.7]),
                  [-np.inf, 0, np.inf], [-np.inf, -1, 1], [0, 1, np.inf], [0, 0, 1, 1, 2, 2], [0, 1, 1],
                  [1, 1], [-1, 0, 0, 0, 1], [-np.inf, -np.inf, 0, 1]):
        for dtype in (np.float64, np.float32, np.int32, np.int16, np.uint8, np.float16):
            data = x if np.dtype(dtype).kind == "f" else np.nan_to_num(x * 10, posinf=0, neginf=0).astype(dtype)
            same_as_numpy(data.astype(dtype), edges)
    # Samples exactly on float32 edges, against double edges.
    e = np.float32([0.1, 0.3, 0.7])
    same_as_numpy(np.concatenate([e, np.nextafter(e, 1), np.nextafter(e, 0)]), [0.1, 0.3, 0.7])


@pytest.mark.parametrize("weight_dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
def test_weights(weight_dtype):
    x = random_samples(np.float32, 10000)
    w = (RNG.random(10000) * 3).astype(weight_dtype) if weight_dtype != np.bool_ else RNG.random(10000) < 0.3
    # (numpy cannot sum bool weights over explicit edges: a casting error of its own.)
    for args in [(10, (0, 1)), (100, (-1, 2))] + ([([-1, 0, 0.5, 2],)] if weight_dtype != np.bool_ else []):
        same_as_numpy(x, *args, weights=w)
        same_as_numpy(x.astype(np.float64), *args, weights=w)
    same_as_numpy(np.nan_to_num(x * 100, posinf=0, neginf=0).astype(np.int16), 50, weights=w)


def test_weights_shape_must_match():
    with pytest.raises(ValueError):
        levelhist.histogram(np.zeros(10), 5, weights=np.ones(9))
    same_as_numpy(np.zeros((3, 4)), 5, (0, 1), weights=np.ones((3, 4)))


def test_density():
    x = random_samples(np.float64, 5000)
    for args in [(10, (0, 1)), (7, (-1, 2)), ([0, 0.1, 0.5, 2],)]:
        same_as_numpy(x, *args, density=True)
        same_as_numpy(x, *args, density=True, weights=RNG.random(5000))
    same_as_numpy(x.astype(np.float32), 33, (0, 1), density=True)


def test_empty_and_tiny_inputs():
    for dtype in (np.float32, np.float64, np.uint8, np.int32):
        same_as_numpy(np.array([], dtype=dtype))
        same_as_numpy(np.array([], dtype=dtype), 5, (2, 3))
        same_as_numpy(np.array([1], dtype=dtype))
        same_as_numpy(np.array([3, 3, 3], dtype=dtype), 4)  # constant: range widened by 0.5
    same_as_numpy([], weights=[])


def test_shapes_and_strides():
    x = RNG.random((40, 50, 3)).astype(np.float32)
    same_as_numpy(x, 20, (0, 1))
    same_as_numpy(x[:, ::3, 1], 20, (0, 1))  # not contiguous: copied once
    same_as_numpy(x.T, 20)
    same_as_numpy(np.float32(0.5), 3, (0, 1))  # a scalar
    same_as_numpy([0.1, 0.2, 0.9], 4)  # a list


def test_bool_samples_warn_as_numpy_does():
    x = RNG.random(100) < 0.4
    with pytest.warns(RuntimeWarning):
        hist, _ = levelhist.histogram(x, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(hist, np.histogram(x, 2)[0])


def test_errors_like_numpy():
    x = np.float64([0, 1, 2, np.nan])
    same_as_numpy(x, 10)  # autodetected range of NaN: ValueError
    same_as_numpy(np.float64([0, np.inf]), 10)
    same_as_numpy(x, 10, (2, 1))  # max < min
    same_as_numpy(x, 10, (0, np.inf))
    same_as_numpy(x, 0)
    same_as_numpy(x, -3)
    same_as_numpy(x, 2.5)
    same_as_numpy(x, [[0, 1], [2, 3]])
    same_as_numpy(x, [0, 2, 1])  # not monotonic
    same_as_numpy(np.float32([1000.0]), 1000, (1000, 1000.001))  # too many bins for float32 edges
    same_as_numpy(np.float64([0.0]), 10, (0, 1e-320))
    same_as_numpy(x, "auto")  # NaN: numpy refuses
    with pytest.raises(TypeError):
        levelhist.histogram(np.array([1 + 2j]), 3)
    with pytest.raises(TypeError):
        levelhist.histogram(np.array(["a"]), 3)


def test_string_bins_delegate_to_numpy():
    x = RNG.normal(0, 1, 3000)
    for name in ("auto", "fd", "sturges", "sqrt"):
        same_as_numpy(x, name)
        same_as_numpy(x.astype(np.float32), name, (-1, 1))


def test_integer_and_huge_ranges():
    x = RNG.integers(-(1 << 62), 1 << 62, 5000, dtype=np.int64)
    same_as_numpy(x, 17)
    same_as_numpy(x, 100, (-(1 << 60), 1 << 60))
    u = RNG.integers(0, 1 << 63, 5000, dtype=np.uint64)
    same_as_numpy(u, 64)
    i = RNG.integers(-2**31, 2**31, 5000, dtype=np.int64).astype(np.int32)
    same_as_numpy(i, 1 << 16)
    same_as_numpy(i.view(np.uint32), 3, (0, 2**32))


def test_many_bins():
    x = RNG.random(100000).astype(np.float32)
    same_as_numpy(x, 1 << 20, (0, 1))
    same_as_numpy(x.astype(np.float64), 123457)
    same_as_numpy(RNG.integers(0, 65536, 100000).astype(np.uint16), 65536, (0, 65536))


# ---- bincount ------------------------------------------------------------------------


def same_bincount(x, *args, **kwargs):
    try:
        want = np.bincount(x, *args, **kwargs)
    except Exception as e:
        with pytest.raises(type(e)):
            levelhist.bincount(x, *args, **kwargs)
        return
    got = levelhist.bincount(x, *args, **kwargs)
    assert got.dtype == want.dtype
    if kwargs.get("weights") is not None:
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.int64, np.bool_])
def test_bincount_every_integer_dtype(dtype):
    hi = 2 if dtype == np.bool_ else min(np.iinfo(dtype).max, 70000)
    x = RNG.integers(0, hi, 20000).astype(dtype)
    same_bincount(x)
    same_bincount(x, minlength=100000)
    same_bincount(x, weights=RNG.random(20000))
    same_bincount(x, weights=RNG.random(20000).astype(np.float32), minlength=3)


def test_bincount_errors_and_edges():
    same_bincount(np.array([], dtype=np.int64))
    same_bincount(np.array([], dtype=np.int64), minlength=5)
    same_bincount(np.array([0, 3, -1]))
    same_bincount(np.array([0.0, 1.0]))
    same_bincount(np.array([[0, 1]]))
    same_bincount(np.array([1, 2], dtype=np.uint64))
    same_bincount(np.array([1, 2**63], dtype=np.uint64))  # numpy: negative as int64
    same_bincount(np.array([1, 2]), minlength=-1)
    same_bincount(np.array([0, 0, 5, 5, 5]), weights=np.array([1, 2, 3, 4, 5]))


# ---- Histogram: accumulating -----------------------------------------------------------


def test_histogram_object_accumulates_like_numpy_on_everything():
    h = levelhist.Histogram(100, (-1, 2))
    parts = [random_samples(np.float64, 3000), random_samples(np.float32, 2000), random_samples(np.int16, 1000)]
    for p in parts:
        assert h.fill(p) is h
    everything = np.concatenate([p.astype(np.float64) for p in parts])
    want, edges = np.histogram(everything, 100, (-1, 2))
    np.testing.assert_array_equal(h.counts, want)
    np.testing.assert_array_equal(h.values, want)
    np.testing.assert_array_equal(h.edges, edges)
    finite = everything[~np.isnan(everything)]
    assert h.nan == np.isnan(everything).sum()
    assert h.underflow == (finite < -1).sum()
    assert h.overflow == (finite > 2).sum()
    assert h.total == everything.size
    assert h.reset().total == 0
    assert len(h.strategy) >= 1


def test_histogram_object_float32_edges_and_weights():
    x = random_samples(np.float32, 5000)
    h = levelhist.Histogram(10, (0, 1), dtype=np.float32)
    h.fill(x).fill(np.float32([0.7]))
    want, edges = np.histogram(np.concatenate([x, np.float32([0.7])]), 10, (0, 1))
    np.testing.assert_array_equal(h.counts, want)
    assert h.edges.dtype == np.float32
    w = levelhist.Histogram([0, 0.25, 1], weighted=True)
    wts = RNG.random(5000)
    w.fill(x, weights=wts)
    np.testing.assert_allclose(w.values, np.histogram(x, [0, 0.25, 1], weights=wts)[0], rtol=1e-12)
    assert isinstance(w.total, float)
    with pytest.raises(ValueError):
        w.fill(x)  # weighted: weights needed
    with pytest.raises(ValueError):
        levelhist.Histogram(10)  # a number of bins needs a range


def test_histogram_object_unusual_edges():
    h = levelhist.Histogram([-np.inf, 0, 0, 1, np.inf])
    x = RNG.normal(0, 1, 1000)
    x[:10] = np.inf
    h.fill(x)
    np.testing.assert_array_equal(h.counts, np.histogram(x, [-np.inf, 0, 0, 1, np.inf])[0])


# ---- large inputs ---------------------------------------------------------------------------


@pytest.mark.skipif(os.environ.get("LEVELHIST_SKIP_SLOW_TESTS") == "1", reason="2 GiB input (LEVELHIST_SKIP_SLOW_TESTS=1)")
def test_more_than_two_to_the_31_samples_64_bit_counts():
    n = (1 << 31) + 5
    x = np.zeros(n, dtype=np.uint8)
    x[-3:] = 200
    hist, _ = levelhist.histogram(x, 256, (0, 256))
    assert hist.dtype == np.int64
    assert hist[0] == n - 3 and hist[200] == 3
    del x
