#pragma once
// An array of values of one input format, stored as that format's bits.
// Distributions produce them, --input reads them, kernels and references
// consume them.
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "formats/dtype.hpp"
#include "formats/small_float.hpp"

namespace ulpscope {

using TypedVector = std::variant<std::vector<float>, std::vector<Fp16>, std::vector<Bf16>,
                                 std::vector<Fp8E4M3>, std::vector<Fp8E5M2>>;

class TypedArray {
 public:
  TypedArray() = default;
  template <class T>
  explicit TypedArray(std::vector<T> v) : data_(std::move(v)) {}
  // n zero values of format d (d must be an input format).
  TypedArray(Dtype d, std::size_t n);

  Dtype dtype() const;
  std::size_t size() const {
    return std::visit([](const auto& v) { return v.size(); }, data_);
  }
  std::size_t bytes() const;
  double at(std::size_t i) const {
    return std::visit([i](const auto& v) { return to_double(v[i]); }, data_);
  }
  // Every value, widened exactly.
  std::vector<double> to_doubles() const;
  // Every value as a float: exact for fp32 and the narrower formats (what the
  // CPU models read).
  std::vector<float> to_floats() const;
  const void* raw() const {
    return std::visit([](const auto& v) -> const void* { return v.data(); }, data_);
  }

  TypedVector& data() { return data_; }
  const TypedVector& data() const { return data_; }
  template <class T>
  const std::vector<T>& as() const { return std::get<std::vector<T>>(data_); }
  template <class T>
  std::vector<T>& as() { return std::get<std::vector<T>>(data_); }

 private:
  TypedVector data_;
};

// Call f(std::vector<T>&) with the array's own element type.
template <class F>
decltype(auto) visit_typed(const TypedArray& a, F&& f) {
  return std::visit(std::forward<F>(f), a.data());
}

}  // namespace ulpscope
