#pragma once
// --input FILE (docs/spec.md, "What ulpscope measures", 4: a user's data): NumPy .npy files
// and raw little-endian binary, read into a TypedArray. Every problem with a
// file (bad magic or header, truncated data, unsupported dtype, Fortran
// order, a shape that does not fit the op) is an InputError whose message is
// one line naming the file; the caller prints it and exits with status 2.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "formats/dtype.hpp"
#include "formats/typed_array.hpp"
#include "kernels/op.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LoadedInput {
  TypedArray values;         // row-major [rows, cols]
  std::int64_t rows = 1;     // 1 for a 1-D array
  std::int64_t cols = 0;     // the length of a 1-D array
  int ndim = 1;              // 1 or 2, as stored in the file (raw files are 1-D)
  std::string source_dtype;  // the .npy descr as written ("<f4", "|u1"), or "raw fp16"
  // How the file's values became these, in one line, where they are not the
  // file's own values bit for bit or read as bit patterns: "float16 data
  // rounded to bf16", "float64 data rounded to fp32 (give --dtype to choose
  // the format)". Empty otherwise. The caller says it (stderr, the report).
  std::string conversion;
};

// A .npy file, format version 1.0, 2.0 or 3.0 (NumPy's NEP 1 and
// numpy.lib.format): C order, 1-D or 2-D, little-endian.
//   '<f2' -> fp16, '<f4' -> fp32, '<f8' -> fp32 (the only input format wide
//   enough for most float64 data);
//   '<f1' -> fp8_e5m2 (ml_dtypes registers float8_e5m2 with kind 'f');
//   '<u2', '<i2', '<V2', '|V2' -> fp16 or bf16 bit patterns, only with
//   requested == fp16 or bf16 (ml_dtypes registers bfloat16 with kind 'V'
//   and byte order '=', so numpy.save writes '<V2'; a plain numpy void of
//   2 bytes is '|V2');
//   '|u1', '|i1', '<V1', '|V1' -> fp8 bit patterns, only with requested ==
//   fp8_e4m3 or fp8_e5m2 (ml_dtypes' other float8 types write '<V1').
// With a requested dtype, float data of another format is rounded to it once
// from its exact value (round to nearest, ties to even, subnormals kept; a
// float64 is never rounded through float32 first), and `conversion` says so.
// A finite value that would overflow (to Inf, or to NaN in fp8_e4m3) or an
// infinity the dtype cannot hold is an error rather than silently saturated.
// NaN stays NaN.
LoadedInput read_npy(const std::string& path, std::optional<Dtype> requested);

// n values of dtype, little-endian, nothing else: the file's size must be
// exactly n times the dtype's width.
LoadedInput read_raw(const std::string& path, Dtype dtype, std::int64_t n);

// Views the values as [rows, cols] (--rows/--cols on a raw or 1-D file);
// rows * cols must be the number of values.
void reshape(LoadedInput& input, std::int64_t rows, std::int64_t cols);

// Whether the array fits the op and the reduced axis: row-wise reductions
// (--axis inner or outer) need a 2-D array; the whole-array ones read a 2-D
// array in row-major order. Throws InputError naming what is wrong.
void check_shape_fits(const LoadedInput& input, Op op, Axis axis);

}  // namespace ulpscope
