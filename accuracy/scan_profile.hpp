#pragma once
// A scan's error along the index (docs/spec.md, "Scans along the index"):
// what a cumsum cell reports beside its worst element. Data only, so that
// the cell (accuracy/cell.hpp) and the reports read it without the metrics.
#include <array>
#include <cstdint>
#include <optional>

namespace ulpscope {

inline constexpr int kIndexDeciles = 10;

struct ScanProfile {
  double share_correctly_rounded = 0;       // of every scored prefix
  std::optional<std::int64_t> worst_index;  // within its line; null with no element
  std::int64_t line_length = 0;
  // Over the elements i of each line with floor(10 i / L) = d; null where a
  // decile has no element or holds a finite/non-finite mismatch.
  std::array<std::optional<double>, kIndexDeciles> max_ulp_by_decile{}, mean_ulp_by_decile{};
};

}  // namespace ulpscope
