"""levelhist: fast, level histograms on NVIDIA GPUs and CPUs, with numpy's semantics.

    import levelhist
    hist, edges = levelhist.histogram(x, bins=1024, range=(0, 1))   # numpy.histogram's results
    counts = levelhist.bincount(labels, minlength=10)                # numpy.bincount's
    hist, xe, ye = levelhist.histogram2d(x, y, bins=100)             # numpy.histogram2d's (histogramdd too)
    h = levelhist.Histogram(1024, (0, 1)); h.fill(x); h.fill(y)      # accumulates, one plan reused
    levelhist.dask.histogram(dask_array, 1024, (0, 1))               # Dask arrays (import levelhist.dask)

Arrays: numpy (host memory, counted on the CPU or staged to the GPU), CuPy
arrays and PyTorch CUDA tensors (zero-copy, on the caller's current stream;
results on the same device). docs/PYTHON.md has the full reference and the
numpy-compatibility rules.
"""
from . import _levelhist
from ._api import Histogram, bincount, histogram
from ._nd import histogram2d, histogramdd

__version__ = _levelhist.__version__


def cuda_available():
    """(True, '') when levelhist can count on a CUDA GPU here, else (False, why)."""
    return _levelhist.cuda_available()


def describe_device():
    """The current CUDA device in one line, or why there is none."""
    return _levelhist.describe_device()


__all__ = ["histogram", "bincount", "histogram2d", "histogramdd", "Histogram", "cuda_available", "describe_device", "__version__"]
