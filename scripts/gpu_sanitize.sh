#!/usr/bin/env bash
# The GPU sanitizers in one command, on a machine with a CUDA GPU and
# compute-sanitizer (the CUDA toolkit's): builds the tests (Release, -lineinfo
# as every build has, for sm_${ARCH:-90}) unless BUILD already holds them, then
# runs the GpuSanitize.* slice of the tests (tests/test_gpu_sanitize.cpp: every
# CUDA strategy of the library and the lab, ragged tails, unaligned pointers,
# several blocks, pixels, weights, both plan paths and the recovery after an
# error, the counting sort and the sparse histogram) under memcheck, racecheck,
# synccheck and initcheck. Prints, per tool, the errors found (must be 0), the
# tests that ran and passed, the time and the command; then the first reports
# of any tool that found something.
#
#   scripts/gpu_sanitize.sh
#
# Exit status: 0 when every tool found 0 errors and every test passed; 1 when a
# tool found errors, a test failed or a tool did not finish (no summary, or
# TOOL_TIMEOUT); 2 when it could not run (no compute-sanitizer, no GPU, the
# build failed).
# Environment:
#   BUILD         the build folder (default build-sanitize-gpu); built here if it has no test binary
#   ARCH          CUDA architectures for that build (default 90)
#   TOOLS         the tools, in order (default "memcheck racecheck synccheck initcheck")
#   PARALLEL      1: run the tools at the same time (one GPU serves them all; the
#                 wall time is about the slowest tool's); 0 (default): one after another
#   TOOL_TIMEOUT  seconds each tool may run (default 900)
#   FILTER        the tests (default GpuSanitize.*:GpuShapes.*: the batch, N-d and
#                 deterministic kernels, which take no plain counts, are reached there)
#   LEVELHIST_SANITIZE_SAMPLES  the slice's larger size (default 40009; smaller is faster)
#   OUT           the logs: <tool>.log (the sanitizer's report), <tool>.tests.log (default ./sanitize-out)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build-sanitize-gpu}
arch=${ARCH:-90}
tools=${TOOLS:-memcheck racecheck synccheck initcheck}
filter=${FILTER:-GpuSanitize.*:GpuShapes.*}
out=${OUT:-$PWD/sanitize-out}
timeout_s=${TOOL_TIMEOUT:-900}
mkdir -p "$out"

sanitizer=$(command -v compute-sanitizer || true)
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$candidate" ] && sanitizer=$candidate
done
if [ -z "$sanitizer" ]; then
  echo "gpu_sanitize: compute-sanitizer not found (PATH, /usr/local/cuda); install the CUDA toolkit's sanitizer"
  exit 2
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_sanitize: no GPU (nvidia-smi -L fails): the sanitizers need one"
  exit 2
fi

tests=$build/tests/levelhist_tests
if [ ! -x "$tests" ]; then
  echo "gpu_sanitize: building $build (sm_$arch)..."
  if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLEVELHIST_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      >"$out/configure.log" 2>&1 ||
     ! cmake --build "$build" --target levelhist_tests -j"$(nproc)" >"$out/build.log" 2>&1; then
    echo "gpu_sanitize: the build failed; the end of its log:"
    tail -30 "$out/configure.log" "$out/build.log" 2>/dev/null
    exit 2
  fi
fi
"$sanitizer" --version | tail -1

# One tool: the sanitizer's report goes to <tool>.log, the tests' output to <tool>.tests.log.
run_tool() {
  local tool=$1 start end rc
  local -a extra=()
  # racecheck: report each hazard (not only the analysis summary) so the log names the code.
  [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  local -a cmd=("$sanitizer" --tool "$tool" "${extra[@]}" --print-limit 50 --log-file "$out/$tool.log"
                "$tests" --gtest_filter="$filter" --gtest_color=no)
  printf '%s\n' "${cmd[*]}" >"$out/$tool.command"
  start=$(date +%s)
  timeout "$timeout_s" "${cmd[@]}" >"$out/$tool.tests.log" 2>&1
  rc=$?
  end=$(date +%s)
  echo "$rc $((end - start))" >"$out/$tool.status"
}

if [ "${PARALLEL:-0}" = 1 ]; then
  for tool in $tools; do run_tool "$tool" & done
  wait
else
  for tool in $tools; do run_tool "$tool"; done
fi

status=0
echo
printf '%-10s %-8s %-24s %-8s %s\n' tool errors tests time command
for tool in $tools; do
  read -r rc seconds <"$out/$tool.status"
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$out/$tool.log" 2>/dev/null | tail -1 | grep -Eo '[0-9]+$')
  ran=$(grep -Eo '^\[==========\] [0-9]+ tests? from .* ran' "$out/$tool.tests.log" | grep -Eo '[0-9]+' | head -1)
  passed=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$out/$tool.tests.log" | grep -Eo '[0-9]+$')
  failed=$(grep -Eo '^\[  FAILED  \] [0-9]+ tests?, listed' "$out/$tool.tests.log" | grep -Eo '[0-9]+' | head -1)
  skipped=$(grep -Eo '^\[  SKIPPED \] [0-9]+' "$out/$tool.tests.log" | grep -Eo '[0-9]+$')
  # racecheck (with --racecheck-report all) ends with "RACECHECK SUMMARY: N
  # hazards displayed (E errors, W warnings)" and no ERROR SUMMARY line.
  if [ -z "$errors" ]; then
    errors=$(grep -Eo 'RACECHECK SUMMARY: .*\(([0-9]+) errors' "$out/$tool.log" 2>/dev/null | tail -1 |
      grep -Eo '\(([0-9]+) errors' | grep -Eo '[0-9]+')
  fi
  note=""
  if [ "$rc" = 124 ]; then note="TIMED OUT after ${timeout_s}s"; fi
  if [ -z "$errors" ]; then errors="?"; note="${note:-no ERROR SUMMARY: the tool did not finish (exit $rc)}"; fi
  tests_text="${passed:-0}/${ran:-?} passed"
  [ -n "$failed" ] && tests_text="$tests_text, $failed FAILED"
  [ -n "$skipped" ] && tests_text="$tests_text, $skipped skipped"
  printf '%-10s %-8s %-24s %-8s %s\n' "$tool" "$errors" "$tests_text" "${seconds}s" "$(cat "$out/$tool.command")"
  [ -n "$note" ] && echo "           $note"
  racecheck_summary=$(grep -E 'RACECHECK SUMMARY' "$out/$tool.log" 2>/dev/null | tail -1)
  [ -n "$racecheck_summary" ] && echo "           ${racecheck_summary#========= }"
  if [ "$errors" != 0 ] || [ -n "$failed" ] || [ -z "$ran" ] || [ "${passed:-0}" != "${ran:-x}" ] || [ -n "$note" ]; then
    status=1
  fi
  if [ -n "$skipped" ]; then
    echo "           the slice skipped tests (no GPU seen by the tests?): $(grep -m1 -A1 'SKIPPED\|Skipped' "$out/$tool.tests.log" | tail -1)"
    status=1
  fi
done

# The first reports of each tool that found something, to start from.
for tool in $tools; do
  if grep -qE 'ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: .*\([1-9][0-9]* errors' "$out/$tool.log" 2>/dev/null; then
    echo
    echo "== $tool: the first reports ($out/$tool.log has them all)"
    grep -E '^=========  *(Invalid|Error|Race|Barrier|Uninitialized|Program hit|Warning|.*[Hh]azard|Malformed|Address|at |by thread)' \
      "$out/$tool.log" | head -40
  fi
  if grep -qE '^\[  FAILED  \]' "$out/$tool.tests.log"; then
    echo
    echo "== $tool: failed tests"
    grep -E '^\[  FAILED  \]|Failure$' "$out/$tool.tests.log" | head -20
  fi
done
echo
if [ $status -eq 0 ]; then echo "gpu_sanitize: every tool found 0 errors"; else echo "gpu_sanitize: FAILED (logs in $out)"; fi
exit $status
