#include "accuracy/settings_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "accuracy/run_matrix.hpp"

namespace ulpscope {
namespace {

// The first value a list holds twice (a duplicated cell the gate would refuse).
template <class T, class Same>
std::string duplicate_in(const std::vector<T>& values, const char* what, Same same,
                         std::string (*text)(const T&)) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (same(values[i], values[j])) return fmt::format("settings: {} lists {} twice", what, text(values[i]));
  return {};
}

template <class T>
std::string plain_text(const T& v) {
  return fmt::format("{}", v);
}

template <class E>
std::string enum_text(const E& e) {
  return std::string(to_string(e));
}

std::string distribution_text(const DistributionSpec& d) { return d.name(); }

}  // namespace

std::string settings_problem(const MatrixSettings& s) {
  for (std::int64_t n : s.sizes)
    if (n < 0 || n > kMaxSize) return fmt::format("settings: size {} is not in [0, 2^40]", n);
  if (s.row_cols <= 0 || s.row_cols > kMaxSize)
    return fmt::format("settings: row_cols {} is not in [1, 2^40]", s.row_cols);
  if (s.runs < 1 || s.runs > kMaxRuns) return fmt::format("settings: runs {} is not in [1, {}]", s.runs, kMaxRuns);
  if (s.permutations < 0 || s.permutations > kMaxPermutations)
    return fmt::format("settings: permutations {} is not in [0, {}]", s.permutations, kMaxPermutations);
  if (s.throughput_n < 0 || s.throughput_n > kMaxSize)
    return fmt::format("settings: throughput_n {} is not in [0, 2^40]", s.throughput_n);
  if (!(std::isfinite(s.eps) && s.eps > 0)) return fmt::format("settings: eps {} is not a finite number > 0", s.eps);
  const auto equal = [](const auto& a, const auto& b) { return a == b; };
  for (const std::string& why :
       {duplicate_in(s.sizes, "sizes", equal, &plain_text<std::int64_t>),
        duplicate_in(s.seeds, "seeds", equal, &plain_text<std::uint64_t>),
        duplicate_in(s.ops, "ops", equal, &enum_text<Op>), duplicate_in(s.dtypes, "dtypes", equal, &enum_text<Dtype>),
        duplicate_in(s.accumulators, "accumulators", equal, &enum_text<Accumulator>),
        duplicate_in(s.shapes, "shapes", equal, &enum_text<Shape>), duplicate_in(s.axes, "axes", equal, &enum_text<Axis>),
        duplicate_in(s.distributions, "distributions",
                     [](const DistributionSpec& a, const DistributionSpec& b) {
                       return a.d == b.d && a.parameter() == b.parameter();
                     },
                     &distribution_text),
        duplicate_in(s.user_kernels, "user_kernels", equal, &plain_text<std::string>)})
    if (!why.empty()) return why;
  return {};
}

}  // namespace ulpscope
