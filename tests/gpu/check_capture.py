#!/usr/bin/env python3
"""Checks one `gpuprobe trace capture` against what the kernel must do.

usage: check_capture.py CASE RESULT.json TRACE

The result document must say same_answer, the record count must be the one
counted by hand for CASE (below), and the binary trace must hold exactly
those records: the header's count, thread-major order, each record's
width and dependency flag from its site, and — for the kernels whose
accesses are written out here — every thread's sequence of (pc, address)
in program order, addresses computed from the buffers' device addresses
that the result reports. Prints one line; exit status 0 when all holds.
"""
import json
import struct
import sys

HEADER = 128
REC = struct.Struct("<QQQIBBH")  # tid, pc, addr, width, dep, store, reserved (format v2)


def base(res, param):
    for b in res["buffers"]:
        if b["param"] == param:
            return b["address"]
    raise KeyError(param)


def p(entry, i):
    return "%s_param_%d" % (entry, i)


# Each case: (expected record count, function(res) -> {tid: [(pc, addr), ...]} or None).
def vecadd(res, n=1000, threads=1024):
    a, b, c = (base(res, p("vecadd", i)) for i in range(3))
    # nvcc loads b[i] first (pc 0), then a[i] (pc 1)
    return {t: [(0, b + 4 * t), (1, a + 4 * t), (2, c + 4 * t)] if t < n else [] for t in range(threads)}


def tiles(n, tile):
    """(tid, row, col) of every thread of an n x n launch in tile x tile blocks."""
    for by in range(n // tile):
        for bx in range(n // tile):
            for ty in range(tile):
                for tx in range(tile):
                    yield ((by * (n // tile) + bx) * tile + ty) * tile + tx, by * tile + ty, bx * tile + tx


def naive(res, n=64, tile=16):
    a, b, c = (base(res, p("matmul_naive", i)) for i in range(3))
    seq = {}
    for tid, row, col in tiles(n, tile):
        s = []
        for k in range(n):  # nvcc loads B first (pc 0), then A (pc 1)
            s += [(0, b + 4 * (k * n + col)), (1, a + 4 * (row * n + k))]
        seq[tid] = s + [(2, c + 4 * (row * n + col))]
    return seq


def tiled(res, n=64, tile=16):
    a, b, c = (base(res, p("matmul_tiled", i)) for i in range(3))
    seq = {}
    for tid, row, col in tiles(n, tile):
        tx, ty = col % tile, row % tile
        s = []
        for t in range(n // tile):
            s += [(0, a + 4 * (row * n + t * tile + tx)), (1, b + 4 * ((t * tile + ty) * n + col))]
        seq[tid] = s + [(2, c + 4 * (row * n + col))]
    return seq


def chase(res, steps=10, threads=256):
    nxt, out = base(res, p("chase", 0)), base(res, p("chase", 1))
    return {t: [(0, nxt + 4 * t)] * steps + [(1, out + 4 * t)] for t in range(threads)}


def copy4(res, n=1000, threads=1024):
    i, o, t16, t8 = (base(res, p("copy4", k)) for k in range(4))
    return {t: [(0, i + 16 * t), (1, o + 16 * t), (2, t16 + 2 * t), (3, t8 + t)] if t < n else []
            for t in range(threads)}


def saxpy_gs(res, n=10000, threads=8 * 128, recorded=None):
    """A grid-stride loop over n: thread t does t, t + threads, ...; only the
    first `recorded` threads record when the capture samples blocks."""
    x, y = base(res, p("saxpy_gs", 1)), base(res, p("saxpy_gs", 2))
    return {t: [r for i in range(t, n, threads) for r in ((0, x + 4 * i), (1, y + 4 * i), (2, y + 4 * i))]
            for t in range(recorded if recorded is not None else threads)}


def sum4(res, n=10000, threads=40 * 256):
    i, o = base(res, p("sum4_f32", 0)), base(res, p("sum4_f32", 1))
    return {t: [(0, i + 4 * t), (1, o + 4 * (t & 3))] if t < n else [] for t in range(threads)}


CASES = {
    "vecadd": (3 * 1000, vecadd),
    "matmul_naive": (64 * 64 * (2 * 64 + 1), naive),
    "matmul_tiled": (64 * 64 * (2 * 64 // 16 + 1), tiled),
    "chase": (256 * (10 + 1), chase),
    "copy4": (4 * 1000, copy4),
    "fixture_tiled16": (16 * 16 * (2 * 16 // 16 + 1), lambda res: tiled(res, 16)),
    "naive256": (256 * 256 * (2 * 256 + 1), None),
    "saxpy_gs": (3 * 10000, saxpy_gs),
    # --sample-blocks 3 of 8: threads 0..383 record, each its share of the whole launch's loop
    "saxpy_gs_sample3": (3 * sum(len(range(t, 10000, 1024)) for t in range(384)),
                         lambda res: saxpy_gs(res, recorded=384)),
    "sum4_f32": (2 * 10000, sum4),
    "val_copy": (64 * 256 * 2, None),
    "val_mixed": (64 * 256 * 2, None),
    "val_reduce": (16 * (256 * 4 + 1), None),
    "val_ffma": (16 * 256, None),
    "val_mm_naive": (64 * 64 * (2 * 64 + 1), None),
    "val_mm_tiled": (64 * 64 * (2 * 64 // 16 + 1), None),
    "val_mm_abt": (64 * 64 * (2 * 64 + 1), None),
}


def main():
    case, res_path, trace_path = sys.argv[1:4]
    want, expect = CASES[case]
    res = json.load(open(res_path))
    problems = []
    if res.get("same_answer") is not True:
        problems.append("same_answer is not true")
    if res.get("records") != want:
        problems.append("records %s, counted by hand %d" % (res.get("records"), want))
    if sum(res.get("records_per_site", [])) != res.get("records"):
        problems.append("records_per_site does not add up")
    sites = res["sites"]
    with open(trace_path, "rb") as f:
        head = f.read(HEADER)
        if head[:8] != b"GPTRACE\0":
            problems.append("no binary trace header")
        data = f.read() if expect or want <= 2_000_000 else None
    count = struct.unpack_from("<Q", head, 24)[0] if len(head) == HEADER else -1
    flags = struct.unpack_from("<I", head, 16)[0] if len(head) == HEADER else 0
    if count != want:
        problems.append("the header counts %d records" % count)
    if not flags & 1:
        problems.append("the header does not say thread-major")
    if data is not None:
        n = len(data) // REC.size
        if n != want or len(data) % REC.size:
            problems.append("the trace holds %d records" % n)
        last, seqs = -1, {}
        for i in range(n):
            tid, pc, addr, width, dep, store, _ = REC.unpack_from(data, i * REC.size)
            if tid < last:
                problems.append("record %d: thread %d after %d (not thread-major)" % (i, tid, last))
                break
            last = tid
            s = sites[pc]
            if width != s["width"] or dep != s["dep"]:
                problems.append("record %d: width/dep %d/%d, site says %d/%d" % (i, width, dep, s["width"], s["dep"]))
                break
            if "kind" in s and store != (s["kind"] != "load"):
                problems.append("record %d: store flag %d, site is a %s" % (i, store, s["kind"]))
                break
            if expect:
                seqs.setdefault(tid, []).append((pc, addr))
        if expect:
            want_seq = {t: s for t, s in expect(res).items() if s}
            if seqs != want_seq:
                bad = sorted(t for t in set(seqs) | set(want_seq) if seqs.get(t) != want_seq.get(t))
                t = bad[0]
                problems.append("%d threads differ from program order; thread %d: got %s..., want %s..."
                                % (len(bad), t, seqs.get(t, [])[:4], want_seq.get(t, [])[:4]))
    rounding = [(b["param"], b[k]) for b in res.get("buffers", []) for k in b if k.endswith("_float_add_rounding")]
    print("%s %s: %d records (hand count %d), header count %d, same_answer %s%s, ms %s%s" % (
        "FAIL" if problems else "PASS", case, res.get("records", -1), want, count,
        res.get("same_answer"), " (float-add rounding let through: %s)" % json.dumps(rounding) if rounding else "",
        json.dumps(res.get("ms")), "; " + "; ".join(problems) if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
