#pragma once
// A real all-reduce through NCCL on P GPUs of one machine, driven by one
// process (docs/spec.md, "All-reduce across GPUs"; docs/nccl-allreduce.md).
// Built only where NCCL is found (ULPSCOPE_HAVE_NCCL; elsewhere a stand-in
// says why not); the CPU models of the same orders are beside it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/dtype.hpp"

namespace ulpscope::allreduce {

enum class Algorithm : std::uint8_t { ring, tree };        // NCCL_ALGO
enum class Protocol : std::uint8_t { simple, ll, ll128 };  // NCCL_PROTO
// What goes through NCCL: the input format itself; the inputs widened to fp32
// and rounded once at the end; or each element's exact integer state, rounded
// once (correctly rounded, the same bits for any P, algorithm and protocol).
enum class Method : std::uint8_t { plain, upcast, exact };

struct NcclRequest {
  Dtype dtype = Dtype::fp32;
  bool mean = false;  // allreduce_mean: the sum divided by P
  Method method = Method::plain;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  int ranks = 2;
  // > 0: NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS = channels while the
  // communicators are made; 0: the channels NCCL chooses.
  int channels = 0;
  std::size_t n = 0;                                             // elements per rank
  const std::vector<std::vector<std::uint8_t>>* inputs = nullptr;  // ranks x (n * bytes of dtype), raw bits
  int runs = 3;  // repeated all-reduces whose results are compared (the first `runs` of the repetitions)
  int repetitions = 10;  // timed all-reduces of each method after one warm-up (the median is reported)
  double timeout_s = 60;  // bounds each wait: the communicators' creation and every step of an all-reduce
  // Tests only: this rank leaves out its part of the collectives, so that the
  // others wait until timeout_s (the timeout path); -1 for none.
  int withhold_rank = -1;
};

struct NcclResult {
  std::vector<std::uint8_t> output;  // rank 0's result, n * bytes of dtype
  bool ranks_agree = false;          // every rank's output has rank 0's bits
  int distinct_runs = 0;             // distinct outputs over the runs
  double seconds = 0;                // median time of one all-reduce of this method (CUDA events)
  double plain_seconds = 0;          // the plain NCCL all-reduce of the same data, in the same run
  double bus_bandwidth = 0;          // bytes/s as nccl-tests' busbw: 2(P-1)/P * n * bytes(dtype) / seconds
                                     // (the input format's bytes for every method: the same data)
  std::string nccl_log;              // NCCL's INFO log of the communicator: its rings, trees and channels
  int nccl_version = 0;
  std::size_t second_round_elements = 0;  // exact: elements that took the second round (0 in most data)
};

// "" when P GPUs and NCCL are usable, else one line saying why not. Sets
// NCCL_NVLS_ENABLE=0 in the process (docs/nccl-allreduce.md).
std::string nccl_unavailable(int ranks);

// Throws std::runtime_error with one line on a refusal, a failing rank or a
// timeout; every collective is bounded by request.timeout_s.
NcclResult run_nccl_allreduce(const NcclRequest& request);

}  // namespace ulpscope::allreduce
