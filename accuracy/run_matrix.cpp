#include "accuracy/run_matrix.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <variant>

#include "accuracy/memory_budget.hpp"
#include "accuracy/ideal_kernel.hpp"
#include "accuracy/metrics.hpp"
#include "accuracy/work_pool.hpp"
#include "accuracy/problem_reference.hpp"
#include "formats/hex_float.hpp"
#include "formats/round_to_dtype.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/index_permutation.hpp"
#include "kernels/model.hpp"

namespace ulpscope {

std::string MatrixSettings::to_json() const {
  auto names = [](const auto& values) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& v : values) a.push_back(std::string(to_string(v)));
    return a;
  };
  nlohmann::json dists = nlohmann::json::array();
  for (const auto& d : distributions) dists.push_back(d.name());
  nlohmann::json axes = nlohmann::json::array();
  for (Axis a : this->axes) axes.push_back(std::string(to_string(a)));
  const nlohmann::json j = {
      {"ops", names(ops)},
      {"dtypes", names(dtypes)},
      {"accumulators", names(accumulators)},
      {"shapes", names(shapes)},
      {"distributions", dists},
      {"sizes", sizes},
      {"seeds", seeds},
      {"out_dtype", out_dtype ? nlohmann::json(std::string(to_string(*out_dtype))) : nlohmann::json(nullptr)},
      {"saturation", std::string(to_string(saturation))},
      {"row_cols", row_cols},
      {"axes", axes},
      {"runs", runs},
      {"permutations", permutations},
      {"eps", eps},
      {"throughput_n", throughput_n},
  };
  // Written only when there are some, so that reports of the built-in
  // matrix keep their settings (and stay comparable with older baselines).
  if (!user_kernels.empty()) {
    nlohmann::json with = j;
    with["user_kernels"] = user_kernels;
    if (!nondeterministic_kernels.empty()) with["nondeterministic_kernels"] = nondeterministic_kernels;
    return with.dump();
  }
  return j.dump();
}

MatrixSettings settings_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::invalid_argument("settings: not a JSON object");
  // Names are echoed in messages, which must stay one line (docs/bad-inputs.md).
  auto name = [](const char* key, const nlohmann::json& v) {
    std::string text = v.get<std::string>();
    if (std::any_of(text.begin(), text.end(), [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; }))
      throw std::invalid_argument(fmt::format("settings: {} {} holds a control character", key, v.dump()));
    return text;
  };
  auto list = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_array()) throw std::invalid_argument(fmt::format("settings: no list '{}'", key));
    std::vector<std::string> out;
    for (const auto& v : j[key]) out.push_back(name(key, v));
    return out;
  };
  auto enums = [&](const char* key, const auto& table) {
    std::vector<std::decay_t<decltype(table[0].first)>> out;
    for (const auto& name : list(key)) {
      const auto e = parse_in(table, name);
      if (!e) throw std::invalid_argument(fmt::format("settings: unknown {} '{}'", key, name));
      out.push_back(*e);
    }
    return out;
  };
  // Whole numbers only, and no narrowing that would hide an absurd value
  // (docs/bad-inputs.md); the ranges are settings_problem's.
  auto integer = [&](const char* key) {
    const nlohmann::json& v = j.at(key);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
      throw std::invalid_argument(fmt::format("settings: {} {} is not a whole number in range", key, v.dump()));
    return v.get<std::int64_t>();
  };
  auto small = [&](const char* key) {
    const std::int64_t v = integer(key);
    if (v < INT32_MIN || v > INT32_MAX) throw std::invalid_argument(fmt::format("settings: {} {} is out of range", key, v));
    return int(v);
  };
  MatrixSettings s;
  try {
    s.ops = enums("ops", kOpNames);
    s.accumulators = enums("accumulators", kAccumulatorNames);
    for (const auto& name : list("shapes")) {
      const auto sh = parse_shape(name);
      if (!sh) throw std::invalid_argument(fmt::format("settings: unknown shapes '{}'", name));
      s.shapes.push_back(*sh);
    }
    s.axes = enums("axes", kAxisNames);
    for (const auto& name : list("dtypes")) {
      const auto d = parse_dtype(name);
      if (!d || *d == Dtype::fp64) throw std::invalid_argument("settings: unknown dtype '" + name + "'");
      s.dtypes.push_back(*d);
    }
    for (const auto& name : list("distributions")) {
      std::string why;
      const auto d = parse_distribution(name, &why);
      if (!d) throw std::invalid_argument("settings: " + why);
      s.distributions.push_back(*d);
    }
    for (const auto& n : j.at("sizes")) {
      if (!n.is_number_integer()) throw std::invalid_argument("settings: size " + n.dump() + " is not a whole number");
      s.sizes.push_back(n.get<std::int64_t>());
    }
    // Not get<uint64_t>: from a float such as 1e300 that conversion is undefined.
    for (const auto& seed : j.at("seeds")) {
      if (!seed.is_number_unsigned())
        throw std::invalid_argument("settings: seed " + seed.dump() + " is not a whole number >= 0");
      s.seeds.push_back(seed.get<std::uint64_t>());
    }
    if (!j.at("out_dtype").is_null()) {
      s.out_dtype = parse_dtype(j.at("out_dtype").get<std::string>());
      if (!s.out_dtype) throw std::invalid_argument("settings: unknown out_dtype " + j.at("out_dtype").dump());
    }
    const std::string saturation = name("saturation", j.at("saturation"));
    if (saturation != "nosat" && saturation != "satfinite")
      throw std::invalid_argument("settings: unknown saturation '" + saturation + "'");
    s.saturation = saturation == "nosat" ? Saturation::nosat : Saturation::satfinite;
    s.row_cols = integer("row_cols");
    s.runs = small("runs");
    s.permutations = small("permutations");
    s.eps = j.at("eps").get<double>();
    if (j.contains("throughput_n")) s.throughput_n = integer("throughput_n");
    if (j.contains("user_kernels")) s.user_kernels = list("user_kernels");
    if (j.contains("nondeterministic_kernels")) s.nondeterministic_kernels = list("nondeterministic_kernels");
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("settings: ") + e.what());
  }
  return s;
}

MatrixSettings default_matrix(bool full) {
  MatrixSettings s;
  s.ops = {Op::sum,  Op::mean, Op::dot,       Op::sumsq,   Op::norm2,    Op::rms,
           Op::mean_var, Op::max, Op::amax, Op::logsumexp, Op::rmsnorm, Op::layernorm};
  if (full) s.ops = {Op::sum, Op::mean, Op::dot, Op::sumsq, Op::norm2, Op::rms, Op::mean_var, Op::max,
                     Op::min, Op::amax, Op::logsumexp, Op::rmsnorm, Op::layernorm};
  s.dtypes = {Dtype::fp32};
  for (const auto& [a, name] : kAccumulatorNames) s.accumulators.push_back(a);
  for (const auto& [sh, name] : kShapeNames) s.shapes.push_back(sh);
  for (const auto& [d, name] : kDistributionNames) {
    if (d == Distribution::ill_conditioned) {
      for (double c : full ? std::vector<double>{1e3, 1e8, 1e16, 1e30} : std::vector<double>{1e8, 1e16})
        s.distributions.push_back({d, c});
    } else {
      s.distributions.push_back({d, std::nullopt});
    }
  }
  s.sizes = full ? std::vector<std::int64_t>{1, 33, 1023, 4097, (1 << 20) + 3, 1 << 24}
                 : std::vector<std::int64_t>{4096, (1 << 16) + 3};  // the norms: one row of 4096
  s.seeds = full ? std::vector<std::uint64_t>{1, 2, 3} : std::vector<std::uint64_t>{1};
  s.axes = full ? std::vector<Axis>{Axis::all, Axis::inner, Axis::outer} : std::vector<Axis>{Axis::all};
  s.runs = full ? 10 : 3;
  s.permutations = full ? 4 : 2;
  return s;
}

namespace {

// One generated (or user-given) input and the arrays derived from it.
struct InputCase {
  Dtype dtype;
  std::string distribution;
  std::int64_t n = 0;
  std::uint64_t seed = 0;
  TypedArray own_x;
  const TypedArray* user_x = nullptr;  // a user's data, read where it is (not copied)
  const TypedArray& x() const { return user_x ? *user_x : own_x; }
  std::optional<TypedArray> y;
  TypedArray gamma, beta;
  std::string note;
};

// A permuted copy of a problem's arrays on the host (ProblemPermutation,
// kernels/index_permutation.hpp, the same order the GPU backend makes on the
// device), filled in parallel.
struct PermutedArrays {
  TypedArray x;
  std::optional<TypedArray> y, gamma, beta;
  std::vector<float> x_float, y_float;  // when the original problem has them
  ReductionProblem problem;  // the original problem over these arrays
};

TypedArray permuted(const TypedArray& a, std::int64_t count, WorkPool& pool,
                    const std::function<std::int64_t(std::int64_t)>& source) {
  return std::visit(
      [&](const auto& v) {
        std::decay_t<decltype(v)> out(v.size());
        pool.for_chunks(count, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) out[std::size_t(i)] = v[std::size_t(source(i))];
        });
        return TypedArray(std::move(out));
      },
      a.data());
}

ProblemPermutation permutation_of(const ReductionProblem& p, std::uint64_t seed) {
  return ProblemPermutation(p.axis, is_elementwise_output(p.op), p.rows, p.cols, seed);
}

std::unique_ptr<PermutedArrays> permuted_on_host(const ReductionProblem& p, std::uint64_t seed, WorkPool& pool) {
  const ProblemPermutation perm = permutation_of(p, seed);
  auto out = std::make_unique<PermutedArrays>();
  auto element = [&perm](std::int64_t i) { return perm.source(i); };
  auto column = [&perm](std::int64_t k) { return perm.column(k); };
  const std::int64_t n = p.rows * p.cols;
  out->x = permuted(*p.x, n, pool, element);
  out->problem = p;
  out->problem.x = &out->x;
  if (p.y) out->problem.y = &out->y.emplace(permuted(*p.y, n, pool, element));
  // The widened copies follow the same permutation.
  auto widened = [&](const std::vector<float>* from, std::vector<float>& into) -> const std::vector<float>* {
    if (from == nullptr) return nullptr;
    into.resize(from->size());
    pool.for_chunks(std::int64_t(from->size()), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) into[std::size_t(i)] = (*from)[std::size_t(element(i))];
    });
    return &into;
  };
  out->problem.x_float = widened(p.x_float, out->x_float);
  out->problem.y_float = p.y ? widened(p.y_float, out->y_float) : nullptr;
  if (is_elementwise_output(p.op)) {
    if (p.gamma) out->problem.gamma = &out->gamma.emplace(permuted(*p.gamma, p.cols, pool, column));
    if (p.beta) out->problem.beta = &out->beta.emplace(permuted(*p.beta, p.cols, pool, column));
  }
  return out;
}

// One kernel as the measurement sees it: how to run it on a problem (on the
// GPU, the uploaded one), over which configurations, and what else it can
// tell (a bit-exact model, its throughput, an a-priori bound). Built-in
// kernels and users' kernels (accuracy/user_kernel.hpp) both become one, so
// that every cell is made by the same code (MatrixRunner::measure).
struct KernelUnderTest {
  std::vector<LaunchConfig> configs;  // the first is the default one
  int runs = 1;                       // repeated runs of the default configuration
  bool on_gpu = false;                // runs the uploaded problem
  std::function<ReductionResult(const ReductionProblem&, const LaunchConfig&, std::uint64_t run)> run;
  // The GPU's built-in kernels: a run digested on the device, bringing back
  // only the listed rows' outputs (all with nullptr); a permuted norm's
  // outputs are digested where they go back to (GpuBackend::run_digested).
  // Empty: run() and a digest on the host.
  std::function<GpuBackend::DigestedRun(const LaunchConfig&, const std::vector<std::int64_t>* rows, std::int64_t cols)>
      run_digested;
  // Whether a configuration's result equals the model's bits; empty where
  // there is no bit-exact model to compare with.
  // got: the digest of the configuration's result (accuracy/metrics.hpp).
  std::function<bool(const ReductionProblem&, const LaunchConfig&, std::uint64_t got)> matches_model;
  std::function<GpuBackend::Timing()> time;  // empty: not timed (CPU)
  // Measured error of output i over the a-priori bound; empty where the
  // kernel's algorithm is not known.
  std::function<std::optional<double>(const ProblemReference&, const ReductionProblem&, const ReductionResult&,
                                      std::size_t)>
      bound_ratio;
  // The working format of the kernel's statistics and of its ideal kernel
  // (accuracy/ideal_kernel.hpp).
  Dtype working = Dtype::fp32;
  // A norm's row statistics where the run's result does not carry them: on
  // the GPU, those of the kernel's bit-exact CPU model (the GPU's outputs
  // equal the model's: matches_model). Empty where none can be known.
  std::function<std::vector<double>(const ReductionProblem&)> statistics;
  std::string no_statistics;  // why, when there are none
};

// Measured error over the a-priori bound of spec's algorithm, at the
// addition depth of its order in configuration cfg (accuracy/error_bound.hpp).
decltype(KernelUnderTest::bound_ratio) bound_ratio_for(const KernelSpec& spec, const LaunchConfig& cfg) {
  return [spec, cfg](const ProblemReference& ref, const ReductionProblem& q, const ReductionResult& res,
                     std::size_t i) {
    const std::int64_t depth = addition_depth(spec, q.axis, q.length(), cfg);
    return ref.bound_ratio(spec, q, depth, res.values[i], i);
  };
}

// A kernel's runs on one problem: the first run's scored outputs (released
// once scored), every run only as its digest (accuracy/metrics.hpp), so that
// large outputs (the norms' one per element) are not kept run after run.
struct KernelRuns {
  ReductionResult first;                      // the default configuration's first run
  std::uint64_t first_digest = 0;
  std::vector<std::uint64_t> run_digests;     // every run of the default configuration
  std::vector<std::uint64_t> config_digests;  // the first run of each configuration
  // One per configuration compared with the model; run on the pool while the
  // GPU goes on.
  std::vector<std::future<bool>> model_checks;
  std::optional<GpuBackend::Timing> timing;
};

// A user kernel's arguments: the problem's arrays (host or device), where to
// write, and the configuration.
KernelArgs kernel_args(const UserKernel& u, const GpuBackend::UploadedArrays& a, void* out, const LaunchConfig& cfg) {
  KernelArgs k;
  k.op = u.op;
  k.axis = a.axis;
  k.in_dtype = u.in;
  k.out_dtype = u.out;
  k.rows = a.rows;
  k.cols = a.cols;
  k.x = a.x;
  k.y = a.y;
  k.gamma = a.gamma;
  k.beta = a.beta;
  k.eps = a.eps;
  k.out = out;
  k.config = cfg;
  return k;
}

// The host problem's arrays as GpuBackend::upload lays them out (whole-array
// problems as [1, n]).
GpuBackend::UploadedArrays host_arrays(const ReductionProblem& p) {
  auto raw = [](const TypedArray* t) { return t ? t->raw() : nullptr; };
  const bool all = p.axis == Axis::all;
  return GpuBackend::UploadedArrays{p.x ? p.x->dtype() : Dtype::fp32, p.axis, all ? 1 : p.rows,
                                    all ? p.rows * p.cols : p.cols, p.eps, raw(p.x), raw(p.y), raw(p.gamma),
                                    raw(p.beta)};
}

// The references of one problem, one per output format, computed on the pool
// from the moment the problem's cells are known, and shared by every kernel
// (built-in and user) that runs on it.
class SharedReferences {
 public:
  SharedReferences(const ReductionProblem& p, Saturation sat, WorkPool& pool, PhaseTimes* clock)
      : p_(p), sat_(sat), pool_(pool), clock_(clock) {}
  void start(Dtype out) {
    if (refs_.count(out)) return;
    refs_.emplace(out, pool_.submit([this, out]() -> std::variant<ProblemReference, std::string> {
      const auto scope = timed(clock_, Phase::references);
      try {
        return compute_problem_reference(p_, out, sat_);
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
    }).share());
  }
  // Called from the pool's tasks once every reference has been started.
  const ProblemReference& get(Dtype out) const {
    const auto& r = refs_.at(out).get();
    if (const auto* why = std::get_if<std::string>(&r)) throw std::runtime_error("reference: " + *why);
    return std::get<ProblemReference>(r);
  }
  void wait() const {
    for (const auto& [d, f] : refs_) f.wait();
  }

 private:
  const ReductionProblem& p_;
  Saturation sat_;
  WorkPool& pool_;
  PhaseTimes* clock_;
  std::map<Dtype, std::shared_future<std::variant<ProblemReference, std::string>>> refs_;
};

// A kernel measured once at the throughput size, for the cells that were too
// small to time (docs/spec.md, "Metrics": throughput).
struct ThroughputJob {
  Op op;
  Axis axis;
  Dtype in;
  std::optional<KernelSpec> spec;  // a built-in kernel, or
  const UserKernel* user = nullptr;
};

std::string throughput_key(const Cell& c) {
  return c.op + '|' + c.dtype + '|' + c.out_dtype + '|' + c.accumulator + '|' + c.shape + '|' + c.axis;
}

// The (op, axis) problems an input of n elements gives: the norms normalise
// rows; the reductions run along the matrix's axes, the row-wise ones only
// where n is a whole number of rows. Those that cannot run go to not_run
// ("rmsnorm n=4097 axis=inner", why), each once (issue 41: no silent gaps).
std::vector<std::pair<Op, Axis>> problems_of(const MatrixSettings& s, std::int64_t n, bool has_y,
                                             std::vector<std::pair<std::string, std::string>>* not_run = nullptr) {
  std::vector<std::pair<Op, Axis>> out;
  for (Op op : s.ops) {
    for (Axis axis : is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s.axes) {
      const auto skip = [&](std::string why) {
        std::pair<std::string, std::string> entry{fmt::format("{} n={} axis={}", to_string(op), n, to_string(axis)),
                                                  std::move(why)};
        if (not_run && std::find(not_run->begin(), not_run->end(), entry) == not_run->end())
          not_run->push_back(std::move(entry));
      };
      if (takes_second_input(op) && !has_y) {
        skip("needs a second input y; an --input file gives x only");
        continue;
      }
      const std::int64_t cols = std::min<std::int64_t>(s.row_cols, std::max<std::int64_t>(n, 1));
      if (axis != Axis::all && n % cols != 0) {
        skip(fmt::format("not a whole number of rows of {}", cols));
        continue;
      }
      out.emplace_back(op, axis);
    }
  }
  return out;
}

// The shapes of the matrix that give an op no kernel at all along an axis
// (atomic and the norms, cub_deterministic and the rows, ...): listed once
// each, with the reason of the first accumulator (docs/spec.md, "Which
// accumulators each op takes" and "Kernel shapes"), so that no (op, axis,
// shape) of the matrix vanishes. Shapes this backend cannot run at all are
// listed as such by run_matrix.
void list_shape_gaps(const MatrixSettings& s, bool gpu, std::vector<std::pair<std::string, std::string>>& not_run) {
  for (Op op : s.ops)
    for (Axis axis : is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s.axes)
      for (Shape shape : s.shapes) {
        if (gpu ? bool(GpuBackend::shape_unavailable(shape)) : !has_cpu_model(shape)) continue;
        for (Dtype d : s.dtypes) {
          std::optional<std::string> why;
          bool any = false;
          for (Accumulator acc : s.accumulators) {
            const KernelSpec spec{op, d, s.out_dtype.value_or(default_out_dtype(d)), acc, shape, s.saturation};
            std::optional<std::string> reason = has_cpu_model(shape) ? unsupported(spec, axis) : std::nullopt;
            if (!reason && gpu) reason = GpuBackend::unavailable(spec, axis);
            if (!reason) {
              any = true;
              break;
            }
            if (!why) why = reason;
          }
          if (any || !why) continue;
          std::pair<std::string, std::string> entry{
              fmt::format("{} {} axis={} shape={}", to_string(op), to_string(d), to_string(axis), to_string(shape)),
              *why};
          if (std::find(not_run.begin(), not_run.end(), entry) == not_run.end()) not_run.push_back(std::move(entry));
        }
      }
}

// One cell on its way: its kernel, its runs and its runs on permuted copies;
// scored once all of them are in.
struct PendingCell {
  Cell cell;
  Dtype out_dtype = Dtype::fp32;
  KernelUnderTest kut;
  KernelRuns runs;
  std::vector<std::uint64_t> permuted;  // digests of the default configuration's result on each permuted copy
  std::future<void> scored;
  std::optional<std::string> failure;
  std::optional<std::string> score_failure;  // written by the scoring task alone
};

// The rows whose outputs are scored against the reference. The norms give
// one output per element, each with its own reference: above
// kScoredElements, an evenly spaced sample of rows is scored (the rows are
// independent problems), and reproducibility still compares every output.
constexpr std::int64_t kScoredElements = std::int64_t(1) << 22;

struct ScoredRows {
  std::vector<std::int64_t> rows;  // empty: every output is scored
  TypedArray x;                    // those rows of x
  ReductionProblem problem;        // the problem of those rows alone
};

std::unique_ptr<ScoredRows> scored_rows(const ReductionProblem& p) {
  if (!is_elementwise_output(p.op) || p.rows * p.cols <= kScoredElements) return nullptr;
  auto out = std::make_unique<ScoredRows>();
  const std::int64_t count = std::max<std::int64_t>(1, kScoredElements / p.cols);
  for (std::int64_t k = 0; k < count; ++k) out->rows.push_back(k * p.rows / count);
  out->x = std::visit(
      [&](const auto& v) {
        std::decay_t<decltype(v)> sub;
        sub.reserve(std::size_t(count * p.cols));
        for (std::int64_t r : out->rows)
          sub.insert(sub.end(), v.begin() + r * p.cols, v.begin() + (r + 1) * p.cols);
        return TypedArray(std::move(sub));
      },
      p.x->data());
  out->problem = p;
  out->problem.rows = count;
  out->problem.x = &out->x;
  out->problem.x_float = out->problem.y_float = nullptr;  // widened per run: a few rows
  return out;
}

// The outputs of the scored rows (all of them when every row is scored).
ReductionResult scored_part(ReductionResult r, const ScoredRows* scored, std::int64_t cols) {
  if (scored == nullptr) return r;
  ReductionResult out;
  const auto take = [&](const std::vector<double>& v, std::vector<double>& into) {
    for (std::int64_t row : scored->rows)
      into.insert(into.end(), v.begin() + row * cols, v.begin() + (row + 1) * cols);
  };
  take(r.values, out.values);
  if (!r.unrounded.empty()) take(r.unrounded, out.unrounded);
  if (!r.statistics.empty())
    for (std::int64_t row : scored->rows)
      out.statistics.insert(out.statistics.end(), r.statistics.begin() + 2 * row, r.statistics.begin() + 2 * row + 2);
  return out;
}

template <class F>
void failing_as(PendingCell& c, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    if (!c.failure) c.failure = e.what();
  } catch (...) {
    if (!c.failure) c.failure = "the kernel threw something that is not a std::exception";
  }
}

}  // namespace

namespace {

// The ideal kernel of a problem (accuracy/ideal_kernel.hpp) is the same for
// every cell of one working and output format: its errors and the
// conditioning scales are computed once and shared.
struct IdealScores {
  std::vector<std::optional<double>> errors;
  std::vector<double> scales;
};
class IdealCache {
 public:
  const IdealScores& get(const ReductionProblem& p, const ProblemReference& ref, Dtype working, Dtype out,
                         Saturation sat) {
    const std::lock_guard lock(mutex_);
    auto [it, fresh] = scores_.try_emplace({working, out});
    if (fresh) {
      const std::vector<double> outputs = ideal_kernel_outputs(p, ref, working, out, sat);
      for (std::size_t i = 0; i < outputs.size(); ++i)
        it->second.errors.push_back(ulp_error(outputs[i], ref.outputs[i].exact, out, nullptr, sat));
      it->second.scales = conditioning_scales(p, ref, working, out);
    }
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<Dtype, Dtype>, IdealScores> scores_;
};

// run_digested's rows for a run whose outputs are not copied back (its digest alone).
const std::vector<std::int64_t> kNoRows;

class MatrixRunner {
 public:
  MatrixRunner(const MatrixSettings& s, GpuBackend* gpu, const std::vector<UserKernel>& user_kernels,
               std::mutex* serialise, WorkPool& pool, PhaseTimes* clock,
               std::map<std::string, ThroughputJob>* throughput_jobs)
      : s_(s),
        gpu_(gpu),
        user_kernels_(user_kernels),
        serialise_(serialise),
        pool_(pool),
        clock_(clock),
        throughput_jobs_(throughput_jobs) {}

  void run_input(const InputCase& in, std::vector<Cell>& out, const std::function<void()>& problem_done) {
    bool uploaded = false;
    // The CPU models read float: a narrower input is widened once here, not
    // on every run of every cell.
    std::vector<float> x_float, y_float;
    if (in.dtype != Dtype::fp32) {
      x_float = in.x().to_floats();
      if (in.y) y_float = in.y->to_floats();
    }
    for (const auto& [op, axis] : problems_of(s_, in.n, in.y.has_value())) {
      ReductionProblem p;
      p.op = op;
      p.axis = axis;
      p.x = &in.x();
      p.y = in.y && takes_second_input(op) ? &*in.y : nullptr;  // read (and uploaded) by the dot products alone
      if (!x_float.empty()) p.x_float = &x_float;
      if (p.y && !y_float.empty()) p.y_float = &y_float;
      if (is_elementwise_output(op)) {  // the norms' weights, one per column
        p.gamma = &in.gamma;
        p.beta = &in.beta;
      }
      p.eps = s_.eps;
      p.cols = axis == Axis::all ? in.n : std::min<std::int64_t>(s_.row_cols, std::max<std::int64_t>(in.n, 1));
      p.rows = in.n / std::max<std::int64_t>(p.cols, 1);
      if (axis == Axis::all) p.rows = 1;
      if (gpu_) {
        // One upload per input: the ops after the first view the same arrays.
        const auto scope = timed(clock_, Phase::upload);
        if (uploaded) gpu_->view_as(p);
        else gpu_->upload(p);
        uploaded = true;
      }
      const Dtype out_dtype = s_.out_dtype.value_or(default_out_dtype(in.dtype));
      run_op(in, p, out_dtype, out);
      problem_done();
    }
  }

 private:
  void run_op(const InputCase& in, const ReductionProblem& p, Dtype out_dtype, std::vector<Cell>& out) {
    std::vector<PendingCell> cells;
    for (Accumulator acc : s_.accumulators) {
      for (Shape shape : s_.shapes) {
        const KernelSpec spec{p.op, in.dtype, out_dtype, acc, shape, s_.saturation};
        // Combinations that do not exist are not cells; NVIDIA's shapes have
        // no model and exist on the GPU only.
        if (has_cpu_model(shape) && unsupported(spec, p.axis)) continue;
        if (gpu_ ? bool(GpuBackend::unavailable(spec, p.axis)) : !has_cpu_model(shape)) continue;
        PendingCell& c = cells.emplace_back();
        c.cell = blank_cell(in, p, out_dtype, std::string(to_string(acc)), std::string(to_string(shape)));
        c.out_dtype = out_dtype;
        failing_as(c, [&] { c.kut = builtin_kernel(spec, p, throughput_key(c.cell)); });
      }
    }
    for (const UserKernel& u : user_kernels_) {
      const auto axes = kernel_axes(u);
      if (u.op != p.op || u.in != in.dtype || std::find(axes.begin(), axes.end(), p.axis) == axes.end()) continue;
      if (!runs_here(u)) continue;  // listed as unavailable by run_matrix
      PendingCell& c = cells.emplace_back();
      c.cell = blank_cell(in, p, u.out, u.accumulator, u.name);
      c.out_dtype = u.out;
      failing_as(c, [&] { c.kut = user_kernel(u, p, throughput_key(c.cell)); });
    }
    const std::unique_ptr<ScoredRows> scored = scored_rows(p);
    const ReductionProblem& reference_problem = scored ? scored->problem : p;
    SharedReferences refs(reference_problem, s_.saturation, pool_, clock_);
    IdealCache ideal;
    for (const PendingCell& c : cells)
      if (!c.failure) refs.start(c.out_dtype);
    // A user's input reduced to one value: its reference is kept, for the
    // values the user got elsewhere (--check).
    const bool keep_reference = in.user_x != nullptr && p.axis == Axis::all && user_references_ != nullptr;
    if (keep_reference) refs.start(out_dtype);

    // Each cell is scored (on the pool) as soon as its runs are in, and its
    // outputs released: a problem holds a few cells' outputs at a time.
    auto score_later = [&](PendingCell& c) {
      c.scored = pool_.submit([&] {
        const auto scope = timed(clock_, Phase::scoring);
        try {
          score(c, reference_problem, refs.get(c.out_dtype), scored.get(), ideal);
        } catch (const std::exception& e) {
          c.score_failure = e.what();
        }
        c.runs.first = {};
      });
    };
    {
      const auto scope = timed(clock_, Phase::kernel_runs);
      each_cell(cells, [&](PendingCell& c) {
        c.runs = run_kernel(c.kut, p, scored.get());
        score_later(c);
      });
    }
    {
      const auto scope = timed(clock_, Phase::permutations);
      run_permuted(cells, p);
    }
    for (PendingCell& c : cells) {
      if (c.scored.valid()) c.scored.get();
      if (!c.failure) c.failure = c.score_failure;
      if (!c.failure) failing_as(c, [&] { finish(c); });
      if (c.failure) c.cell.status = "failed: " + *c.failure;
    }
    refs.wait();  // a reference whose cells all failed before asking for it must not outlive p
    if (keep_reference) {
      try {
        const ProblemReference& r = refs.get(out_dtype);
        if (r.outputs.size() == 1) user_references_->push_back({p.op, out_dtype, r.outputs.front()});
      } catch (const std::exception&) {
        // No reference: the cells say why; --check finds none for this op.
      }
    }
    for (PendingCell& c : cells) out.push_back(std::move(c.cell));
  }

  // f on every cell that has not failed: in order on this thread when the
  // cells run on the GPU (one device), on the pool's threads otherwise.
  template <class F>
  void each_cell(std::vector<PendingCell>& cells, F f) {
    std::vector<std::future<void>> tasks;
    for (PendingCell& c : cells) {
      if (c.failure) continue;
      if (c.kut.on_gpu) failing_as(c, [&] { f(c); });
      else tasks.push_back(pool_.submit([&c, &f] { failing_as(c, [&] { f(c); }); }));
    }
    for (auto& t : tasks) t.get();
  }

  Cell blank_cell(const InputCase& in, const ReductionProblem& p, Dtype out_dtype, std::string accumulator,
                  std::string shape) const {
    Cell c;
    c.op = to_string(p.op);
    c.dtype = to_string(in.dtype);
    c.out_dtype = to_string(out_dtype);
    c.accumulator = std::move(accumulator);
    c.shape = std::move(shape);
    c.distribution = in.distribution;
    c.n = p.rows * p.cols;
    c.seed = in.seed;
    c.axis = to_string(p.axis);
    if (p.axis != Axis::all) {
      c.rows = p.rows;
      c.cols = p.cols;
    }
    if (is_fp8(out_dtype)) c.saturation = to_string(s_.saturation);
    c.note = in.note;
    return c;
  }

  // Cells at or above the throughput size are timed on their own input; the
  // others take the kernel's figure at that size, measured once
  // (run_matrix's throughput phase).
  bool timed_here(const ReductionProblem& p) const {
    return s_.throughput_n > 0 && p.rows * p.cols >= s_.throughput_n;
  }
  void plan_throughput(const std::string& key, const ReductionProblem& p, Dtype in, std::optional<KernelSpec> spec,
                       const UserKernel* user) {
    if (s_.throughput_n > 0 && throughput_jobs_ != nullptr)
      throughput_jobs_->emplace(key, ThroughputJob{p.op, p.axis, in, spec, user});
  }

  KernelUnderTest builtin_kernel(const KernelSpec& spec, const ReductionProblem& p, const std::string& key) {
    KernelUnderTest k;
    k.configs = launch_configs(spec, p.length());
    // The CPU models of deterministic shapes give the same bits on every run:
    // they are run once per configuration; the atomic model draws one order
    // of block partials per run.
    const bool repeat = gpu_ || !is_deterministic_order(spec.shape);
    k.runs = repeat ? std::max(1, s_.runs) : 1;
    k.on_gpu = gpu_ != nullptr;
    GpuBackend* gpu = gpu_;
    k.run = [gpu, spec](const ReductionProblem& q, const LaunchConfig& cfg, std::uint64_t run) {
      return gpu ? gpu->run(spec, cfg) : run_model(spec, q, cfg, run);
    };
    if (gpu)
      k.run_digested = [gpu, spec](const LaunchConfig& cfg, const std::vector<std::int64_t>* rows, std::int64_t cols) {
        return gpu->run_digested(spec, cfg, rows, cols);
      };
    if (gpu && has_cpu_model(spec.shape) && model_is_bit_exact(spec))
      k.matches_model = [spec](const ReductionProblem& q, const LaunchConfig& cfg, std::uint64_t got) {
        return results_digest(run_model(spec, q, cfg).values) == got;
      };
    if (gpu && timed_here(p)) k.time = [gpu, spec, cfg = k.configs.front()] { return gpu->time(spec, cfg, 3, 10); };
    else if (gpu) plan_throughput(key, p, spec.in, spec, nullptr);
    k.bound_ratio = bound_ratio_for(spec, k.configs.front());
    k.working = finishing_format(spec.acc);
    if (gpu && is_elementwise_output(spec.op)) {
      if (has_cpu_model(spec.shape) && model_is_bit_exact(spec))
        k.statistics = [spec, cfg = k.configs.front()](const ReductionProblem& q) {
          return run_model(spec, q, cfg).statistics;
        };
      else k.no_statistics = "the GPU kernel does not expose its row statistics and has no bit-exact model";
    }
    return k;
  }

  bool runs_here(const UserKernel& u) const { return (gpu_ && u.run_device) || u.run_host || u.model; }

  // A user's host function on the problem's host arrays; serialised when the
  // kernel is not reentrant.
  ReductionResult call_host(const UserKernel& u, const std::function<void(const KernelArgs&)>& f,
                            const ReductionProblem& q, const LaunchConfig& cfg) const {
    const std::size_t count = std::size_t(output_count(u.op, q.axis, q.rows, q.cols));
    std::vector<unsigned char> bytes(count * element_bytes(u.out), 0xFF);
    const KernelArgs a = kernel_args(u, host_arrays(q), bytes.data(), cfg);
    if (!u.reentrant) {
      std::lock_guard lock(*serialise_);
      f(a);
    } else {
      f(a);
    }
    return ReductionResult{decode_outputs(bytes.data(), u.out, count), {}, {}};
  }

  KernelUnderTest user_kernel(const UserKernel& u, const ReductionProblem& p, const std::string& key) {
    KernelUnderTest k;
    k.configs = kernel_configs(u);
    k.runs = std::max(1, s_.runs);
    k.on_gpu = gpu_ && u.run_device;
    if (u.error_bound_of) {
      // The bound of the built-in algorithm the user names, at the depth of
      // its order for the kernel's default configuration.
      const KernelSpec claimed{u.op, u.in, u.out, u.error_bound_of->first, u.error_bound_of->second, s_.saturation};
      k.bound_ratio = bound_ratio_for(claimed, k.configs.front());
      k.working = finishing_format(u.error_bound_of->first);
    }
    k.no_statistics = "a user's kernel does not expose its row statistics";
    if (!k.on_gpu) {
      const auto* host = u.run_host ? &u.run_host : &u.model;
      k.run = [this, &u, host](const ReductionProblem& q, const LaunchConfig& cfg, std::uint64_t) {
        return call_host(u, *host, q, cfg);
      };
      return k;
    }
    GpuBackend* gpu = gpu_;
    const std::size_t count = std::size_t(output_count(u.op, p.axis, p.rows, p.cols));
    const std::size_t bytes = count * element_bytes(u.out);
    k.run = [gpu, &u, count, bytes](const ReductionProblem&, const LaunchConfig& cfg, std::uint64_t) {
      const auto got = gpu->run_launch(user_launch(u, cfg), bytes, u.name);
      return ReductionResult{decode_outputs(got.data(), u.out, count), {}, {}};
    };
    if (u.model)
      k.matches_model = [this, &u](const ReductionProblem& q, const LaunchConfig& cfg, std::uint64_t got) {
        return results_digest(call_host(u, u.model, q, cfg).values) == got;
      };
    if (timed_here(p))
      k.time = [gpu, &u, bytes, launch = user_launch(u, k.configs.front())] {
        return gpu->time_launch(launch, bytes, takes_second_input(u.op), 3, 10, u.name);
      };
    else plan_throughput(key, p, u.in, std::nullopt, &u);
    return k;
  }

  // The runs of every configuration. Of a large norm, the first run keeps
  // only its scored rows, and the model is compared on those rows (each row
  // is a problem of its own, so the model of those rows alone gives their
  // bits).
  KernelRuns run_kernel(const KernelUnderTest& kut, const ReductionProblem& p, const ScoredRows* scored) {
    KernelRuns k;
    for (std::size_t ci = 0; ci < kut.configs.size(); ++ci) {
      for (int r = 0; r < (ci == 0 ? kut.runs : 1); ++r) {
        ReductionResult part;
        std::uint64_t digest = 0;
        if (kut.run_digested) {
          // Outputs come back only for the first run of a configuration.
          const std::vector<std::int64_t>* rows = r > 0 ? &kNoRows : scored ? &scored->rows : nullptr;
          GpuBackend::DigestedRun d = kut.run_digested(kut.configs[ci], rows, p.cols);
          part = std::move(d.copied);
          digest = d.digest;
        } else {
          ReductionResult res = kut.run(p, kut.configs[ci], std::uint64_t(r));
          digest = results_digest(res.values);
          if (r == 0) part = scored_part(std::move(res), scored, p.cols);
        }
        if (ci == 0) k.run_digests.push_back(digest);
        if (r > 0) continue;
        k.config_digests.push_back(digest);
        if (kut.matches_model) {
          const ReductionProblem& q = scored ? scored->problem : p;
          k.model_checks.push_back(
              pool_.submit([this, &kut, &q, cfg = kut.configs[ci], got = results_digest(part.values)] {
                const auto scope = timed(clock_, Phase::model_checks);
                return kut.matches_model(q, cfg, got);
              }));
        }
        if (ci == 0) {
          k.first = std::move(part);
          k.first_digest = digest;
        }
      }
    }
    if (kut.time) k.timing = kut.time();
    return k;
  }

  // Each permuted copy is made once per problem (on the device for the GPU's
  // cells, on the host's cores for the others) and read by every cell.
  void run_permuted(std::vector<PendingCell>& cells, const ReductionProblem& p) {
    if (s_.permutations <= 0 || p.length() <= 1) return;
    const bool host_cells = std::any_of(cells.begin(), cells.end(),
                                        [](const PendingCell& c) { return !c.failure && !c.kut.on_gpu; });
    const bool gpu_cells = std::any_of(cells.begin(), cells.end(),
                                       [](const PendingCell& c) { return !c.failure && c.kut.on_gpu; });
    for (int k = 1; k <= s_.permutations; ++k) {
      const std::uint64_t seed = std::uint64_t(k);
      std::unique_ptr<PermutedArrays> host;
      if (host_cells) host = permuted_on_host(p, seed, pool_);
      if (gpu_cells) gpu_->use_permutation(seed);
      std::vector<std::int64_t> columns;  // where each column's outputs go back to (the norms)
      if (is_elementwise_output(p.op)) {
        const ProblemPermutation perm = permutation_of(p, seed);
        for (std::int64_t j = 0; j < p.cols; ++j) columns.push_back(perm.column(j));
      }
      each_cell(cells, [&](PendingCell& c) {
        if (c.kut.run_digested) {
          c.permuted.push_back(c.kut.run_digested(c.kut.configs.front(), &kNoRows, p.cols).digest);
          return;
        }
        std::vector<double> v = c.kut.run(host ? host->problem : p, c.kut.configs.front(), 0).values;
        if (!columns.empty()) {
          // Per-element outputs follow their elements: put them back in place.
          std::vector<double> back(v.size());
          for (std::size_t i = 0; i < v.size(); ++i) {
            const std::size_t col = i % std::size_t(p.cols);
            back[i - col + std::size_t(columns[col])] = v[i];
          }
          v = std::move(back);
        }
        c.permuted.push_back(results_digest(v));
      });
    }
    if (gpu_cells) gpu_->use_permutation(std::nullopt);
  }

  // The cell's accuracy, from its first run (only the scored rows of a large
  // norm: p is then their problem).
  void score(PendingCell& pc, const ReductionProblem& p, const ProblemReference& ref, const ScoredRows* scored,
             IdealCache& ideal) {
    const KernelUnderTest& kut = pc.kut;
    Cell& c = pc.cell;
    const Dtype out_dtype = pc.out_dtype;
    const ReductionResult res = std::move(pc.runs.first);  // the scored rows' outputs
    if (res.values.size() != ref.outputs.size())
      throw std::runtime_error(fmt::format("kernel gave {} outputs, the reference has {}", res.values.size(),
                                           ref.outputs.size()));
    // The worst output names the cell (docs/spec.md, "Ops": several outputs).
    std::size_t worst = 0;
    double worst_rank = -1;
    std::optional<double> worst_ulps;
    std::string worst_note;
    bool all_cr = true;
    std::vector<std::optional<double>> errors(res.values.size());
    for (std::size_t i = 0; i < res.values.size(); ++i) {
      std::string note;
      const auto ulps = errors[i] = ulp_error(res.values[i], ref.outputs[i].exact, out_dtype, &note, s_.saturation);
      const double rank = ulps ? *ulps : HUGE_VAL;  // a non-finite mismatch is worst
      if (rank > worst_rank) {
        worst_rank = rank;
        worst_ulps = ulps;
        worst = i;
        worst_note = note;
      }
      all_cr = all_cr && correctly_rounded(res.values[i], ref.outputs[i].rounded);
    }
    if (!res.values.empty()) {
      const Reference& r = ref.outputs[worst];
      c.reference_rounded = hex_float(r.rounded);
      c.reference_exact = r.exact_decimal;
      c.result = hex_float(res.values[worst]);
      c.ulp_error = worst_ulps;
      c.error_note = worst_note;
      c.component = scored ? fmt::format("row {}, col {}", scored->rows[worst / std::size_t(p.cols)],
                                         worst % std::size_t(p.cols))
                           : ref.component_name(worst);
      if (!res.unrounded.empty()) c.rel_error = rel_error(res.unrounded[worst], r.exact);
      c.condition = ref.condition(worst);
      if (kut.bound_ratio) c.bound_ratio = kut.bound_ratio(ref, p, res, worst);
      if (is_elementwise_output(p.op) || p.op == Op::mean_var) score_statistics(pc, p, ref, res, scored, errors, ideal);
    }
    c.correctly_rounded = all_cr;
    if (scored) {
      const std::string sample =
          fmt::format("scored and compared with the model on {} of {} rows, evenly spaced; reproducibility over "
                      "every output",
                      scored->rows.size(), pc.cell.rows.value_or(0));
      c.note = c.note.empty() ? sample : c.note + "; " + sample;
    }
  }

  // docs/spec.md, "Row statistics and the accumulator's own error": the
  // statistics' errors in ULPs of their own format, the ideal kernel's error
  // and what the kernel adds to it.
  void score_statistics(PendingCell& pc, const ReductionProblem& p, const ProblemReference& ref,
                        const ReductionResult& res, const ScoredRows* scored,
                        const std::vector<std::optional<double>>& errors, IdealCache& ideal_cache) {
    Cell& c = pc.cell;
    const Dtype working = pc.kut.working;
    c.working_dtype = to_string(working);
    const auto row_name = [&](std::size_t row) {
      return fmt::format("row {}", scored ? scored->rows[row] : std::int64_t(row));
    };
    WorstError mean, second;  // the mean; the variance (mean_var) or r (the norms)
    if (p.op == Op::mean_var) {
      for (std::size_t i = 0; i < res.values.size(); ++i) {
        std::string note;
        const auto e = ulp_error(res.values[i], ref.outputs[i].exact, pc.out_dtype, &note, s_.saturation);
        (i % 2 == 0 ? mean : second).add(e, note, ref.component_name(i));
      }
      c.mean_ulp_error = mean.value;
      c.variance_ulp_error = second.value;
      c.statistics_note = mean.note.empty() ? second.note : mean.note;
    } else {
      std::vector<double> stats = res.statistics;
      if (stats.empty() && pc.kut.statistics) stats = pc.kut.statistics(p);
      if (stats.size() != 2 * std::size_t(p.rows)) {
        c.statistics_note = pc.kut.no_statistics.empty() ? "the kernel gave no row statistics" : pc.kut.no_statistics;
      } else {
        for (std::size_t row = 0; row < std::size_t(p.rows); ++row) {
          const auto exact = ref.row_statistics(row);
          if (!exact) {
            mean.add(std::nullopt, "its exact statistics are not finite", row_name(row));
            second.add(std::nullopt, "its exact statistics are not finite", row_name(row));
            continue;
          }
          std::string note;
          if (exact->mean) {
            const auto e = ulp_error(stats[2 * row], *exact->mean, working, &note);
            mean.add(e, note, row_name(row));
          }
          note.clear();
          const auto e = ulp_error(stats[2 * row + 1], exact->rstd, working, &note);
          second.add(e, note, row_name(row));
        }
        if (p.op == Op::layernorm) c.mean_ulp_error = mean.value;
        c.rstd_ulp_error = second.value;
        c.statistics_note = mean.note.empty() ? second.note : mean.note;
      }
    }
    const IdealScores& ideal = ideal_cache.get(p, ref, working, pc.out_dtype, s_.saturation);
    if (ideal.errors.size() != res.values.size()) return;
    WorstError ideal_worst;
    for (const auto& e : ideal.errors) ideal_worst.add(e, "", "");
    c.ideal_ulp_error = ideal_worst.value;
    c.accumulator_ulp_error = accumulator_ulp_error(errors, ideal.scales);
  }

  // What needs every run, the permuted ones included.
  void finish(PendingCell& pc) {
    KernelRuns& k = pc.runs;
    Cell& c = pc.cell;
    for (auto& check : k.model_checks) c.matches_model = check.get() && c.matches_model.value_or(true);
    if (!k.model_checks.empty()) c.models_checked = int(k.model_checks.size());
    c.runs = int(k.run_digests.size());
    c.distinct_results = distinct_digests(k.run_digests);
    c.configs = int(k.config_digests.size());
    c.distinct_across_configs = distinct_digests(k.config_digests);
    if (!pc.permuted.empty()) {
      std::vector<std::uint64_t> perm{k.first_digest};
      perm.insert(perm.end(), pc.permuted.begin(), pc.permuted.end());
      c.permutations = int(perm.size());
      c.distinct_across_permutations = distinct_digests(perm);
    }
    // An empty input reads no bytes: its throughput is unknown, not 0 GB/s.
    if (k.timing && k.timing->bytes_per_run > 0) set_throughput(c, *k.timing, c.n);
  }

 public:
  void set_throughput(Cell& c, const GpuBackend::Timing& t, std::int64_t n) const {
    c.gbps = t.gbps;
    c.throughput_n = n;
    if (cub_gbps_ > 0) c.fraction_of_cub = t.gbps / cub_gbps_;
    if (copy_gbps_ > 0) c.fraction_of_copy = t.gbps / copy_gbps_;
  }

  static GpuBackend::Launch user_launch(const UserKernel& u, const LaunchConfig& cfg) {
    return [&u, cfg](const GpuBackend::UploadedArrays& a, void* out, void* stream) {
      u.run_device(kernel_args(u, a, out, cfg), stream);
    };
  }

  double cub_gbps_ = 0, copy_gbps_ = 0;
  std::vector<UserReference>* user_references_ = nullptr;  // run_matrix's, for a user's input

 private:
  const MatrixSettings& s_;
  GpuBackend* gpu_;
  const std::vector<UserKernel>& user_kernels_;
  std::mutex* serialise_;  // calls of kernels that are not reentrant
  WorkPool& pool_;
  PhaseTimes* clock_;
  std::map<std::string, ThroughputJob>* throughput_jobs_;
};

InputCase make_input(Dtype dtype, const DistributionSpec& dist, std::int64_t n, std::uint64_t seed,
                     std::int64_t row_cols) {
  InputCase in;
  in.dtype = dtype;
  in.distribution = dist.name();
  in.n = n;
  in.seed = seed;
  GeneratedInput g = generate(dist, dtype, n, seed, /*with_y=*/true);
  in.own_x = std::move(g.x);
  in.y = std::move(g.y);
  in.note = g.note;
  // The norms' weights: gamma in [0, 1), beta ~ N(0, 1), one per column.
  const std::int64_t cols = std::min<std::int64_t>(row_cols, std::max<std::int64_t>(n, 1));
  in.gamma = generate({Distribution::uniform, std::nullopt}, dtype, cols, seed ^ 0x6A09E667F3BCC908ull).x;
  in.beta = generate({Distribution::normal, std::nullopt}, dtype, cols, seed ^ 0xBB67AE8584CAA73Bull).x;
  return in;
}

// The throughput phase: each kernel whose cells were too small to time is
// timed once on a generated input of settings.throughput_n elements (rows of
// row_cols for the row-wise ops), and its cells take that figure.
// The throughput phase's input: uniform values in [-1, 1) (never zeros: a
// kernel's speed is measured on data it really adds), x and y, generated in
// slices on the pool's threads; only the bytes' count and kind matter here.
InputCase throughput_input(Dtype d, std::int64_t n, std::int64_t cols, WorkPool& pool) {
  constexpr std::int64_t kSlice = std::int64_t(1) << 20;
  InputCase in;
  in.dtype = d;
  in.n = n;
  in.distribution = "uniform";
  in.own_x = TypedArray(d, std::size_t(n));
  in.y.emplace(d, std::size_t(n));
  std::vector<std::future<void>> slices;
  for (std::int64_t b = 0; b < n; b += kSlice)
    slices.push_back(pool.submit([&in, d, b, len = std::min(kSlice, n - b)] {
      GeneratedInput g = generate({Distribution::uniform, std::nullopt}, d, len, std::uint64_t(b / kSlice) + 1, true);
      std::visit(
          [&](auto& x) {
            using V = std::decay_t<decltype(x)>;
            const V& gx = std::get<V>(g.x.data());
            const V& gy = std::get<V>(g.y->data());
            std::copy(gx.begin(), gx.end(), x.begin() + b);
            std::copy(gy.begin(), gy.end(), std::get<V>(in.y->data()).begin() + b);
          },
          in.own_x.data());
    }));
  for (auto& f : slices) f.get();
  in.gamma = generate({Distribution::uniform, std::nullopt}, d, cols, 2).x;
  in.beta = generate({Distribution::normal, std::nullopt}, d, cols, 3).x;
  return in;
}

void measure_throughput(const MatrixSettings& s, GpuBackend& gpu, const MatrixRunner& runner,
                        const std::map<std::string, ThroughputJob>& jobs, std::vector<Cell>& cells,
                        WorkPool& pool, PhaseTimes* clock) {
  const auto scope = timed(clock, Phase::throughput);
  std::map<std::string, std::optional<GpuBackend::Timing>> timings;
  // One input per format, a whole number of rows of row_cols, read whole by
  // the whole-array kernels.
  const std::int64_t cols = std::min(s.row_cols, s.throughput_n);
  const std::int64_t rows = s.throughput_n / cols;
  for (Dtype d : s.dtypes) {
    std::optional<InputCase> in;
    for (const auto& [key, job] : jobs) {
      if (job.in != d) continue;
      if (!in) in = throughput_input(d, rows * cols, cols, pool);
      ReductionProblem p;
      p.op = job.op;
      p.axis = job.axis;
      p.rows = job.axis == Axis::all ? 1 : rows;
      p.cols = job.axis == Axis::all ? rows * cols : cols;
      p.x = &in->x();
      p.y = takes_second_input(job.op) ? &*in->y : nullptr;
      if (is_elementwise_output(job.op)) {
        p.gamma = &in->gamma;
        p.beta = &in->beta;
      }
      p.eps = s.eps;
      try {
        gpu.view_as(p);
        if (job.spec) {
          timings[key] = gpu.time(*job.spec, launch_configs(*job.spec, p.length()).front(), 3, 10);
        } else {
          const UserKernel& u = *job.user;
          const std::size_t bytes = std::size_t(output_count(u.op, p.axis, p.rows, p.cols)) * element_bytes(u.out);
          timings[key] = gpu.time_launch(MatrixRunner::user_launch(u, kernel_configs(u).front()), bytes,
                                         takes_second_input(u.op), 3, 10, u.name);
        }
      } catch (const std::exception&) {
        timings[key] = std::nullopt;  // unknown: the cells keep no throughput
      }
    }
  }
  for (Cell& c : cells) {
    if (c.gbps || c.status != "ok" || c.n == 0) continue;  // an empty input has no throughput to speak of
    const auto it = timings.find(throughput_key(c));
    if (it != timings.end() && it->second && it->second->bytes_per_run > 0)
      runner.set_throughput(c, *it->second, rows * cols);
  }
}

}  // namespace

MatrixRun run_matrix(const MatrixSettings& s, GpuBackend* gpu, const MatrixProgress& progress,
                     const std::optional<UserInput>& user_input, const std::vector<UserKernel>& user_kernels,
                     PhaseTimes* clock) {
  MatrixRun result;
  // Shapes this backend cannot run are listed, never silently dropped.
  for (Shape shape : s.shapes) {
    if (gpu) {
      if (auto why = GpuBackend::shape_unavailable(shape)) result.unavailable.emplace_back(to_string(shape), *why);
    } else if (!has_cpu_model(shape)) {
      result.unavailable.emplace_back(to_string(shape), "runs on the GPU only (NVIDIA's order, no CPU model)");
    }
  }
  for (const UserKernel& u : user_kernels) {
    if (const std::string why = describe_problem(u); !why.empty())
      throw std::invalid_argument("user kernel '" + u.name + "': " + why);
    if (!u.run_host && !u.model && !gpu)
      result.unavailable.emplace_back(u.name, "has run_device only, and there is no GPU");
  }
  std::mutex serialise;

  struct Job {
    Dtype dtype;
    DistributionSpec dist;
    std::int64_t n;
    std::uint64_t seed;
  };
  std::vector<Job> jobs;
  if (!user_input) {
    for (Dtype d : s.dtypes)
      for (const auto& dist : s.distributions)
        for (std::int64_t n : s.sizes)
          for (std::uint64_t seed : s.seeds) jobs.push_back({d, dist, n, seed});
  }
  // Progress counts problems (an op along an axis of one input).
  std::size_t total = 0, done = 0;
  if (user_input) total = problems_of(s, std::int64_t(user_input->values.size()), false).size();
  for (const Job& job : jobs) total += problems_of(s, job.n, true).size();
  // What cannot run is listed once per (op, n, axis), not once per input.
  if (user_input) problems_of(s, std::int64_t(user_input->values.size()), false, &result.unavailable);
  if (!jobs.empty())
    for (std::int64_t n : s.sizes) problems_of(s, n, true, &result.unavailable);
  list_shape_gaps(s, gpu != nullptr, result.unavailable);
  std::mutex progress_mutex;
  const auto problem_done = [&] {
    const std::lock_guard lock(progress_mutex);
    if (progress.update) progress.update(++done, total);
  };

  // The cells of each input, and everything the CPU does for them, spread
  // over the pool (accuracy/work_pool.hpp).
  WorkPool pool;
  {
    std::int64_t largest = user_input ? std::int64_t(user_input->values.size()) : 0;
    for (std::int64_t n : s.sizes) largest = std::max(largest, n);
    check_memory(memory_need(s, user_input, gpu != nullptr, pool.threads()), host_available_bytes(),
                 gpu ? std::optional<double>(double(gpu->free_memory_bytes())) : std::nullopt,
                 fmt::format("n = {}", largest));
  }
  std::map<std::string, ThroughputJob> throughput_jobs;
  MatrixRunner runner(s, gpu, user_kernels, &serialise, pool, clock, &throughput_jobs);
  if (user_input && user_input->keep_references) runner.user_references_ = &result.user_references;
  if (gpu) {
    // The yardsticks, measured once in this process (docs/spec.md, "Metrics").
    const auto scope = timed(clock, Phase::throughput);
    const std::int64_t yard_n = std::int64_t(1) << 26;
    runner.cub_gbps_ = gpu->time_cub_sum_fp32(yard_n).gbps;
    runner.copy_gbps_ = gpu->time_copy(std::size_t(yard_n) * 4).gbps;
  }

  const std::size_t inputs = user_input ? 1 : jobs.size();
  std::vector<std::vector<Cell>> per_input(inputs);
  std::atomic<std::size_t> next{0};
  auto run_inputs = [&] {
    for (std::size_t j; (j = next.fetch_add(1)) < inputs;) {
      std::vector<Cell>& cells = per_input[j];
      try {
        InputCase in;
        {
          const auto scope = timed(clock, Phase::input);
          if (user_input) {
            in.dtype = user_input->values.dtype();
            in.distribution = user_input->name;
            in.n = std::int64_t(user_input->values.size());
            in.user_x = &user_input->values;
            // The norms' weights, one per column of the user's rows (a 1-D
            // file is one row): made only when a norm is measured.
            if (std::any_of(s.ops.begin(), s.ops.end(), is_elementwise_output)) {
              const std::int64_t cols = std::max<std::int64_t>(user_input->cols, 1);
              in.gamma = generate({Distribution::uniform, std::nullopt}, in.dtype, cols, 1).x;
              in.beta = generate({Distribution::normal, std::nullopt}, in.dtype, cols, 2).x;
            }
          } else {
            in = make_input(jobs[j].dtype, jobs[j].dist, jobs[j].n, jobs[j].seed, s.row_cols);
          }
        }
        runner.run_input(in, cells, problem_done);
      } catch (const std::exception& e) {
        Cell c;
        if (!user_input) {
          c.dtype = to_string(jobs[j].dtype);
          c.distribution = jobs[j].dist.name();
          c.n = jobs[j].n;
          c.seed = jobs[j].seed;
        }
        c.status = std::string("failed: ") + e.what();
        cells.push_back(std::move(c));
      }
    }
  };
  // One GPU: its inputs one after another. On the CPU models, as many inputs
  // at once as the pool has threads, so that no core waits on one problem's
  // slowest part (its reference, its longest model run); their cells share
  // the pool. These threads only wait on the pool, never run its tasks.
  const std::size_t at_once = gpu ? 1 : std::min<std::size_t>(pool.threads(), inputs);
  std::vector<std::thread> input_threads;
  for (std::size_t t = 1; t < at_once; ++t) input_threads.emplace_back(run_inputs);
  run_inputs();
  for (auto& t : input_threads) t.join();
  for (auto& cells : per_input)
    for (auto& c : cells) result.cells.push_back(std::move(c));
  if (progress.update && done < total) progress.update(total, total);
  if (gpu && s.throughput_n > 0 && !throughput_jobs.empty())
    measure_throughput(s, *gpu, runner, throughput_jobs, result.cells, pool, clock);
  return result;
}

}  // namespace ulpscope
