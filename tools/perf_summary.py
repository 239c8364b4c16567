#!/usr/bin/env python3
"""Summarise a gpu_throughput --json file as Markdown: per op, the fraction of
cub::DeviceReduce::Sum fp32 (bytes read per second, measured in the same run)
for each shape and accumulator across the input formats, and the tree kernels
that are below issue 12's floors.

    tools/perf_summary.py bench.json [--ops sum,dot] > summary.md
"""
import argparse
import json
import sys

DTYPES = ["fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]


def floor_of(dtype, acc):
    """The speed a tree kernel must reach (None: no floor), docs/perf-h100.md."""
    if acc == "naive":
        return None  # the format's own arithmetic, no floor
    if acc == "exact":
        return 0.85 if dtype in ("fp32", "bf16") else 0.95
    return 0.95 if dtype == "fp32" else 0.90


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--ops", help="comma-separated ops (default: every op in the file)")
    a = ap.parse_args()
    try:
        j = json.load(open(a.json))
    except (OSError, ValueError) as e:
        print(f"perf_summary: cannot read {a.json}: {e}", file=sys.stderr)
        return 2
    rows = [r for r in j["results"] if r["fraction_of_cub"] is not None]
    ops = a.ops.split(",") if a.ops else list(dict.fromkeys(r["op"] for r in rows))
    y = j["yardsticks"]["cub_sum_fp32_before"]
    print(f"{j['device']['name']}, CCCL {j['device']['cccl']}, n = {j['n']}; cub::DeviceReduce::Sum fp32 "
          f"{y['gbps']:.1f} GB/s ({y['median_ms']:.4f} ms) in the same run.\n")
    for op in ops:
        cells = {(r["shape"], r["accumulator"], r["dtype"]): r["fraction_of_cub"] for r in rows if r["op"] == op}
        keys = list(dict.fromkeys((s, acc) for (s, acc, _) in cells))
        if not keys:
            continue
        print(f"**{op}** (fraction of cub Sum fp32)\n")
        print("| shape | accumulator | " + " | ".join(DTYPES) + " |")
        print("|---|---|" + "---:|" * len(DTYPES))
        for s, acc in keys:
            vals = [cells.get((s, acc, d)) for d in DTYPES]
            print(f"| {s} | {acc} | " + " | ".join("" if v is None else f"{v:.3f}" for v in vals) + " |")
        print()
    misses = [(r["op"], r["dtype"], r["accumulator"], r["fraction_of_cub"], floor_of(r["dtype"], r["accumulator"]))
              for r in rows if r["shape"] == "tree" and r["op"] in ops]
    checked = [m for m in misses if m[4] is not None]
    below = [m for m in checked if m[3] < m[4]]
    print(f"Tree kernels against issue 12's floors: {len(checked) - len(below)} of {len(checked)} at or above.\n")
    if below:
        print("| op | dtype | accumulator | fraction | floor |\n|---|---|---|---:|---:|")
        for op, d, acc, v, f in below:
            print(f"| {op} | {d} | {acc} | {v:.3f} | {f:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
