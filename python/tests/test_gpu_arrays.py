"""CuPy arrays and PyTorch CUDA tensors: counted on their device, zero-copy,
on the caller's current stream; results on the same device, equal to
numpy.histogram / numpy.bincount of the same data. Skipped without CuPy or
PyTorch, without a GPU, or with a levelhist built without CUDA."""
import importlib

import numpy as np
import pytest

import levelhist

RNG = np.random.default_rng(7)


def _library(name):
    try:
        module = importlib.import_module(name)
    except Exception:
        return None
    try:
        if name == "cupy":
            ok = module.cuda.runtime.getDeviceCount() > 0
        else:
            ok = module.cuda.is_available()
    except Exception:
        ok = False
    return module if ok else None


def _levelhist_cuda():
    ok, why = levelhist.cuda_available()
    return ok, why


@pytest.fixture(params=["cupy", "torch"])
def xp(request):
    module = _library(request.param)
    if module is None:
        pytest.skip(f"{request.param} with a CUDA device is not available here")
    ok, why = _levelhist_cuda()
    if not ok:
        pytest.skip(f"levelhist cannot count on a GPU here: {why}")
    return request.param, module


def to_device(xp, a):
    name, m = xp
    if name == "cupy":
        return m.asarray(a)
    return m.from_numpy(np.ascontiguousarray(a)).to("cuda")


def to_host(xp, a):
    name, _ = xp
    return a.get() if name == "cupy" else a.cpu().numpy()


def is_on_device(xp, a):
    name, m = xp
    if name == "cupy":
        return isinstance(a, m.ndarray)
    return a.is_cuda


def check(xp, x, *args, weights=None, **kwargs):
    want_hist, want_edges = np.histogram(x, *args, weights=weights, **kwargs)
    got_hist, got_edges = levelhist.histogram(to_device(xp, x), *args,
                                              weights=None if weights is None else to_device(xp, weights), **kwargs)
    assert is_on_device(xp, got_hist) and is_on_device(xp, got_edges)
    np.testing.assert_array_equal(to_host(xp, got_edges), want_edges)
    h = to_host(xp, got_hist)
    assert h.dtype == want_hist.dtype
    if weights is None and not kwargs.get("density"):
        np.testing.assert_array_equal(h, want_hist)
    else:
        # (numpy adds float32 weights in float32; levelhist in float64, rounded once.)
        np.testing.assert_allclose(h, want_hist, rtol=1e-4 if h.dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64, np.int64, np.float16])
def test_every_dtype_against_numpy(xp, dtype):
    x = (RNG.normal(0.4, 0.5, 200000) * (1 if np.dtype(dtype).kind == "f" else 100)).astype(dtype)
    for bins, range_ in [(10, (0, 1)), (1024, (0, 1)), (256, None), (7, (-3, 300)), (1000, (-0.3, 0.7))]:
        check(xp, x, bins, range_)
    check(xp, x, [-1, 0, 0.5, 0.7, 2])


def test_float32_edges_on_device(xp):
    for bins, range_ in [(10, (0, 1)), (1024, (0, 1)), (1000, (-0.3, 0.7))]:
        e = np.histogram_bin_edges(np.zeros(1, np.float32), bins, range_).astype(np.float32)
        x = np.concatenate([e, np.nextafter(e, np.float32(2)), np.nextafter(e, np.float32(-2))] * 50)
        check(xp, x, bins, range_)
    x = RNG.random(100000).astype(np.float32)
    check(xp, x, 333)  # range from the data: edges computed in float32


def test_nan_inf_weights_density(xp):
    x = RNG.normal(0, 1, 300000).astype(np.float32)
    x[::101] = np.nan
    x[::103] = np.inf
    check(xp, x, 100, (-2, 2))
    w = RNG.random(x.size)
    check(xp, x, 100, (-2, 2), weights=w)
    check(xp, x, 100, (-2, 2), weights=w.astype(np.float32))
    check(xp, x, 50, (-2, 2), density=True)
    check(xp, x, [-np.inf, -1, 0, 0, 1, np.inf])


def test_strided_and_nd(xp):
    x = RNG.random((300, 400)).astype(np.float32)
    d = to_device(xp, x)
    sliced = d[:, ::3]
    got, _ = levelhist.histogram(sliced, 64, (0, 1))
    np.testing.assert_array_equal(to_host(xp, got), np.histogram(x[:, ::3], 64, (0, 1))[0])


def test_repeated_calls_give_fresh_results(xp):
    # The common call (int bins, a (lo, hi) tuple) keeps its plan, workspace
    # and edges between calls: each result must still be the caller's own, and
    # calls of other sizes (a larger workspace, no samples) must count right.
    from levelhist import _api
    name, m = xp
    first = None
    for n in (1000, 1000, 3 << 20, 0, 5, 1000):
        x = RNG.random(n).astype(np.float32)
        hist, edges = levelhist.histogram(to_device(xp, x), 1024, (0, 1))
        want_hist, want_edges = np.histogram(x, 1024, (0, 1))
        np.testing.assert_array_equal(to_host(xp, hist), want_hist)
        np.testing.assert_array_equal(to_host(xp, edges), want_edges)
        if first is None:
            first = (hist, edges, to_host(xp, hist).copy())
        hist[0] = 12345  # writing one result changes no later one
        edges[0] = -7.0
    np.testing.assert_array_equal(to_host(xp, first[0])[1:], first[2][1:])
    assert any(k[0] == name and c is not None for k, c in _api._fast_device_calls.items())


def test_common_call_results_made_ahead_are_each_the_callers_own(xp):
    # The common call makes its results a batch at a time (rows of one
    # allocation): across several batches every counts array and every edges
    # array must be a distinct piece of memory, hold this call's values, keep
    # the flow counters out of the counts, and not change when another
    # result is written.
    from levelhist import _api, _arrays
    name, m = xp
    lib = _arrays.DEVICE_LIBRARIES[name]
    calls = 3 * _api.RESULT_BATCH + 5
    xs = [RNG.random(1000).astype(np.float32) * 1.2 - 0.1 for _ in range(calls)]  # some under and over the range
    results = [levelhist.histogram(to_device(xp, x), 1024, (0, 1)) for x in xs]
    pointers = {lib.pointer(a) for result in results for a in result}
    assert len(pointers) == 2 * calls
    for hist, edges in results:
        hist[:] = -1  # each result written over before any is read
        edges[:] = -1
        assert tuple(hist.shape) == (1024,) and tuple(edges.shape) == (1025,)
    results = [levelhist.histogram(to_device(xp, x), 1024, (0, 1)) for x in xs]
    for x, (hist, edges) in zip(xs, results):
        want_hist, want_edges = np.histogram(x, 1024, (0, 1))
        np.testing.assert_array_equal(to_host(xp, hist), want_hist)
        np.testing.assert_array_equal(to_host(xp, edges), want_edges)
    for hist, edges in results[1:]:
        hist[:] = 0
        edges[:] = 0
    np.testing.assert_array_equal(to_host(xp, results[0][0]), np.histogram(xs[0], 1024, (0, 1))[0])


def test_common_call_on_alternating_streams(xp):
    # Results made ahead belong to the stream they were made on: calls that
    # alternate between two streams must each get results of their own stream,
    # counted right.
    name, m = xp
    x = RNG.random(1 << 16).astype(np.float32)
    want = np.histogram(x, 256, (0, 1))[0]
    d = to_device(xp, x)
    side = m.cuda.Stream(non_blocking=True) if name == "cupy" else m.cuda.Stream()
    got = []
    for i in range(40):
        if i % 2:
            with (side if name == "cupy" else m.cuda.stream(side)):
                got.append(levelhist.histogram(d, 256, (0, 1))[0])
        else:
            got.append(levelhist.histogram(d, 256, (0, 1))[0])
    side.synchronize()
    for h in got:
        np.testing.assert_array_equal(to_host(xp, h), want)


def test_converted_dtypes_through_the_common_call(xp):
    # bool and (torch) bfloat16 samples are converted before counting; the
    # common call's path must hand them to the general one, not refuse them.
    name, m = xp
    x = RNG.random(10000).astype(np.float32)
    b = x > 0.5
    with pytest.warns(RuntimeWarning):
        got, _ = levelhist.histogram(to_device(xp, b), 4, (0, 2))
    np.testing.assert_array_equal(to_host(xp, got), np.histogram(b.astype(np.uint8), 4, (0, 2))[0])
    if name == "torch":
        t = m.from_numpy(x).to("cuda").to(m.bfloat16)
        got, _ = levelhist.histogram(t, 16, (0, 1))
        want = np.histogram(t.to(m.float32).cpu().numpy(), 16, (0, 1))[0]
        np.testing.assert_array_equal(to_host(xp, got), want)


def test_current_stream_is_used(xp):
    name, m = xp
    x = RNG.random(1 << 20).astype(np.float32)
    want = np.histogram(x, 1024, (0, 1))[0]
    if name == "cupy":
        s = m.cuda.Stream(non_blocking=True)
        with s:
            d = m.asarray(x)
            got, _ = levelhist.histogram(d, 1024, (0, 1))
            s.synchronize()
    else:
        s = m.cuda.Stream()
        with m.cuda.stream(s):
            d = m.from_numpy(x).to("cuda", non_blocking=False)
            got, _ = levelhist.histogram(d, 1024, (0, 1))
        s.synchronize()
    np.testing.assert_array_equal(to_host(xp, got), want)


def test_bincount(xp):
    x = RNG.integers(0, 5000, 100000).astype(np.int32)
    w = RNG.random(100000)
    got = levelhist.bincount(to_device(xp, x), minlength=6000)
    np.testing.assert_array_equal(to_host(xp, got), np.bincount(x, minlength=6000))
    got_w = levelhist.bincount(to_device(xp, x), weights=to_device(xp, w))
    np.testing.assert_allclose(to_host(xp, got_w), np.bincount(x, weights=w), rtol=1e-10)


def test_histogram_object_on_device(xp):
    h = levelhist.Histogram(256, (0, 1))
    parts = [RNG.random(100000).astype(np.float32) for _ in range(3)]
    for p in parts:
        h.fill(to_device(xp, p))
    assert is_on_device(xp, h.counts)
    np.testing.assert_array_equal(to_host(xp, h.counts), np.histogram(np.concatenate(parts), 256, (0, 1))[0])
    assert h.total == 300000
    with pytest.raises(ValueError):
        h.fill(parts[0])  # host samples into device counts


def test_host_arrays_through_the_cuda_backend(xp):
    x = RNG.random(5_000_000).astype(np.float32)
    h = levelhist.Histogram(1024, (0, 1), dtype=np.float32, backend="cuda")
    h.fill(x)
    np.testing.assert_array_equal(h.counts, np.histogram(x, 1024, (0, 1))[0])
    assert any(name.startswith("gpu_") for name in h.strategy.values()), h.strategy  # a CUDA strategy counted


def test_more_than_two_to_the_31_samples(xp):
    name, m = xp
    n = (1 << 31) + 7
    if name == "cupy":
        x = m.zeros(n, dtype=m.uint8)
        x[-5:] = 7
    else:
        x = m.zeros(n, dtype=m.uint8, device="cuda")
        x[-5:] = 7
    hist, _ = levelhist.histogram(x, 256, (0, 256))
    h = to_host(xp, hist)
    assert h[0] == n - 5 and h[7] == 5 and h.dtype == np.int64
    del x


def test_histogramdd_and_histogram2d_on_device(xp):
    name, m = xp
    x = RNG.normal(0.5, 0.4, (300001, 2)).astype(np.float32)
    x[::101, 0] = np.nan
    cases = [(100, [(0, 1), (0, 1)]), ((7, 13), None), ([np.array([-1, 0, 0.25, 0.5, 3]), 4], None)]
    clean = np.nan_to_num(x, nan=0.25)  # a range from the data needs finite coordinates
    for bins, range_ in cases:
        pts = clean if range_ is None else x
        want_hist, want_edges = np.histogramdd(pts, bins, range_)
        for sample in (to_device(xp, pts), [to_device(xp, np.ascontiguousarray(c)) for c in pts.T]):
            got_hist, got_edges = levelhist.histogramdd(sample, bins, range_)
            assert is_on_device(xp, got_hist) and all(is_on_device(xp, e) for e in got_edges)
            np.testing.assert_array_equal(to_host(xp, got_hist), want_hist)
            for g, w in zip(got_edges, want_edges):
                np.testing.assert_array_equal(to_host(xp, g), w)
    # The joint histogram of two 8-bit images, and a constant one.
    a = RNG.integers(0, 256, 1 << 20).astype(np.uint8)
    b = (a // 2).astype(np.uint8)
    for u, v in ((a, b), (np.full_like(a, 9), np.full_like(a, 200))):
        want = np.histogram2d(u, v, 256, [(0, 256), (0, 256)])
        got = levelhist.histogram2d(to_device(xp, u), to_device(xp, v), 256, [(0, 256), (0, 256)])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(to_host(xp, g), w)
    want = np.histogramdd(clean, 8, [(0, 1), (0, 1)], density=True)[0]
    got = levelhist.histogramdd(to_device(xp, clean), 8, [(0, 1), (0, 1)], density=True)[0]
    np.testing.assert_allclose(to_host(xp, got), want, rtol=1e-12)
    with pytest.raises(TypeError):
        levelhist.histogramdd(to_device(xp, x), 4, weights=to_device(xp, x[:, 0]))
    with pytest.raises(TypeError):
        levelhist.histogramdd(to_device(xp, RNG.random((10, 5))), 4)
