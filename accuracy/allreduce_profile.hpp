#pragma once
// What an all-reduce cell reports beside its worst element (docs/spec.md,
// "All-reduce across GPUs"): its per-element errors over the n outputs, how
// it was run (ranks, algorithm, protocol, method) and, measured through
// NCCL, its cost. Data only, so that the cell (accuracy/cell.hpp) and the
// reports read it without the models.
#include <cstdint>
#include <optional>
#include <string>

namespace ulpscope {

struct AllreduceProfile {
  int ranks = 0;
  std::string algorithm, protocol, method;  // "ring"/"tree", "simple"/"ll"/"ll128", "plain"/"upcast"/"exact"
  int channels = 0;                         // the channels the call's elements were split over
  // Over the n output elements: the largest and the mean ULP error (null when
  // some element is a finite/non-finite mismatch), the share correctly
  // rounded, the worst element's index.
  std::optional<double> max_ulp_error, mean_ulp_error;
  double share_correctly_rounded = 0;
  std::int64_t worst_element = 0;
  // FNV-1a (64 bits) of the output's bits in order, as 16 hex digits: equal
  // digests, equal outputs, so cells of other algorithms, protocols or P
  // compare without the outputs themselves.
  std::string digest;
  // Through NCCL only (null on the CPU backend).
  std::optional<bool> ranks_agree;
  std::optional<double> seconds, bus_bandwidth, fraction_of_plain;
  std::string nccl_version;
};

}  // namespace ulpscope
