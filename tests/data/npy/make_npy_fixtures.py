# Writes the .npy files that input_file_test.cpp reads, with NumPy's own
# writer (numpy.save, numpy.lib.format.write_array), as an independent check
# of the reader. Run with a Python that has NumPy: python3 make_npy_fixtures.py
import numpy as np

np.save("f2_1d.npy", np.array([1.0, -2.0, 65504.0, 2.0**-24, -0.0, np.inf, np.nan], dtype=np.float16))
np.save("f4_2d.npy", (np.arange(6, dtype=np.float32) * np.float32(0.5) - np.float32(1)).reshape(2, 3))
np.save("f8_1d.npy", np.array([0.1, 1 + 2.0**-11 + 2.0**-40, -3.0], dtype=np.float64))
np.save("u2_2d.npy", np.array([[0x3F80, 0xC040], [0x0001, 0x7F80]], dtype=np.uint16))
np.save("u1_1d.npy", np.array([0x00, 0x38, 0x7E, 0xFE], dtype=np.uint8))
np.save("empty.npy", np.zeros(0, dtype=np.float32))
with open("f4_v2.npy", "wb") as f:
    np.lib.format.write_array(f, np.array([1.5, -0.25], dtype=np.float32), version=(2, 0))
with open("f4_v3.npy", "wb") as f:
    np.lib.format.write_array(f, np.array([1.5, -0.25], dtype=np.float32), version=(3, 0))
# Malformed for ulpscope (valid NumPy files it refuses).
np.save("f4_fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.save("i4.npy", np.arange(4, dtype=np.int32))
np.save("f4_big_endian.npy", np.arange(4, dtype=">f4"))
np.save("f4_3d.npy", np.zeros((2, 2, 2), dtype=np.float32))
np.save("f4_scalar.npy", np.float32(1.0))
# Bit patterns as frameworks hand them over: an fp16 tensor viewed as int16
# ('<i2'), and bf16 bits as a 2-byte void ('|V2'; ml_dtypes' bfloat16 writes
# '<V2', which NumPy itself cannot spell).
np.save("i2_1d.npy", np.array([1.0, -2.0, 4448.0], dtype=np.float16).view(np.int16))
np.save("v2_1d.npy", np.array([0x3F80, 0xC040, 0x7F80], dtype=np.uint16).view("V2"))
