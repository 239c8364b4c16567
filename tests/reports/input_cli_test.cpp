// accuracy_report --input x.npy --op sum --accumulator exact --backend cpu --format json:
// reference.rounded is the correctly rounded sum of the file's values in its
// dtype, reference.exact the exact value (issue 10, "Done when").
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <sys/wait.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_files.hpp"

namespace {

// One scratch directory for the program's files, removed when it exits.
const std::filesystem::path& temp_dir() {
  static const ulpscope::test::ScratchDir dir;
  return dir.path();
}

// A version 1.0 .npy file of little-endian float32 values, 1-D.
void write_npy_f4(const std::filesystem::path& path, const std::vector<float>& v) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(v.size()) + ",), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const unsigned short len = static_cast<unsigned short>(header.size());
  f.put(char(len & 0xFF));
  f.put(char(len >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
}

struct ProgramRun {
  int status;
  std::string out;
};

ProgramRun run(const std::string& args) {
  const auto out = temp_dir() / "out.txt";
  const std::string cmd = std::string(ULPSCOPE_ACCURACY_REPORT) + " " + args + " > " + out.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(out);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, std::string(std::istreambuf_iterator<char>(f), {})};
}

TEST(InputCli, ExactSumOfAnNpyFileGivesTheRoundedAndTheExactReference) {
  // 1e30 + 3 - 1e30 + 0.1f: the exact sum is 3 + 0.100000001490116119384765625.
  const auto path = temp_dir() / "x.npy";
  write_npy_f4(path, {1e30f, 3.0f, -1e30f, 0.1f});
  const ProgramRun r = run("--input " + path.string() + " --op sum --accumulator exact --backend cpu --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["cells"].empty());
  for (const auto& c : j["cells"]) {
    EXPECT_EQ(c["distribution"], "file:x.npy");
    EXPECT_EQ(c["n"], 4);
    EXPECT_EQ(c["reference"]["exact"], "3.100000001490116119384765625e+00");
    EXPECT_EQ(c["reference"]["rounded"], "0x1.8cccccp+1");  // RN_fp32(3.1000000014901...)
    EXPECT_EQ(c["result"], c["reference"]["rounded"]);        // exact is correctly rounded
    EXPECT_EQ(c["correctly_rounded"], true);
  }
}

TEST(InputCli, MalformedOrMissingFilesExit2WithOneLine) {
  const auto bad = temp_dir() / "bad.npy";
  std::ofstream(bad, std::ios::binary) << "\x93NUMPY";
  for (const std::string& path : {bad.string(), (temp_dir() / "missing.npy").string()}) {
    const ProgramRun r = run("--input " + path + " --op sum --backend cpu --format json");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

// The settings check (docs/bad-inputs.md) applies to the flags' matrix, not to the
// shape of an --input file: an empty array (row width 0) is still measured.
TEST(InputCli, AnEmptyNpyFileIsStillMeasured) {
  const auto path = temp_dir() / "empty.npy";
  write_npy_f4(path, {});
  const ProgramRun r = run("--input " + path.string() + " --op sum --accumulator fp32 --backend cpu -q --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["cells"].empty());
}

// Float64 data is rounded to fp32 without --dtype; that is said,
// in one line on stderr, not done silently.
TEST(InputCli, Float64DataRoundedToFp32IsSaid) {
  const auto path = temp_dir() / "wide.npy";
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  {
    std::ofstream f(path, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    f.put(char(header.size() & 0xFF));
    f.put(char(header.size() >> 8));
    f << header;
    const double v[3] = {0.1, 0.2, 0.3};
    f.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  const auto report = temp_dir() / "wide.json";
  const ProgramRun r = run("--input " + path.string() + " --op sum --accumulator fp32 --backend cpu -q --format json"
                           " --out " + report.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("wide.npy: float64 data rounded to fp32 (give --dtype to choose the format)"),
            std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  // With --dtype the choice is the user's: nothing to say.
  const ProgramRun quiet = run("--input " + path.string() + " --dtype fp32 --op sum --accumulator fp32 --backend cpu"
                               " -q --format json --out " + report.string());
  ASSERT_EQ(quiet.status, 0) << quiet.out;
  EXPECT_EQ(quiet.out, "");
}

// A size that cannot fit is refused before any work, in one line naming the
// size, the estimate and the limit (docs/bad-inputs.md), never an
// out-of-memory crash part way: 2^40 fp32 values are 4 TiB.
TEST(InputCli, ASizeThatDoesNotFitIsRefusedAtOnce) {
  for (const char* n : {"2^40", "1e12"}) {
    const ProgramRun r = run(std::string("--n ") + n + " --op sum --dtype fp32 --backend cpu -q");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("of host memory;"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("is available"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

}  // namespace
