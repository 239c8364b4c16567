#pragma once
// An output stored in its own format rather than widened to double: the bit
// pattern of round_to_out(x, out, sat) (out_format.hpp), written as element i
// of an array of that format. For host and device alike, so that a kernel's
// finishing pass can write the caller's typed output directly.
#include <cstdint>
#include <cstring>

#include "formats/binary_format.hpp"
#include "formats/dtype.hpp"
#include "formats/host_device.hpp"

namespace ulpscope {

// Element i of `base`, an array of format `out`, becomes RN_out(x) (an fp8
// format's overflow as `sat` says). A value already in the format (what the
// reducers' finish gives) is stored exactly.
ULPSCOPE_HD inline void store_out(double x, Dtype out, Saturation sat, void* base, std::int64_t i) {
  switch (out) {
    case Dtype::fp64: static_cast<double*>(base)[i] = x; return;
    case Dtype::fp32: {
      const std::uint32_t bits = encode<Fp32Format>(x);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      static_cast<float*>(base)[i] = f;
      return;
    }
    case Dtype::fp16: static_cast<std::uint16_t*>(base)[i] = std::uint16_t(encode<Fp16Format>(x)); return;
    case Dtype::bf16: static_cast<std::uint16_t*>(base)[i] = std::uint16_t(encode<Bf16Format>(x)); return;
    case Dtype::fp8_e4m3: static_cast<std::uint8_t*>(base)[i] = std::uint8_t(encode<Fp8E4M3Format>(x, sat)); return;
    case Dtype::fp8_e5m2: static_cast<std::uint8_t*>(base)[i] = std::uint8_t(encode<Fp8E5M2Format>(x, sat)); return;
  }
}

}  // namespace ulpscope
