#pragma once
// q = k / d and r = k % d for an element index k in [0, 2^52) and a divisor d
// >= 1 fixed for a launch, without a 64-bit integer division: the GPU has no
// integer divide instruction, and nvcc expands each into a long sequence
// (inlined at every element of CUB's unrolled loads, they were 80% of the
// segmented cub shapes' code and most of their build time). The estimate e = RN(k * RN(1/d))
// (k is exact in double) carries two roundings of relative size 2^-53, so
// |e - k/d| <= (k/d) (2^-52 + 2^-106) < 1/d for k < 2^52: e stays below the
// next multiple's quotient q + 1 (k/d is at most q + 1 - 1/d), and its floor
// is q or, where e falls just under an integer q = k/d, q - 1, which the
// remainder's range corrects (division by an invariant integer through its
// reciprocal: Granlund and Montgomery 1994; exact_sum.hpp's divide_step).
#include <cstdint>

#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

struct IndexDivider {
  std::int64_t d;
  double inv;  // RN(1/d)

  static IndexDivider of(std::int64_t d) { return {d, 1.0 / double(d)}; }

  ULPSCOPE_HD std::int64_t quotient(std::int64_t k, std::int64_t& rem) const {
    auto q = std::int64_t(rn::mul(double(k), inv));
    std::int64_t r = k - q * d;
    if (r >= d) {
      ++q;
      r -= d;
    }
    rem = r;
    return q;
  }
};

}  // namespace ulpscope
