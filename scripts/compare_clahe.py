#!/usr/bin/env python3
"""Compares `levelhist equalize --clahe` with OpenCV's CLAHE, pixel for pixel.

    python3 scripts/compare_clahe.py [LEVELHIST] [--count N] [--depth 8|16|both]

LEVELHIST is the levelhist binary (default: build/levelhist). Needs numpy and
cv2 (opencv-python-headless). Runs cv2.createCLAHE(clip, (cols, rows)).apply
and `levelhist equalize IN -o OUT --clahe --clip-limit clip --tiles RxC` on
random images (noise, smooth gradients, constant and two-level images, sizes
the grid divides and does not divide, down to 1 x 1), on the photographs in
bench/data, 8-bit and 16-bit (the 16-bit ones also with 12-bit values and the
photographs scaled to 16 bits), with several clip limits and grids; prints one
line per case with its mismatching pixels, and a summary. Exit status 0 when
every case matches, 1 otherwise. --backend B is passed to levelhist: auto (the
default) counts the tile histograms on the CPU, cuda on the GPU (8-bit images:
no CUDA strategy takes 16-bit tiles of 65536 bins, so give --depth 8 with it).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def write_pgm(path, img):
    h, w = img.shape
    maxval = 65535 if img.dtype == np.uint16 else 255
    with open(path, "wb") as f:
        f.write(b"P5 %d %d %d\n" % (w, h, maxval))
        f.write(np.ascontiguousarray(img, dtype=">u2" if maxval == 65535 else np.uint8).tobytes())


def read_pgm(path):
    with open(path, "rb") as f:
        data = f.read()
    # P5 W H MAXVAL<ws>: four whitespace-separated fields, then the raster
    # (two bytes a sample, most significant first, where MAXVAL > 255).
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        start = at
        while not data[at:at + 1].isspace():
            at += 1
        fields.append(data[start:at])
    at += 1
    w, h, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    if maxval > 255:
        return np.frombuffer(data[at:at + 2 * w * h], dtype=">u2").reshape(h, w).astype(np.uint16)
    return np.frombuffer(data[at:at + w * h], dtype=np.uint8).reshape(h, w)


def images(rng, count, depth):
    """(name, image) pairs: synthetic ones of many shapes, then the photographs."""
    shapes = [(1, 1), (1, 9), (7, 1), (3, 3), (8, 8), (16, 16), (64, 64), (63, 65), (100, 37), (257, 129),
              (480, 640), (301, 203), (1080, 1920)]
    top = 65536 if depth == 16 else 256
    dtype = np.uint16 if depth == 16 else np.uint8
    kinds = 6 if depth == 16 else 5
    for i in range(count):
        h, w = shapes[i % len(shapes)]
        kind = i % kinds
        if kind == 0:
            img = rng.integers(0, top, size=(h, w), dtype=dtype)
        elif kind == 1:
            yy, xx = np.mgrid[0:h, 0:w]
            img = ((xx * 3 + yy * 2) * (top // 256) % top).astype(dtype)
        elif kind == 2:
            img = np.full((h, w), rng.integers(0, top), dtype=dtype)
        elif kind == 3:
            img = np.where(rng.random((h, w)) < 0.3, 40 * (top // 256), 200 * (top // 256)).astype(dtype)
        elif kind == 4:
            base = rng.integers(60, 120) * (top // 256)
            img = np.clip(base + rng.normal(0, 12 * (top // 256), size=(h, w)), 0, top - 1).astype(dtype)
        else:  # 12-bit values in 16-bit samples, as cameras and scanners write them
            img = np.clip(2000 + rng.normal(0, 300, size=(h, w)), 0, 4095).astype(dtype)
        yield "random%d-%dx%d-%dbit" % (i, w, h, depth), img
    for name in ("camera.pgm", "coins.pgm"):
        path = os.path.join(ROOT, "bench", "data", name)
        img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
        if img is not None:
            yield (name, img) if depth == 8 else (name + "-x257", img.astype(np.uint16) * 257)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("levelhist", nargs="?", default=os.path.join(ROOT, "build", "levelhist"))
    parser.add_argument("--count", type=int, default=60, help="random images (default 60)")
    parser.add_argument("--backend", default="auto", help="levelhist's --backend (default auto)")
    parser.add_argument("--depth", choices=("8", "16", "both"), default="both", help="bit depth (default both)")
    args = parser.parse_args()
    rng = np.random.default_rng(20261124)
    settings = [(40.0, 8, 8), (2.0, 8, 8), (0.0, 4, 4), (3.5, 3, 5), (1.0, 1, 1), (100.0, 16, 2), (0.5, 7, 9),
                (2.0, 3, 70)]
    cases = mismatched_cases = mismatched_pixels = 0
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "in.pgm"), os.path.join(tmp, "out.pgm")
        depths = (8, 16) if args.depth == "both" else (int(args.depth),)
        for name, img in ((n, im) for d in depths for n, im in images(rng, args.count, d)):
            write_pgm(src, img)
            for clip, rows, cols in settings:
                want = cv2.createCLAHE(clipLimit=clip, tileGridSize=(cols, rows)).apply(img)
                cmd = [args.levelhist, "equalize", src, "-o", out, "--clahe", "--clip-limit", repr(clip),
                       "--tiles", "%dx%d" % (rows, cols), "--backend", args.backend]
                run = subprocess.run(cmd, capture_output=True, text=True)
                cases += 1
                if run.returncode != 0:
                    print("%s clip %g tiles %dx%d: levelhist failed: %s" % (name, clip, rows, cols, run.stderr.strip()))
                    mismatched_cases += 1
                    continue
                got = read_pgm(out)
                bad = int(np.count_nonzero(got != want))
                mismatched_pixels += bad
                mismatched_cases += bad != 0
                line = "%s clip %g tiles %dx%d: %d mismatching pixels of %d" % (name, clip, rows, cols, bad, img.size)
                if bad:
                    ys, xs = np.nonzero(got != want)
                    line += " (first at x=%d y=%d: levelhist %d, OpenCV %d)" % (xs[0], ys[0], got[ys[0], xs[0]],
                                                                               want[ys[0], xs[0]])
                print(line)
    print("OpenCV %s: %d cases, %d with mismatches, %d mismatching pixels" % (cv2.__version__, cases,
                                                                            mismatched_cases, mismatched_pixels))
    return 0 if mismatched_cases == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
