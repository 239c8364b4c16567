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

// A version 1.0 .npy file of `count` values of NumPy type `descr` ("<f4",
// "<f8", "<f2"), 1-D, from their little-endian bytes.
void write_npy(const std::filesystem::path& path, const std::string& descr, std::size_t count, const void* data,
               std::size_t bytes) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const unsigned short len = static_cast<unsigned short>(header.size());
  f.put(char(len & 0xFF));
  f.put(char(len >> 8));
  f << header;
  f.write(static_cast<const char*>(data), std::streamsize(bytes));
}

void write_npy_f4(const std::filesystem::path& path, const std::vector<float>& v) {
  write_npy(path, "<f4", v.size(), v.data(), v.size() * sizeof(float));
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
  const double v[3] = {0.1, 0.2, 0.3};
  write_npy(path, "<f8", 3, v, sizeof v);
  const auto report = temp_dir() / "wide.json";
  const ProgramRun r = run("--input " + path.string() + " --op sum --accumulator fp32 --backend cpu -q --format json"
                           " --out " + report.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("wide.npy: float64 data ('<f8') converted to fp32 (give --dtype to choose the format): 3 of 3 "
                       "values rounded"),
            std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  // With --dtype the choice is the user's, and still said: the values changed.
  const ProgramRun chosen = run("--input " + path.string() + " --dtype fp32 --op sum --accumulator fp32 --backend cpu"
                                " -q --format json --out " + report.string());
  ASSERT_EQ(chosen.status, 0) << chosen.out;
  EXPECT_EQ(chosen.out, "accuracy_report: " + path.string() +
                            ": float64 data ('<f8') converted to fp32 (--dtype fp32): 3 of 3 values rounded\n");
  std::ifstream in(report);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["header"]["input"]["stored_as"], "<f8");
  EXPECT_EQ(j["header"]["input"]["read_as"], "fp32");
  EXPECT_EQ(j["header"]["input"]["conversion"], "float64 data ('<f8') converted to fp32 (--dtype fp32): 3 of 3 values "
                                                "rounded");
}

// --dtype bf16 on an fp16 file rounds the data: said on stderr, in the
// report's header and in the table, never silent.
TEST(InputCli, ConvertingAFileToAnotherFormatIsSaid) {
  const auto path = temp_dir() / "half.npy";
  const unsigned short v[2] = {0x3C01, 0x4200};  // 1 + 2^-10 (not a bf16 value) and 3
  write_npy(path, "<f2", 2, v, sizeof v);
  const ProgramRun r = run("--input " + path.string() + " --dtype bf16 --op sum --accumulator fp32 --backend cpu -q");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string line = "float16 data ('<f2') converted to bf16 (--dtype bf16): 1 of 2 values rounded";
  EXPECT_NE(r.out.find("accuracy_report: " + path.string() + ": " + line + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("your data: " + path.string() + " (stored as '<f2', read as bf16)\n  " + line), std::string::npos)
      << r.out;
}

// 1e8 + 4448 - 1e8 in fp32: the exact sum, 4448, is an fp32 value. Of the
// three values a user got on three devices, 4448 is right (0 ULPs) and 4444
// and 4450 are 8192 and 4096 ULPs of fp32 away (ulp(4448) = 2^-11).
TEST(InputCli, CheckScoresTheUsersValuesAgainstTheReference) {
  const auto path = temp_dir() / "devices.npy";
  write_npy_f4(path, {1e8f, 4448.0f, -1e8f});
  const auto report = temp_dir() / "check.json";
  const std::string args = "--input " + path.string() + " --op sum --dtype fp32 --check 4444,4448,0x1.162p+12 "
                           "--backend cpu -q";
  const ProgramRun r = run(args + " --format json --out " + report.string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(report);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["checks"].size(), 3u) << j.dump(2);
  const struct {
    const char* label;
    const char* value;
    double ulps;
    bool correctly_rounded;
  } expected[] = {{"user value 1", "0x1.15cp+12", 8192, false},
                  {"user value 2", "0x1.16p+12", 0, true},
                  {"user value 3", "0x1.162p+12", 4096, false}};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& c = j["checks"][i];
    EXPECT_EQ(c["label"], expected[i].label);
    EXPECT_EQ(c["value"], expected[i].value);
    EXPECT_EQ(c["ulp_error"], expected[i].ulps) << c.dump();
    EXPECT_EQ(c["correctly_rounded"], expected[i].correctly_rounded) << c.dump();
    EXPECT_EQ(c["given_exactly"], true);
    EXPECT_EQ(c["op"], "sum");
    EXPECT_EQ(c["out_dtype"], "fp32");
    EXPECT_EQ(c["reference"]["rounded"], "0x1.16p+12");
    EXPECT_EQ(c["reference"]["exact"], "4.448e+03");
  }
  // The table: the reference in decimal once, every kernel's result and
  // every value in decimal beside its hex-float.
  const ProgramRun t = run(args + " --accumulator fp32,exact --shape serial");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find("sum fp32: correctly rounded 4448 (0x1.16p+12), exact 4448\n"), std::string::npos) << t.out;
  for (const char* row : {"exact serial", "user value 1", "user value 2", "user value 3"})
    EXPECT_NE(t.out.find(row), std::string::npos) << row << "\n" << t.out;
  EXPECT_NE(t.out.find("\n  user value 1       4444  0x1.15cp+12  8.19e+03  no\n"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\n  user value 2       4448  0x1.16p+12          0  yes\n"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\n  user value 3       4450  0x1.162p+12   4.1e+03  no\n"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\n  exact serial       4448  0x1.16p+12          0  yes\n"), std::string::npos) << t.out;
}

// --check needs one problem with one output, and values it can read:
// anything else is one line and exit status 2, before anything runs.
TEST(InputCli, CheckRefusesWhatItCannotScore) {
  const auto path = temp_dir() / "four.npy";
  write_npy_f4(path, {1.0f, 2.0f, 3.0f, 4.0f});
  const std::string input = "--input " + path.string() + " --backend cpu -q ";
  const std::pair<std::string, std::string> cases[] = {
      {input + "--op sum --check abc", "bad --check value 'abc'"},
      {input + "--op sum --check 10,4x", "bad --check value '4x'"},
      {input + "--op sum --check 1e39", "beyond fp32's largest finite value"},
      {input + "--op sum --check 10,,3", "bad --check value '' in '10,,3'"},
      {input + "--op sum --dtype fp16 --check 65520", "beyond fp16's largest finite value"},
      {"--op sum --dtype fp32 --n 4 --backend cpu -q --check 10", "give --input FILE"},
      {input + "--check 10", "--check needs one --op"},
      {input + "--op sum,mean --check 10", "--check needs one --op"},
      {input + "--op mean_var --check 10", "gives several"},
      {input + "--op rmsnorm --rows 2 --cols 2 --check 10", "gives several"},
      {input + "--op sum --axis inner --rows 2 --cols 2 --check 10", "sum along rows gives several"},
      {input + "--op dot --check 10", "dot needs a second input"},
      {"--gallery --check 10", "--gallery does not go with --check"},
  };
  for (const auto& [args, phrase] : cases) {
    const ProgramRun r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(phrase), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
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
