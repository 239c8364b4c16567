#!/usr/bin/env python3
"""tools/perf_summary.py on a small gpu_throughput JSON: the floors (0.90, 0.85 on fp8, exact mean_var
0.70), a kernel below its floor listed, one at it not, and two_pass against its ceiling of 0.5 only
where the timed input exceeded L2."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "perf_summary.py"


def row(op, shape, acc, dtype, frac, exceeds_l2=True):
    return {"op": op, "shape": shape, "accumulator": acc, "dtype": dtype, "fraction_of_cub": frac,
            "timing": {"exceeds_l2": exceeds_l2}}


def main():
    bench = {"device": {"name": "test GPU", "cccl": "0"}, "n": 1 << 26,
             "yardsticks": {"cub_sum_fp32_before": {"gbps": 3000.0, "median_ms": 0.1}},
             "results": [row("sum", "tree", "fp32", "fp16", 0.899),        # below 0.90
                         row("sum", "tree", "fp32", "fp8_e4m3", 0.851),    # at or above 0.85
                         row("mean_var", "tree", "exact", "bf16", 0.70),   # at 0.70
                         row("sum", "tree", "exact", "fp32", 0.95),
                         row("logsumexp", "tree", "fp32", "fp32", 0.10),   # no floor
                         row("mean_var", "two_pass", "fp32", "fp32", 0.45),
                         row("mean_var", "two_pass", "fp32", "fp16", 0.40, exceeds_l2=False)]}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.json"
        path.write_text(json.dumps(bench))
        out = subprocess.run([sys.executable, str(TOOL), str(path)], capture_output=True, text=True, check=True).stdout
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    expect("Tree kernels against their floors: 3 of 4 at or above." in out, "3 of 4 tree kernels at their floors")
    expect("| sum | fp16 | fp32 | 0.899 | 0.90 |" in out, "the fp16 sum below 0.90 listed")
    expect("| sum | fp8_e4m3 | fp32 |" not in out.split("Tree kernels against")[1].split("two_pass")[0],
           "the fp8 sum at 0.851 not listed (its floor is 0.85)")
    expect("| mean_var | fp32 | fp32 | 0.450 | 0.900 |" in out, "two_pass above L2 at 0.45 of cub is 0.9 of its ceiling")
    expect("| mean_var | fp16 | fp32 | 0.400 | unknown |" in out, "two_pass within L2 has no ceiling figure")
    for f in failures:
        print("FAILED:", f)
    if failures:
        print(out)
        return 1
    print("perf_summary: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
