#pragma once
// One all-reduce problem (docs/spec.md, "All-reduce across GPUs"): P rank
// tensors of n elements, rank r's drawn from the distribution with a seed of
// its own, rank_seed(seed, r), so that every shape, algorithm and P sees the
// same tensors; and the scoring of an output against each element's exact
// sum (mean), streamed over blocks of elements so that P x n values never
// sit in memory at once (P = 1024, n = 2^20 would be 4 GiB in fp32).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accuracy/allreduce_profile.hpp"
#include "accuracy/distribution.hpp"
#include "kernels/allreduce/allreduce_topology.hpp"

namespace ulpscope {

struct AllreduceProblem {
  bool mean = false;  // allreduce_mean
  Dtype dtype = Dtype::fp32;
  int ranks = 2;
  std::int64_t n = 0;  // elements per rank
  DistributionSpec distribution;
  std::uint64_t seed = 1;
  // holder[r]: the rank whose tensor rank r holds (the identity unless the
  // ranks' order is permuted); empty is the identity.
  std::vector<int> holder;
};

// The seed of rank r's tensor: SplitMix64 (Steele et al. 2014) of seed and r,
// so that neighbouring ranks' streams are unrelated.
std::uint64_t rank_seed(std::uint64_t seed, int rank);

// Elements [first, first + out.size()) of rank r's tensor (rounded to the
// format, as doubles). Throws std::invalid_argument for a distribution whose
// elements are not independent of each other (sorted, ill_conditioned, ...).
void rank_values(const AllreduceProblem& p, int rank, std::int64_t first, std::span<double> out);

// Rank r's whole tensor as the format's raw bits (what NCCL is given).
std::vector<std::uint8_t> rank_bits(const AllreduceProblem& p, int rank);

// How the output being scored was made: the model's order and arithmetic.
struct AllreduceMethod {
  allreduce::Method method = allreduce::Method::plain;
  allreduce::Algorithm algorithm = allreduce::Algorithm::ring;
  allreduce::Protocol protocol = allreduce::Protocol::simple;
  allreduce::Topology topology;
};

struct AllreduceScore {
  AllreduceProfile profile;  // the per-element metrics and the digest; how it ran is the caller's
  bool correctly_rounded = false;  // every element
  // The worst element: its output, RN(exact) as hex floats, its exact value in decimal.
  std::string result, reference_rounded, reference_exact, error_note;
  // The model's output digest (the device's output is compared with it).
  std::string model_digest;
  std::optional<bool> matches_model;  // with a device output only
};

// One output of a problem to score: a method's model on the problem's
// tensors held by the ranks as `holder` says (empty: p.holder), or the
// device's output of it when given.
struct AllreduceVariant {
  AllreduceMethod method;
  std::vector<int> holder;
  const std::vector<double>* device_output = nullptr;
};

// Scores every variant in one pass over the ranks' tensors: each block of
// elements is drawn once for all of them and its exact sums computed once
// (the sum does not depend on the order). threads 0: every usable core.
std::vector<AllreduceScore> score_allreduce(const AllreduceProblem& p, const std::vector<AllreduceVariant>& variants,
                                            unsigned threads = 0);

// One variant: `device_output` (n values of the format, rank 0's result)
// when given, else the model's own output.
AllreduceScore score_allreduce(const AllreduceProblem& p, const AllreduceMethod& m,
                               const std::vector<double>* device_output = nullptr, unsigned threads = 0);

// The digest of a sequence of values of a format (AllreduceProfile::digest).
std::string output_digest(std::span<const double> values, Dtype dtype);

}  // namespace ulpscope
