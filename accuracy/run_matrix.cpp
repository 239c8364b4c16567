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
  // Whole numbers only, and no narrowing that would hide an absurd value
  // (issue 43); the ranges are settings_problem's.
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
    for (const auto& n : j.at("sizes")) {
      if (!n.is_number_integer()) throw std::invalid_argument("settings: size " + n.dump() + " is not a whole number");
      s.sizes.push_back(n.get<std::int64_t>());
    }
    s.seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
    if (!j.at("out_dtype").is_null()) {
      s.out_dtype = parse_dtype(j.at("out_dtype").get<std::string>());
      if (!s.out_dtype) throw std::invalid_argument("settings: unknown out_dtype " + j.at("out_dtype").dump());
    }
    const std::string saturation = j.at("saturation").get<std::string>();
    if (saturation != "nosat" && saturation != "satfinite")
      throw std::invalid_argument("settings: unknown saturation '" + saturation + "'");
    s.saturation = saturation == "nosat" ? Saturation::nosat : Saturation::satfinite;
    s.row_cols = integer("row_cols");
    s.runs = small("runs");
    s.permutations = small("permutations");
    s.eps = j.at("eps").get<double>();
    if (j.contains("user_kernels")) s.user_kernels = j.at("user_kernels").get<std::vector<std::string>>();
    if (j.contains("nondeterministic_kernels"))
      s.nondeterministic_kernels = j.at("nondeterministic_kernels").get<std::vector<std::string>>();
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
  // Whether a configuration's result equals the model's bits; empty where
  // there is no bit-exact model to compare with.
  std::function<bool(const ReductionProblem&, const LaunchConfig&, const std::vector<double>&)> matches_model;
  std::function<GpuBackend::Timing()> time;  // empty: not timed (CPU)
  // Measured error of output i over the a-priori bound; empty where the
  // kernel's algorithm is not known.
  std::function<std::optional<double>(const ProblemReference&, const ReductionProblem&, const ReductionResult&,
                                      std::size_t)>
      bound_ratio;
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

struct KernelRuns {
  std::vector<std::vector<double>> per_config;  // first run of each configuration
  std::vector<std::vector<double>> all_runs;    // every run of the default configuration
  ReductionResult first;
  std::optional<bool> matches_model;
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

// The references of one problem, computed on first use for each output
// format and shared by every kernel (built-in and user) that runs on it.
class SharedReferences {
 public:
  SharedReferences(const ReductionProblem& p, Saturation sat) : p_(p), sat_(sat) {}
  const ProblemReference& get(Dtype out) {
    auto it = refs_.find(out);
    if (it == refs_.end()) {
      try {
        it = refs_.emplace(out, compute_problem_reference(p_, out, sat_)).first;
      } catch (const std::exception& e) {
        it = refs_.emplace(out, std::string(e.what())).first;
      }
    }
    if (const auto* why = std::get_if<std::string>(&it->second)) throw std::runtime_error("reference: " + *why);
    return std::get<ProblemReference>(it->second);
  }

 private:
  const ReductionProblem& p_;
  Saturation sat_;
  std::map<Dtype, std::variant<ProblemReference, std::string>> refs_;
};

}  // namespace

namespace {

class MatrixRunner {
 public:
  MatrixRunner(const MatrixSettings& s, GpuBackend* gpu, const std::vector<UserKernel>& user_kernels,
               std::mutex* serialise)
      : s_(s), gpu_(gpu), user_kernels_(user_kernels), serialise_(serialise) {}

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
    SharedReferences refs(p, s_.saturation);
    if (gpu_) gpu_->upload(p);
    for (Accumulator acc : s_.accumulators) {
      for (Shape shape : s_.shapes) {
        const KernelSpec spec{p.op, in.dtype, out_dtype, acc, shape, s_.saturation};
        // Combinations that do not exist are not cells; NVIDIA's shapes have
        // no model and exist on the GPU only.
        if (has_cpu_model(shape) && unsupported(spec, p.axis)) continue;
        if (gpu_ ? bool(GpuBackend::unavailable(spec, p.axis)) : !has_cpu_model(shape)) continue;
        Cell c = blank_cell(in, p, out_dtype, std::string(to_string(acc)), std::string(to_string(shape)));
        measure_cell([&] { return builtin_kernel(spec, p); }, p, out_dtype, refs, c);
        out.push_back(std::move(c));
      }
    }
    for (const UserKernel& u : user_kernels_) {
      const auto axes = kernel_axes(u);
      if (u.op != p.op || u.in != in.dtype || std::find(axes.begin(), axes.end(), p.axis) == axes.end()) continue;
      if (!runs_here(u)) continue;  // listed as unavailable by run_matrix
      Cell c = blank_cell(in, p, u.out, u.accumulator, u.name);
      measure_cell([&] { return user_kernel(u, p); }, p, u.out, refs, c);
      out.push_back(std::move(c));
    }
  }

  template <class MakeKernel>
  void measure_cell(MakeKernel&& make, const ReductionProblem& p, Dtype out_dtype, SharedReferences& refs,
                    Cell& c) {
    try {
      const ProblemReference& ref = refs.get(out_dtype);
      measure(make(), p, out_dtype, ref, c);
    } catch (const std::exception& e) {
      c.status = std::string("failed: ") + e.what();
    } catch (...) {
      c.status = "failed: the kernel threw something that is not a std::exception";
    }
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

  KernelUnderTest builtin_kernel(const KernelSpec& spec, const ReductionProblem& p) const {
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
    if (gpu && has_cpu_model(spec.shape) && model_is_bit_exact(spec))
      k.matches_model = [spec](const ReductionProblem& q, const LaunchConfig& cfg, const std::vector<double>& got) {
        return distinct_results({got, run_model(spec, q, cfg).values}) == 1;
      };
    if (gpu) k.time = [gpu, spec, cfg = k.configs.front()] { return gpu->time(spec, cfg, 3, 10); };
    k.bound_ratio = bound_ratio_for(spec, k.configs.front());
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
    return ReductionResult{decode_outputs(bytes.data(), u.out, count), {}};
  }

  KernelUnderTest user_kernel(const UserKernel& u, const ReductionProblem& p) const {
    KernelUnderTest k;
    k.configs = kernel_configs(u);
    k.runs = std::max(1, s_.runs);
    k.on_gpu = gpu_ && u.run_device;
    if (u.error_bound_of) {
      // The bound of the built-in algorithm the user names, at the depth of
      // its order for the kernel's default configuration.
      const KernelSpec claimed{u.op, u.in, u.out, u.error_bound_of->first, u.error_bound_of->second, s_.saturation};
      k.bound_ratio = bound_ratio_for(claimed, k.configs.front());
    }
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
    auto launch_with = [&u](const LaunchConfig& cfg) {
      return [&u, cfg](const GpuBackend::UploadedArrays& a, void* out, void* stream) {
        u.run_device(kernel_args(u, a, out, cfg), stream);
      };
    };
    k.run = [gpu, &u, count, bytes, launch_with](const ReductionProblem&, const LaunchConfig& cfg, std::uint64_t) {
      const auto got = gpu->run_launch(launch_with(cfg), bytes, u.name);
      return ReductionResult{decode_outputs(got.data(), u.out, count), {}};
    };
    if (u.model)
      k.matches_model = [this, &u](const ReductionProblem& q, const LaunchConfig& cfg, const std::vector<double>& got) {
        return distinct_results({got, call_host(u, u.model, q, cfg).values}) == 1;
      };
    k.time = [gpu, &u, bytes, launch = launch_with(k.configs.front())] {
      return gpu->time_launch(launch, bytes, takes_second_input(u.op), 3, 10, u.name);
    };
    return k;
  }

  KernelRuns run_kernel(const KernelUnderTest& kut, const ReductionProblem& p) const {
    KernelRuns k;
    for (std::size_t ci = 0; ci < kut.configs.size(); ++ci) {
      for (int r = 0; r < (ci == 0 ? kut.runs : 1); ++r) {
        ReductionResult res = kut.run(p, kut.configs[ci], std::uint64_t(r));
        if (ci == 0) k.all_runs.push_back(res.values);
        if (r == 0) k.per_config.push_back(res.values);
        if (ci == 0 && r == 0) k.first = std::move(res);
      }
      if (kut.matches_model) {
        const bool same = kut.matches_model(p, kut.configs[ci], k.per_config.back());
        k.matches_model = k.matches_model.value_or(true) && same;
      }
    }
    if (kut.time) k.timing = kut.time();
    return k;
  }

  void measure(const KernelUnderTest& kut, const ReductionProblem& p, Dtype out_dtype, const ProblemReference& ref,
               Cell& c) {
    KernelRuns k = run_kernel(kut, p);
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
      const auto ulps = ulp_error(res.values[i], ref.outputs[i].exact, out_dtype, &note);
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
      if (kut.bound_ratio) c.bound_ratio = kut.bound_ratio(ref, p, res, worst);
    }
    c.correctly_rounded = all_cr;
    c.matches_model = k.matches_model;
    c.runs = int(k.all_runs.size());
    c.distinct_results = distinct_results(k.all_runs);
    c.configs = int(k.per_config.size());
    c.distinct_across_configs = distinct_results(k.per_config);
    if (s_.permutations > 0 && p.length() > 1) {
      std::vector<std::vector<double>> perm_results{res.values};
      for (int i = 1; i <= s_.permutations; ++i) perm_results.push_back(run_permuted(kut, p, std::uint64_t(i)));
      c.permutations = int(perm_results.size());
      c.distinct_across_permutations = distinct_results(perm_results);
    }
    // An empty input reads no bytes: its throughput is unknown, not 0 GB/s.
    if (k.timing && k.timing->bytes_per_run > 0) {
      c.gbps = k.timing->gbps;
      if (cub_gbps_ > 0) c.fraction_of_cub = k.timing->gbps / cub_gbps_;
      if (copy_gbps_ > 0) c.fraction_of_copy = k.timing->gbps / copy_gbps_;
    }
  }

  std::vector<double> run_permuted(const KernelUnderTest& kut, const ReductionProblem& p, std::uint64_t seed) {
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
    const LaunchConfig& cfg = kut.configs.front();
    std::vector<double> v;
    if (kut.on_gpu) {
      gpu_->upload(q);
      v = kut.run(q, cfg, 0).values;
      gpu_->upload(p);
    } else {
      v = kut.run(q, cfg, 0).values;
    }
    if (!is_elementwise_output(p.op)) return v;
    // Per-element outputs follow their elements: put them back in place.
    std::vector<double> back(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) back[std::size_t(order[i])] = v[i];
    return back;
  }

 public:
  double cub_gbps_ = 0, copy_gbps_ = 0;

 private:
  const MatrixSettings& s_;
  GpuBackend* gpu_;
  const std::vector<UserKernel>& user_kernels_;
  std::mutex* serialise_;  // calls of kernels that are not reentrant
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
                     const std::optional<UserInput>& user_input, const std::vector<UserKernel>& user_kernels) {
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
  const std::size_t total = user_input ? 1 : jobs.size();
  std::vector<std::vector<Cell>> per_job(total);
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;

  MatrixRunner proto(s, gpu, user_kernels, &serialise);
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
