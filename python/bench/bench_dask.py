#!/usr/bin/env python3
"""levelhist.dask.histogram on local Dask workers (docs/PYTHON.md).

    PYTHONPATH=build/python python3 python/bench/bench_dask.py                  # 4 GiB, 1 and 2 workers
    PYTHONPATH=build/python python3 python/bench/bench_dask.py --gib 1 --workers 1 2 4
    PYTHONPATH=build/python:<dask-histogram's site> python3 python/bench/bench_dask.py --workers 1 2 4 8 --no-dask-array

4 GiB of uniform float32 samples in 128 MiB chunks, held by the workers
(persisted before timing), counted into 1024 bins over [0, 1): wall time,
median of --runs runs, for levelhist.dask.histogram on a LocalCluster of each
worker count (one thread per worker process; levelhist uses the cores it
finds for each chunk), against the same samples counted in this single process
by levelhist (CPU backend) and numpy.histogram, and against
dask.array.histogram and dask-histogram (boost-histogram) where installed.
The goal: levelhist.dask on 2 workers within 1.3x of single-process
levelhist. Every result is checked equal to the single-process counts.
"""
import argparse
import itertools
import statistics
import sys
import time

import numpy as np

BINS = 1024


def wall(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


_calls = itertools.count()


def fresh(x):
    """x under a graph of its own (an identity task per chunk): each timed call
    then counts the data, where Dask could hand back results of keys it still
    holds from the call before (dask 2025.3 did, in 10 ms for 2 GiB)."""
    return x.map_blocks(lambda b: b, dtype=x.dtype, name=f"fresh-{next(_calls)}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=4.0)
    p.add_argument("--chunk-mib", type=int, default=128)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--no-dask-array", action="store_true",
                   help="leave out dask.array.histogram (numpy per chunk, the slowest by far)")
    a = p.parse_args()
    try:
        import dask.array as da
        import distributed
    except ImportError:
        print("bench_dask: needs dask[distributed] (pip install 'dask[distributed]')")
        return 2
    import levelhist
    import levelhist.dask

    n = int(a.gib * (1 << 30)) // 4
    chunk = a.chunk_mib * (1 << 20) // 4
    print(f"# {n:,} float32 samples ({a.gib:g} GiB) in chunks of {a.chunk_mib} MiB, {BINS} bins over [0, 1)")
    rows = []
    single = {}

    def time_single_process(x_np):
        h = levelhist.Histogram(BINS, (0, 1), dtype=np.float32, backend="cpu")
        single["time"] = wall(lambda: h.reset().fill(x_np), a.runs)
        single["counts"] = h.counts
        rows.append(("levelhist, one process (CPU backend)", single["time"]))
        t_auto = wall(lambda: levelhist.histogram(x_np, BINS, (0, 1)), a.runs)
        rows.append(("levelhist.histogram, one process (automatic backend)", t_auto))
        t_numpy = wall(lambda: np.histogram(x_np[: n // 8], BINS, (0, 1)), 1) * 8
        rows.append(("numpy.histogram, one process (1/8 of the samples, x8)", t_numpy))

    try:
        from dask_histogram.routines import histogram as dh_histogram
    except ImportError:
        dh_histogram = None

    goal = None
    for workers in a.workers:
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            # The samples are made on the workers (the same ones for every cluster) and held there.
            x = da.random.default_rng(5).random(n, dtype=np.float32, chunks=chunk)
            x = client.persist(x)
            distributed.wait(x)
            if not single:
                time_single_process(x.compute())
            t = wall(lambda: levelhist.dask.histogram(fresh(x), BINS, (0, 1))[0].compute(), a.runs)
            got = levelhist.dask.histogram(x, BINS, (0, 1))[0].compute()
            assert np.array_equal(got, single["counts"]), "levelhist.dask differs from one process"
            rows.append((f"levelhist.dask.histogram, {workers} worker(s)", t))
            if workers == 2:
                goal = t / single["time"]
            if not a.no_dask_array:
                td = wall(lambda: da.histogram(fresh(x), BINS, (0, 1))[0].compute(), max(1, a.runs // 2))
                rows.append((f"dask.array.histogram (numpy), {workers} worker(s)", td))
            if dh_histogram is not None:
                tb = wall(lambda: dh_histogram(fresh(x), bins=BINS, range=(0, 1))[0].compute(), max(1, a.runs // 2))
                same = np.array_equal(np.asarray(dh_histogram(x, bins=BINS, range=(0, 1))[0].compute()), single["counts"])
                rows.append((f"dask-histogram (boost-histogram), {workers} worker(s){'' if same else ', counts differ'}",
                             tb))
            x = None

    print()
    print(f"| {'method':<58} | {'seconds':>8} | {'GB/s':>6} | {'vs one process':>14} |")
    print(f"|{'-' * 60}|{'-' * 10}|{'-' * 8}|{'-' * 16}|")
    for name, t in rows:
        print(f"| {name:<58} | {t:8.3f} | {n * 4 / t / 1e9:6.1f} | {t / single['time']:13.2f}x |")
    if dh_histogram is None:
        print("\n(dask-histogram is not installed: pip install dask-histogram to compare with it)")
    if goal is not None:
        print(f"\ngoal: levelhist.dask on 2 workers within 1.3x of one process: {goal:.2f}x "
              f"({'MET' if goal <= 1.3 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
