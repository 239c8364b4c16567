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
// root: ncu counted 1024 of the 2^28 rms bf16 second pass's 13500 warp
// instructions in it, on one thread). H100, one session, a build each (three
// runs, fraction of cub Sum fp32), exact: norm2 fp16 0.933 -> 0.941, e4m3
// 0.861 -> 0.874; rms fp16 0.925 -> 0.931, e4m3 0.845 -> 0.862; bf16 and the
// sums within 0.003.
ULPSCOPE_HD inline int bit_width(std::uint64_t w) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(w));
#else
  return int(std::bit_width(w));
#endif
}

}  // namespace ulpscope
