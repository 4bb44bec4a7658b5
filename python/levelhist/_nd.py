"""levelhist.histogramdd and levelhist.histogram2d: numpy's N-d histograms,
counted by the library's N-d plans (Request::joint, 2 to 4 axes).

numpy.histogramdd (numpy/lib/_histograms_impl.py) builds each axis's edges
with numpy.linspace(min, max, bins + 1) from the range or from the samples'
min and max (so float64 edges for a range of Python floats, float32 edges for
float32 samples without a range), compares each coordinate with them in their
common type (the same as comparing exact values, for every dtype levelhist
counts), puts a coordinate equal to the last edge in the last bin, and
returns float64 counts. Each axis here is numpy's edges and a Binning with
exactly them (_edges.linspace_axis). What levelhist does not count itself, it
hands to numpy on host arrays and refuses clearly on GPU arrays: weights,
more than 4 axes, and edges that repeat or are infinite.
"""
import builtins
import operator

import numpy as np

from . import _api, _arrays, _edges, _levelhist
from ._arrays import Host

_MAX_AXES = 4

# N-d plans by (sample type, backend, device, axes): the axes are held, so an
# entry's key never names an axis that was freed.
_plans = {}


# Axes of a count of bins over a given range, by (count, (type, lo), (type, hi)).
_range_axes = {}


def _entry(axes, type_name, backend, device):
    key = (type_name, backend, device, axes)
    entry = _plans.get(key)
    if entry is None:
        plan = _levelhist.Plan.joint(type_name, [a.binning for a in axes], backend, device)
        if len(_plans) >= 64:
            _plans.clear()
        entry = _plans[key] = _api._PlanEntry(plan)
    return entry


def _points(sample):
    """(library name, lib, columns, interleaved): the sample's coordinates as
    one (N, D) array (interleaved, C-contiguous) or D arrays of N each."""
    if isinstance(sample, (list, tuple)) and len(sample) and _arrays.library_of(sample[0]) in _arrays.DEVICE_LIBRARIES:
        lib_name = _arrays.library_of(sample[0])
        lib = _arrays.DEVICE_LIBRARIES[lib_name]
        if any(_arrays.library_of(c) != lib_name for c in sample):
            raise TypeError(f"levelhist: the coordinates must all be {lib_name} arrays")
        columns = [lib.flat(c) for c in sample]
        if len({lib.size(c) for c in columns}) != 1:
            raise ValueError("all the input array dimensions except for the concatenation axis must match exactly")
        return lib_name, lib, columns, False
    lib_name = _arrays.library_of(sample)
    if lib_name in _arrays.DEVICE_LIBRARIES:
        lib = _arrays.DEVICE_LIBRARIES[lib_name]
        if sample.ndim != 2:
            raise ValueError("levelhist: N-d samples on a GPU are an (N, D) array or a sequence of D arrays")
        if lib is _arrays.Torch:
            sample = sample.detach().contiguous()
        else:
            sample = lib.module().ascontiguousarray(sample)
        return lib_name, lib, [sample], True
    if lib_name == "torch_cpu":
        sample = sample.detach().numpy()
    if (isinstance(sample, (list, tuple)) and len(sample) > 1 and all(type(c) is np.ndarray and c.ndim == 1 for c in sample)
            and len({c.shape[0] for c in sample}) == 1):
        # One numpy array per axis (histogram2d's x and y): read in place where
        # contiguous, not stacked into one array first (the values are the same).
        return "numpy", Host, [np.ascontiguousarray(c) for c in sample], False
    # numpy.histogramdd's reading of the sample.
    try:
        _, _ = sample.shape
        sample = np.ascontiguousarray(sample)
        return "numpy", Host, [sample], True
    except (AttributeError, ValueError):
        rows = np.atleast_2d(sample)  # (D, N): each row one axis's coordinates
        if rows.ndim != 2:
            raise ValueError("levelhist: give an (N, D) array or a sequence of D arrays") from None
        return "numpy", Host, [np.ascontiguousarray(r) for r in rows], False


def _column(columns, interleaved, i):
    return columns[0][:, i] if interleaved else columns[i]


def _axes_for(lib, columns, interleaved, d, n, bins, range):
    """numpy.histogramdd's edges, as Axis objects (and its errors)."""
    try:
        m = len(bins)
        if m != d:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    except TypeError:
        bins = d * [bins]
    if range is None:
        range = (None,) * d
    elif len(range) != d:
        raise ValueError("range argument must have one entry per dimension")
    axes = []
    for i in builtins.range(d):
        b = bins[i]
        if _arrays.library_of(b) in ("cupy", "torch", "torch_cpu"):
            b = _arrays.DEVICE_LIBRARIES.get(_arrays.library_of(b), _arrays.Torch).to_numpy(b)
        if type(b) is int and range[i] is not None:
            # A count of bins over a given range: the axis depends on them alone
            # (the edges' dtype on the range's types), so it is found again
            # without numpy.linspace; the first call checked both.
            try:
                lo, hi = range[i]
                memo_key = (b, _edges._scalar_key(lo), _edges._scalar_key(hi))
                axis = _range_axes.get(memo_key)
            except (TypeError, ValueError):  # not two values, or unhashable ones: the general way
                memo_key = axis = None
            if axis is not None:
                axes.append(axis)
                continue
        else:
            memo_key = None
        if np.ndim(b) == 0:
            if b < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            first, last = _edges.outer_edges(range[i], n, lambda: lib.minmax(_column(columns, interleaved, i)))
            try:
                count = operator.index(b)
            except TypeError as e:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
            edges = np.linspace(first, last, count + 1)
            key = ("linspace", edges.dtype, count, _edges._scalar_key(first), _edges._scalar_key(last))
            axes.append(_edges._cached(key, lambda: _edges.linspace_axis(edges, count, first, last)))
            if memo_key is not None:
                if len(_range_axes) >= 256:
                    _range_axes.clear()
                _range_axes[memo_key] = axes[-1]
        elif np.ndim(b) == 1:
            edges = np.asarray(b)
            if np.any(edges[:-1] > edges[1:]):
                raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
            axes.append(_edges.explicit_axis(edges, None))
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
    return tuple(axes)


def _numpy_fallback(sample, bins, range, density, weights):
    return np.histogramdd(sample, bins, range, density=density, weights=weights)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """The N-d histogram of `sample`: numpy.histogramdd's results, counted by levelhist.

    Returns (hist, edges) exactly as numpy.histogramdd(sample, bins, range,
    density=density, weights=weights) does: float64 counts of shape
    (bins_0, ..., bins_D-1), the last bin of each axis closed, points outside
    the range or with a NaN coordinate not counted, and the list of each
    axis's edges (numpy's, bit for bit).

    sample: an (N, D) array or a sequence of D arrays of N coordinates; numpy
    arrays, CuPy arrays or PyTorch CUDA tensors (counted on their device, on
    the caller's current stream; results on the same device). levelhist
    counts 2 to 4 axes without weights; on numpy arrays it hands weights, more
    axes, and edges that repeat or are infinite to numpy.histogramdd, and on
    GPU arrays it refuses them with a TypeError.
    """
    lib_name, lib, columns, interleaved = _points(sample)
    d = columns[0].shape[1] if interleaved else len(columns)
    n = columns[0].shape[0] if interleaved else lib.size(columns[0])
    on_host = lib is Host
    if weights is not None or not 2 <= d <= _MAX_AXES:
        if on_host:
            return _numpy_fallback(columns[0] if interleaved else np.stack(columns, axis=1), bins, range, density,
                                   weights)
        raise TypeError(f"levelhist: histogramdd on a GPU counts 2 to {_MAX_AXES} axes without weights "
                        f"(here {d} axes{', with weights' if weights is not None else ''}); count on the host with "
                        "numpy.histogramdd")
    # One dtype for every axis (numpy stacks the coordinates into one array).
    dtype = lib.dtype(columns[0])
    for c in columns[1:]:
        dtype = np.result_type(dtype, lib.dtype(c))
    counted = _arrays.counted_dtype(np.dtype(np.uint8) if dtype == np.bool_ else dtype)
    columns = [lib.convert(c, dtype) for c in columns]
    # The edges from the coordinates as numpy has them (their min and max in their dtype).
    axes = _axes_for(lib, columns, interleaved, d, n, bins, range)
    if any(a.slot_map is not None for a in axes):
        if on_host:  # numpy gets the coordinates in their own dtype
            return _numpy_fallback(columns[0] if interleaved else np.stack(columns, axis=1), bins, range, density,
                                   weights)
        raise TypeError("levelhist: histogramdd on a GPU takes edges that increase and are finite; count on the "
                        "host with numpy.histogramdd")
    columns = [lib.convert(c, counted) for c in columns]
    type_name = _arrays.type_name(counted)
    shape = tuple(a.bins + 3 for a in axes)
    inside = tuple(slice(0, a.bins) for a in axes)
    if on_host:
        entry = _entry(axes, type_name, _api._host_backend(n * d, None), -1)
        out = np.zeros(entry.plan.slots, dtype=np.int64)
        entry.plan.fill_points(columns, out)
        hist = out.reshape(shape)[inside].astype(np.float64)
        edges = [a.edges.copy() for a in axes]
        if density:
            hist = _density(hist, [np.diff(e) for e in edges])
        return hist, edges
    device = lib.device(columns[0])
    entry = _entry(axes, type_name, "cuda", device)
    with lib.using(device):
        launch = _api._device_launch_args(lib, entry, device, n)
        out = lib.empty(entry.plan.slots, np.int64, device)
        entry.plan.run_points([lib.pointer(c) for c in columns], n, lib.pointer(out), False, *launch)
        hist = lib.astype(out.reshape(shape)[inside], np.float64)
        held = [_api._device_edges(lib, a, device) for a in axes]
        edges = [lib.copy(e) for e, _ in held]
        if density:
            hist = _density(hist, [widths for _, widths in held])
    return hist, edges


def _density(hist, dedges):
    # numpy.histogramdd's density, step for step (the same roundings).
    d = len(dedges)
    s = hist.sum()
    for i in builtins.range(d):
        shape = [1] * d
        shape[i] = dedges[i].shape[0]
        hist = hist / dedges[i].reshape(shape)
    return hist / s


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """The 2-D histogram of points (x, y): numpy.histogram2d's results
    (hist, xedges, yedges), counted by levelhist (histogramdd's rules)."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        edges = np.asarray(bins) if _arrays.library_of(bins) == "numpy" else bins
        bins = [edges, edges]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
