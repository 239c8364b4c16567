#pragma once
// The limits of a run matrix, checked the same way whether the settings came
// from the command line or from a baseline's header (docs/bad-inputs.md): a baseline
// cannot ask for what a flag would refuse.
#include <cstdint>
#include <string>

namespace ulpscope {

struct MatrixSettings;  // accuracy/run_matrix.hpp

inline constexpr std::int64_t kMaxSize = std::int64_t(1) << 40;  // --n, --cols
inline constexpr int kMaxRuns = 1000;                              // --runs
inline constexpr int kMaxPermutations = 1000;                      // no flag; the full matrix uses 4

// The first problem with the settings as one line ("settings: runs 0 is not
// in [1, 1000]"), or an empty string.
std::string settings_problem(const MatrixSettings& s);

}  // namespace ulpscope
