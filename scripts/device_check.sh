#!/usr/bin/env bash
# Build, test and benchmark levelhist on a GPU machine in one go (the device
# lease is short: one call does it all). Usage, from the repository root:
#   scripts/device_check.sh [build|pack|unpack|test|examples|bench|clahe|python|dask|compare|knobs|study|grid|ncu]...
#   (default: build test examples bench)
#   unpack: instead of build, the programs scripts/device_pack.sh built on another
#   machine (carry .devcarry), into build-device/ (tree.txt names their commit).
#   pack: after build, the tests, benchmark and CLI packed as $OUT/devcarry/ (the
#   same pack in 15 MiB pieces: join them into .devcarry/ here, and later calls start with unpack; build
#   with ARCH=90-real so the pack holds no PTX and stays within the carry's 64 MiB).
# Writes to $OUT (or ./device-out): tests.log, bench.md/.csv/.json, ptxas.txt,
# plots/*.svg; prints the test summary and the benchmark tables last. The clahe step
# compares `equalize --clahe` with OpenCV (scripts/compare_clahe.py: both depths under auto,
# clahe.log; 8-bit with the tile histograms on the GPU, clahe-cuda.log).
# Environment:
#   BENCH_ARGS    extra levelhist-bench arguments, e.g. --quick or --sections headline,latency
#   GTEST_FILTER  restrict the tests
#   BUILD_TARGETS build only these targets (space-separated; default: everything), e.g.
#                 small_calls_study for a short lease
#   OLD_BUILD_TARGETS  the same for the old tree of the compare step (its target names), e.g.
#                 "levelhist_cli levelhist_bench" for a tree with a separate benchmark program
#   KNOB_SETTINGS knobs: environment settings (';'-separated, each "NAME=VALUE ..." or "-" for
#                 none) under which this tree's levelhist-bench runs each of COMPARE_RUNS in turn,
#                 KNOB_ROUNDS times (default 2), writing knob-<round>-<run>-<setting>.md: a study
#                 knob against the default in one binary, e.g. "-;LEVELHIST_SEGMENT_BYTE_COLUMNS=0";
#                 a setting "@old [NAME=VALUE ...]" runs the older binary that unpack took from
#                 .devcarry/bench-base.xz (an earlier pack's levelhist-bench; bench-base.txt names it)
#   STUDY_ROUNDS  rounds of bench/experiments/small_calls_study (study step; default 15)
#   GRID_MIB, GRID_BLOCK_BYTES, GRID_CASES  the grid step: the shared-histogram strategies'
#                 bytes per block (LEVELHIST_SHARED_BLOCK_BYTES; 0: the policy's rule) at these
#                 call sizes, `levelhist-bench --general --mib` (defaults "4 16 64",
#                 "0 16384 32768 65536 131072", "u16_4096,u16_65536,f32_1024,f32_edges64")
#   ARCH          CUDA architectures (default 90)
#   CMAKE_ARGS    more configure arguments, e.g. -DLEVELHIST_JSON_INCLUDE_DIR=... where
#                 nlohmann/json is not installed (the Python module is always built)
#   PYTHON_BENCH_ARGS  arguments of python/bench/bench_python.py (python step)
#   DASK_BENCH_ARGS    arguments of python/bench/bench_dask.py (dask step; dask from $PYTHONPATH)
#   NCU_BENCH     ncu: levelhist-bench arguments under Nsight Compute (Firecracker machines;
#                 clocks left alone): every launch of the kernels matching NCU_KERNELS (a regex,
#                 default batch_kernel|clear_unowned) timed, in order (ncu-times.txt), then the
#                 throughput, stall and occupancy sections of launches NCU_DETAIL (space-separated
#                 indices among those launches, "A+N" for N from A on) in ncu-detail.txt. The
#                 benchmark adapts its number of calls to their time, which ncu's replays change, so
#                 ncu-times.txt's indices do not name the same launches there: for one case, profile
#                 bench/experiments/segments_probe (or a program like it) instead
#   OLD_SOURCE    compare: the source tree of an earlier commit (e.g. from `git archive`), built
#                 into build-old; its `levelhist bench` and this tree's levelhist-bench then run
#                 the same COMPARE_RUNS (';'-separated argument lists) alternately, old first,
#                 writing old-<k>.md and new-<k>.md
set -uo pipefail
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
arch=${ARCH:-90}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build test examples bench)
want() { for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
status=0

{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,memory.total,driver_version --format=csv
  nvcc --version | tail -1
  git log -1 --format='commit %H %cd' 2>/dev/null || true
} | tee "$out/device.txt"

build_tree() {  # source build-dir log-name
  local extra=()
  [ "$2" = build-device ] && extra=(-DLEVELHIST_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)")
  # shellcheck disable=SC2086
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DCMAKE_CUDA_FLAGS="-Xptxas=-v" "${extra[@]}" ${CMAKE_ARGS:-} >"/tmp/$3-configure.log" 2>&1 || { tail -20 "/tmp/$3-configure.log"; return 1; }
  local targets=()
  # shellcheck disable=SC2206
  [ "$2" = build-device ] && [ -n "${BUILD_TARGETS:-}" ] && targets=(--target ${BUILD_TARGETS})
  # shellcheck disable=SC2206
  [ "$2" = build-old ] && [ -n "${OLD_BUILD_TARGETS:-}" ] && targets=(--target ${OLD_BUILD_TARGETS})
  cmake --build "$2" -j"$(nproc)" "${targets[@]}" >"/tmp/$3-build.log" 2>&1 || { grep -E "error" "/tmp/$3-build.log" | head -40; return 1; }
}

if want build; then
  if want compare && [ -n "${OLD_SOURCE:-}" ]; then
    build_tree "$OLD_SOURCE" build-old old &
    old_pid=$!
  fi
  build_tree . build-device new || exit 1
  grep -E "Compiling entry function|registers|spill" /tmp/new-build.log >"$out/ptxas.txt" || true
  if [ -n "${old_pid:-}" ]; then wait "$old_pid" || { echo "the old tree did not build"; exit 1; }; fi
fi

if want pack; then
  # Files come back from $OUT at 16 MiB each at most: the pack in 15 MiB pieces
  # (here: cat .devcarry/programs.tar.xz.part-* > .devcarry/programs.tar.xz).
  { PACK_BUILD_DIR=build-device PACK_SKIP_BUILD=1 PACK_OUT="$out/devcarry" \
      scripts/device_pack.sh levelhist_tests levelhist_bench levelhist_cli &&
      split -b 15M "$out/devcarry/programs.tar.xz" "$out/devcarry/programs.tar.xz.part-" &&
      rm "$out/devcarry/programs.tar.xz"; } || status=1
fi

if want unpack; then
  mkdir -p build-device
  tar -C build-device -xJf .devcarry/programs.tar.xz || { echo "unpack: no .devcarry/programs.tar.xz (run scripts/device_pack.sh, carry .devcarry)"; exit 1; }
  export LD_LIBRARY_PATH="$PWD/build-device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  tee -a "$out/device.txt" <.devcarry/tree.txt
  # An older benchmark binary beside the pack (the knobs step's "@old" setting).
  if [ -f .devcarry/bench-base.xz ]; then
    xz -dc .devcarry/bench-base.xz >build-device/levelhist-bench-old && chmod +x build-device/levelhist-bench-old
    cat .devcarry/bench-base.txt >>"$out/device.txt" 2>/dev/null
  fi
fi

if want test; then
  # Every test's line with its time stays in tests.log (where a cut run stopped, and what is slow).
  (cd build-device && ./tests/levelhist_tests --gtest_filter="${GTEST_FILTER:-*}") >"$out/tests.log" 2>&1
  rc=$?
  grep -E "FAILED|SKIPPED|PASSED|tests ran" "$out/tests.log" | tail -40
  [ $rc -ne 0 ] && status=1
fi

if want examples; then
  for e in example_device_pointers example_readme; do
    ./build-device/$e >>"$out/examples.log" 2>&1
    rc=$?
    echo "$e: exit $rc" | tee -a "$out/examples.log"
    [ $rc -ne 0 ] && status=1
  done
fi

if want bench; then
  # shellcheck disable=SC2086
  ./build-device/levelhist-bench ${BENCH_ARGS:-} --out "$out" --plot "$out/plots" >/dev/null 2>"$out/bench-progress.log"
  rc=$?
  cat "$out/bench.md"
  tail -3 "$out/bench-progress.log"
  [ $rc -ne 0 ] && status=1
fi

if want clahe; then
  # levelhist equalize --clahe against cv2.createCLAHE (needs python3, numpy, opencv-python-headless).
  # Both depths under auto (the CPU), then 8-bit with the tile histograms on the GPU.
  python3 scripts/compare_clahe.py build-device/levelhist >"$out/clahe.log" 2>&1
  rc=$?
  tail -1 "$out/clahe.log"
  python3 scripts/compare_clahe.py build-device/levelhist --depth 8 --backend cuda >"$out/clahe-cuda.log" 2>&1
  rc_cuda=$?
  tail -1 "$out/clahe-cuda.log"
  [ $rc -ne 0 ] || [ $rc_cuda -ne 0 ] && status=1
fi

if want python; then
  # The Python tests with the GPU (CuPy and torch arrays), then the Python benchmark.
  PYTHONPATH="$PWD/build-device/python" python3 -m pytest -q -rs python/tests >"$out/python-tests.log" 2>&1
  rc=$?
  tail -15 "$out/python-tests.log"
  [ $rc -ne 0 ] && status=1
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/build-device/python" python3 python/bench/bench_python.py ${PYTHON_BENCH_ARGS:-} \
    2>&1 | tee "$out/python-bench.log"
  [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
fi

if want dask; then
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/build-device/python${PYTHONPATH:+:$PYTHONPATH}" \
    python3 python/bench/bench_dask.py ${DASK_BENCH_ARGS:-} 2>&1 | tee "$out/dask-bench.log"
  [ "${PIPESTATUS[0]}" -ne 0 ] && status=1
fi

# One benchmark run: `bench_run NAME LABEL COMMAND...` runs COMMAND --out /tmp/NAME,
# keeps its bench.md as $out/NAME.md and prints LABEL and its tables.
bench_run() {
  local name=$1 label=$2
  shift 2
  mkdir -p "/tmp/$name"
  "$@" --out "/tmp/$name" >/dev/null 2>"/tmp/$name/progress.log"
  local rc=$?
  cp "/tmp/$name/bench.md" "$out/$name.md" 2>/dev/null
  echo "== $label (exit $rc)"
  grep -E "^\|" "/tmp/$name/bench.md" | head -60
  [ $rc -ne 0 ] && status=1
}

if want compare; then
  IFS=';' read -r -a runs <<<"${COMPARE_RUNS:---sections headline,latency}"
  k=0
  for args in "${runs[@]}"; do
    k=$((k + 1))
    # shellcheck disable=SC2086
    bench_run "old-$k" "old: levelhist bench $args" ./build-old/levelhist bench $args
    # shellcheck disable=SC2086
    bench_run "new-$k" "new: levelhist-bench $args" ./build-device/levelhist-bench $args
  done
fi
if want knobs; then
  IFS=';' read -r -a runs <<<"${COMPARE_RUNS:---sections headline,latency}"
  IFS=';' read -r -a settings <<<"${KNOB_SETTINGS:--}"
  for round in $(seq 1 "${KNOB_ROUNDS:-2}"); do
    k=0
    for args in "${runs[@]}"; do
      k=$((k + 1))
      j=0
      for setting in "${settings[@]}"; do
        j=$((j + 1))
        env_args=()
        bench=./build-device/levelhist-bench
        rest=$setting
        if [ "${rest%% *}" = "@old" ]; then  # the older binary (unpack: .devcarry/bench-base.xz)
          bench=./build-device/levelhist-bench-old
          rest=${rest#@old}
          [ -z "${rest// /}" ] && rest=-
        fi
        # shellcheck disable=SC2206
        [ "$rest" != "-" ] && env_args=($rest)
        # shellcheck disable=SC2086
        bench_run "knob-$round-$k-$j" "round $round, setting '$setting': $(basename "$bench") $args" \
          env "${env_args[@]}" "$bench" $args
      done
    done
  done
fi
if want study; then
  # The lane-column kernel's variants at 4 KiB - 256 MiB, in one run beside the read limit.
  ./build-device/small_calls_study "${STUDY_ROUNDS:-15}" >"$out/study.txt" 2>&1
  rc=$?
  cat "$out/study.txt"
  [ $rc -ne 0 ] && status=1
fi
if want grid; then
  for mib in ${GRID_MIB:-4 16 64}; do
    for bpb in ${GRID_BLOCK_BYTES:-0 16384 32768 65536 131072}; do
      mkdir -p "/tmp/grid-$mib-$bpb"
      LEVELHIST_SHARED_BLOCK_BYTES=$bpb ./build-device/levelhist-bench --general --mib "$mib" \
        --cases "${GRID_CASES:-u16_4096,u16_65536,f32_1024,f32_edges64}" \
        --strategies gpu_shared_swizzle,gpu_shared_lanes,gpu_split_bins --reps 10 --case-seconds 1 \
        --format csv --out "/tmp/grid-$mib-$bpb" >/dev/null 2>"/tmp/grid-$mib-$bpb/progress.log"
      rc=$?
      echo "== $mib MiB, LEVELHIST_SHARED_BLOCK_BYTES=$bpb (exit $rc)" | tee -a "$out/grid.txt"
      cat "/tmp/grid-$mib-$bpb/bench.csv" >>"$out/grid.txt" 2>/dev/null
      [ $rc -ne 0 ] && { tail -3 "/tmp/grid-$mib-$bpb/progress.log"; status=1; }
    done
  done
fi
if want ncu; then
  kernels=${NCU_KERNELS:-batch_kernel|clear_unowned}
  bench_args=${NCU_BENCH:---shapes --sections batches --reps 3}
  # shellcheck disable=SC2086
  ncu --clock-control none --kernel-name "regex:$kernels" --metrics gpu__time_duration.sum --csv \
    ./build-device/levelhist-bench $bench_args --out /tmp/ncu-bench >/tmp/ncu-times.csv 2>"$out/ncu.log"
  rc=$?
  [ $rc -ne 0 ] && { tail -5 "$out/ncu.log"; status=1; }
  # One line per launch: index, kernel (its name up to the template arguments), grid, microseconds.
  python3 - "$out/ncu-times.txt" <<'PY'
import csv, re, sys
rows = [r for r in csv.reader(open("/tmp/ncu-times.csv")) if len(r) > 10 and (r[0] == "ID" or r[0].isdigit())]
head, rows = rows[0], rows[1:]
k, g, v = head.index("Kernel Name"), head.index("Grid Size"), head.index("Metric Value")
with open(sys.argv[1], "w") as out:
    for i, r in enumerate(rows):
        name = re.split(r"[<(]", re.sub(r"^void ", "", r[k].replace("(anonymous namespace)::", "")))[0]
        out.write(f"{i} {name.split('::')[-1]} {r[g].replace(' ', '')} {float(r[v].replace(',', '')) / 1000:.1f}\n")
PY
  tail -3 "$out/ncu-times.txt"
  for d in ${NCU_DETAIL:-}; do
    count=1
    if [ "${d#*+}" != "$d" ]; then
      count=${d#*+}
      d=${d%+*}
    fi
    # shellcheck disable=SC2086
    ncu --clock-control none --kernel-name "regex:$kernels" --launch-skip "$d" --launch-count "$count" \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
      --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section InstructionStats --section LaunchStats \
      ./build-device/levelhist-bench $bench_args --out /tmp/ncu-bench >>"$out/ncu-detail.txt" 2>>"$out/ncu.log"
    echo "== launches $d+$count" | tee -a "$out/ncu-detail.txt"
  done
fi
exit $status
