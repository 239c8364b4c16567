#include "accuracy/matrix_throughput.hpp"

#include <algorithm>
#include <exception>
#include <future>
#include <variant>

#include "accuracy/kernel_under_test.hpp"
#include "accuracy/matrix_input.hpp"
#include "kernels/model.hpp"

namespace ulpscope::matrix {
namespace {

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

}  // namespace

std::string throughput_key(const Cell& c) {
  return c.op + '|' + c.dtype + '|' + c.out_dtype + '|' + c.accumulator + '|' + c.shape + '|' + c.axis;
}

void set_throughput(Cell& c, const GpuBackend::Timing& t, std::int64_t n, const Yardsticks& yardsticks) {
  c.gbps = t.gbps;
  c.throughput_n = n;
  if (yardsticks.cub_gbps > 0) c.fraction_of_cub = t.gbps / yardsticks.cub_gbps;
  if (yardsticks.copy_gbps > 0) c.fraction_of_copy = t.gbps / yardsticks.copy_gbps;
}

void measure_throughput(const MatrixSettings& s, GpuBackend& gpu, const Yardsticks& yardsticks,
                        const std::map<std::string, ThroughputJob>& jobs, std::vector<Cell>& cells, WorkPool& pool,
                        PhaseTimes* clock) {
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
          timings[key] = gpu.time(*job.spec, launch_configs(*job.spec, p.length(), gpu.info().shape()).front(), 3, 10);
        } else {
          const UserKernel& u = *job.user;
          if (u.isolated_device) {
            const KernelArgs args = kernel_args(u, host_arrays(p), nullptr, kernel_configs(u).front());
            timings[key] = u.isolated_device->time(args, 3, 10);
            continue;
          }
          const std::size_t bytes = std::size_t(output_count(u.op, p.axis, p.rows, p.cols)) * element_bytes(u.out);
          timings[key] = gpu.time_launch(user_launch(u, kernel_configs(u).front()), bytes,
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
      set_throughput(c, *it->second, rows * cols, yardsticks);
  }
}

}  // namespace ulpscope::matrix
