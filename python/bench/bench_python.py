#!/usr/bin/env python3
"""levelhist from Python against torch and CuPy, on one GPU (docs/PYTHON.md).

    PYTHONPATH=build/python python3 python/bench/bench_python.py            # 10^9 float32 samples
    PYTHONPATH=build/python python3 python/bench/bench_python.py --n 1e8    # smaller

Times, as the median of --runs runs after a warm-up, with CUDA events on the
stream the call runs on:
  * 10^9 float32 samples into 1024 bins over [0, 1), uniform and constant:
    levelhist on a torch CUDA tensor and on a CuPy array (the same memory),
    torch.histc, cupy.histogram, and the streaming-read limit of the same bytes
    (the faster of torch's x.sum() and a plain kernel of 16-byte loads built
    through CuPy: on an H100 torch's sums of some of these buffers read at
    2508-2546 GB/s where the C++ benchmark's plain read reads about 3000);
  * weighted sums (float32 samples + float32 weights, 1024 bins): levelhist,
    torch.bincount(indices, weights) on indices computed beforehand (its best
    case), and the read limit of samples + weights;
  * host memory: levelhist on a numpy array (staged to the GPU; and the CPU
    backend alone), wall clock;
  * 2-D: n / 2 float32 points into 100 x 100 bins (uniform, constant):
    levelhist.histogramdd on a torch tensor, cupy.histogramdd, the read limit;
  * 1000 samples per call: microseconds per call from Python (many calls,
    then one synchronisation) for levelhist, torch.histc and cupy.histogram.
It prints one table with the ratios and checks the goals: f32/1024 at >= 0.85
of the read limit (uniform and constant); weighted at >= 0.75 of the read
limit and >= 3x torch.bincount; 2-D at >= 0.80 of the read limit; 1000
samples in <= 10 us per call. The exit
status is 0 whether or not a goal is met (the table says which).
"""
import argparse
import statistics
import sys
import time

import numpy as np

import levelhist

BINS = 1024

# The read limit as a plain kernel: every 16-byte vector of the buffer loaded
# once, four loads in flight a thread, nothing counted (the XOR and the
# never-taken store keep the loads).
_PLAIN_READ = r'''
extern "C" __global__ void plain_read(const uint4* __restrict__ p, unsigned long long vectors, unsigned int* sink) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int acc = 0;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    const uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < vectors; i += stride) {
    const uint4 a = p[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}
'''


def make_plain_read(cupy):
    """A function that reads CuPy arrays' bytes with _PLAIN_READ (16-byte
    aligned arrays; a tail of fewer than 16 bytes is not read), or None and why
    not."""
    try:
        kernel = cupy.RawKernel(_PLAIN_READ, "plain_read")
        blocks = cupy.cuda.Device().attributes["MultiProcessorCount"] * 8
        sink = cupy.zeros(1, dtype=cupy.uint32)

        def read(*arrays):
            for arr in arrays:
                kernel((blocks,), (256,), (arr, cupy.uint64(arr.nbytes // 16), sink))

        read(cupy.zeros(64, dtype=cupy.uint8))
        cupy.cuda.Device().synchronize()
        return read, ""
    except Exception as e:  # reported in the output; the limit is then torch's sum alone
        return None, f"{type(e).__name__}: {e}"


def median_ms(run, sync_event_pair, runs):
    """Median milliseconds of run(), timed with CUDA events (start, stop factories)."""
    run()  # warm-up: plans, workspaces, pools
    times = []
    for _ in range(runs):
        start, stop = sync_event_pair()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def wall_ms(run, runs):
    run()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def gbps(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=float, default=1e9, help="samples (default 1e9)")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--host-n", type=float, default=None, help="samples of the host-memory rows (default: --n / 4)")
    p.add_argument("--small-calls", type=int, default=3000, help="calls timed for the 1000-sample row")
    p.add_argument("--cases", default="f32,weighted,2d,host,small",
                   help="some of f32,weighted,2d,host,small (default: all; small: the 1000-sample rows, with the "
                   "call's parts apart)")
    p.add_argument("--small-only", action="store_true", help="the same as --cases small")
    a = p.parse_args()
    cases = {"small"} if a.small_only else set(a.cases.split(","))
    if not cases or not cases <= {"f32", "weighted", "2d", "host", "small"}:
        p.error(f"--cases: some of f32,weighted,2d,host,small, not {a.cases!r}")
    n = int(a.n)
    host_n = int(a.host_n or a.n / 4)

    try:
        import torch
    except ImportError:
        torch = None
    try:
        import cupy
    except ImportError:
        cupy = None
    ok, why = levelhist.cuda_available()
    if torch is None or not torch.cuda.is_available() or not ok:
        print(f"bench_python: needs torch with a CUDA device and a CUDA build of levelhist ({why or 'no torch GPU'})")
        return 2
    print(f"# {levelhist.describe_device()}")
    print(f"# levelhist {levelhist.__version__}, torch {torch.__version__}, "
          f"cupy {cupy.__version__ if cupy else 'absent'}, numpy {np.__version__}, n = {n:.3g}")
    plain_read, why_not = make_plain_read(cupy) if cupy is not None else (None, "CuPy absent")
    if plain_read is None:
        print(f"# the plain read kernel is not available ({why_not}): the read limit is torch's sum alone")

    def torch_events():
        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def cupy_time(run, runs):
        run()
        times = []
        for _ in range(runs):
            s, e = cupy.cuda.Event(), cupy.cuda.Event()
            s.record()
            run()
            e.record()
            e.synchronize()
            times.append(cupy.cuda.get_elapsed_time(s, e))
        return statistics.median(times)

    rows = []  # (case, method, ms, GB/s, ratio text)
    goals = []  # (goal, value, target, met)

    def add(case, method, ms, nbytes, ref_ms=None, ref_name=""):
        ratio = f"{ref_ms / ms:.2f} of {ref_name}" if ref_ms else ""
        rows.append((case, method, ms, gbps(nbytes, ms), ratio))

    def read_limit(case, torch_read, tensors, nbytes):
        """The read limit of the tensors' bytes: the faster of torch_read()
        (a torch reduction) and the plain read kernel, both in the table."""
        ms = median_ms(torch_read, torch_events, a.runs)
        add(case, "read: torch sum", ms, nbytes)
        if plain_read is not None:
            views = [cupy.from_dlpack(t) for t in tensors]
            plain = cupy_time(lambda: plain_read(*views), a.runs)
            add(case, "read: plain 16-byte loads", plain, nbytes)
            ms = min(ms, plain)
        return ms

    if cases - {"small"}:
        gen = torch.Generator(device="cuda").manual_seed(1)
        if "f32" in cases:
            for dist in ("uniform", "constant"):
                if dist == "uniform":
                    x = torch.rand(n, device="cuda", generator=gen, dtype=torch.float32)
                else:
                    x = torch.full((n,), 0.5, device="cuda", dtype=torch.float32)
                nbytes = n * 4
                read = read_limit(f"f32 {BINS} bins, {dist}", lambda: x.sum(), [x], nbytes)
                lh = median_ms(lambda: levelhist.histogram(x, BINS, (0, 1)), torch_events, a.runs)
                add(f"f32 {BINS} bins, {dist}", "levelhist (torch tensor)", lh, nbytes, read, "read limit")
                goals.append((f"f32/{BINS} {dist}: levelhist / read limit", read / lh, 0.85, read / lh >= 0.85))
                th = median_ms(lambda: torch.histc(x, BINS, 0, 1), torch_events, a.runs)
                add(f"f32 {BINS} bins, {dist}", "torch.histc", th, nbytes, read, "read limit")
                rows.append((f"f32 {BINS} bins, {dist}", "levelhist vs torch.histc", None, None, f"{th / lh:.2f}x"))
                if cupy is not None:
                    xc = cupy.from_dlpack(x)
                    lc = cupy_time(lambda: levelhist.histogram(xc, BINS, (0, 1)), a.runs)
                    add(f"f32 {BINS} bins, {dist}", "levelhist (CuPy array)", lc, nbytes, read, "read limit")
                    ch = cupy_time(lambda: cupy.histogram(xc, BINS, (0, 1)), a.runs)
                    add(f"f32 {BINS} bins, {dist}", "cupy.histogram", ch, nbytes, read, "read limit")
                    rows.append((f"f32 {BINS} bins, {dist}", "levelhist vs cupy.histogram", None, None,
                                 f"{ch / lc:.2f}x"))
                    xc = None
                # Exactness, once: the counts equal torch's where both define them.
                h, _ = levelhist.histogram(x, BINS, (0, 1))
                assert int(h.sum()) == int(((x >= 0) & (x <= 1)).sum()), "levelhist lost samples"
                x = None
                torch.cuda.empty_cache()

        # ---- weighted sums ----
        if "weighted" in cases:
            x = torch.rand(n, device="cuda", generator=gen, dtype=torch.float32)
            w = torch.rand(n, device="cuda", generator=gen, dtype=torch.float32)
            nbytes = n * 8
            read = read_limit("weighted f32 + f32 weights", lambda: (x.sum(), w.sum()), [x, w], nbytes)
            lw = median_ms(lambda: levelhist.histogram(x, BINS, (0, 1), weights=w), torch_events, a.runs)
            add("weighted f32 + f32 weights", "levelhist", lw, nbytes, read, "read limit")
            idx = (x * BINS).long().clamp_(0, BINS - 1)
            tb = median_ms(lambda: torch.bincount(idx, weights=w, minlength=BINS), torch_events, a.runs)
            add("weighted f32 + f32 weights", "torch.bincount(indices, weights)", tb, nbytes, read, "read limit")
            rows.append(("weighted f32 + f32 weights", "levelhist vs torch.bincount", None, None, f"{tb / lw:.2f}x"))
            goals.append(("weighted: levelhist / read limit", read / lw, 0.75, read / lw >= 0.75))
            goals.append(("weighted: torch.bincount time / levelhist time", tb / lw, 3.0, tb / lw >= 3.0))
            x = w = idx = None
            torch.cuda.empty_cache()

        # ---- 2-D: n / 2 float32 points (x, y) into 100 x 100 bins ----
        if "2d" in cases:
            pts = torch.rand((n // 2, 2), device="cuda", generator=gen, dtype=torch.float32)
            for dist in ("uniform", "constant"):
                if dist == "constant":
                    pts.fill_(0.3)
                case = f"2-D f32 100 x 100 bins, {dist}"
                nbytes = pts.numel() * 4
                read = read_limit(case, lambda: pts.sum(), [pts], nbytes)
                l2 = median_ms(lambda: levelhist.histogramdd(pts, 100, [(0, 1), (0, 1)]), torch_events, a.runs)
                add(case, "levelhist.histogramdd (torch tensor)", l2, nbytes, read, "read limit")
                # Where a call's time goes: the plan's launch alone (no Python), and
                # the host's time inside the call (no wait for the GPU after it).
                from levelhist import _api, _arrays, _nd
                entry = list(_nd._plans.values())[-1]
                out = torch.empty(entry.plan.slots, dtype=torch.int64, device="cuda")
                launch = _api._device_launch_args(_arrays.Torch, entry, 0, pts.shape[0])
                k2 = median_ms(lambda: entry.plan.run_points([pts.data_ptr()], pts.shape[0], out.data_ptr(), False,
                                                             *launch), torch_events, a.runs)
                add(case, "  its launch alone (Plan.run_points, no Python)", k2, nbytes, read, "read limit")
                host = []
                for _ in range(a.runs):
                    t0 = time.perf_counter()
                    levelhist.histogramdd(pts, 100, [(0, 1), (0, 1)])
                    host.append((time.perf_counter() - t0) * 1e3)
                    torch.cuda.synchronize()
                rows.append((case, "  the host's time inside the call (not waiting after it)", statistics.median(host),
                             None, ""))
                out = None
                goals.append((f"2-D {dist}: levelhist / read limit", read / l2, 0.80, read / l2 >= 0.80))
                if cupy is not None:
                    pc = cupy.from_dlpack(pts)
                    c2 = cupy_time(lambda: cupy.histogramdd(pc, 100, [(0, 1), (0, 1)]), max(3, a.runs // 2))
                    add(case, "cupy.histogramdd", c2, nbytes, read, "read limit")
                    pc = None
                h, _ = levelhist.histogramdd(pts, 100, [(0, 1), (0, 1)])
                assert int(h.sum()) == pts.shape[0], "levelhist lost points"
            pts = None
            torch.cuda.empty_cache()

        # ---- host memory ----
        if "host" in cases:
            xh = np.random.default_rng(2).random(host_n, dtype=np.float32)
            hb = host_n * 4
            auto_ms = wall_ms(lambda: levelhist.histogram(xh, BINS, (0, 1)), max(3, a.runs // 2))
            add(f"numpy f32 {host_n:.2g} samples (host)", "levelhist, automatic backend (staged to the GPU)", auto_ms,
                hb)
            hc = levelhist.Histogram(BINS, (0, 1), dtype=np.float32, backend="cpu")
            cpu_ms = wall_ms(lambda: hc.fill(xh), max(3, a.runs // 2))
            add(f"numpy f32 {host_n:.2g} samples (host)", "levelhist, CPU backend", cpu_ms, hb)
            np_n = min(host_n, 10**8)
            np_ms = wall_ms(lambda: np.histogram(xh[:np_n], BINS, (0, 1)), 1)
            rows.append((f"numpy f32 {host_n:.2g} samples (host)", f"numpy.histogram ({np_n:.2g} samples)", np_ms,
                         gbps(np_n * 4, np_ms), ""))
            xh = None

    # ---- 1000 samples per call ----
    if "small" in cases:
        calls = a.small_calls

        def per_call_us(fn, sync):
            for _ in range(50):
                fn()
            sync()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            return (time.perf_counter() - t0) / calls * 1e6

        xs = torch.rand(1000, device="cuda", dtype=torch.float32)
        tsync = torch.cuda.synchronize
        us_lh = per_call_us(lambda: levelhist.histogram(xs, BINS, (0, 1)), tsync)
        us_th = per_call_us(lambda: torch.histc(xs, BINS, 0, 1), tsync)
        # The fast path's parts, each alone (its internals: what a call costs where).
        from levelhist import _api, _arrays
        call = next(c for k, c in _api._fast_device_calls.items() if k[0] == "torch" and c is not None)
        stream = _arrays.Torch.stream(0)
        ws, ws_bytes = call.entry.workspace_pointer(_arrays.Torch, 0, stream, 1000)
        out = torch.empty(call.slots, dtype=torch.int64, device="cuda")
        parts = [
            ("the stream query", lambda: _arrays.Torch.stream(0)),
            ("the workspace lookup", lambda: call.entry.workspace_pointer(_arrays.Torch, 0, stream, 1000)),
            ("a result made ahead (_next_result)", lambda: _api._next_result(call, stream)),
            ("Plan.run alone (one launch)", lambda: call.entry.plan.run(xs.data_ptr(), 1000, 0, out.data_ptr(), False,
                                                                         ws, ws_bytes, stream)),
            ("Plan.run, n = 0 (the binding and a cudaMemsetAsync)",
             lambda: call.entry.plan.run(xs.data_ptr(), 0, 0, out.data_ptr(), False, ws, ws_bytes, stream)),
            ("for reference: torch.empty of the slots", lambda: torch.empty(call.slots, dtype=torch.int64,
                                                                           device="cuda")),
            ("for reference: the edges' clone", lambda: call.edges.clone()),
        ]
        def made_each_call():  # the fast path before results were made ahead, for comparison in the same run
            o = torch.empty(call.slots, dtype=torch.int64, device="cuda")
            call.entry.plan.run(xs.data_ptr(), 1000, 0, o.data_ptr(), False, ws, ws_bytes,
                                _arrays.Torch.stream(0))
            return o[:BINS], call.edges.clone()

        parts.append(("the same call, output and edges made each call (as before)", made_each_call))
        for what, fn in parts:
            rows.append(("1000 samples per call", f"  part: {what}", per_call_us(fn, tsync) / 1e3, None, "us per call"))
        rows.append(("1000 samples per call", "levelhist (torch tensor)", us_lh / 1e3, None, "us per call"))
        rows.append(("1000 samples per call", "torch.histc", us_th / 1e3, None, "us per call"))
        hs = levelhist.Histogram(BINS, (0, 1), dtype=np.float32)
        us_fill = per_call_us(lambda: hs.fill(xs), tsync)
        rows.append(("1000 samples per call", "levelhist Histogram.fill (torch)", us_fill / 1e3, None, "us per call"))
        goals.append(("1000 samples: levelhist.histogram us per call (torch)", us_lh, 10.0, us_lh <= 10.0))
        if cupy is not None:
            xsc = cupy.from_dlpack(xs)
            csync = cupy.cuda.get_current_stream().synchronize
            us_lc = per_call_us(lambda: levelhist.histogram(xsc, BINS, (0, 1)), csync)
            us_ch = per_call_us(lambda: cupy.histogram(xsc, BINS, (0, 1)), csync)
            rows.append(("1000 samples per call", "levelhist (CuPy array)", us_lc / 1e3, None, "us per call"))
            rows.append(("1000 samples per call", "cupy.histogram", us_ch / 1e3, None, "us per call"))
        xn = np.random.default_rng(3).random(1000, dtype=np.float32)
        us_np_lh = per_call_us(lambda: levelhist.histogram(xn, BINS, (0, 1)), lambda: None)
        us_np = per_call_us(lambda: np.histogram(xn, BINS, (0, 1)), lambda: None)
        rows.append(("1000 samples per call", "levelhist (numpy, CPU)", us_np_lh / 1e3, None, "us per call"))
        rows.append(("1000 samples per call", "numpy.histogram", us_np / 1e3, None, "us per call"))

    print()
    print(f"| {'case':<40} | {'method':<52} | {'ms':>9} | {'GB/s':>7} | {'ratio':<24} |")
    print(f"|{'-' * 42}|{'-' * 54}|{'-' * 11}|{'-' * 9}|{'-' * 26}|")
    for case, method, ms, rate, ratio in rows:
        if ratio == "us per call":
            ms_text, rate_text, ratio = f"{ms * 1e3:.2f} us", "", "per call"
        else:
            ms_text = f"{ms:.3f}" if ms is not None else ""
            rate_text = f"{rate:.0f}" if rate is not None else ""
        print(f"| {case:<40} | {method:<52} | {ms_text:>9} | {rate_text:>7} | {ratio:<24} |")
    print()
    print("goals:")
    for goal, value, target, met in goals:
        print(f"  {'MET ' if met else 'MISS'} {goal}: {value:.3f} (target {'<=' if 'us' in goal else '>='} {target})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
