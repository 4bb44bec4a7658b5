#!/usr/bin/env bash
# Builds the GPU programs here for the device machines (sm_90: H100, H200;
# their SASS only: with the PTX too, the pack of the tests and the benchmark
# was 56 MB against 32; the CLI adds 13, 45 MB in all) and packs them for the `device` tool's carry, so that a call there starts with
# the tests and benchmarks instead of a 4-minute build (about a seventh of a
# session's device time each time a machine starts).
#
#   scripts/device_pack.sh [TARGET...]   (default: levelhist_tests levelhist_bench levelhist_cli;
#   the CLI for the tests that run it, CliDevices among the GPU ones)
#
# Writes .devcarry/programs.tar.xz (the programs, stripped, at their places in
# a build tree, and the shared libraries they need that the device machine
# lacks, under lib/) and .devcarry/tree.txt (the commit and whether the tree
# had changes: the device's own `git log` shows a stale HEAD). Then, with carry
# [".devcarry"] (and ".devbuild" where a step builds there too):
#   scripts/device_check.sh unpack test bench ...
# unpacks it into build-device/ and runs the steps on those programs.
# Environment: PACK_BUILD_DIR (default build-sm90, kept between packs so a
# pack rebuilds only what changed); PACK_SKIP_BUILD=1 packs what that directory
# already holds (device_check.sh's pack step: a build on the device machine,
# 16 cores against this machine's 2, comes back as the carry of later calls);
# PACK_OUT (default .devcarry) the directory the pack is written to.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PACK_BUILD_DIR:-build-sm90}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(levelhist_tests levelhist_bench levelhist_cli)

pack_out=${PACK_OUT:-.devcarry}
if [ "${PACK_SKIP_BUILD:-0}" != 1 ]; then
  # A source edited while the build runs can be compiled from its old text and
  # still leave an object newer than the edit, so that the next build keeps it:
  # such a pack once ran a kernel without the change it was meant to measure.
  started=$(mktemp)
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real >/dev/null
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
  edited=$(find CMakeLists.txt src include tests bench tools lab -newer "$started" -type f 2>/dev/null | head -5)
  rm -f "$started"
  if [ -n "$edited" ]; then
    echo "device_pack: sources changed during the build (e.g. $(echo "$edited" | tr '\n' ' ')); touch them and pack again" >&2
    exit 1
  fi
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
for target in "${targets[@]}"; do
  case "$target" in
    levelhist_tests) file=tests/levelhist_tests ;;
    levelhist_bench) file=levelhist-bench ;;
    levelhist_cli) file=levelhist ;;
    *) file=$(cd "$build" && find . -type f -perm -u+x -name "$target" | head -1) ;;
  esac
  [ -n "$file" ] && [ -f "$build/$file" ] || { echo "device_pack: no program built for target $target in $build" >&2; exit 1; }
  mkdir -p "$stage/$(dirname "$file")"
  strip -o "$stage/$file" "$build/$file"
  # The libraries the device machine may lack: all but the C and C++ runtimes
  # and the driver, which must be the device's own.
  ldd "$build/$file" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libgcc_s.so* | libstdc++.so* | libcuda.so*) ;;
      *) cp -L "$lib" "$stage/lib/" ;;
    esac
  done
done

mkdir -p "$pack_out"
tar -C "$stage" -cJf "$pack_out/programs.tar.xz" .
{
  echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) from commit $(git rev-parse HEAD)"
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo "with uncommitted changes to tracked files"; fi
  echo "targets: ${targets[*]}"
} >"$pack_out/tree.txt"
cat "$pack_out/tree.txt"
ls -l "$pack_out/programs.tar.xz"
size=$(stat -c %s "$pack_out/programs.tar.xz")
if [ "$size" -gt $((60 * 1024 * 1024)) ]; then
  echo "device_pack: the pack is $((size >> 20)) MiB, near the carry's 64 MiB: pack fewer targets" >&2
  exit 1
fi
