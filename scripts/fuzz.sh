#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets of fuzz/ with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer into build-fuzz/, and runs each for a while.
#
#   scripts/fuzz.sh [--seconds N] [--parallel P] [TARGET...]
#
# TARGET: pnm, png, args, count (default: all of them). Each runs N seconds
# (default 60) on build-fuzz/corpus/TARGET, a working copy that starts from
# fuzz/corpus/TARGET (never modified here) and keeps what libFuzzer finds
# between runs; P targets run at the same time (default 1). Prints one line per
# target (runs, coverage, corpus, peak memory, crashes: 0 or the file of the
# crashing input) and exits 1 when any target found something. Installs clang
# and libFuzzer (Debian's clang-14, libclang-rt-14-dev) when missing; the
# normal build does not need them. See docs/FUZZING.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
parallel=1
targets=()
all_targets=(pnm png jpeg tiff npy args count)
usage() {
  echo "usage: scripts/fuzz.sh [--seconds N] [--parallel P] [TARGET...]  (targets: ${all_targets[*]})" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
    --seconds=*) seconds=${1#*=}; shift ;;
    --parallel) [ $# -ge 2 ] || usage; parallel=$2; shift 2 ;;
    --parallel=*) parallel=${1#*=}; shift ;;
    -h|--help) usage ;;
    -*) echo "scripts/fuzz.sh: unknown option '$1'" >&2; usage ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "scripts/fuzz.sh: --seconds takes a positive whole number, not '$seconds'" >&2; exit 2; }
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || { echo "scripts/fuzz.sh: --parallel takes a positive whole number, not '$parallel'" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "scripts/fuzz.sh: unknown target '$t'" >&2; usage; }
done

# The build's packages, then clang with libFuzzer (same way as ensure_packages.sh).
scripts/ensure_packages.sh
missing=()
for p in clang-14 libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "levelhist: installing missing Debian packages for fuzzing: ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build=build-fuzz
jobs=$(nproc)
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEVELHIST_FUZZ=ON \
  -DLEVELHIST_CUDA=OFF -DLEVELHIST_PNG=ON -DLEVELHIST_JPEG=ON -DLEVELHIST_TIFF=ON -DLEVELHIST_TESTS=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null

# What a sanitizer finds stops the target at once, with a stack trace.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# fuzz_count's temporary directory (fixed input files, plots).
mkdir -p "$build/tmp"
export TMPDIR=$PWD/$build/tmp

run_target() {
  local t=$1
  local corpus=$build/corpus/$t findings=$build/findings/$t log=$build/logs/$t.log
  mkdir -p "$corpus" "$findings" "$build/logs"
  cp -n fuzz/corpus/"$t"/* "$corpus"/
  local status=0
  "$build/fuzz/fuzz_$t" -dict="fuzz/$t.dict" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=5 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" >"$log" 2>&1 || status=$?
  # libFuzzer's last status line: coverage and the corpus it holds (inputs/bytes).
  local runs cov corp rss crash
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | awk '{print $2 " edges, " $4 " features"}')
  corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  if [ "$status" -ne 0 ] && [ -z "$crash" ]; then crash="exit status $status, see $log"; fi
  printf 'fuzz_%-6s %5ss  runs %-10s coverage %-28s corpus %-10s peak %5s MB  crashes %s\n' \
    "$t" "$seconds" "${runs:-?}" "${cov:-?}" "${corp:-?}" "${rss:-?}" "${crash:-0}"
  [ -z "$crash" ] && return 0
  # The finding itself, so that a log is enough where the machine is gone (CI):
  # the report from its first line (a sanitizer's, libFuzzer's or the target's
  # own "levelhist fuzz finding") and the input as libFuzzer wrote it out.
  {
    echo "---- fuzz_$t: the finding ($log)"
    sed -n '/^==[0-9]*==\|^WARNING: [A-Za-z]*Sanitizer\|^levelhist fuzz finding\|runtime error:\|^ERROR: libFuzzer\|^terminate called/,$p' "$log" |
      grep -v '^\(#[0-9]*\t\|INFO:\|stat::\|Base64:\)' | head -50
    grep '^Base64: ' "$log" | tail -1
    echo "---- end of fuzz_$t's finding"
  } >&2
  return 1
}

failed=0
pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$parallel" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
if [ "$failed" -ne 0 ]; then
  echo "scripts/fuzz.sh: a target found a crash; reproduce with build-fuzz/fuzz/fuzz_TARGET FILE (logs in $build/logs/)" >&2
  exit 1
fi
