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
Other device arrays (the CUDA array interface: CuPy, Numba; DLPack: JAX,
CuPy) are read in place too (_device_arrays.py); the result is a CuPy array
for a CuPy input, else a torch tensor (a CuPy array where torch is missing).
Anything else (CPU tensors, NumPy arrays) is reduced on the host by the
references (ulpscope.reference) and comes back in the same kind of array.

dim: None reduces the whole tensor; -1 (the last dimension) each row.
out_dtype: the output format (default the input's; fp32 for fp8 inputs;
"fp64" allowed), as a name or a torch dtype.
dtype: the input format of an array whose items do not say it (bf16 and fp8
as 2- and 1-byte integers: NumPy, CuPy, Numba).
"""

import math
import sys

import numpy as np

from . import _device_arrays, _ulpscope
from ._arrays import _BITS_DTYPE, INPUT_DTYPES, OUTPUT_DTYPES, from_bits, is_torch_tensor

__all__ = ["sum", "mean", "dot", "sumsq", "norm2", "mean_var", "has_cuda"]

_OP_CODE = dict(_ulpscope._exact_op_codes)
_FORMAT_CODE = dict(_ulpscope._format_codes)
_MEAN_VAR = _OP_CODE["mean_var"]
_OP_NAME = {code: name for name, code in _OP_CODE.items()}

_TORCH_NAMES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
                "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}
# The default output format of each input format (docs/spec.md, "Ops"), read once.
_DEFAULT_OUT = {fmt: _ulpscope._default_out_dtype(fmt) for fmt in INPUT_DTYPES}


def has_cuda():
    """Whether this build has the CUDA kernels (else every call reduces on the host)."""
    return bool(_ulpscope._has_cuda)


class _Torch:
    """What the CUDA-tensor path needs from torch, looked up once (torch is imported by the caller,
    never by this module): the tensor type, the formats keyed by torch dtype, the current stream."""

    def __init__(self, torch):
        self.torch = torch
        self.Tensor = torch.Tensor
        self.input = {}   # torch dtype -> (format code, default output (code, torch dtype))
        self.output = {}  # torch dtype or format name -> (code, torch dtype)
        for fmt, name in _TORCH_NAMES.items():
            dt = getattr(torch, name, None)  # fp8 from torch 2.1 on
            if dt is None:
                continue
            self.output[dt] = self.output[fmt] = (_FORMAT_CODE[fmt], dt)
        for fmt in INPUT_DTYPES:
            dt = getattr(torch, _TORCH_NAMES[fmt], None)
            if dt is not None and _DEFAULT_OUT[fmt] in self.output:
                self.input[dt] = (_FORMAT_CODE[fmt], self.output[_DEFAULT_OUT[fmt]])
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.current_stream = raw if raw is not None else (lambda d: torch.cuda.current_stream(d).cuda_stream)


_torch = None


def _torch_if_imported():
    global _torch
    if _torch is None and "torch" in sys.modules:
        _torch = _Torch(sys.modules["torch"])
    return _torch


def _format_name(out_dtype):
    if out_dtype is None or isinstance(out_dtype, str):
        return out_dtype
    name = str(out_dtype).replace("torch.", "")
    for fmt, torch_name in _TORCH_NAMES.items():
        if torch_name == name:
            return fmt
    raise ValueError(f"out_dtype {out_dtype!r} is not an output format ({', '.join(OUTPUT_DTYPES)})")


def _check_out(out):
    if out not in _FORMAT_CODE:
        raise ValueError(f"unknown out_dtype {out!r} (one of {', '.join(OUTPUT_DTYPES)})")


def _rows_cols(shape, dim):
    """(rows, cols, the outputs' shape) of a reduction over dim (None: everything; -1: each row)."""
    if dim is None:
        return 1, math.prod(shape), ()
    if len(shape) == 0 or dim not in (-1, len(shape) - 1):
        raise ValueError(f"dim={dim!r}: None (the whole tensor) or -1 (each row of the last dimension)")
    return math.prod(shape[:-1]), shape[-1], tuple(shape[:-1])


def _stream_handle(stream):
    """A cudaStream_t from an int or any stream object with .cuda_stream (torch) or .ptr (CuPy)."""
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise ValueError(f"stream={stream!r}: a cudaStream_t (an int), a torch.cuda.Stream or a CuPy stream")


def _split(op, result, rows, out_shape):
    if op == _MEAN_VAR:
        pair = result.reshape(rows, 2)
        return pair[:, 0].reshape(out_shape), pair[:, 1].reshape(out_shape)
    return result.reshape(out_shape)


def _on_torch_device(t, op, x, y, dim, out_dtype, stream):
    """The hot path: a CUDA tensor, one call into the extension with its pointers."""
    into = t.input.get(x.dtype)
    if into is None:
        raise ValueError(f"{x.dtype} is not an input format of ulpscope ({', '.join(INPUT_DTYPES)})")
    in_code, (out_code, out_torch) = into
    if out_dtype is not None:
        out = t.output.get(out_dtype)
        if out is None:
            _check_out(_format_name(out_dtype))
            raise ValueError(f"out_dtype {out_dtype!r} is not a dtype of this torch")
        out_code, out_torch = out
    if dim is None:
        rows, cols, out_shape = 1, x.numel(), ()
    else:
        rows, cols, out_shape = _rows_cols(x.shape, dim)
    if not x.is_contiguous():
        x = x.contiguous()
    y_ptr = 0
    if y is not None:
        if y.dtype != x.dtype or y.shape != x.shape or y.device != x.device:
            raise ValueError(f"dot: y ({y.dtype}, {tuple(y.shape)}, {y.device}) must match x "
                             f"({x.dtype}, {tuple(x.shape)}, {x.device})")
        if not y.is_contiguous():
            y = y.contiguous()
        y_ptr = y.data_ptr()
    # Allocated in the outputs' shape (mean_var: (mean, variance) pairs), so
    # that no view is made after the launch: each torch call costs microseconds.
    result = x.new_empty(out_shape + (2,) if op == _MEAN_VAR else out_shape, dtype=out_torch)
    device = x.get_device()
    s = t.current_stream(device) if stream is None else _stream_handle(stream)
    _ulpscope._exact_launch(op, x.data_ptr(), y_ptr, in_code, rows, cols, result.data_ptr(), out_code, s, device)
    if stream is not None and s != t.current_stream(device):
        # Memory of the current stream used on another one: the caching
        # allocator must not reuse it before that stream's kernels are done.
        other = t.torch.cuda.ExternalStream(s, device=x.device)
        for a in (x, y, result):
            if a is not None:
                a.record_stream(other)
    return result.unbind(-1) if op == _MEAN_VAR else result


def _empty_like_framework(x, count, out, device, stream):
    """The output array: CuPy for a CuPy input, else torch (CuPy where torch is missing). bf16 and fp8
    outputs in CuPy are uint16 / uint8 bit patterns, as in NumPy."""
    module = type(x).__module__.split(".")[0]
    torch_ = None if module == "cupy" else _torch_if_imported()
    if torch_ is None and module != "cupy":
        try:
            import torch as torch_module  # noqa: F401  (the output's framework)

            torch_ = _torch_if_imported()
        except ImportError:
            torch_ = None
    if torch_ is not None:
        torch = torch_.torch
        if out not in torch_.output:
            raise ValueError(f"out_dtype {out!r} has no dtype in this torch ({torch.__version__})")
        _, dt = torch_.output[out]
        result = torch.empty(count, dtype=dt, device=torch.device("cuda", device))
        if stream != torch_.current_stream(device):
            result.record_stream(torch.cuda.ExternalStream(stream, device=result.device))
        return result, result.data_ptr()
    try:
        import cupy
    except ImportError:
        raise RuntimeError("ulpscope.exact returns device results as torch tensors or CuPy arrays: neither "
                           "is installed") from None
    with cupy.cuda.Device(device):
        result = cupy.empty(count, dtype=_BITS_DTYPE[out])
    return result, result.data.ptr


def _on_device_array(op, x, a, y, dim, out_dtype, stream, dtype):
    """An array of another framework (CUDA array interface or DLPack) whose memory is on a device."""
    if not has_cuda():
        raise RuntimeError("this ulpscope was built without CUDA: ulpscope.exact cannot run on device memory "
                           "(rebuild where nvcc is found, or copy the array to the host)")
    fmt = _device_arrays.format_of(a, dtype)
    s = (a.stream if stream is None else stream) or 0
    y_ptr = 0
    if y is not None:
        ya = _device_arrays.describe(y, s)
        if (ya is None or _device_arrays.format_of(ya, dtype) != fmt or ya.shape != a.shape
                or ya.device != a.device):
            raise ValueError(f"dot: y must be a device array like x ({fmt}, shape {a.shape}, device {a.device})")
        y_ptr = ya.ptr
    out = out_dtype or _DEFAULT_OUT[fmt]
    _check_out(out)
    rows, cols, out_shape = _rows_cols(a.shape, dim)
    count = rows * 2 if op == _MEAN_VAR else rows
    result, out_ptr = _empty_like_framework(x, count, out, a.device, s)
    _ulpscope._exact_launch(op, a.ptr, y_ptr, _FORMAT_CODE[fmt], rows, cols, out_ptr, _FORMAT_CODE[out], s, a.device)
    return _split(op, result, rows, out_shape)


def _on_host(op, x, y, dim, out_dtype, dtype):
    from . import reference

    refs = reference(x, _OP_NAME[op], out_dtype=out_dtype, y=y, axis=dim, dtype=dtype)
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
    if op == _MEAN_VAR:
        return result[..., 0], result[..., 1]
    return result


def _reduce(op, x, y, dim, out_dtype, stream, dtype):
    t = _torch if _torch is not None else _torch_if_imported()
    if t is not None and isinstance(x, t.Tensor):
        if x.is_cuda:
            if dtype is not None:
                raise ValueError("dtype= is for arrays whose items do not say their format; a tensor's dtype does")
            if not has_cuda():
                raise RuntimeError("this ulpscope was built without CUDA: ulpscope.exact cannot run on a CUDA tensor "
                                   "(rebuild where nvcc is found, or pass x.cpu())")
            return _on_torch_device(t, op, x, y, dim, out_dtype, stream)
    else:
        caller_stream = None if stream is None else _stream_handle(stream)
        a = _device_arrays.describe(x, caller_stream)
        if a is not None:
            return _on_device_array(op, x, a, y, dim, _format_name(out_dtype), caller_stream, dtype)
    if stream is not None:
        raise ValueError("stream= applies to device arrays only")
    _rows_cols(np.shape(x) if not hasattr(x, "shape") else tuple(x.shape), dim)
    return _on_host(op, x, y, dim, _format_name(out_dtype), dtype)


_SUM, _MEAN, _DOT, _SUMSQ, _NORM2 = (_OP_CODE[n] for n in ("sum", "mean", "dot", "sumsq", "norm2"))


def sum(x, dim=None, *, out_dtype=None, stream=None, dtype=None):  # noqa: A001  (the op's name)
    """The sum, correctly rounded."""
    return _reduce(_SUM, x, None, dim, out_dtype, stream, dtype)


def mean(x, dim=None, *, out_dtype=None, stream=None, dtype=None):
    """The mean (the exact sum over n, rounded once)."""
    return _reduce(_MEAN, x, None, dim, out_dtype, stream, dtype)


def dot(x, y, dim=None, *, out_dtype=None, stream=None, dtype=None):
    """The dot product of x and y (same shape and format), correctly rounded."""
    return _reduce(_DOT, x, y, dim, out_dtype, stream, dtype)


def sumsq(x, dim=None, *, out_dtype=None, stream=None, dtype=None):
    """The sum of squares, correctly rounded."""
    return _reduce(_SUMSQ, x, None, dim, out_dtype, stream, dtype)


def norm2(x, dim=None, *, out_dtype=None, stream=None, dtype=None):
    """The Euclidean norm (the square root of the exact sum of squares, rounded once)."""
    return _reduce(_NORM2, x, None, dim, out_dtype, stream, dtype)


def mean_var(x, dim=None, *, out_dtype=None, stream=None, dtype=None):
    """(mean, population variance), each rounded once from exact integer sums."""
    return _reduce(_MEAN_VAR, x, None, dim, out_dtype, stream, dtype)
