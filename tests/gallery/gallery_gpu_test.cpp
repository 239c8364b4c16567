// The seed gallery's kernels on the GPU against their CPU models, bit for bit
// for every deterministic kernel (docs/spec.md, "Kernel shapes"), and the seeds'
// correctness traps: sizes that are not powers of two nor multiples of the
// block, a 32-thread block with the unrolled last warp, a partially filled
// last warp under the shuffles, the output reset between repeated atomic runs.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/gpu_backend.hpp"
#include "kernels/model.hpp"
#include "gallery_test_support.hpp"
#include "gpu_test_backend.hpp"

namespace ulpscope {
namespace {

using namespace test;

bool atomic(Shape s) { return !is_deterministic_order(s); }

// Every deterministic kernel's bits equal its model's; the atomic ones agree
// on max (exact in any order) and stay within their order's error bound
// (Higham 2002, eq. 4.4) for sums.
int compare(GpuBackend* g, Shape shape, std::int64_t n, const std::vector<LaunchConfig>& extra) {
  int compared = 0;
  for (Dtype in : kGalleryFormats) {
    const TypedArray x = mixed(in, n, 3 + std::uint64_t(n));
    const ReductionProblem p = whole(x);
    g->upload(p);
    double abs_sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) abs_sum += std::fabs(x.at(i));
    mpfr_t exact;
    test::exact_sum(exact, x, nullptr, false);
    for (const Variant& v : kVariants) {
      const KernelSpec k{v.op, in, v.op == Op::sum && v.acc == Accumulator::fp32 ? Dtype::fp64 : in, v.acc, shape};
      std::vector<LaunchConfig> configs = launch_configs(k, n);
      configs.insert(configs.end(), extra.begin(), extra.end());
      for (const LaunchConfig& cfg : configs) {
        const double got = g->run(k, cfg).values.at(0);
        ReductionProblem q = p;
        q.op = k.op;
        const double model = run_model(k, q, cfg, 0).values.at(0);
        const std::string what = std::string(to_string(shape)) + " " + std::string(to_string(v.op)) + " " +
                                 std::string(to_string(in)) + " acc " + std::string(to_string(v.acc)) + " n " +
                                 std::to_string(n) + " config " + std::to_string(cfg.blocks) + "x" +
                                 std::to_string(cfg.threads);
        if (!atomic(shape) || v.op == Op::max) {
          EXPECT_TRUE(same_bits(got, model)) << what << ": GPU " << got << ", model " << model;
        } else if (v.acc == Accumulator::fp32) {
          const double u = 0x1p-24;
          const double depth = double(addition_depth(k, Axis::all, n, cfg));
          mpfr_t err;
          mpfr_init2(err, 4096);
          mpfr_sub_d(err, exact, got, MPFR_RNDN);
          const double e = std::fabs(mpfr_get_d(err, MPFR_RNDU));
          mpfr_clear(err);
          EXPECT_LE(e, depth * u / (1 - depth * u) * abs_sum * (1 + 1e-12)) << what;
        }
        ++compared;
      }
    }
    mpfr_clear(exact);
  }
  return compared;
}

class GalleryGpu : public testing::TestWithParam<Shape> {};

TEST_P(GalleryGpu, MatchesModelOnUglySizes) {
  REQUIRE_GPU();
  int compared = 0;
  for (std::int64_t n : {1, 31, 33, 1000, 4097, 65539}) compared += compare(g, GetParam(), n, {LaunchConfig{5, 32}});
  compared += compare(g, GetParam(), (1 << 20) + 3, {});
  EXPECT_GT(compared, 50);
}

// n = 0: no launch reduces anything; the result is the empty sum (+0) or max (-inf).
TEST_P(GalleryGpu, EmptyInput) {
  REQUIRE_GPU();
  const TypedArray x(Dtype::fp32, 0);
  g->upload(whole(x));
  const KernelSpec sum{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, GetParam()};
  const KernelSpec max{Op::max, Dtype::fp32, Dtype::fp32, Accumulator::fp32, GetParam()};
  const double s = g->run(sum, LaunchConfig{}).values.at(0);
  EXPECT_EQ(s, 0.0);
  EXPECT_FALSE(std::signbit(s));
  EXPECT_EQ(g->run(max, LaunchConfig{}).values.at(0), -INFINITY);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GalleryGpu, testing::ValuesIn(kGallery),
                         [](const testing::TestParamInfo<Shape>& i) { return std::string(to_string(i.param)); });

// Seed 000, 7.9: "v4 assumes BLOCK >= 64, BLOCK = 32 crashes". With 32
// threads the unrolled kernels still give v3's bits (their model) and read
// no slot out of bounds (run this binary under compute-sanitizer memcheck).
TEST(GalleryGpuTraps, ThirtyTwoThreadBlocksWithTheUnrolledWarp) {
  REQUIRE_GPU();
  const TypedArray x = mixed(Dtype::fp16, 4097, 17);
  g->upload(whole(x));
  const LaunchConfig one_warp{1, 32};
  const KernelSpec v3{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::naive, Shape::v3_first_add};
  const double want = run_model(v3, whole(x, v3.op), one_warp, 0).values.at(0);
  for (Shape s : {Shape::v3_first_add, Shape::v4_unroll_last_warp, Shape::v5_complete_unroll}) {
    const KernelSpec k{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::naive, s};
    EXPECT_TRUE(same_bits(g->run(k, one_warp).values.at(0), want)) << to_string(s);
  }
}

// Seed 000, 7.9: a shuffle mask that is not all lanes. Every lane of a
// partially filled last warp takes part with the identity, so the full mask
// is right: 40 elements in blocks of 64 threads leave warp 1 with 8 real lanes
// (v5_shuffle loads pairs: 40 < 64 leaves lanes 8.. of warp 0 without a pair).
TEST(GalleryGpuTraps, PartiallyFilledLastWarp) {
  REQUIRE_GPU();
  for (std::int64_t n : {8, 40, 72, 100}) {
    const TypedArray x = mixed(Dtype::fp32, n, 23);
    g->upload(whole(x));
    for (Shape s : {Shape::v5_shuffle, Shape::cg_reduce, Shape::two_stage, Shape::cluster})
      for (Op op : {Op::sum, Op::max}) {
        const KernelSpec k{op, Dtype::fp32, Dtype::fp32, Accumulator::fp32, s};
        const LaunchConfig cfg{1, 64};
        EXPECT_TRUE(same_bits(g->run(k, cfg).values.at(0), run_model(k, whole(x, k.op), cfg, 0).values.at(0)))
            << to_string(s) << " n " << n;
      }
  }
}

// Seed 002, 9.3: "reset the result before every reduction". Small integers
// sum exactly in any order, so each repeated run must give the sum once.
TEST(GalleryGpuTraps, AtomicOutputIsResetBetweenRuns) {
  REQUIRE_GPU();
  for (Dtype in : kGalleryFormats) {
    std::uint64_t s = 5;
    const TypedArray x = test::make_array(in, 1000, [&](auto) { return double(int(test::mix(s) % 5) - 1); });
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sum += x.at(i);
    g->upload(whole(x));
    for (Shape shape : {Shape::atomic_element, Shape::atomic_shared})
      for (int run = 0; run < 3; ++run) {
        const KernelSpec k{Op::sum, in, Dtype::fp32, Accumulator::fp32, shape};
        EXPECT_EQ(g->run(k, LaunchConfig{}).values.at(0), sum) << to_string(shape) << " run " << run;
      }
  }
}

TEST(GalleryGpuTraps, RefusesWhatItCannotRun) {
  REQUIRE_GPU();
  const TypedArray x = mixed(Dtype::fp32, 100, 1);
  g->upload(whole(x));
  const KernelSpec k{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, Shape::v5_complete_unroll};
  EXPECT_THROW(g->run(k, LaunchConfig{2, 96}), GpuError);
  EXPECT_THROW(g->run(k, LaunchConfig{2, 1024}), GpuError);
  EXPECT_FALSE(GpuBackend::shape_unavailable(Shape::cluster).has_value());
}

}  // namespace
}  // namespace ulpscope
