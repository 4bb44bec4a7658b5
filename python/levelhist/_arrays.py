"""The arrays levelhist counts: numpy arrays (and anything numpy.asarray takes)
in host memory, CuPy arrays and PyTorch tensors on a CUDA device (zero-copy:
their device pointer, counted on the caller's current stream), PyTorch CPU
tensors through numpy.

Arrays are recognised by their type's module, so importing levelhist imports
neither CuPy nor PyTorch; a library is only used once the caller hands over
one of its arrays (and so has imported it).
"""
import functools
import sys
import warnings

import numpy as np

# numpy dtypes levelhist counts as they are, by its names for them.
_TYPE_NAMES = {
    np.dtype(np.uint8): "u8",
    np.dtype(np.int8): "i8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}

# Samples of these dtypes are converted exactly as numpy.histogram bins them:
# int64 / uint64 are compared with the edges as float64 (numpy casts them to its
# float64 edge type), float16 exactly to float32 (its edges stay float16).
_CONVERTED = {
    np.dtype(np.int64): np.dtype(np.float64),
    np.dtype(np.uint64): np.dtype(np.float64),
    np.dtype(np.float16): np.dtype(np.float32),
}


def type_name(dtype):
    return _TYPE_NAMES.get(np.dtype(dtype))


def counted_dtype(dtype, what="samples"):
    """The dtype levelhist counts samples of `dtype` as (itself or a wider exact one)."""
    dtype = np.dtype(dtype)
    if dtype in _TYPE_NAMES:
        return dtype
    if dtype in _CONVERTED:
        return _CONVERTED[dtype]
    raise TypeError(
        f"levelhist: {what} of dtype {dtype} are not supported; give uint8, int8, uint16, int16, int32, "
        "uint32, int64, uint64, float16, float32 or float64"
    )


def weight_dtype_of(dtype):
    """Weights are summed as float32 or float64; other real dtypes become float64."""
    dtype = np.dtype(dtype)
    if dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        return dtype
    if dtype.kind in "biuf" and dtype.itemsize <= 8:
        return np.dtype(np.float64)
    raise TypeError(f"levelhist: weights of dtype {dtype} are not supported; give real numbers (float64 sums)")


def library_of(a):
    """'numpy', 'cupy', 'torch' (CUDA tensor) or 'torch_cpu', by the array's type."""
    module = type(a).__module__.partition(".")[0]
    if module == "cupy":
        return "cupy"
    if module == "torch" and hasattr(a, "is_cuda"):
        return "torch" if a.is_cuda else "torch_cpu"
    return "numpy"


# ---- numpy ------------------------------------------------------------------------


class Host:
    """numpy arrays in host memory."""

    name = "numpy"

    @staticmethod
    def flat(a):
        a = np.asarray(a)
        if a.dtype == np.bool_:
            # numpy.histogram does the same, with the same warning.
            warnings.warn(f"Converting input from {a.dtype} to {np.uint8} for compatibility.", RuntimeWarning, stacklevel=4)
            a = a.astype(np.uint8)
        return np.ravel(a)  # a copy only when `a` is not contiguous

    @staticmethod
    def dtype(a):
        return a.dtype

    @staticmethod
    def convert(a, dtype):
        return a if a.dtype == dtype else a.astype(dtype)

    @staticmethod
    def minmax(a):
        return a.min(), a.max()

    @staticmethod
    def size(x):
        return x.size


class _SameDevice:
    """The context for a device that is current already: nothing to switch."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_SAME_DEVICE = _SameDevice()


# ---- CuPy -------------------------------------------------------------------------


class CuPy:
    name = "cupy"

    @staticmethod
    def module():
        return sys.modules["cupy"]

    @staticmethod
    def flat(a):
        if a.dtype == np.bool_:
            warnings.warn(f"Converting input from {a.dtype} to {np.uint8} for compatibility.", RuntimeWarning, stacklevel=4)
            a = a.astype(np.uint8)
        # The samples' order does not matter, only that they are contiguous: a
        # contiguous array of any shape is counted as it is, others copied once.
        return a if a.flags.c_contiguous else a.ravel()

    @staticmethod
    def probe(a):
        """(size, device, address) of a C-contiguous array on the current
        device (whose current stream the call takes), else None: the common
        call's test and reading of its argument, in one."""
        if a.flags.c_contiguous:
            device = a.device.id
            if device == CuPy.module().cuda.runtime.getDevice():
                return a.size, device, a.data.ptr
        return None

    @staticmethod
    def dtype(a):
        return np.dtype(a.dtype)

    @staticmethod
    def convert(a, dtype):
        return a if a.dtype == dtype else a.astype(dtype)

    @staticmethod
    def minmax(a):
        return a.min().get()[()], a.max().get()[()]

    @staticmethod
    def device(a):
        return a.device.id

    @staticmethod
    def pointer(a):
        return a.data.ptr

    @staticmethod
    def using(device):
        cuda = CuPy.module().cuda
        return _SAME_DEVICE if cuda.runtime.getDevice() == device else cuda.Device(device)

    @staticmethod
    def stream(device):
        # The caller's current stream on that device (cupy.cuda.get_current_stream).
        return CuPy.module().cuda.get_current_stream().ptr

    @staticmethod
    def empty(n, dtype, device):
        return CuPy.module().empty(n, dtype=dtype)

    @staticmethod
    def result_rows(k, slots, bins, device):
        """k int64 arrays of `bins` counts, each the head of its own row of
        `slots` in one allocation on the current device (the fast path's
        outputs, made k at a time)."""
        block = CuPy.module().empty((k, slots), dtype=np.int64)
        return [block[i, :bins] for i in range(k)]

    @staticmethod
    def copies(x, k):
        """k copies of the 1-D array x, rows of one allocation."""
        block = CuPy.module().tile(x, (k, 1))
        return [block[i] for i in range(k)]

    @staticmethod
    def zeros(n, dtype, device):
        return CuPy.module().zeros(n, dtype=dtype)

    @staticmethod
    def from_numpy(x, device):
        return CuPy.module().asarray(x)

    @staticmethod
    def to_numpy(x):
        return x.get()

    @staticmethod
    def astype(x, dtype):
        return x.astype(dtype)

    @staticmethod
    def size(x):
        return x.size

    @staticmethod
    def copy(x):
        return x.copy()

    @staticmethod
    def synchronize(device):
        CuPy.module().cuda.get_current_stream().synchronize()


# ---- PyTorch ----------------------------------------------------------------------


def _torch():
    return sys.modules["torch"]


@functools.cache
def _torch_stream_query():
    """device -> the handle of torch's current stream there: torch's raw-stream
    query where it has one (no Stream object made per call), looked up once."""
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device: torch.cuda.current_stream(device).cuda_stream


_torch_table = None


def _torch_dtypes():
    global _torch_table
    if _torch_table is not None:
        return _torch_table
    torch = _torch()
    table = {
        torch.uint8: np.dtype(np.uint8),
        torch.int8: np.dtype(np.int8),
        torch.int16: np.dtype(np.int16),
        torch.int32: np.dtype(np.int32),
        torch.int64: np.dtype(np.int64),
        torch.float16: np.dtype(np.float16),
        torch.float32: np.dtype(np.float32),
        torch.float64: np.dtype(np.float64),
        torch.bool: np.dtype(np.bool_),
    }
    for name, np_type in (("uint16", np.uint16), ("uint32", np.uint32), ("uint64", np.uint64)):
        if hasattr(torch, name):
            table[getattr(torch, name)] = np.dtype(np_type)
    _torch_table = table
    return table


def _to_torch_dtype(dtype):
    torch = _torch()
    for t, d in _torch_dtypes().items():
        if d == dtype and t is not torch.bool:
            return t
    raise TypeError(f"levelhist: no torch dtype for {dtype}")


class Torch:
    name = "torch"

    @staticmethod
    def flat(a):
        torch = _torch()
        if a.requires_grad:
            a = a.detach()
        if a.dtype == torch.bool:
            warnings.warn("Converting input from bool to <class 'numpy.uint8'> for compatibility.", RuntimeWarning, stacklevel=4)
            a = a.to(torch.uint8)
        elif a.dtype == torch.bfloat16:
            a = a.to(torch.float32)  # exact; counted as float32 samples (numpy has no bfloat16)
        # Contiguous tensors of any shape are counted as they are; others copied once.
        return a if a.is_contiguous() else a.reshape(-1).contiguous()

    @staticmethod
    def probe(a):
        """(size, device, address) of a contiguous CUDA tensor, else None (the
        common call's test and reading of its argument, in one)."""
        if a.is_cuda and a.is_contiguous():
            return a.numel(), a.get_device(), a.data_ptr()
        return None

    @staticmethod
    def dtype(a):
        try:
            return _torch_dtypes()[a.dtype]
        except KeyError:
            raise TypeError(f"levelhist: samples of dtype {a.dtype} are not supported") from None

    @staticmethod
    def convert(a, dtype):
        return a if Torch.dtype(a) == dtype else a.to(_to_torch_dtype(dtype))

    @staticmethod
    def minmax(a):
        dtype = Torch.dtype(a)
        return dtype.type(a.min().item()), dtype.type(a.max().item())

    @staticmethod
    def device(a):
        return a.get_device()  # a CUDA tensor's device index

    @staticmethod
    def pointer(a):
        return a.data_ptr()

    @staticmethod
    def using(device):
        cuda = _torch().cuda
        return _SAME_DEVICE if cuda.current_device() == device else cuda.device(device)

    @staticmethod
    def stream(device):
        # The caller's current stream on that device (torch.cuda.current_stream).
        return _torch_stream_query()(device)

    @staticmethod
    def empty(n, dtype, device):
        return _torch().empty(n, dtype=_to_torch_dtype(np.dtype(dtype)), device=f"cuda:{device}")

    @staticmethod
    def result_rows(k, slots, bins, device):
        """k int64 tensors of `bins` counts, each the head of its own row of
        `slots` in one allocation on that device (the fast path's outputs,
        made k at a time)."""
        torch = _torch()
        block = torch.empty((k, slots), dtype=torch.int64, device=torch.device("cuda", device))
        return list(block[:, :bins].unbind(0))

    @staticmethod
    def copies(x, k):
        """k copies of the 1-D tensor x, rows of one allocation."""
        return list(x.repeat(k, 1).unbind(0))

    @staticmethod
    def zeros(n, dtype, device):
        return _torch().zeros(n, dtype=_to_torch_dtype(np.dtype(dtype)), device=f"cuda:{device}")

    @staticmethod
    def from_numpy(x, device):
        return _torch().from_numpy(np.ascontiguousarray(x)).to(f"cuda:{device}")

    @staticmethod
    def to_numpy(x):
        return x.cpu().numpy()

    @staticmethod
    def astype(x, dtype):
        return x.to(_to_torch_dtype(np.dtype(dtype)))

    @staticmethod
    def size(x):
        return x.numel()

    @staticmethod
    def copy(x):
        return x.clone()

    @staticmethod
    def synchronize(device):
        _torch().cuda.current_stream(device).synchronize()


DEVICE_LIBRARIES = {"cupy": CuPy, "torch": Torch}
