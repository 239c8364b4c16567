#pragma once
// Loading input elements on the device: 16-byte vectors, and the exact
// widening of each format to float by CUDA's own conversions (every value of
// the five input formats is a float, so the widening rounds nothing and agrees
// with decode() in formats/binary_format.hpp, which the models use).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstring>
#include <type_traits>

#include "formats/small_float.hpp"
#include "kernels/tree/tree_order.hpp"

namespace ulpscope::tree {

__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ float widen(Fp16 x) { return __half2float(__ushort_as_half(x.bits)); }
__device__ __forceinline__ float widen(Bf16 x) { return __uint_as_float(unsigned(x.bits) << 16); }
__device__ __forceinline__ float widen(Fp8E4M3 x) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(x.bits), __NV_E4M3)));
}
__device__ __forceinline__ float widen(Fp8E5M2 x) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(x.bits), __NV_E5M2)));
}

template <class Elem>
struct Vector {
  static constexpr int width = vector_width(int(sizeof(Elem)));
  Elem e[width];
};

// One 16-byte load (the address is 16-byte aligned by the order's rules).
template <class Elem>
__device__ __forceinline__ Vector<Elem> load_vector(const Elem* base, std::int64_t v) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(base) + v);
  Vector<Elem> out;
  static_assert(sizeof(out) == sizeof(raw));
  std::memcpy(&out, &raw, sizeof raw);
  return out;
}

// A whole vector widened; fp8 and fp16 convert two elements per instruction
// (the element at the lower address is the pair's low half, .x).
template <class Elem>
__device__ __forceinline__ void widen_vector(const Vector<Elem>& v, float* out) {
#pragma unroll
  for (int j = 0; j < Vector<Elem>::width; ++j) out[j] = widen(v.e[j]);
}
// A vector's 16 bytes as four words, for the conversions that take elements
// two at a time.
template <class Elem>
__device__ __forceinline__ void copy_words(const Vector<Elem>& v, unsigned (&w)[4]) {
  static_assert(sizeof w == sizeof v);
  std::memcpy(w, &v, sizeof w);
}

// The fp8 formats' interpretation for CUDA's conversions.
template <class Elem>
inline constexpr __nv_fp8_interpretation_t kFp8Kind = __NV_E4M3;
template <>
inline constexpr __nv_fp8_interpretation_t kFp8Kind<Fp8E5M2> = __NV_E5M2;

// Values j and j + 1 (j even) of an fp8 vector whose words are w, as halves
// in one conversion: the pair is a 16-bit half of a word (one shift per two
// pairs; assembling each pair from its bytes took four instructions).
template <class Elem>
__device__ __forceinline__ __half2_raw fp8_pair(const unsigned* w, int j) {
  return __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(w[j / 4] >> (8 * (j % 4))), kFp8Kind<Elem>);
}
template <class Elem>
__device__ __forceinline__ void widen_fp8_pairs(const Vector<Elem>& v, float* out) {
  unsigned w[4];
  copy_words(v, w);
#pragma unroll
  for (int j = 0; j < Vector<Elem>::width; j += 2) {
    const float2 f = __half22float2(__half2(fp8_pair<Elem>(w, j)));
    out[j] = f.x;
    out[j + 1] = f.y;
  }
}
// bf16 pairs from the vector's words: the low half shifted up, the high half
// masked in place (one instruction each, where widening each 16-bit element
// took two or three: docs/perf-h100.md, "load.cuh").
__device__ __forceinline__ void widen_bf16_words(const Vector<Bf16>& v, float* out) {
  unsigned w[4];
  copy_words(v, w);
#pragma unroll
  for (int j = 0; j < Vector<Bf16>::width; j += 2) {
    out[j] = __uint_as_float(w[j / 2] << 16);
    out[j + 1] = __uint_as_float(w[j / 2] & 0xFFFF0000u);
  }
}
template <class Elem>
  requires std::is_same_v<Elem, Fp8E4M3> || std::is_same_v<Elem, Fp8E5M2>
__device__ __forceinline__ void widen_vector(const Vector<Elem>& v, float* out) {
  widen_fp8_pairs(v, out);
}

// A half's value as a double in one conversion (cvt.f64.f16), where widen
// and then double() take two.
__device__ __forceinline__ double half_to_double(unsigned short h) {
  double d;
  asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(h));
  return d;
}
// Value j of an fp8 vector as a double, through its pair of halves (j a
// constant: the two values of a pair share its conversion).
template <class Elem>
__device__ __forceinline__ double value_as_double(const Vector<Elem>& v, int j) {
  unsigned w[4];
  copy_words(v, w);
  const __half2_raw h = fp8_pair<Elem>(w, j & ~1);
  return half_to_double(j % 2 ? h.y : h.x);
}

// widen_vector, or bf16 by words where Words (tree_agent.cuh, widens_bf16_by_words).
template <bool Words, class Elem>
__device__ __forceinline__ void widen_vector_as(const Vector<Elem>& v, float* out) {
  if constexpr (Words && std::is_same_v<Elem, Bf16>) widen_bf16_words(v, out);
  else widen_vector(v, out);
}

}  // namespace ulpscope::tree
