#!/usr/bin/env python3
"""Summarise a gpu_throughput --json file as Markdown: per op, the fraction of
cub::DeviceReduce::Sum fp32 (bytes read per second, measured in the same run)
for each shape and accumulator across the input formats; the tree kernels
below their floors; and two_pass against its two-pass ceiling (docs/spec.md,
"Ceilings").

    tools/perf_summary.py bench.json [--ops sum,dot] > summary.md
"""
import argparse
import json
import sys

DTYPES = ["fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]


FLOAT_ACCUMULATORS = ("naive", "fp32", "fp64", "kahan", "pairwise")
FLOORED_OPS = ("sum", "dot", "sumsq", "mean_var")


def floor_of(op, dtype, acc):
    """The fraction of cub Sum fp32 a tree kernel must reach (None: no floor): sum, dot, sumsq and
    mean_var with the float accumulators 0.90 (0.85 on fp8 inputs); exact sum, dot and sumsq 0.90 in
    every format, exact mean_var 0.70 (docs/spec.md, "Floors")."""
    if op not in FLOORED_OPS:
        return None
    if acc == "exact":
        return 0.70 if op == "mean_var" else 0.90
    if acc in FLOAT_ACCUMULATORS:
        return 0.85 if dtype.startswith("fp8") else 0.90
    return None


TWO_PASS_CEILING = 0.5  # two_pass reads its input twice; above L2 both reads come from memory


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
    misses = [(r["op"], r["dtype"], r["accumulator"], r["fraction_of_cub"],
               floor_of(r["op"], r["dtype"], r["accumulator"]))
              for r in rows if r["shape"] == "tree" and r["op"] in ops]
    checked = [m for m in misses if m[4] is not None]
    below = [m for m in checked if m[3] < m[4]]
    print(f"Tree kernels against their floors: {len(checked) - len(below)} of {len(checked)} at or above.\n")
    if below:
        print("| op | dtype | accumulator | fraction | floor |\n|---|---|---|---:|---:|")
        for op, d, acc, v, f in below:
            print(f"| {op} | {d} | {acc} | {v:.3f} | {f:.2f} |")
        print()
    two_pass = [r for r in rows if r["shape"] == "two_pass" and r["op"] in ops]
    if two_pass:
        print(f"two_pass against its ceiling ({TWO_PASS_CEILING} of cub where the timed input exceeds L2; "
              "unknown otherwise):\n")
        print("| op | dtype | accumulator | fraction of cub | of the ceiling |\n|---|---|---|---:|---:|")
        for r in two_pass:
            above_l2 = (r.get("timing") or {}).get("exceeds_l2")
            share = f"{r['fraction_of_cub'] / TWO_PASS_CEILING:.3f}" if above_l2 else "unknown"
            print(f"| {r['op']} | {r['dtype']} | {r['accumulator']} | {r['fraction_of_cub']:.3f} | {share} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
