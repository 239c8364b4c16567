#pragma once
// Inputs for the scan tests (CPU models and GPU kernels alike).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "formats/dtype.hpp"
#include "formats/small_float.hpp"
#include "formats/typed_array.hpp"

namespace ulpscope::test {

// n values of format d (bf16 or fp32) meant to break a wide integer: any
// bit pattern (every binade, subnormals), each one above 2^64 and the
// largest finite value taken back by the next term (the top words filled
// and emptied again, the prefix beyond the largest finite value and back),
// values cancelling an earlier one (prefixes back to tiny or zero), and with
// `specials` NaN and infinities left in.
inline TypedArray hard_wide_values(Dtype d, std::int64_t n, std::uint64_t seed, bool specials) {
  std::mt19937_64 g(seed);
  std::vector<double> v;
  const double big = format_info(d).max_finite;
  while (std::int64_t(v.size()) < n) {
    const std::uint64_t r = g();
    double x;
    if (r % 13 == 0) x = (r & 64) ? big : -big;
    else if (r % 13 == 1 && v.size() > 2) x = -v[v.size() - 2];
    else if (d == Dtype::fp32) {
      float f;
      const std::uint32_t b = std::uint32_t(r >> 32);
      std::memcpy(&f, &b, 4);
      x = f;
    } else {
      x = to_double(Bf16::from_bits(std::uint32_t(r >> 48)));
    }
    if (!specials && !std::isfinite(x)) x = 1.5;
    v.push_back(x);
    if (std::fabs(x) == big && (r & 128)) {  // twice: the prefix overflows, then comes back
      v.push_back(x);
      v.push_back(-x);
    }
    if (std::isfinite(x) && std::fabs(x) > 0x1p64) v.push_back(-x);
  }
  v.resize(std::size_t(n));
  if (d == Dtype::fp32) return TypedArray(std::vector<float>(v.begin(), v.end()));
  std::vector<Bf16> b;
  for (double e : v) b.push_back(Bf16(e));
  return TypedArray(b);
}

}  // namespace ulpscope::test
