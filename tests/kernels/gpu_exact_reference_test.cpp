// The exact GPU kernels against the references (docs/spec.md, "What `exact`
// guarantees"): for sum, mean, dot, sumsq, norm2 and mean_var, every output of
// every launch configuration is the correctly rounded value that
// compute_problem_reference certifies with MPFR, on every distribution of the
// suite (the adversarial and special ones included), every input format, the
// ugly sizes, rows and columns, and one input of 2^24 + 3 elements. The
// references stay the authority: a GPU result is never taken as one here.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "accuracy/distribution.hpp"
#include "accuracy/problem_reference.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/model.hpp"
#include "gpu_test_backend.hpp"
#include "model_test_support.hpp"

namespace ulpscope {
// Named, not anonymous: the unity build puts several test files in one unit.
namespace gpu_exact_reference_test {

using test::same_bits;

// The ops whose exact kernels are correctly rounded in every case (rms only
// when eps lies on the integer's grid, so it is left out).
constexpr Op kCorrectlyRoundedOps[] = {Op::sum, Op::mean, Op::dot, Op::sumsq, Op::norm2, Op::mean_var};

struct Layout {
  Axis axis;
  std::int64_t rows, cols;
};

// Checks every exact kernel on one generated input against its reference;
// returns how many (op, configuration) pairs were compared.
int check_input(GpuBackend* g, const DistributionSpec& dist, Dtype in, const Layout& layout, std::uint64_t seed) {
  const std::int64_t n = layout.rows * layout.cols;
  const GeneratedInput gen = generate(dist, in, n, seed, /*with_y=*/true);
  ReductionProblem p;
  p.axis = layout.axis;
  p.rows = layout.rows;
  p.cols = layout.cols;
  p.x = &gen.x;
  p.y = &*gen.y;
  g->upload(p);
  int compared = 0;
  for (Op op : kCorrectlyRoundedOps) {
    KernelSpec k;
    k.op = op;
    k.in = in;
    k.out = default_out_dtype(in);
    k.acc = Accumulator::exact;
    k.shape = Shape::tree;
    if (unsupported(k, p.axis) || GpuBackend::unavailable(k, p.axis)) continue;
    p.op = op;
    const ProblemReference ref = compute_problem_reference(p, k.out, Saturation::nosat);
    for (const LaunchConfig& c : launch_configs(k, p.axis == Axis::all ? n : p.length())) {
      SCOPED_TRACE(dist.name() + " " + std::string(to_string(in)) + " " + std::string(to_string(op)) + " " +
                   std::string(to_string(p.axis)) + " rows=" + std::to_string(p.rows) +
                   " cols=" + std::to_string(p.cols) + " blocks=" + std::to_string(c.blocks) +
                   " threads=" + std::to_string(c.threads));
      const ReductionResult got = g->run(k, c);
      EXPECT_EQ(got.values.size(), ref.outputs.size());
      if (got.values.size() != ref.outputs.size()) return compared;
      for (std::size_t i = 0; i < got.values.size(); ++i)
        EXPECT_TRUE(same_bits(got.values[i], ref.outputs[i].rounded))
            << std::hexfloat << "gpu " << got.values[i] << ", correctly rounded " << ref.outputs[i].rounded
            << " (exact " << decimal_of(ref.outputs[i]) << ") at " << ref.component_name(i);
      ++compared;
      if (::testing::Test::HasFailure()) return compared;
    }
  }
  return compared;
}

std::vector<DistributionSpec> every_distribution() {
  std::vector<DistributionSpec> all;
  for (const DistributionSummary& s : kDistributionSummaries) all.push_back(DistributionSpec{s.d, std::nullopt});
  // The harder condition number beside the default one.
  all.push_back(DistributionSpec{Distribution::ill_conditioned, 1e30});
  return all;
}

class GpuExactReference : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(GpuExactReference, WholeArrayIsCorrectlyRounded) {
  REQUIRE_GPU();
  int compared = 0;
  for (const DistributionSpec& d : every_distribution())
    for (Dtype in : kInputDtypes) {
      compared += check_input(g, d, in, {Axis::all, 1, GetParam()}, 7 + std::uint64_t(GetParam()));
      if (HasFailure()) return;
    }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(UglySizes, GpuExactReference, ::testing::Values(0, 1, 31, 33, 4097, 1000003));

TEST(GpuExactReferenceRows, RowsAndColumnsAreCorrectlyRounded) {
  REQUIRE_GPU();
  int compared = 0;
  for (const DistributionSpec& d : every_distribution())
    for (Dtype in : kInputDtypes)
      for (const Layout& l : {Layout{Axis::inner, 33, 1000}, Layout{Axis::outer, 1000, 33}}) {
        compared += check_input(g, d, in, l, 11);
        if (HasFailure()) return;
      }
  EXPECT_GT(compared, 0);
}

TEST(GpuExactReferenceLarge, TwoTo24PlusThreeIsCorrectlyRounded) {
  REQUIRE_GPU();
  int compared = 0;
  for (const DistributionSpec& d : {DistributionSpec{Distribution::ill_conditioned, 1e30},
                                    DistributionSpec{Distribution::llm_activations, std::nullopt},
                                    DistributionSpec{Distribution::log_uniform, std::nullopt}})
    for (Dtype in : kInputDtypes) {
      compared += check_input(g, d, in, {Axis::all, 1, (std::int64_t{1} << 24) + 3}, 5);
      if (HasFailure()) return;
    }
  EXPECT_GT(compared, 0);
}

}  // namespace gpu_exact_reference_test
}  // namespace ulpscope
