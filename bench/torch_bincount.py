#!/usr/bin/env python3
"""torch.bincount with weights, timed as `levelhist bench --general --cases weighted` times
levelhist's weighted strategies: the peer of the general benchmark's weighted case, to run in the same device
call on the same GPU.

f32 samples and f32 weights, 1024 even bins over [0, 1), 2^27 pairs (1 GiB of samples + weights;
--bytes to change), distributions uniform / constant / skewed as in bench/general_sections.cu.
torch.bincount needs integer bins, so two figures per distribution:
  bincount      torch.bincount(bins, weights=w, minlength=1024) on precomputed int64 bins
  bin+bincount  (x * 1024).long().clamp_(0, 1023), then bincount: the whole job from f32 samples
Both as GB/s of samples + weights (n * 8 bytes), median of 15 timed runs after 3 warm-ups, CUDA
events. The sums are checked against a float64 reference computed with torch.

  python3 bench/torch_bincount.py [--bytes 1G] [--reps 15] [--csv FILE]
"""
import argparse
import statistics
import sys


def parse_bytes(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in mult:
        return int(float(text[:-1]) * mult[text[-1]])
    return int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bytes", default="1G", help="bytes of samples + weights (default 1G)")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--csv", default="", help="also write the rows to this CSV file")
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"torch_bincount.py: PyTorch is not installed here ({e}); nothing measured", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_bincount.py: torch sees no CUDA device; nothing measured", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    n = parse_bytes(args.bytes) // 8
    bins = 1024
    print(f"# torch.bincount(weights=), {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, "
          f"n = {n} f32 samples + f32 weights ({n * 8 / 2**30:.2f} GiB), {bins} bins over [0, 1)")
    print("| distribution | bincount GB/s | bin+bincount GB/s | max rel. error |")
    print("|---|---|---|---|")
    gen = torch.Generator(device=dev)
    gen.manual_seed(20121114)
    rows = []
    for dist in ("uniform", "constant", "skewed"):
        if dist == "uniform":
            x = torch.rand(n, device=dev, dtype=torch.float32, generator=gen)
        elif dist == "constant":
            x = torch.full((n,), 0.3, device=dev, dtype=torch.float32)
        else:
            x = (0.5 + 0.05 * torch.randn(n, device=dev, dtype=torch.float32, generator=gen)).clamp_(0.0, 0.999999)
        w = torch.rand(n, device=dev, dtype=torch.float32, generator=gen) + 2.0**-24  # (0, 1]
        b = (x * bins).long().clamp_(0, bins - 1)
        ref = torch.zeros(bins, dtype=torch.float64, device=dev).index_add_(0, b, w.double())

        def time_it(fn):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            for _ in range(args.warmup):
                fn()
            times = []
            for _ in range(args.reps):
                start.record()
                fn()
                stop.record()
                stop.synchronize()
                times.append(start.elapsed_time(stop))
            return statistics.median(times)

        out = torch.bincount(b, weights=w, minlength=bins)
        err = ((out.double() - ref).abs() / ref.abs().clamp_min(1e-300)).max().item()
        ms_count = time_it(lambda: torch.bincount(b, weights=w, minlength=bins))
        ms_all = time_it(lambda: torch.bincount((x * bins).long().clamp_(0, bins - 1), weights=w, minlength=bins))
        gbps_count, gbps_all = n * 8 / ms_count / 1e6, n * 8 / ms_all / 1e6
        rows.append((dist, gbps_count, gbps_all, err))
        print(f"| {dist} | {gbps_count:.1f} | {gbps_all:.1f} | {err:.1e} |", flush=True)
        del x, w, b, ref, out
        torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("distribution,bincount_gbps,bin_and_bincount_gbps,max_rel_error\n")
            for r in rows:
                f.write(f"{r[0]},{r[1]:.3f},{r[2]:.3f},{r[3]:.3e}\n")
    print("(max rel. error: torch.bincount's sums, in its output dtype, against float64 sums; "
          "levelhist sums in float64)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
