#pragma once
// Where a run's time goes (accuracy_report --phase-times): seconds per phase,
// summed over every thread that spent them, so phases that overlap (model
// checks on the CPU while the GPU runs) can add up to more than the wall time.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace ulpscope {

enum class Phase : int {
  input,         // generating or reading the inputs
  references,    // the exact references (MPFR and the exact accumulator)
  upload,        // copying inputs to the GPU
  kernel_runs,   // the kernels' runs and configurations (GPU, or CPU models)
  model_checks,  // the CPU models that check the GPU's bits (matches_model)
  permutations,  // permuted copies and the runs on them
  scoring,       // ULP errors, bounds, distinct results
  throughput,    // timing at the throughput size
  count_
};

class PhaseTimes {
 public:
  class Scope {
   public:
    Scope(PhaseTimes* t, Phase p) : t_(t), p_(p), start_(std::chrono::steady_clock::now()) {}
    ~Scope() {
      if (t_ != nullptr)
        t_->ns_[std::size_t(p_)] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - start_)
                                         .count();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseTimes* t_;
    Phase p_;
    std::chrono::steady_clock::time_point start_;
  };

  double seconds(Phase p) const { return double(ns_[std::size_t(p)].load()) * 1e-9; }
  // One line per phase that took any time: "references 1.234 s".
  std::string summary() const;

 private:
  std::array<std::atomic<std::int64_t>, std::size_t(Phase::count_)> ns_{};
};

// A scope on a possibly absent clock (timing is off unless asked for).
inline PhaseTimes::Scope timed(PhaseTimes* t, Phase p) { return PhaseTimes::Scope(t, p); }

}  // namespace ulpscope
