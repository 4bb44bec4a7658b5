"""Importing levelhist imports neither CuPy nor PyTorch (arrays are recognised
by their type's module), nor dask until levelhist.dask is imported."""
import subprocess
import sys


def test_import_leaves_cupy_torch_and_dask_alone():
    code = (
        "import sys, levelhist, numpy as np\n"
        "levelhist.histogram(np.arange(10.0), 3)\n"
        "levelhist.bincount(np.arange(5))\n"
        "levelhist.Histogram(4, (0, 1)).fill(np.zeros(3))\n"
        "loaded = [m for m in ('cupy', 'torch', 'dask') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
