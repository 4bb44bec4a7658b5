#!/usr/bin/env bash
# A program outside the tree (tests/install_consumer) built three ways and run:
# against the package installed from BUILD (find_package(levelhist CONFIG)),
# with pkg-config levelhist, and with the source tree as a CMake subproject.
#   scripts/check_install.sh [BUILD]     BUILD: a configured and built tree (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/levelhist-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
echo "check_install: installed into a temporary prefix: $(cd "$prefix" && find . -type f | wc -l) files"
# With the CLI: its bash completion, and its man page where help2man made one.
if [ -x "$build/levelhist" ]; then
  test -f "$prefix/share/bash-completion/completions/levelhist" ||
    { echo "check_install: the bash completion was not installed" >&2; exit 1; }
  if [ -f "$build/levelhist.1" ]; then
    test -f "$prefix/share/man/man1/levelhist.1" || { echo "check_install: levelhist.1 was not installed" >&2; exit 1; }
    echo "check_install: man page and bash completion installed"
  else
    echo "check_install: bash completion installed (no man page: help2man was not found)"
  fi
fi

cmake -S tests/install_consumer -B "$work/find_package" -DCMAKE_PREFIX_PATH="$prefix" >"$work/fp.log" 2>&1 ||
  { cat "$work/fp.log"; exit 1; }
cmake --build "$work/find_package" >>"$work/fp.log" 2>&1 || { cat "$work/fp.log"; exit 1; }
echo -n "check_install: find_package(levelhist CONFIG): "
"$work/find_package/consumer"

libdir=$(cd "$prefix" && dirname "$(find . -name levelhist.pc | head -1)")
echo -n "check_install: pkg-config levelhist: "
# shellcheck disable=SC2046
c++ -std=c++20 tests/install_consumer/main.cpp $(PKG_CONFIG_PATH="$prefix/$libdir" pkg-config --cflags --libs levelhist) \
  -o "$work/consumer_pc"
"$work/consumer_pc"

echo -n "check_install: add_subdirectory (CPU-only): "
cmake -S tests/install_consumer -B "$work/subproject" -DLEVELHIST_SOURCE_DIR="$PWD" -DLEVELHIST_CUDA=OFF \
  >"$work/sub.log" 2>&1 || { cat "$work/sub.log"; exit 1; }
cmake --build "$work/subproject" -j"$(nproc)" >>"$work/sub.log" 2>&1 || { cat "$work/sub.log"; exit 1; }
"$work/subproject/consumer"
