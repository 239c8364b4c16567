"""Device arrays of other frameworks (the CUDA array interface, DLPack) and the torch fast path of
ulpscope.exact, without a GPU: the interfaces are parsed and validated on host memory dressed as device
memory, and the arguments the extension would get are checked with a stand-in for the launch."""

import numpy as np
import pytest

import ulpscope
import ulpscope.exact as exact
from ulpscope import _device_arrays, _ulpscope
from ulpscope._device_arrays import format_of, parse_cuda_array_interface, parse_dlpack

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="no torch")


def cai_of(a, version=3, **changes):
    """The __cuda_array_interface__ a CuPy array of a's layout would give (NumPy's own interface, which
    has the same fields, on host memory)."""
    d = dict(a.__array_interface__)
    d = {"shape": d["shape"], "typestr": d["typestr"], "data": d["data"], "strides": d["strides"], "version": version}
    if version >= 3:
        d["stream"] = 1
    d.update(changes)
    return d


class FakeCudaArray:
    """An object with only the CUDA array interface (as Numba's device arrays have)."""

    def __init__(self, a, **changes):
        self.a = a
        self.__cuda_array_interface__ = cai_of(a, **changes)


class FakeCudaDLPack:
    """A NumPy array's DLPack capsule, announced as CUDA memory of device 0."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        self.stream = stream
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return (_device_arrays.KDL_CUDA, 0)


# --- the CUDA array interface ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype,fmt", [(np.float32, "fp32"), (np.float16, "fp16"), (np.uint16, None),
                                       (np.int16, None), (np.uint8, None)])
def test_cai_formats_shape_pointer_and_stream(dtype, fmt):
    a = np.zeros((3, 5), dtype=dtype)
    ptr, shape, items, got_fmt, stream = parse_cuda_array_interface(cai_of(a))
    assert (ptr, shape, items, got_fmt, stream) == (a.ctypes.data, (3, 5), np.dtype(dtype), fmt, 1)


def test_cai_contiguous_strides_and_versions():
    a = np.zeros((4, 6), dtype=np.float16)
    assert parse_cuda_array_interface(cai_of(a, strides=(12, 2)))[1] == (4, 6)  # explicit row-major strides
    assert parse_cuda_array_interface(cai_of(a[:1], strides=(999, 2)))[1] == (1, 6)  # extent 1: any stride
    assert parse_cuda_array_interface(cai_of(a[:, :0], strides=(5, 7)))[1] == (4, 0)  # no elements
    for version in (0, 1, 2):
        assert parse_cuda_array_interface(cai_of(a, version=version))[4] is None  # no stream before v3
    assert parse_cuda_array_interface(cai_of(a, stream=None))[4] is None
    assert parse_cuda_array_interface(cai_of(a, stream=0x7F00DEAD))[4] == 0x7F00DEAD


@pytest.mark.parametrize("changes,message", [
    ({"strides": (2, 8)}, "not C-contiguous"),                    # a transposed view
    ({"strides": (32, 8)}, "not C-contiguous"),                   # every other element
    ({"typestr": "<f8"}, "none of ulpscope's input formats"),
    ({"typestr": "<i4"}, "none of ulpscope's input formats"),
    ({"typestr": ">f4"}, "big-endian"),
    ({"typestr": "f4"}, "not of the form"),
    ({"version": 4}, "version 4"),
    ({"stream": 0}, "stream 0"),
    ({"mask": (1, 2)}, "mask"),
    ({"data": (0, False)}, "null pointer"),
    ({"data": 5}, "not \\(pointer, read-only\\)"),
])
def test_cai_refusals(changes, message):
    a = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=message):
        parse_cuda_array_interface(cai_of(a, **changes))


def test_cai_missing_field():
    d = cai_of(np.zeros(3, dtype=np.float32))
    del d["typestr"]
    with pytest.raises(ValueError, match="no 'typestr'"):
        parse_cuda_array_interface(d)


def test_integer_items_need_their_format_named():
    a = _device_arrays.DeviceArray(1, (4,), np.dtype(np.uint16), None, 0, None, None)
    assert format_of(a, "bf16") == "bf16"
    with pytest.raises(ValueError, match="dtype= \\(bf16\\)"):
        format_of(a, None)
    with pytest.raises(ValueError, match="fp8_e4m3 values are 1-byte items"):
        format_of(a, "fp8_e4m3")
    f = _device_arrays.DeviceArray(1, (4,), np.dtype(np.float32), "fp32", 0, None, None)
    with pytest.raises(ValueError, match="holds fp32 values, dtype='fp16'"):
        format_of(f, "fp16")


# --- DLPack -----------------------------------------------------------------------------------------

def test_dlpack_capsule_of_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    info = _ulpscope._dlpack_describe(a.__dlpack__())
    assert info["data"] == a.ctypes.data and info["shape"] == (3, 4) and info["device_type"] == 1
    assert (info["code"], info["bits"], info["lanes"]) == (2, 32, 1)
    assert info["strides"] in (None, (4, 1))  # in elements
    assert parse_dlpack(info) == (a.ctypes.data, (3, 4), np.dtype(np.float32), "fp32")


def test_dlpack_views_and_refusals():
    a = np.arange(12, dtype=np.float16).reshape(3, 4)
    info = _ulpscope._dlpack_describe(a[1:].__dlpack__())
    assert info["data"] == a[1:].ctypes.data  # the view's first element (data + byte_offset)
    with pytest.raises(ValueError, match="not C-contiguous"):
        parse_dlpack(_ulpscope._dlpack_describe(a.T.__dlpack__()))
    with pytest.raises(ValueError, match="none of ulpscope's input formats"):
        parse_dlpack(_ulpscope._dlpack_describe(np.zeros(3).__dlpack__()))  # float64
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        _ulpscope._dlpack_describe(_capsule_named("other"))
    fake = {"data": 1, "shape": (2,), "strides": None, "code": 2, "bits": 32, "lanes": 4}
    with pytest.raises(ValueError, match="4 lanes"):
        parse_dlpack(fake)
    fp8 = dict(fake, code=10, bits=8, lanes=1)
    assert parse_dlpack(fp8)[2:] == (np.dtype(np.uint8), "fp8_e4m3")
    assert parse_dlpack(dict(fake, code=12, bits=8, lanes=1))[3] == "fp8_e5m2"
    assert parse_dlpack(dict(fake, code=4, bits=16, lanes=1))[3] == "bf16"


def _capsule_named(name):
    import ctypes

    make = ctypes.pythonapi.PyCapsule_New
    make.restype = ctypes.py_object
    make.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    _capsule_named.keep = name.encode()
    return make(ctypes.c_void_p(8), _capsule_named.keep, None)


@needs_torch
def test_dlpack_of_torch_bf16():
    t = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    info = _ulpscope._dlpack_describe(torch.utils.dlpack.to_dlpack(t))
    assert parse_dlpack(info) == (t.data_ptr(), (2, 3), np.dtype(np.uint16), "bf16")


# --- what the package does with them ----------------------------------------------------------------

def test_host_arrays_are_not_device_arrays():
    assert _device_arrays.describe(np.zeros(3, dtype=np.float32)) is None
    assert _device_arrays.describe([1.0, 2.0]) is None
    if torch is not None:
        assert _device_arrays.describe(torch.zeros(3, dtype=torch.bfloat16)) is None


class RefusesItsInterface(FakeCudaDLPack):
    """torch's CUDA bf16 tensors: the CUDA array interface raises TypeError, DLPack reads them."""

    @property
    def __cuda_array_interface__(self):
        raise TypeError("bfloat16 is not supported by __cuda_array_interface__")


def test_an_interface_that_refuses_its_type_falls_back_to_dlpack():
    a = _device_arrays.describe(RefusesItsInterface(np.zeros((2, 3), dtype=np.float16)))
    assert a.fmt == "fp16" and a.shape == (2, 3) and a.device == 0


def test_device_arrays_are_refused_before_any_launch():
    t = np.zeros((8, 8), dtype=np.float32).T
    for call in (lambda x: exact.sum(x), lambda x: ulpscope.reference(x, "sum")):
        with pytest.raises(ValueError, match="not C-contiguous"):
            call(FakeCudaArray(np.ascontiguousarray(t), strides=(4, 32)))
        with pytest.raises(ValueError, match="none of ulpscope's input formats"):
            call(FakeCudaArray(np.zeros(4, dtype=np.float64)))
        with pytest.raises(ValueError, match="not C-contiguous"):
            call(FakeCudaDLPack(t))


def test_dlpack_producer_gets_the_stream():
    fake = FakeCudaDLPack(np.zeros(4, dtype=np.float32))
    a = _device_arrays.describe(fake, stream=0x1234)
    assert fake.stream == 0x1234 and a.device == 0 and a.fmt == "fp32" and a.shape == (4,)
    _device_arrays.describe(fake)
    assert fake.stream == 1  # the legacy default stream, as DLPack spells it


@pytest.mark.skipif(exact.has_cuda(), reason="a build with CUDA reads device memory")
def test_device_memory_without_cuda_is_one_clear_error():
    for x in (FakeCudaArray(np.zeros(4, dtype=np.float32)), FakeCudaDLPack(np.zeros(4, dtype=np.float32))):
        with pytest.raises(RuntimeError, match="built without CUDA"):
            exact.sum(x)
        with pytest.raises(RuntimeError, match="built without CUDA"):
            ulpscope.reference(x, "sum")


# --- the torch fast path, with the launch stood in for ----------------------------------------------

@needs_torch
@pytest.mark.parametrize("op,dim,out_dtype,rows,cols,count,shape", [
    ("sum", None, None, 1, 24, 1, ()),
    ("sumsq", -1, "fp32", 4, 6, 4, (4,)),
    ("mean_var", -1, torch.float64 if torch else None, 4, 6, 8, (4,)),
    ("mean_var", None, None, 1, 24, 2, ()),
])
def test_torch_path_hands_the_pointers_over(monkeypatch, op, dim, out_dtype, rows, cols, count, shape):
    calls = []
    monkeypatch.setattr(_ulpscope, "_exact_launch", lambda *a: calls.append(a), raising=False)
    t = exact._torch_if_imported()
    monkeypatch.setattr(t, "current_stream", lambda device: 0xABC)
    x = torch.zeros((2, 2, 6), dtype=torch.bfloat16)
    result = exact._on_torch_device(t, exact._OP_CODE[op], x.view(4, 6) if dim else x, None, dim, out_dtype,
                                    None)
    (op_code, x_ptr, y_ptr, in_code, r, c, out_ptr, out_code, stream, device), = calls
    assert (op_code, x_ptr, y_ptr, r, c, stream) == (exact._OP_CODE[op], x.data_ptr(), 0, rows, cols, 0xABC)
    assert in_code == _ulpscope._format_codes["bf16"]
    want_out = {None: "bf16", "fp32": "fp32"}.get(out_dtype, "fp64")
    assert out_code == _ulpscope._format_codes[want_out]
    first = result[0] if op == "mean_var" else result
    assert tuple(first.shape) == shape
    assert first.dtype == getattr(torch, {"bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}[want_out])
    base = first if first._base is None else first._base
    while base._base is not None:
        base = base._base
    assert out_ptr == base.data_ptr() and base.numel() == count


@needs_torch
def test_torch_path_copies_a_strided_tensor_and_checks_y(monkeypatch):
    calls = []
    monkeypatch.setattr(_ulpscope, "_exact_launch", lambda *a: calls.append(a), raising=False)
    t = exact._torch_if_imported()
    monkeypatch.setattr(t, "current_stream", lambda device: 0)
    x = torch.zeros((6, 4), dtype=torch.float16).T
    exact._on_torch_device(t, exact._OP_CODE["sum"], x, None, -1, None, None)
    assert calls[0][1] != x.data_ptr() and calls[0][4:6] == (4, 6)  # a contiguous copy, 4 rows of 6
    with pytest.raises(ValueError, match="dot: y"):
        exact._on_torch_device(t, exact._OP_CODE["dot"], x, x.float(), None, None, None)
    with pytest.raises(ValueError, match="not an input format"):
        exact._on_torch_device(t, exact._OP_CODE["sum"], x.double(), None, None, None, None)
    with pytest.raises(ValueError, match="unknown out_dtype"):
        exact._on_torch_device(t, exact._OP_CODE["sum"], x, None, None, "fp12", None)
