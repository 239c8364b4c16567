"""Device memory that another framework owns, read in place: objects with the CUDA array interface
(CuPy, Numba, PyTorch; versions 0 to 3) and objects with DLPack (JAX, CuPy, PyTorch) whose memory is on
a CUDA device (docs/python.md, "Exact reductions as operations").

describe(x) gives a DeviceArray (the pointer, shape, items, device and the producer's stream) or None
when x is not device memory (NumPy, host DLPack): those go through the host. Only C-contiguous memory
is taken (nothing is copied); bf16 and fp8 arrive as 2- and 1-byte integers where the producer has no
such type (CuPy, Numba), with dtype= naming the format (format_of).
"""

import math
from collections import namedtuple

import numpy as np

from . import _ulpscope

# ptr: the first element's address; shape: a tuple; items: the NumPy dtype of its items (bf16 and fp8 as
# uint16 / uint8); fmt: ulpscope's input format where the items say it, else None (integers: dtype= names
# it, format_of); device: the CUDA device; stream: the cudaStream_t (an int) the producer's work is ordered
# on, or None when it names none; owner: what keeps the memory (the array, or a DLPack capsule).
DeviceArray = namedtuple("DeviceArray", "ptr shape items fmt device stream owner")

_ITEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}
# Formats an integer item of this width may hold, named with dtype=.
_BITS_OF_WIDTH = {2: ("bf16",), 1: ("fp8_e4m3", "fp8_e5m2")}

# DLPack (dlpack.h v1.1): device types and element type codes, with the NumPy dtype of the items' bits.
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
_DLPACK_FLOATS = {(2, 32): ("fp32", np.float32), (2, 16): ("fp16", np.float16), (4, 16): ("bf16", np.uint16),
                  (10, 8): ("fp8_e4m3", np.uint8), (12, 8): ("fp8_e5m2", np.uint8)}
_DLPACK_INTEGERS = {(0, 8): np.int8, (0, 16): np.int16, (1, 8): np.uint8, (1, 16): np.uint16}


def _check_c_contiguous(shape, strides, itemsize, what, unit="bytes"):
    """strides (None: C-contiguous) in `unit` (bytes, or elements for DLPack) must be the row-major ones;
    dimensions of extent 1 (and arrays with no elements) may have any stride."""
    if strides is None or math.prod(shape) == 0:
        return
    if len(strides) != len(shape):
        raise ValueError(f"{what}: {len(strides)} strides for {len(shape)} dimensions")
    expected = itemsize if unit == "bytes" else 1
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != expected:
            raise ValueError(f"{what} is not C-contiguous (strides {tuple(strides)} {unit} for shape "
                             f"{tuple(shape)}): ulpscope reads device memory in place, so make it contiguous first")
        expected *= extent


def parse_cuda_array_interface(cai):
    """(ptr, shape, items, format or None, stream) of a __cuda_array_interface__ dict (Numba's
    specification, versions 0 to 3); stream is None where the producer names none."""
    what = "the __cuda_array_interface__ array"
    if not isinstance(cai, dict):
        raise ValueError(f"{what}: __cuda_array_interface__ is a {type(cai).__name__}, not a dict")
    version = cai.get("version", 0)
    if not isinstance(version, int) or not 0 <= version <= 3:
        raise ValueError(f"{what}: version {version!r} is not one of 0 to 3")
    for key in ("shape", "typestr", "data"):
        if key not in cai:
            raise ValueError(f"{what} has no '{key}'")
    shape = tuple(int(e) for e in cai["shape"])
    if any(e < 0 for e in shape):
        raise ValueError(f"{what}: negative extent in shape {shape}")
    typestr = cai["typestr"]
    if not isinstance(typestr, str) or len(typestr) < 3 or typestr[0] not in "<>|=" or not typestr[2:].isdigit():
        raise ValueError(f"{what}: typestr {typestr!r} is not of the form '<f4'")
    kind, width = typestr[1], int(typestr[2:])
    if typestr[0] == ">" and width > 1:
        raise ValueError(f"{what}: big-endian items ({typestr!r}) are not read")
    if kind == "f" and width in (4, 2):
        fmt, items = ("fp32", np.float32) if width == 4 else ("fp16", np.float16)
    elif kind in "iuV" and width in _BITS_OF_WIDTH:
        fmt, items = None, {"i": {1: np.int8, 2: np.int16}, "u": {1: np.uint8, 2: np.uint16},
                            "V": {1: np.uint8, 2: np.uint16}}[kind][width]
    else:
        raise ValueError(f"{what}: items {typestr!r} are none of ulpscope's input formats "
                         "(float32, float16; bf16 and fp8 as 2- and 1-byte integers with dtype=)")
    if cai.get("mask") is not None:
        raise ValueError(f"{what} has a mask: masked arrays are not read")
    data = cai["data"]
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ValueError(f"{what}: data {data!r} is not (pointer, read-only)")
    ptr = int(data[0] or 0)
    if ptr == 0 and math.prod(shape) > 0:
        raise ValueError(f"{what}: a null pointer for {math.prod(shape)} elements")
    _check_c_contiguous(shape, cai.get("strides"), width, what)
    stream = cai.get("stream") if version >= 3 else None
    if stream is not None and (not isinstance(stream, int) or isinstance(stream, bool) or stream == 0):
        raise ValueError(f"{what}: stream {stream!r} is not a cudaStream_t (an int other than 0)")
    return ptr, shape, np.dtype(items), fmt, stream


def parse_dlpack(info):
    """(ptr, shape, items, format or None) of what _ulpscope._dlpack_describe read from a DLPack capsule."""
    what = "the DLPack array"
    code, bits, lanes = info["code"], info["bits"], info["lanes"]
    if lanes != 1:
        raise ValueError(f"{what}: vector items ({lanes} lanes) are not read")
    if (code, bits) in _DLPACK_FLOATS:
        fmt, items = _DLPACK_FLOATS[code, bits]
    elif (code, bits) in _DLPACK_INTEGERS:
        fmt, items = None, _DLPACK_INTEGERS[code, bits]
    else:
        raise ValueError(f"{what}: items of DLPack type code {code}, {bits} bits are none of ulpscope's input "
                         "formats (float32, float16, bfloat16, float8_e4m3fn, float8_e5m2)")
    shape = tuple(int(e) for e in info["shape"])
    if any(e < 0 for e in shape):
        raise ValueError(f"{what}: negative extent in shape {shape}")
    _check_c_contiguous(shape, info["strides"], bits // 8, what, unit="elements")
    return int(info["data"]), shape, np.dtype(items), fmt


def format_of(a, dtype):
    """The input format of a DeviceArray: its items' own, or (integer items) the one dtype= names."""
    what = "the device array"
    if a.fmt is not None:
        if dtype is not None and dtype != a.fmt:
            raise ValueError(f"{what} holds {a.fmt} values, dtype={dtype!r} was asked: convert it first")
        return a.fmt
    width = a.items.itemsize
    if dtype is None:
        raise ValueError(f"{what}: name the format of its {width}-byte integers with dtype= "
                         f"({' or '.join(_BITS_OF_WIDTH[width])})")
    if dtype not in _BITS_OF_WIDTH[width]:
        raise ValueError(f"{what}: {dtype} values are {_ITEM_BYTES.get(dtype, '?')}-byte items, the array's are "
                         f"{width} bytes")
    return dtype


def _pointer_device(ptr):
    if not _ulpscope._has_cuda:
        raise RuntimeError("this ulpscope was built without CUDA: it cannot read device memory (rebuild where nvcc "
                           "is found, or copy the array to the host)")
    device = _ulpscope._pointer_device(ptr)
    if device < 0:
        raise ValueError("the __cuda_array_interface__ array's pointer is not device memory")
    return device


def describe(x, stream=None):
    """x as a DeviceArray, or None when x is not on a CUDA device. stream: the cudaStream_t the caller will
    work on, handed to __dlpack__ so that the producer orders its pending work before it (DLPack: 1 is the
    legacy default stream, which 0 or None here means)."""
    try:
        cai = x.__cuda_array_interface__
    except (AttributeError, RuntimeError, TypeError):  # none (torch: a CPU tensor, or bf16, which DLPack reads)
        cai = None
    if cai is not None:
        ptr, shape, items, fmt, producer_stream = parse_cuda_array_interface(cai)
        device = _pointer_device(ptr) if math.prod(shape) > 0 else -1
        return DeviceArray(ptr, shape, items, fmt, device, producer_stream, x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device_type, device_id = x.__dlpack_device__()
        if int(device_type) not in (KDL_CUDA, KDL_CUDA_MANAGED):
            return None
        capsule = x.__dlpack__(stream=stream or 1)
        ptr, shape, items, fmt = parse_dlpack(_ulpscope._dlpack_describe(capsule))
        return DeviceArray(ptr, shape, items, fmt, int(device_id), stream, capsule)
    return None


def to_host(a):
    """A DeviceArray's items as a NumPy array of its shape, copied once the producer's stream's earlier
    work is done."""
    if not _ulpscope._has_cuda:
        raise RuntimeError("this ulpscope was built without CUDA: it cannot read device memory")
    count = math.prod(a.shape)
    if count == 0:
        return np.empty(a.shape, dtype=a.items)
    raw = _ulpscope._copy_to_host(a.ptr, count * a.items.itemsize, a.stream or 0, a.device)
    return np.frombuffer(raw, dtype=a.items).reshape(a.shape).copy()
