#!/usr/bin/env python3
"""Verdicts on PyTorch's own reductions: each op through ulpscope.evaluate on a CUDA device.

For torch.sum, torch.nn.functional.rms_norm, torch.nn.functional.layer_norm,
torch.logsumexp (and a Triton sum with atomic adds, where Triton is
installed), in each format: the worst ULP error over the matrix and where,
the share of cells correctly rounded, whether repeated calls and permuted
inputs gave one result, and the GPU time of one call at 2^N elements (CUDA
events) beside ulpscope.exact's kernel for the same reduction where there is
one. Every figure comes from the cells ulpscope.evaluate returns.

    PYTHONPATH=build/release/python bench/torch_ops_evaluate.py --json torch_ops.json

Needs torch with CUDA. The inputs are made on the host by the suite's
generators and moved to the device for each call (evaluate's device=); the
timed calls run on tensors already there.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import ulpscope
import ulpscope.exact as exact
from torch_timing import gpu_ms

DEV = torch.device("cuda")


def triton_sum():
    """A Triton sum in fp32 whose blocks add into the result with atomics (so its order is the
    blocks' finishing order): None where Triton is not installed."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        tl.atomic_add(out_ptr, tl.sum(x, axis=0))

    def fn(x):
        out = torch.zeros(1, dtype=torch.float32, device=x.device)
        block = 1024
        kernel[(max(1, triton.cdiv(x.numel(), block)),)](x, out, x.numel(), BLOCK=block)
        return out[0]

    return fn


def rows_cols(n):
    cols = 1024
    return max(1, n // cols), cols


# Each row: the op of the spec, the torch callable (as evaluate calls it), and how to time it on a device
# tensor x of n elements (and the exact kernel of the same reduction, where ulpscope has one).
def cases(eps):
    def rms(x, g):
        return F.rms_norm(x, (x.shape[-1],), g, eps)

    def ln(x, g, b):
        return F.layer_norm(x, (x.shape[-1],), g, b, eps)

    rows = [
        ("sum", "torch.sum", torch.sum, lambda x: torch.sum(x), lambda x: exact.sum(x)),
        ("rmsnorm", "torch.nn.functional.rms_norm", rms, None, None),
        ("layernorm", "torch.nn.functional.layer_norm", ln, None, None),
        ("logsumexp", "torch.logsumexp", lambda x: torch.logsumexp(x, dim=-1), lambda x: torch.logsumexp(x, 0), None),
    ]
    t = triton_sum()
    if t is not None:
        rows.append(("sum", "triton_sum_atomic_add", t, t, None))
    return rows


def timed_norm(op, eps, dtype, n):
    rows, cols = rows_cols(n)
    x = torch.randn(rows, cols, dtype=dtype, device=DEV)
    g = torch.rand(cols, dtype=dtype, device=DEV)
    b = torch.randn(cols, dtype=dtype, device=DEV)
    if op == "rmsnorm":
        return gpu_ms(lambda: F.rms_norm(x, (cols,), g, eps), 20, batch=1)
    return gpu_ms(lambda: F.layer_norm(x, (cols,), g, b, eps), 20, batch=1)


def summarize(ev):
    cells = ev.kernel_cells()
    ok = [c for c in cells if c["status"] == "ok"]
    errs = [c["ulp_error"] for c in ok if c.get("ulp_error") is not None]
    rounded = [c for c in ok if c.get("correctly_rounded") is True]
    runs_distinct = max((c.get("distinct_results") or 1) for c in cells) if cells else None
    perm_distinct = max((c.get("distinct_across_permutations") or 1) for c in cells) if cells else None
    w = ev.worst()
    return {"cells": len(cells), "failed": len(cells) - len(ok), "max_ulps": max(errs) if errs else None,
            "median_ulps": statistics.median(errs) if errs else None,
            "correctly_rounded_share": len(rounded) / len(ok) if ok else None,
            "distinct_across_runs": runs_distinct, "distinct_across_permutations": perm_distinct,
            "worst": None if w is None else {k: w.get(k) for k in ("dtype", "distribution", "n", "seed", "ulp_error")}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtypes", default="fp32,fp16,bf16")
    ap.add_argument("--sizes", default="1,33,1023,4096,65536,1048576",
                    help="evaluate's sizes (the norms use rows of 1024 columns)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--permutations", type=int, default=2)
    ap.add_argument("--log2n-time", type=int, default=24, help="the size of the timed calls")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--json", help="also write every row (and the evaluations' cells) here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_ops_evaluate: needs a CUDA device", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    dtypes = args.dtypes.split(",")
    tn = 1 << args.log2n_time
    print(f"# {torch.cuda.get_device_name(DEV)}, torch {torch.__version__}, sizes {sizes}, runs {args.runs}, "
          f"permutations {args.permutations}; times at n = 2^{args.log2n_time} (median of 20, CUDA events)")
    out = []
    for op, name, fn, time_fn, exact_fn in cases(args.eps):
        for dt in dtypes:
            norm = op in ("rmsnorm", "layernorm")
            op_sizes = [n for n in sizes if n >= 1024] if norm else sizes
            start = time.perf_counter()
            ev = ulpscope.evaluate(fn, op=op, dtypes=[dt], sizes=op_sizes, runs=args.runs,
                                   permutations=args.permutations, eps=args.eps, row_cols=1024, name=name,
                                   like="torch", device=DEV, deterministic=False)
            wall = time.perf_counter() - start
            row = {"op": op, "kernel": name, "dtype": dt, "evaluate_s": wall, **summarize(ev)}
            tdtype = getattr(torch, {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}[dt])
            if norm:
                row["torch_ms"] = timed_norm(op, args.eps, tdtype, tn)
            elif time_fn is not None:
                x = torch.randn(tn, dtype=tdtype, device=DEV)
                row["torch_ms"] = gpu_ms(lambda: time_fn(x), 20, batch=1)
                if exact_fn is not None and exact.has_cuda():
                    row["exact_ms"] = gpu_ms(lambda: exact_fn(x), 20, batch=1)
                del x
            out.append(row)
            print(json.dumps(row), flush=True)

    def f(v, spec):
        return "unknown" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)

    print("\n| op | kernel | format | cells | max ulps | correctly rounded | distinct over runs | "
          "distinct over permutations | ms at 2^%d | ulpscope.exact ms |" % args.log2n_time)
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in out:
        print(f"| {r['op']} | {r['kernel']} | {r['dtype']} | {r['cells']} | {f(r['max_ulps'], '.3g')} | "
              f"{f(r['correctly_rounded_share'], '.0%')} | {f(r['distinct_across_runs'], 'd')} | "
              f"{f(r['distinct_across_permutations'], 'd')} | {f(r.get('torch_ms'), '.3f')} | "
              f"{f(r.get('exact_ms'), '.3f')} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(DEV), "torch": torch.__version__, "rows": out}, fh,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
