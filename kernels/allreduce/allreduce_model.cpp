#include "kernels/allreduce/allreduce_model.hpp"

#include <mpfr.h>

#include <stdexcept>

#include "formats/round_to_dtype.hpp"
#include "formats/small_float.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope::allreduce {
namespace {

// One rounding of an exact double result into T: for +, - and * of two
// values of a format with p <= 24 bits, the double result rounded once more
// is the correctly rounded one (53 >= 2p + 2; Figueroa, "When is double
// rounding innocuous?", 1995).
template <Dtype D>
double round_into(double x) {
  if constexpr (D == Dtype::fp64) return x;
  else if constexpr (D == Dtype::fp32) return static_cast<double>(static_cast<float>(x));
  else if constexpr (D == Dtype::fp8_e4m3 || D == Dtype::fp8_e5m2)
    return typename StorageOf<D>::type(Fp16(x).to_double(), Saturation::satfinite).to_double();
  else return typename StorageOf<D>::type(x).to_double();
}

// fp8's product is __hmul in fp16 converted to fp8 (reduce_kernel.h,
// Apply_PreOp of FuncPreMulSum for fp8): the same double rounding as its sum.
template <Dtype D>
void fold_typed(const FoldArithmetic& a, const std::vector<int>& order, const double* values, std::size_t stride,
                std::size_t count, double* out) {
  const double s = mean_scale(D, a.ranks);
  auto input = [&](int rank, std::size_t i) {
    const double x = values[static_cast<std::size_t>(rank) * stride + i];
    return a.mean ? round_into<D>(x * s) : x;
  };
  for (std::size_t i = 0; i < count; ++i) out[i] = input(order[0], i);
  for (std::size_t k = 1; k < order.size(); ++k)
    for (std::size_t i = 0; i < count; ++i) out[i] = round_into<D>(out[i] + input(order[k], i));
}

// As the runner does it (kernels/allreduce/nccl/allreduce_kernels.cu, widen
// and round_wide): the inputs widened (fp32 to fp64, the narrower formats to
// fp32), summed by NCCL in the wide type in its order, the mean divided by P
// in double (the runner's scaling by 2^-log2(P) for a power of two P rounds
// the same real number), then one rounding to the format.
void fold_upcast(const FoldArithmetic& a, const std::vector<int>& order, const double* values, std::size_t stride,
                 std::size_t count, double* out) {
  const Dtype wide = upcast_dtype(a.dtype);
  const FoldArithmetic sum{wide, false, Method::plain, a.ranks};
  if (wide == Dtype::fp64) fold_typed<Dtype::fp64>(sum, order, values, stride, count, out);
  else fold_typed<Dtype::fp32>(sum, order, values, stride, count, out);
  const Saturation sat = is_fp8(a.dtype) ? Saturation::satfinite : Saturation::nosat;
  for (std::size_t i = 0; i < count; ++i)
    out[i] = round_to_dtype(a.mean ? out[i] / double(a.ranks) : out[i], a.dtype, sat);
}

}  // namespace

Dtype upcast_dtype(Dtype input) { return input == Dtype::fp32 ? Dtype::fp64 : Dtype::fp32; }

double mean_scale(Dtype dtype, int ranks) {
  const float s = static_cast<float>(1.0 / ranks);
  return round_to_dtype(s, dtype, is_fp8(dtype) ? Saturation::satfinite : Saturation::nosat);
}

void fold_block(const FoldArithmetic& a, const std::vector<int>& order, const double* values, std::size_t stride,
                std::size_t count, double* out) {
  if (order.empty()) throw std::invalid_argument("an all-reduce over no ranks");
  if (a.method == Method::exact) throw std::invalid_argument("the exact all-reduce has no fold order");
  if (a.method == Method::upcast) return fold_upcast(a, order, values, stride, count, out);
  switch (a.dtype) {
    case Dtype::fp32: return fold_typed<Dtype::fp32>(a, order, values, stride, count, out);
    case Dtype::fp16: return fold_typed<Dtype::fp16>(a, order, values, stride, count, out);
    case Dtype::bf16: return fold_typed<Dtype::bf16>(a, order, values, stride, count, out);
    case Dtype::fp8_e4m3: return fold_typed<Dtype::fp8_e4m3>(a, order, values, stride, count, out);
    case Dtype::fp8_e5m2: return fold_typed<Dtype::fp8_e5m2>(a, order, values, stride, count, out);
    case Dtype::fp64: break;
  }
  throw std::invalid_argument("NCCL's all-reduce models take fp32, fp16, bf16 and fp8 inputs");
}

double exact_allreduce(const ExactAccumulator& sum, Dtype dtype, bool mean, int ranks) {
  const Saturation sat = is_fp8(dtype) ? Saturation::satfinite : Saturation::nosat;
  ExactReal value = sum.value();
  if (!mean || value.is_nan() || value.is_inf() || value.is_zero()) return round_to_format(value, dtype, sat);
  // sum / P to 2 * 64 bits more than the sum carries: a quotient is a tie of
  // the output format only if it is exact, and then this precision holds it.
  ExactReal q(value.precision() + 128);
  mpfr_div_ui(q.get(), value.get(), static_cast<unsigned long>(ranks), MPFR_RNDN);
  return round_to_format(q, dtype, sat);
}

}  // namespace ulpscope::allreduce
