#!/usr/bin/env bash
# Build, test and benchmark levelhist on a GPU machine in one go (the device
# lease is short: one call does it all). Usage, from the repository root:
#   scripts/device_check.sh [build|test|bench]...   (default: all three)
# Writes to $OUT (or ./device-out): tests.log, bench.md/.csv/.json, ptxas.txt,
# plots/*.svg; prints the test summary and the benchmark tables last.
# Environment: BENCH_ARGS (extra `levelhist bench` arguments, e.g. --quick),
# GTEST_FILTER (restrict the tests), ARCH (CUDA architectures, default 90).
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
arch=${ARCH:-90}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build test bench)
want() { for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
status=0

{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,memory.total,driver_version --format=csv
  nvcc --version | tail -1
  git log -1 --format='commit %H %cd' 2>/dev/null || true
} | tee "$out/device.txt"

if want build; then
  cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DCMAKE_CUDA_FLAGS="-Xptxas=-v" >/tmp/configure.log 2>&1 || { tail -20 /tmp/configure.log; exit 1; }
  cmake --build build-device -j"$(nproc)" >/tmp/build.log 2>&1 || { grep -E "error" /tmp/build.log | head -40; exit 1; }
  grep -E "Compiling entry function|registers|spill" /tmp/build.log >"$out/ptxas.txt" || true
fi

if want test; then
  (cd build-device && ./tests/levelhist_tests --gtest_filter="${GTEST_FILTER:-*}" --gtest_brief=1) >"$out/tests.log" 2>&1
  rc=$?
  grep -E "FAILED|SKIPPED|PASSED|tests ran" "$out/tests.log" | tail -40
  [ $rc -ne 0 ] && status=1
fi

if want bench; then
  # shellcheck disable=SC2086
  ./build-device/levelhist bench ${BENCH_ARGS:-} --out "$out" --plot "$out/plots" >/dev/null 2>"$out/bench-progress.log"
  rc=$?
  cat "$out/bench.md"
  tail -3 "$out/bench-progress.log"
  [ $rc -ne 0 ] && status=1
fi
exit $status
