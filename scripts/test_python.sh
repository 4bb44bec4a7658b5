#!/usr/bin/env bash
# The Python package's tests (python/tests) against the module of a build tree
# configured with -DLEVELHIST_PYTHON=ON (default: build), then a check that
# `pip install .` works: a CPU-only build into a temporary directory, imported
# and counting. GPU tests skip without CuPy/PyTorch and a GPU; Dask tests
# without dask. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python=${PYTHON:-python3}
PYTHONPATH="$PWD/$build/python" "$python" -m pytest -q -rs python/tests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The build dependencies are installed already (scripts/ensure_python_packages.sh): no isolation, nothing downloaded.
"$python" -m pip install -q --no-build-isolation --no-deps --target "$tmp/site" \
  -C cmake.define.LEVELHIST_CUDA=OFF -C build-dir="$tmp/build" . >"$tmp/pip.log" 2>&1 ||
  { cat "$tmp/pip.log" >&2; echo "levelhist: pip install . failed" >&2; exit 1; }
(cd "$tmp" && PYTHONPATH="$tmp/site" "$python" -c '
import numpy as np, levelhist
hist, edges = levelhist.histogram(np.float32([0.7, 0.1, 0.95]), 10, (0, 1))
assert hist.tolist() == [0, 1, 0, 0, 0, 0, 0, 1, 0, 1], hist
assert levelhist.__file__.startswith("'"$tmp"'/site"), levelhist.__file__
print("pip install .: levelhist", levelhist.__version__, "installs, imports and counts")')
