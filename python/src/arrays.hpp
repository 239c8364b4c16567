#pragma once
// Arrays between Python and the core: a buffer of one input format's bit
// patterns (the Python layer hands over float32, float16, or uint16/uint8 for
// bf16 and fp8, C-contiguous) becomes a TypedArray, and back.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "formats/dtype.hpp"
#include "formats/typed_array.hpp"

namespace ulpscope::python {

// The format named `name` ("fp16", "bf16", ...); throws py::value_error with
// the list of names for anything else.
Dtype dtype_named(const std::string& name);
// An input format (fp64 is an output format only).
Dtype input_dtype_named(const std::string& name);

// A copy of the buffer's elements as values of format d: its items must be
// d's width (4 bytes for fp32, 2 for fp16/bf16, 1 for fp8), in native order.
TypedArray typed_array_from(const pybind11::buffer& b, Dtype d);

// The array's bit patterns as a one-dimensional NumPy array of unsigned
// integers of the format's width (float32 for fp32, float16 for fp16).
pybind11::array bits_of(const TypedArray& a);
// The same from raw memory holding count values of format d.
pybind11::array bits_of(const void* data, std::size_t count, Dtype d);

}  // namespace ulpscope::python

namespace ulpscope::python {

// values[i] rounded to format d (RN; an fp8 format's overflow as fp8_sat says,
// the others' to infinity) and written as d's bit patterns to out
// (count * element_bytes(d) bytes).
void encode_values(const double* values, std::size_t count, Dtype d, Saturation fp8_sat, void* out);

}  // namespace ulpscope::python
