#pragma once
// The formats of docs/spec.md, "Number formats", described by the numbers the spec
// states rather than by BinaryFormat's own arithmetic, so that tests compare
// the implementation against an independent description. Also the bit
// patterns each test visits: all of them for the 8- and 16-bit formats, a
// structured sample for fp32.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "formats/binary_format.hpp"
#include "formats/dtype.hpp"
#include "formats/small_float.hpp"

namespace ulpscope::test {

template <class F> struct Spec;
// IEEE 754-2019, Table 3.5 (binary32, binary16); bf16: binary32's exponent
// with p = 8; OCP 8-bit Floating Point Specification (OFP8) 1.0, Table 1.
template <> struct Spec<Fp32Format> {
  static constexpr Dtype dtype = Dtype::fp32;
  static constexpr int exp_bits = 8, precision = 24, bias = 127;
  static constexpr bool has_infinity = true;
  static constexpr double max_finite = 0x1.fffffep127, min_subnormal = 0x1p-149;
};
template <> struct Spec<Fp16Format> {
  static constexpr Dtype dtype = Dtype::fp16;
  static constexpr int exp_bits = 5, precision = 11, bias = 15;
  static constexpr bool has_infinity = true;
  static constexpr double max_finite = 65504.0, min_subnormal = 0x1p-24;
};
template <> struct Spec<Bf16Format> {
  static constexpr Dtype dtype = Dtype::bf16;
  static constexpr int exp_bits = 8, precision = 8, bias = 127;
  static constexpr bool has_infinity = true;
  static constexpr double max_finite = 0x1.fep127, min_subnormal = 0x1p-133;
};
template <> struct Spec<Fp8E4M3Format> {
  static constexpr Dtype dtype = Dtype::fp8_e4m3;
  static constexpr int exp_bits = 4, precision = 4, bias = 7;
  static constexpr bool has_infinity = false;
  static constexpr double max_finite = 448.0, min_subnormal = 0x1p-9;
};
template <> struct Spec<Fp8E5M2Format> {
  static constexpr Dtype dtype = Dtype::fp8_e5m2;
  static constexpr int exp_bits = 5, precision = 3, bias = 15;
  static constexpr bool has_infinity = true;
  static constexpr double max_finite = 57344.0, min_subnormal = 0x1p-16;
};

using AllFormats =
    ::testing::Types<Fp32Format, Fp16Format, Bf16Format, Fp8E4M3Format, Fp8E5M2Format>;

struct FormatName {
  template <class F>
  static std::string GetName(int) {
    return std::string(to_string(Spec<F>::dtype));
  }
};

// Every pattern of a format of at most 16 bits. For fp32, every sign and
// exponent field with the extreme fractions and 40 random ones (seeded), so
// the subnormal, normal and special binades are all visited.
template <class F>
std::vector<std::uint32_t> patterns_of() {
  std::vector<std::uint32_t> out;
  if constexpr (F::bits <= 16) {
    for (std::uint32_t b = 0; b < (1u << F::bits); ++b) out.push_back(b);
  } else {
    std::mt19937 rng(20261122);
    std::uniform_int_distribution<std::uint32_t> frac(0, F::man_mask);
    for (std::uint32_t s = 0; s < 2; ++s)
      for (std::uint32_t e = 0; e <= F::exp_all_ones; ++e) {
        const std::uint32_t head = (s << (F::bits - 1)) | (e << F::man_bits);
        for (std::uint32_t f : {0u, 1u, 2u, 3u, F::man_mask / 2, F::man_mask / 2 + 1,
                                F::man_mask - 2, F::man_mask - 1, F::man_mask})
          out.push_back(head | f);
        for (int i = 0; i < 40; ++i) out.push_back(head | frac(rng));
      }
  }
  return out;
}

}  // namespace ulpscope::test
