#include "formats/typed_array.hpp"

#include <stdexcept>

namespace ulpscope {

TypedArray::TypedArray(Dtype d, std::size_t n) {
  switch (d) {
    case Dtype::fp32: data_ = std::vector<float>(n); break;
    case Dtype::fp16: data_ = std::vector<Fp16>(n); break;
    case Dtype::bf16: data_ = std::vector<Bf16>(n); break;
    case Dtype::fp8_e4m3: data_ = std::vector<Fp8E4M3>(n); break;
    case Dtype::fp8_e5m2: data_ = std::vector<Fp8E5M2>(n); break;
    case Dtype::fp64: throw std::invalid_argument("fp64 is an output format, not an input format");
  }
}

Dtype TypedArray::dtype() const {
  return std::visit(
      [](const auto& v) { return dtype_of_v<typename std::decay_t<decltype(v)>::value_type>; },
      data_);
}

std::size_t TypedArray::bytes() const {
  return std::visit(
      [](const auto& v) { return v.size() * sizeof(typename std::decay_t<decltype(v)>::value_type); },
      data_);
}

std::vector<double> TypedArray::to_doubles() const {
  return std::visit(
      [](const auto& v) {
        std::vector<double> out(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_double(v[i]);
        return out;
      },
      data_);
}

std::vector<float> TypedArray::to_floats() const {
  return std::visit(
      [](const auto& v) {
        std::vector<float> out(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(to_double(v[i]));
        return out;
      },
      data_);
}

}  // namespace ulpscope
