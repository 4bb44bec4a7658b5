"""numpy.histogram's rules for bins, range and edges, as a levelhist Binning.

numpy.histogram (numpy/lib/_histograms_impl.py) builds its edges with
numpy.linspace in a dtype that depends on the samples and on the range:

* float64 and integer samples: double edges, lower + i * step;
* float32 samples with a range of Python floats: linspace in double, then
  rounded to float32 (EdgeRounding f32);
* float32 samples with the range taken from their min and max (float32
  scalars): linspace evaluated in float32 (EdgeRounding f32_arithmetic);
* float16 samples: float16 edges.

It then compares each sample with those edges in their common type, which for
every dtype levelhist counts is the same as comparing the exact values. So an
Axis here is numpy's edge array (returned to the caller as numpy returns it)
and a Binning whose edges are exactly those values: an even Binning with the
matching rounding when its edges reproduce numpy's bit for bit (checked once
per axis), explicit edges otherwise.
"""
import math
import operator
from collections import OrderedDict

import numpy as np

from . import _levelhist

# 2**53: integers up to this magnitude are exact doubles.
_EXACT_INTEGERS = 9007199254740992


class Axis:
    """One numpy-compatible binning: numpy's edges, the Binning that counts
    with exactly them, and, for edge arrays levelhist cannot take as they are
    (repeated or infinite edges), the map from its slots to numpy's bins."""

    __slots__ = ("edges", "binning", "slot_map", "bins", "plans", "device_edges", "__weakref__")

    def __init__(self, edges, binning, slot_map=None):
        self.edges = edges
        self.binning = binning
        self.slot_map = slot_map  # None, or the numpy bin of each slot (-1: none)
        self.bins = len(edges) - 1
        self.plans = {}  # (sample type, weight type, backend, device, strategy, threads) -> Plan
        self.device_edges = {}  # (library, device) -> the edges on that device

    def numpy_bins(self, slots):
        """numpy's bins from the slots of one count (host numpy arrays)."""
        if self.slot_map is None:
            return slots[: self.bins]
        valid = self.slot_map >= 0
        out = np.zeros(self.bins, dtype=slots.dtype)
        np.add.at(out, self.slot_map[valid], slots[valid])
        return out


_cache = OrderedDict()
_CACHE_SIZE = 256


def _cached(key, make):
    try:
        axis = _cache[key]
        _cache.move_to_end(key)
        return axis
    except KeyError:
        pass
    except TypeError:  # an unhashable argument: no caching
        return make()
    axis = make()
    _cache[key] = axis
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return axis


def _scalar_key(v):
    return (type(v), v)


def _finite(v):
    t = type(v)
    if t is float or t is int:
        return t is int or math.isfinite(v)
    return np.isfinite(v)


def outer_edges(range, size, minmax):
    """numpy's _get_outer_edges: the range, or the samples' min and max (numpy
    scalars of their dtype, from minmax()), widened by 0.5 when equal."""
    if range is not None:
        first_edge, last_edge = range
        if first_edge > last_edge:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_finite(first_edge) and _finite(last_edge)):
            raise ValueError(f"supplied range of [{first_edge}, {last_edge}] is not finite")
    elif size == 0:
        first_edge, last_edge = 0, 1
    else:
        first_edge, last_edge = minmax()
        if not (np.isfinite(first_edge) and np.isfinite(last_edge)):
            raise ValueError(f"autodetected range of [{first_edge}, {last_edge}] is not finite")
    if first_edge == last_edge:
        first_edge = first_edge - 0.5
        last_edge = last_edge + 0.5
    return first_edge, last_edge


def _same(binning, edges64):
    check = np.empty(len(edges64))
    binning.write_edges(check)
    return np.array_equal(check, edges64)


def _make_uniform(dtype, bins, first_edge, last_edge):
    # numpy's _get_bin_edges, n_equal_bins branch.
    bin_type = np.result_type(first_edge, last_edge, np.empty(0, dtype))
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    edges = np.linspace(first_edge, last_edge, bins + 1, endpoint=True, dtype=bin_type)
    if np.any(edges[:-1] >= edges[1:]):
        raise ValueError(f"Too many bins for data range. Cannot create {bins} finite-sized bins.")
    return linspace_axis(edges, bins, first_edge, last_edge)


def linspace_axis(edges, bins, first_edge, last_edge):
    """The Axis of numpy's edges = numpy.linspace(first_edge, last_edge, bins + 1)
    in edges' dtype: an even Binning when one reproduces them bit for bit,
    explicit edges otherwise."""
    bin_type = edges.dtype
    edges64 = edges.astype(np.float64)
    # The dtype numpy.linspace does its arithmetic in (its edges are then cast to bin_type).
    arithmetic = np.linspace(first_edge, last_edge, 0).dtype
    rounding = None
    if arithmetic == np.float64 and bin_type == np.float64:
        rounding = "none"
    elif arithmetic == np.float64 and bin_type == np.float32:
        rounding = "f32"
    elif arithmetic == np.float32 and bin_type in (np.float32, np.float64):
        rounding = "f32_arithmetic"
    if rounding is not None and bins <= (1 << 28):
        try:
            binning = _levelhist.Binning.even(bins, float(first_edge), float(last_edge), True, rounding)
        except ValueError:
            binning = None
        # The even binning serves only if its edges are numpy's, bit for bit.
        if binning is not None and _same(binning, edges64):
            return Axis(edges, binning)
    return _explicit_from(edges, edges64)


def uniform_axis(dtype, bins, range, size, minmax):
    """bins equal bins as numpy.histogram(a, bins, range) makes them for
    samples of `dtype` (size samples; minmax() gives their min and max)."""
    first_edge, last_edge = outer_edges(range, size, minmax)
    key = ("uniform", np.dtype(dtype), bins, _scalar_key(first_edge), _scalar_key(last_edge))
    return _cached(key, lambda: _make_uniform(dtype, bins, first_edge, last_edge))


def _explicit_from(edges, edges64):
    """Explicit edges (numpy's array and its float64 values), in numpy's
    bins: [e_i, e_i+1), the last one closed."""
    if len(edges64) < 2:
        raise ValueError("levelhist: bins needs at least two edges; give at least one bin")
    if np.isnan(edges64).any():
        raise ValueError("levelhist: bins holds NaN; give finite or infinite edges that increase")
    finite = np.isfinite(edges64)
    if finite.all() and np.all(edges64[:-1] < edges64[1:]):
        return Axis(edges, _levelhist.Binning.explicit(np.ascontiguousarray(edges64), True))
    return _mapped_axis(edges, edges64)


def _mapped_axis(edges, edges64):
    """Edges with repeats or infinities: count with the distinct finite edges
    plus one edge just above the largest (so that a sample equal to it has a
    slot of its own), then add the slots into numpy's bins. Every slot lies
    within one of numpy's bins or none (no edge falls inside a slot)."""
    if np.count_nonzero(edges64 == np.inf) > 1:
        # [.., inf, inf]: the closed last bin holds +inf alone, the one before
        # it the finite samples above the edges: one overflow slot cannot split them.
        raise ValueError("levelhist: bins ends with more than one +inf edge; give at most one")
    finite_values = np.unique(edges64[np.isfinite(edges64)])
    if len(finite_values) == 0:
        raise ValueError("levelhist: bins has no finite edge; give at least one")
    top = np.nextafter(finite_values[-1], np.inf)
    if not np.isfinite(top):
        raise ValueError("levelhist: the largest finite edge is the largest float64; give a smaller one")
    core = np.ascontiguousarray(np.append(finite_values, top))
    binning = _levelhist.Binning.explicit(core, False)
    k = len(core) - 1
    # A point inside each slot: bins j -> core[j]; underflow -> just below
    # core[0]; overflow -> core[k] (finite); NaN -> no bin.
    points = np.empty(k + 2)
    points[:k] = core[:k]
    points[k] = np.nextafter(core[0], -np.inf)
    points[k + 1] = core[k]
    nbins = len(edges64) - 1
    # numpy's bin of each point: [e_i, e_i+1), the last one closed.
    index = np.searchsorted(edges64, points, side="right") - 1
    index[points == edges64[-1]] = nbins - 1
    index[(index < 0) | (index >= nbins) | (points < edges64[0]) | (points > edges64[-1])] = -1
    slot_map = np.append(index, -1).astype(np.int64)  # the NaN slot
    # A sample at +inf or -inf is in a bin only with an infinite outer edge, and
    # then in the slot the point stands for (overflow / underflow).
    return Axis(edges, binning, slot_map)


def explicit_axis(bins, sample_dtype):
    """numpy.histogram(a, bins=<sequence>) for samples of sample_dtype."""
    edges = np.asarray(bins)
    if edges.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    kind = edges.dtype.kind
    if kind not in "biuf" or (kind == "f" and edges.dtype.itemsize > 8):
        raise TypeError(f"levelhist: edges of dtype {edges.dtype} are not supported; give float64 or integer edges")
    if kind in "iu" and len(edges) and int(np.abs(edges.astype(object)).max()) >= _EXACT_INTEGERS:
        # Integer samples compare with integer edges exactly in numpy; levelhist
        # compares in double, which is the same only below 2**53.
        raise TypeError("levelhist: integer edges of magnitude 2**53 or more are not supported")
    key = ("explicit", edges.dtype, edges.tobytes())
    return _cached(key, lambda: _explicit_from(edges.copy(), edges.astype(np.float64)))


def string_axis(a, bins, range, weights):
    """bins='auto', 'fd', ...: numpy.histogram_bin_edges decides the edges."""
    edges = np.histogram_bin_edges(a, bins, range, weights)
    return _explicit_from(edges, edges.astype(np.float64))


def bins_count(bins):
    """The number of bins of an integer `bins`, checked as numpy checks it."""
    try:
        n = operator.index(bins)
    except TypeError as e:
        raise TypeError("`bins` must be an integer, a string, or an array") from e
    if n < 1:
        raise ValueError("`bins` must be positive, when an integer")
    return n


def clear_cache():
    _cache.clear()


__all__ = ["Axis", "uniform_axis", "linspace_axis", "explicit_axis", "string_axis", "bins_count", "outer_edges", "clear_cache"]
