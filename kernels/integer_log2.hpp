#pragma once
// Integer logarithms, host and device. ceil(log2 k) for k >= 1 (0 for k <= 1):
// the depth of a balanced tree over k leaves, and the bits a sum of k terms
// can grow by.
#include <cstdint>

#include "formats/host_device.hpp"

namespace ulpscope {

ULPSCOPE_HD constexpr int ceil_log2(std::int64_t k) {
  int l = 0;
  while ((std::int64_t(1) << l) < k) ++l;
  return l;
}

// The bits w needs: floor(log2 w) + 1, 0 for w = 0 (std::bit_width, which
// is host-only).
ULPSCOPE_HD constexpr int bit_width(std::uint64_t w) {
  int b = 0;
  while (b < 64 && (w >> b) != 0) ++b;
  return b;
}

}  // namespace ulpscope
