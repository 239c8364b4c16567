#pragma once
// GoogleTest assertions for users' kernels (accuracy/user_kernel.hpp): the
// kernel is measured on every adversarial distribution of docs/spec.md over a few
// sizes and seeds (accuracy/evaluate_kernel.hpp), and the assertion fails
// when any cell is further than U ulps from the exact reference, failed, or
// (for a kernel that promises determinism) gave different bits on repeated
// runs. The message names the worst cell's distribution, n and seed, and the
// accuracy_report command that replays it.
//
//   TEST(MyRmsNorm, WithinOneUlp) { EXPECT_ULPSCOPE_WITHIN_ULPS(my_kernel(), 1.0); }
#include <gtest/gtest.h>

#include "accuracy/evaluate_kernel.hpp"
#include "accuracy/user_kernel.hpp"

namespace ulpscope::gtest {

struct UlpCheck {
  EvaluateOptions evaluation;         // distributions, sizes, seeds, runs, backend
  bool require_deterministic = true;  // only for kernels with UserKernel::deterministic
};

// The predicate-formatters behind the macros (EXPECT_PRED_FORMAT2/3).
::testing::AssertionResult within_ulps(const char* kernel_expr, const char* ulps_expr, const UserKernel& kernel,
                                       double max_ulps);
::testing::AssertionResult within_ulps(const char* kernel_expr, const char* ulps_expr, const char* check_expr,
                                       const UserKernel& kernel, double max_ulps, const UlpCheck& check);

// The same verdict over an evaluation already made (one kernel's cells).
::testing::AssertionResult verdict(const UserKernel& kernel, double max_ulps, const UlpCheck& check,
                                   const Evaluation& evaluation);

}  // namespace ulpscope::gtest

#define EXPECT_ULPSCOPE_WITHIN_ULPS(kernel, max_ulps) \
  EXPECT_PRED_FORMAT2(::ulpscope::gtest::within_ulps, kernel, max_ulps)
#define ASSERT_ULPSCOPE_WITHIN_ULPS(kernel, max_ulps) \
  ASSERT_PRED_FORMAT2(::ulpscope::gtest::within_ulps, kernel, max_ulps)
// With an UlpCheck: other distributions, sizes, seeds or backend.
#define EXPECT_ULPSCOPE_WITHIN_ULPS_WITH(kernel, max_ulps, check) \
  EXPECT_PRED_FORMAT3(::ulpscope::gtest::within_ulps, kernel, max_ulps, check)
#define ASSERT_ULPSCOPE_WITHIN_ULPS_WITH(kernel, max_ulps, check) \
  ASSERT_PRED_FORMAT3(::ulpscope::gtest::within_ulps, kernel, max_ulps, check)
