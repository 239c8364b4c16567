// The run matrix (docs/spec.md, "The default matrix and `--full`"): every input, every
// problem it gives, every kernel on it, each cell measured by the same code
// (MatrixRunner). Its parts: matrix_settings.cpp, matrix_input.hpp,
// matrix_plan.hpp, kernel_under_test.hpp, shared_references.hpp,
// cell_scoring.hpp, matrix_throughput.hpp.
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

#include "accuracy/cell_scoring.hpp"
#include "accuracy/kernel_under_test.hpp"
#include "accuracy/matrix_input.hpp"
#include "accuracy/matrix_plan.hpp"
#include "accuracy/matrix_throughput.hpp"
#include "accuracy/memory_budget.hpp"
#include "accuracy/metrics.hpp"
#include "accuracy/shared_references.hpp"
#include "accuracy/work_pool.hpp"
#include "formats/round_to_dtype.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/index_permutation.hpp"
#include "kernels/model.hpp"
#include "reference/mpfr_thread_caches.hpp"

namespace ulpscope {
namespace {

using namespace matrix;

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
        if (unavailable_on(spec, p.axis, gpu_ != nullptr)) continue;
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
          const ReductionResult first = std::move(c.runs.first);  // the scored rows' outputs
          score(c.cell, c.kut, c.out_dtype, first, reference_problem, refs.get(c.out_dtype), scored.get(), ideal,
                s_.saturation);
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
    k.configs = launch_configs(spec, p.length(), gpu_ ? gpu_->info().shape() : kReferenceDevice);
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
    if (!gpu)
      k.run_into = [spec](const ReductionProblem& q, const LaunchConfig& cfg, std::uint64_t run, ReductionResult& into) {
        run_model_into(spec, q, cfg, run, into);
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

  bool runs_here(const UserKernel& u) const { return (gpu_ && has_device_form(u)) || u.run_host || u.model; }

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
    k.on_gpu = gpu_ && has_device_form(u);
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
    if (u.isolated_device) {
      // Another process's device, given the host arrays (permuted ones too).
      k.reads_host_problem = true;
      k.run = [this, &u](const ReductionProblem& q, const LaunchConfig& cfg, std::uint64_t) {
        return call_host(u, u.isolated_device->run, q, cfg);
      };
    } else {
      k.run = [gpu, &u, count, bytes](const ReductionProblem&, const LaunchConfig& cfg, std::uint64_t) {
        const auto got = gpu->run_launch(user_launch(u, cfg), bytes, u.name);
        return ReductionResult{decode_outputs(got.data(), u.out, count), {}, {}};
      };
    }
    if (u.model)
      k.matches_model = [this, &u](const ReductionProblem& q, const LaunchConfig& cfg, std::uint64_t got) {
        return results_digest(call_host(u, u.model, q, cfg).values) == got;
      };
    if (timed_here(p) && u.isolated_device)
      k.time = [&u, args = kernel_args(u, host_arrays(p), nullptr, k.configs.front())] {
        return u.isolated_device->time(args, 3, 10);
      };
    else if (timed_here(p))
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
    ReductionResult reused;  // the runs kept only as digests (run_into)
    for (std::size_t ci = 0; ci < kut.configs.size(); ++ci) {
      for (int r = 0; r < (ci == 0 ? kut.runs : 1); ++r) {
        ReductionResult part;
        std::uint64_t digest = 0;
        // The first run is scored, and each launch's first is compared with
        // the model where there is one; the others are only digested.
        const bool digest_only = (ci > 0 || r > 0) && !(r == 0 && kut.matches_model);
        if (kut.run_into && digest_only) {
          kut.run_into(p, kut.configs[ci], std::uint64_t(r), reused);
          digest = results_digest(reused.values);
        } else if (kut.run_digested) {
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
    // A permuted scan is another problem: its prefixes are other sums.
    if (s_.permutations <= 0 || p.length() <= 1 || is_scan(p.op)) return;
    const bool host_cells = std::any_of(cells.begin(), cells.end(),
                                        [](const PendingCell& c) {
                                          return !c.failure && (!c.kut.on_gpu || c.kut.reads_host_problem);
                                        });
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
    if (k.timing && k.timing->bytes_per_run > 0) set_throughput(c, *k.timing, c.n, yardsticks_);
  }

 public:
  Yardsticks yardsticks_;
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
    runner.yardsticks_.cub_gbps = gpu->time_cub_sum_fp32(yard_n).gbps;
    runner.yardsticks_.copy_gbps = gpu->time_copy(std::size_t(yard_n) * 4).gbps;
  }

  const std::size_t inputs = user_input ? 1 : jobs.size();
  std::vector<std::vector<Cell>> per_input(inputs);
  std::atomic<std::size_t> next{0};
  auto run_inputs = [&] {
    free_mpfr_caches_at_thread_exit();
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
    measure_throughput(s, *gpu, runner.yardsticks_, throughput_jobs, result.cells, pool, clock);
  return result;
}

}  // namespace ulpscope
