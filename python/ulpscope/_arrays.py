"""Arrays in and out of the core: NumPy arrays, torch tensors (CPU, or copied
from the GPU), device arrays of other frameworks (the CUDA array interface,
DLPack on a CUDA device; copied to the host, _device_arrays.py) and anything
NumPy can read through DLPack or the buffer protocol, as the bit patterns of
one of ulpscope's input formats.

NumPy has no bf16 or fp8: give those as uint16 / uint8 bit patterns with
``dtype="bf16"`` (or ``"fp8_e4m3"``, ``"fp8_e5m2"``), or as floats whose values
the format holds exactly with the dtype named; torch tensors carry their own.
"""

import numpy as np

from . import _device_arrays, _ulpscope

INPUT_DTYPES = ("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
OUTPUT_DTYPES = ("fp64",) + INPUT_DTYPES

# Each format's bits as NumPy holds them.
_BITS_DTYPE = {"fp32": np.float32, "fp16": np.float16, "bf16": np.uint16, "fp8_e4m3": np.uint8,
               "fp8_e5m2": np.uint8, "fp64": np.float64}
_NUMPY_FORMAT = {np.dtype(np.float32): "fp32", np.dtype(np.float16): "fp16"}
_TORCH_FORMAT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float8_e4m3fn": "fp8_e4m3",
                 "float8_e5m2": "fp8_e5m2"}


def is_torch_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "dtype") and hasattr(x, "device")


def _torch_format(t):
    name = str(t.dtype).replace("torch.", "")
    if name not in _TORCH_FORMAT:
        raise ValueError(f"torch.{name} is not an input format of ulpscope ({', '.join(INPUT_DTYPES)})")
    return _TORCH_FORMAT[name]


def _torch_bits(t):
    """A torch tensor's values as (NumPy bit patterns, format); a GPU tensor is copied to the host."""
    import torch

    fmt = _torch_format(t)
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    if fmt == "bf16":
        return t.view(torch.int16).numpy().view(np.uint16), fmt
    if fmt.startswith("fp8"):
        return t.view(torch.uint8).numpy(), fmt
    return t.numpy(), fmt


def _check_format(name, what="dtype"):
    if name not in INPUT_DTYPES:
        if name == "fp64":
            raise ValueError("fp64 is an output format only: give the values in fp32, fp16, bf16 or fp8")
        raise ValueError(f"unknown {what} {name!r} (one of {', '.join(INPUT_DTYPES)})")


def to_bits(x, dtype=None):
    """(C-contiguous NumPy array of x's bit patterns, format name). The shape is kept."""
    if dtype is not None:
        _check_format(dtype)
    if is_torch_tensor(x):
        bits, fmt = _torch_bits(x)
        if dtype is not None and dtype != fmt:
            raise ValueError(f"the tensor is {fmt}, dtype={dtype!r} was asked: convert it first")
        return bits, fmt
    if not isinstance(x, np.ndarray):
        device_array = _device_arrays.describe(x)
        if device_array is not None:
            # Device memory of another framework (CUDA array interface, DLPack): copied to the host, its
            # items as NumPy holds them (bf16 and fp8 as uint16 / uint8, which their format names).
            x = _device_arrays.to_host(device_array)
            if dtype is None and device_array.fmt in ("bf16", "fp8_e4m3", "fp8_e5m2"):
                dtype = device_array.fmt
        elif hasattr(x, "__dlpack__"):
            x = np.from_dlpack(x)
        else:
            x = np.asarray(x)
    x = np.ascontiguousarray(x)
    if dtype is None:
        if x.dtype in _NUMPY_FORMAT:
            return x, _NUMPY_FORMAT[x.dtype]
        if x.dtype == np.float64:
            raise ValueError("float64 is an output format only: pass dtype='fp32' (or another input format) "
                             "for values the format holds exactly, or convert with x.astype(np.float32)")
        raise ValueError(f"cannot tell the format of a {x.dtype} array: name it with dtype= "
                         f"({', '.join(INPUT_DTYPES)}; bf16 and fp8 as uint16 / uint8 bit patterns)")
    want = np.dtype(_BITS_DTYPE[dtype])
    if x.dtype == want:
        return x, dtype
    if x.dtype.kind in "iu" and x.dtype.itemsize == want.itemsize and dtype in ("bf16", "fp8_e4m3", "fp8_e5m2"):
        return x.view(want), dtype
    if x.dtype.kind in "fiu":
        # Values the format must hold exactly (no silent rounding of inputs).
        values = x.astype(np.float64)
        bits = _ulpscope._round_to_bits(values.reshape(-1), dtype, "nosat")
        back = _ulpscope._decode(bits, dtype)
        same = (back == values.reshape(-1)) | (np.isnan(back) & np.isnan(values.reshape(-1)))
        if not same.all():
            i = int(np.flatnonzero(~same)[0])
            raise ValueError(f"element {i} ({values.reshape(-1)[i]!r}) is not a {dtype} value: round the input "
                             f"into {dtype} first (ulpscope never rounds inputs behind your back)")
        return bits.reshape(x.shape), dtype
    raise ValueError(f"cannot read a {x.dtype} array as {dtype}")


def from_bits(bits, fmt, like="numpy"):
    """Bit patterns of a format as the framework's array: NumPy (bf16 and fp8 stay uint16 / uint8
    bits), "float" (NumPy, every format widened exactly: float32 for fp32 and the narrower formats of
    no NumPy type), or "torch" (the format's own torch dtype)."""
    if like == "numpy":
        return bits
    if like == "float":
        if fmt in ("fp32", "fp16", "fp64"):
            return bits
        return _ulpscope._decode(np.ascontiguousarray(bits).reshape(-1), fmt).astype(np.float32).reshape(
            bits.shape)
    if like == "torch":
        import torch

        bits = np.ascontiguousarray(bits)
        if fmt == "bf16":
            # torch has no uint16 (before 2.3): the same bits as int16.
            return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
        t = torch.from_numpy(bits)
        if fmt == "fp8_e4m3":
            return t.view(torch.float8_e4m3fn)
        if fmt == "fp8_e5m2":
            return t.view(torch.float8_e5m2)
        return t
    raise ValueError(f"unknown like={like!r} (numpy, float or torch)")


def to_float64(value):
    """A result (torch tensor, NumPy array, scalar, sequence) as a flat float64 array, widened exactly."""
    if is_torch_tensor(value):
        import torch

        return value.detach().to(device="cpu", dtype=torch.float64).numpy().reshape(-1)
    if not isinstance(value, np.ndarray):
        device_array = _device_arrays.describe(value)
        if device_array is not None:
            bits = _device_arrays.to_host(device_array)
            fmt = device_array.fmt
            if fmt in ("bf16", "fp8_e4m3", "fp8_e5m2"):
                return _ulpscope._decode(np.ascontiguousarray(bits).reshape(-1), fmt)
            value = bits
    return np.asarray(value, dtype=np.float64).reshape(-1)
