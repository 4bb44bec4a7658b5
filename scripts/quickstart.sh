#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build levelhist (with the CUDA
# backend when nvcc is present), and run the main job on a built-in input: the
# byte histogram of the coins photograph (as in Wilt part 1, Figure 2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure_packages.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "built build/levelhist ($(build/levelhist --version))"
build/levelhist count bench/data/coins.pgm
