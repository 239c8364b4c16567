#include "accuracy/scan_metrics.hpp"

#include <algorithm>
#include <stdexcept>

namespace ulpscope {

ScanProfile scan_profile(const std::vector<std::optional<double>>& errors, const std::vector<bool>& correct,
                         std::int64_t line_length, std::size_t worst) {
  if (errors.size() != correct.size()) throw std::invalid_argument("scan_profile: errors and flags differ in size");
  if (line_length < 0 || (line_length == 0 && !errors.empty()) ||
      (line_length > 0 && errors.size() % std::size_t(line_length) != 0))
    throw std::invalid_argument("scan_profile: the outputs are not whole lines");
  ScanProfile s;
  s.line_length = line_length;
  if (errors.empty()) return s;
  s.worst_index = std::int64_t(worst % std::size_t(line_length));
  std::array<double, kIndexDeciles> worst_in{}, total{};
  std::array<std::int64_t, kIndexDeciles> count{};
  std::array<bool, kIndexDeciles> undefined{};
  std::size_t right = 0;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const std::int64_t index = std::int64_t(i % std::size_t(line_length));
    const int d = int(index * kIndexDeciles / line_length);
    ++count[d];
    right += correct[i] ? 1 : 0;
    if (!errors[i]) {
      undefined[d] = true;
      continue;
    }
    worst_in[d] = std::max(worst_in[d], *errors[i]);
    total[d] += *errors[i];
  }
  s.share_correctly_rounded = double(right) / double(errors.size());
  for (int d = 0; d < kIndexDeciles; ++d) {
    if (count[d] == 0 || undefined[d]) continue;
    s.max_ulp_by_decile[d] = worst_in[d];
    s.mean_ulp_by_decile[d] = total[d] / double(count[d]);
  }
  return s;
}

}  // namespace ulpscope
