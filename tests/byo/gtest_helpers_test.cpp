// The GoogleTest helpers (testing/ulpscope_gtest.hpp) on a correctly rounded
// kernel and on a stagnating one: the verdict, and what the failure message
// names.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "byo_kernels.hpp"
#include "testing/ulpscope_gtest.hpp"

namespace ulpscope {
namespace {

gtest::UlpCheck on_the_host() {
  gtest::UlpCheck check;
  check.evaluation.backend = EvaluationBackend::cpu;
  return check;
}

TEST(WithinUlps, ACorrectlyRoundedKernelPassesHalfAnUlp) {
  EXPECT_ULPSCOPE_WITHIN_ULPS(test::fp16_sum(false), 0.5);
  const auto r = gtest::within_ulps("k", "u", test::fp16_sum(false), 0.5);
  EXPECT_TRUE(r);
  EXPECT_NE(std::string(r.message()).find("worst"), std::string::npos) << r.message();
}

TEST(WithinUlps, AStagnatingKernelFailsAndSaysWhereAndHowToReplay) {
  UserKernel bad = test::fp16_sum(true);
  bad.library = "/opt/lib/libmine.so";
  const gtest::UlpCheck check = on_the_host();
  const Evaluation e = evaluate_kernel(bad, check.evaluation);
  const auto r = gtest::verdict(bad, 1.0, check, e);
  ASSERT_FALSE(r);
  const std::string m = r.message();
  // The worst cell, recomputed from the cells, is the one the message names:
  // an undefined error (an overflow to infinity here) is worse than any
  // number of ulps.
  const Cell* worst = nullptr;
  auto rank = [](const Cell& c) { return c.ulp_error.value_or(HUGE_VAL); };
  for (const Cell& c : e.cells)
    if (!worst || rank(c) > rank(*worst)) worst = &c;
  ASSERT_NE(worst, nullptr);
  EXPECT_GT(rank(*worst), 1.0);
  EXPECT_NE(m.find(worst->distribution + " n=" + std::to_string(worst->n) + " seed=" + std::to_string(worst->seed)),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("result " + worst->result), std::string::npos) << m;
  EXPECT_NE(m.find("replay: accuracy_report --kernel-lib /opt/lib/libmine.so --backend cpu --op sum --dtype fp16 "
                   "--dist " + worst->distribution + " --n " + std::to_string(worst->n) + " --seed " +
                   std::to_string(worst->seed)),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("not deterministic"), std::string::npos) << m;
}

TEST(WithinUlps, TheMacroReportsAFailure) {
  EXPECT_NONFATAL_FAILURE(EXPECT_ULPSCOPE_WITHIN_ULPS(test::fp16_sum(true), 1.0), "beyond 1 ulps");
}

TEST(WithinUlps, ANonDeterministicKernelFailsEvenWithinBudget) {
  UserKernel k = test::fp16_sum(false);
  const auto exact = k.run_host;
  k.run_host = [=](const KernelArgs& a) {
    exact(a);
    // Every other call on a thread flips the sign of a zero result: 0 ulps
    // either way, different bits. The runs of one cell follow each other on
    // one thread, so each cell sees both signs.
    static thread_local int calls = 0;
    float v;
    std::memcpy(&v, a.out, sizeof v);
    if (v == 0 && calls++ % 2) test::store(a.out, Dtype::fp32, 0, -v);
  };
  gtest::UlpCheck check = on_the_host();
  check.evaluation.distributions = {{Distribution::exact_cancellation, std::nullopt},
                                    {Distribution::negative_zeros, std::nullopt}};
  const auto r = gtest::within_ulps("k", "u", "c", k, 0.5, check);
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("not deterministic: 2 distinct results over 3 runs"), std::string::npos)
      << r.message();
  // A kernel that promises nothing is not held to it.
  k.deterministic = false;
  EXPECT_TRUE(gtest::within_ulps("k", "u", "c", k, 0.5, check));
}

TEST(WithinUlps, AKernelThatCannotRunIsAFailureNotAPass) {
  UserKernel k = test::fp16_sum(false);
  k.run_host = nullptr;
  k.run_device = [](const KernelArgs&, void*) {};
  EXPECT_FALSE(gtest::within_ulps("k", "u", "c", k, 0.5, on_the_host()));
}

}  // namespace
}  // namespace ulpscope
