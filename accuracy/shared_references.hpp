#pragma once
#include <exception>
#include <future>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>

#include "accuracy/phase_times.hpp"
#include "accuracy/problem_reference.hpp"
#include "accuracy/work_pool.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::matrix {

// The references of one problem, one per output format, computed on the pool
// from the moment the problem's cells are known, and shared by every kernel
// (built-in and user) that runs on it.
class SharedReferences {
 public:
  SharedReferences(const ReductionProblem& p, Saturation sat, WorkPool& pool, PhaseTimes* clock)
      : p_(p), sat_(sat), pool_(pool), clock_(clock) {}
  void start(Dtype out) {
    if (refs_.count(out)) return;
    refs_.emplace(out, pool_.submit([this, out]() -> std::variant<ProblemReference, std::string> {
      const auto scope = timed(clock_, Phase::references);
      try {
        return compute_problem_reference(p_, out, sat_);
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
    }).share());
  }
  // Called from the pool's tasks once every reference has been started.
  const ProblemReference& get(Dtype out) const {
    const auto& r = refs_.at(out).get();
    if (const auto* why = std::get_if<std::string>(&r)) throw std::runtime_error("reference: " + *why);
    return std::get<ProblemReference>(r);
  }
  void wait() const {
    for (const auto& [d, f] : refs_) f.wait();
  }

 private:
  const ReductionProblem& p_;
  Saturation sat_;
  WorkPool& pool_;
  PhaseTimes* clock_;
  std::map<Dtype, std::shared_future<std::variant<ProblemReference, std::string>>> refs_;
};

}  // namespace ulpscope::matrix
