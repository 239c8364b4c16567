#pragma once
// Integer logarithms, host and device. ceil(log2 k) for k >= 1 (0 for k <= 1):
// the depth of a balanced tree over k leaves, and the bits a sum of k terms
// can grow by.
#include <bit>
#include <cstdint>

#include "formats/host_device.hpp"

namespace ulpscope {

ULPSCOPE_HD constexpr int ceil_log2(std::int64_t k) {
  int l = 0;
  while ((std::int64_t(1) << l) < k) ++l;
  return l;
}

// The bits w needs: floor(log2 w) + 1, 0 for w = 0: std::bit_width on the
// host, one count of leading zeros on the GPU. A loop over the bits, as this
// was, ran up to 64 times a call in the exact finishes (round_sqrt's 63-bit
// root; docs/perf-h100.md, "integer_log2.hpp").
ULPSCOPE_HD inline int bit_width(std::uint64_t w) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(w));
#else
  return int(std::bit_width(w));
#endif
}

}  // namespace ulpscope
