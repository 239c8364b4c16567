#include "accuracy/phase_times.hpp"

#include <fmt/format.h>

namespace ulpscope {

std::string PhaseTimes::summary() const {
  static constexpr const char* kNames[] = {"input",        "references", "upload",  "kernel runs",
                                           "model checks", "permutations", "scoring", "throughput"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == std::size_t(Phase::count_));
  std::string out;
  for (std::size_t i = 0; i < std::size_t(Phase::count_); ++i)
    if (ns_[i].load() > 0) out += fmt::format("{:<13} {:9.3f} s\n", kNames[i], double(ns_[i].load()) * 1e-9);
  return out;
}

}  // namespace ulpscope
