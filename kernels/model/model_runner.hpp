#pragma once
// Runs one reducer over a problem in a shape's order (host). Instantiated once
// per input format, in model_<format>.cpp.
#include <algorithm>
#include <optional>
#include <utility>
#include <variant>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/typed_array.hpp"
#include "kernels/counter_rng.hpp"
#include "kernels/model.hpp"
#include "kernels/model/tree_model.hpp"
#include "kernels/reducer_table.hpp"

namespace ulpscope::model {

// The same without a copy where none is needed: fp32 arrays are read
// in place, as is a copy the caller widened once (ReductionProblem::x_float);
// otherwise the narrower formats are widened into a copy.
class FloatValues {
 public:
  explicit FloatValues(const TypedArray& a, const std::vector<float>* widened = nullptr) {
    if (const auto* f = std::get_if<std::vector<float>>(&a.data())) {
      data_ = f->data();
      return;
    }
    if (widened != nullptr && widened->size() == a.size()) {
      data_ = widened->data();
      return;
    }
    copy_ = a.to_floats();
    data_ = copy_.data();
  }
  const float* data() const { return data_; }
  float operator[](std::size_t i) const { return data_[i]; }

 private:
  std::vector<float> copy_;
  const float* data_ = nullptr;
};

struct Job {
  const KernelSpec& spec;
  const LaunchConfig& cfg;
  std::uint64_t seed;
  int vec;
  Axis axis;
};

template <class R>
typename R::Partial in_order(const Job& job, const float* x, const float* y, std::int64_t len,
                             std::int64_t stride, const typename R::Params& pr) {
  switch (job.spec.shape) {
    case Shape::serial: return serial<R>(x, y, len, stride, pr);
    case Shape::tree:
      if (job.axis == Axis::all) return tree_whole<R>(x, y, len, job.vec, job.cfg, pr);
      if (job.axis == Axis::inner) {
        std::vector<typename R::Partial> lanes;
        return tree_block<R>(x, y, len, len % job.vec == 0 ? job.vec : 1, job.cfg.threads, pr, lanes);
      }
      return serial<R>(x, y, len, stride, pr);
    case Shape::atomic:
      if constexpr (is_atomic_capable<R>::value) {
        auto blocks = tree_block_partials<R>(x, y, len, job.vec, job.cfg, pr);
        std::vector<std::size_t> order(blocks.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::uint64_t s = job.seed;
        for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[splitmix64(s) % i]);  // the arrival order of atomic partials
        typename R::Partial acc{};  // the output starts as +0 (cudaMemset)
        for (std::size_t i : order) R::merge(acc, blocks[i]);
        return acc;
      }
      [[fallthrough]];
    default: throw std::invalid_argument("no CPU model for this shape and accumulator");
  }
}

template <class R>
Finished reduce_one(const Job& job, const ReductionProblem& pb, const float* x, const float* y,
                    std::int64_t len, std::int64_t stride) {
  const FinishArgs args{statistics_op(job.spec.op), job.spec.out, job.spec.sat, len, pb.eps};
  typename R::Params pr{};
  if constexpr (R::passes == 2) {
    using F = typename R::First;
    FinishArgs first = args;
    first.op = R::first_op;
    pr = R::params(F::finish(in_order<F>(job, x, y, len, stride, {}), first, {}));
  }
  return R::finish(in_order<R>(job, x, y, len, stride, pr), args, pr);
}

template <class Fmt>
ReductionResult run_model_in(const KernelSpec& spec, const ReductionProblem& pb, const LaunchConfig& cfg,
                             std::uint64_t seed) {
  const FloatValues xs(*pb.x, pb.x_float);
  const std::optional<FloatValues> ys =
      pb.y ? std::optional<FloatValues>(std::in_place, *pb.y, pb.y_float) : std::nullopt;
  const float* x = xs.data();
  const float* y = ys ? ys->data() : nullptr;
  const Job job{spec, cfg, seed, vector_width(spec.in), pb.axis};
  const int comps = components(spec.op);
  ReductionResult res;
  const bool ok = with_reducer<Fmt>(spec.op, spec.acc, [&](auto tag) {
    using R = typename decltype(tag)::type;
    auto put = [&](const Finished& f) {
      for (int k = 0; k < comps; ++k) {
        res.values.push_back(f.value[k]);
        res.unrounded.push_back(f.unrounded[k]);
      }
    };
    if (is_elementwise_output(spec.op)) {
      // rmsnorm, layernorm: the row's statistics in the inner order, then
      // every element (elementwise: no order).
      if constexpr (!gathers_norm_statistics<R>::value) {
        throw std::logic_error("model: the reducer table gave a normalisation a reducer without its statistics");
      } else {
        const TypedArray ones(std::vector<float>(std::size_t(pb.cols), 1.0f));
        const TypedArray zeros(std::vector<float>(std::size_t(pb.cols), 0.0f));
        const FloatValues gs(pb.gamma ? *pb.gamma : ones);
        const FloatValues bs(pb.beta ? *pb.beta : zeros);
        for (std::int64_t r = 0; r < pb.rows; ++r) {
          const float* row = x + r * pb.cols;
          const Finished stats = reduce_one<R>(job, pb, row, nullptr, pb.cols, 1);
          const auto norm = RowNorm<typename R::value_t>::from(spec.op, stats, pb.cols, pb.eps);
          res.statistics.push_back(double(norm.mean));
          res.statistics.push_back(double(norm.scale));
          for (std::int64_t j = 0; j < pb.cols; ++j) {
            const double v = double(norm.apply(row[j], gs[j], bs[j]));
            res.values.push_back(round_to_out(v, spec.out, spec.sat));
            res.unrounded.push_back(v);
          }
        }
      }
    } else if (pb.axis == Axis::all) {
      put(reduce_one<R>(job, pb, x, y, pb.rows * pb.cols, 1));
    } else if (pb.axis == Axis::inner) {
      for (std::int64_t r = 0; r < pb.rows; ++r)
        put(reduce_one<R>(job, pb, x + r * pb.cols, y ? y + r * pb.cols : nullptr, pb.cols, 1));
    } else {
      for (std::int64_t c = 0; c < pb.cols; ++c)
        put(reduce_one<R>(job, pb, x + c, y ? y + c : nullptr, pb.rows, pb.cols));
    }
  });
  if (!ok) throw std::invalid_argument("no reducer for this op and accumulator");
  return res;
}

ReductionResult run_model_fp32(const KernelSpec&, const ReductionProblem&, const LaunchConfig&, std::uint64_t);
ReductionResult run_model_fp16(const KernelSpec&, const ReductionProblem&, const LaunchConfig&, std::uint64_t);
ReductionResult run_model_bf16(const KernelSpec&, const ReductionProblem&, const LaunchConfig&, std::uint64_t);
ReductionResult run_model_fp8_e4m3(const KernelSpec&, const ReductionProblem&, const LaunchConfig&, std::uint64_t);
ReductionResult run_model_fp8_e5m2(const KernelSpec&, const ReductionProblem&, const LaunchConfig&, std::uint64_t);

}  // namespace ulpscope::model
