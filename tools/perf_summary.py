#!/usr/bin/env python3
"""Summarise a gpu_throughput --json file as Markdown: per op, the fraction of
cub::DeviceReduce::Sum fp32 (bytes read per second, measured in the same run)
for each shape and accumulator across the input formats; the tree kernels
against their floors and, given an ncu file, their compute ceilings (issue and busiest unit); and
two_pass against its two-pass ceiling (docs/spec.md §7, "Ceilings" and
"Floors").

    tools/perf_summary.py bench.json [--ops sum,dot] [--ncu ncu.csv] > summary.md

The issue ceiling: a warp scheduler issues at most one warp instruction a
cycle, so a kernel that issues I warp instructions per element cannot read
faster than bytes_per_element * SMs * schedulers_per_SM * max_clock / I bytes
a second. I is smsp__inst_executed.sum of the row's kernels (from the ncu
file, each row's launches named by gpu_throughput's NVTX range
op/shape/accumulator/format) over the ncu run's launches and elements;
bytes_per_element is the row's bytes_per_run / n in bench.json (the bytes
gpu_throughput counts as read); SMs, schedulers and the clock are the ncu
file's device attributes.

The busiest-unit ceiling: ncu's sm__throughput is the share of its peak that
the busiest unit of the SMs (an execution pipe, the issue slots, shared
memory) kept up over the kernel, so the kernel cannot finish sooner than
gpu__time_duration * sm__throughput / 100 of its ncu run; its bytes over that
time, as a fraction of cub Sum fp32, bound it as the issue ceiling does, and
lower where one pipe (conversions, fp64) saturates before the issue slots do.

The verdict: a kernel whose compute ceiling (the lower of the two) is below
its floor is compute-bound ("issue-bound" or "unit-bound", after the lower)
and is held to 0.90 of that ceiling instead of its floor; any other kernel is
held to its floor.
"""
import argparse
import csv
import json
import re
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
HELD_TO_CEILING = 0.90  # the share of its compute ceiling a compute-bound kernel is held to (docs/spec.md, "Ceilings")

# The ncu metrics and device attributes the ceilings read (docs/spec.md, "Ceilings").
INSTRUCTIONS = "smsp__inst_executed.sum"
SMS = "device__attribute_multiprocessor_count"
SCHEDULERS = "device__attribute_num_schedulers_per_multiprocessor"
MAX_CLOCK_KHZ = "device__attribute_max_gpu_frequency_khz"
DEVICE_NAME = "device__attribute_display_name"
DURATION_NS = "gpu__time_duration.sum"
BUSIEST_UNIT_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
ROW_NAME = re.compile(r"(\w+/\w+/\w+/\w+)")  # gpu_throughput's NVTX range: op/shape/accumulator/format


class BadInput(Exception):
    """An input the summary cannot use; main prints it as one line and exits 2."""


def number(text, what):
    """An ncu figure: thousands separators dropped ("1,879,368")."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        raise BadInput(f"{what} is not a number: {text!r}")


def read_ncu(path):
    """The issue counts of an `ncu --csv --page raw --nvtx` file of gpu_throughput: per row
    (op, shape, accumulator, format) the warp instructions per element of one launch, summed over
    the row's kernels, and the device it ran on."""
    try:
        lines = open(path).read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"cannot read {path}: {e}")
    n_line = next((m for m in map(re.compile(r"^# GPU throughput, n = (\d+) elements").match, lines) if m), None)
    if not n_line:
        raise BadInput(f"{path} has no '# GPU throughput, n = N elements' line (gpu_throughput's stdout)")
    n = int(n_line.group(1))
    launch_line = next((m for m in map(re.compile(r"median of (\d+) timed launches after (\d+) warm-up").search,
                                       lines) if m), None)
    if not launch_line:
        raise BadInput(f"{path} has no 'median of R timed launches after W warm-up ones' line (gpu_throughput's stdout)")
    launches = int(launch_line.group(1)) + int(launch_line.group(2))  # each row launches warm-up + timed times
    header = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if header is None:
        raise BadInput(f"{path} has no ncu header row (\"ID\",...): was it made by ncu --csv --page raw?")
    rows = [r for r in csv.DictReader(lines[header:]) if (r.get("ID") or "").isdigit()]  # not the units row
    if not rows:
        raise BadInput(f"{path} has no profiled kernels")
    missing = [c for c in (INSTRUCTIONS, SMS, SCHEDULERS, MAX_CLOCK_KHZ, DEVICE_NAME) if c not in rows[0]]
    if missing:
        raise BadInput(f"{path} lacks {', '.join(missing)} (see the ncu command in docs/spec.md, \"Ceilings\")")
    ranges = [c for c in rows[0] if c.startswith("thread Domain:Push/Pop_Range")]
    names = {r[DEVICE_NAME] for r in rows}
    if len(names) > 1:
        raise BadInput(f"{path} profiled more than one device: {', '.join(sorted(names))}")
    per_row, busy_ns = {}, {}
    timed = DURATION_NS in rows[0] and BUSIEST_UNIT_PCT in rows[0]
    for r in rows:
        m = ROW_NAME.search(r[ranges[0]]) if ranges else None
        m = m or re.match(r"^(\w+/\w+/\w+/\w+)/", r.get("Kernel Name", ""))
        if not m:
            continue  # a kernel outside every row's range (a yardstick)
        key = tuple(m.group(1).split("/"))
        per_row[key] = per_row.get(key, 0.0) + number(r[INSTRUCTIONS], f"{INSTRUCTIONS} of {m.group(1)}")
        if timed:  # the time its busiest unit was busy, summed over the row's kernels
            busy_ns[key] = busy_ns.get(key, 0.0) + number(r[DURATION_NS], f"{DURATION_NS} of {m.group(1)}") \
                * number(r[BUSIEST_UNIT_PCT], f"{BUSIEST_UNIT_PCT} of {m.group(1)}") / 100
    if not per_row:
        raise BadInput(f"{path} has no kernel inside an NVTX range op/shape/accumulator/format (ncu --nvtx)")
    first = rows[0]
    return {"name": first[DEVICE_NAME], "n": n, "launches": launches,
            "issue_rate": number(first[SMS], SMS) * number(first[SCHEDULERS], SCHEDULERS)
            * number(first[MAX_CLOCK_KHZ], MAX_CLOCK_KHZ) * 1e3,  # warp instructions a second
            "inst_per_element": {k: v / launches / n for k, v in per_row.items()},
            "busy_ns_per_element": {k: v / launches / n for k, v in busy_ns.items()}}


def issue_ceiling(bytes_per_element, issue_rate, inst_per_element, cub_bytes_per_s):
    """The fastest a kernel issuing inst_per_element warp instructions an element can read, as a
    fraction of cub Sum fp32: bytes_per_element * issue_rate / inst_per_element bytes a second."""
    return bytes_per_element * issue_rate / inst_per_element / cub_bytes_per_s


def busiest_unit_ceiling(bytes_per_element, busy_ns_per_element, cub_bytes_per_s):
    """The fastest a kernel whose busiest SM unit was busy busy_ns_per_element an element can read,
    as a fraction of cub Sum fp32."""
    return bytes_per_element / (busy_ns_per_element * 1e-9) / cub_bytes_per_s


def compute_ceiling(issue, unit):
    """(the lower of the two ceilings, which: "issue" or "unit"); unknown ones are left out."""
    known = [(c, w) for c, w in ((issue, "issue"), (unit, "unit")) if c is not None]
    return min(known) if known else (None, None)


def verdict(fraction, floor, ceiling, which="issue"):
    """Held to the floor, or to HELD_TO_CEILING of the compute ceiling where that is below the floor."""
    if ceiling is not None and ceiling < floor:
        return (f"{which}-bound, at its ceiling" if fraction >= HELD_TO_CEILING * ceiling
                else f"{which}-bound, below its ceiling")
    return "met" if fraction >= floor else "below floor"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--ops", help="comma-separated ops (default: every op in the file)")
    ap.add_argument("--ncu", help="ncu --csv --page raw --nvtx file of gpu_throughput: the compute ceilings")
    a = ap.parse_args()
    try:
        j = json.load(open(a.json))
    except (OSError, ValueError) as e:
        print(f"perf_summary: cannot read {a.json}: {e}", file=sys.stderr)
        return 2
    ncu = None
    if a.ncu:
        try:
            ncu = read_ncu(a.ncu)
        except BadInput as e:
            print(f"perf_summary: {e}", file=sys.stderr)
            return 2
        if ncu["name"] != j["device"]["name"]:
            print(f"perf_summary: {a.ncu} profiled {ncu['name']}, {a.json} measured {j['device']['name']}",
                  file=sys.stderr)
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

    def ceiling_of(r):
        """(issue ceiling, instructions per element, busiest-unit ceiling) of a row, None for each
        where unknown."""
        key = (r["op"], r["shape"], r["accumulator"], r["dtype"])
        inst = ncu["inst_per_element"].get(key) if ncu else None
        busy = ncu["busy_ns_per_element"].get(key) if ncu else None
        bytes_per_run = (r.get("timing") or {}).get("bytes_per_run")
        if not inst or not bytes_per_run or not r.get("n"):
            return None, inst, None
        b = bytes_per_run / r["n"]
        return (issue_ceiling(b, ncu["issue_rate"], inst, y["gbps"] * 1e9), inst,
                busiest_unit_ceiling(b, busy, y["gbps"] * 1e9) if busy else None)

    tree = [r for r in rows if r["shape"] == "tree" and r["op"] in ops]
    floored = [(r, floor_of(r["op"], r["dtype"], r["accumulator"])) for r in tree]
    checked = [(r, f) + ceiling_of(r) for r, f in floored if f is not None]
    verdicts = [verdict(r["fraction_of_cub"], f, *compute_ceiling(c, u)) for r, f, c, _, u in checked]
    met = sum(v == "met" for v in verdicts)
    bound = [v for v in verdicts if "-bound" in v]
    at_ceiling = sum(v.endswith("-bound, at its ceiling") for v in verdicts)
    print(f"Tree kernels against their floors: {sum(r['fraction_of_cub'] >= f for r, f, _, _, _ in checked)} "
          f"of {len(checked)} at or above.\n")
    fmt = lambda v: "unknown" if v is None else f"{v:.3f}"
    if ncu:
        print(f"Compute ceilings from {a.ncu} ({ncu['name']}, n = {ncu['n']}, launches a row {ncu['launches']}; "
              f"{ncu['issue_rate'] / 1e9:.1f} G warp instructions a second at the maximum clock). "
              f"Compute-bound (the lower of the issue and busiest-unit ceilings below the floor): {len(bound)}, "
              f"of which {at_ceiling} at or above {HELD_TO_CEILING:.2f} of their ceiling. "
              f"Held to their floor or, where compute-bound, to {HELD_TO_CEILING:.2f} of their ceiling: "
              f"{met + at_ceiling} of {len(checked)}.\n")
    else:
        print("Compute ceilings unknown (no ncu file given: --ncu).\n")
    if checked:
        print("| op | format | accumulator | fraction of cub | floor | issue ceiling | busiest-unit ceiling "
              "| instructions per element | instructions per element for the floor | verdict |\n"
              "|---|---|---|---:|---:|---:|---:|---:|---:|---|")
        for (r, f, c, inst, u), v in zip(checked, verdicts):
            needed = f"{inst * c / f:.3f}" if v.startswith("issue-bound") else ""
            print(f"| {r['op']} | {r['dtype']} | {r['accumulator']} | {r['fraction_of_cub']:.3f} | {f:.2f} | "
                  f"{fmt(c)} | {fmt(u)} | " + ("" if inst is None else f"{inst:.3f}") + f" | {needed} | {v} |")
        print()
    unfloored = [(r,) + ceiling_of(r) for r, f in floored if f is None]
    unfloored = [u for u in unfloored if u[1] is not None]
    if unfloored:
        print("Profiled tree kernels without a floor, against their compute ceiling:\n")
        print("| op | format | accumulator | fraction of cub | issue ceiling | busiest-unit ceiling "
              "| instructions per element | of the compute ceiling |\n|---|---|---|---:|---:|---:|---:|---:|")
        for r, c, inst, u in unfloored:
            low = compute_ceiling(c, u)[0]
            print(f"| {r['op']} | {r['dtype']} | {r['accumulator']} | {r['fraction_of_cub']:.3f} | {c:.3f} | "
                  f"{fmt(u)} | {inst:.3f} | {r['fraction_of_cub'] / low:.3f} |")
        print()
    above = [(r, c) for r, _, c, _, _ in checked if c is not None and r["fraction_of_cub"] > c]
    above += [(r, c) for r, c, _, _ in unfloored if r["fraction_of_cub"] > c]
    for r, c in above:
        print(f"Warning: {r['op']}/{r['shape']}/{r['accumulator']}/{r['dtype']} measured {r['fraction_of_cub']:.3f} "
              f"of cub, above its issue ceiling {c:.3f}: its instructions were counted at too small an n "
              f"(per-thread fixed costs) or it ran above the maximum clock assumed.")
    if above:
        print()
    two_pass = [r for r in tree if r["accumulator"] == "two_pass"]
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
