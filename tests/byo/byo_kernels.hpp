#pragma once
// User kernels for the tests, written against the C++ API as a user would
// (accuracy/user_kernel.hpp): raw buffers in, raw buffers out.
#include <cstring>
#include <vector>

#include "accuracy/user_kernel.hpp"
#include "formats/small_float.hpp"

namespace ulpscope::test {

// Element i of a raw array of format d, widened exactly.
inline double element(const void* data, Dtype d, std::int64_t i) {
  const auto* bytes = static_cast<const unsigned char*>(data) + std::size_t(i) * element_bytes(d);
  return decode_outputs(bytes, d, 1)[0];
}

// RN_d(v) written as element i of a raw array of format d.
inline void store(void* data, Dtype d, std::int64_t i, double v) {
  auto* at = static_cast<unsigned char*>(data) + std::size_t(i) * element_bytes(d);
  auto put = [&](auto bits) { std::memcpy(at, &bits, sizeof bits); };
  switch (d) {
    case Dtype::fp64: put(v); break;
    case Dtype::fp32: put(float(v)); break;
    case Dtype::fp16: put(Fp16(v).bits); break;
    case Dtype::bf16: put(Bf16(v).bits); break;
    case Dtype::fp8_e4m3: put(Fp8E4M3(v).bits); break;
    case Dtype::fp8_e5m2: put(Fp8E5M2(v).bits); break;
  }
}

// Element k of reduction g along the call's axis, and how many there are.
inline std::int64_t reductions(const KernelArgs& a) {
  return a.axis == Axis::all ? 1 : a.axis == Axis::outer ? a.cols : a.rows;
}
inline std::int64_t length(const KernelArgs& a) {
  return a.axis == Axis::all ? a.rows * a.cols : a.axis == Axis::outer ? a.rows : a.cols;
}
inline std::int64_t index(const KernelArgs& a, std::int64_t g, std::int64_t k) {
  return a.axis == Axis::outer ? k * a.cols + g : g * length(a) + k;
}

// Recursive summation in index order with an fp32 running value, rounded once
// to the output format: the order and arithmetic of the built-in serial shape
// with the fp32 accumulator (Higham 2002, eq. 4.1).
inline UserKernel serial_fp32_sum(Dtype in, Dtype out) {
  UserKernel k;
  k.name = "user_serial_sum";
  k.accumulator = "fp32";
  k.op = Op::sum;
  k.in = in;
  k.out = out;
  k.axes = {Axis::all, Axis::inner, Axis::outer};
  k.configs = {LaunchConfig{1, 1}};
  k.run_host = [](const KernelArgs& a) {
    for (std::int64_t g = 0; g < reductions(a); ++g) {
      // The first element, then the others: a sum of -0s stays -0, an empty
      // sum is +0 (IEEE 754, 6.3).
      float acc = length(a) > 0 ? float(element(a.x, a.in_dtype, index(a, g, 0))) : 0.0f;
      for (std::int64_t k = 1; k < length(a); ++k) acc += float(element(a.x, a.in_dtype, index(a, g, k)));
      store(a.out, a.out_dtype, g, acc);
    }
  };
  return k;
}

// A whole-array sum of fp16 values in fp64, rounded once to fp32. Every fp16
// value is a multiple of 2^-24 below 2^16, so fp64 adds up to 2^13 of them
// without rounding (docs/spec.md, "Accumulators", exact): correctly rounded for
// n <= 8192. With running_in_fp16, the running value is rounded to fp16
// after every addition instead (SPEC's naive accumulator): stagnation.
inline UserKernel fp16_sum(bool running_in_fp16) {
  UserKernel k;
  k.name = running_in_fp16 ? "fp16_running_sum" : "fp64_sum";
  k.accumulator = running_in_fp16 ? "fp16" : "fp64";
  k.op = Op::sum;
  k.in = Dtype::fp16;
  k.out = Dtype::fp32;
  k.run_host = [running_in_fp16](const KernelArgs& a) {
    double acc = a.cols > 0 ? element(a.x, Dtype::fp16, 0) : 0.0;
    for (std::int64_t i = 1; i < a.cols; ++i) {
      acc += element(a.x, Dtype::fp16, i);
      if (running_in_fp16) acc = Fp16(acc).to_double();
    }
    store(a.out, Dtype::fp32, 0, acc);
  };
  return k;
}

}  // namespace ulpscope::test
