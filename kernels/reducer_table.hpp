#pragma once
// Which reducer computes an (op, input format, accumulator): one table for the
// CPU models and the CUDA dispatch alike, so both instantiate the same set.
// f is called with std::type_identity<Reducer>{}; the result says whether the
// combination exists; false only where unsupported() (combinations.hpp) gives
// a reason, which the callers check first.
#include <type_traits>

#include "formats/binary_format.hpp"
#include "kernels/accumulator.hpp"
#include "kernels/op.hpp"
#include "kernels/reducers.hpp"

namespace ulpscope {

template <class Fmt, TermKind K, class F>
bool with_sum_reducer(Accumulator acc, F&& f) {
  constexpr bool squared = K != TermKind::value;
  switch (acc) {
    case Accumulator::naive: f(std::type_identity<SumReducer<NaiveSum<Fmt>, K>>{}); return true;  // fp32: Fp32Sum
    case Accumulator::fp32: f(std::type_identity<SumReducer<Fp32Sum, K>>{}); return true;
    case Accumulator::fp64: f(std::type_identity<SumReducer<Fp64Sum, K>>{}); return true;
    case Accumulator::kahan:
      f(std::type_identity<SumReducer<KahanSumOf<squared && ExactLayout<Fmt, true>::float_products>, K>>{});
      return true;
    case Accumulator::pairwise: f(std::type_identity<SumReducer<PairwiseSum, K>>{}); return true;
    case Accumulator::exact:
      f(std::type_identity<SumReducer<ExactSum<Fmt, squared, K == TermKind::square>, K>>{});
      return true;
    default: return false;
  }
}

template <class Fmt, class F>
bool with_moments_reducer(Accumulator acc, F&& f) {
  switch (acc) {
    case Accumulator::naive: f(std::type_identity<MomentsReducer<NaiveSum<Fmt>>>{}); return true;
    case Accumulator::fp32: f(std::type_identity<MomentsReducer<Fp32Sum>>{}); return true;
    case Accumulator::fp64: f(std::type_identity<MomentsReducer<Fp64Sum>>{}); return true;
    case Accumulator::kahan:
      f(std::type_identity<MomentsReducer<KahanSumOf<ExactLayout<Fmt, true>::float_products>>>{});
      return true;
    case Accumulator::pairwise: f(std::type_identity<MomentsReducer<PairwiseSum>>{}); return true;
    case Accumulator::welford: f(std::type_identity<WelfordReducer>{}); return true;
    case Accumulator::two_pass: f(std::type_identity<TwoPassReducer>{}); return true;
    case Accumulator::exact: f(std::type_identity<ExactMomentsReducer<Fmt>>{}); return true;
    default: return false;
  }
}

// The reductions; for rmsnorm and layernorm, the reducer of their statistics.
template <class Fmt, class F>
bool with_reducer(Op op, Accumulator acc, F&& f) {
  switch (op) {
    case Op::sum:
    case Op::mean: return with_sum_reducer<Fmt, TermKind::value>(acc, f);
    case Op::sumsq:
    case Op::norm2:
    case Op::rms:
    case Op::rmsnorm: return with_sum_reducer<Fmt, TermKind::square>(acc, f);
    case Op::dot: return with_sum_reducer<Fmt, TermKind::product>(acc, f);
    case Op::mean_var:
    case Op::layernorm: return with_moments_reducer<Fmt>(acc, f);
    case Op::logsumexp:
      if (acc == Accumulator::fp32) f(std::type_identity<LogSumExpReducer<float>>{});
      else if (acc == Accumulator::fp64) f(std::type_identity<LogSumExpReducer<double>>{});
      else return false;
      return true;
    case Op::max:
      if (acc != Accumulator::fp32) return false;
      f(std::type_identity<ExtremumReducer<Extremum::max>>{});
      return true;
    case Op::min:
      if (acc != Accumulator::fp32) return false;
      f(std::type_identity<ExtremumReducer<Extremum::min>>{});
      return true;
    case Op::amax:
      if (acc != Accumulator::fp32) return false;
      f(std::type_identity<ExtremumReducer<Extremum::amax>>{});
      return true;
    default: return false;
  }
}

// The reducers whose merge is one addition of a float or double, which the
// atomic shape performs with atomicAdd.
template <class R>
struct is_atomic_capable : std::false_type {};
template <TermKind K>
struct is_atomic_capable<SumReducer<Fp32Sum, K>> : std::true_type {};
template <TermKind K>
struct is_atomic_capable<SumReducer<Fp64Sum, K>> : std::true_type {};

// The format type and storage type of an input Dtype.
template <Dtype D> struct InputFormat;
template <> struct InputFormat<Dtype::fp32> { using type = Fp32Format; };
template <> struct InputFormat<Dtype::fp16> { using type = Fp16Format; };
template <> struct InputFormat<Dtype::bf16> { using type = Bf16Format; };
template <> struct InputFormat<Dtype::fp8_e4m3> { using type = Fp8E4M3Format; };
template <> struct InputFormat<Dtype::fp8_e5m2> { using type = Fp8E5M2Format; };

}  // namespace ulpscope
