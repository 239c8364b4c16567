"""ulpscope.evaluate: a Python callable measured by the run matrix of the C++
suite (accuracy/evaluate_kernel.hpp), as a user kernel: the same inputs,
references, metrics and cells as accuracy_report --kernel-lib gives a plug-in."""

import json
import shlex
import sys

import numpy as np

from . import _ulpscope
from ._arrays import INPUT_DTYPES, OUTPUT_DTYPES, from_bits, to_float64

DEFAULT_SIZES = (1, 33, 1023, 4096)
DEFAULT_SEEDS = (1, 2)


def _framework_of(fn):
    module = getattr(fn, "__module__", None) or ""
    if module == "torch" or module.startswith("torch."):
        return "torch"
    return "float"


def _torch_device(device, like):
    """evaluate's device= as a torch.device (None stays None); one clear error for anything else."""
    if device is None:
        return None
    if like != "torch":
        raise ValueError(f"device={device!r} moves torch tensors: it needs like='torch' (like={like!r})")
    import torch

    try:
        device = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise ValueError(f"device={device!r} is not a torch device ({e})") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={str(device)!r}: torch sees no CUDA device")
    return device


def _kernel_name(fn):
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None)
    if module in ("torch", "numpy") or (module or "").startswith(("torch.", "numpy.")):
        # torch.sum's qualified name is torch._VariableFunctionsClass.sum: the name users write.
        name = f"{module.split('.')[0]}.{getattr(fn, '__name__', name)}"
    # The report's shape column: no spaces or commas (accuracy/user_kernel.hpp).
    return "".join("_" if c in " \t\n,<>" else c for c in name)


def _adapter(fn, op, dtype, like, device=None):
    """The callable as the core calls it: bit-pattern arrays in, float64 values out. device: the torch
    device the tensors are moved to before fn sees them (None: they stay on the CPU)."""

    def convert(a):
        a = from_bits(a, dtype, like)
        return a if device is None else a.to(device)

    def call(x, y, gamma, beta, rows, cols, axis, eps):
        shape = (rows * cols,) if axis == "all" else (rows, cols)

        def view(a):
            # fn always reduces the last dimension: the columns of "outer" arrive
            # as the transposed (strided) view [cols, rows].
            a = convert(a.reshape(shape))
            return a.T if axis == "outer" else a

        args = [view(x)]
        if op == "dot":
            args.append(view(y))
        elif op == "rmsnorm":
            args.append(convert(gamma))
        elif op == "layernorm":
            args += [convert(gamma), convert(beta)]
        result = fn(*args)
        if op == "mean_var":
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise ValueError("mean_var: the function must return (mean, variance)")
            mean, var = (to_float64(r) for r in result)
            return np.stack([mean, var], axis=-1).reshape(-1)
        return to_float64(result)

    return call


class Evaluation:
    """The outcome of evaluate(): the report (a dict in the JSON report's schema, docs/report-schema.md)
    and its cells (dicts, one per measured cell)."""

    def __init__(self, report_json, kernel):
        self.json = report_json
        self.report = json.loads(report_json)
        self.cells = self.report["cells"]
        self.kernel = kernel

    def write_json(self, path):
        """Writes the JSON report: accuracy_report --baseline/--current, --gate and --format html read it."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.json)

    def write_html(self, path):
        """Writes the self-contained HTML report (plots and every cell), as --format html does."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(_ulpscope._report_html(self.json))

    def kernel_cells(self):
        """The cells of the evaluated callable (not of built-in kernels measured beside it)."""
        return [c for c in self.cells if c["shape"] == self.kernel["name"]]

    def worst(self):
        """The kernel's cell with the largest ulp_error (a failed or undefined one first), or None."""
        def badness(c):
            if c["status"] != "ok" or c["ulp_error"] is None:
                return float("inf")
            return c["ulp_error"]

        cells = self.kernel_cells()
        return max(cells, key=badness) if cells else None

    def __repr__(self):
        w = self.worst()
        if w is None:
            worst = "none"
        else:
            what = (f"{w['ulp_error']:.4g} ulps" if w["status"] == "ok" and w["ulp_error"] is not None else
                    w["status"] if w["status"] != "ok" else f"undefined ({w['error_note']})")
            worst = f"{what} on {w['dtype']} {w['distribution']} n={w['n']} seed={w['seed']}"
        return f"Evaluation({self.kernel['name']}: {len(self.kernel_cells())} cells, worst {worst})"


def evaluate(fn, op="sum", dtypes=("fp32",), dists=None, sizes=DEFAULT_SIZES, runs=3, permutations=2, *,
             seeds=DEFAULT_SEEDS, out_dtype=None, axes=None, eps=1e-6, row_cols=1024, name=None,
             accumulator="custom", like=None, deterministic=True, reentrant=False, accumulators=(), shapes=(),
             saturation="satfinite", json_path=None, device=None):
    """Puts fn through the run matrix: every distribution (default: the default matrix's), size and
    seed, each input format of dtypes, `runs` repeated calls and `permutations` permuted inputs; the
    references, metrics and cells of the C++ suite (docs/spec.md).

    fn is called as fn(x), fn(x, y) for dot, fn(x, gamma) for rmsnorm, fn(x, gamma, beta) for
    layernorm (eps is evaluate's eps: use the same in fn), with x 1-D for axis "all" and 2-D for
    "inner" and "outer" (and the norms, which normalise rows), whose last dimension fn reduces:
    [rows, cols] for "inner", the transposed view [cols, rows] of the matrix for "outer". It
    returns the output(s): a scalar,
    one value per reduction, the normalised rows, or (mean, variance) for mean_var; values of any
    width are rounded once to out_dtype (default: the input's; fp32 for fp8).
    like: how x reaches fn: "torch" (tensors of the format's dtype; default for torch functions),
    "float" (NumPy: float32 / float16, bf16 and fp8 widened exactly to float32; the default
    otherwise) or "numpy" (bf16 and fp8 as uint16 / uint8 bit patterns).
    device: with like="torch", the torch device the tensors are moved to before fn is called
    ("cuda", "cuda:1", "cpu", a torch.device; None: they stay on the CPU); fn's results come back to
    the host to be scored.
    accumulators and shapes: built-in kernels measured on the same inputs, for comparison.
    Returns an Evaluation; json_path also writes its JSON report.
    """
    like = like or _framework_of(fn)
    if like not in ("torch", "float", "numpy"):
        raise ValueError(f"unknown like={like!r} (torch, float or numpy)")
    device = _torch_device(device, like)
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    for d in dtypes:
        if d not in INPUT_DTYPES:
            raise ValueError(f"unknown input dtype {d!r} (one of {', '.join(INPUT_DTYPES)})")
    if out_dtype is not None and out_dtype not in OUTPUT_DTYPES:
        raise ValueError(f"unknown out_dtype {out_dtype!r} (one of {', '.join(OUTPUT_DTYPES)})")
    if isinstance(dists, str):
        dists = [dists]
    name = name or _kernel_name(fn)
    if axes is None:
        axes = ["inner"] if op in ("rmsnorm", "layernorm") else ["all"]
    kernels = []
    for d in dtypes:
        kernels.append({"name": name, "accumulator": accumulator, "op": op, "dtype": d,
                        "out_dtype": out_dtype or _ulpscope._default_out_dtype(d), "axes": list(axes),
                        "deterministic": bool(deterministic), "reentrant": bool(reentrant),
                        "call": _adapter(fn, op, d, like, device)})
    command = " ".join(shlex.quote(a) for a in (sys.argv or ["python3"]))
    report = _ulpscope._evaluate(kernels, list(dists or []), [int(n) for n in sizes], [int(s) for s in seeds],
                                 int(row_cols), int(runs), int(permutations), float(eps), saturation,
                                 list(accumulators), list(shapes), f"python: {command}")
    ev = Evaluation(report, {"name": name, "op": op, "dtypes": list(dtypes), "out_dtype": out_dtype, "like": like,
                             "axes": list(axes), "eps": eps, "row_cols": row_cols, "runs": runs, "fn": fn,
                             "deterministic": bool(deterministic),
                             "device": None if device is None else str(device)})
    if json_path is not None:
        ev.write_json(json_path)
    return ev
