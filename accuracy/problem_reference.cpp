#include "accuracy/problem_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <stdexcept>

#include "accuracy/error_bound.hpp"
#include "accuracy/metrics.hpp"
#include "reference/exact_prefix.hpp"
#include "reference/exact_sum.hpp"
#include "reference/on_threads.hpp"
#include "reference/usable_cores.hpp"

namespace ulpscope {
namespace {

Along along_of(Axis a) { return a == Axis::outer ? Along::outer : Along::inner; }

std::vector<double> widened(const TypedArray* a) {
  return a ? a->to_doubles() : std::vector<double>{};
}

// The reference outputs of one reduction (one line of the problem).
void append_outputs(Op op, const TypedArray& x, const TypedArray* y, std::span<const double> gamma,
                    std::span<const double> beta, double eps, OutputFormat out, std::vector<Reference>& into) {
  switch (op) {
    case Op::sum: into.push_back(sum_reference(x, out)); return;
    case Op::mean: into.push_back(mean_reference(x, out)); return;
    case Op::dot:
      if (!y) throw std::invalid_argument("dot needs a second vector");
      into.push_back(dot_reference(x, *y, out));
      return;
    case Op::sumsq: into.push_back(sumsq_reference(x, out)); return;
    case Op::norm2: into.push_back(norm2_reference(x, out)); return;
    case Op::rms: into.push_back(rms_reference(x, eps, out)); return;
    case Op::mean_var: {
      MeanVarReference mv = mean_var_reference(x, out);
      into.push_back(std::move(mv.mean));
      into.push_back(std::move(mv.variance));
      return;
    }
    case Op::max: into.push_back(max_reference(x, out)); return;
    case Op::min: into.push_back(min_reference(x, out)); return;
    case Op::amax: into.push_back(amax_reference(x, out)); return;
    case Op::logsumexp: into.push_back(logsumexp_reference(x, out)); return;
    case Op::rmsnorm:
      for (auto& r : rmsnorm_reference(x, gamma, eps, out)) into.push_back(std::move(r));
      return;
    case Op::layernorm:
      for (auto& r : layernorm_reference(x, gamma, beta, eps, out)) into.push_back(std::move(r));
      return;
    case Op::cumsum:
      for (auto& r : cumsum_reference(x, out)) into.push_back(std::move(r));
      return;
  }
}

}  // namespace

ProblemReference compute_problem_reference(const ReductionProblem& p, Dtype out_dtype, Saturation sat) {
  if (!p.x) throw std::invalid_argument("no input");
  ProblemReference r;
  r.op_ = p.op;
  r.axis_ = p.axis;
  r.cols_ = p.cols;
  r.length_ = p.length();
  r.eps_ = p.eps;
  r.per_reduction_ = is_elementwise_output(p.op) || is_scan(p.op) ? int(p.length()) : components(p.op);
  const OutputFormat out{out_dtype, sat};
  const std::vector<double> gamma = widened(p.gamma), beta = widened(p.beta);
  const bool whole = p.axis == Axis::all;
  const std::int64_t lines = whole ? 1 : line_count(p.rows, p.cols, along_of(p.axis));
  // The lines (rows or columns) are independent problems: with many of them
  // (the norms' rows, row-wise reductions of a large input) they are shared
  // out over the cores, each part in its own vectors, joined in order.
  struct Part {
    std::vector<Reference> outputs;
    std::vector<ExactReal> abs_sums, sums, sumsq;
  };
  auto line_reference = [&](std::int64_t j, Part& part) {
    const TypedArray x = whole ? *p.x : line_of(*p.x, p.rows, p.cols, along_of(p.axis), j);
    std::optional<TypedArray> y;
    if (p.y) y = whole ? *p.y : line_of(*p.y, p.rows, p.cols, along_of(p.axis), j);
    append_outputs(p.op, x, y ? &*y : nullptr, gamma, beta, p.eps, out, part.outputs);
    // The ingredients of condition numbers and bounds.
    if (p.op == Op::dot) {
      part.abs_sums.push_back(exact_abs_dot(x, *y));
      part.sums.push_back(exact_dot(x, *y));
    } else if (p.op == Op::sumsq || p.op == Op::norm2 || p.op == Op::rms || p.op == Op::rmsnorm) {
      ExactReal q = exact_sumsq(x);
      part.abs_sums.push_back(q);
      part.sums.push_back(std::move(q));
    } else {
      part.abs_sums.push_back(exact_abs_sum(x));
      part.sums.push_back(exact_sum(x));
    }
    if (p.op == Op::mean_var || p.op == Op::layernorm) part.sumsq.push_back(exact_sumsq(x));
  };
  const std::int64_t elements = p.rows * p.cols;
  const unsigned threads = lines >= 64 && elements >= (std::int64_t(1) << 16)
                               ? std::min(usable_cores(), 64u)
                               : 1u;
  std::vector<Part> parts(threads);
  on_threads(threads, [&](unsigned t) {
    for (std::int64_t j = lines * t / threads; j < lines * (t + 1) / threads; ++j) line_reference(j, parts[t]);
  });
  for (Part& part : parts) {
    auto join = [](auto& into, auto& from) { std::move(from.begin(), from.end(), std::back_inserter(into)); };
    join(r.outputs, part.outputs);
    join(r.abs_sums_, part.abs_sums);
    join(r.sums_, part.sums);
    join(r.sumsq_, part.sumsq);
  }
  return r;
}

std::string ProblemReference::component_name(std::size_t i) const {
  const std::size_t line = i / std::size_t(per_reduction_), within = i % std::size_t(per_reduction_);
  const char* axis_word = axis_ == Axis::outer ? "col" : "row";
  std::string name;
  if (axis_ != Axis::all || is_elementwise_output(op_)) name = fmt::format("{} {}", axis_word, line);
  if (op_ == Op::mean_var) {
    const char* c = within == 0 ? "mean" : "variance";
    name = name.empty() ? c : name + ", " + c;
  } else if (is_elementwise_output(op_) || (is_scan(op_) && axis_ != Axis::all)) {
    name += fmt::format(", col {}", within);
  } else if (is_scan(op_)) {
    name = fmt::format("index {}", within);
  }
  return name;
}

std::optional<RowStatistics> ProblemReference::row_statistics(std::size_t line) const {
  if (!is_elementwise_output(op_) || line >= sums_.size() || length_ <= 0) return std::nullopt;
  const bool centered = op_ == Op::layernorm;
  if (sums_[line].is_nan() || sums_[line].is_inf() || (centered && (sumsq_[line].is_nan() || sumsq_[line].is_inf())))
    return std::nullopt;
  constexpr mpfr_prec_t bits = kRowStatisticsBits;
  const long n = long(length_);
  RowStatistics s{std::nullopt, ExactReal(bits)};
  ExactReal second(bits), eps(bits);  // the mean square (rmsnorm) or the variance (layernorm)
  mpfr_set_d(eps.get(), eps_, MPFR_RNDN);  // exact: a double
  if (centered) {
    ExactReal mean(bits);
    mpfr_div_si(mean.get(), sums_[line].get(), n, MPFR_RNDN);
    // nQ - S^2 exactly (so that a constant row has variance 0): nQ with 64
    // bits more than Q, S^2 with twice S's, the difference at 128 more.
    ExactReal nq(sumsq_[line].precision() + 64), square(2 * sums_[line].precision() + 2);
    mpfr_mul_si(nq.get(), sumsq_[line].get(), n, MPFR_RNDN);
    mpfr_sqr(square.get(), sums_[line].get(), MPFR_RNDN);
    ExactReal numerator(std::max(nq.precision(), square.precision()) + 128);
    mpfr_sub(numerator.get(), nq.get(), square.get(), MPFR_RNDN);
    mpfr_div_si(second.get(), numerator.get(), n, MPFR_RNDN);
    mpfr_div_si(second.get(), second.get(), n, MPFR_RNDN);
    s.mean = std::move(mean);
  } else {
    mpfr_div_si(second.get(), sums_[line].get(), n, MPFR_RNDN);
  }
  mpfr_add(second.get(), second.get(), eps.get(), MPFR_RNDN);
  mpfr_rec_sqrt(s.rstd.get(), second.get(), MPFR_RNDN);
  return s;
}

std::optional<double> ProblemReference::condition(std::size_t i) const {
  const std::size_t line = i / std::size_t(per_reduction_);
  if (line >= sums_.size()) return std::nullopt;
  switch (op_) {
    case Op::max: case Op::min: case Op::amax: case Op::logsumexp: case Op::rmsnorm: case Op::layernorm:
    case Op::cumsum:  // each prefix has its own; the line's would mislead
      return std::nullopt;
    case Op::mean_var:
      if (i % 2 == 1) return condition_variance(sums_[line], sumsq_[line], length_);
      return condition_sum(abs_sums_[line], sums_[line]);
    default:
      return condition_sum(abs_sums_[line], sums_[line]);
  }
}

}  // namespace ulpscope

namespace ulpscope {

std::optional<double> ProblemReference::bound_ratio(const KernelSpec& spec, const ReductionProblem& p,
                                                    std::int64_t depth, double value, std::size_t i) const {
  const std::size_t line = i / std::size_t(per_reduction_);
  if (line >= sums_.size() || i >= outputs.size()) return std::nullopt;
  BoundInputs b;
  b.op = spec.op;
  b.acc = spec.acc;
  b.in = spec.in;
  b.out = spec.out;
  b.n = p.length();
  b.depth = depth;
  b.sum_abs = abs_sums_[line].to_double();
  b.sum = sums_[line].to_double();
  if (spec.op == Op::mean_var) {
    b.component = int(i % 2);
    const auto s = sum_squared_deviations(sums_[line], sumsq_[line], p.length());
    if (!s) return std::nullopt;
    b.sum_sq_dev = *s;
    b.mean = p.length() ? b.sum / double(p.length()) : 0.0;
  }
  return ulpscope::bound_ratio(value, outputs[i].exact, b);
}

}  // namespace ulpscope
