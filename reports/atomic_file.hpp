#pragma once
// Nothing half-written (issue 7, item 2): a report file is written to a
// temporary file in the same directory, flushed to disk and renamed over the
// target, so that an interrupted run leaves either the old file or the new one.
//
// An output never replaces what is not an ordinary file (a device
// node, a FIFO, a directory) nor a symbolic link (rename would swap the link
// for a file and leave its target stale: name the file itself), nor an input
// of the same run; SIGINT and SIGTERM remove the temporary file.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ulpscope {

// An output file that cannot or must not be written (accuracy_report: status 2).
struct OutputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws OutputFileError (one line naming the path and the reason) when the
// file cannot be written; the temporary file is then removed and the target
// is untouched.
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

// Another file of the same run, and the flag that names it ("--baseline").
struct NamedPath {
  std::filesystem::path path;
  std::string flag;
};

// Before a run: throws OutputFileError when target (given as `flag`) exists
// and is not a regular file, is a symbolic link, is the same file as one of
// others (under any spelling), or when its directory is missing, not a
// directory or not writable.
void check_output_path(const std::filesystem::path& target, std::string_view flag,
                       const std::vector<NamedPath>& others);

}  // namespace ulpscope
