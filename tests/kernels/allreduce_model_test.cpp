// The all-reduce family's CPU models (kernels/allreduce): NCCL's split of the
// elements, the fold orders, the arithmetic, and the reading of NCCL's log.
// The models are checked against a simulation of NCCL's ring and chain that
// passes messages step by step as runRing and runTreeUpDown do
// (src/device/all_reduce.h), written without the models' segment algebra.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "formats/round_to_dtype.hpp"
#include "kernels/allreduce/allreduce_model.hpp"
#include "kernels/allreduce/allreduce_topology.hpp"

namespace ulpscope::allreduce {
namespace {

// a + b as NCCL's reduce_kernel.h rounds it, through the run-time rounding
// (the models use the formats' own types).
double nccl_add(double a, double b, Dtype d) {
  if (is_fp8(d)) return round_to_dtype(round_to_dtype(a + b, Dtype::fp16), d, Saturation::satfinite);
  return round_to_dtype(a + b, d);
}

// inputs[r][e]; every rank's buffer after a ring all-reduce of one channel
// holding all n elements in chunks of chunk_count (the last loop's chunk
// shrunk as runRing shrinks it): step 0 sends, P - 2 steps receive, add and
// send, one step adds the last input, P - 1 steps pass the result on.
std::vector<double> simulate_ring(const std::vector<std::vector<double>>& inputs, const std::vector<int>& ring,
                                  std::size_t chunk_count, Dtype d) {
  const int p = static_cast<int>(ring.size());
  const std::size_t n = inputs[0].size();
  std::vector<std::vector<double>> out(static_cast<std::size_t>(p), std::vector<double>(n));
  std::size_t elt = static_cast<std::size_t>(format_info(d).bits / 8);
  for (std::size_t loop = 0; loop < n; loop += static_cast<std::size_t>(p) * chunk_count) {
    const std::size_t rem = n - loop;
    if (rem < static_cast<std::size_t>(p) * chunk_count)
      chunk_count = (rem + p - 1) / p, chunk_count = (chunk_count + 16 / elt - 1) / (16 / elt) * (16 / elt);
    auto range = [&](int chunk) {
      const std::size_t b = std::min(rem, static_cast<std::size_t>(chunk) * chunk_count);
      return std::pair{loop + b, loop + std::min(rem, b + chunk_count)};
    };
    // sent[i]: what ring index i sent at the last step (its chunk's elements).
    std::vector<std::vector<double>> sent(static_cast<std::size_t>(p));
    auto own = [&](int index, int chunk) {
      auto [b, e] = range(chunk);
      const auto& in = inputs[static_cast<std::size_t>(ring[static_cast<std::size_t>(index)])];
      return std::vector<double>(in.begin() + static_cast<long>(b), in.begin() + static_cast<long>(e));
    };
    for (int i = 0; i < p; ++i) sent[static_cast<std::size_t>(i)] = own(i, (i + p - 1) % p);
    for (int j = 2; j <= p; ++j) {
      std::vector<std::vector<double>> next(static_cast<std::size_t>(p));
      for (int i = 0; i < p; ++i) {
        const int chunk = (i + p - j) % p;  // j == p: the index's own chunk, the last addition
        std::vector<double> mine = own(i, chunk);
        const auto& got = sent[static_cast<std::size_t>((i + p - 1) % p)];
        for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = nccl_add(got[k], mine[k], d);
        next[static_cast<std::size_t>(i)] = mine;
      }
      sent = next;
    }
    // Index i now holds chunk i's sum; the all-gather copies it everywhere.
    for (int i = 0; i < p; ++i) {
      auto [b, e] = range(i);
      for (int r = 0; r < p; ++r)
        std::copy(sent[static_cast<std::size_t>(i)].begin(), sent[static_cast<std::size_t>(i)].end(),
                  out[static_cast<std::size_t>(r)].begin() + static_cast<long>(b));
      (void)e;
    }
  }
  return out[0];
}

// A chain root..leaf: the leaf sends its input up, each node adds its own
// and sends on, the root's sum is broadcast back down.
std::vector<double> simulate_chain(const std::vector<std::vector<double>>& inputs, const std::vector<int>& chain,
                                   Dtype d) {
  std::vector<double> up = inputs[static_cast<std::size_t>(chain.back())];
  for (int i = static_cast<int>(chain.size()) - 2; i >= 0; --i) {
    const auto& mine = inputs[static_cast<std::size_t>(chain[static_cast<std::size_t>(i)])];
    for (std::size_t k = 0; k < up.size(); ++k) up[k] = nccl_add(up[k], mine[k], d);
  }
  return up;
}

std::vector<std::vector<double>> random_inputs(int ranks, std::size_t n, Dtype d, unsigned seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<std::vector<double>> x(static_cast<std::size_t>(ranks), std::vector<double>(n));
  for (auto& row : x)
    for (double& v : row) v = round_to_dtype(normal(g) * std::ldexp(1.0, static_cast<int>(g() % 9) - 4), d,
                                             is_fp8(d) ? Saturation::satfinite : Saturation::nosat);
  return x;
}

// The models' output for every element: each fold segment folded alone.
std::vector<double> model_output(const std::vector<std::vector<double>>& inputs, const Topology& t, Algorithm a,
                                 Protocol proto, Dtype d) {
  const std::size_t n = inputs[0].size();
  std::vector<double> rows;
  for (const auto& r : inputs) rows.insert(rows.end(), r.begin(), r.end());
  std::vector<double> out(n);
  const FoldArithmetic arithmetic{d, false, Method::plain, t.ranks};
  for (const FoldSegment& s : fold_segments(t, a, proto, d, n))
    fold_block(arithmetic, fold_order(t, a, s), rows.data() + s.first, n, s.count, out.data() + s.first);
  return out;
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::signbit(a[i]) != std::signbit(b[i]) || !(a[i] == b[i] || (a[i] != a[i] && b[i] != b[i]))) return false;
  return true;
}

TEST(AllreduceTopology, OneChannelIsOnePartWithNcclsChunk) {
  // 4 MiB SIMPLE buffer / 8 steps * 4 chunk steps = 2 MiB: 524288 fp32 elements.
  const auto parts = channel_parts(default_topology(4), Algorithm::ring, Protocol::simple, Dtype::fp32, 1 << 20);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].offset, 0u);
  EXPECT_EQ(parts[0].count, std::size_t{1} << 20);
  EXPECT_EQ(parts[0].chunk_elements, 524288u);
  // LL128: the 4.7 MB buffer's step, 614400 bytes, holds 15/16 data: 576000 bytes, 300 grains of 1920.
  EXPECT_EQ(channel_parts(default_topology(4), Algorithm::ring, Protocol::ll128, Dtype::fp32, 1 << 20)[0]
                .chunk_elements,
            144000u);
  // LL: 512 KiB / 8 steps, half of it data: 32 KiB.
  EXPECT_EQ(channel_parts(default_topology(4), Algorithm::ring, Protocol::ll, Dtype::bf16, 1 << 20)[0].chunk_elements,
            16384u);
  // The tree's SIMPLE chunk is one step: 512 KiB.
  EXPECT_EQ(channel_parts(default_topology(4), Algorithm::tree, Protocol::simple, Dtype::fp32, 1 << 20)[0]
                .chunk_elements,
            131072u);
}

TEST(AllreduceTopology, TwoChannelsSplitByTraffic) {
  // 2^20 fp32: 8 MiB of traffic, 4 MiB a channel, 8 KiB cells of 2048 elements: 256 cells each.
  const auto parts = channel_parts(default_topology(4, 2), Algorithm::ring, Protocol::simple, Dtype::fp32, 1 << 20);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].channel, 0);
  EXPECT_EQ(parts[0].count, 524288u);
  EXPECT_EQ(parts[1].channel, 1);
  EXPECT_EQ(parts[1].offset, 524288u);
  EXPECT_EQ(parts[1].count, 524288u);
}

TEST(AllreduceTopology, RingSegmentsStartAfterTheirOwner) {
  // One loop of 4 chunks of alignUp(divUp(1000, 4), 4) = 252 elements; chunk j's fold starts at index j + 1.
  const auto segments = fold_segments(default_topology(4), Algorithm::ring, Protocol::simple, Dtype::fp32, 1000);
  ASSERT_EQ(segments.size(), 4u);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(segments[static_cast<std::size_t>(j)].first, 252u * static_cast<std::size_t>(j));
    EXPECT_EQ(segments[static_cast<std::size_t>(j)].first_index, (j + 1) % 4);
  }
  EXPECT_EQ(segments[3].count, 1000u - 3 * 252);
  EXPECT_EQ(fold_order(default_topology(4), Algorithm::ring, segments[1]), (std::vector<int>{2, 3, 0, 1}));
  EXPECT_EQ(fold_order(default_topology(4), Algorithm::tree, segments[1]), (std::vector<int>{3, 2, 1, 0}));
}

struct ModelCase {
  Dtype dtype;
  int ranks;
  std::size_t n;
  std::vector<int> ring;
};

TEST(AllreduceModel, RingMatchesAStepByStepRing) {
  const std::vector<ModelCase> cases = {
      {Dtype::fp32, 2, 1000, {0, 1}},
      {Dtype::fp32, 4, 4099, {0, 2, 1, 3}},
      {Dtype::fp16, 4, 777, {0, 1, 2, 3}},
      {Dtype::bf16, 5, 3000, {0, 3, 1, 4, 2}},
      {Dtype::fp8_e4m3, 3, 500, {0, 2, 1}},
      {Dtype::fp8_e5m2, 4, 500, {0, 1, 3, 2}},
  };
  for (const ModelCase& c : cases) {
    Topology t = default_topology(c.ranks);
    t.channels[0].ring = c.ring;
    const auto inputs = random_inputs(c.ranks, c.n, c.dtype, 7);
    const auto parts = channel_parts(t, Algorithm::ring, Protocol::simple, c.dtype, c.n);
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_TRUE(same(model_output(inputs, t, Algorithm::ring, Protocol::simple, c.dtype),
                     simulate_ring(inputs, c.ring, parts[0].chunk_elements, c.dtype)))
        << to_string(c.dtype) << " P=" << c.ranks;
  }
}

TEST(AllreduceModel, RingWithSeveralLoopsMatches) {
  // LL's chunk is 32 KiB: 8192 fp32, so 3 ranks and 60000 elements take three loops.
  const int ranks = 3;
  const std::size_t n = 60000;
  const auto inputs = random_inputs(ranks, n, Dtype::fp32, 11);
  const Topology t = default_topology(ranks);
  const auto parts = channel_parts(t, Algorithm::ring, Protocol::ll, Dtype::fp32, n);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].chunk_elements, 8192u);
  EXPECT_TRUE(same(model_output(inputs, t, Algorithm::ring, Protocol::ll, Dtype::fp32),
                   simulate_ring(inputs, t.channels[0].ring, 8192, Dtype::fp32)));
}

TEST(AllreduceModel, EachChannelFoldsItsPartOnItsOwnRing) {
  // Two channels, two rings: each channel's part is a ring all-reduce of its own.
  const int ranks = 3;
  const std::size_t n = std::size_t{1} << 18;  // 1 MiB of traffic (2 n bytes of fp16): two parts of 2^17
  Topology t = default_topology(ranks, 2);
  t.channels[1].ring = {0, 2, 1};
  const auto inputs = random_inputs(ranks, n, Dtype::fp16, 13);
  const auto model = model_output(inputs, t, Algorithm::ring, Protocol::simple, Dtype::fp16);
  const auto parts = channel_parts(t, Algorithm::ring, Protocol::simple, Dtype::fp16, n);
  ASSERT_EQ(parts.size(), 2u);
  for (const ChannelPart& part : parts) {
    std::vector<std::vector<double>> slice;
    for (const auto& row : inputs)
      slice.emplace_back(row.begin() + static_cast<long>(part.offset),
                         row.begin() + static_cast<long>(part.offset + part.count));
    const auto ring = simulate_ring(slice, t.channels[static_cast<std::size_t>(part.channel)].ring,
                                    part.chunk_elements, Dtype::fp16);
    EXPECT_TRUE(same(std::vector<double>(model.begin() + static_cast<long>(part.offset),
                                         model.begin() + static_cast<long>(part.offset + part.count)),
                     ring))
        << "channel " << part.channel;
  }
}

TEST(AllreduceModel, TreeMatchesAChain) {
  for (Dtype d : {Dtype::fp32, Dtype::fp16, Dtype::bf16}) {
    Topology t = default_topology(4);
    t.channels[0].chain = {2, 0, 3, 1};
    const auto inputs = random_inputs(4, 1500, d, 3);
    EXPECT_TRUE(same(model_output(inputs, t, Algorithm::tree, Protocol::simple, d),
                     simulate_chain(inputs, t.channels[0].chain, d)))
        << to_string(d);
  }
}

TEST(AllreduceModel, OrderMattersBeyondTwoRanks) {
  // Two ranks: a + b = b + a, so ring and tree agree; with four, bf16's
  // roundings make the ring's rotated orders differ from the chain's.
  const auto two = random_inputs(2, 4096, Dtype::bf16, 5);
  EXPECT_TRUE(same(model_output(two, default_topology(2), Algorithm::ring, Protocol::simple, Dtype::bf16),
                   model_output(two, default_topology(2), Algorithm::tree, Protocol::simple, Dtype::bf16)));
  const auto four = random_inputs(4, 4096, Dtype::bf16, 5);
  EXPECT_FALSE(same(model_output(four, default_topology(4), Algorithm::ring, Protocol::simple, Dtype::bf16),
                    model_output(four, default_topology(4), Algorithm::tree, Protocol::simple, Dtype::bf16)));
}

TEST(AllreduceModel, MeanPremultipliesByNcclsScale) {
  // ncclAvg on floats: each input times T(float(1/P)), then the sum.
  EXPECT_EQ(mean_scale(Dtype::fp32, 3), static_cast<double>(static_cast<float>(1.0 / 3)));
  EXPECT_EQ(mean_scale(Dtype::bf16, 3), round_to_dtype(static_cast<float>(1.0 / 3), Dtype::bf16));
  const std::vector<double> rows = {1.0, 2.0, 3.0};  // three ranks, one element each
  double out = 0;
  fold_block({Dtype::bf16, true, Method::plain, 3}, {0, 1, 2}, rows.data(), 1, 1, &out);
  const double s = mean_scale(Dtype::bf16, 3);
  const double expect = nccl_add(nccl_add(round_to_dtype(1.0 * s, Dtype::bf16), round_to_dtype(2.0 * s, Dtype::bf16),
                                          Dtype::bf16),
                                 round_to_dtype(3.0 * s, Dtype::bf16), Dtype::bf16);
  EXPECT_EQ(out, expect);
  // bf16's 1/3 is 0.333984375: 100 s = 33.3984375 rounds to 33.5, and
  // 33.5 + 33.5 + 33.5 = 100.5 (exact in bf16): the mean of three 100s.
  const std::vector<double> hundreds = {100.0, 100.0, 100.0};
  fold_block({Dtype::bf16, true, Method::plain, 3}, {0, 1, 2}, hundreds.data(), 1, 1, &out);
  EXPECT_EQ(out, 100.5);
}

TEST(AllreduceModel, UpcastRoundsOnceAtTheEnd) {
  // 256 + 1 + 1 in bf16 (8 bits): each 1 is lost (257 is a tie, to even 256); in fp32 258 is kept.
  const std::vector<double> rows = {256.0, 1.0, 1.0};
  double plain = 0, upcast = 0;
  fold_block({Dtype::bf16, false, Method::plain, 3}, {0, 1, 2}, rows.data(), 1, 1, &plain);
  fold_block({Dtype::bf16, false, Method::upcast, 3}, {0, 1, 2}, rows.data(), 1, 1, &upcast);
  EXPECT_EQ(plain, 256.0);
  EXPECT_EQ(upcast, 258.0);
  EXPECT_THROW(fold_block({Dtype::bf16, false, Method::exact, 3}, {0, 1, 2}, rows.data(), 1, 1, &plain),
               std::invalid_argument);
}

TEST(AllreduceModel, UpcastOfFp32SumsInFp64) {
  // 1 + 2^-24 + 2^-24: in fp32 each 2^-24 is a tie lost to even (1); in fp64
  // both are kept and 1 + 2^-23 is an fp32 value. Its mean over 4 ranks (a
  // fourth 0) divides the fp64 sum: (1 + 2^-23) / 4.
  const double tiny = std::ldexp(1.0, -24);
  const std::vector<double> rows = {1.0, tiny, tiny, 0.0};
  double plain = 0, upcast = 0, mean = 0;
  fold_block({Dtype::fp32, false, Method::plain, 4}, {0, 1, 2, 3}, rows.data(), 1, 1, &plain);
  fold_block({Dtype::fp32, false, Method::upcast, 4}, {0, 1, 2, 3}, rows.data(), 1, 1, &upcast);
  fold_block({Dtype::fp32, true, Method::upcast, 4}, {0, 1, 2, 3}, rows.data(), 1, 1, &mean);
  EXPECT_EQ(plain, 1.0);
  EXPECT_EQ(upcast, 1.0 + 2 * tiny);
  EXPECT_EQ(mean, (1.0 + 2 * tiny) / 4);
  EXPECT_EQ(upcast_dtype(Dtype::fp32), Dtype::fp64);
  EXPECT_EQ(upcast_dtype(Dtype::bf16), Dtype::fp32);
}

// Log text in the formats of NCCL 2.28's INFO lines (rings.cc's "Channel
// %02d/%02d :", init.cc's "Trees [%d] %d/%d/%d->%d->%d" and "%d coll
// channels", enqueue.cc's TUNING line), with the transport lines that share
// the "Channel" prefix.
constexpr const char* kFourGpuLog =
    "h100:4242:4242 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
    "h100:4242:4250 [0] NCCL INFO Channel 00/02 : 0 1 2 3\n"
    "h100:4242:4250 [0] NCCL INFO Channel 01/02 : 0 3 2 1\n"
    "h100:4242:4250 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 3/-1/-1->0->-1\n"
    "h100:4242:4251 [1] NCCL INFO Trees [0] 2/-1/-1->1->0 [1] -1/-1/-1->1->2\n"
    "h100:4242:4252 [2] NCCL INFO Trees [0] 3/-1/-1->2->1 [1] 1/-1/-1->2->3\n"
    "h100:4242:4253 [3] NCCL INFO Trees [0] -1/-1/-1->3->2 [1] 2/-1/-1->3->0\n"
    "h100:4242:4250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    "h100:4242:4250 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p "
    "channels per peer\n"
    "h100:4242:4242 [0] NCCL INFO AllReduce: 268435456 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n"
    "h100:4242:4242 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n";

TEST(AllreduceLog, ReadsRingsTreesAndTheCall) {
  std::string why;
  const auto parsed = parse_nccl_topology(kFourGpuLog, 4, &why, 268435456);
  ASSERT_TRUE(parsed) << why;
  EXPECT_EQ(parsed->version, "2.28.9+cuda13.0");
  ASSERT_EQ(parsed->topology.channels.size(), 2u);
  EXPECT_EQ(parsed->topology.channels[0].ring, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parsed->topology.channels[1].ring, (std::vector<int>{0, 3, 2, 1}));
  EXPECT_EQ(parsed->topology.channels[0].chain, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parsed->topology.channels[1].chain, (std::vector<int>{0, 3, 2, 1}));
  EXPECT_EQ(parsed->topology.task_channels, 2);
  EXPECT_EQ(parsed->algorithm, "RING");
  EXPECT_EQ(parsed->protocol, "SIMPLE");
  // Without a size the last call counts: the small LL one on one channel.
  const auto last = parse_nccl_topology(kFourGpuLog, 4);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->topology.task_channels, 1);
  EXPECT_EQ(last->protocol, "LL");
}

TEST(AllreduceLog, RefusesWhatItCannotModel) {
  struct Bad {
    std::string log;
    int ranks;
    const char* why;
  };
  const std::string rings = "NCCL INFO Channel 00/01 : 0 1\nNCCL INFO 1 coll channels, 1 collnet\n";
  const std::vector<Bad> cases = {
      {"NCCL INFO Channel 00/01 : 0 1\n", 2, "coll channels"},
      {"NCCL INFO 1 coll channels, 1 collnet\n", 2, "no ring"},
      {rings, 3, "ring is not the ranks"},
      {rings + "NCCL INFO Trees [0] 1/-1/-1->0->-1\n", 2, "tree is not in NCCL's log"},
      {rings + "NCCL INFO Trees [0] 1/2/-1->0->-1\nNCCL INFO Trees [0] -1/-1/-1->1->0\n", 2, "more than one child"},
  };
  for (const Bad& b : cases) {
    std::string why;
    EXPECT_FALSE(parse_nccl_topology(b.log, b.ranks, &why));
    EXPECT_NE(why.find(b.why), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace ulpscope::allreduce
