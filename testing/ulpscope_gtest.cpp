#include "testing/ulpscope_gtest.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>

namespace ulpscope::gtest {

namespace {

std::string where(const Cell& c) {
  std::string s = fmt::format("{} n={} seed={}", c.distribution, c.n, c.seed);
  if (c.rows) s += fmt::format(" [{} x {}]", *c.rows, *c.cols);
  if (c.axis != "all" && c.op != "rmsnorm" && c.op != "layernorm") s += " axis " + c.axis;
  return s;
}

std::string what_came_out(const Cell& c) {
  std::string s = fmt::format("result {}, correctly rounded {}", c.result, c.reference_rounded);
  if (!c.component.empty()) s = c.component + ": " + s;
  if (!c.error_note.empty()) s += " (" + c.error_note + ")";
  return s;
}

}  // namespace

::testing::AssertionResult verdict(const UserKernel& k, double max_ulps, const UlpCheck& check,
                                   const Evaluation& e) {
  const Cell* worst = nullptr;
  double worst_ulps = -1;
  const Cell* nondeterministic = nullptr;
  std::size_t measured = 0, over = 0, failed = 0;
  std::map<std::string, double> per_distribution;  // worst ulps of each distribution that exceeds
  for (const Cell& c : e.cells) {
    if (c.shape != k.name) continue;
    ++measured;
    // A failed cell or an undefined error (a non-finite result for a finite
    // reference, or the reverse) is worse than any number of ulps.
    const double ulps = c.status != "ok" || !c.ulp_error ? HUGE_VAL : *c.ulp_error;
    if (c.status != "ok") ++failed;
    if (ulps > max_ulps) {
      ++over;
      double& d = per_distribution[c.distribution];
      d = std::max(d, ulps);
    }
    if (ulps > worst_ulps) {
      worst_ulps = ulps;
      worst = &c;
    }
    if (check.require_deterministic && k.deterministic && c.distinct_results > 1 && nondeterministic == nullptr)
      nondeterministic = &c;
  }
  if (measured == 0) {
    std::string why;
    for (const auto& [name, reason] : e.unavailable) why += fmt::format(" {}: {}.", name, reason);
    return ::testing::AssertionFailure() << "kernel '" << k.name << "' was not measured on any input." << why;
  }
  if (over == 0 && nondeterministic == nullptr)
    return ::testing::AssertionSuccess() << "kernel '" << k.name << "': " << measured << " cells, worst "
                                         << fmt::format("{:.3g}", worst_ulps) << " ulps";

  auto msg = ::testing::AssertionFailure();
  msg << fmt::format("kernel '{}' ({} {}->{}, {} backend):", k.name, to_string(k.op), to_string(k.in),
                     to_string(k.out), e.backend);
  if (over > 0) {
    const std::string worst_text =
        worst->status != "ok" ? worst->status
        : worst->ulp_error    ? fmt::format("{:.4g} ulps", *worst->ulp_error)
                              : std::string("undefined ulp error");
    msg << fmt::format("\n  {} of {} cells are beyond {} ulps{}", over, measured, max_ulps,
                       failed ? fmt::format(" ({} failed)", failed) : std::string());
    msg << fmt::format("\n  worst: {} on {}: {}", worst_text, where(*worst), what_came_out(*worst));
    std::string dists;
    for (const auto& [name, ulps] : per_distribution)
      dists += fmt::format("{}{} {}", dists.empty() ? "" : ", ", name,
                           std::isinf(ulps) ? std::string("(failed or undefined)") : fmt::format("{:.3g}", ulps));
    msg << "\n  beyond, per distribution (worst ulps): " << dists;
    msg << "\n  replay: " << replay_command(*worst, k, e);
  }
  if (nondeterministic != nullptr) {
    msg << fmt::format("\n  not deterministic: {} distinct results over {} runs on {}",
                       nondeterministic->distinct_results, nondeterministic->runs, where(*nondeterministic));
    msg << "\n  replay: " << replay_command(*nondeterministic, k, e);
  }
  return msg;
}

::testing::AssertionResult within_ulps(const char* kernel_expr, const char* ulps_expr, const char* check_expr,
                                       const UserKernel& k, double max_ulps, const UlpCheck& check) {
  (void)kernel_expr;
  (void)ulps_expr;
  (void)check_expr;
  try {
    return verdict(k, max_ulps, check, evaluate_kernel(k, check.evaluation));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "kernel '" << k.name << "' could not be evaluated: " << e.what();
  }
}

::testing::AssertionResult within_ulps(const char* kernel_expr, const char* ulps_expr, const UserKernel& k,
                                       double max_ulps) {
  return within_ulps(kernel_expr, ulps_expr, "UlpCheck{}", k, max_ulps, UlpCheck{});
}

}  // namespace ulpscope::gtest
