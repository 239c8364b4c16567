#pragma once
// The readers of --input take a path; a fuzz input becomes a file in memory
// (memfd_create), rewritten for each input and named /proc/self/fd/N, so that
// the readers open, size and read it exactly as they do a user's file.
#include <string>

#include "tests/fuzz/fuzz_targets.hpp"

namespace ulpscope::fuzz {

// The path of one in-memory file per process holding exactly data.
const std::string& memory_file_holding(Bytes data);

}  // namespace ulpscope::fuzz
