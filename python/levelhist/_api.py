"""levelhist.histogram, levelhist.bincount and levelhist.Histogram."""
import operator
import sys

import numpy as np

from . import _arrays, _edges, _levelhist
from ._arrays import Host

# Host arrays below this many samples are counted on the CPU: copying them to a
# GPU and back costs more than counting them where they are. Larger ones go to
# the library's automatic choice (the GPU when there is one).
HOST_CPU_BELOW = 1 << 22

_MAX_BINS = 1 << 28


class _PlanEntry:
    """A plan, and the device workspaces cached for it, one per (device, stream)."""

    __slots__ = ("plan", "workspaces")

    def __init__(self, plan):
        self.plan = plan
        self.workspaces = {}

    def workspace_pointer(self, lib, device, stream, n):
        """(the workspace's device address, bytes) for a launch on n samples
        on that device and stream; the workspace array is held here."""
        key = (lib.name, device, stream)
        held = self.workspaces.get(key)
        if held is not None and n == held[2]:
            return held[3], held[1]  # the last call's size: checked already
        need = max(self.plan.workspace_bytes(n), 256)
        if held is None or held[1] < need:
            # Zeroed once, through the array library (its memory pool serves
            # it); every call leaves it zero again.
            workspace = lib.zeros(need, np.uint8, device)
            held = (workspace, need, n, lib.pointer(workspace))
        else:
            held = (held[0], held[1], n, held[3])
        self.workspaces[key] = held
        return held[3], held[1]


def _entry(axis, type_name, weight_name, backend, device, strategy="auto", threads=0):
    key = (type_name, weight_name, backend, device, strategy, threads)
    entry = axis.plans.get(key)
    if entry is None:
        plan = _levelhist.Plan(type_name, axis.binning, weight_name, backend, device, strategy, threads)
        entry = axis.plans[key] = _PlanEntry(plan)
    return entry


def _host_backend(n, backend):
    if backend is not None:
        return backend
    return "cpu" if n < HOST_CPU_BELOW else "auto"


def _count_host(axis, x, w, out=None, backend=None, strategy="auto", threads=0, used=None):
    """Counts host samples x (weights w) into out (new slots unless given).
    used: a dict that gets the strategy's name under the sample type."""
    type_name = _arrays.type_name(x.dtype)
    weight_name = None if w is None else _arrays.type_name(w.dtype)
    entry = _entry(axis, type_name, weight_name, _host_backend(x.size, backend), -1, strategy, threads)
    if used is not None:
        used[type_name] = entry.plan.strategy
    if out is None:
        out = np.zeros(entry.plan.slots, dtype=np.float64 if w is not None else np.int64)
    entry.plan.fill(x, w, out)
    return out


def _device_launch_args(lib, entry, device, n):
    """What a launch of entry's plan on n samples of `device` takes beside its
    arrays: the workspace's pointer and bytes and the caller's current stream
    there (call it inside lib.using(device))."""
    stream = lib.stream(device)
    workspace, workspace_bytes = entry.workspace_pointer(lib, device, stream, n)
    return workspace, workspace_bytes, stream


def _count_device(lib, axis, x, w, out=None, strategy="auto", used=None):
    """Counts device samples x (weights w) on the caller's current stream into
    out (new slots unless given, then added to)."""
    device = lib.device(x)
    type_name = _arrays.type_name(lib.dtype(x))
    weight_name = None if w is None else _arrays.type_name(lib.dtype(w))
    entry = _entry(axis, type_name, weight_name, "cuda", device, strategy)
    if used is not None:
        used[type_name] = entry.plan.strategy
    n = lib.size(x)
    with lib.using(device):
        launch = _device_launch_args(lib, entry, device, n)
        accumulate = out is not None
        if out is None:
            out = lib.empty(entry.plan.slots, np.float64 if w is not None else np.int64, device)
        entry.plan.run(lib.pointer(x), n, 0 if w is None else lib.pointer(w), lib.pointer(out), accumulate, *launch)
    return out


def _device_edges(lib, axis, device):
    """(edges, widths as float64) of `axis` on `device`, copied there once and
    kept: a copy from host memory waits for the stream (the kernel just
    launched), a copy of these on the device does not. Inside lib.using(device)."""
    key = (lib.name, device)
    held = axis.device_edges.get(key)
    if held is None:
        held = axis.device_edges[key] = (lib.from_numpy(axis.edges, device),
                                         lib.from_numpy(np.array(np.diff(axis.edges), float), device))
    return held


def _library(a):
    name = _arrays.library_of(a)
    return name, (Host if name == "numpy" else _arrays.DEVICE_LIBRARIES.get(name))


def _torch_cpu_to_numpy(t):
    return None if t is None else t.detach().numpy()


def _flat_weights(lib, lib_name, a_shape, weights):
    if _arrays.library_of(weights) != lib_name:
        raise TypeError(f"levelhist: the weights must be {lib_name} arrays like the samples")
    if lib is Host:
        weights = np.asarray(weights)
    if tuple(weights.shape) != tuple(a_shape):
        raise ValueError("weights should have the same shape as a.")
    w = weights.reshape(-1)
    if lib is Host:
        w = np.ascontiguousarray(w)
    elif lib is _arrays.Torch:
        w = w.detach().contiguous()
    else:
        w = lib.module().ascontiguousarray(w)
    weight_dtype = lib.dtype(w)
    return lib.convert(w, _arrays.weight_dtype_of(weight_dtype)), weight_dtype


def _axis_for(lib, x, dtype, bins, range, weights_flat):
    if isinstance(bins, str):
        if lib is not Host:
            raise TypeError(f"levelhist: bins={bins!r} is computed by numpy; give a number of bins or edges for "
                            "arrays on a GPU")
        if weights_flat is not None:
            raise TypeError("Automated estimation of the number of bins is not supported for weighted data")
        return _edges.string_axis(x, bins, range, None)
    if np.ndim(bins) == 0:
        n = _edges.bins_count(bins)
        return _edges.uniform_axis(dtype, n, range, lib.size(x), lambda: lib.minmax(x))
    if _arrays.library_of(bins) in ("cupy", "torch", "torch_cpu"):
        bins = _arrays.DEVICE_LIBRARIES.get(_arrays.library_of(bins), _arrays.Torch).to_numpy(bins)
    if np.ndim(bins) == 1:
        return _edges.explicit_axis(bins, dtype)
    raise ValueError("`bins` must be 1d, when an array")


# The common call, histogram(numpy array, int, (lo, hi)) without weights or
# density, by (dtype, bins, range with its types): its axis, at a dictionary
# lookup's cost.
_fast_axes = {}


def _fast_histogram(a, bins, range):
    lo, hi = range
    key = (a.dtype, bins, type(lo), lo, type(hi), hi)
    axis = _fast_axes.get(key)
    if axis is None:
        if a.dtype not in _arrays._TYPE_NAMES or a.dtype == np.bool_:
            return None
        axis = _edges.uniform_axis(a.dtype, _edges.bins_count(bins), range, a.size, None)
        if axis.slot_map is not None:
            return None
        if len(_fast_axes) >= 256:
            _fast_axes.clear()
        _fast_axes[key] = axis
    x = a.reshape(-1)  # a view when contiguous, else one copy
    slots = _count_host(axis, x, None)
    return slots[: axis.bins], axis.edges.copy()


class _DeviceCall:
    """What the common GPU call keeps between calls: its plan entry (plan and
    workspaces), the slots' count, the edges on the device, and the results
    made ahead, by stream (see _next_result)."""

    __slots__ = ("lib", "device", "entry", "bins", "slots", "edges", "batch", "ready")


# Results of the common GPU call are made RESULT_BATCH at a time: one
# allocation of RESULT_BATCH rows of slots and one of as many copies of the
# edges, cut into rows. An allocation and a copy are each a few microseconds
# from Python, as much as the launch that counts 1000 samples; made a batch at
# a time they cost a fraction of a microsecond a call (what remains is the
# rows' tensor objects, made by the batch too). Each result is a distinct row,
# never handed out twice; a row's allocation lives until its last row is
# dropped, so the batch is kept to RESULT_BLOCK_BYTES.
RESULT_BATCH = 64
RESULT_BLOCK_BYTES = 1 << 20


def _next_result(call, stream):
    """The next (counts row, edges, the row's device address) for a call on
    `stream`: rows made for that stream only (the array library ties an
    allocation to the stream it is made on, and the edges' copy runs there)."""
    rows = call.ready.get(stream)
    if not rows:
        lib = call.lib
        with lib.using(call.device):
            hists = lib.result_rows(call.batch, call.slots, call.bins, call.device)
            edges = lib.copies(call.edges, call.batch)
        rows = [(h, e, lib.pointer(h)) for h, e in zip(hists, edges)]
        rows.reverse()  # popped from the end: the first row first
        if len(call.ready) >= 8:
            call.ready.clear()
        call.ready[stream] = rows
    return rows.pop()


# The common GPU call, histogram(CuPy array or CUDA tensor, int, (lo, hi))
# without weights or density, by (library, dtype, bins, range with its types,
# device): a dictionary lookup, the stream, one launch and a result made
# ahead. None marks a key the general path must take (a dtype that is
# converted first, or edges that need a slot map).
_fast_device_calls = {}

# The array types seen so far that are a device library's (torch.Tensor,
# cupy.ndarray, subclasses): the common call's test of its argument's type.
_device_types = {}


def _fast_device_call(lib, a, dtype, bins, range, device):
    if dtype not in _arrays._TYPE_NAMES or dtype == np.bool_ or _arrays.counted_dtype(dtype) != dtype:
        return None
    axis = _edges.uniform_axis(dtype, _edges.bins_count(bins), range, lib.size(a), None)
    if axis.slot_map is not None:
        return None
    call = _DeviceCall()
    call.lib = lib
    call.device = device
    call.entry = _entry(axis, _arrays.type_name(dtype), None, "cuda", device)
    call.bins = axis.bins
    call.slots = call.entry.plan.slots
    with lib.using(device):
        call.edges = lib.from_numpy(axis.edges, device)
    row_bytes = call.slots * 8 + axis.edges.nbytes
    call.batch = max(1, min(RESULT_BATCH, RESULT_BLOCK_BYTES // row_bytes))
    call.ready = {}
    return call


def _fast_device_histogram(a, lib, bins, range):
    probed = lib.probe(a)  # (n, device, address) of a contiguous array on a GPU, else None
    if probed is None:
        return None
    n, device, samples = probed
    lo, hi = range
    key = (lib.name, a.dtype, bins, type(lo), lo, type(hi), hi, device)
    call = _fast_device_calls.get(key, False)
    if call is False:
        try:
            dtype = lib.dtype(a)
        except TypeError:  # a dtype the general path converts first (bfloat16) or refuses
            dtype = None
        call = None if dtype is None else _fast_device_call(lib, a, dtype, bins, range, device)
        if len(_fast_device_calls) >= 256:
            _fast_device_calls.clear()
        _fast_device_calls[key] = call
    if call is None:
        return None
    stream = lib.stream(device)
    workspace, workspace_bytes = call.entry.workspace_pointer(lib, device, stream, n)
    hist, edges, out = _next_result(call, stream)
    # The kernel writes the row's slots: the bins (hist), then the flow counters.
    call.entry.plan.run(samples, n, 0, out, False, workspace, workspace_bytes, stream)
    return hist, edges


def histogram(a, bins=10, range=None, weights=None, density=None):
    """The histogram of `a`: numpy.histogram's results, counted by levelhist.

    Returns (hist, bin_edges) exactly as numpy.histogram(a, bins, range,
    weights=weights, density=density) does: the same edges (float32 edges for
    float32 samples, as numpy builds them), the last bin closed, values outside
    the range and NaN not counted, int64 counts, and with weights sums in the
    weights' dtype (levelhist adds in float64, then casts).

    a: a numpy array (or anything numpy.asarray takes), a CuPy array or a
    PyTorch tensor, of any shape (flattened; a non-contiguous array is copied
    once). Samples: uint8, int8, uint16, int16, int32, uint32, float32,
    float64 as they are; int64/uint64 as float64 and float16 as float32
    (exactly numpy's comparisons); bool as uint8, with numpy's warning.
    Arrays on a GPU are counted there, on the caller's current stream, and the
    results are arrays of the same library on the same device (no host copy
    unless the range comes from the data, whose min and max are read back).
    bins: a number of equal bins, a sequence of edges, or a numpy estimator
    name ('auto', 'fd', ...; numpy arrays only, edges by
    numpy.histogram_bin_edges).
    """
    fast = type(bins) is int and type(range) is tuple and weights is None and not density
    if fast and type(a) is np.ndarray:
        result = _fast_histogram(a, bins, range)
        if result is not None:
            return result
    if fast:
        device_lib = _device_types.get(type(a))
        if device_lib is None:
            # Only a device library is remembered: torch.Tensor is also a CPU tensor's type.
            device_lib = _arrays.DEVICE_LIBRARIES.get(_arrays.library_of(a))
            if device_lib is not None:
                _device_types[type(a)] = device_lib
        if device_lib is not None:
            result = _fast_device_histogram(a, device_lib, bins, range)
            if result is not None:
                return result
    lib_name, lib = _library(a)
    if lib_name == "torch_cpu":
        torch = sys.modules["torch"]
        hist, edges = histogram(_torch_cpu_to_numpy(a), bins, range, _torch_cpu_to_numpy(weights), density)
        return torch.from_numpy(np.asarray(hist)), torch.from_numpy(edges)
    a_shape = np.shape(a) if lib is Host else tuple(a.shape)
    x = lib.flat(a)
    dtype = lib.dtype(x)
    counted = _arrays.counted_dtype(dtype)
    w = weight_dtype = None
    if weights is not None:
        w, weight_dtype = _flat_weights(lib, lib_name, a_shape, weights)
    axis = _axis_for(lib, x, dtype, bins, range, w)
    x = lib.convert(x, counted)
    if lib is Host:
        slots = _count_host(axis, x, w)
        hist = axis.numpy_bins(slots)
        if w is not None and weight_dtype != np.float64:
            hist = hist.astype(weight_dtype)
        edges = axis.edges.copy()
        if density:
            db = np.array(np.diff(edges), float)
            return hist / db / hist.sum(), edges
        return hist, edges
    slots = _count_device(lib, axis, x, w)
    device = lib.device(x)
    if axis.slot_map is None:
        hist = slots[: axis.bins]
    else:
        with lib.using(device):
            hist = lib.from_numpy(axis.numpy_bins(lib.to_numpy(slots)), device)
    if w is not None and weight_dtype != np.float64:
        with lib.using(device):
            hist = lib.astype(hist, weight_dtype)
    with lib.using(device):
        edges, db = _device_edges(lib, axis, device)
        edges = lib.copy(edges)
        if density:
            return hist / db / hist.sum(), edges
    return hist, edges


def bincount(x, weights=None, minlength=0):
    """numpy.bincount(x, weights, minlength), counted by levelhist: the number
    of occurrences of each value 0..max(x) (at least minlength values) of
    non-negative integers x, int64; with weights the float64 sums of the
    weights. x: a 1-D numpy array, CuPy array or PyTorch tensor (results on the
    same device). Values must be below 2**28 (levelhist's largest bin count)."""
    lib_name, lib = _library(x)
    if lib_name == "torch_cpu":
        torch = sys.modules["torch"]
        return torch.from_numpy(np.asarray(bincount(_torch_cpu_to_numpy(x), _torch_cpu_to_numpy(weights), minlength)))
    if lib is Host:
        x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else "object of too small depth for desired array")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    dtype = lib.dtype(x)
    if dtype == np.bool_:
        x = lib.convert(x, np.dtype(np.uint8)) if lib is not _arrays.Torch else x.to(sys.modules["torch"].uint8)
        dtype = np.dtype(np.uint8)
    if dtype.kind not in "iu":
        raise TypeError(f"Cannot cast array data from {dtype!r} to dtype('int64') according to the rule 'safe'")
    w = None
    if weights is not None:
        w, _ = _flat_weights(lib, lib_name, tuple(x.shape), weights)
    n = lib.size(x)
    length = minlength
    if n:
        low, high = lib.minmax(x)
        if low < 0 or (dtype == np.uint64 and high >= 1 << 63):  # numpy reads uint64 as int64
            raise ValueError("'list' argument must have no negative elements")
        length = max(int(high) + 1, minlength)
    if length > _MAX_BINS:
        raise ValueError(f"levelhist: bincount counts values below 2**28, and the largest is {length - 1}")
    if length == 0:
        if lib is Host:
            return np.zeros(0, np.float64 if w is not None else np.intp)
        with lib.using(lib.device(x)):
            return lib.zeros(0, np.float64 if w is not None else np.int64, lib.device(x))
    if dtype.itemsize == 8:
        x = lib.convert(x, np.dtype(np.int32))  # exact: 0 <= x < 2**28
    x = x if lib is not Host else np.ascontiguousarray(x)
    if lib is _arrays.Torch:
        x = x.contiguous()
    elif lib is _arrays.CuPy:
        x = lib.module().ascontiguousarray(x)
    axis = _edges._cached(("bincount", length),
                          lambda: _edges.Axis(np.arange(length + 1.0), _levelhist.Binning.even(length, 0.0, float(length), False)))
    if lib is Host:
        return _count_host(axis, x, w)[:length]
    return _count_device(lib, axis, x, w)[:length]


class Histogram:
    """A histogram that accumulates: fill() adds, as often as needed, with one
    levelhist plan per sample dtype reused across fills.

    Histogram(bins, range=None, *, dtype=np.float64, weighted=False,
    backend=None, strategy='auto', threads=0)

    bins, range: as numpy.histogram (a number of bins needs a range). Edges are
    numpy's for samples of `dtype`: float64 (the default) gives double edges,
    np.float32 the float32 edges numpy.histogram builds for float32 samples.
    Every fill uses these same edges, whatever its samples' dtype.
    weighted: sums of weights (float64) instead of counts (int64).
    backend: for host arrays, 'cpu', 'cuda' or 'auto' (None: the CPU below
    2**22 samples, else 'auto'). Device arrays are counted on their device.
    The first fill decides where the counts live (numpy, or the CuPy array's /
    torch tensor's device); later fills must come from the same place.
    """

    def __init__(self, bins, range=None, *, dtype=np.float64, weighted=False, backend=None, strategy="auto",
                 threads=0):
        if np.ndim(bins) == 0 and not isinstance(bins, str):
            if range is None:
                raise ValueError("levelhist: a Histogram of a number of bins needs a range; give range=(lo, hi)")
            self._axis = _edges.uniform_axis(np.dtype(dtype), _edges.bins_count(bins), range, 1, None)
        elif isinstance(bins, str):
            raise TypeError("levelhist: a Histogram needs a number of bins or edges (no samples to estimate from)")
        else:
            self._axis = _edges.explicit_axis(bins, np.dtype(dtype))
        self._weighted = bool(weighted)
        self._backend = backend
        self._strategy = strategy
        self._threads = threads
        self._lib = None  # where the slots live: Host, CuPy or Torch
        self._device = -1
        self._slots = None
        self._strategies = {}

    # ---- filling ----
    def fill(self, a, weights=None):
        """Adds the samples of `a` (any shape; weights of the same shape for a
        weighted histogram). Returns self."""
        lib_name, lib = _library(a)
        if lib_name == "torch_cpu":
            a, weights, lib = _torch_cpu_to_numpy(a), _torch_cpu_to_numpy(weights), Host
            lib_name = "numpy"
        if self._weighted != (weights is not None):
            raise ValueError("levelhist: a weighted Histogram fills with weights, a Histogram of counts without")
        a_shape = np.shape(a) if lib is Host else tuple(a.shape)
        x = lib.flat(a)
        x = lib.convert(x, _arrays.counted_dtype(lib.dtype(x)))
        w = None if weights is None else _flat_weights(lib, lib_name, a_shape, weights)[0]
        device = -1 if lib is Host else lib.device(x)
        if self._slots is None:
            self._lib, self._device = lib, device
        elif lib is not self._lib or device != self._device:
            where = "host memory" if self._lib is Host else f"{self._lib.name} arrays on device {self._device}"
            raise ValueError(f"levelhist: this Histogram holds counts from {where}; fill it from there")
        if lib is Host:
            self._slots = _count_host(self._axis, x, w, self._slots, self._backend, self._strategy, self._threads,
                                      self._strategies)
        else:
            self._slots = _count_device(lib, self._axis, x, w, self._slots, self._strategy, self._strategies)
        return self

    def reset(self):
        """Sets every count to zero."""
        if self._slots is not None:
            self._slots[:] = 0
        return self

    # ---- reading ----
    def _host_slots(self):
        if self._slots is None:
            return np.zeros(self._axis.binning.bins + 3, np.float64 if self._weighted else np.int64)
        return self._slots if self._lib is Host else self._lib.to_numpy(self._slots)

    @property
    def values(self):
        """The bins' counts (int64) or sums (float64): a copy, where the counts live."""
        if self._slots is None or self._lib is Host or self._axis.slot_map is not None:
            bins = self._axis.numpy_bins(self._host_slots()).copy()
            if self._lib is None or self._lib is Host:
                return bins
            with self._lib.using(self._device):
                return self._lib.from_numpy(bins, self._device)
        with self._lib.using(self._device):
            return self._lib.copy(self._slots[: self._axis.bins])

    counts = values

    @property
    def edges(self):
        """The bin edges (a numpy array, numpy's dtype for them)."""
        return self._axis.edges.copy()

    def _slot(self, k):
        v = self._host_slots()[self._axis.binning.bins + k]
        return float(v) if self._weighted else int(v)

    @property
    def underflow(self):
        """Samples below the first edge (and -inf), counted or summed."""
        return self._slot(0)

    @property
    def overflow(self):
        """Samples above the last edge (and +inf)."""
        return self._slot(1)

    @property
    def nan(self):
        """NaN samples."""
        return self._slot(2)

    @property
    def total(self):
        """Everything filled: bins, underflow, overflow and NaN."""
        s = self._host_slots()
        return float(s.sum()) if self._weighted else int(s.sum())

    @property
    def strategy(self):
        """The strategy that counted this histogram's last fill of each sample type."""
        return dict(self._strategies)

    def __repr__(self):
        kind = "sums" if self._weighted else "counts"
        return f"<levelhist.Histogram {self._axis.bins} bins over [{self._axis.edges[0]}, {self._axis.edges[-1]}], {kind}>"
