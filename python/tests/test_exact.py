"""ulpscope.exact: correctly rounded reductions as operations. On the host
(NumPy, CPU tensors) everywhere; on CUDA tensors where torch sees a GPU and
the package was built with CUDA (skipped otherwise)."""

import math

import numpy as np
import pytest

import ulpscope
import ulpscope.exact as exact

OPS = ("sum", "mean", "dot", "sumsq", "norm2", "mean_var")


def same_bits(a, b):
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def call(op, x, y=None, **kw):
    if op == "dot":
        return exact.dot(x, y, **kw)
    return getattr(exact, op)(x, **kw)


def as_floats(result):
    """A result (array, tensor, or the (mean, variance) pair) as a flat list of floats."""
    from ulpscope._arrays import to_float64

    if isinstance(result, tuple):
        return [v for pair in zip(to_float64(result[0]), to_float64(result[1])) for v in pair]
    return list(to_float64(result))


def expected(op, x, y=None, fmt=None, **kw):
    ref = ulpscope.reference(x, op, y=y, dtype=fmt, **kw)
    return [float(v) for v in np.asarray(ref.rounded).reshape(-1)] if hasattr(ref, "shape") else [ref.rounded]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("fmt", ["fp32", "fp16"])
def test_host_results_are_the_references(op, fmt):
    x, y = ulpscope.generate("ill_conditioned:1e12", 999, fmt, seed=2, with_y=True)
    got = call(op, x, y)
    want = expected(op, x, y if op == "dot" else None)
    assert all(same_bits(a, b) for a, b in zip(as_floats(got), want)) and len(as_floats(got)) == len(want)
    if op != "mean_var":
        assert got.dtype == x.dtype  # the input's format by default


def test_host_rows_and_fp64_output():
    x = ulpscope.generate("normal", 33 * 40, "fp16", seed=4).reshape(33, 40)
    got = exact.sum(x, dim=-1, out_dtype="fp64")
    assert got.shape == (33,) and got.dtype == np.float64
    want = ulpscope.reference(x, "sum", out_dtype="fp64", axis=-1).rounded
    assert all(same_bits(a, b) for a, b in zip(got, want))
    mean, var = exact.mean_var(x, dim=-1)
    assert mean.shape == (33,) and var.shape == (33,)


def test_bad_requests_are_refused():
    x = np.ones((4, 5), dtype=np.float32)
    with pytest.raises(ValueError, match="dim=0"):
        exact.sum(x, dim=0)
    with pytest.raises(ValueError, match="stream= applies to device arrays only"):
        exact.sum(x, stream=0)
    with pytest.raises(ValueError, match="dot needs y"):
        exact.dot(x, None)


try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="no torch")
cuda = pytest.mark.skipif(torch is None or not (torch.cuda.is_available() and exact.has_cuda()),
                          reason="no torch, no CUDA device, or ulpscope built without CUDA")


@needs_torch
def test_host_tensors_come_back_as_tensors():
    x = ulpscope.generate("normal", 1000, "bf16", seed=5, like="torch")
    got = exact.sum(x)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
    assert same_bits(float(got), ulpscope.reference(x, "sum").rounded)


@cuda
@pytest.mark.parametrize("fmt", ["fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("dist", ["normal", "ill_conditioned:1e30", "log_uniform", "exact_cancellation",
                                  "with_nan"])
def test_cuda_results_are_the_references(fmt, dist):
    for n in (0, 1, 33, 100003):
        x, y = ulpscope.generate(dist, n, fmt, seed=7, with_y=True, like="torch")
        xd, yd = x.cuda(), y.cuda()
        for op in OPS:
            got = call(op, xd, yd)
            if op != "mean_var":
                assert got.device == xd.device
            want = expected(op, x, y if op == "dot" else None)
            floats = as_floats(got)
            assert len(floats) == len(want)
            assert all(same_bits(a, b) for a, b in zip(floats, want)), (op, fmt, dist, n, floats, want)


@cuda
def test_cuda_rows_streams_and_fp64():
    x = ulpscope.generate("llm_activations", 64 * 4096, "bf16", seed=1, like="torch").reshape(64, 4096)
    xd = x.cuda()
    want = ulpscope.reference(x, "sumsq", out_dtype="fp64", axis=-1).rounded
    s = torch.cuda.Stream()
    got = exact.sumsq(xd, dim=-1, out_dtype=torch.float64, stream=s)
    s.synchronize()
    assert got.shape == (64,) and got.dtype == torch.float64
    assert all(same_bits(a, b) for a, b in zip(got.cpu().tolist(), want))
    again = exact.sumsq(xd, dim=-1, out_dtype="fp64")
    assert torch.equal(again, got)
    mean, var = exact.mean_var(xd, dim=-1)
    assert mean.shape == (64,) and mean.dtype == torch.bfloat16
