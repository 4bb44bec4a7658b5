#!/usr/bin/env bash
# Before/after on one GPU machine: builds OLD_SOURCE (a `git archive` of an
# earlier commit, e.g. .devbuild/prev) into build-old and this tree into
# build-device (benchmark and tests only), runs TEST_FILTER, then each
# ';'-separated levelhist-bench argument list of RUNS with the old and the new
# binary alternately, ROUNDS times. Writes $OUT/old-<run>-<round>.md and
# new-<run>-<round>.md and prints their GB/s and latency tables.
#   OLD_SOURCE=.devbuild/prev RUNS="--general --cases rgba" scripts/device_compare_prev.sh
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
jobs=$(nproc)
args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${ARCH:-90}")
# shellcheck disable=SC2206
args+=(${CMAKE_ARGS:-})
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee "$out/device.txt"
cmake -S "$OLD_SOURCE" -B build-old "${args[@]}" >/tmp/old-configure.log 2>&1 || { tail -20 /tmp/old-configure.log; exit 1; }
cmake -S . -B build-device "${args[@]}" >/tmp/new-configure.log 2>&1 || { tail -20 /tmp/new-configure.log; exit 1; }
(cmake --build build-old -j"$jobs" --target levelhist_bench >/tmp/old-build.log 2>&1 || echo "old build failed") &
cmake --build build-device -j"$jobs" --target levelhist_bench levelhist_tests >/tmp/new-build.log 2>&1 ||
  { grep -E "error" /tmp/new-build.log | head -20; exit 1; }
wait
status=0
if [ -n "${TEST_FILTER:-}" ]; then
  ./build-device/tests/levelhist_tests --gtest_filter="$TEST_FILTER" --gtest_brief=1 >"$out/tests.log" 2>&1 || status=1
  grep -E "FAILED|PASSED|SKIPPED" "$out/tests.log" | tail -12
fi
IFS=';' read -r -a runs <<<"${RUNS:---sections latency}"
for ((r = 1; r <= ${ROUNDS:-2}; r++)); do
  k=0
  for run in "${runs[@]}"; do
    k=$((k + 1))
    for side in old new; do
      bin=./build-device/levelhist-bench
      [ $side = old ] && bin=./build-old/levelhist-bench
      # shellcheck disable=SC2086
      $bin $run --quiet --out "/tmp/$side-$k-$r" >/dev/null 2>&1 || status=1
      cp "/tmp/$side-$k-$r/bench.md" "$out/$side-$k-$r.md"
      echo "== $side, round $r: levelhist-bench $run"
      grep -E "^## |^### (GB/s|Microseconds)|^\| (limit|gpu_|cub|2\^)" "/tmp/$side-$k-$r/bench.md" | grep -v "^| limit | 100%" | head -40
    done
  done
done
exit $status
