#!/usr/bin/env python3
"""The tool's own cost: wall time and peak memory of accuracy_report runs.

Times `--input` runs on .npy files of normal(0, 1) values from 2^20 to 2^28
elements (`--op sum`, every accumulator and shape) and the default reports,
one process each, and prints a Markdown table (and JSON with --json). Peak
memory is the child's maximum resident set (getrusage through wait4).

    bench/tool_bench.py --binary build/release/reports/accuracy_report --backend cuda
    bench/tool_bench.py --backend cpu --log2-sizes 20,22,24 --reports fp16

Needs NumPy to write the input files (python3-numpy).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

REPORTS = {
    "fp16": ["--dtype", "fp16"],
    "all-json": ["--dtype", "all", "--format", "json"],
    "gallery-fp16": ["--gallery", "--dtype", "fp16"],
}


def run(cmd, log):
    """Runs cmd, returns (exit status, wall seconds, peak resident MiB)."""
    start = time.monotonic()
    with open(log, "wb") as out:
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=out)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    return os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss / 1024.0  # ru_maxrss is KiB on Linux


def write_npy(path, log2n, seed):
    import numpy as np  # only needed for the --input runs

    rng = np.random.default_rng(seed)
    n = 1 << log2n
    x = np.empty(n, dtype=np.float32)
    step = 1 << 24
    for i in range(0, n, step):  # in slices: no float64 copy of the whole array
        x[i:i + step] = rng.standard_normal(min(step, n - i), dtype=np.float32)
    np.save(path, x)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/release/reports/accuracy_report")
    ap.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
    ap.add_argument("--log2-sizes", default="20,22,24,26,28", help="sizes of the --input runs, as powers of two")
    ap.add_argument("--reports", default=",".join(REPORTS), help="default reports to time: " + ", ".join(REPORTS))
    ap.add_argument("--workdir", default=None, help="where the .npy files and logs go (default: a temporary folder)")
    ap.add_argument("--json", default=None, help="also write the results as JSON to this file")
    ap.add_argument("--timeout", type=int, default=0, help="stop a run after this many seconds (exit 124)")
    ap.add_argument("--extra", default="", help="more arguments for every run, e.g. --extra=--phase-times")
    args = ap.parse_args()

    if not os.access(args.binary, os.X_OK):
        sys.exit(f"tool_bench: {args.binary} is not an executable (build first, or give --binary)")
    work = args.workdir or tempfile.mkdtemp(prefix="ulpscope-bench-")
    os.makedirs(work, exist_ok=True)
    # timeout(1) waits for its child, so wait4 reports the child's peak memory too.
    limit = ["timeout", str(args.timeout)] if args.timeout > 0 else []
    base = limit + [args.binary, "--backend", args.backend, "--quiet"] + args.extra.split()
    rows = []

    sizes = [int(s) for s in args.log2_sizes.split(",") if s]
    for log2n in sizes:
        npy = os.path.join(work, f"normal_2e{log2n}.npy")
        if not os.path.exists(npy):
            write_npy(npy, log2n, seed=log2n)
        cmd = base + ["--input", npy, "--op", "sum", "--format", "json", "--out", os.path.join(work, f"in{log2n}.json")]
        status, wall, rss = run(cmd, os.path.join(work, f"in{log2n}.log"))
        rows.append({"run": f"--input 2^{log2n} fp32, --op sum", "bytes": (1 << log2n) * 4, "status": status,
                     "seconds": wall, "peak_mib": rss, "command": " ".join(cmd)})
        print(f"tool_bench: {rows[-1]['run']}: exit {status}, {wall:.2f} s, {rss:.0f} MiB", file=sys.stderr, flush=True)
        os.remove(npy)  # keep the disk free for the next size

    for name in [r for r in args.reports.split(",") if r]:
        if name not in REPORTS:
            sys.exit(f"tool_bench: unknown report '{name}' (accepted: {', '.join(REPORTS)})")
        cmd = base + REPORTS[name] + ["--out", os.path.join(work, f"{name}.out")]
        status, wall, rss = run(cmd, os.path.join(work, f"{name}.log"))
        rows.append({"run": " ".join(REPORTS[name]), "bytes": None, "status": status, "seconds": wall,
                     "peak_mib": rss, "command": " ".join(cmd)})
        print(f"tool_bench: {rows[-1]['run']}: exit {status}, {wall:.2f} s, {rss:.0f} MiB", file=sys.stderr, flush=True)

    print(f"accuracy_report on {platform.node()}, backend {args.backend}, {time.strftime('%Y-%m-%d')}\n")
    print("| run | exit | wall (s) | peak memory (MiB) |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['run']} | {r['status']} | {r['seconds']:.2f} | {r['peak_mib']:.0f} |")
    input_rows = [r for r in rows if r["bytes"]]
    for a, b in zip(input_rows, input_rows[1:]):
        if b["bytes"] == 4 * a["bytes"]:
            print(f"\n{b['run']} / {a['run']}: {b['seconds'] / a['seconds']:.2f}x the time for 4x the data")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backend": args.backend, "host": platform.node(), "rows": rows}, f, indent=1)
    # A run that failed (exit 2, or a crash) is a failed benchmark; exit 1 means failed cells, which is reported.
    return 1 if any(r["status"] not in (0, 1) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
