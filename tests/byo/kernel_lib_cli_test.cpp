// accuracy_report --kernel-lib through the real program on the CPU backend:
// a C plug-in's kernels measured alone, their cells in the report; broken
// plug-ins refused with one line, status 2 and no report; the gate re-running
// a baseline of user kernels.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "test_files.hpp"

namespace ulpscope {
namespace {

const std::string kTool = ULPSCOPE_ACCURACY_REPORT;
const std::string kGood = BYO_GOOD_PLUGIN;

test::CommandResult run(const std::string& args) { return test::run_command(kTool + " " + args); }

std::size_t lines(const std::string& s) { return std::size_t(std::count(s.begin(), s.end(), '\n')); }

TEST(KernelLibCli, MeasuresThePluginsKernelsAlone) {
  test::ScratchDir dir;
  const auto out = (dir / "r.json").string();
  const auto r = run("--kernel-lib " + kGood + " --backend cpu -q --n 1000,2^12 --seed 1 --format json --out " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = nlohmann::json::parse(test::read_text(out));
  EXPECT_EQ(doc["header"]["settings"]["user_kernels"], nlohmann::json({"c_serial_sum", "c_picky_sum"}));
  EXPECT_EQ(doc["header"]["settings"]["ops"], nlohmann::json({"sum"}));
  EXPECT_EQ(doc["header"]["settings"]["dtypes"], nlohmann::json({"fp32"}));
  std::size_t serial = 0, picky = 0;
  for (const auto& c : doc["cells"]) {
    EXPECT_EQ(c["op"], "sum");
    EXPECT_EQ(c["status"], "ok");
    serial += c["shape"] == "c_serial_sum";
    picky += c["shape"] == "c_picky_sum";
  }
  const std::size_t inputs = doc["header"]["settings"]["distributions"].size() * 2;
  // The matrix runs along the kernels' axes: c_serial_sum declares all
  // three, c_picky_sum none (the whole array).
  EXPECT_EQ(doc["header"]["settings"]["axes"], nlohmann::json({"all", "inner", "outer"}));
  EXPECT_EQ(serial, 3 * inputs);
  EXPECT_EQ(picky, inputs);
  EXPECT_EQ(serial + picky, doc["cells"].size());  // no built-in kernels unless asked for
}

TEST(KernelLibCli, BesideBuiltInKernelsWhenAsked) {
  const auto r = run("--kernel-lib " + kGood + " --backend cpu -q --dist normal --n 1000 --accumulator fp32"
                     " --shape serial,tree --format csv");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* shape : {",serial,", ",tree,", ",c_serial_sum,", ",c_picky_sum,"})
    EXPECT_NE(r.output.find(shape), std::string::npos) << shape << "\n" << r.output;
}

// --recommend: the plug-in's kernels of the op and format are candidates
// beside the built-in accumulators, with no cost estimate on the CPU.
TEST(KernelLibCli, RecommendTakesThePluginsKernelsAsCandidates) {
  const auto r = run("--recommend sum --dtype fp32 --hidden 1024 --kernel-lib " + kGood +
                     " --backend cpu -q --dist normal --seed 1 --format json");
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(0, r.output.rfind('}') + 1));
  bool mine = false;
  for (const auto& k : j["candidates"]) {
    if (k["name"] != "c_serial_sum") continue;
    mine = true;
    EXPECT_TRUE(k["user_kernel"].get<bool>());
    EXPECT_TRUE(k["cost"].is_null());
    EXPECT_TRUE(k["groups"].contains("realistic"));
  }
  EXPECT_TRUE(mine) << r.output;
  EXPECT_EQ(run("--recommend rmsnorm --dtype fp32 --hidden 64 --kernel-lib " + kGood + " --backend cpu -q").status, 2);
}

TEST(KernelLibCli, ALibraryErrorFailsItsCellsAndTheRun) {
  const auto r = run("--kernel-lib " + kGood + " --backend cpu -q --dist normal --n 33 --format csv");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("failed: c_picky_sum (run_host): refuses n = 33"), std::string::npos) << r.output;
}

struct Broken {
  std::string path, message;
};

TEST(KernelLibCli, BrokenLibrariesAreOneLineAndStatusTwo) {
  test::ScratchDir dir;
  const auto text = (dir / "libtext.so").string();
  test::write_text(text, "not a library\n");
  const Broken cases[] = {
      {"/nonexistent/libmine.so", "accuracy_report: --kernel-lib /nonexistent/libmine.so: no such file"},
      {text, "accuracy_report: --kernel-lib " + text + ": cannot load it ("},
      {BYO_NO_ENTRY_PLUGIN, std::string("accuracy_report: --kernel-lib ") + BYO_NO_ENTRY_PLUGIN +
                                ": exports no symbol ulpscope_get_plugin"},
      {BYO_WRONG_VERSION_PLUGIN, std::string("accuracy_report: --kernel-lib ") + BYO_WRONG_VERSION_PLUGIN +
                                     ": plug-in ABI version 99, this ulpscope reads version 1"},
  };
  for (const Broken& b : cases) {
    const auto out = dir / "never.json";
    const auto r = run("--kernel-lib " + b.path + " --backend cpu -q --format json --out " + out.string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output.rfind(b.message, 0), 0u) << r.output;
    EXPECT_EQ(lines(r.output), 1u) << r.output;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(KernelLibCli, TheGateReRunsABaselineOfUserKernels) {
  test::ScratchDir dir;
  const auto base = (dir / "base.json").string();
  ASSERT_EQ(run("--kernel-lib " + kGood + " --backend cpu -q --n 1000 --seed 1 --format json --out " + base).status,
            0);
  const auto same = run("--kernel-lib " + kGood + " --backend cpu -q --baseline " + base + " --gate --format json --out " +
                        (dir / "cur.json").string());
  EXPECT_EQ(same.status, 0) << same.output;
  // Without the library the baseline's kernels cannot be re-run.
  const auto without = run("--backend cpu -q --baseline " + base + " --gate");
  EXPECT_EQ(without.status, 2) << without.output;
  EXPECT_NE(without.output.find("the baseline measured user kernel 'c_serial_sum': give the --kernel-lib that exports it"),
            std::string::npos)
      << without.output;
}

// A plug-in that returns 0 without writing out gets failed cells
// naming the kernel (it got "ok" in all of them), and the run exits 1.
TEST(KernelLibCli, AKernelThatDoesNotWriteItsOutputGetsFailedCells) {
  test::ScratchDir dir;
  const auto out = (dir / "r.json").string();
  const auto r = run("--kernel-lib " + std::string(BYO_LAZY_PLUGIN) +
                     " --backend cpu -q --dist normal,constant --n 1000 --cols 100 --seed 1 --format json --out " + out);
  EXPECT_EQ(r.status, 1) << r.output;
  const auto doc = nlohmann::json::parse(test::read_text(out));
  std::size_t lazy = 0, half = 0, all_ones = 0;
  for (const auto& c : doc["cells"]) {
    const std::string status = c["status"];
    if (c["shape"] == "all_ones_sum") {
      EXPECT_EQ(status.find("did not write"), std::string::npos) << status;
      ++all_ones;
      continue;
    }
    EXPECT_NE(status.find(c["shape"].get<std::string>() + " (run_host): did not write its output"), std::string::npos)
        << status;
    lazy += c["shape"] == "lazy_sum";
    half += c["shape"] == "half_sum";
  }
  EXPECT_EQ(lazy, 2u);
  EXPECT_EQ(half, 2u);
  EXPECT_EQ(all_ones, 2u);
}

// Plug-in calls run in child processes by default: a crash, an
// exit, an abort, a hang (--kernel-timeout) or a write past out becomes a
// failed cell naming the kernel, and the working kernel's cells survive.
TEST(KernelLibCli, CrashingKernelsFailTheirCellsAndTheRunGoesOn) {
  test::ScratchDir dir;
  const auto out = (dir / "r.json").string();
  const auto r = run("--kernel-lib " + std::string(BYO_CRASH_PLUGIN) +
                     " --kernel-timeout 1 --backend cpu -q --dist normal --n 100 --seed 1 --format json --out " + out);
  EXPECT_EQ(r.status, 1) << r.output;
  const auto doc = nlohmann::json::parse(test::read_text(out));
  std::map<std::string, std::string> status;
  for (const auto& c : doc["cells"]) status[c["shape"]] = c["status"];
  EXPECT_EQ(status["fine_sum"], "ok");
  EXPECT_EQ(status["segv_sum"].rfind("failed: segv_sum (run_host): killed by signal 11", 0), 0u) << status["segv_sum"];
  EXPECT_EQ(status["exit_sum"], "failed: exit_sum (run_host): exited with status 3 instead of returning");
  EXPECT_EQ(status["abort_sum"].rfind("failed: abort_sum (run_host): killed by signal 6", 0), 0u) << status["abort_sum"];
  EXPECT_EQ(status["hang_sum"], "failed: hang_sum (run_host): did not return within 1 s (killed; --kernel-timeout)");
  EXPECT_EQ(status["overrun_sum"], "failed: overrun_sum (run_host): wrote past its output (4 bytes)");
  const auto bad = run("--kernel-lib " + std::string(BYO_CRASH_PLUGIN) + " --kernel-timeout -1 --backend cpu");
  EXPECT_EQ(bad.status, 2) << bad.output;
}

// accuracy_report finds the program that runs plug-ins' device calls beside
// itself (plugin/kernel_host.hpp): the build puts it there.
TEST(KernelLibCli, TheKernelHostIsBuiltBesideTheProgram) {
  const std::string program = ULPSCOPE_ACCURACY_REPORT;
  const std::filesystem::path host = program.substr(0, program.rfind('/')) + "/ulpscope-kernel-host";
  EXPECT_TRUE(std::filesystem::is_regular_file(host)) << host;
}

}  // namespace
}  // namespace ulpscope
