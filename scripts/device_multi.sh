#!/usr/bin/env bash
# Several GPUs in one go (a 2-8 GPU machine): builds build-device (with the
# Python module), runs the host-path tests with every device in the lists,
# `levelhist bench --link --devices all` (device-resident and host-resident
# rows, the 2^24-bin merge), and python/bench/bench_dask_gpus.py with one Dask
# worker per GPU. Usage, from the repository root:
#   CMAKE_ARGS=... DASK_WHEELS=.whl scripts/device_multi.sh
# Writes $OUT (or ./device-out): multi.log (everything), link.log, tests.log, dask-gpus.log.
# LEAN=1: build only the CLI, the benchmark and the Python module, no tests, and
# only the several-GPU rows of bench --link (--devices-only): for a short lease.
# DEVICE_SUBSETS: lists such as "0,1" whose several-GPU rows are measured too
# (bench --link --devices LIST --devices-only), e.g. two GPUs on a four-GPU machine.
# BUILD_TARGETS: the targets to build when not LEAN (default: all).
# Environment: CMAKE_ARGS, LINK_MIB (default 1024), LINK_REPS (default 3),
# DASK_GIB (default 8), DASK_WHEELS (a folder of wheels of dask and distributed,
# installed with pip --no-index into a temporary folder when dask is missing).
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
log=$out/multi.log
: >"$log"
status=0
nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee -a "$log"
nvidia-smi topo -m 2>/dev/null | head -12 | tee -a "$log"
start=$(date +%s)
gpus=$(nvidia-smi -L | wc -l)
targets=${BUILD_TARGETS:-}
[ "${LEAN:-0}" = 1 ] && targets="levelhist_cli levelhist_bench _levelhist"
if ! BUILD_TARGETS=$targets OUT=$out scripts/device_check.sh build >>"$log" 2>&1; then
  echo "build failed" | tee -a "$log"
  tail -30 "$log"
  exit 1
fi
echo "built in $(($(date +%s) - start)) s" | tee -a "$log"
if [ "${LEAN:-0}" = 1 ]; then
  echo "== bench --link --devices all --devices-only" | tee -a "$log"
  ./build-device/levelhist bench --link --mib "${LINK_MIB:-1024}" --reps "${LINK_REPS:-3}" --devices all \
    --devices-only 2>/dev/null | tee "$out/link.log" | grep -E "^\|" | tee -a "$log"
  [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
else
  echo "== tests with $gpus devices in the lists" | tee -a "$log"
  ./build-device/tests/levelhist_tests --gtest_brief=1 \
    --gtest_filter='GpuLink.*:DeviceList.*:CliDevices.*:HybridSplit.*:GpuPlan.*' >"$out/tests.log" 2>&1 || status=1
  grep -E "FAILED|PASSED|tests ran" "$out/tests.log" | tail -20 | tee -a "$log"
  echo "== bench --link --devices all" | tee -a "$log"
  BUILD=build-device TESTS=0 LINK_MIB=${LINK_MIB:-1024} LINK_REPS=${LINK_REPS:-3} OUT=$out \
    scripts/device_link.sh --devices all >/dev/null 2>&1 || status=1
  grep -E "^\|" "$out/link.log" | tee -a "$log"
fi
for subset in ${DEVICE_SUBSETS:-}; do
  echo "== bench --link --devices $subset --devices-only" | tee -a "$log"
  ./build-device/levelhist bench --link --mib "${LINK_MIB:-1024}" --reps "${LINK_REPS:-3}" --devices "$subset" \
    --devices-only 2>/dev/null | grep -E "^\|" | tee -a "$log"
  [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
done
echo "== Dask, one worker per GPU" | tee -a "$log"
pyextra=""
if ! python3 -c "import dask.array, distributed" 2>/dev/null && [ -n "${DASK_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --find-links "$DASK_WHEELS" --target /tmp/dask-site \
    dask distributed partd locket tblib zict tornado >>"$log" 2>&1
  pyextra=/tmp/dask-site
fi
counts="1"
[ "$gpus" -ge 2 ] && counts="$counts 2"
[ "$gpus" -ge 4 ] && counts="$counts 4"
PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/build-device/python${pyextra:+:$pyextra}" \
  python3 python/bench/bench_dask_gpus.py --gib "${DASK_GIB:-8}" --gpus $counts --runs 3 2>&1 |
  tee "$out/dask-gpus.log" | tee -a "$log"
[ "${PIPESTATUS[0]}" -ne 0 ] && status=1
exit $status
