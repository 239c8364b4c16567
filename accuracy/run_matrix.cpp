#include "accuracy/run_matrix.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "accuracy/counter_rng.hpp"
#include "accuracy/metrics.hpp"
#include "accuracy/problem_reference.hpp"
#include "formats/hex_float.hpp"
#include "formats/round_to_dtype.hpp"
#include "kernels/gpu_backend.hpp"
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
  };
  return j.dump();
}

MatrixSettings settings_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::invalid_argument("settings: not a JSON object");
  auto list = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_array()) throw std::invalid_argument(fmt::format("settings: no list '{}'", key));
    std::vector<std::string> out;
    for (const auto& v : j[key]) out.push_back(v.get<std::string>());
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
  MatrixSettings s;
  try {
    s.ops = enums("ops", kOpNames);
    s.accumulators = enums("accumulators", kAccumulatorNames);
    s.shapes = enums("shapes", kShapeNames);
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
    s.sizes = j.at("sizes").get<std::vector<std::int64_t>>();
    s.seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
    if (!j.at("out_dtype").is_null()) s.out_dtype = parse_dtype(j.at("out_dtype").get<std::string>());
    s.saturation = j.at("saturation").get<std::string>() == "nosat" ? Saturation::nosat : Saturation::satfinite;
    s.row_cols = j.at("row_cols").get<std::int64_t>();
    s.runs = j.at("runs").get<int>();
    s.permutations = j.at("permutations").get<int>();
    s.eps = j.at("eps").get<double>();
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
                 : std::vector<std::int64_t>{1023, (1 << 16) + 3};
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
  TypedArray x;
  std::optional<TypedArray> y;
  TypedArray gamma, beta;
  std::string note;
};

// A deterministic permutation of the problem's elements, applied to x and y alike: order[i] is the element
// that lands at i. Row-wise reductions are permuted within themselves; the
// norms, whose outputs are per element and whose gamma/beta are per column,
// permute the columns, the same way in every row.
TypedArray permuted(const TypedArray& a, const std::vector<std::int64_t>& order) {
  return std::visit(
      [&](const auto& v) {
        std::decay_t<decltype(v)> out(v.size());
        for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[std::size_t(order[i])];
        return TypedArray(std::move(out));
      },
      a.data());
}

// Fisher-Yates over 0..n-1, drawing from the project's counter-based
// generator (accuracy/counter_rng.hpp) so that the order is the same on every
// machine.
std::vector<std::int64_t> shuffled_indices(std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> order(std::size_t(std::max<std::int64_t>(n, 0)));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = std::int64_t(i);
  const CounterRng rng(seed, /*stream=*/0x9E3779B97F4A7C15ull);
  for (std::int64_t k = n - 1; k > 0; --k)
    std::swap(order[std::size_t(k)], order[std::size_t(rng.below(std::uint64_t(k), std::uint64_t(k + 1)))]);
  return order;
}

std::vector<std::int64_t> permutation(const ReductionProblem& p, std::uint64_t seed) {
  std::vector<std::int64_t> order(std::size_t(p.rows * p.cols));
  if (is_elementwise_output(p.op)) {
    const auto cols = shuffled_indices(p.cols, seed);
    for (std::int64_t r = 0; r < p.rows; ++r)
      for (std::int64_t k = 0; k < p.cols; ++k)
        order[std::size_t(r * p.cols + k)] = r * p.cols + cols[std::size_t(k)];
    return order;
  }
  const std::int64_t len = p.length();
  for (std::int64_t g = 0; g < p.reductions(); ++g) {
    const auto within = shuffled_indices(len, seed + std::uint64_t(g) * 0x632BE59BD9B4E019ull);
    for (std::int64_t k = 0; k < len; ++k) {
      // Element k of reduction g, and the one that lands there.
      auto index = [&](std::int64_t j) { return p.axis == Axis::outer ? j * p.cols + g : g * p.cols + j; };
      order[std::size_t(index(k))] = index(within[std::size_t(k)]);
    }
  }
  return order;
}

struct KernelRuns {
  std::vector<std::vector<double>> per_config;  // first run of each configuration
  std::vector<std::vector<double>> all_runs;    // every run of the default configuration
  ReductionResult first;
  std::optional<bool> matches_model;
  std::optional<GpuBackend::Timing> timing;
};

}  // namespace

namespace {

class MatrixRunner {
 public:
  MatrixRunner(const MatrixSettings& s, GpuBackend* gpu) : s_(s), gpu_(gpu) {}

  void run_input(const InputCase& in, std::vector<Cell>& out) {
    for (Op op : s_.ops) {
      if (takes_second_input(op) && !in.y) continue;
      // The norms normalise rows; the reductions run along the matrix's axes.
      const std::vector<Axis> axes = is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s_.axes;
      for (Axis axis : axes) {
        ReductionProblem p;
        p.op = op;
        p.axis = axis;
        p.x = &in.x;
        p.y = in.y ? &*in.y : nullptr;
        if (is_elementwise_output(op)) {  // the norms' weights, one per column
          p.gamma = &in.gamma;
          p.beta = &in.beta;
        }
        p.eps = s_.eps;
        if (axis == Axis::all) {
          p.rows = 1;
          p.cols = in.n;
        } else {
          p.cols = std::min<std::int64_t>(s_.row_cols, std::max<std::int64_t>(in.n, 1));
          p.rows = in.n / p.cols;
          if (p.rows * p.cols != std::int64_t(in.x.size())) continue;  // n not a multiple: whole-array ops only
        }
        const Dtype out_dtype = s_.out_dtype.value_or(default_out_dtype(in.dtype));
        run_op(in, p, out_dtype, out);
      }
    }
  }

 private:
  void run_op(const InputCase& in, const ReductionProblem& p, Dtype out_dtype, std::vector<Cell>& out) {
    std::optional<ProblemReference> ref;  // computed on first use, shared by every kernel
    std::string ref_error;
    if (gpu_) gpu_->upload(p);
    for (Accumulator acc : s_.accumulators) {
      for (Shape shape : s_.shapes) {
        const KernelSpec spec{p.op, in.dtype, out_dtype, acc, shape, s_.saturation};
        // Combinations that do not exist are not cells; NVIDIA's shapes have
        // no model and exist on the GPU only.
        if (has_cpu_model(shape) && unsupported(spec, p.axis)) continue;
        if (gpu_ ? bool(GpuBackend::unavailable(spec, p.axis)) : !has_cpu_model(shape)) continue;
        Cell c = blank_cell(in, p, spec);
        try {
          if (!ref && ref_error.empty()) {
            try {
              ref = compute_problem_reference(p, out_dtype, s_.saturation);
            } catch (const std::exception& e) {
              ref_error = e.what();
            }
          }
          if (!ref) throw std::runtime_error("reference: " + ref_error);
          measure(spec, p, *ref, c);
        } catch (const std::exception& e) {
          c.status = std::string("failed: ") + e.what();
        }
        out.push_back(std::move(c));
      }
    }
  }

  Cell blank_cell(const InputCase& in, const ReductionProblem& p, const KernelSpec& spec) const {
    Cell c;
    c.op = to_string(spec.op);
    c.dtype = to_string(spec.in);
    c.out_dtype = to_string(spec.out);
    c.accumulator = to_string(spec.acc);
    c.shape = to_string(spec.shape);
    c.distribution = in.distribution;
    c.n = p.rows * p.cols;
    c.seed = in.seed;
    c.axis = to_string(p.axis);
    if (p.axis != Axis::all) {
      c.rows = p.rows;
      c.cols = p.cols;
    }
    if (is_fp8(spec.out)) c.saturation = to_string(spec.sat);
    c.note = in.note;
    return c;
  }

  ReductionResult execute(const KernelSpec& spec, const ReductionProblem& p, const LaunchConfig& cfg,
                          std::uint64_t run) {
    if (gpu_) return gpu_->run(spec, cfg);
    return run_model(spec, p, cfg, run);
  }

  KernelRuns run_kernel(const KernelSpec& spec, const ReductionProblem& p) {
    KernelRuns k;
    const auto configs = launch_configs(spec, p.length());
    // The CPU models of deterministic shapes give the same bits on every run:
    // they are run once per configuration; the atomic model draws one order
    // of block partials per run.
    const bool repeat = gpu_ || !is_deterministic_order(spec.shape);
    const int runs = repeat ? std::max(1, s_.runs) : 1;
    for (std::size_t ci = 0; ci < configs.size(); ++ci) {
      for (int r = 0; r < (ci == 0 ? runs : 1); ++r) {
        ReductionResult res = execute(spec, p, configs[ci], std::uint64_t(r));
        if (ci == 0) k.all_runs.push_back(res.values);
        if (r == 0) k.per_config.push_back(res.values);
        if (ci == 0 && r == 0) k.first = std::move(res);
      }
      if (gpu_ && has_cpu_model(spec.shape) && model_is_bit_exact(spec)) {
        const ReductionResult model = run_model(spec, p, configs[ci]);
        const bool same = distinct_results({k.per_config.back(), model.values}) == 1;
        k.matches_model = k.matches_model.value_or(true) && same;
      }
    }
    if (gpu_) k.timing = gpu_->time(spec, configs.front(), 3, 10);
    return k;
  }

  void measure(const KernelSpec& spec, const ReductionProblem& p, const ProblemReference& ref, Cell& c) {
    KernelRuns k = run_kernel(spec, p);
    const ReductionResult& res = k.first;
    if (res.values.size() != ref.outputs.size())
      throw std::runtime_error(fmt::format("kernel gave {} outputs, the reference has {}", res.values.size(),
                                           ref.outputs.size()));
    // The worst output names the cell (SPEC.md, "Ops": several outputs).
    std::size_t worst = 0;
    double worst_rank = -1;
    std::optional<double> worst_ulps;
    std::string worst_note;
    bool all_cr = true;
    for (std::size_t i = 0; i < res.values.size(); ++i) {
      std::string note;
      const auto ulps = ulp_error(res.values[i], ref.outputs[i].exact, spec.out, &note);
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
      c.component = ref.component_name(worst);
      if (!res.unrounded.empty()) c.rel_error = rel_error(res.unrounded[worst], r.exact);
      c.condition = ref.condition(worst);
      c.bound_ratio = bound_ratio_of(spec, p, ref, res, worst);
    }
    c.correctly_rounded = all_cr;
    c.matches_model = k.matches_model;
    c.runs = int(k.all_runs.size());
    c.distinct_results = distinct_results(k.all_runs);
    c.configs = int(k.per_config.size());
    c.distinct_across_configs = distinct_results(k.per_config);
    if (s_.permutations > 0 && p.length() > 1) {
      std::vector<std::vector<double>> perm_results{res.values};
      for (int i = 1; i <= s_.permutations; ++i) perm_results.push_back(run_permuted(spec, p, std::uint64_t(i)));
      c.permutations = int(perm_results.size());
      c.distinct_across_permutations = distinct_results(perm_results);
    }
    if (k.timing) {
      c.gbps = k.timing->gbps;
      if (cub_gbps_ > 0) c.fraction_of_cub = k.timing->gbps / cub_gbps_;
      if (copy_gbps_ > 0) c.fraction_of_copy = k.timing->gbps / copy_gbps_;
    }
  }

  std::vector<double> run_permuted(const KernelSpec& spec, const ReductionProblem& p, std::uint64_t seed) {
    const auto order = permutation(p, seed);
    const TypedArray x = permuted(*p.x, order);
    std::optional<TypedArray> y, gamma, beta;
    if (p.y) y = permuted(*p.y, order);
    ReductionProblem q = p;
    q.x = &x;
    q.y = y ? &*y : nullptr;
    if (is_elementwise_output(p.op)) {
      // The column order of the first row is the order of every row.
      const std::vector<std::int64_t> cols(order.begin(), order.begin() + p.cols);
      if (p.gamma) q.gamma = &gamma.emplace(permuted(*p.gamma, cols));
      if (p.beta) q.beta = &beta.emplace(permuted(*p.beta, cols));
    }
    const LaunchConfig cfg = launch_configs(spec, p.length()).front();
    std::vector<double> v;
    if (gpu_) {
      gpu_->upload(q);
      v = gpu_->run(spec, cfg).values;
      gpu_->upload(p);
    } else {
      v = run_model(spec, q, cfg, 0).values;
    }
    if (!is_elementwise_output(p.op)) return v;
    // Per-element outputs follow their elements: put them back in place.
    std::vector<double> back(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) back[std::size_t(order[i])] = v[i];
    return back;
  }

  std::optional<double> bound_ratio_of(const KernelSpec& spec, const ReductionProblem& p, const ProblemReference& ref,
                                       const ReductionResult& res, std::size_t i) const {
    const auto cfg = launch_configs(spec, p.length()).front();
    const std::int64_t depth = addition_depth(spec, p.axis, p.length(), cfg);
    return ref.bound_ratio(spec, p, depth, res.values[i], i);
  }

 public:
  double cub_gbps_ = 0, copy_gbps_ = 0;

 private:
  const MatrixSettings& s_;
  GpuBackend* gpu_;
};

InputCase make_input(Dtype dtype, const DistributionSpec& dist, std::int64_t n, std::uint64_t seed,
                     std::int64_t row_cols) {
  InputCase in;
  in.dtype = dtype;
  in.distribution = dist.name();
  in.n = n;
  in.seed = seed;
  GeneratedInput g = generate(dist, dtype, n, seed, /*with_y=*/true);
  in.x = std::move(g.x);
  in.y = std::move(g.y);
  in.note = g.note;
  // The norms' weights: gamma in [0, 1), beta ~ N(0, 1), one per column.
  const std::int64_t cols = std::min<std::int64_t>(row_cols, std::max<std::int64_t>(n, 1));
  in.gamma = generate({Distribution::uniform, std::nullopt}, dtype, cols, seed ^ 0x6A09E667F3BCC908ull).x;
  in.beta = generate({Distribution::normal, std::nullopt}, dtype, cols, seed ^ 0xBB67AE8584CAA73Bull).x;
  return in;
}

}  // namespace

MatrixRun run_matrix(const MatrixSettings& s, GpuBackend* gpu, const MatrixProgress& progress,
                     const std::optional<UserInput>& user_input) {
  MatrixRun result;
  // Shapes this backend cannot run are listed, never silently dropped.
  for (Shape shape : s.shapes) {
    if (gpu) {
      if (auto why = GpuBackend::shape_unavailable(shape)) result.unavailable.emplace_back(to_string(shape), *why);
    } else if (!has_cpu_model(shape)) {
      result.unavailable.emplace_back(to_string(shape), "runs on the GPU only (NVIDIA's order, no CPU model)");
    }
  }

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
  const std::size_t total = user_input ? 1 : jobs.size();
  std::vector<std::vector<Cell>> per_job(total);
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;

  MatrixRunner proto(s, gpu);
  if (gpu) {
    // The yardsticks, measured once in this process (SPEC.md, "Metrics").
    const std::int64_t yard_n = std::int64_t(1) << 26;
    proto.cub_gbps_ = gpu->time_cub_sum_fp32(yard_n).gbps;
    proto.copy_gbps_ = gpu->time_copy(std::size_t(yard_n) * 4).gbps;
  }

  auto work = [&]() {
    MatrixRunner runner = proto;
    for (std::size_t j; (j = next.fetch_add(1)) < total;) {
      try {
        InputCase in;
        if (user_input) {
          in.dtype = user_input->values.dtype();
          in.distribution = user_input->name;
          in.n = std::int64_t(user_input->values.size());
          in.x = user_input->values;
        } else {
          in = make_input(jobs[j].dtype, jobs[j].dist, jobs[j].n, jobs[j].seed, s.row_cols);
        }
        if (user_input) {
          const std::int64_t cols = std::max<std::int64_t>(user_input->cols, 1);
          in.gamma = generate({Distribution::uniform, std::nullopt}, in.dtype, cols, 1).x;
          in.beta = generate({Distribution::normal, std::nullopt}, in.dtype, cols, 2).x;
        }
        runner.run_input(in, per_job[j]);
      } catch (const std::exception& e) {
        Cell c;
        if (!user_input) {
          c.dtype = to_string(jobs[j].dtype);
          c.distribution = jobs[j].dist.name();
          c.n = jobs[j].n;
          c.seed = jobs[j].seed;
        }
        c.status = std::string("failed: ") + e.what();
        per_job[j].push_back(std::move(c));
      }
      const std::size_t d = ++done;
      if (progress.update) {
        std::lock_guard lock(progress_mutex);
        progress.update(d, total);
      }
    }
  };
  // One GPU: its cells run one after another. On the CPU models, inputs run in
  // parallel on every core.
  const unsigned threads = gpu ? 1u : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, total); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& cells : per_job)
    for (auto& c : cells) result.cells.push_back(std::move(c));
  return result;
}

}  // namespace ulpscope
