#pragma once
// accuracy_report's side of the all-reduce family: its matrix from the
// command line, the flags that do not apply to it, and the backend it runs
// on (docs/spec.md, "All-reduce across GPUs").
#include <string>

#include "accuracy/allreduce_matrix.hpp"
#include "reports/cli_options.hpp"

namespace ulpscope {

// The family's matrix from the flags (the defaults of AllreduceSettings
// where a flag is absent). Throws std::invalid_argument with one line for
// a flag of the other ops (--accumulator, --shape, --input, ...) or a bad
// distribution name.
AllreduceSettings allreduce_settings_from(const CliOptions& o);

// Whether the run goes through NCCL: --backend cpu never; --backend cuda
// always, or std::invalid_argument with NCCL's reason for the first P it
// cannot run (more ranks than GPUs, no NCCL in this build); auto when every
// P can. *why_not: the reason when it does not (for the "not run" list).
bool allreduce_through_nccl(BackendChoice backend, const AllreduceSettings& s, std::string* why_not);

}  // namespace ulpscope
