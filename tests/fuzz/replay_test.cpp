// Every seed of the fuzzers and every input they once found a problem with
// (tests/fuzz/regressions/<target>/), run through the same target functions
// in the ordinary test suite, so that a fixed finding stays fixed under any
// compiler, with or without the sanitizers.
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.hpp"

namespace ulpscope::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// How many of the files the target read; a finding is a test failure naming the file.
int replay(const Target& target, const std::vector<fs::path>& files) {
  int read = 0;
  for (const fs::path& file : files) {
    const std::vector<std::uint8_t> data = bytes_of(file);
    try {
      read += target.run(Bytes(data.data(), data.size())) ? 1 : 0;
    } catch (const std::exception& e) {
      ADD_FAILURE() << target.name << " on " << file << ": " << e.what();
    }
  }
  return read;
}

class FuzzReplay : public ::testing::TestWithParam<Target> {};

}  // namespace

// The target's name in test names and messages, not its bytes.
void PrintTo(const Target& target, std::ostream* out) { *out << target.name; }

namespace {


TEST_P(FuzzReplay, Seeds) {
  const Target& target = GetParam();
  const auto seeds = files_in(fs::path(ULPSCOPE_FUZZ_SEEDS) / target.name);
  ASSERT_FALSE(seeds.empty()) << "no seeds in " << ULPSCOPE_FUZZ_SEEDS << "/" << target.name;
  const int read = replay(target, seeds);
  // The seeds are real inputs: the reports and their settings were all
  // written by accuracy_report; some .npy fixtures are refused on purpose.
  const std::string name = target.name;
  if (name == "report_reader" || name == "baseline_settings") EXPECT_EQ(read, int(seeds.size()));
  else EXPECT_GT(read, 0);
}

TEST_P(FuzzReplay, Regressions) {
  const Target& target = GetParam();
  const auto found = files_in(fs::path(ULPSCOPE_FUZZ_REGRESSIONS) / target.name);
  if (found.empty()) GTEST_SKIP() << "no stored findings for " << target.name;
  replay(target, found);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(kTargets),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ulpscope::fuzz
