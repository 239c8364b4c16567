#pragma once
// What NCCL decided for one all-reduce, as far as the order of its additions
// depends on it (docs/spec.md, "All-reduce across GPUs"): the channels, each
// channel's ring (positions from rank 0) and chain (a one-node "tree", root
// first), which channels the call used, and how it split the elements over
// them and into chunks. The split is NCCL 2.28's (src/enqueue.cc,
// scheduleCollTasksToPlan and calcCollChunking; src/device/all_reduce.h,
// runRing), recomputed here because NCCL's INFO log does not print it.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/dtype.hpp"
#include "kernels/allreduce/nccl_runner.hpp"

namespace ulpscope::allreduce {

struct ChannelOrder {
  std::vector<int> ring;   // ring[i]: the rank at ring index i (ring[0] == 0)
  std::vector<int> chain;  // chain[0]: the tree's root, chain.back(): its leaf
};

struct Topology {
  int ranks = 0;
  std::vector<ChannelOrder> channels;  // the communicator's channels (comm->nChannels)
  int channel_lo = 0;                  // the call's first channel
  int task_channels = 1;               // the channels the call was planned on
};

// A run of consecutive elements that are reduced in the same order: on
// `channel`, for the ring, starting at ring index `first_index` and going
// round (the index after the chunk's owner); for the tree, from the chain's
// leaf to its root.
struct FoldSegment {
  std::size_t first = 0, count = 0;
  int channel = 0;
  int first_index = 0;
};

// The ring 0..P-1 and the chain 0..P-1 (root 0) on each of `channels`
// channels, the call planned on all of them: what the CPU backend simulates.
Topology default_topology(int ranks, int channels = 1);

// The channel parts {offset, count, chunk elements} of an n-element call
// (NCCL's ncclCollCbdPart), then every element's fold segment, in element
// order. Throws std::invalid_argument on a topology without enough channels.
struct ChannelPart {
  int channel = 0;
  std::size_t offset = 0, count = 0, chunk_elements = 0;
};
std::vector<ChannelPart> channel_parts(const Topology& t, Algorithm algorithm, Protocol protocol, Dtype dtype,
                                       std::size_t n);
std::vector<FoldSegment> fold_segments(const Topology& t, Algorithm algorithm, Protocol protocol, Dtype dtype,
                                       std::size_t n);

// The ranks in the order they are added for a segment: order[0] + order[1]
// first, then each next one added to the running partial.
std::vector<int> fold_order(const Topology& t, Algorithm algorithm, const FoldSegment& s);

// What NCCL's INFO log says (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING):
//   "NCCL version 2.28.9+cuda13.0"                         (init.cc)
//   "8 coll channels, 8 collnet channels, ..."             (init.cc)
//   "Channel 00/08 : 0 1 2 3"                              (graph/rings.cc, rank 0's log)
//   "Trees [0] 1/-1/-1->0->-1 [1] ..."                     (init.cc, one line per rank)
//   "AllReduce: 268435456 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..7}"  (enqueue.cc, TUNING)
// The last AllReduce line of `call_bytes` bytes (any size when 0) sets
// channel_lo and task_channels (the call's channels): a runner that also
// times NCCL's plain all-reduce of other data logs several calls. nullopt
// with the reason in *error when a ring, a tree or the channel count is
// missing or inconsistent with `ranks`.
struct ParsedLog {
  Topology topology;
  std::string version;                   // "" when absent
  std::optional<std::string> algorithm;  // "RING", "TREE", as the TUNING line names them
  std::optional<std::string> protocol;   // "SIMPLE", "LL", "LL128"
};
std::optional<ParsedLog> parse_nccl_topology(std::string_view log, int ranks, std::string* error = nullptr,
                                             std::size_t call_bytes = 0);

}  // namespace ulpscope::allreduce
