#pragma once
// One element of a rank tensor as the NCCL runner takes it (raw bits, fp32,
// fp16 or bf16; kernels/allreduce/nccl_runner.hpp): its width, its bits and
// its value, for the runner's tests and benchmark.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "formats/binary_format.hpp"
#include "formats/dtype.hpp"

namespace ulpscope::allreduce {

inline std::size_t bytes_of(Dtype d) { return std::size_t(format_info(d).bits / 8); }

inline std::uint32_t bits_at(const std::vector<std::uint8_t>& t, Dtype d, std::size_t i) {
  std::uint32_t b = 0;
  std::memcpy(&b, t.data() + i * bytes_of(d), bytes_of(d));
  return b;
}

inline double value_of(Dtype d, std::uint32_t b) {
  switch (d) {
    case Dtype::fp32: return decode<Fp32Format>(b);
    case Dtype::fp16: return decode<Fp16Format>(b);
    default: return decode<Bf16Format>(b);
  }
}

inline std::uint32_t bits_of(Dtype d, double v) {
  switch (d) {
    case Dtype::fp32: return encode<Fp32Format>(v);
    case Dtype::fp16: return encode<Fp16Format>(v);
    default: return encode<Bf16Format>(v);
  }
}

// The tensor with every sign flipped (the sign bit is the last byte's top bit: little endian).
inline std::vector<std::uint8_t> negated(Dtype d, std::vector<std::uint8_t> t) {
  for (std::size_t i = bytes_of(d) - 1; i < t.size(); i += bytes_of(d)) t[i] ^= 0x80;
  return t;
}

}  // namespace ulpscope::allreduce
