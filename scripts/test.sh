#!/usr/bin/env bash
# Quick start, step 2: build and run every test. GPU tests run where a CUDA GPU
# is present and skip with a message elsewhere. Then the CPU tests again, built
# with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure_packages.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs" >/dev/null
ctest --test-dir build -j"$jobs" --output-on-failure
# A program outside the tree builds against the installed package (CMake and
# pkg-config) and against the tree as a subproject.
scripts/check_install.sh build
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DLEVELHIST_CUDA=OFF -DLEVELHIST_SANITIZE=ON >/dev/null
cmake --build build-sanitize -j"$jobs" >/dev/null
ctest --test-dir build-sanitize -j"$jobs" --output-on-failure
