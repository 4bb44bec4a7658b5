"""levelhist for Dask arrays: each chunk counted by levelhist where it lives.

    import levelhist.dask
    hist, edges = levelhist.dask.histogram(x, bins=1024, range=(0, 1))   # hist is lazy
    hist.compute()

Like dask.array.histogram: a number of bins needs a range (the edges are known
without reading the data), edges may be given instead, and the result is a
lazy array of counts with numpy's edges. Each chunk is counted by
levelhist.histogram on the worker that holds it (numpy chunks on its CPU,
CuPy chunks on its GPU); the per-chunk histograms are added by Dask's tree
reduction (Array.sum). Counts are exact int64; the result equals
numpy.histogram of the whole computed array.
"""
import sys

import numpy as np

from . import _api, _arrays, _edges

try:
    import dask.array as _da
    from dask.base import tokenize as _tokenize
    from dask.highlevelgraph import HighLevelGraph as _HighLevelGraph
except ImportError as e:  # pragma: no cover - exercised where dask is absent
    raise ImportError("levelhist.dask needs dask: pip install 'dask[array]'") from e


def _chunk_histogram(x, w, bins, range, weight_dtype):
    """One chunk's histogram as a (1, bins) array, on the chunk's device."""
    hist, _ = _api.histogram(x, bins, range, weights=w)
    if w is not None and weight_dtype is not None:
        hist = hist.astype(np.float64)  # sums are added across chunks in float64, cast once at the end
    return hist[None, :]


def histogram(x, bins=10, range=None, weights=None, density=False):
    """numpy.histogram's results for a Dask array, counted chunk by chunk.

    Returns (hist, edges): hist a lazy Dask array (int64 counts, or the weights'
    dtype for weights, summed in float64), edges a numpy array (numpy's edges
    for samples of x's dtype, float32 ones for float32). bins: a number of
    bins (then range is needed) or a sequence of edges. weights: a Dask array
    of x's shape (rechunked like x when its chunks differ).
    """
    if not isinstance(x, _da.Array):
        x = _da.asarray(x)
    dtype = np.dtype(x.dtype)
    _arrays.counted_dtype(dtype)  # a TypeError now rather than on the workers
    if isinstance(bins, str):
        raise TypeError("levelhist.dask: bins must be a number of bins or edges (estimators need the data first)")
    if np.ndim(bins) == 0:
        if range is None:
            raise ValueError("levelhist.dask: a number of bins needs a range (the edges must be known before the data); "
                             "give range=(lo, hi), or edges")
        axis = _edges.uniform_axis(dtype, _edges.bins_count(bins), range, 1, None)
        chunk_bins, chunk_range = int(bins), range
    else:
        axis = _edges.explicit_axis(bins, dtype)
        chunk_bins, chunk_range = np.asarray(bins), None
    edges = axis.edges.copy()
    nbins = axis.bins

    weight_dtype = None
    if weights is not None:
        if not isinstance(weights, _da.Array):
            weights = _da.asarray(weights)
        if tuple(weights.shape) != tuple(x.shape):
            raise ValueError("weights should have the same shape as a.")
        weight_dtype = np.dtype(weights.dtype)
        _arrays.weight_dtype_of(weight_dtype)
        if weights.chunks != x.chunks:
            weights = weights.rechunk(x.chunks)

    token = _tokenize(x, weights, edges, chunk_range, "levelhist")
    name = "levelhist-histogram-" + token
    x_keys = list(_flatten(x.__dask_keys__()))
    w_keys = list(_flatten(weights.__dask_keys__())) if weights is not None else [None] * len(x_keys)
    layer = {
        (name, i, 0): (_chunk_histogram, xk, wk, chunk_bins, chunk_range, weight_dtype)
        for i, (xk, wk) in enumerate(zip(x_keys, w_keys))
    }
    dependencies = [x] if weights is None else [x, weights]
    graph = _HighLevelGraph.from_collections(name, layer, dependencies=dependencies)
    out_dtype = np.dtype(np.int64) if weights is None else np.dtype(np.float64)
    meta = _meta_like(x, out_dtype)
    mapped = _da.Array(graph, name, ((1,) * len(x_keys), (nbins,)), dtype=out_dtype, meta=meta)
    hist = mapped.sum(axis=0, dtype=out_dtype)  # Dask's tree reduction
    if weight_dtype is not None and weight_dtype != np.float64:
        hist = hist.astype(weight_dtype)
    if density:
        db = np.array(np.diff(edges), float)
        return hist / db / hist.sum(), edges
    return hist, edges


def _meta_like(x, dtype):
    """An empty 2-D array of the chunks' library (numpy, or CuPy for CuPy chunks)."""
    meta = getattr(x, "_meta", None)
    if meta is not None and type(meta).__module__.partition(".")[0] == "cupy":
        return sys.modules["cupy"].empty((0, 0), dtype=dtype)
    return np.empty((0, 0), dtype=dtype)


def _flatten(keys):
    if isinstance(keys, list):
        for k in keys:
            yield from _flatten(k)
    else:
        yield keys


__all__ = ["histogram"]
