#!/usr/bin/env bash
# Installs what the Python package needs to build and test, if missing: the
# Python headers (Debian's python3-dev, for a system Python), and from PyPI
# with pip: nanobind, scikit-build-core, numpy, pytest, dask[distributed].
# Called by scripts/ensure_packages.sh; PYTHON names the interpreter (python3).
set -euo pipefail
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  echo "levelhist: installing Debian's python3 (the Python package needs it)" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3 python3-dev python3-pip >/dev/null
fi
if ! "$python" -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
  echo "levelhist: installing Debian's python3-dev (Python.h)" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-dev python3-pip >/dev/null
fi
missing=()
need() {  # need MODULE PACKAGE
  "$python" -c "import $1" 2>/dev/null || missing+=("$2")
}
need nanobind nanobind
need scikit_build_core scikit-build-core
need numpy numpy
need pytest pytest
need dask.array "dask[distributed]"
need distributed "dask[distributed]"
if [ ${#missing[@]} -gt 0 ]; then
  # shellcheck disable=SC2207
  unique=($(printf '%s\n' "${missing[@]}" | sort -u))
  echo "levelhist: installing missing Python packages from PyPI: ${unique[*]}" >&2
  "$python" -m pip install -q "${unique[@]}"
fi
