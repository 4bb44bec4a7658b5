#!/usr/bin/env bash
# Installs the Debian packages levelhist needs to build and test, if missing,
# then the Python package's build and test dependencies (from PyPI, with pip:
# scripts/ensure_python_packages.sh).
# CUDA is optional: it is used when nvcc is found (PATH or /usr/local/cuda).
# Images: libpng, libjpeg (libjpeg-turbo) and libtiff (each optional in CMake,
# installed here so that the tests cover them); nlohmann-json for the CLI's
# JSON and the tests; help2man for the man page.
set -euo pipefail
needed=(cmake g++ make libgtest-dev pkg-config libpng-dev zlib1g-dev libjpeg62-turbo-dev libtiff-dev
        nlohmann-json3-dev help2man)
missing=()
for p in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "levelhist: installing missing Debian packages: ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$(dirname "$0")/ensure_python_packages.sh"
