#!/usr/bin/env bash
# Quick start, step 2: build and run every test. GPU tests run where a CUDA GPU
# is present and skip with a message elsewhere. Then the CPU tests again, built
# with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure_packages.sh
jobs=$(nproc)
# ctest names skipped tests but not why: the reasons follow, one line each.
run_tests() {
  local status=0
  ctest --test-dir "$1" -j"$jobs" --output-on-failure || status=$?
  scripts/skip_reasons.sh "$1"
  return "$status"
}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs" >/dev/null
run_tests build
# A program outside the tree builds against the installed package (CMake and
# pkg-config) and against the tree as a subproject.
scripts/check_install.sh build
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DLEVELHIST_CUDA=OFF -DLEVELHIST_SANITIZE=ON >/dev/null
cmake --build build-sanitize -j"$jobs" >/dev/null
run_tests build-sanitize
