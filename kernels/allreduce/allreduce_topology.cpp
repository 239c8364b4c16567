#include "kernels/allreduce/allreduce_topology.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

namespace ulpscope::allreduce {
namespace {

constexpr std::size_t div_up(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
constexpr std::size_t align_up(std::size_t a, std::size_t b) { return div_up(a, b) * b; }

// NCCL 2.28 constants (src/include/device.h, src/init.cc, src/include/collectives.h).
constexpr std::size_t kSteps = 8;                                         // NCCL_STEPS
constexpr std::size_t kSimpleBuffer = std::size_t{1} << 22;               // DEFAULT_BUFFSIZE
constexpr std::size_t kLlBuffer = 8 * 512 * kSteps * 16;                  // DEFAULT_LL_BUFFSIZE
constexpr std::size_t kLl128Buffer = 120 * 640 * kSteps * 8;              // DEFAULT_LL128_BUFFSIZE
constexpr std::size_t kLl128LineElems = 128 / 8, kLl128DataElems = kLl128LineElems - 1;
constexpr std::size_t kAllReduceChunkSteps = kSteps / 2;                  // ALLREDUCE_CHUNKSTEPS
constexpr std::size_t kMinTrafficPerChannel = 16 << 10;                   // enqueue.cc

// ncclProtoGrainSize.
std::size_t grain_bytes(Protocol p) {
  switch (p) {
    case Protocol::ll: return 16;
    case Protocol::ll128: return 32 * 8 / kLl128LineElems * kLl128DataElems * 8;
    case Protocol::simple: return 512;
  }
  return 512;
}

// calcCollChunking for one channel's part of nbytes (nChannels = 1, one node).
std::size_t chunk_bytes(Algorithm a, Protocol p, int ranks, std::size_t nbytes) {
  const std::size_t buffer = p == Protocol::ll ? kLlBuffer : p == Protocol::ll128 ? kLl128Buffer : kSimpleBuffer;
  const std::size_t step = buffer / kSteps;
  const std::size_t chunk_steps = (p == Protocol::simple && a == Algorithm::ring) ? kAllReduceChunkSteps : 1;
  std::size_t chunk = step * chunk_steps;
  if (p == Protocol::ll) chunk /= 2;
  if (p == Protocol::ll128) chunk = chunk / kLl128LineElems * kLl128DataElems;
  if (a == Algorithm::tree && p == Protocol::ll128) {
    const float ppn = static_cast<float>(ranks);  // one node
    const float steps_ll128 = 1 + 0.1f * ppn;     // 1 + log2i(nNodes) + 0.1 ppn
    while (static_cast<float>(nbytes / chunk) < steps_ll128 * 64 / ppn && chunk > 131072) chunk /= 2;
    while (static_cast<float>(nbytes / chunk) < steps_ll128 * 16 / ppn && chunk > 32768) chunk /= 2;
  }
  const std::size_t grain = grain_bytes(p);
  return chunk / grain * grain;
}

std::vector<int> ints_after(std::string_view text) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) break;
    int v = 0;
    auto [p, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec != std::errc() || (p != text.data() + text.size() && *p != ' ')) return {};
    out.push_back(v);
    i = static_cast<std::size_t>(p - text.data());
  }
  return out;
}

bool is_permutation_of_ranks(const std::vector<int>& v, int ranks) {
  if (static_cast<int>(v.size()) != ranks) return false;
  std::vector<bool> seen(static_cast<std::size_t>(ranks), false);
  for (int r : v) {
    if (r < 0 || r >= ranks || seen[static_cast<std::size_t>(r)]) return false;
    seen[static_cast<std::size_t>(r)] = true;
  }
  return true;
}

}  // namespace

Topology default_topology(int ranks, int channels) {
  Topology t;
  t.ranks = ranks;
  ChannelOrder c;
  for (int r = 0; r < ranks; ++r) c.ring.push_back(r), c.chain.push_back(r);
  t.channels.assign(static_cast<std::size_t>(channels), c);
  t.task_channels = channels;
  return t;
}

std::vector<ChannelPart> channel_parts(const Topology& t, Algorithm algorithm, Protocol protocol, Dtype dtype,
                                       std::size_t n) {
  const std::size_t elt = static_cast<std::size_t>(format_info(dtype).bits / 8);
  const std::size_t max_channels = t.channels.size();
  if (max_channels == 0 || t.task_channels < 1) throw std::invalid_argument("a topology without channels");
  if (n == 0) return {};
  // scheduleCollTasksToPlan: one task alone in its plan, on channels from 0.
  const std::size_t task_traffic = std::max(kMinTrafficPerChannel, n * elt * 2);
  const std::size_t planned = std::min<std::size_t>(static_cast<std::size_t>(t.task_channels), max_channels);
  const std::size_t traffic_per_channel = std::max(kMinTrafficPerChannel, task_traffic / planned);
  std::size_t traffic_per_byte = 2;
  if (protocol == Protocol::ll) traffic_per_byte *= 4;
  const std::size_t cell_size = div_up(div_up(kMinTrafficPerChannel, traffic_per_byte), 16) * 16;
  const std::size_t elements_per_cell = cell_size / elt;
  const std::size_t cells = div_up(n * elt, cell_size);
  const std::size_t traffic_per_cell = cell_size * traffic_per_byte;
  std::size_t cells_per_channel = std::min(cells, div_up(traffic_per_channel, traffic_per_cell));
  std::size_t channel_id = 0;
  std::size_t cells_lo = max_channels == 1 ? cells : std::min(cells, div_up(traffic_per_channel, traffic_per_cell));
  long mid_channels = static_cast<long>((cells - cells_lo) / cells_per_channel);
  std::size_t cells_hi = (cells - cells_lo) % cells_per_channel;
  const long used = (cells_lo != 0 ? 1 : 0) + mid_channels + (cells_hi != 0 ? 1 : 0);
  if (static_cast<long>(max_channels) < static_cast<long>(channel_id) + used) {
    mid_channels = static_cast<long>(max_channels) - static_cast<long>(channel_id) - 2;
    cells_per_channel = (cells - cells_lo) / static_cast<std::size_t>(mid_channels + 1);
    cells_hi = cells_per_channel + (cells - cells_lo) % static_cast<std::size_t>(mid_channels + 1);
  }
  if (cells_hi == 0 && mid_channels != 0) {
    cells_hi = cells_per_channel;
    mid_channels -= 1;
  }
  if (cells_lo == 0) {
    channel_id += 1;
    if (mid_channels == 0) {
      cells_lo = cells_hi;
      cells_hi = 0;
    } else {
      cells_lo = cells_per_channel;
      mid_channels -= 1;
    }
  }
  const std::size_t count_mid = mid_channels != 0 ? cells_per_channel * elements_per_cell : 0;
  std::size_t count_lo = cells_lo * elements_per_cell;
  std::size_t count_hi = cells_hi * elements_per_cell;
  (count_hi != 0 ? count_hi : count_lo) -= cells * elements_per_cell - n;

  const std::size_t grain_elements = grain_bytes(protocol) / elt;
  auto part = [&](std::size_t channel, std::size_t offset, std::size_t count) {
    const std::size_t grains = chunk_bytes(algorithm, protocol, t.ranks, elt * count) / grain_bytes(protocol);
    const std::size_t c = static_cast<std::size_t>(t.channel_lo) + channel;
    if (c >= max_channels) throw std::invalid_argument("the call's channels exceed the communicator's");
    return ChannelPart{static_cast<int>(c), offset, count, grains * grain_elements};
  };
  std::vector<ChannelPart> parts;
  std::size_t offset = 0;
  if (count_lo != 0) parts.push_back(part(channel_id, offset, count_lo)), offset += count_lo;
  for (long m = 0; m < mid_channels; ++m)
    parts.push_back(part(channel_id + 1 + static_cast<std::size_t>(m), offset, count_mid)), offset += count_mid;
  if (count_hi != 0) parts.push_back(part(channel_id + 1 + static_cast<std::size_t>(mid_channels), offset, count_hi));
  return parts;
}

std::vector<FoldSegment> fold_segments(const Topology& t, Algorithm algorithm, Protocol protocol, Dtype dtype,
                                       std::size_t n) {
  std::vector<FoldSegment> out;
  if (n == 0) return out;
  const std::size_t ranks = static_cast<std::size_t>(t.ranks);
  const std::size_t elt = static_cast<std::size_t>(format_info(dtype).bits / 8);
  for (const ChannelPart& p : channel_parts(t, algorithm, protocol, dtype, n)) {
    if (algorithm == Algorithm::tree || ranks == 1) {
      out.push_back({p.offset, p.count, p.channel, 0});
      continue;
    }
    // runRing: loops of P chunks; chunk j is owned by ring index j and its
    // fold starts at index j + 1. The last loop shrinks the chunk to
    // alignUp(divUp(rem, P), 16 / sizeof(T)).
    std::size_t chunk = p.chunk_elements;
    for (std::size_t loop = 0; loop < p.count; loop += ranks * chunk) {
      const std::size_t rem = p.count - loop;
      if (rem < ranks * chunk) chunk = align_up(div_up(rem, ranks), 16 / elt);
      for (std::size_t j = 0; j < ranks; ++j) {
        const std::size_t begin = j * chunk;
        if (begin >= rem) break;
        out.push_back({p.offset + loop + begin, std::min(chunk, rem - begin), p.channel,
                       static_cast<int>((j + 1) % ranks)});
      }
    }
  }
  return out;
}

std::vector<int> fold_order(const Topology& t, Algorithm algorithm, const FoldSegment& s) {
  const ChannelOrder& c = t.channels.at(static_cast<std::size_t>(s.channel));
  std::vector<int> order;
  if (algorithm == Algorithm::tree) return {c.chain.rbegin(), c.chain.rend()};
  const int p = t.ranks;
  for (int k = 0; k < p; ++k) order.push_back(c.ring[static_cast<std::size_t>((s.first_index + k) % p)]);
  return order;
}

std::optional<ParsedLog> parse_nccl_topology(std::string_view log, int ranks, std::string* error,
                                             std::size_t call_bytes) {
  auto fail = [&](const std::string& why) -> std::optional<ParsedLog> {
    if (error) *error = why;
    return std::nullopt;
  };
  ParsedLog out;
  out.topology.ranks = ranks;
  int coll_channels = -1;
  std::map<int, std::vector<int>> rings;
  // per channel, per rank: (down[0], up)
  std::map<int, std::map<int, std::pair<int, int>>> trees;
  std::istringstream lines{std::string(log)};
  std::string line;
  while (std::getline(lines, line)) {
    std::string_view l = line;
    if (auto at = l.find("NCCL version "); at != std::string_view::npos) {
      std::string_view v = l.substr(at + 13);
      out.version = std::string(v.substr(0, v.find(' ')));
    }
    if (auto at = l.find(" coll channels,"); at != std::string_view::npos) {
      std::size_t b = l.rfind(' ', at - 1);
      b = b == std::string_view::npos ? 0 : b + 1;
      std::from_chars(l.data() + b, l.data() + at, coll_channels);
    }
    if (auto at = l.find("Channel "); at != std::string_view::npos) {
      int c = -1, of = -1;
      std::string_view rest = l.substr(at + 8);
      auto [p1, e1] = std::from_chars(rest.data(), rest.data() + rest.size(), c);
      if (e1 == std::errc() && p1 < rest.data() + rest.size() && *p1 == '/') {
        auto [p2, e2] = std::from_chars(p1 + 1, rest.data() + rest.size(), of);
        std::string_view tail(p2, static_cast<std::size_t>(rest.data() + rest.size() - p2));
        if (e2 == std::errc() && tail.substr(0, 3) == " : ") {
          std::vector<int> ring = ints_after(tail.substr(3));
          if (!ring.empty()) rings[c] = ring;  // transport lines ("0[0] -> 1[1] via P2P") are not rings
        }
      }
    }
    if (auto at = l.find("Trees "); at != std::string_view::npos && l.find("NVLS Trees") == std::string_view::npos) {
      std::string_view rest = l.substr(at + 5);
      std::size_t i = 0;
      while ((i = rest.find(" [", i)) != std::string_view::npos) {
        int c = 0, d0 = 0, d1 = 0, d2 = 0, rank = 0, up = 0;
        std::string item(rest.substr(i + 1, rest.find(" [", i + 1) - (i + 1)));
        if (std::sscanf(item.c_str(), "[%d] %d/%d/%d->%d->%d", &c, &d0, &d1, &d2, &rank, &up) != 6)
          return fail("unreadable Trees entry: " + item);
        if (d1 != -1 || d2 != -1) return fail("a tree node with more than one child (not a one-node chain): " + item);
        trees[c][rank] = {d0, up};
        i += 1;
      }
    }
    if (auto at = l.find("AllReduce: "); at != std::string_view::npos) {
      char algo[32] = {}, proto[32] = {};
      long bytes = 0;
      int lo = 0, hi = 0;
      std::string item(l.substr(at));
      if (std::sscanf(item.c_str(), "AllReduce: %ld Bytes -> Algo %31s proto %31s channel{Lo..Hi}={%d..%d}", &bytes,
                      algo, proto, &lo, &hi) == 5 &&
          (call_bytes == 0 || bytes == static_cast<long>(call_bytes))) {
        out.algorithm = algo;
        out.protocol = proto;
        out.topology.channel_lo = lo;
        out.topology.task_channels = hi - lo + 1;
      }
    }
  }
  if (coll_channels < 1) return fail("no \"coll channels\" line in NCCL's log");
  for (int c = 0; c < coll_channels; ++c) {
    ChannelOrder order;
    auto r = rings.find(c);
    if (r == rings.end()) return fail("no ring for channel " + std::to_string(c) + " in NCCL's log");
    if (!is_permutation_of_ranks(r->second, ranks) || r->second[0] != 0)
      return fail("channel " + std::to_string(c) + "'s ring is not the ranks 0.." + std::to_string(ranks - 1) +
                  " from rank 0");
    order.ring = r->second;
    if (ranks > 1) {
      auto t = trees.find(c);
      if (t == trees.end() || static_cast<int>(t->second.size()) != ranks)
        return fail("channel " + std::to_string(c) + "'s tree is not in NCCL's log for every rank");
      int node = -1;
      for (const auto& [rank, du] : t->second)
        if (du.second == -1) node = rank;
      while (node != -1 && static_cast<int>(order.chain.size()) <= ranks) {
        order.chain.push_back(node);
        auto next = t->second.find(node);
        node = next == t->second.end() ? -1 : next->second.first;
      }
      if (!is_permutation_of_ranks(order.chain, ranks))
        return fail("channel " + std::to_string(c) + "'s tree is not one chain through every rank");
    } else {
      order.chain = {0};
    }
    out.topology.channels.push_back(order);
  }
  if (out.topology.channel_lo + out.topology.task_channels > coll_channels)
    return fail("the AllReduce line's channels exceed the communicator's " + std::to_string(coll_channels));
  if (!out.algorithm) out.topology.task_channels = coll_channels;
  return out;
}

}  // namespace ulpscope::allreduce
