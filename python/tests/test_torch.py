"""torch on the CPU through ulpscope (skipped without torch)."""

import math

import numpy as np
import pytest

import ulpscope

torch = pytest.importorskip("torch")


def same_bits(a, b):
    """Equal as the report compares results: -0 differs from +0, every NaN is alike."""
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def test_reference_reads_tensors_of_every_16_bit_format():
    for fmt, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16), ("fp32", torch.float32)):
        x = ulpscope.generate("normal", 1000, fmt, seed=3, like="torch")
        assert x.dtype == dtype
        ref = ulpscope.reference(x, "sum")
        assert ref.out_dtype == fmt
        bits = ulpscope.generate("normal", 1000, fmt, seed=3)
        assert ref.exact == ulpscope.reference(bits, "sum", dtype=fmt).exact


def test_evaluate_torch_sum():
    ev = ulpscope.evaluate(torch.sum, op="sum", dtypes=["fp32", "fp16", "bf16"],
                           dists=["normal", "ill_conditioned:1e8", "alternating", "sorted_ascending"],
                           sizes=[1, 1023, 4096], runs=2)
    cells = ev.kernel_cells()
    assert ev.kernel["like"] == "torch" and ev.kernel["name"] == "torch.sum"
    assert len(cells) == 3 * 4 * 3 * 2
    assert all(c["status"] == "ok" for c in cells)
    for c in cells:
        x = ulpscope.generate(c["distribution"], c["n"], c["dtype"], seed=c["seed"], like="torch")
        got = float(torch.sum(x))
        assert same_bits(float.fromhex(c["result"]), got)
        assert c["reference"]["rounded"] == ulpscope.reference(x, "sum").hex
    # torch's CPU sum accumulates 16-bit inputs in fp32: on normal inputs (condition below 10^3)
    # that is within an ulp of fp16 and bf16; fp32 inputs accumulate in their own format.
    normal16 = [c for c in cells if c["distribution"] == "normal" and c["dtype"] != "fp32"]
    assert max(c["ulp_error"] for c in normal16) <= 1.0
    assert all(c["ulp_error"] is not None for c in cells if c["distribution"] == "normal")


def test_torch_row_wise_norm():
    eps = 1e-6

    def rms_norm(x, gamma):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * gamma.float()).to(x.dtype)

    ev = ulpscope.evaluate(rms_norm, op="rmsnorm", dtypes=["bf16"], dists=["normal"], sizes=[256], row_cols=128,
                           runs=1, permutations=0, eps=eps, like="torch")
    cells = ev.kernel_cells()
    assert cells and all(c["status"] == "ok" for c in cells)
    assert max(c["ulp_error"] for c in cells) <= 1.0


def test_evaluate_moves_tensors_to_the_device():
    seen = []

    def recording_sum(x):
        seen.append(x.device)
        return torch.sum(x)

    kw = dict(op="sum", dtypes=["bf16"], dists=["normal", "alternating"], sizes=[1, 1023], runs=1, permutations=1)
    on_cpu = ulpscope.evaluate(recording_sum, device="cpu", like="torch", **kw)
    assert seen and all(d == torch.device("cpu") for d in seen)
    assert on_cpu.kernel["device"] == "cpu"
    plain = ulpscope.evaluate(torch.sum, **kw)
    assert [c["result"] for c in on_cpu.kernel_cells()] == [c["result"] for c in plain.kernel_cells()]
    rows = ulpscope.evaluate(lambda x: x.sum(-1), op="sum", dtypes=["fp16"], dists=["normal"], sizes=[64],
                             axes=["inner", "outer"], row_cols=16, runs=1, permutations=0, like="torch",
                             device=torch.device("cpu"))
    assert all(c["status"] == "ok" for c in rows.kernel_cells())


def test_evaluate_device_refusals():
    with pytest.raises(ValueError, match="is not a torch device"):
        ulpscope.evaluate(torch.sum, op="sum", sizes=[4], device="nowhere")
    with pytest.raises(ValueError, match="needs like='torch'"):
        ulpscope.evaluate(np.sum, op="sum", sizes=[4], device="cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="sees no CUDA device"):
            ulpscope.evaluate(torch.sum, op="sum", sizes=[4], device="cuda")
