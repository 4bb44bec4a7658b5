"""Where the host's time goes in levelhist's Python calls on GPU arrays:
cProfile over many calls of the 1000-sample histogram and of histogramdd on
2-D points (the host's side only: the GPU's work is asynchronous), the
functions with the most time of their own first.

    PYTHONPATH=build/python python3 python/bench/profile_calls.py [--calls 3000] [--top 25]
"""
import argparse
import cProfile
import pstats

import torch

import levelhist


def profile(what, fn, calls, top):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    p = cProfile.Profile()
    p.enable()
    for _ in range(calls):
        fn()
    p.disable()
    torch.cuda.synchronize()
    print(f"== {what}: {calls} calls")
    pstats.Stats(p).sort_stats("tottime").print_stats(top)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    xs = torch.rand(1000, device="cuda", dtype=torch.float32)
    profile("levelhist.histogram(1000 f32, 1024, (0, 1))", lambda: levelhist.histogram(xs, 1024, (0, 1)), a.calls,
            a.top)
    pts = torch.rand((1000, 2), device="cuda", dtype=torch.float32)
    profile("levelhist.histogramdd(1000 2-D points, 100, [(0, 1), (0, 1)])",
            lambda: levelhist.histogramdd(pts, 100, [(0, 1), (0, 1)]), a.calls // 3, a.top)


if __name__ == "__main__":
    main()
