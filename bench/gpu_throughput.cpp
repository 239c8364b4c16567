// gpu_throughput: the GPU throughput table of docs/spec.md ("Metrics") in one
// process: every GPU shape x input format x accumulator that this build has,
// in input bytes read per second and as a fraction of cub::DeviceReduce::Sum
// on fp32 and of a device-to-device copy, both measured in the same run
// (before and after the table, so that drift shows). Unavailable kernels are
// listed with their reason, never dropped; an out-of-memory size is skipped
// with its reason; a failing launch marks its row failed.
//
//   gpu_throughput [--n 268435456] [--ops sum,dot] [--json out.json] [--csv out.csv]
//   gpu_throughput --ops rmsnorm,sumsq --cols 4096 --axis inner   # rows of 4096
//   gpu_throughput --shapes tree --blocks 528 --threads 256   # one launch configuration for every tree kernel
//
// Host code only: everything on the device goes through GpuBackend.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "formats/dtype.hpp"
#include "formats/typed_array.hpp"
#include "kernels/counter_rng.hpp"
#include "kernels/gpu_backend.hpp"

namespace ulpscope {
namespace {

struct Row {
  Shape shape;
  Op op;
  Dtype in;
  Accumulator acc;
  std::optional<GpuBackend::Timing> timing;
  std::string status = "ok";  // "ok", "unavailable: ...", "skipped: ...", "failed: ..."
};

// Inputs: uniform values in [-scale, scale) from splitmix64 (Steele, Lea,
// Flood 2014), rounded to the format (fp8 saturating, as CUDA's types);
// throughput is measured on data that is not zeros (METHOD). --scale shows
// whether a kernel's speed depends on the inputs' range (the exact squares'
// fast path once tried did: docs/perf-h100.md). Filled by all cores,
// each thread its own slice.
TypedArray uniform_values(Dtype d, std::int64_t n, std::uint64_t seed, double scale) {
  TypedArray a(d, std::size_t(n));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::visit(
      [&](auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        std::vector<std::thread> pool;
        const std::int64_t chunk = (n + threads - 1) / threads;
        for (unsigned t = 0; t < threads; ++t)
          pool.emplace_back([&, t] {
            const std::int64_t lo = std::int64_t(t) * chunk, hi = std::min(n, lo + chunk);
            for (std::int64_t i = lo; i < hi; ++i) {
              const std::uint64_t z = mix64(seed + std::uint64_t(i) * kGoldenGamma);
              v[std::size_t(i)] = T(std::ldexp(double(std::int64_t(z >> 11)) - 0x1p52, -52) * scale);
            }
          });
        for (auto& th : pool) th.join();
      },
      a.data());
  return a;
}

std::string fmt_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Write through a temporary file and rename, so that a failure never leaves
// a half-written file.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

nlohmann::json timing_json(const std::optional<GpuBackend::Timing>& t) {
  if (!t) return nullptr;
  return {{"median_ms", t->median_ms}, {"min_ms", t->min_ms},     {"max_ms", t->max_ms},
          {"gbps", t->gbps},           {"timed_runs", t->timed_runs}, {"bytes_per_run", t->bytes_per_run},
          {"copies", t->copies},       {"exceeds_l2", t->exceeds_l2}};
}

template <class T>
std::vector<T> parse_list(const std::string& csv, T (*parse)(const std::string&)) {
  std::vector<T> out;
  std::stringstream ss(csv);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(parse(item));
  return out;
}

template <class E, std::size_t N>
E parse_name(const NameTable<E, N>& table, const std::string& s, const char* what) {
  if (auto e = parse_in(table, s)) return *e;
  throw CLI::ValidationError(std::string("--") + what, "unknown name '" + s + "' (accepted: " + names_of(table) + ")");
}

int run(int argc, char** argv) {
  CLI::App app{"GPU throughput of every shape x format x accumulator, against cub::DeviceReduce::Sum fp32"};
  std::int64_t n = std::int64_t(1) << 28;
  int warmup = 5, reps = 20;
  std::int64_t cols = 0;
  int blocks = 0, threads = 256;
  double scale = 1.0;
  std::string ops_arg = "sum", shapes_arg = "tree,atomic,cub,cub_deterministic", axis_arg = "inner", json_path,
              csv_path, dtypes_arg, accs_arg;
  app.add_option("--n", n, "elements per array (default 2^28)")->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 40));
  app.add_option("--warmup", warmup, "untimed launches first")->check(CLI::Range(0, 1000));
  app.add_option("--reps", reps, "timed launches (the median is reported)")->check(CLI::Range(1, 10000));
  app.add_option("--ops", ops_arg, "comma-separated ops (" + names_of(kOpNames) + ")");
  app.add_option("--shapes", shapes_arg, "comma-separated GPU shapes");
  app.add_option("--dtypes", dtypes_arg, "comma-separated input formats (default: all five)");
  app.add_option("--accumulators", accs_arg, "comma-separated accumulators (" + names_of(kAccumulatorNames) +
                                                 "; default: all)");
  app.add_option("--cols", cols, "row length: reduce [n / cols, cols] along --axis (default: the whole array)")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 40));
  app.add_option("--axis", axis_arg, "with --cols: inner (each row) or outer (each column)")
      ->check(CLI::IsMember({"inner", "outer"}));
  auto* blocks_opt = app.add_option("--blocks", blocks,
                 "tree and atomic kernels: blocks of the first pass (default: the first launch configuration of "
                 "kernels/model.cpp for each kernel)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--threads", threads, "with --blocks: threads per block")
      ->check(CLI::Range(32, 512) & CLI::Validator([](std::string& v) {
                return std::stoi(v) % 32 == 0 ? std::string() : std::string("a multiple of 32");
              }, "a multiple of 32"))
      ->needs(blocks_opt);
  app.add_option("--scale", scale,
                 "inputs uniform in [-scale, scale) (default 1), rounded to each format (fp8 saturating), to see "
                 "whether a kernel's speed depends on the inputs' range")
      ->check(CLI::Range(0x1p-16, 65504.0));  // fp16 stays finite
  app.add_option("--json", json_path, "also write the table as JSON to this file");
  app.add_option("--csv", csv_path, "also write the table as CSV to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help, or one line about the bad flag
  }
  std::vector<Op> ops;
  std::vector<Shape> shapes;
  std::vector<Dtype> dtypes(kInputDtypes.begin(), kInputDtypes.end());
  std::vector<Accumulator> accs;
  for (const auto& [acc, acc_name] : kAccumulatorNames) accs.push_back(acc);
  try {
    ops = parse_list<Op>(ops_arg, [](const std::string& s) { return parse_name(kOpNames, s, "ops"); });
    shapes = parse_list<Shape>(shapes_arg, [](const std::string& s) { return parse_name(kShapeNames, s, "shapes"); });
    if (!dtypes_arg.empty())
      dtypes = parse_list<Dtype>(dtypes_arg, [](const std::string& s) {
        const auto d = parse_dtype(s);
        if (!d || std::find(kInputDtypes.begin(), kInputDtypes.end(), *d) == kInputDtypes.end())
          throw CLI::ValidationError("--dtypes", "not an input format: '" + s + "'");
        return *d;
      });
    if (!accs_arg.empty())
      accs = parse_list<Accumulator>(accs_arg, [](const std::string& s) {
        return parse_name(kAccumulatorNames, s, "accumulators");
      });
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help, or one line about the bad flag
  }
  const Axis axis = cols == 0 ? Axis::all : *parse_in(kAxisNames, axis_arg);
  if (cols != 0 && n % cols != 0) {
    std::cerr << "gpu_throughput: --n " << n << " is not a multiple of --cols " << cols << "\n";
    return 2;
  }
  const std::int64_t n_rows = cols == 0 ? 1 : n / cols;
  if (cols == 0) cols = n;

  std::string why_not;
  auto gpu = GpuBackend::open(&why_not);
  if (!gpu) {
    std::cerr << "gpu_throughput: " << why_not << "\n";
    return 1;
  }
  const DeviceInfo& dev = gpu->info();

  auto yardsticks = [&](std::optional<GpuBackend::Timing>& sum, std::optional<GpuBackend::Timing>& copy,
                        std::string& sum_status, std::string& copy_status) {
    try {
      sum = gpu->time_cub_sum_fp32(n, warmup, reps);
    } catch (const GpuError& e) {
      sum_status = std::string("skipped: ") + e.what();
    }
    try {
      copy = gpu->time_copy(std::size_t(n) * sizeof(float), warmup, reps);
    } catch (const GpuError& e) {
      copy_status = std::string("skipped: ") + e.what();
    }
  };
  std::optional<GpuBackend::Timing> sum_before, copy_before, sum_after, copy_after;
  std::string sum_status = "ok", copy_status = "ok", sum_status_after = "ok", copy_status_after = "ok";
  yardsticks(sum_before, copy_before, sum_status, copy_status);

  std::vector<Row> rows;
  for (Op op : ops) {
    for (Dtype in : dtypes) {
      // One upload per format and op; every shape and accumulator reads it.
      std::vector<Row> pending;
      for (Shape shape : shapes)
        for (Accumulator acc : accs) {
          Row r{shape, op, in, acc, std::nullopt};
          const KernelSpec spec{op, in, default_out_dtype(in), acc, shape};
          if (auto why = GpuBackend::unavailable(spec, axis)) r.status = "unavailable: " + *why;
          pending.push_back(r);
        }
      const bool any = std::any_of(pending.begin(), pending.end(), [](const Row& r) { return r.status == "ok"; });
      std::string upload_status;
      if (any) {
        try {
          const TypedArray x = uniform_values(in, n, 1, scale);
          const TypedArray y = takes_second_input(op) ? uniform_values(in, n, 2, scale) : TypedArray();
          const bool norm = is_elementwise_output(op);
          const TypedArray gamma = norm ? uniform_values(in, cols, 3, scale) : TypedArray();
          const TypedArray beta = op == Op::layernorm ? uniform_values(in, cols, 4, scale) : TypedArray();
          ReductionProblem p;
          p.op = op;
          p.axis = axis;
          p.rows = n_rows;
          p.cols = cols;
          p.x = &x;
          p.y = takes_second_input(op) ? &y : nullptr;
          p.gamma = norm ? &gamma : nullptr;
          p.beta = op == Op::layernorm ? &beta : nullptr;
          gpu->upload(p);
        } catch (const GpuError& e) {
          upload_status = std::string("skipped: ") + e.what();
        }
      }
      for (Row& r : pending) {
        if (r.status == "ok" && !upload_status.empty()) r.status = upload_status;
        if (r.status == "ok") {
          const KernelSpec spec{op, in, default_out_dtype(in), r.acc, r.shape};
          // Each row's launches inside an NVTX range named for the row, so that a
          // profiler's records name their row (tools/perf_summary.py --ncu reads
          // ncu's instruction counts so); without a profiler attached the range
          // costs nothing (NVTX docs, "Overview").
          const std::string range = std::string(to_string(op)) + "/" + std::string(to_string(r.shape)) + "/" +
                                    std::string(to_string(r.acc)) + "/" + std::string(to_string(in));
          nvtxRangePushA(range.c_str());
          struct PopRange {
            ~PopRange() { nvtxRangePop(); }
          } pop;
          try {
            r.timing = gpu->time(spec, LaunchConfig{blocks, threads}, warmup, reps);
          } catch (const GpuError& e) {
            const std::string what = e.what();
            r.status = (what.rfind("out of memory", 0) == 0 ? "skipped: " : "failed: ") + what;
          }
        }
        rows.push_back(r);
      }
    }
  }
  yardsticks(sum_after, copy_after, sum_status_after, copy_status_after);

  // The table.
  auto fraction = [](const std::optional<GpuBackend::Timing>& t, const std::optional<GpuBackend::Timing>& base)
      -> std::optional<double> {
    if (!t || !base || base->gbps <= 0) return std::nullopt;
    return t->gbps / base->gbps;
  };
  auto yard_line = [&](const char* name, const std::optional<GpuBackend::Timing>& t, const std::string& status,
                       const char* unit) {
    std::cout << "- " << name << ": ";
    if (t) std::cout << fmt_fixed(t->median_ms, 4) << " ms, " << fmt_fixed(t->gbps, 1) << " GB/s " << unit;
    else std::cout << status;
    std::cout << "\n";
  };
  std::cout << "# GPU throughput, n = " << n << " elements"
            << (axis == Axis::all ? std::string() : ", [" + std::to_string(n_rows) + ", " + std::to_string(cols) +
                                                        "] along " + std::string(to_string(axis)))
            << "\n\n"
            << "- device: " << dev.name << " (sm_" << dev.cc_major << dev.cc_minor << ", " << dev.sm_count
            << " SMs, L2 " << dev.l2_bytes / (1 << 20) << " MiB), CCCL " << dev.cccl_version << "\n"
            << "- median of " << reps << " timed launches after " << warmup
            << " warm-up ones, CUDA events, inputs rotated above L2; inputs uniform in [-" << scale << ", " << scale << ")\n";
  if (blocks) std::cout << "- tree and atomic kernels launched with " << blocks << " blocks of " << threads << " threads\n";
  yard_line("cub::DeviceReduce::Sum fp32 (before)", sum_before, sum_status, "read");
  yard_line("cub::DeviceReduce::Sum fp32 (after)", sum_after, sum_status_after, "read");
  yard_line("device-to-device copy (before)", copy_before, copy_status, "read + written");
  yard_line("device-to-device copy (after)", copy_after, copy_status_after, "read + written");
  std::cout << "\n| shape | op | dtype | accumulator | median ms | GB/s read | of cub Sum fp32 | of copy | status |\n"
            << "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n";
  bool failed = false;
  for (const Row& r : rows) {
    const auto fc = fraction(r.timing, sum_before), fk = fraction(r.timing, copy_before);
    failed = failed || r.status.rfind("failed", 0) == 0;
    std::cout << "| " << to_string(r.shape) << " | " << to_string(r.op) << " | " << to_string(r.in) << " | "
              << to_string(r.acc) << " | " << (r.timing ? fmt_fixed(r.timing->median_ms, 4) : "") << " | "
              << (r.timing ? fmt_fixed(r.timing->gbps, 1) : "") << " | " << (fc ? fmt_fixed(*fc, 3) : "") << " | "
              << (fk ? fmt_fixed(*fk, 3) : "") << " | " << r.status << " |\n";
  }

  if (!json_path.empty() || !csv_path.empty()) {
    nlohmann::json j;
    j["schema"] = "ulpscope.gpu_throughput/1";
    j["device"] = {{"name", dev.name},         {"sm_count", dev.sm_count},     {"l2_bytes", dev.l2_bytes},
                   {"memory_bytes", dev.memory_bytes}, {"cc", std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor)},
                   {"cccl", dev.cccl_version}};
    j["n"] = n;
    j["axis"] = to_string(axis);
    j["rows"] = n_rows;
    j["cols"] = cols;
    j["warmup"] = warmup;
    j["reps"] = reps;
    j["input_scale"] = scale;
    if (blocks) j["launch"] = {{"blocks", blocks}, {"threads", threads}};  // absent: each kernel's default
    j["yardsticks"] = {{"cub_sum_fp32_before", timing_json(sum_before)},
                       {"cub_sum_fp32_after", timing_json(sum_after)},
                       {"copy_before", timing_json(copy_before)},
                       {"copy_after", timing_json(copy_after)}};
    std::ostringstream csv;
    csv << "shape,op,dtype,accumulator,n,median_ms,gbps,fraction_of_cub,fraction_of_copy,status\n";
    for (const Row& r : rows) {
      const auto fc = fraction(r.timing, sum_before), fk = fraction(r.timing, copy_before);
      nlohmann::json row = {{"shape", to_string(r.shape)}, {"op", to_string(r.op)},  {"dtype", to_string(r.in)},
                            {"accumulator", to_string(r.acc)}, {"n", n}, {"timing", timing_json(r.timing)},
                            {"fraction_of_cub", fc ? nlohmann::json(*fc) : nlohmann::json(nullptr)},
                            {"fraction_of_copy", fk ? nlohmann::json(*fk) : nlohmann::json(nullptr)},
                            {"status", r.status}};
      j["results"].push_back(row);
      std::string status = r.status;
      std::replace(status.begin(), status.end(), '"', '\'');
      csv << to_string(r.shape) << ',' << to_string(r.op) << ',' << to_string(r.in) << ',' << to_string(r.acc) << ','
          << n << ',' << (r.timing ? fmt_fixed(r.timing->median_ms, 6) : "") << ','
          << (r.timing ? fmt_fixed(r.timing->gbps, 3) : "") << ',' << (fc ? fmt_fixed(*fc, 4) : "") << ','
          << (fk ? fmt_fixed(*fk, 4) : "") << ",\"" << status << "\"\n";
    }
    if (!json_path.empty()) write_atomically(json_path, j.dump(2) + "\n");
    if (!csv_path.empty()) write_atomically(csv_path, csv.str());
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ulpscope

int main(int argc, char** argv) {
  try {
    return ulpscope::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gpu_throughput: " << e.what() << "\n";
    return 1;
  }
}
