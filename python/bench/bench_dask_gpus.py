#!/usr/bin/env python3
"""levelhist.dask.histogram with one Dask worker per GPU (docs/PYTHON.md).

    PYTHONPATH=build/python python3 python/bench/bench_dask_gpus.py --gib 8 --gpus 1 2 4

Starts a scheduler in this process and, for each count of GPUs, that many
worker processes (`dask worker`, one thread, no nanny), worker k seeing only
GPU k (CUDA_VISIBLE_DEVICES) and no host-memory limit. The samples are made on the workers as CuPy
chunks (uniform float32, each chunk from its own seed, so every worker count
counts the same bytes) and persisted before timing; levelhist.dask.histogram
then counts each chunk on the GPU that holds it, 1024 bins over [0, 1). Wall
time, median of --runs runs; aggregate GB/s against N times the one-GPU
rate. Every worker count's counts must equal the one-GPU counts exactly and
sum to the number of samples.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

BINS = 1024


def make_chunk(block_info=None, chunk=0):
    import cupy as cp

    index = block_info[None]["chunk-location"][0]
    rng = cp.random.default_rng(1000 + index)
    return rng.random(chunk, dtype=cp.float32)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=8.0)
    p.add_argument("--chunk-mib", type=int, default=256)
    p.add_argument("--gpus", type=int, nargs="+", default=[1, 2])
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    try:
        import cupy  # noqa: F401
        import dask.array as da
        import distributed
    except ImportError as e:
        print(f"bench_dask_gpus: needs CuPy and dask[distributed] ({e})")
        return 2
    import levelhist.dask

    chunk = a.chunk_mib * (1 << 20) // 4
    chunks = max(1, int(a.gib * (1 << 30)) // (chunk * 4))
    n = chunks * chunk
    nbytes = n * 4
    print(f"# {n:,} float32 samples ({nbytes / 2**30:g} GiB) in {chunks} CuPy chunks of {a.chunk_mib} MiB, "
          f"{BINS} bins over [0, 1), one worker per GPU")
    # The same chunks counted in this process on one GPU, one call each: what a
    # worker's tasks cost without Dask.
    import cupy as cp
    import levelhist

    one = make_chunk({None: {"chunk-location": (0,)}}, chunk=chunk)
    levelhist.histogram(one, BINS, (0, 1))
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(chunks):
        levelhist.histogram(one, BINS, (0, 1))
    cp.cuda.Device().synchronize()
    direct = time.perf_counter() - t0
    print(f"one process, one GPU, levelhist.histogram on a {a.chunk_mib} MiB CuPy chunk x {chunks}: "
          f"{direct * 1e3:.1f} ms, {nbytes / direct / 1e9:.1f} GB/s")
    del one
    env_base = dict(os.environ)
    rows, reference, one_gpu_rate, status = [], None, None, 0
    for gpus in a.gpus:
        with distributed.LocalCluster(n_workers=0, dashboard_address=None) as cluster:
            workers = []
            try:
                for k in range(gpus):
                    env = dict(env_base, CUDA_VISIBLE_DEVICES=str(k))
                    workers.append(subprocess.Popen(
                        [sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                         "--nthreads", "1", "--no-nanny", "--name", f"gpu{k}", "--no-dashboard",
                         # No host-memory limit: the chunks are device memory, which a
                         # limit on the worker's host memory would spill to disk (as
                         # dask-cuda's workers do it).
                         "--memory-limit", "0"],
                        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                with distributed.Client(cluster) as client:
                    client.wait_for_workers(gpus, timeout=120)
                    x = da.map_blocks(make_chunk, chunk=chunk, chunks=((chunk,) * chunks,), dtype=np.float32,
                                      meta=cupy.empty((0,), dtype=cupy.float32))
                    x = x.persist()
                    distributed.wait(x)
                    placed = client.who_has(x)
                    holders = {w for ws in placed.values() for w in ws}

                    def run():
                        hist, _ = levelhist.dask.histogram(x, bins=BINS, range=(0, 1))
                        return hist.compute()

                    got = run()
                    got = got.get() if hasattr(got, "get") else np.asarray(got)
                    times = []
                    for _ in range(a.runs):
                        t0 = time.perf_counter()
                        run()
                        times.append(time.perf_counter() - t0)
                    seconds = statistics.median(times)
                    # Where one run's time goes: task time by kind and action.
                    with distributed.get_task_stream(client) as ts:
                        run()
                    spent = {}
                    for task in ts.data:
                        key = task["key"]
                        prefix = (key[0] if isinstance(key, tuple) else str(key)).rsplit("-", 1)[0]
                        for ss in task.get("startstops", []):
                            k = (prefix, ss["action"])
                            spent[k] = spent.get(k, 0.0) + ss["stop"] - ss["start"]
                    print(f"{gpus} GPU(s), one run's task time: " +
                          ", ".join(f"{p} {act} {t * 1e3:.1f} ms" for (p, act), t in sorted(spent.items())))
            finally:
                for w in workers:
                    w.terminate()
                for w in workers:
                    try:
                        w.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        w.kill()
        ok = int(got.sum()) == n and (reference is None or np.array_equal(got, reference))
        if reference is None:
            reference = got
        if not ok:
            status = 1
        rate = nbytes / seconds / 1e9
        if one_gpu_rate is None and gpus == a.gpus[0]:
            one_gpu_rate = rate / gpus
        rows.append((gpus, len(holders), seconds * 1e3, rate, rate / (one_gpu_rate * gpus), ok))
    print("\n| GPUs (workers) | chunks held by | ms per histogram | GB/s | / (N x one GPU) | counts |")
    print("|---:|---:|---:|---:|---:|---|")
    for gpus, holders, ms, rate, scale, ok in rows:
        print(f"| {gpus} | {holders} workers | {ms:.1f} | {rate:.1f} | {scale:.2f} | "
              f"{'equal to one GPU, sum n' if ok else 'MISMATCH'} |")
    return status


if __name__ == "__main__":
    sys.exit(main())
