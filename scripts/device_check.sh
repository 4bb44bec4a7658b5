#!/usr/bin/env bash
# Build, test and benchmark levelhist on a GPU machine in one go (the device
# lease is short: one call does it all). Usage, from the repository root:
#   scripts/device_check.sh [build|test|bench|all]...   (default: all)
# Outputs go to $OUT (or ./device-out) as logs and tables; the last lines printed
# are the summary. Environment: BENCH_ARGS (extra `levelhist bench` arguments),
# GTEST_FILTER (restrict the GPU tests), ARCH (default 90).
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
arch=${ARCH:-90}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(all)
want() { for s in "${steps[@]}"; do [ "$s" = all ] || [ "$s" = "$1" ] && return 0; done; return 1; }
status=0

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv | tee "$out/gpu.txt"
git log -1 --format='commit %H %cd' 2>/dev/null | tee -a "$out/gpu.txt" || true

if want build || want test || want bench; then
  if [ ! -x build-device/levelhist ] || want build; then
    cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      -DCMAKE_CUDA_FLAGS="-Xptxas=-v" >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
    cmake --build build-device -j"$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -40; exit 1; }
    grep -A2 -E "Compiling entry function" "$out/build.log" | grep -E "entry|registers|spill" >"$out/ptxas.txt" || true
    command -v cuobjdump >/dev/null && cuobjdump --dump-sass build-device/levelhist >"$out/levelhist.sass" 2>/dev/null || true
  fi
fi

if want test; then
  filter=${GTEST_FILTER:-*}
  (cd build-device && ./tests/levelhist_tests --gtest_filter="$filter" --gtest_brief=1) >"$out/tests.log" 2>&1
  rc=$?
  tail -40 "$out/tests.log"
  [ $rc -ne 0 ] && status=1
fi

if want bench; then
  # shellcheck disable=SC2086
  ./build-device/levelhist bench ${BENCH_ARGS:-} --plot "$out/plots" >"$out/bench.md" 2>"$out/bench.err"
  rc=$?
  cat "$out/bench.md"; tail -5 "$out/bench.err"
  [ $rc -ne 0 ] && status=1
fi
exit $status
