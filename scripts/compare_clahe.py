#!/usr/bin/env python3
"""Compares `levelhist equalize --clahe` with OpenCV's CLAHE, pixel for pixel.

    python3 scripts/compare_clahe.py [LEVELHIST] [--count N]

LEVELHIST is the levelhist binary (default: build/levelhist). Needs numpy and
cv2 (opencv-python-headless). Runs cv2.createCLAHE(clip, (cols, rows)).apply
and `levelhist equalize IN -o OUT --clahe --clip-limit clip --tiles RxC` on
random images (noise, smooth gradients, constant and two-level images, sizes
the grid divides and does not divide, down to 1 x 1), on the photographs in
bench/data, with several clip limits and grids; prints one line per case with
its mismatching pixels, and a summary. Exit status 0 when every case matches,
1 otherwise. `levelhist` counts the tile histograms on the GPU when there is
one (--backend is passed through with --backend B).
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
    with open(path, "wb") as f:
        f.write(b"P5 %d %d 255\n" % (w, h))
        f.write(np.ascontiguousarray(img, dtype=np.uint8).tobytes())


def read_pgm(path):
    with open(path, "rb") as f:
        data = f.read()
    # P5 W H 255<ws>: four whitespace-separated fields, then the raster.
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        start = at
        while not data[at:at + 1].isspace():
            at += 1
        fields.append(data[start:at])
    at += 1
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data[at:at + w * h], dtype=np.uint8).reshape(h, w)


def images(rng, count):
    """(name, image) pairs: synthetic ones of many shapes, then the photographs."""
    shapes = [(1, 1), (1, 9), (7, 1), (3, 3), (8, 8), (16, 16), (64, 64), (63, 65), (100, 37), (257, 129),
              (480, 640), (301, 203), (1080, 1920)]
    for i in range(count):
        h, w = shapes[i % len(shapes)]
        kind = i % 5
        if kind == 0:
            img = rng.integers(0, 256, size=(h, w), dtype=np.uint8)
        elif kind == 1:
            yy, xx = np.mgrid[0:h, 0:w]
            img = ((xx * 3 + yy * 2) % 256).astype(np.uint8)
        elif kind == 2:
            img = np.full((h, w), rng.integers(0, 256), dtype=np.uint8)
        elif kind == 3:
            img = np.where(rng.random((h, w)) < 0.3, 40, 200).astype(np.uint8)
        else:
            base = rng.integers(60, 120)
            img = np.clip(base + rng.normal(0, 12, size=(h, w)), 0, 255).astype(np.uint8)
        yield "random%d-%dx%d" % (i, w, h), img
    for name in ("camera.pgm", "coins.pgm"):
        path = os.path.join(ROOT, "bench", "data", name)
        img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
        if img is not None:
            yield name, img


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("levelhist", nargs="?", default=os.path.join(ROOT, "build", "levelhist"))
    parser.add_argument("--count", type=int, default=60, help="random images (default 60)")
    parser.add_argument("--backend", default="auto", help="levelhist's --backend (default auto)")
    args = parser.parse_args()
    rng = np.random.default_rng(20261124)
    settings = [(40.0, 8, 8), (2.0, 8, 8), (0.0, 4, 4), (3.5, 3, 5), (1.0, 1, 1), (100.0, 16, 2), (0.5, 7, 9)]
    cases = mismatched_cases = mismatched_pixels = 0
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "in.pgm"), os.path.join(tmp, "out.pgm")
        for name, img in images(rng, args.count):
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
