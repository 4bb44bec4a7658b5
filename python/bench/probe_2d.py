"""One 2-D case alone, for a profiler: n/2 float32 points (x, y) into 100 x 100
bins over [0, 1)^2 through levelhist.histogramdd on a CUDA tensor, `calls`
times uniform then `calls` times constant (0.3, on an edge), each call
synchronized; launch k of the counting kernel is call k.

    ncu --kernel-name regex:joint_kernel --launch-skip 2 --launch-count 1 \\
        python3 python/bench/probe_2d.py [--n 4e8] [--calls 4]
"""
import argparse

import torch

import levelhist

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--n", type=float, default=4e8, help="samples (two a point)")
ap.add_argument("--calls", type=int, default=4)
a = ap.parse_args()
pts = torch.rand((int(a.n) // 2, 2), device="cuda", dtype=torch.float32)
for dist in ("uniform", "constant"):
    if dist == "constant":
        pts.fill_(0.3)
    for _ in range(a.calls):
        h, _ = levelhist.histogramdd(pts, 100, [(0, 1), (0, 1)])
        torch.cuda.synchronize()
    assert int(h.sum()) == pts.shape[0]
print("probe_2d: done")
