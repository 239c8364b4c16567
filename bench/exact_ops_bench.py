#!/usr/bin/env python3
"""ulpscope.exact against torch's own reductions on one GPU, in one run.

For each format and pair (ulpscope.exact.sum vs torch.sum, norm2 vs
torch.linalg.vector_norm, mean_var vs torch.var_mean(correction=0)) on one
tensor of 2^N normal(0, 1) values: the median GPU time of each (CUDA events,
after warm-up), bytes read per second, the ratio, and each result's error in
ULPs against the correctly rounded reference (ulpscope.reference on the host
copy). Also the host time of one call at n = 1 (the Python and launch
overhead) and its GPU time, for exact.sum and exact.mean_var beside torch's,
and a yardstick: torch.sum of the same values in fp32.

    PYTHONPATH=build/release/python bench/exact_ops_bench.py --log2n 28

Needs torch with CUDA and ulpscope built with CUDA.
"""
import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np
import torch

import ulpscope
import ulpscope.exact as exact
from torch_timing import gpu_ms

FORMATS = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def host_us_per_call(fn, calls=100):
    """Host microseconds per call of fn() (nothing waits for the GPU in between), median of 21 batches.
    A batch enqueues at most a few hundred launches: beyond the launch queue's depth (about a
    thousand) the host would wait for the GPU, and measure its time instead."""
    fn()
    torch.cuda.synchronize()
    batches = []
    for _ in range(21):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        batches.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(batches)


def ulps(value, ref):
    """ULPs of a result (tensor or float) against a Reference; None where undefined."""
    return ref.ulp_error(float(value))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--formats", default="fp16,bf16,fp32")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args()
    if not (torch.cuda.is_available() and exact.has_cuda()):
        print("exact_ops_bench: needs a CUDA device and ulpscope built with CUDA", file=sys.stderr)
        return 2
    n = 1 << args.log2n
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, n = 2^{args.log2n}, "
          f"median of {args.repeats} batches of 10 calls (CUDA events)")
    rows = []
    gen = torch.Generator(device="cpu").manual_seed(1)
    for fmt in args.formats.split(","):
        dtype = FORMATS[fmt]
        host = torch.randn(n, generator=gen, dtype=torch.float32).to(dtype)
        x = host.to(dev)
        fp32_copy = host.float().to(dev)
        yard = gpu_ms(lambda: torch.sum(fp32_copy), args.repeats)
        refs = {op: ulpscope.reference(host, op) for op in ("sum", "norm2", "mean_var")}
        pairs = [
            ("sum", lambda: exact.sum(x), "torch.sum", lambda: torch.sum(x)),
            ("norm2", lambda: exact.norm2(x), "torch.linalg.vector_norm", lambda: torch.linalg.vector_norm(x)),
            ("mean_var", lambda: exact.mean_var(x), "torch.var_mean",
             lambda: tuple(reversed(torch.var_mean(x, correction=0)))),
        ]
        for op, mine, theirs_name, theirs in pairs:
            t_mine, t_theirs = gpu_ms(mine, args.repeats), gpu_ms(theirs, args.repeats)
            r_mine, r_theirs = mine(), theirs()
            ref = refs[op]
            if op == "mean_var":
                err_mine = [ulps(r_mine[k], ref[k]) for k in (0, 1)]
                err_theirs = [ulps(r_theirs[k], ref[k]) for k in (0, 1)]
            else:
                err_mine, err_theirs = [ulps(r_mine, ref)], [ulps(r_theirs, ref)]
            gbs = lambda ms: x.numel() * x.element_size() / (ms * 1e-3) / 1e9
            row = {"format": fmt, "op": op, "exact_ms": t_mine, "exact_gbs": gbs(t_mine), "torch_op": theirs_name,
                   "torch_ms": t_theirs, "torch_gbs": gbs(t_theirs), "speedup": t_theirs / t_mine,
                   "exact_of_fp32_torch_sum": (x.numel() * x.element_size() / t_mine) /
                   (fp32_copy.numel() * 4 / yard),
                   "exact_ulps": err_mine, "torch_ulps": err_theirs}
            rows.append(row)
        del x, fp32_copy
        torch.cuda.empty_cache()
    one = torch.ones(1, dtype=torch.float16, device=dev)
    at_one = {"ulpscope.exact.sum": lambda: exact.sum(one), "ulpscope.exact.mean_var": lambda: exact.mean_var(one),
              "torch.sum": lambda: torch.sum(one), "torch.var_mean": lambda: torch.var_mean(one, correction=0)}
    call_us = {name: host_us_per_call(fn) for name, fn in at_one.items()}
    gpu_us = {name: 1000 * gpu_ms(fn, args.repeats) for name, fn in at_one.items()}

    def fmt_ulps(v):
        return ", ".join("undefined" if u is None else f"{u:.3g}" for u in v)

    print("| format | op | exact GB/s | torch op | torch GB/s | exact/torch speed | exact ulps | torch ulps |")
    print("|---|---|---:|---|---:|---:|---|---|")
    for r in rows:
        print(f"| {r['format']} | {r['op']} | {r['exact_gbs']:.0f} | {r['torch_op']} | {r['torch_gbs']:.0f} | "
              f"{r['speedup']:.3f} | {fmt_ulps(r['exact_ulps'])} | {fmt_ulps(r['torch_ulps'])} |")
    print("\nAt n = 1 (fp16), per call: host time (enqueueing, nothing waits) and GPU time (batches of 10)")
    for name in at_one:
        print(f"  {name}: host {call_us[name]:.1f} us, GPU {gpu_us[name]:.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(dev), "host": platform.node(), "log2n": args.log2n,
                       "rows": rows, "call_us": call_us, "gpu_us_at_1": gpu_us}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
