"""ulpscope.generate gives the C++ generators' bits: the FNV-1a hashes the C++
suite pins (tests/accuracy/distribution_hashes.inc: n = 4096, seed 2026, x then y)."""

import pathlib
import re

import numpy as np
import pytest

import ulpscope

PINNED = pathlib.Path(__file__).resolve().parents[2] / "tests" / "accuracy" / "distribution_hashes.inc"


def pinned_hashes():
    rows = re.findall(r'\{"(\w+)", "(\w+)", 0x([0-9A-F]+)ull\}', PINNED.read_text())
    return [(d, t, int(h, 16)) for d, t, h in rows]


def fnv1a(arrays, h=0xCBF29CE484222325):
    for a in arrays:
        for byte in np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).view(np.uint8).tobytes():
            h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def test_the_pinned_table_covers_every_distribution_and_format():
    rows = pinned_hashes()
    assert {d for d, _, _ in rows} == set(ulpscope.distributions())
    assert {t for _, t, _ in rows} == set(ulpscope.INPUT_DTYPES)
    assert len(rows) == len(ulpscope.distributions()) * len(ulpscope.INPUT_DTYPES)


@pytest.mark.parametrize("distribution,dtype,pinned", pinned_hashes())
def test_bits_match_the_cpp_generators(distribution, dtype, pinned):
    x, y = ulpscope.generate(distribution, 4096, dtype, seed=2026, with_y=True)
    assert x.size == y.size == 4096
    assert fnv1a([x, y]) == pinned


def test_formats_arrive_as_numpy_types():
    assert ulpscope.generate("normal", 8, "fp32").dtype == np.float32
    assert ulpscope.generate("normal", 8, "fp16").dtype == np.float16
    assert ulpscope.generate("normal", 8, "bf16").dtype == np.uint16
    assert ulpscope.generate("normal", 8, "fp8_e4m3").dtype == np.uint8
    # "float": widened exactly; bf16 is the upper half of a float32.
    bits = ulpscope.generate("normal", 64, "bf16", seed=5)
    widened = ulpscope.generate("normal", 64, "bf16", seed=5, like="float")
    assert widened.dtype == np.float32
    assert np.array_equal((bits.astype(np.uint32) << 16).view(np.float32), widened)


def test_x_does_not_depend_on_asking_for_y():
    x = ulpscope.generate("ill_conditioned:1e8", 1000, "fp32", seed=7)
    x2, _ = ulpscope.generate("ill_conditioned:1e8", 1000, "fp32", seed=7, with_y=True)
    assert np.array_equal(x.view(np.uint32), x2.view(np.uint32))


@pytest.mark.parametrize("args,message", [
    (("no_such_thing", 8, "fp32"), "no_such_thing"),
    (("normal", 8, "fp64"), "output format only"),
    (("normal", 8, "fp12"), "unknown format"),
    (("normal", -1, "fp32"), "at least 0"),
])
def test_bad_arguments_say_why(args, message):
    with pytest.raises(ValueError, match=message):
        ulpscope.generate(*args)
