#!/usr/bin/env bash
# Host data to the GPU at link speed, on a GPU machine in one go: builds
# (build-gpu, sm_90 unless ARCH says otherwise), runs the tests of the host
# path (pinned, pageable and registered arrays, sources, CPU and GPU together,
# device lists, faults), then `levelhist bench --link`. Usage, from the
# repository root:
#   scripts/device_link.sh                  one GPU
#   scripts/device_link.sh --devices all    also the rows of several GPUs (2-4 GPU machine)
# Writes $OUT/link.log (or ./device-out/link.log): the machine, the test
# summary, the benchmark's table. Environment:
#   ARCH        CUDA architectures (default 90)
#   LINK_MIB    the benchmark's data in MiB (default 1024)
#   LINK_REPS   timed runs per row (default 5)
#   LINK_ARGS   more `bench --link` arguments, e.g. --chunks-kib 2048,8192,32768
#   BUILD       the build folder (default build-gpu; an existing one, e.g. device_check.sh's
#               build-device, is built incrementally)
#   CMAKE_ARGS  more configure arguments (e.g. -DLEVELHIST_JSON_INCLUDE_DIR=...)
#   TESTS       0: skip the tests (they ran elsewhere in the same call)
set -euo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
log=$out/link.log
: >"$log"
arch=${ARCH:-90}
build=${BUILD:-build-gpu}
devices=()
while [ $# -gt 0 ]; do
  case $1 in
    --devices) [ $# -ge 2 ] || { echo "device_link.sh: --devices needs all or a list" >&2; exit 2; }
               devices=(--devices "$2"); shift 2 ;;
    *) echo "device_link.sh: unknown argument '$1' (use --devices all|LIST)" >&2; exit 2 ;;
  esac
done
say() { echo "== $*" | tee -a "$log"; }

say "machine"
{
  nvidia-smi --query-gpu=index,name,pcie.link.gen.current,pcie.link.width.current,memory.total,driver_version \
    --format=csv || true
  nproc
  nvcc --version | tail -1
  git log -1 --format='commit %H %cd' 2>/dev/null || true
  date -u
} 2>&1 | tee -a "$log"

say "build ($build, sm_$arch)"
start=$(date +%s)
# shellcheck disable=SC2086
if [ ! -f "$build/CMakeCache.txt" ] &&
  ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" ${CMAKE_ARGS:-} \
    >/tmp/link-configure.log 2>&1; then
  tail -20 /tmp/link-configure.log | tee -a "$log"
  exit 1
fi
if ! cmake --build "$build" -j"$(nproc)" --target levelhist_cli levelhist_bench levelhist_tests >/tmp/link-build.log 2>&1; then
  grep -E "error" /tmp/link-build.log | head -40 | tee -a "$log"
  exit 1
fi
echo "built in $(($(date +%s) - start)) s" | tee -a "$log"

status=0
if [ "${TESTS:-1}" != 0 ]; then
# One test at a time: the fault tests fill the device's memory on purpose.
say "tests: ctest -R 'GpuLink|Source|GpuPlan|GpuFaults|HybridSplit|DeviceList|CliDevices'"
start=$(date +%s)
if ! ctest --test-dir "$build" -R 'GpuLink|Source|GpuPlan|GpuFaults|HybridSplit|DeviceList|CliDevices' \
  --timeout 240 --output-on-failure >"$out/link-tests.log" 2>&1; then
  status=1
fi
grep -E "tests passed|tests failed|\*\*\*|Failed|Not Run|Skipped|SKIPPED" "$out/link-tests.log" | tail -40 | tee -a "$log" || true
echo "tests took $(($(date +%s) - start)) s" | tee -a "$log"
fi

say "levelhist bench --link --mib ${LINK_MIB:-1024} --reps ${LINK_REPS:-5} ${LINK_ARGS:-} ${devices[*]:-}"
start=$(date +%s)
# shellcheck disable=SC2086
if ! "./$build/levelhist" bench --link --mib "${LINK_MIB:-1024}" --reps "${LINK_REPS:-5}" ${LINK_ARGS:-} \
  "${devices[@]}" 2>"$out/link-progress.log" | tee -a "$log"; then
  tail -5 "$out/link-progress.log" | tee -a "$log"
  status=1
fi
echo "bench took $(($(date +%s) - start)) s" | tee -a "$log"
if [ $status -eq 0 ]; then say "done: all passed"; else say "done: FAILURES above (see $out/link-tests.log)"; fi
exit $status
