// The CPU models for bf16 inputs (one file per format keeps compile units small).
#include "kernels/model/model_runner.hpp"

namespace ulpscope::model {

ReductionResult run_model_bf16(const KernelSpec& spec, const ReductionProblem& pb, const LaunchConfig& cfg,
                             std::uint64_t seed) {
  return run_model_in<Bf16Format>(spec, pb, cfg, seed);
}

}  // namespace ulpscope::model
