#include "reports/allreduce_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace ulpscope {

AllreduceSettings allreduce_settings_from(const CliOptions& o) {
  // The other ops' matrix flags mean nothing here: refused, never ignored.
  const std::pair<bool, const char*> others[] = {
      {!o.accumulators.empty(), "--accumulator (the family's is --method)"},
      {!o.shapes.empty(), "--shape (the family's are --algo and --proto)"},
      {o.out_dtype.has_value(), "--out-dtype (NCCL writes in the input's format)"},
      {o.saturation.has_value(), "--saturation"},
      {o.axis.has_value(), "--axis"},
      {o.rows.has_value() || o.cols.has_value(), "--rows/--cols (the family's are --ranks and --n)"},
      {!o.input_path.empty(), "--input"},
      {!o.check_values.empty(), "--check"},
      {o.recommend.has_value(), "--recommend"},
      {!o.kernel_libs.empty(), "--kernel-lib"},
      {o.full, "--full"},
      {o.eps.has_value(), "--eps"},
      {o.throughput_n.has_value(), "--throughput-n (NCCL's cells are timed at their own n)"},
  };
  for (const auto& [given, flag] : others)
    if (given) throw std::invalid_argument(fmt::format("{} does not apply to --op allreduce_sum/allreduce_mean", flag));
  AllreduceSettings s;
  s.means = o.allreduce.means;
  if (!o.dtypes.empty()) s.dtypes = o.dtypes;
  if (!o.allreduce.methods.empty()) s.methods = o.allreduce.methods;
  if (!o.allreduce.algorithms.empty()) s.algorithms = o.allreduce.algorithms;
  if (!o.allreduce.protocols.empty()) s.protocols = o.allreduce.protocols;
  if (!o.allreduce.ranks.empty()) s.ranks = o.allreduce.ranks;
  if (o.allreduce.channels) s.channels = s.nccl_channels = *o.allreduce.channels;
  if (!o.distributions.empty()) {
    s.distributions.clear();
    for (const auto& text : o.distributions) {
      std::string why;
      const auto d = parse_distribution(text, &why);
      if (!d) throw std::invalid_argument(why);
      const bool seen = std::any_of(s.distributions.begin(), s.distributions.end(), [&](const DistributionSpec& e) {
        return e.d == d->d && e.parameter() == d->parameter();
      });
      if (!seen) s.distributions.push_back(*d);
    }
  }
  if (!o.sizes.empty()) s.sizes = o.sizes;
  if (!o.seeds.empty()) s.seeds = o.seeds;
  if (o.runs > 0) s.runs = o.runs;
  return s;
}

bool allreduce_through_nccl(BackendChoice backend, const AllreduceSettings& s, std::string* why_not) {
  if (backend == BackendChoice::cpu) return false;
  std::string why;
#if defined(ULPSCOPE_HAVE_NCCL) && ULPSCOPE_HAVE_NCCL
  for (int p : s.ranks) {
    why = allreduce::nccl_unavailable(p);
    if (!why.empty()) {
      why = fmt::format("P = {}: {}", p, why);
      break;
    }
  }
#else
  (void)s;
  why = "this build has no NCCL (ULPSCOPE_HAVE_NCCL off: CUDA and NCCL's nccl.h and libnccl were not found), so no "
        "GPU can be counted";
#endif
  if (why.empty()) return true;
  if (backend == BackendChoice::cuda) throw std::invalid_argument("--backend cuda: " + why);
  if (why_not) *why_not = why;
  return false;
}

}  // namespace ulpscope
