#!/usr/bin/env bash
# Times `levelhist count` reading a page-cached file, as a file argument and
# from a pipe, against `cat` reading the same file the same way; the rounds
# interleave the commands so that a slow moment of the machine hits all alike.
#
#   scripts/bench_read_paths.sh FILE ROUNDS LEVELHIST [LEVELHIST...] [-- COUNT_ARGS...]
#
# Each LEVELHIST is a CLI binary (e.g. one built from an older commit and one
# from this tree). COUNT_ARGS go to every `count` (default: --backend cpu).
# Prints, per command, the best and the median wall time of ROUNDS runs and
# the best rate in GB/s (10^9 bytes per second), and the load average before
# and after (on a shared machine, other work on the CPUs slows every command). The file is read once before
# every command, so that it is in the page cache when timed.
#
# How the file came into the page cache matters to a mapped reader: a file
# read from storage sits in large folios (readahead), one just written in
# 4 KiB pages, and the mapped count (the CLI's CPU path) of a just-written
# 1 GiB file took 0.137 s against 0.084 s read back, where `cat` took 0.115
# and 0.096 (docs/BENCHMARKS.md, "Files and pipes on the CPU path"). READ_BACK=1
# first drops the file from the page cache (dd iflag=nocache) and reads it
# back, as a file read from storage; unset, the file is timed as it is.
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 FILE ROUNDS LEVELHIST [LEVELHIST...] [-- COUNT_ARGS...]" >&2
  exit 2
fi
file=$1
rounds=$2
shift 2
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  bins+=("$1")
  shift
done
[ $# -gt 0 ] && shift
count_args=("$@")
[ ${#count_args[@]} -eq 0 ] && count_args=(--backend cpu)

bytes=$(stat -c %s "$file")
cache_state="as it was"
if [ "${READ_BACK:-0}" = 1 ]; then
  sync "$file"
  dd if="$file" iflag=nocache count=0 status=none  # drops its clean pages
  cat "$file" > /dev/null
  cache_state="dropped and read back (READ_BACK=1)"
fi
commands=("cat FILE > /dev/null" "cat FILE | cat > /dev/null")
for b in "${bins[@]}"; do
  commands+=("$b count ${count_args[*]} FILE > /dev/null" "cat FILE | $b count ${count_args[*]} > /dev/null")
done

run() {  # the command with index $1, once
  local i=$1
  if [ "$i" -eq 0 ]; then cat "$file" > /dev/null
  elif [ "$i" -eq 1 ]; then cat "$file" | cat > /dev/null
  else
    local b=${bins[$(((i - 2) / 2))]}
    if [ $(((i - 2) % 2)) -eq 0 ]; then "$b" count "${count_args[@]}" "$file" > /dev/null
    else cat "$file" | "$b" count "${count_args[@]}" > /dev/null
    fi
  fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A times
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < ${#commands[@]}; i++)); do
    cat "$file" > /dev/null  # in the page cache
    start=$(date +%s.%N)
    run "$i"
    end=$(date +%s.%N)
    times[$i]+="$(echo "$end - $start" | bc) "
  done
done

echo "file: $file ($bytes bytes; page cache: $cache_state); $rounds rounds, commands interleaved; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load average (1, 5, 15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-90s %9s %9s %9s\n' "command" "best s" "median s" "GB/s"
for ((i = 0; i < ${#commands[@]}; i++)); do
  sorted=$(tr ' ' '\n' <<< "${times[$i]}" | grep -v '^$' | sort -g)
  best=$(sed -n 1p <<< "$sorted")  # not `| head -1`: the writer's SIGPIPE would end the script (pipefail)
  median=$(sed -n "$(((rounds + 1) / 2))p" <<< "$sorted")
  rate=$(echo "scale=2; $bytes / $best / 1000000000" | bc)
  printf '%-90s %9.3f %9.3f %9s\n' "${commands[$i]}" "$best" "$median" "$rate"
done
