#!/usr/bin/env python3
"""Weighted sums of numpy arrays on the CPU: cpu_serial (one thread, the
reference) against cpu_parallel on 1 and on every thread, levelhist.histogram's
own choice, and numpy.histogram (docs/BENCHMARKS.md, "Weighted sums on the CPU").

    PYTHONPATH=build/python python3 python/bench/bench_cpu_weighted.py [--n 1e7] [--bins 1024]

Prints best and median milliseconds of --runs calls, float32 samples uniform in
[0, 1) with float32 weights, and the largest relative difference between the
strategies' sums and against numpy's. The strategy and threads are set through
the module's internal _api._count_host (the public functions choose them).
"""
import argparse
import os
import statistics
import time

import numpy as np

import levelhist
from levelhist import _api, _edges


def timed(f, runs):
    f()
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t) * 1e3, statistics.median(t) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=float, default=1e7)
    p.add_argument("--bins", type=int, default=1024)
    p.add_argument("--runs", type=int, default=7)
    a = p.parse_args()
    n = int(a.n)
    rng = np.random.default_rng(1)
    x = rng.random(n, dtype=np.float32)
    w = rng.random(n, dtype=np.float32)
    axis = _edges.uniform_axis(np.dtype(np.float32), a.bins, (0, 1), n, None)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    sums = {}
    print(f"# n = {n:.3g}, {a.bins} bins, {cores} cores, levelhist {levelhist.__version__}, numpy {np.__version__}")
    print("| method | best ms | median ms |")
    print("|---|---:|---:|")
    for strategy, threads in (("cpu_serial", 1), ("cpu_parallel", 1), ("cpu_parallel", cores)):
        def run():
            return _api._count_host(axis, x, w, backend="cpu", strategy=strategy, threads=threads)
        best, median = timed(run, a.runs)
        sums[(strategy, threads)] = run()
        print(f"| {strategy}, {threads} thread{'s' if threads > 1 else ''} | {best:.1f} | {median:.1f} |")
    best, median = timed(lambda: levelhist.histogram(x, a.bins, (0, 1), weights=w), a.runs)
    print(f"| levelhist.histogram(weights=) | {best:.1f} | {median:.1f} |")
    best, median = timed(lambda: np.histogram(x, a.bins, (0, 1), weights=w), max(1, a.runs // 2))
    print(f"| numpy.histogram(weights=) | {best:.1f} | {median:.1f} |")
    ref = sums[("cpu_serial", 1)]
    for key, s in sums.items():
        diff = float(np.max(np.abs(s - ref) / np.maximum(np.abs(ref), 1e-300)))
        print(f"# {key[0]}, {key[1]} threads against cpu_serial: largest relative difference {diff:.3g}")
    h, _ = levelhist.histogram(x, a.bins, (0, 1), weights=w)
    hn, _ = np.histogram(x, a.bins, (0, 1), weights=w)
    print(f"# against numpy's sums (float32): largest relative difference "
          f"{float(np.max(np.abs(h - hn) / np.maximum(np.abs(hn), 1e-300))):.3g}")


if __name__ == "__main__":
    main()
