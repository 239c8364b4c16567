// User kernels through the run matrix (accuracy/evaluate_kernel.hpp): a
// user's serial fp32 sum, written independently against the raw-buffer API,
// must give the built-in serial fp32 shape's cells bit for bit (the same
// order and arithmetic, measured by the same code); failures, output layout,
// determinism and reentrancy are checked on purpose-built kernels.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "accuracy/evaluate_kernel.hpp"
#include "byo_kernels.hpp"
#include "kernels/gpu_backend.hpp"
#include "plugin/ulpscope_plugin.h"
#include "reports/json_report.hpp"

namespace ulpscope {
namespace {

using CellPlace = std::tuple<std::string, std::int64_t, std::uint64_t, std::string>;
CellPlace place(const Cell& c) { return {c.distribution, c.n, c.seed, c.axis}; }

class SameAsBuiltInSerial : public ::testing::TestWithParam<Dtype> {};

TEST_P(SameAsBuiltInSerial, EveryCellBitForBit) {
  const Dtype in = GetParam();
  UserKernel k = test::serial_fp32_sum(in, default_out_dtype(in));
  k.error_bound_of = {{Accumulator::fp32, Shape::serial}};  // recursive summation in fp32
  EvaluateOptions o;
  o.sizes = {0, 1, 31, 33, 1000, 4096};
  o.seeds = {3};
  o.row_cols = 1000;  // 4096 is no multiple: whole-array only there
  o.accumulators = {Accumulator::fp32};
  o.shapes = {Shape::serial};
  o.backend = EvaluationBackend::cpu;
  const Evaluation e = evaluate_kernel(k, o);
  std::map<CellPlace, const Cell*> builtin, user;
  for (const Cell& c : e.cells) (c.shape == "serial" ? builtin : user)[place(c)] = &c;
  ASSERT_GT(user.size(), 100u);
  ASSERT_EQ(user.size(), builtin.size());
  for (const auto& [where, b] : builtin) {
    SCOPED_TRACE(std::get<0>(where) + " n=" + std::to_string(std::get<1>(where)) + " axis " + std::get<3>(where));
    ASSERT_TRUE(user.count(where));
    const Cell& u = *user.at(where);
    EXPECT_EQ(u.status, "ok");
    EXPECT_EQ(u.status, b->status);
    EXPECT_EQ(u.result, b->result);
    EXPECT_EQ(u.reference_rounded, b->reference_rounded);
    EXPECT_EQ(u.reference_exact, b->reference_exact);
    EXPECT_EQ(u.ulp_error, b->ulp_error);
    EXPECT_EQ(u.error_note, b->error_note);
    EXPECT_EQ(u.correctly_rounded, b->correctly_rounded);
    EXPECT_EQ(u.condition, b->condition);
    EXPECT_EQ(u.component, b->component);
    EXPECT_EQ(u.distinct_across_permutations, b->distinct_across_permutations);
    EXPECT_EQ(u.distinct_results, 1);
    EXPECT_EQ(u.runs, o.runs);  // a user kernel is run every time; the deterministic model once
    EXPECT_EQ(u.accumulator, "fp32");
    EXPECT_FALSE(u.gbps);  // the host: no throughput
    EXPECT_EQ(u.bound_ratio, b->bound_ratio);  // the bound it claims, error_bound_of
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, SameAsBuiltInSerial,
                         ::testing::Values(Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(UserKernelCells, NoBoundRatioUnlessTheKernelNamesItsAlgorithm) {
  EvaluateOptions o;
  o.distributions = {{Distribution::normal, std::nullopt}};
  o.sizes = {1000};
  o.seeds = {1};
  o.backend = EvaluationBackend::cpu;
  const Evaluation e = evaluate_kernel(test::serial_fp32_sum(Dtype::fp32, Dtype::fp32), o);
  ASSERT_FALSE(e.cells.empty());
  for (const Cell& c : e.cells) EXPECT_FALSE(c.bound_ratio);
}

TEST(OutputCount, PerOpAndAxisAndTheSameInC) {
  struct Row {
    Op op;
    Axis axis;
    std::int64_t expected;  // for [3, 5]
  };
  const Row rows[] = {{Op::sum, Axis::all, 1},       {Op::sum, Axis::inner, 3},      {Op::sum, Axis::outer, 5},
                      {Op::mean_var, Axis::all, 2},  {Op::mean_var, Axis::inner, 6}, {Op::mean_var, Axis::outer, 10},
                      {Op::rmsnorm, Axis::inner, 15}, {Op::layernorm, Axis::inner, 15}, {Op::max, Axis::outer, 5}};
  for (const Row& r : rows) EXPECT_EQ(output_count(r.op, r.axis, 3, 5), r.expected) << to_string(r.op);
  // The C header's helper agrees for every op and axis.
  for (const auto& [op, name] : kOpNames)
    for (const auto& [axis, axis_name] : kAxisNames) {
      ulpscope_call c{};
      c.op = int32_t(op);
      c.axis = int32_t(axis);
      c.rows = 3;
      c.cols = 5;
      EXPECT_EQ(ulpscope_output_count(&c), output_count(op, axis, 3, 5)) << name << " " << axis_name;
    }
}

TEST(DecodeOutputs, EveryFormatWidensExactly) {
  for (Dtype d : kOutputDtypes) {
    SCOPED_TRACE(std::string(to_string(d)));
    const double values[] = {1.5, -0.0, -2.0, 0.25};
    std::vector<unsigned char> bytes(4 * element_bytes(d));
    for (int i = 0; i < 4; ++i) test::store(bytes.data(), d, i, values[i]);
    const auto got = decode_outputs(bytes.data(), d, 4);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(got[std::size_t(i)], values[i]);
      EXPECT_EQ(std::signbit(got[std::size_t(i)]), std::signbit(values[i]));
    }
  }
}

TEST(DescribeProblem, RefusesWhatCannotBeMeasured) {
  UserKernel k = test::fp16_sum(false);
  EXPECT_EQ(describe_problem(k), "");
  UserKernel no_name = k;
  no_name.name = "";
  EXPECT_NE(describe_problem(no_name), "");
  UserKernel spaced = k;
  spaced.name = "my kernel";
  EXPECT_NE(describe_problem(spaced), "");
  UserKernel nothing = k;
  nothing.run_host = nullptr;
  EXPECT_NE(describe_problem(nothing), "");
  UserKernel fp64_in = k;
  fp64_in.in = Dtype::fp64;
  EXPECT_NE(describe_problem(fp64_in), "");
  UserKernel norm_outer = k;
  norm_outer.op = Op::rmsnorm;
  norm_outer.axes = {Axis::outer};
  EXPECT_NE(describe_problem(norm_outer), "");
  EXPECT_THROW(evaluate_kernel(nothing), std::invalid_argument);
  EXPECT_THROW(evaluate_kernels({k, k}), std::invalid_argument);  // two of one name
}

EvaluateOptions small_options() {
  EvaluateOptions o;
  o.distributions = {{Distribution::normal, std::nullopt}, {Distribution::constant, std::nullopt}};
  o.sizes = {33, 1000};
  o.seeds = {1};
  o.backend = EvaluationBackend::cpu;
  return o;
}

TEST(UserKernelFailures, AThrowingKernelFailsItsCellsWithItsMessage) {
  UserKernel k = test::fp16_sum(false);
  k.run_host = [](const KernelArgs& a) {
    if (a.cols == 33) throw std::runtime_error("no 33 today");
    test::store(a.out, Dtype::fp32, 0, 1.0);
  };
  const Evaluation e = evaluate_kernel(k, small_options());
  ASSERT_EQ(e.cells.size(), 4u);
  for (const Cell& c : e.cells) {
    if (c.n == 33) {
      EXPECT_EQ(c.status, "failed: no 33 today");
    } else {
      EXPECT_EQ(c.status, "ok");
    }
  }
}

TEST(UserKernelFailures, AnOutputLeftUnwrittenIsNotANumber) {
  UserKernel k = test::fp16_sum(false);
  k.run_host = [](const KernelArgs&) {};
  const Evaluation e = evaluate_kernel(k, small_options());
  ASSERT_FALSE(e.cells.empty());
  for (const Cell& c : e.cells) {
    EXPECT_EQ(c.result, "nan");
    EXPECT_FALSE(c.ulp_error);
    EXPECT_FALSE(c.correctly_rounded);
  }
}

TEST(UserKernelRuns, ANonDeterministicKernelIsSeen) {
  UserKernel k = test::fp16_sum(false);
  auto calls = std::make_shared<std::atomic<int>>(0);
  k.run_host = [calls](const KernelArgs& a) {
    // The sum plus 0, 1 or 2 ulps of fp32 depending on the call: results
    // that vary run to run.
    double s = 0;
    for (std::int64_t i = 0; i < a.cols; ++i) s += test::element(a.x, Dtype::fp16, i);
    float f = float(s);
    for (int i = calls->fetch_add(1) % 3; i > 0; --i) f = std::nextafter(f, INFINITY);
    test::store(a.out, Dtype::fp32, 0, f);
  };
  EvaluateOptions o = small_options();
  o.runs = 3;
  const Evaluation e = evaluate_kernel(k, o);
  for (const Cell& c : e.cells) {
    EXPECT_EQ(c.runs, 3);
    EXPECT_GT(c.distinct_results, 1) << c.distribution << " n=" << c.n;
  }
}

TEST(UserKernelRuns, ANonReentrantKernelRunsAloneAndConfigsAreCounted) {
  UserKernel k = test::fp16_sum(false);
  auto inside = std::make_shared<std::atomic<int>>(0);
  auto most = std::make_shared<std::atomic<int>>(0);
  const auto host = k.run_host;
  k.reentrant = false;
  k.configs = {LaunchConfig{0, 256}, LaunchConfig{4, 128}, LaunchConfig{8, 64}};
  k.run_host = [=](const KernelArgs& a) {
    const int now = ++*inside;
    int seen = most->load();
    while (now > seen && !most->compare_exchange_weak(seen, now)) {
    }
    host(a);
    --*inside;
  };
  EvaluateOptions o = small_options();
  o.distributions = {};  // every distribution: many inputs, run on every core
  const Evaluation e = evaluate_kernel(k, o);
  EXPECT_EQ(most->load(), 1);
  for (const Cell& c : e.cells) {
    EXPECT_EQ(c.configs, 3);
    EXPECT_EQ(c.distinct_across_configs, 1);
  }
}

TEST(UserKernelRuns, AskingForTheGpuWithoutOneIsAnError) {
  std::string why;
  if (GpuBackend::open(&why)) GTEST_SKIP() << "a GPU is present";
  UserKernel k = test::fp16_sum(false);
  EvaluateOptions o = small_options();
  o.backend = EvaluationBackend::cuda;
  EXPECT_THROW(evaluate_kernel(k, o), GpuError);
  // Automatic: a kernel with a GPU form runs its host form instead.
  k.run_device = [](const KernelArgs&, void*) { throw std::logic_error("no GPU here"); };
  o.backend = EvaluationBackend::automatic;
  const Evaluation e = evaluate_kernel(k, o);
  EXPECT_EQ(e.backend, "cpu");
  for (const Cell& c : e.cells) EXPECT_EQ(c.status, "ok");
}

TEST(UserKernelRuns, TheEvaluationIsAReportThatReadsBack) {
  const Evaluation e = evaluate_kernel(test::fp16_sum(true), small_options());
  std::stringstream json;
  write_json(evaluation_report(e, "my_test"), json);
  const Report back = read_report(json, "evaluation");
  EXPECT_EQ(back.header.backend, "cpu");
  EXPECT_EQ(back.header.command_line, "my_test");
  EXPECT_EQ(settings_from_json(back.header.settings_json).user_kernels, std::vector<std::string>{"fp16_running_sum"});
  ASSERT_EQ(back.cells.size(), e.cells.size());
  for (std::size_t i = 0; i < e.cells.size(); ++i) {
    EXPECT_EQ(back.cells[i].shape, "fp16_running_sum");
    EXPECT_EQ(back.cells[i].accumulator, "fp16");
    EXPECT_EQ(back.cells[i].result, e.cells[i].result);
    EXPECT_EQ(back.cells[i].ulp_error, e.cells[i].ulp_error);
  }
}

TEST(UserKernelRuns, SettingsNameTheKernelsAndReadBack) {
  const UserKernel k = test::fp16_sum(false);
  const Evaluation e = evaluate_kernel(k, small_options());
  EXPECT_EQ(e.settings.user_kernels, std::vector<std::string>{"fp64_sum"});
  EXPECT_EQ(e.settings.ops, std::vector<Op>{Op::sum});
  EXPECT_EQ(e.settings.dtypes, std::vector<Dtype>{Dtype::fp16});
  const MatrixSettings back = settings_from_json(e.settings.to_json());
  EXPECT_EQ(back.user_kernels, e.settings.user_kernels);
  EXPECT_EQ(back.to_json(), e.settings.to_json());
  // The built-in matrix's settings do not mention user kernels at all.
  EXPECT_EQ(default_matrix(false).to_json().find("user_kernels"), std::string::npos);
  // A deterministic kernel is not listed as non-deterministic; one declared so is, and reads back.
  EXPECT_TRUE(e.settings.nondeterministic_kernels.empty());
  UserKernel racy = k;
  racy.deterministic = false;
  const Evaluation r = evaluate_kernel(racy, small_options());
  EXPECT_EQ(r.settings.nondeterministic_kernels, std::vector<std::string>{"fp64_sum"});
  EXPECT_EQ(settings_from_json(r.settings.to_json()).nondeterministic_kernels, r.settings.nondeterministic_kernels);
}

}  // namespace
}  // namespace ulpscope
