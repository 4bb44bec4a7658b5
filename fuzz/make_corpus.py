#!/usr/bin/env python3
"""Writes the seed corpora of fuzz/corpus/ (small valid and invalid inputs of
every target). Run from anywhere: python3 fuzz/make_corpus.py. The files are
committed; rerun only to change the seeds (libFuzzer's own finds are added
next to them by hand, see fuzz/README.md)."""
import os
import struct
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("latin-1")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def samples(w, h, c, maxval, seed=0):
    return [((x * 7 + y * 13 + k * 29 + seed) % (maxval + 1)) for y in range(h) for x in range(w) for k in range(c)]


# ---- Netpbm ---------------------------------------------------------------------
def pnm(magic, w, h, maxval, vals, header_extra=""):
    plain = magic in ("P2", "P3")
    head = "%s\n%s%d %d\n%d\n" % (magic, header_extra, w, h, maxval)
    if plain:
        body = "\n".join(" ".join(str(v) for v in vals[i:i + 12]) for i in range(0, len(vals), 12)) + "\n"
        return (head + body).encode("latin-1")
    if maxval > 255:
        return head.encode("latin-1") + b"".join(struct.pack(">H", v) for v in vals)
    return head.encode("latin-1") + bytes(vals)


for magic, c in (("P2", 1), ("P5", 1), ("P3", 3), ("P6", 3)):
    for maxval in (1, 255, 1000, 65535):
        put("pnm", "%s_maxval%d" % (magic, maxval), pnm(magic, 3, 2, maxval, samples(3, 2, c, maxval)))
put("pnm", "P5_comments", pnm("P5", 2, 2, 255, samples(2, 2, 1, 255), "# a comment\n"))
put("pnm", "P2_comment_between_samples", "P2 2 1 15\n3 # between\n7\n")
put("pnm", "P5_comment_after_maxval", "P5 2 1 255#note\n\x07\x09")
put("pnm", "P6_trailing_image", pnm("P6", 1, 1, 255, [1, 2, 3]) + pnm("P6", 1, 1, 255, [4, 5, 6]))
put("pnm", "bad_truncated_raster", pnm("P6", 4, 4, 255, samples(4, 4, 3, 255))[:30])
put("pnm", "bad_truncated_header", "P5 12")
put("pnm", "bad_sample_above_maxval", "P2 2 1 9\n3 10\n")
put("pnm", "bad_maxval_0", "P5 1 1 0\n\x00")
put("pnm", "bad_maxval_65536", "P5 1 1 65536\n\x00\x00")
put("pnm", "bad_zero_width", "P5 0 1 255\n")
put("pnm", "bad_huge", "P6 4294967295 4294967295 65535\n")
put("pnm", "bad_P1_bitmap", "P1\n2 2\n0 1 1 0\n")
put("pnm", "bad_P7_pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n\x00")
put("pnm", "bad_no_space", "P5 2 1 255x\x00\x00")


# ---- PNG --------------------------------------------------------------------------
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def row_bytes(row, depth):
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in row)
    if depth == 8:
        return bytes(row)
    out, acc, bits = bytearray(), 0, 0
    for v in row:
        acc = (acc << depth) | v
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


def png(w, h, color, depth, interlace=0, extra=b"", seed=0):
    c = CHANNELS[color]
    top = (1 << depth) - 1
    vals = samples(w, h, c, top, seed)
    pixel = lambda x, y: vals[(y * w + x) * c:(y * w + x + 1) * c]
    raw = bytearray()
    passes = ADAM7 if interlace else ((0, 0, 1, 1),)
    for x0, y0, dx, dy in passes:
        xs = list(range(x0, w, dx))
        if not xs:
            continue
        for y in range(y0, h, dy):
            raw.append(0)  # filter: none
            raw += row_bytes([v for x in xs for v in pixel(x, y)], depth)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, interlace)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", zlib.compress(bytes(raw))) +
            chunk(b"IEND", b""))


for depth in (1, 2, 4, 8, 16):
    put("png", "gray%d" % depth, png(5, 3, 0, depth))
for depth in (8, 16):
    put("png", "gray_alpha%d" % depth, png(3, 2, 4, depth))
    put("png", "rgb%d" % depth, png(3, 2, 2, depth))
    put("png", "rgba%d" % depth, png(3, 2, 6, depth))
for depth in (1, 2, 4, 8):
    n = 1 << depth
    plte = chunk(b"PLTE", bytes((i * 40) % 256 for i in range(3 * n)))
    put("png", "palette%d" % depth, png(5, 3, 3, depth, extra=plte))
put("png", "palette8_trns",
    png(4, 2, 3, 8, extra=chunk(b"PLTE", bytes(i % 256 for i in range(3 * 256))) + chunk(b"tRNS", bytes([0, 128, 255]))))
put("png", "palette2_trns",
    png(4, 2, 3, 2, extra=chunk(b"PLTE", bytes(range(12))) + chunk(b"tRNS", bytes([7]))))
put("png", "gray8_trns", png(3, 3, 0, 8, extra=chunk(b"tRNS", struct.pack(">H", 7))))
put("png", "rgb16_trns", png(3, 2, 2, 16, extra=chunk(b"tRNS", struct.pack(">HHH", 1, 2, 3))))
put("png", "rgb8_interlaced", png(9, 9, 2, 8, interlace=1))
put("png", "gray1_interlaced", png(7, 5, 0, 1, interlace=1))
put("png", "rgb8_ancillary", png(2, 2, 2, 8, extra=chunk(b"gAMA", struct.pack(">I", 45455)) +
                                   chunk(b"sRGB", b"\x00") + chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)) +
                                   chunk(b"tEXt", b"Comment\x00levelhist seed")))
good = png(4, 4, 2, 8)
put("png", "bad_truncated", good[:len(good) - 20])
put("png", "bad_crc", good[:30] + bytes([good[30] ^ 1]) + good[31:])
put("png", "bad_no_idat", b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)) +
    chunk(b"IEND", b""))
put("png", "bad_short_idat", png(64, 64, 6, 16)[:200])
put("png", "bad_palette_missing", png(2, 2, 3, 8))
# A 68-byte file declaring 20000 x 20000 RGBA16 (3.2 GB) and holding no pixel.
put("png", "oversized_ihdr_20000x20000_rgba16",
    b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 20000, 20000, 16, 6, 0, 0, 0)) +
    chunk(b"IDAT", zlib.compress(b"\0" * 10)) + chunk(b"IEND", b""))


# ---- CLI parsers (fuzz_args): selector byte, parameter byte, text ----------------
ARGS = [
    (0, 0, "256"), (0, 1, "8"), (0, 2, "4"), (0, 3, "65535"), (0, 4, "18446744073709551615"), (0, 0, "-1"),
    (0, 0, "10x"), (0, 0, "007"), (1, 0, "0.5"), (1, 0, "-1e3"), (1, 0, "+1e3"), (1, 0, "nan"), (1, 0, "1e400"),
    (1, 0, "0x1p3"), (2, 0, "0:256"), (2, 0, "auto"), (2, 0, "-1.5:1.5"), (2, 0, "5:1"), (2, 0, "1:1"),
    (2, 0, "-1.7e308:1.7e308"), (2, 0, "0:1:2"), (3, 0, "0,1,10,100,1000"), (3, 0, "0,1,1"), (3, 0, "1,,2"),
    (3, 0, "5"), (4, 3, "0,1,2"), (4, 3, "0,0"), (4, 0, "1"), (4, 3, ""),
]
for i, (sel, par, text) in enumerate(ARGS):
    put("args", "parser%d_%02d" % (sel, i), bytes([sel, par]) + text.encode())

# ---- count argument lines (fuzz_count and parse_args of fuzz_args): the
# examples of docs/CLI.md and their error cases, arguments split by NUL --------
COUNT = [
    "image.raw",
    "--type u16 --format csv depth.u16",
    "--type f32 --bins 100 --range auto data.f32",
    "--type f64 --edges 0,1,10,100,1000 --numpy latency.f64",
    "--format json",
    "--per-file a.raw b.raw",
    "--type f32 --bins 50 --range auto data.f32 --plot data.svg",
    "--channels 4 image.rgba",
    "--channels 4 --active 0,1,2 --format csv image.rgba",
    "--type u16 --channels 3 --bins 4096 --range 0:4096 frame.rgb16",
    "--type f32 --bins 1024 --range 0:1 --weights w.f32 x.f32",
    "--type f32 --bins 4 --range 0:2 --format json x.f32",
    "--type u32 --sparse --format csv ids.u32",
    "--type i64 --sparse --format json ids.i64",
    "--type i32 --bins 10 odd.bin",
    "--bins 10x --range 0:1 data",
    "--bins 4 --range 5:1 data",
    "--edges 0,1,1 data",
    "--edges 0,10 --bins 5 data",
    "--type f32 --range auto nan.f32",
    "--backend cuda data",
    "--strategy cpu_parallel --threads 2 --range=0:16 data",
    "--strategy=cpu_serial --numpy --bins=7 --range -3:9 --format table - ",
    "--type i8 --range auto --plot h.png data",
    "--weights - --type u8 --bins 3 --range 0:3 data",
    "--type f64 --weights w --weight-type f64 --bins 2 --range 0:1 data",
    "--help",
]
for i, line in enumerate(COUNT):
    argv = line.split(" ")
    put("count", "line%02d" % i, "\0".join(argv))
    put("args", "parser5_line%02d" % i, bytes([5, 0]) + "\0".join(argv).encode())
