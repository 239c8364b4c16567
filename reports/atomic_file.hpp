#pragma once
// Nothing half-written (issue 7, item 2): a report file is written to a
// temporary file in the same directory, flushed to disk and renamed over the
// target, so that an interrupted run leaves either the old file or the new one.
#include <filesystem>
#include <string_view>

namespace ulpscope {

// Throws std::runtime_error (one line naming the path and the reason) when
// the file cannot be written; the temporary file is then removed and the
// target is untouched.
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

}  // namespace ulpscope
