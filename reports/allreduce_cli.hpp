#pragma once
// The all-reduce family's command line (docs/spec.md, "All-reduce across
// GPUs"): its ops out of --op, and --ranks, --algo, --proto, --method,
// --channels. Registered on accuracy_report's CLI11 app; parse never exits.
#include <optional>
#include <string>
#include <vector>

#include "kernels/allreduce/nccl_runner.hpp"

namespace CLI {
class App;
}

namespace ulpscope {

struct AllreduceCli {
  std::vector<bool> means;  // --op allreduce_sum (false), allreduce_mean (true); empty: not asked for
  std::vector<int> ranks;
  std::vector<allreduce::Algorithm> algorithms;
  std::vector<allreduce::Protocol> protocols;
  std::vector<allreduce::Method> methods;
  std::optional<int> channels;
  bool any_flag = false;  // one of the family's own flags was given
};

struct AllreduceCliText {
  std::vector<std::string> ranks, algorithms, protocols, methods;
  std::string channels;
};

void add_allreduce_options(CLI::App& app, AllreduceCliText& text);

// Moves the family's names out of ops (the other ops' names stay) and reads
// the flags. Throws std::invalid_argument with one line: "--ranks 0: ...",
// "unknown --algo 'nvls' (NCCL's algorithms measured here: ring, tree)".
AllreduceCli parse_allreduce_options(const AllreduceCliText& text, std::vector<std::string>& ops);

}  // namespace ulpscope
