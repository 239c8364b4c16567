// A baseline's settings are checked as the flags are, before
// anything runs: row_cols 0 (a division by zero), permutations 1e9 (a hang),
// runs 0, n = -5 or 2^41 are refused in one line, not run.
#include "accuracy/settings_check.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy/run_matrix.hpp"

namespace ulpscope {
namespace {

// The default matrix's settings as a baseline stores them, edited.
std::string edited(void (*edit)(nlohmann::json&)) {
  auto j = nlohmann::json::parse(default_matrix(false).to_json());
  edit(j);
  return j.dump();
}

// settings_from_json's refusal or settings_problem's, as one line.
std::string problem(const std::string& json) {
  try {
    return settings_problem(settings_from_json(json));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(SettingsCheck, TheDefaultAndFullMatricesPass) {
  EXPECT_EQ(settings_problem(default_matrix(false)), "");
  EXPECT_EQ(settings_problem(default_matrix(true)), "");
  EXPECT_EQ(problem(default_matrix(true).to_json()), "");
}

struct Bad {
  const char* name;
  void (*edit)(nlohmann::json&);
  const char* message;
};

const Bad kBad[] = {
    {"row_cols_zero", [](nlohmann::json& j) { j["row_cols"] = 0; }, "row_cols 0 is not in [1, 2^40]"},
    {"row_cols_negative", [](nlohmann::json& j) { j["row_cols"] = -4096; }, "row_cols -4096"},
    {"throughput_n_negative", [](nlohmann::json& j) { j["throughput_n"] = -1; }, "throughput_n -1 is not in [0, 2^40]"},
    {"runs_zero", [](nlohmann::json& j) { j["runs"] = 0; }, "runs 0 is not in [1, 1000]"},
    {"runs_huge", [](nlohmann::json& j) { j["runs"] = 1e12; }, "runs"},
    {"runs_fractional", [](nlohmann::json& j) { j["runs"] = 2.5; }, "runs 2.5 is not a whole number"},
    {"permutations_1e9", [](nlohmann::json& j) { j["permutations"] = 1000000000; }, "permutations 1000000000"},
    {"permutations_negative", [](nlohmann::json& j) { j["permutations"] = -1; }, "permutations -1"},
    {"size_negative", [](nlohmann::json& j) { j["sizes"] = {1023, -5}; }, "size -5 is not in [0, 2^40]"},
    {"size_beyond_2_40", [](nlohmann::json& j) { j["sizes"] = nlohmann::json::array({std::int64_t(1) << 41}); }, "size 2199023255552"},
    {"size_fractional", [](nlohmann::json& j) { j["sizes"] = nlohmann::json::array({1.5}); }, "size 1.5 is not a whole number"},
    {"eps_zero", [](nlohmann::json& j) { j["eps"] = 0.0; }, "eps 0 is not a finite number > 0"},
    {"eps_negative", [](nlohmann::json& j) { j["eps"] = -1e-6; }, "eps"},
    {"duplicate_size", [](nlohmann::json& j) { j["sizes"] = {1023, 1023}; }, "sizes lists 1023 twice"},
    {"duplicate_seed", [](nlohmann::json& j) { j["seeds"] = {1, 1}; }, "seeds lists 1 twice"},
    {"duplicate_distribution",
     [](nlohmann::json& j) { j["distributions"] = {"ill_conditioned:1e16", "ill_conditioned:1e+16"}; },
     "distributions lists ill_conditioned"},
    {"unknown_out_dtype", [](nlohmann::json& j) { j["out_dtype"] = "fp128"; }, "unknown out_dtype"},
    {"unknown_saturation", [](nlohmann::json& j) { j["saturation"] = "clamp"; }, "unknown saturation 'clamp'"},
    // Names are echoed in the refusal: a line break in one made it two lines.
    {"op_with_line_break", [](nlohmann::json& j) { j["ops"] = {"sum\nmean"}; },
     "ops \"sum\\nmean\" holds a control character"},
    {"saturation_with_line_break", [](nlohmann::json& j) { j["saturation"] = "nosat\n"; }, "saturation"},
    {"repeated_user_kernel_with_line_break", [](nlohmann::json& j) { j["user_kernels"] = {"k\n", "k\n"}; },
     "user_kernels \"k\\n\" holds a control character"},
    // get<uint64_t> from 1e300 is undefined behaviour (UBSan); -1 wrapped to 2^64 - 1.
    {"seed_1e300", [](nlohmann::json& j) { j["seeds"] = {1e300}; }, "seed 1e+300 is not a whole number >= 0"},
    {"seed_negative", [](nlohmann::json& j) { j["seeds"] = {-1}; }, "seed -1 is not a whole number >= 0"},
};

class SettingsRefusals : public ::testing::TestWithParam<Bad> {};

TEST_P(SettingsRefusals, OneLineNamingTheSetting) {
  const std::string why = problem(edited(GetParam().edit));
  EXPECT_NE(why.find(GetParam().message), std::string::npos) << why;
  EXPECT_EQ(why.rfind("settings: ", 0), 0u) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

INSTANTIATE_TEST_SUITE_P(Baselines, SettingsRefusals, ::testing::ValuesIn(kBad),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ulpscope
