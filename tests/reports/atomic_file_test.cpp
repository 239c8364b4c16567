// Nothing half-written: the target holds the old content or the new one,
// never a mix, even when the writing process is killed midway.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "reports/atomic_file.hpp"
#include "reports/report_format.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

std::size_t files_in(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

TEST(AtomicFile, WritesAndReplaces) {
  test::ScratchDir dir;
  const auto path = dir / "report.json";
  write_file_atomically(path, "first");
  EXPECT_EQ(test::read_text(path), "first");
  write_file_atomically(path, "second, longer");
  EXPECT_EQ(test::read_text(path), "second, longer");
  write_file_atomically(path, "");
  EXPECT_EQ(test::read_text(path), "");
  EXPECT_EQ(files_in(dir.path()), 1u);  // no temporary file left behind
  // An ordinary file, readable by others under the usual umask.
  const auto perms = std::filesystem::status(path).permissions();
  EXPECT_NE(perms & std::filesystem::perms::owner_read, std::filesystem::perms::none);
}

TEST(AtomicFile, FailureLeavesTheOldFileAndNoTemporary) {
  test::ScratchDir dir;
  const auto path = dir / "report.json";
  write_file_atomically(path, "old");
  // A directory where the file should be: rename fails after the data is written.
  const auto blocked = dir / "blocked";
  std::filesystem::create_directories(blocked / "inside");
  try {
    write_file_atomically(blocked, "new");
    ADD_FAILURE() << "renamed over a non-empty directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("blocked"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_directory(blocked));
  EXPECT_EQ(test::read_text(path), "old");
  EXPECT_EQ(files_in(dir.path()), 2u);  // report.json and blocked/
  // A directory that does not exist.
  EXPECT_THROW(write_file_atomically(dir / "absent" / "r.json", "x"), std::runtime_error);
}

TEST(AtomicFile, ReportThatCannotBeRenderedLeavesTheOldFile) {
  test::ScratchDir dir;
  const auto path = dir / "report.json";
  write_file_atomically(path, "old");
  Report bad = test::sample_report();
  bad.header.settings_json = "not json";
  EXPECT_THROW(write_report_file(bad, ReportFormat::json, path), std::invalid_argument);
  EXPECT_EQ(test::read_text(path), "old");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

// A child writes a large file over `path` and gets `sig` as soon as its
// temporary file appears. Returns the child's wait status; the target is
// then either its old or its new content, whenever the signal landed.
int signal_a_writer_mid_write(const std::filesystem::path& dir, const std::filesystem::path& path,
                              const std::string& new_content, int sig) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    try {
      write_file_atomically(path, new_content);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  bool saw_temp = false;
  for (int i = 0; i < 20000 && !saw_temp; ++i) {
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().filename().string().find(".tmp.") != std::string::npos) saw_temp = true;
    if (!saw_temp) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  ::kill(child, sig);
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

// Leaves only `path` in dir, holding old_content, for the next attempt.
void reset_to(const std::filesystem::path& dir, const std::filesystem::path& path, const std::string& old_content) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path() != path) std::filesystem::remove(e.path());
  write_file_atomically(path, old_content);
}

// SIGKILL: the temporary file stays behind, the target is whole.
TEST(AtomicFile, KilledWriterLeavesOldOrNew) {
  test::ScratchDir dir;
  const auto path = dir / "report.csv";
  const std::string old_content(1000, 'o');
  const std::string new_content(64 << 20, 'n');
  write_file_atomically(path, old_content);
  int killed_mid_write = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int status = signal_a_writer_mid_write(dir.path(), path, new_content, SIGKILL);
    ASSERT_GE(status, 0) << "fork failed";
    const std::string now = test::read_text(path);
    EXPECT_TRUE(now == old_content || now == new_content) << "a half-written file of " << now.size() << " bytes";
    if (WIFSIGNALED(status) && now == old_content) ++killed_mid_write;
    reset_to(dir.path(), path, old_content);
  }
  // At least one kill must have landed while the temporary file was being
  // written, or this test would check nothing.
  EXPECT_GT(killed_mid_write, 0);
}

// A FIFO, a directory or a symbolic link at the target is not
// replaced (rename would swap the link for a file, its target left stale).
TEST(AtomicFile, RefusesTargetsThatAreNotRegularFiles) {
  test::ScratchDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directories(dir / "empty_dir");
  test::write_text(dir / "target", "keep");
  std::filesystem::create_symlink(dir / "target", dir / "link");
  for (const std::string name : {"fifo", "empty_dir", "link"}) {
    EXPECT_THROW(write_file_atomically(dir / name, "new"), OutputFileError) << name;
    EXPECT_THROW(check_output_path(dir / name, "--out", {}), OutputFileError) << name;
  }
  EXPECT_EQ(std::filesystem::symlink_status(dir / "fifo").type(), std::filesystem::file_type::fifo);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "empty_dir"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link"));
  EXPECT_EQ(test::read_text(dir / "target"), "keep");
  EXPECT_EQ(files_in(dir.path()), 4u);  // no temporary file left behind
}

// The checks a run makes before it starts (docs/bad-inputs.md).
TEST(AtomicFile, CheckOutputPath) {
  test::ScratchDir dir;
  test::write_text(dir / "in.npy", "data");
  const NamedPath input{dir / "in.npy", "--input"};
  EXPECT_NO_THROW(check_output_path(dir / "new.json", "--out", {input}));
  EXPECT_NO_THROW(check_output_path(dir / "in.npy.json", "--out", {input, {"", "--baseline"}}));
  const auto message = [&](const std::filesystem::path& target, const std::vector<NamedPath>& others) {
    try {
      check_output_path(target, "--out", others);
    } catch (const OutputFileError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(dir / "in.npy", {input}).find("in.npy: is also this run's --input "), std::string::npos);
  EXPECT_NE(message(dir / "." / "in.npy", {input}).find("is also this run's --input"), std::string::npos);
  EXPECT_NE(message(dir / "missing" / "r.json", {}).find("does not exist"), std::string::npos);
  EXPECT_NE(message(dir / "in.npy" / "r.json", {}).find("is not a directory"), std::string::npos);
  EXPECT_EQ(test::read_text(dir / "in.npy"), "data");
}

// SIGTERM (or SIGINT) mid-write removes the temporary file and still ends
// the process by that signal (docs/bad-inputs.md).
TEST(AtomicFile, TerminatedWriterLeavesNoTemporaryFile) {
  test::ScratchDir dir;
  const auto path = dir / "report.csv";
  const std::string old_content(1000, 'o');
  const std::string new_content(64 << 20, 'n');
  write_file_atomically(path, old_content);
  int terminated_mid_write = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int status = signal_a_writer_mid_write(dir.path(), path, new_content, SIGTERM);
    ASSERT_GE(status, 0) << "fork failed";
    const std::string now = test::read_text(path);
    EXPECT_TRUE(now == old_content || now == new_content) << "a half-written file of " << now.size() << " bytes";
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), SIGTERM);
      if (now == old_content) ++terminated_mid_write;
    }
    EXPECT_EQ(files_in(dir.path()), 1u) << "a temporary file was left behind";
    reset_to(dir.path(), path, old_content);
  }
  EXPECT_GT(terminated_mid_write, 0);
}

}  // namespace
}  // namespace ulpscope
