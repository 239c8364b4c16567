// The CI gate: each kind of regression fails (status 1), what is not a
// regression passes (0), and reports that cannot be compared are refused in
// one line (2).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/atomic_file.hpp"
#include "reports/gate.hpp"
#include "reports/json_report.hpp"
#include "reports/report_format.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// A change to the current report, the options, and what the gate must say.
struct GateCase {
  const char* name;
  void (*change)(Report& current);
  GateOptions options;
  int status;
  std::optional<FindingKind> finding;  // the one finding expected, if any
};

// Cell 0: sum fp16 fp32 tree normal (ulp 0.5, deterministic, matches model);
// cell 2: exact, correctly rounded; see sample_report.hpp.
const GateCase kCases[] = {
    {"identical", [](Report&) {}, {}, kGatePass, std::nullopt},
    {"ulp_grows_beyond_tolerance", [](Report& r) { r.cells[0].ulp_error = 2.0; }, {1.0, {}}, kGateRegression,
     FindingKind::ulp_error_grew},
    {"ulp_grows_within_tolerance", [](Report& r) { r.cells[0].ulp_error = 1.5; }, {1.0, {}}, kGatePass,
     std::nullopt},
    {"ulp_grows_by_a_hair_at_zero_tolerance", [](Report& r) { r.cells[0].ulp_error = 0.5000001; }, {},
     kGateRegression, FindingKind::ulp_error_grew},
    {"ulp_becomes_undefined",
     [](Report& r) {
       r.cells[0].ulp_error.reset();
       r.cells[0].error_note = "non-finite result for a finite reference";
     },
     {}, kGateRegression, FindingKind::ulp_error_undefined},
    {"no_longer_correctly_rounded", [](Report& r) { r.cells[2].correctly_rounded = false; }, {1e9, {}},
     kGateRegression, FindingKind::no_longer_correctly_rounded},
    {"runs_become_non_deterministic", [](Report& r) { r.cells[0].distinct_results = 2; }, {}, kGateRegression,
     FindingKind::became_non_deterministic},
    {"configs_become_dependent", [](Report& r) { r.cells[0].distinct_across_configs = 2; }, {},
     kGateRegression, FindingKind::became_config_dependent},
    {"already_non_deterministic_stays_so", [](Report& r) { r.cells[3].distinct_results = 4; }, {}, kGatePass,
     std::nullopt},
    {"matches_model_turns_false", [](Report& r) { r.cells[0].matches_model = false; }, {}, kGateRegression,
     FindingKind::model_mismatch},
    {"matches_model_no_longer_checked", [](Report& r) { r.cells[0].matches_model.reset(); }, {}, kGateRegression,
     FindingKind::model_mismatch},
    {"cell_disappears", [](Report& r) { r.cells.erase(r.cells.begin() + 1); }, {}, kGateRegression,
     FindingKind::cell_missing},
    {"cell_fails", [](Report& r) { r.cells[1].status = "failed: out of memory"; }, {}, kGateRegression,
     FindingKind::failed},
    {"throughput_drops_beyond_tolerance", [](Report& r) { r.cells[0].gbps = 700.0; }, {0, 0.1},
     kGateRegression, FindingKind::throughput_dropped},
    {"throughput_drops_within_tolerance", [](Report& r) { r.cells[0].gbps = 850.0; }, {0, 0.1}, kGatePass,
     std::nullopt},
    // The documented range [0, 1] includes 1 (any drop allowed).
    {"throughput_tolerance_one_allows_any_drop", [](Report& r) { r.cells[0].gbps = 1.0; }, {0, 1.0}, kGatePass,
     std::nullopt},
    {"throughput_drop_unchecked_without_tolerance", [](Report& r) { r.cells[0].gbps = 100.0; }, {}, kGatePass,
     std::nullopt},
    {"new_cell_is_not_a_regression",
     [](Report& r) {
       r.cells.push_back(r.cells[0]);
       r.cells.back().seed = 2;
     },
     {}, kGatePass, FindingKind::new_cell},
    {"improvement_is_not_a_regression", [](Report& r) { r.cells[0].ulp_error = 0.25; }, {}, kGatePass,
     FindingKind::improved},
    {"failed_cell_that_now_runs_is_an_improvement", [](Report& r) { r.cells[7].status = "ok"; }, {}, kGatePass,
     FindingKind::improved},
};

class GateCases : public ::testing::TestWithParam<GateCase> {};

TEST_P(GateCases, FromFiles) {
  const GateCase& gc = GetParam();
  test::ScratchDir dir;
  const Report baseline = test::sample_report();
  Report current = baseline;
  gc.change(current);
  write_report_file(baseline, ReportFormat::json, dir / "base.json");
  write_report_file(current, ReportFormat::json, dir / "cur.json");

  const GateOutcome out = gate_report_files(dir / "base.json", dir / "cur.json", gc.options);
  ASSERT_TRUE(out.result.has_value()) << out.error;
  EXPECT_EQ(out.status, gc.status);
  EXPECT_EQ(gate_exit_status(*out.result), gc.status);
  if (gc.finding) {
    ASSERT_EQ(out.result->findings.size(), 1u) << out.result->markdown;
    const GateFinding& f = out.result->findings[0];
    EXPECT_EQ(f.kind, *gc.finding) << to_string(f.kind);
    EXPECT_NE(out.result->markdown.find(std::string(to_string(f.kind))), std::string::npos);
    EXPECT_NE(out.result->markdown.find(f.change.substr(0, 10)), std::string::npos) << out.result->markdown;
  } else {
    EXPECT_TRUE(out.result->findings.empty()) << out.result->markdown;
  }
  EXPECT_NE(out.result->markdown.find(gc.status == kGatePass ? "pass" : "FAIL"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Reports, GateCases, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Gate, AtomicShapesPromiseNoDeterminism) {
  // A baseline atomic cell that happened to give one result, then two: the
  // order of atomicAdd varies by design, so this is no regression; the same
  // change in a tree cell is one.
  for (const char* shape : {"atomic", "tree"}) {
    Report baseline = test::sample_report();
    baseline.cells[0].shape = shape;
    Report current = baseline;
    current.cells[0].distinct_results = 2;
    current.cells[0].distinct_across_permutations = 2;
    const GateResult r = run_gate(baseline, current, {});
    EXPECT_EQ(gate_exit_status(r), std::string(shape) == "atomic" ? kGatePass : kGateRegression) << shape;
  }
}

TEST(Gate, UserKernelsDeclaredNonDeterministicPromiseNoDeterminism) {
  // The same for a user kernel that the settings list as non-deterministic
  // (UserKernel::deterministic false); one not listed promises determinism.
  for (const bool declared : {true, false}) {
    Report baseline = test::sample_report();
    baseline.cells[0].shape = "my_atomic_sum";
    auto settings = nlohmann::json::parse(baseline.header.settings_json);
    settings["user_kernels"] = {"my_atomic_sum"};
    if (declared) settings["nondeterministic_kernels"] = {"my_atomic_sum"};
    baseline.header.settings_json = settings.dump();
    Report current = baseline;
    current.cells[0].distinct_results = 2;
    const GateResult r = run_gate(baseline, current, {});
    EXPECT_EQ(gate_exit_status(r), declared ? kGatePass : kGateRegression) << declared;
  }
}

TEST(Gate, SummaryNamesTheCellAndTheChange) {
  const Report baseline = test::sample_report();
  Report current = baseline;
  current.cells[0].ulp_error = 3.0;
  const GateResult r = run_gate(baseline, current, {});
  EXPECT_NE(r.markdown.find("sum fp16->fp16 fp32 tree normal n=1024 seed=1"), std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("max ulp_error 0.5 -> 3"), std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("**1 of 8 baseline cells regressed**"), std::string::npos) << r.markdown;
  EXPECT_EQ(r.compared_cells, baseline.cells.size());
  // The values in decimal beside their hex-floats: the result, the correctly
  // rounded reference, and the exact value.
  EXPECT_NE(r.markdown.find("result 0x1.804p+0 (1.5009765625), correctly rounded 0x1.8p+0 (1.5), exact 1.5000000"),
            std::string::npos)
      << r.markdown;
}

// A cell whose error grew and that lost correct rounding shows its values once.
TEST(Gate, ACellsValuesAreToldOnce) {
  Report baseline = test::sample_report();
  baseline.cells[0].correctly_rounded = true;
  Report current = baseline;
  current.cells[0].correctly_rounded = false;
  current.cells[0].ulp_error = 3.0;
  const GateResult r = run_gate(baseline, current, {});
  EXPECT_EQ(r.regressions(), 2u);
  EXPECT_EQ(count_of(r.markdown, "correctly rounded 0x1.8p+0 (1.5)"), 1u) << r.markdown;
}

TEST(Gate, SummaryNamesTheLabelledRun) {
  const Report baseline = test::sample_report();
  Report current = baseline;
  current.cells[0].ulp_error = 3.0;
  GateOptions options;
  options.label = "feature/faster-sum @ 1a2b3c4";
  const GateResult r = run_gate(baseline, current, options);
  EXPECT_NE(r.markdown.find("### ulpscope gate: ❌ FAIL · feature/faster-sum @ 1a2b3c4"), std::string::npos)
      << r.markdown;
  EXPECT_NE(r.markdown.find("- current: **feature/faster-sum @ 1a2b3c4**, commit abc1234"), std::string::npos)
      << r.markdown;
}

// Bits that change across permutations of the input are an order
// sensitivity, told apart from run-to-run non-determinism.
TEST(Gate, OrderSensitivityIsNotNonDeterminism) {
  Report baseline = test::sample_report();
  baseline.cells[0].permutations = 3;
  baseline.cells[0].distinct_across_permutations = 1;
  Report current = baseline;
  current.cells[0].distinct_across_permutations = 2;
  const GateResult r = run_gate(baseline, current, {});
  ASSERT_EQ(r.findings.size(), 1u) << r.markdown;
  EXPECT_EQ(r.findings[0].kind, FindingKind::became_order_sensitive);
  EXPECT_NE(r.markdown.find("became order-sensitive (input permutations)"), std::string::npos) << r.markdown;
  EXPECT_EQ(r.markdown.find("non-deterministic"), std::string::npos) << r.markdown;
}

// A cell that regressed is never also called improved: its better number is
// told beside the regression, and the cell is counted once.
TEST(Gate, ACellIsNeverBothWorseAndImproved) {
  Report baseline = test::sample_report();
  baseline.cells[0].correctly_rounded = true;
  Report current = baseline;
  current.cells[0].correctly_rounded = false;
  current.cells[0].ulp_error = 0.25;
  const GateResult r = run_gate(baseline, current, {});
  EXPECT_EQ(gate_exit_status(r), kGateRegression);
  EXPECT_EQ(r.regressed_cells(), 1u);
  std::vector<FindingKind> kinds;
  for (const auto& f : r.findings) kinds.push_back(f.kind);
  EXPECT_EQ(kinds, (std::vector<FindingKind>{FindingKind::also_changed, FindingKind::no_longer_correctly_rounded}))
      << r.markdown;
  EXPECT_NE(r.markdown.find("0 cells improved"), std::string::npos) << r.markdown;
  EXPECT_EQ(r.markdown.find("<details>"), std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("**also changed**: max ulp_error 0.5 -> 0.25"), std::string::npos) << r.markdown;
}

// --gate-summary FILE is replaced; $GITHUB_STEP_SUMMARY is appended to, as
// GitHub Actions expects of every step.
TEST(Gate, SummaryGoesToTheFileAndTheStepSummary) {
  test::ScratchDir dir;
  test::write_text(dir / "step.md", "an earlier step\n");
  test::write_text(dir / "gate.md", "an old summary\n");
  ::setenv("GITHUB_STEP_SUMMARY", (dir / "step.md").c_str(), 1);
  publish_gate_summary("### ulpscope gate: ✅ pass\n", dir / "gate.md");
  EXPECT_EQ(test::read_text(dir / "gate.md"), "### ulpscope gate: ✅ pass\n");
  EXPECT_EQ(test::read_text(dir / "step.md"), "an earlier step\n### ulpscope gate: ✅ pass\n\n");
  // Without --gate-summary, the step summary alone.
  publish_gate_summary("second\n", {});
  EXPECT_EQ(test::read_text(dir / "step.md"), "an earlier step\n### ulpscope gate: ✅ pass\n\nsecond\n\n");
  // A step summary that cannot be written is one clear error.
  ::setenv("GITHUB_STEP_SUMMARY", (dir / "missing" / "step.md").c_str(), 1);
  try {
    publish_gate_summary("x\n", {});
    ADD_FAILURE() << "wrote to a missing directory";
  } catch (const OutputFileError& e) {
    EXPECT_NE(std::string(e.what()).find("$GITHUB_STEP_SUMMARY"), std::string::npos) << e.what();
  }
  ::unsetenv("GITHUB_STEP_SUMMARY");
}

TEST(Gate, SeveralRegressionsAreAllReported) {
  const Report baseline = test::sample_report();
  Report current = baseline;
  current.cells[0].ulp_error = 3.0;
  current.cells[0].distinct_results = 2;
  current.cells[2].correctly_rounded = false;
  current.cells.pop_back();
  const GateResult r = run_gate(baseline, current, {});
  EXPECT_EQ(r.regressions(), 4u) << r.markdown;
  EXPECT_EQ(gate_exit_status(r), kGateRegression);
  // Cells are counted, not reasons, and a cell's reasons share its one row.
  EXPECT_EQ(r.regressed_cells(), 3u);
  EXPECT_NE(r.markdown.find("**3 of 8 baseline cells regressed**"), std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("#### Regressions (3 cells)"), std::string::npos) << r.markdown;
  EXPECT_EQ(count_of(r.markdown, "| sum fp16->fp16 fp32 tree normal n=1024 seed=1 |"), 1u) << r.markdown;
  EXPECT_NE(r.markdown.find("**ulp error grew**: max ulp_error 0.5 -> 3"), std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("<br>**became non-deterministic (run to run)**: distinct_results 1 -> 2"),
            std::string::npos)
      << r.markdown;
  EXPECT_NE(r.markdown.find("Reasons: cell missing: 1 cell; ulp error grew: 1 cell; no longer correctly rounded: 1 "
                            "cell; became non-deterministic (run to run): 1 cell."),
            std::string::npos)
      << r.markdown;
}

TEST(Gate, ThroughputUnmeasuredIsSaid) {
  Report baseline = test::sample_report();
  baseline.header.backend = "cpu";
  for (Cell& c : baseline.cells) c.gbps.reset();
  const GateResult r = run_gate(baseline, baseline, {0, 0.05});
  EXPECT_EQ(r.throughput_unmeasured, baseline.cells.size());
  EXPECT_NE(r.markdown.find("throughput not compared in 8 cells"), std::string::npos) << r.markdown;
  EXPECT_EQ(gate_exit_status(r), kGatePass);
}

TEST(Gate, SummaryFitsAPullRequestComment) {
  Report baseline = test::sample_report();
  const Cell model = baseline.cells[0];
  baseline.cells.clear();
  for (std::uint64_t s = 0; s < 3000; ++s) {
    baseline.cells.push_back(model);
    baseline.cells.back().seed = s;
  }
  Report current = baseline;
  for (Cell& c : current.cells) c.ulp_error = 100.0;
  const GateResult r = run_gate(baseline, current, {});
  EXPECT_EQ(r.regressions(), 3000u);
  EXPECT_LT(r.markdown.size(), 65536u);
  EXPECT_NE(r.markdown.find("more left out to fit a comment"), std::string::npos);
  EXPECT_NE(r.markdown.find("**3000 of 3000 baseline cells regressed**"), std::string::npos);
}

// Inputs the gate must refuse with status 2 and one line.
struct RefusalCase {
  const char* name;
  void (*write_baseline)(const std::filesystem::path& path, const Report& report);
  void (*change_current)(Report& current);
  GateOptions options;
  const char* message;
};

void write_json_doc(const std::filesystem::path& path, const Report& r, void (*edit)(nlohmann::json&)) {
  std::ostringstream out;
  write_json(r, out);
  auto doc = nlohmann::json::parse(out.str());
  edit(doc);
  test::write_text(path, doc.dump());
}

const RefusalCase kRefusals[] = {
    {"corrupt_baseline_truncated",
     [](const std::filesystem::path& p, const Report& r) {
       std::ostringstream out;
       write_json(r, out);
       test::write_text(p, out.str().substr(0, 300));
     },
     [](Report&) {}, {}, "not valid JSON"},
    {"corrupt_baseline_wrong_type",
     [](const std::filesystem::path& p, const Report& r) {
       write_json_doc(p, r, [](nlohmann::json& d) { d["cells"][3]["distinct_results"] = "1"; });
     },
     [](Report&) {}, {}, "cells[3].distinct_results: expected an integer, found string"},
    {"baseline_missing", [](const std::filesystem::path&, const Report&) {}, [](Report&) {}, {}, "cannot open"},
    {"schema_mismatch",
     [](const std::filesystem::path& p, const Report& r) {
       write_json_doc(p, r, [](nlohmann::json& d) { d["schema"] = "ulpscope.report/2"; });
     },
     [](Report&) {}, {}, "schema \"ulpscope.report/2\" is not supported"},
    {"different_settings", [](const std::filesystem::path& p, const Report& r) { write_report_file(r, ReportFormat::json, p); },
     [](Report& c) { c.header.settings_json = R"({"dtypes":["fp16","bf16"],"sizes":[4096],"seeds":[1],"runs":5})"; },
     {}, "different settings (baseline vs current) sizes: [1024] vs [4096]"},
    {"different_backend", [](const std::filesystem::path& p, const Report& r) { write_report_file(r, ReportFormat::json, p); },
     [](Report& c) { c.header.backend = "cpu"; }, {}, "baseline backend \"cuda\", current \"cpu\""},
    {"duplicate_cell", [](const std::filesystem::path& p, const Report& r) { write_report_file(r, ReportFormat::json, p); },
     [](Report& c) { c.cells.push_back(c.cells[0]); }, {}, "appears twice"},
    {"throughput_across_devices",
     [](const std::filesystem::path& p, const Report& r) { write_report_file(r, ReportFormat::json, p); },
     [](Report& c) { c.header.device = "NVIDIA H200"; }, {0, 0.1}, "baseline measured on"},
    {"negative_tolerance", [](const std::filesystem::path& p, const Report& r) { write_report_file(r, ReportFormat::json, p); },
     [](Report&) {}, {-1, {}}, "--ulp-tolerance must be >= 0"},
    // A gate must not pass on nothing.
    {"baseline_without_cells",
     [](const std::filesystem::path& p, const Report& r) {
       write_json_doc(p, r, [](nlohmann::json& d) { d["cells"] = nlohmann::json::array(); });
     },
     [](Report&) {}, {}, "the baseline report has no cells"},
    {"current_without_cells", [](const std::filesystem::path& p, const Report& r) { write_report_file(r, ReportFormat::json, p); },
     [](Report& c) { c.cells.clear(); }, {}, "the current report has no cells"},
    {"no_cell_compared", [](const std::filesystem::path& p, const Report& r) { write_report_file(r, ReportFormat::json, p); },
     [](Report& c) {
       for (Cell& cell : c.cells) cell.seed = 12345;
     },
     {}, "the gate compared no cells"},
    // Stored cells that no run of ulpscope writes.
    {"negative_ulp_error",
     [](const std::filesystem::path& p, const Report& r) {
       write_json_doc(p, r, [](nlohmann::json& d) { d["cells"][0]["ulp_error"] = -3.0; });
     },
     [](Report&) {}, {}, "cells[0].ulp_error: -3 is negative"},
    {"nan_result_with_finite_ulp_error",
     [](const std::filesystem::path& p, const Report& r) {
       write_json_doc(p, r, [](nlohmann::json& d) { d["cells"][0]["result"] = "nan"; });
     },
     [](Report&) {}, {}, "cells[0].result: NaN beside a finite ulp_error"},
};

class GateRefusals : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(GateRefusals, StatusTwoAndOneLine) {
  const RefusalCase& rc = GetParam();
  test::ScratchDir dir;
  const Report baseline = test::sample_report();
  Report current = baseline;
  rc.change_current(current);
  rc.write_baseline(dir / "base.json", baseline);
  write_report_file(current, ReportFormat::json, dir / "cur.json");
  const GateOutcome out = gate_report_files(dir / "base.json", dir / "cur.json", rc.options);
  EXPECT_EQ(out.status, kGateInputError);
  EXPECT_FALSE(out.result.has_value());
  EXPECT_NE(out.error.find(rc.message), std::string::npos) << out.error;
  EXPECT_EQ(out.error.find('\n'), std::string::npos) << out.error;
}

INSTANTIATE_TEST_SUITE_P(Reports, GateRefusals, ::testing::ValuesIn(kRefusals),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ulpscope
