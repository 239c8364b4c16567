#!/usr/bin/env python3
"""tools/perf_summary.py on small gpu_throughput JSON files: the floors (0.90, 0.85 on fp8, exact
mean_var 0.70), two_pass against its ceiling of 0.5 only where the timed input exceeded L2, and with
--ncu (data/ncu-tree-h100.csv, rows of a real ncu run on an H100 at n = 2^24, against fractions of
a real gpu_throughput run on it at 2^28) the issue and busiest-unit ceilings, recomputed here from
the file's figures, the verdicts, the warning above a ceiling, and the refusals (exit status 2)."""
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOL = HERE.parents[1] / "tools" / "perf_summary.py"
NCU = HERE / "data" / "ncu-tree-h100.csv"
H100 = "NVIDIA H100 80GB HBM3"
CUB_GBPS = 3069.0964607113756  # cub Sum fp32 of that 2^28 run
N = 1 << 28


def row(op, shape, acc, dtype, frac, bytes_per_element=4, exceeds_l2=True):
    return {"op": op, "shape": shape, "accumulator": acc, "dtype": dtype, "fraction_of_cub": frac, "n": N,
            "timing": {"exceeds_l2": exceeds_l2, "bytes_per_run": bytes_per_element * N}}


def bench_of(name, rows):
    return {"device": {"name": name, "cccl": "0"}, "n": N,
            "yardsticks": {"cub_sum_fp32_before": {"gbps": CUB_GBPS, "median_ms": 0.35}}, "results": rows}


FLOORS = [row("sum", "tree", "fp32", "fp16", 0.899, 2),        # below 0.90
          row("sum", "tree", "fp32", "fp8_e4m3", 0.851, 1),    # at or above 0.85
          row("mean_var", "tree", "exact", "bf16", 0.70, 2),   # at 0.70
          row("sum", "tree", "exact", "fp32", 0.95),
          row("logsumexp", "tree", "fp32", "fp32", 0.10),      # no floor
          row("mean_var", "tree", "two_pass", "fp32", 0.45),
          row("mean_var", "tree", "two_pass", "fp16", 0.40, 2, exceeds_l2=False)]

# The fractions of the 2^28 run for the kernels the ncu fixture profiled, and one it did not.
PROFILED = [row("sum", "tree", "naive", "fp32", 1.0005948991837876),
            row("sumsq", "tree", "naive", "fp8_e4m3", 0.6324040093416701, 1),
            row("mean_var", "tree", "kahan", "fp8_e4m3", 0.5440386385802336, 1),
            row("mean_var", "tree", "two_pass", "fp32", 0.5016863808904098),
            row("sumsq", "tree", "exact", "bf16", 0.8854782509555637, 2)]


def ncu_figures():
    """The fixture's figures, read here without the tool: per row (by the kernel name's prefix, which
    ncu --print-nvtx-rename kernel gives), warp instructions per element, and the issue rate."""
    lines = NCU.read_text().splitlines()
    n = next(int(line.split("n = ")[1].split()[0]) for line in lines if line.startswith("# GPU throughput"))
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    kernels = list(csv.DictReader(lines[header:]))[1:]  # after the units row
    inst, busy = {}, {}
    for k in kernels:
        key = "/".join(k["Kernel Name"].split("/")[:4])
        inst[key] = inst.get(key, 0) + int(k["smsp__inst_executed.sum"].replace(",", ""))
        busy[key] = busy.get(key, 0) + (float(k["gpu__time_duration.sum"].replace(",", ""))
                                        * float(k["sm__throughput.avg.pct_of_peak_sustained_elapsed"]) / 100)
    k = kernels[0]
    rate = (int(k["device__attribute_multiprocessor_count"]) * int(k["device__attribute_num_schedulers_per_multiprocessor"])
            * int(k["device__attribute_max_gpu_frequency_khz"].replace(",", "")) * 1000)
    # One launch a row (--warmup 0 --reps 1): per element, warp instructions and busiest-unit nanoseconds.
    return ({key: v / n for key, v in inst.items()}, {key: v / n for key, v in busy.items()}, rate, len(kernels))


def run(d, bench, *extra):
    path = Path(d) / f"bench{len(list(Path(d).iterdir()))}.json"
    path.write_text(json.dumps(bench))
    return subprocess.run([sys.executable, str(TOOL), str(path), *extra], capture_output=True, text=True)


def main():
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        plain = run(d, bench_of("test GPU", FLOORS))
        with_ncu = run(d, bench_of(H100, PROFILED), "--ncu", str(NCU))
        hot = [dict(r) for r in PROFILED]
        hot[1]["fraction_of_cub"] = 0.80  # the sumsq naive fp8 kernel made to beat its ceiling
        above = run(d, bench_of(H100, hot), "--ncu", str(NCU))
        cold = [dict(r) for r in PROFILED]
        cold[1]["fraction_of_cub"] = 0.50  # the sumsq naive fp8 kernel made to fall below its ceiling
        below = run(d, bench_of(H100, cold), "--ncu", str(NCU))
        lines = NCU.read_text().splitlines()
        no_n = Path(d) / "no_n.csv"
        no_n.write_text("\n".join(line for line in lines if not line.startswith("# GPU throughput")))
        no_rows = Path(d) / "no_rows.csv"
        header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
        no_rows.write_text("\n".join(lines[:header + 2]))  # the header and the units row
        refusals = {"no n line": (run(d, bench_of(H100, PROFILED), "--ncu", str(no_n)), "n = N elements"),
                    "no kernel rows": (run(d, bench_of(H100, PROFILED), "--ncu", str(no_rows)), "no profiled kernels"),
                    "another device": (run(d, bench_of("NVIDIA H200", PROFILED), "--ncu", str(NCU)), "NVIDIA H200")}

    out = plain.stdout
    expect(plain.returncode == 0, f"the run without --ncu exits 0 ({plain.returncode}: {plain.stderr})")
    expect("Tree kernels against their floors: 3 of 4 at or above." in out, "3 of 4 tree kernels at their floors")
    expect("Compute ceilings unknown (no ncu file given: --ncu)." in out, "without --ncu, the ceilings are unknown")
    expect("| sum | fp16 | fp32 | 0.899 | 0.90 | unknown | unknown |  |  | below floor |" in out,
           "the fp16 sum below 0.90")
    expect("| sum | fp8_e4m3 | fp32 | 0.851 | 0.85 | unknown | unknown |  |  | met |" in out,
           "the fp8 sum at 0.851 meets 0.85")
    expect("| mean_var | bf16 | exact | 0.700 | 0.70 | unknown | unknown |  |  | met |" in out,
           "exact mean_var at 0.70 meets it")
    expect("| logsumexp |" not in out.split("Tree kernels against")[1], "logsumexp has no floor")
    expect("| mean_var | fp32 | two_pass | 0.450 | 0.900 |" in out, "two_pass above L2 at 0.45 of cub is 0.9 of its ceiling")
    expect("| mean_var | fp16 | two_pass | 0.400 | unknown |" in out, "two_pass within L2 has no ceiling figure")

    out = with_ncu.stdout
    expect(with_ncu.returncode == 0, f"the run with --ncu exits 0 ({with_ncu.returncode}: {with_ncu.stderr})")
    inst, busy, rate, kernels = ncu_figures()
    expect(kernels == 5 and len(inst) == 4, f"the fixture: 5 kernels of 4 rows ({kernels}, {len(inst)})")

    def ceilings(key, bytes_per_element):
        """(issue ceiling, busiest-unit ceiling, instructions per element) of a fixture row."""
        cub = CUB_GBPS * 1e9
        return (bytes_per_element * rate / inst[key] / cub, bytes_per_element / (busy[key] * 1e-9) / cub, inst[key])

    c_fast, u_fast, i_fast = ceilings("sum/tree/naive/fp32", 4)
    c_sq, u_sq, i_sq = ceilings("sumsq/tree/naive/fp8_e4m3", 1)
    c_kahan, u_kahan, i_kahan = ceilings("mean_var/tree/kahan/fp8_e4m3", 1)
    c_two, u_two, i_two = ceilings("mean_var/tree/two_pass/fp32", 4)
    expect(rate == 132 * 4 * 1_980_000_000, f"the H100's issue rate: 132 SMs x 4 schedulers x 1.98 GHz ({rate})")
    expect(min(c_sq, u_sq) < 0.85 < min(c_fast, u_fast) and min(c_kahan, u_kahan) < 0.85,
           "the fixture holds compute-bound kernels and a fast one")
    expect(u_sq < c_sq and u_kahan < c_kahan, "the fixture's fp8 kernels: their busiest unit binds before issue")
    expect(0.5440386385802336 >= 0.9 * u_kahan and 0.6324040093416701 >= 0.9 * u_sq and 0.50 < 0.9 * u_sq,
           "the fixture's fp8 kernels at 0.90 of their ceiling, and the cold copy below")
    for line, what in [
            (f"| sum | fp32 | naive | 1.001 | 0.90 | {c_fast:.3f} | {u_fast:.3f} | {i_fast:.3f} |  | met |",
             "the fast sum"),
            (f"| sumsq | fp8_e4m3 | naive | 0.632 | 0.85 | {c_sq:.3f} | {u_sq:.3f} | {i_sq:.3f} |  "
             "| unit-bound, at its ceiling |", "the fp8 sumsq, bound by its busiest unit, at its ceiling"),
            (f"| mean_var | fp8_e4m3 | kahan | 0.544 | 0.85 | {c_kahan:.3f} | {u_kahan:.3f} | {i_kahan:.3f} |  "
             "| unit-bound, at its ceiling |", "the fp8 kahan mean_var, at its ceiling"),
            ("| sumsq | bf16 | exact | 0.885 | 0.90 | unknown | unknown |  |  | below floor |", "a kernel not profiled"),
            (f"| mean_var | fp32 | two_pass | 0.502 | {c_two:.3f} | {u_two:.3f} | {i_two:.3f} | "
             f"{0.5016863808904098 / min(c_two, u_two):.3f} |",
             "two_pass's two first-pass kernels summed, in the table of kernels without a floor"),
            ("Tree kernels against their floors: 1 of 4 at or above.", "1 of 4 at their floors"),
            ("Compute-bound (the lower of the issue and busiest-unit ceilings below the floor): 2, "
             "of which 2 at or above 0.90 of their ceiling.", "2 compute-bound, both at their ceiling"),
            ("to 0.90 of their ceiling: 3 of 4.", "3 of 4 held to their yardstick")]:
        expect(line in out, what + ": " + line)
    expect(f"| sumsq | fp8_e4m3 | naive | 0.500 | 0.85 | {c_sq:.3f} | {u_sq:.3f} | {i_sq:.3f} |  "
           "| unit-bound, below its ceiling |" in below.stdout, "the cold copy below its ceiling")
    expect("Warning" not in out, "no fraction above its ceiling")
    expect(f"Warning: sumsq/tree/naive/fp8_e4m3 measured 0.800 of cub, above its issue ceiling {c_sq:.3f}"
           in above.stdout, "a fraction above its ceiling warned of, naming the row")
    expect(above.stdout.count("Warning") == 1, "only that row warned of")
    for what, (p, needle) in refusals.items():
        expect(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1 and needle in p.stderr,
               f"{what}: exit 2 with one line naming it ({p.returncode}: {p.stderr!r})")
    for f in failures:
        print("FAILED:", f)
    if failures:
        print(plain.stdout, with_ncu.stdout, above.stdout, sep="\n")
        return 1
    print("perf_summary: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
