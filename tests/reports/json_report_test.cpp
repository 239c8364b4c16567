// JSON: SPEC's keys, no Inf/NaN numbers, and a strict reader whose errors
// name the file, the key and the problem in one line.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/json_report.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

std::string json_text(const Report& r) {
  std::ostringstream out;
  write_json(r, out);
  return out.str();
}

Report read_text_report(const std::string& text) {
  std::istringstream in(text);
  return read_report(in, "test.json");
}

// The message of the ReportInputError that reading text throws ("" if none).
std::string read_error(const std::string& text) {
  try {
    read_text_report(text);
  } catch (const ReportInputError& e) {
    return e.what();
  }
  return "";
}

void expect_same_cell(const Cell& a, const Cell& b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.out_dtype, b.out_dtype);
  EXPECT_EQ(a.accumulator, b.accumulator);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.distribution, b.distribution);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.axis, b.axis);
  EXPECT_EQ(a.saturation, b.saturation);
  EXPECT_EQ(a.reference_rounded, b.reference_rounded);
  EXPECT_EQ(a.reference_exact, b.reference_exact);
  EXPECT_EQ(a.result, b.result);
  EXPECT_EQ(a.component, b.component);
  EXPECT_EQ(a.ulp_error, b.ulp_error);
  EXPECT_EQ(a.condition, b.condition);
  EXPECT_EQ(a.bound_ratio, b.bound_ratio);
  EXPECT_EQ(a.correctly_rounded, b.correctly_rounded);
  EXPECT_EQ(a.matches_model, b.matches_model);
  EXPECT_EQ(a.runs, b.runs);
  EXPECT_EQ(a.distinct_results, b.distinct_results);
  EXPECT_EQ(a.configs, b.configs);
  EXPECT_EQ(a.distinct_across_configs, b.distinct_across_configs);
  EXPECT_EQ(a.permutations, b.permutations);
  EXPECT_EQ(a.distinct_across_permutations, b.distinct_across_permutations);
  EXPECT_EQ(a.gbps, b.gbps);
  EXPECT_EQ(a.fraction_of_cub, b.fraction_of_cub);
  EXPECT_EQ(a.fraction_of_copy, b.fraction_of_copy);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.note, b.note);
}

TEST(JsonReport, RoundTripsEveryField) {
  const Report original = test::sample_report();
  const Report back = read_text_report(json_text(original));
  EXPECT_EQ(back.header.version, original.header.version);
  EXPECT_EQ(back.header.git_commit, original.header.git_commit);
  EXPECT_EQ(back.header.device, original.header.device);
  EXPECT_EQ(back.header.backend, original.header.backend);
  EXPECT_EQ(back.header.build_flags, original.header.build_flags);
  EXPECT_EQ(back.header.command_line, original.header.command_line);
  EXPECT_EQ(back.header.started_at, original.header.started_at);
  EXPECT_EQ(back.header.seconds, original.header.seconds);
  EXPECT_EQ(back.header.unavailable, original.header.unavailable);
  EXPECT_EQ(nlohmann::json::parse(back.header.settings_json), nlohmann::json::parse(original.header.settings_json));
  ASSERT_EQ(back.cells.size(), original.cells.size());
  for (std::size_t i = 0; i < back.cells.size(); ++i) {
    SCOPED_TRACE(i);
    const Cell& o = original.cells[i];
    const Cell& b = back.cells[i];
    expect_same_cell(b, o);
    // Only the non-finite rel_error changes: null, with the reason in the note.
    if (o.rel_error && !std::isfinite(*o.rel_error)) {
      EXPECT_FALSE(b.rel_error.has_value());
      EXPECT_NE(b.error_note.find("rel_error was inf"), std::string::npos) << b.error_note;
      EXPECT_NE(b.error_note.find(o.error_note), std::string::npos);
    } else {
      EXPECT_EQ(b.rel_error, o.rel_error);
      EXPECT_EQ(b.error_note, o.error_note);
    }
  }
}

TEST(JsonReport, WritesSpecKeysAndNoNonFiniteNumbers) {
  const Report r = test::sample_report();
  const auto doc = nlohmann::json::parse(json_text(r));
  EXPECT_EQ(doc["schema"], "ulpscope.report/1");
  for (const char* key : {"version", "git_commit", "device", "backend", "build_flags", "command_line", "seconds",
                          "started_at", "settings"})
    EXPECT_TRUE(doc["header"].contains(key)) << key;
  EXPECT_TRUE(doc["header"]["settings"].is_object());
  for (const auto& cell : doc["cells"]) {
    for (const char* key : {"op", "dtype", "out_dtype", "accumulator", "shape", "distribution", "n", "seed",
                            "reference", "result", "ulp_error", "rel_error", "condition", "bound_ratio",
                            "correctly_rounded", "matches_model", "runs", "distinct_results", "configs",
                            "distinct_across_configs", "gbps", "fraction_of_cub", "status"})
      EXPECT_TRUE(cell.contains(key)) << key;
    EXPECT_TRUE(cell["reference"]["rounded"].is_string());
    EXPECT_TRUE(cell["reference"]["exact"].is_string());
    for (const auto& [key, value] : cell.items()) {
      if (value.is_number_float()) {
        EXPECT_TRUE(std::isfinite(value.get<double>())) << key;
      }
    }
  }
  // The largest seed survives as an integer, not a rounded double.
  EXPECT_EQ(doc["cells"][5]["seed"].get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  // The CPU-backend nulls.
  EXPECT_TRUE(doc["cells"][7]["matches_model"].is_null());
  EXPECT_TRUE(doc["cells"][7]["gbps"].is_null());
}

TEST(JsonReport, RefusesAnotherSchemaVersion) {
  auto doc = nlohmann::json::parse(json_text(test::sample_report()));
  doc["schema"] = "ulpscope.report/2";
  const std::string e = read_error(doc.dump());
  EXPECT_NE(e.find("test.json: schema \"ulpscope.report/2\" is not supported"), std::string::npos) << e;
  doc.erase("schema");
  EXPECT_NE(read_error(doc.dump()).find("not an ulpscope report"), std::string::npos);
}

TEST(JsonReport, RefusesCorruptJsonInOneLine) {
  const std::string text = json_text(test::sample_report());
  for (const std::string& bad : {text.substr(0, text.size() / 2), std::string(""), std::string("{]"),
                                 std::string("[1, 2]"), std::string("\"ulpscope\"")}) {
    const std::string e = read_error(bad);
    EXPECT_TRUE(e.starts_with("test.json: ")) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_NE(read_error(text.substr(0, text.size() / 2)).find("not valid JSON"), std::string::npos);
}

// Each corruption, and the words the message must contain.
struct Corruption {
  const char* name;
  void (*apply)(nlohmann::json&);
  const char* message;
};

const Corruption kCorruptions[] = {
    {"ulp_error as string", [](nlohmann::json& d) { d["cells"][0]["ulp_error"] = "0.5"; },
     "cells[0].ulp_error: expected a number or null, found string"},
    {"n negative", [](nlohmann::json& d) { d["cells"][1]["n"] = -3; }, "cells[1].n: -3 is out of range"},
    {"n fractional", [](nlohmann::json& d) { d["cells"][1]["n"] = 3.5; }, "cells[1].n: expected an integer"},
    {"missing op", [](nlohmann::json& d) { d["cells"][2].erase("op"); }, "cells[2].op: missing"},
    {"bool as number", [](nlohmann::json& d) { d["cells"][0]["correctly_rounded"] = 1; },
     "cells[0].correctly_rounded: expected a boolean"},
    {"bad hex-float", [](nlohmann::json& d) { d["cells"][0]["result"] = "1.5"; },
     "cells[0].result: \"1.5\" is not a hex-float"},
    {"bad reference", [](nlohmann::json& d) { d["cells"][0]["reference"] = "0x1p+0"; },
     "cells[0].reference: expected an object"},
    {"bad status", [](nlohmann::json& d) { d["cells"][0]["status"] = "broken"; }, "cells[0].status"},
    {"bad axis", [](nlohmann::json& d) { d["cells"][0]["axis"] = "diagonal"; }, "cells[0].axis"},
    {"cells not array", [](nlohmann::json& d) { d["cells"] = nlohmann::json::object(); },
     "cells: expected an array"},
    {"settings not object", [](nlohmann::json& d) { d["header"]["settings"] = "[]"; },
     "header.settings: expected an object"},
    {"header missing", [](nlohmann::json& d) { d.erase("header"); }, "header: missing"},
    {"unavailable without reason", [](nlohmann::json& d) { d["header"]["unavailable"][0].erase("reason"); },
     "header.unavailable[0].reason: missing"},
    {"runs too large", [](nlohmann::json& d) { d["cells"][0]["runs"] = 1LL << 40; }, "cells[0].runs"},
};

class JsonCorruption : public ::testing::TestWithParam<Corruption> {};

TEST_P(JsonCorruption, IsRefusedNamingTheKey) {
  auto doc = nlohmann::json::parse(json_text(test::sample_report()));
  GetParam().apply(doc);
  const std::string e = read_error(doc.dump());
  EXPECT_NE(e.find(GetParam().message), std::string::npos) << e;
  EXPECT_TRUE(e.starts_with("test.json: ")) << e;
}

INSTANTIATE_TEST_SUITE_P(Reports, JsonCorruption, ::testing::ValuesIn(kCorruptions),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(JsonReport, UnreadableFileIsAnInputError) {
  test::ScratchDir dir;
  try {
    read_report_file(dir / "absent.json");
    ADD_FAILURE() << "read a file that does not exist";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.json: cannot open"), std::string::npos) << e.what();
  }
}

TEST(JsonReport, InvalidSettingsAreNotWritten) {
  Report r = test::sample_report();
  r.header.settings_json = "{\"sizes\": [1,";
  std::ostringstream out;
  EXPECT_THROW(write_json(r, out), std::invalid_argument);
  r.header.settings_json = "[1]";
  EXPECT_THROW(write_json(r, out), std::invalid_argument);
  EXPECT_TRUE(out.str().empty());
}

TEST(JsonReport, VerdictsComeBeforeTheCellsAndReportsReadWithOrWithoutThem) {
  Report r = test::sample_report();
  r.cells[2].distribution = "ill_conditioned:1e16";
  r.cells[2].ulp_error = 12345.5;
  const std::string text = json_text(r);
  EXPECT_LT(text.find("\"verdicts\""), text.find("\"cells\""));
  auto doc = nlohmann::json::parse(text);
  ASSERT_EQ(doc["verdicts"].size(), verdicts(r.cells).size());
  const auto& exact = doc["verdicts"][2];
  EXPECT_EQ(exact["accumulator"], "exact");
  EXPECT_EQ(exact["cells"], 1);
  EXPECT_TRUE(exact["worst"]["realistic"].is_null());
  EXPECT_EQ(exact["worst"]["adversarial"]["max_ulp"].get<double>(), 12345.5);
  EXPECT_EQ(exact["worst"]["adversarial"]["distribution"], "ill_conditioned:1e16");
  EXPECT_EQ(exact["worst"]["adversarial"]["unbounded"], false);
  EXPECT_EQ(exact["same_bits"]["run_to_run"], true);
  EXPECT_TRUE(exact["same_bits"]["across_orders"].is_null());
  EXPECT_EQ(exact["throughput"]["gbps"].get<double>(), 900.0);
  const auto& fp8 = doc["verdicts"][6];
  EXPECT_EQ(fp8["saturation"], "nosat");
  EXPECT_TRUE(fp8["worst"]["adversarial"]["max_ulp"].is_null());
  EXPECT_EQ(fp8["worst"]["adversarial"]["unbounded"], true);
  const auto& failed = doc["verdicts"][7];
  EXPECT_EQ(failed["failed"], 1);
  EXPECT_TRUE(failed["throughput"].is_null());
  // Derived from the cells: a report reads the same with or without them.
  const Report with = read_text_report(text);
  doc.erase("verdicts");
  const Report without = read_text_report(doc.dump());
  EXPECT_EQ(with.cells.size(), without.cells.size());
  EXPECT_EQ(json_text(with), json_text(without));
  doc["verdicts"] = "yes";
  EXPECT_NE(read_error(doc.dump()).find("verdicts"), std::string::npos);
}

TEST(JsonReport, EmptyReportRoundTrips) {
  Report r;
  r.header.backend = "cpu";
  const Report back = read_text_report(json_text(r));
  EXPECT_TRUE(back.cells.empty());
  EXPECT_EQ(back.header.backend, "cpu");
}

}  // namespace
}  // namespace ulpscope
