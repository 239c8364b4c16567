#pragma once
// Value types for the narrow formats of docs/spec.md: a bit pattern with exact
// decoding, correctly rounded encoding, classification, neighbours and ulp.
// Usable from host and device code; the kernels use CUDA's own types for
// arithmetic and these for the description of what a result means.
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"

namespace ulpscope {

template <class F>
struct SmallFloat {
  using format = F;
  using storage = typename F::storage;
  storage bits{0};

  // CUDA's fp8 types saturate by default (__nv_fp8_e4m3(float) uses
  // __NV_SATFINITE); the IEEE formats overflow to infinity.
  static constexpr Saturation default_saturation =
      F::bits == 8 ? Saturation::satfinite : Saturation::nosat;

  SmallFloat() = default;
  ULPSCOPE_HD explicit SmallFloat(double x, Saturation sat = default_saturation)
      : bits(static_cast<storage>(encode<F>(x, sat))) {}

  ULPSCOPE_HD static constexpr SmallFloat from_bits(std::uint32_t b) {
    SmallFloat r;
    r.bits = static_cast<storage>(b);
    return r;
  }

  ULPSCOPE_HD double to_double() const { return decode<F>(bits); }
  ULPSCOPE_HD float to_float() const { return static_cast<float>(decode<F>(bits)); }
  ULPSCOPE_HD explicit operator double() const { return to_double(); }
  ULPSCOPE_HD explicit operator float() const { return to_float(); }

  ULPSCOPE_HD std::uint32_t exponent_field() const {
    return (std::uint32_t(bits) >> F::man_bits) & F::exp_all_ones;
  }
  ULPSCOPE_HD std::uint32_t fraction() const { return std::uint32_t(bits) & F::man_mask; }
  ULPSCOPE_HD std::uint32_t magnitude() const { return std::uint32_t(bits) & (F::sign_mask - 1); }

  ULPSCOPE_HD bool signbit() const { return (std::uint32_t(bits) & F::sign_mask) != 0; }
  ULPSCOPE_HD bool is_nan() const {
    if constexpr (F::has_infinity) return exponent_field() == F::exp_all_ones && fraction() != 0;
    else return exponent_field() == F::exp_all_ones && fraction() == F::man_mask;
  }
  ULPSCOPE_HD bool is_inf() const {
    if constexpr (F::has_infinity) return exponent_field() == F::exp_all_ones && fraction() == 0;
    else return false;
  }
  ULPSCOPE_HD bool is_finite() const { return !is_nan() && !is_inf(); }
  ULPSCOPE_HD bool is_zero() const { return magnitude() == 0; }
  ULPSCOPE_HD bool is_subnormal() const { return exponent_field() == 0 && fraction() != 0; }
  ULPSCOPE_HD bool is_normal() const { return is_finite() && exponent_field() != 0; }

  // IEEE 754 nextUp: the least value above this one. nextUp(-0) and nextUp(+0)
  // are the smallest subnormal, nextUp(largest finite) is +Inf; in E4M3, which
  // has no infinity, the pattern after the largest finite value is NaN.
  ULPSCOPE_HD SmallFloat next_up() const {
    if (is_nan() || (is_inf() && !signbit())) return *this;
    if (is_zero()) return from_bits(1);
    return signbit() ? from_bits(std::uint32_t(bits) - 1) : from_bits(std::uint32_t(bits) + 1);
  }
  ULPSCOPE_HD SmallFloat next_down() const { return negate().next_up().negate(); }
  ULPSCOPE_HD SmallFloat negate() const { return from_bits(std::uint32_t(bits) ^ F::sign_mask); }

  // docs/spec.md, "Metrics": ulp(x) = 2^(max(e, emin) - p + 1), e = floor(log2|x|).
  // NaN for NaN and infinities.
  ULPSCOPE_HD double ulp() const {
    if (!is_finite()) return decode<F>(F::nan_bits);
    const std::uint32_t field = exponent_field();
    const int e = field == 0 ? F::emin : int(field) - F::bias;
    return detail::exact_pow2(e - F::man_bits);
  }

  friend ULPSCOPE_HD bool same_bits(SmallFloat a, SmallFloat b) { return a.bits == b.bits; }
};

using Fp16 = SmallFloat<Fp16Format>;
using Bf16 = SmallFloat<Bf16Format>;
using Fp8E4M3 = SmallFloat<Fp8E4M3Format>;
using Fp8E5M2 = SmallFloat<Fp8E5M2Format>;

// The C++ type that stores each input format.
template <Dtype D> struct StorageOf;
template <> struct StorageOf<Dtype::fp32> { using type = float; };
template <> struct StorageOf<Dtype::fp16> { using type = Fp16; };
template <> struct StorageOf<Dtype::bf16> { using type = Bf16; };
template <> struct StorageOf<Dtype::fp8_e4m3> { using type = Fp8E4M3; };
template <> struct StorageOf<Dtype::fp8_e5m2> { using type = Fp8E5M2; };
template <Dtype D> using storage_of_t = typename StorageOf<D>::type;

template <class T> struct DtypeOf;
template <> struct DtypeOf<float> { static constexpr Dtype value = Dtype::fp32; };
template <> struct DtypeOf<Fp16> { static constexpr Dtype value = Dtype::fp16; };
template <> struct DtypeOf<Bf16> { static constexpr Dtype value = Dtype::bf16; };
template <> struct DtypeOf<Fp8E4M3> { static constexpr Dtype value = Dtype::fp8_e4m3; };
template <> struct DtypeOf<Fp8E5M2> { static constexpr Dtype value = Dtype::fp8_e5m2; };
template <class T> inline constexpr Dtype dtype_of_v = DtypeOf<T>::value;

// Exact widening of any stored input value.
ULPSCOPE_HD inline double to_double(float x) { return x; }
template <class F>
ULPSCOPE_HD inline double to_double(SmallFloat<F> x) { return x.to_double(); }

static_assert(sizeof(Fp16) == 2 && sizeof(Bf16) == 2 && sizeof(Fp8E4M3) == 1);

}  // namespace ulpscope
