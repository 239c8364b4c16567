#pragma once
// The order of the `tree` shape, described once for the CUDA kernels and their
// CPU model (STYLE.md, section 2: one description, two executors).
//
// Whole array of n elements, grid of B blocks of T threads (G = B*T threads,
// T a multiple of 32, at most 1024), V elements per 16-byte vector load:
//  1. thread g = b*T + t adds, in this order, the vectors g, g+G, g+2G, ...
//     (elements in index order inside a vector), then, if g < n mod V, the
//     tail element V*(n div V) + g;
//  2. warp tree: for offset 16, 8, 4, 2, 1, lane l merges lane l+offset's
//     partial into its own (merge(p_l, p_{l+offset}));
//  3. block tree: warp w's result goes to slot w; warp 0 reads slot l
//     (identity past the last warp) and runs the warp tree again;
//  4. second pass, one block of T threads over the B block partials: thread t
//     merges partials t, t+T, ... into the identity, then steps 2 and 3; thread
//     0 finishes (final rounding, sqrt, division by n).
// Row-wise, inner dimension: one block per row follows steps 1-3 with G = T
// over the row's cols elements (V = 1 unless cols is a multiple of V, so that
// every row starts 16-byte aligned); thread 0 finishes. Outer dimension: one
// thread per column adds its rows in index order (the serial order).
#include <cstdint>

#include "formats/host_device.hpp"

namespace ulpscope {

inline constexpr int kWarpSize = 32;
inline constexpr int kVectorBytes = 16;

struct TreeOrder {
  std::int64_t n = 0;        // elements
  int vec = 1;               // elements per vector
  std::int64_t threads = 1;  // G, threads that share the elements

  ULPSCOPE_HD std::int64_t vectors() const { return n / vec; }
  ULPSCOPE_HD std::int64_t tail_begin() const { return vectors() * vec; }
  ULPSCOPE_HD std::int64_t tail() const { return n - tail_begin(); }
  // How many elements thread g adds (for the chain length of error bounds).
  ULPSCOPE_HD std::int64_t elements_of(std::int64_t g) const {
    const std::int64_t nv = vectors();
    const std::int64_t mine = g < nv ? (nv - g + threads - 1) / threads : 0;
    return mine * vec + (g < tail() ? 1 : 0);
  }
};

// The vector width for an element size.
ULPSCOPE_HD constexpr int vector_width(int element_bytes) { return kVectorBytes / element_bytes; }

// Levels of the warp tree, and of the block tree over T/32 warp results
// (the block tree always runs a full warp tree over 32 slots).
inline constexpr int kWarpLevels = 5;

}  // namespace ulpscope
