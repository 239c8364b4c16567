#include "arrays.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "accuracy/user_kernel.hpp"
#include "formats/round_to_dtype.hpp"

namespace py = pybind11;

namespace ulpscope::python {

namespace {
std::string dtype_names() {
  std::string s;
  for (Dtype d : kOutputDtypes) s += (s.empty() ? "" : ", ") + std::string(to_string(d));
  return s;
}

template <class T>
TypedArray copy_as(const py::buffer_info& info) {
  std::vector<T> v(static_cast<std::size_t>(info.size));
  if (!v.empty()) std::memcpy(v.data(), info.ptr, v.size() * sizeof(T));
  return TypedArray(std::move(v));
}
}  // namespace

Dtype dtype_named(const std::string& name) {
  if (const auto d = parse_dtype(name)) return *d;
  throw py::value_error(fmt::format("unknown format '{}' (one of {})", name, dtype_names()));
}

Dtype input_dtype_named(const std::string& name) {
  const Dtype d = dtype_named(name);
  if (d == Dtype::fp64)
    throw py::value_error("fp64 is an output format only: give the values in fp32, fp16, bf16 or fp8");
  return d;
}

TypedArray typed_array_from(const py::buffer& b, Dtype d) {
  const py::buffer_info info = b.request();
  if (std::size_t(info.itemsize) != element_bytes(d))
    throw py::value_error(fmt::format("{} values are {}-byte items; the array's items are {} bytes", to_string(d),
                                      element_bytes(d), info.itemsize));
  // C-contiguous: the strides are the item size times the trailing extents.
  py::ssize_t expected = info.itemsize;
  for (py::ssize_t k = info.ndim; k-- > 0;) {
    if (info.shape[k] > 1 && info.strides[k] != expected)
      throw py::value_error("the array is not C-contiguous");
    expected *= info.shape[k];
  }
  switch (d) {
    case Dtype::fp32: return copy_as<float>(info);
    case Dtype::fp16: return copy_as<Fp16>(info);
    case Dtype::bf16: return copy_as<Bf16>(info);
    case Dtype::fp8_e4m3: return copy_as<Fp8E4M3>(info);
    case Dtype::fp8_e5m2: return copy_as<Fp8E5M2>(info);
    case Dtype::fp64: break;
  }
  throw py::value_error("fp64 is an output format only");
}

py::array bits_of(const void* data, std::size_t count, Dtype d) {
  const auto n = static_cast<py::ssize_t>(count);
  switch (d) {
    case Dtype::fp64: return py::array_t<double>(n, static_cast<const double*>(data));
    case Dtype::fp32: return py::array_t<float>(n, static_cast<const float*>(data));
    case Dtype::fp16: {
      // NumPy's float16 (the buffer format "e").
      py::array a(py::dtype("float16"), std::vector<py::ssize_t>{n});
      if (n) std::memcpy(a.mutable_data(), data, count * 2);
      return a;
    }
    case Dtype::bf16: return py::array_t<std::uint16_t>(n, static_cast<const std::uint16_t*>(data));
    case Dtype::fp8_e4m3:
    case Dtype::fp8_e5m2: return py::array_t<std::uint8_t>(n, static_cast<const std::uint8_t*>(data));
  }
  throw py::value_error("unknown format");
}

namespace {
template <class T>
void encode_as(const double* v, std::size_t count, Dtype d, Saturation sat, void* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const T bits(round_to_dtype(v[i], d, sat), sat);
    std::memcpy(static_cast<unsigned char*>(out) + i * sizeof(T), &bits, sizeof(T));
  }
}
}  // namespace

void encode_values(const double* v, std::size_t count, Dtype d, Saturation fp8_sat, void* out) {
  // Saturation is an fp8 conversion's choice; the other formats overflow to
  // infinity (formats/dtype.hpp), as the references round to them.
  const Saturation sat = is_fp8(d) ? fp8_sat : Saturation::nosat;
  switch (d) {
    case Dtype::fp64:
      if (count) std::memcpy(out, v, count * sizeof(double));
      return;
    case Dtype::fp32:
      for (std::size_t i = 0; i < count; ++i) {
        const float f = float(round_to_dtype(v[i], d, sat));
        std::memcpy(static_cast<unsigned char*>(out) + i * sizeof f, &f, sizeof f);
      }
      return;
    case Dtype::fp16: return encode_as<Fp16>(v, count, d, sat, out);
    case Dtype::bf16: return encode_as<Bf16>(v, count, d, sat, out);
    case Dtype::fp8_e4m3: return encode_as<Fp8E4M3>(v, count, d, sat, out);
    case Dtype::fp8_e5m2: return encode_as<Fp8E5M2>(v, count, d, sat, out);
  }
}

py::array bits_of(const TypedArray& a) { return bits_of(a.raw(), a.size(), a.dtype()); }

}  // namespace ulpscope::python
