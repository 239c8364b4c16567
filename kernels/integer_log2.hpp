#pragma once
// ceil(log2 k) for k >= 1 (0 for k <= 1): the depth of a balanced tree over k
// leaves, and the bits a sum of k terms can grow by. Host and device.
#include <cstdint>

#include "formats/host_device.hpp"

namespace ulpscope {

ULPSCOPE_HD constexpr int ceil_log2(std::int64_t k) {
  int l = 0;
  while ((std::int64_t(1) << l) < k) ++l;
  return l;
}

}  // namespace ulpscope
