"""Correctly rounded reductions as operations (docs/python.md, "Exact reductions").

    import torch, ulpscope.exact
    x = torch.randn(1 << 20, dtype=torch.float16, device="cuda")
    s = ulpscope.exact.sum(x)                 # fp16 tensor: the exact sum rounded once
    m, v = ulpscope.exact.mean_var(x, dim=-1)  # per row of the last dimension

Every output is the exact value rounded once to the output format, so it has
the same bits on any launch, GPU and stream. On a CUDA tensor the suite's
`exact` kernels run on the tensor's memory and on the current stream of its
device (or `stream=`, a torch.cuda.Stream or a raw cudaStream_t as an int),
asynchronously like torch's own ops; the result is a tensor on that device.
Anything else (CPU tensors, NumPy arrays) is reduced on the host by the
references (ulpscope.reference) and comes back in the same kind of array.

dim: None reduces the whole tensor; -1 (the last dimension) each row.
out_dtype: the output format (default the input's; fp32 for fp8 inputs;
"fp64" allowed), as a name or a torch dtype.
"""

import math

import numpy as np

from . import _ulpscope
from ._arrays import INPUT_DTYPES, OUTPUT_DTYPES, _torch_format, from_bits, is_torch_tensor

__all__ = ["sum", "mean", "dot", "sumsq", "norm2", "mean_var", "has_cuda"]

_TORCH_NAMES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
                "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}


def has_cuda():
    """Whether this build has the CUDA kernels (else every call reduces on the host)."""
    return bool(_ulpscope._has_cuda)


def _format_name(out_dtype):
    if out_dtype is None or isinstance(out_dtype, str):
        return out_dtype
    name = str(out_dtype).replace("torch.", "")
    for fmt, torch_name in _TORCH_NAMES.items():
        if torch_name == name:
            return fmt
    raise ValueError(f"out_dtype {out_dtype!r} is not an output format ({', '.join(OUTPUT_DTYPES)})")


def _check_dim(ndim, dim):
    if dim is not None and (ndim == 0 or dim not in (-1, ndim - 1)):
        raise ValueError(f"dim={dim!r}: None (the whole tensor) or -1 (each row of the last dimension)")


def _rows_cols(shape, dim):
    if dim is None:
        return 1, math.prod(shape), ()
    return math.prod(shape[:-1]), shape[-1], shape[:-1]


# The default output format of each input format (docs/spec.md, "Ops"), read once.
_DEFAULT_OUT = {fmt: _ulpscope._default_out_dtype(fmt) for fmt in INPUT_DTYPES}


def _torch_stream(stream, device):
    """A torch.cuda.Stream (None: the device's current stream; an int: a cudaStream_t)."""
    import torch

    if stream is None:
        return torch.cuda.current_stream(device)
    if isinstance(stream, int):
        return torch.cuda.ExternalStream(stream, device=device)
    return stream


def _on_device(op, x, y, dim, out_dtype, stream):
    import torch

    fmt = _torch_format(x)
    if y is not None and (y.dtype != x.dtype or y.shape != x.shape or y.device != x.device):
        raise ValueError(f"dot: y ({y.dtype}, {tuple(y.shape)}, {y.device}) must match x "
                         f"({x.dtype}, {tuple(x.shape)}, {x.device})")
    out = out_dtype or _DEFAULT_OUT[fmt]
    if out not in _TORCH_NAMES:
        raise ValueError(f"unknown out_dtype {out!r} (one of {', '.join(OUTPUT_DTYPES)})")
    rows, cols, out_shape = _rows_cols(x.shape, dim)
    per_row = 2 if op == "mean_var" else 1
    if not x.is_contiguous():
        x = x.contiguous()
    if y is not None and not y.is_contiguous():
        y = y.contiguous()
    result = torch.empty(rows * per_row, dtype=getattr(torch, _TORCH_NAMES[out]), device=x.device)
    s = _torch_stream(stream, x.device)
    args = (op, x.data_ptr(), 0 if y is None else y.data_ptr(), fmt, rows, cols, result.data_ptr(), out,
            s.cuda_stream)
    if x.device.index == torch.cuda.current_device():
        _ulpscope._exact_reduce(*args)
    else:
        with torch.cuda.device(x.device):
            _ulpscope._exact_reduce(*args)
    if stream is not None:
        # Memory of the current stream used on another one: the caching
        # allocator must not reuse it before that stream's kernels are done.
        for t in (x, y, result):
            if t is not None:
                t.record_stream(s)
    if op == "mean_var":
        pair = result.view(rows, 2)
        return pair[:, 0].reshape(out_shape), pair[:, 1].reshape(out_shape)
    return result.reshape(out_shape)


def _on_host(op, x, y, dim, out_dtype):
    from . import reference

    refs = reference(x, op, out_dtype=out_dtype, y=y, axis=dim)
    out = refs.out_dtype
    values = np.asarray(refs.rounded, dtype=np.float64)
    bits = _ulpscope._round_to_bits(values.reshape(-1), out, "satfinite").reshape(values.shape)
    like = "torch" if is_torch_tensor(x) else "numpy"
    if out == "fp64":
        result = values
        if like == "torch":
            import torch

            result = torch.from_numpy(values)
    else:
        result = from_bits(bits, out, like)
    if op == "mean_var":
        return result[..., 0], result[..., 1]
    return result


def _reduce(op, x, y=None, dim=None, out_dtype=None, stream=None):
    out_dtype = _format_name(out_dtype)
    _check_dim(len(x.shape) if hasattr(x, "shape") else np.ndim(x), dim)
    if is_torch_tensor(x) and x.device.type == "cuda":
        if not has_cuda():
            raise RuntimeError("this ulpscope was built without CUDA: ulpscope.exact cannot run on a CUDA tensor "
                               "(rebuild where nvcc is found, or pass x.cpu())")
        return _on_device(op, x, y, dim, out_dtype, stream)
    if stream is not None:
        raise ValueError("stream= applies to CUDA tensors only")
    return _on_host(op, x, y, dim, out_dtype)


def sum(x, dim=None, *, out_dtype=None, stream=None):  # noqa: A001  (the op's name)
    """The sum, correctly rounded."""
    return _reduce("sum", x, None, dim, out_dtype, stream)


def mean(x, dim=None, *, out_dtype=None, stream=None):
    """The mean (the exact sum over n, rounded once)."""
    return _reduce("mean", x, None, dim, out_dtype, stream)


def dot(x, y, dim=None, *, out_dtype=None, stream=None):
    """The dot product of x and y (same shape and format), correctly rounded."""
    return _reduce("dot", x, y, dim, out_dtype, stream)


def sumsq(x, dim=None, *, out_dtype=None, stream=None):
    """The sum of squares, correctly rounded."""
    return _reduce("sumsq", x, None, dim, out_dtype, stream)


def norm2(x, dim=None, *, out_dtype=None, stream=None):
    """The Euclidean norm (the square root of the exact sum of squares, rounded once)."""
    return _reduce("norm2", x, None, dim, out_dtype, stream)


def mean_var(x, dim=None, *, out_dtype=None, stream=None):
    """(mean, population variance), each rounded once from exact integer sums."""
    return _reduce("mean_var", x, None, dim, out_dtype, stream)
