#include "reports/gallery_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <ostream>
#include <stdexcept>
#include <tuple>

#include "accuracy/distribution.hpp"
#include "kernels/gpu_backend.hpp"

namespace ulpscope {
namespace {

constexpr std::int64_t kTimingN = std::int64_t(1) << 24;  // the seeds' N = 16M

struct Variant {
  Op op;
  Accumulator acc;
};
// sum with the input's own format (naive; for fp32 inputs that is fp32), sum
// with fp32, max (selection: fp32 stands for all).
std::vector<Variant> variants(Dtype d) {
  if (d == Dtype::fp32) return {{Op::sum, Accumulator::fp32}, {Op::max, Accumulator::fp32}};
  return {{Op::sum, Accumulator::naive}, {Op::sum, Accumulator::fp32}, {Op::max, Accumulator::fp32}};
}

using Key = std::tuple<std::string, std::string, std::string, std::string>;  // dtype, shape, op, acc

void add_cell(GalleryRow& r, const Cell& c) {
  ++r.cells;
  if (c.status != "ok") {
    ++r.failed;
    return;
  }
  if (c.ulp_error) {
    r.max_ulp = std::max(r.max_ulp.value_or(0.0), *c.ulp_error);
    r.ulps.push_back(*c.ulp_error);
  } else {
    ++r.without_ulp;
  }
  r.correctly_rounded += c.correctly_rounded;
  r.max_distinct_runs = std::max(r.max_distinct_runs, c.distinct_results);
  r.max_distinct_configs = std::max(r.max_distinct_configs, c.distinct_across_configs);
  if (c.matches_model) {
    ++r.model_checked;
    r.matches_model += *c.matches_model;
  }
}

void time_rows(GalleryTable& t, GpuBackend& gpu) {
  t.timing_n = kTimingN;
  t.cub_fp32_gbps = gpu.time_cub_sum_fp32(kTimingN).gbps;
  std::optional<Dtype> uploaded;
  TypedArray x;
  for (GalleryRow& r : t.rows) {
    try {
      if (uploaded != r.dtype) {
        // Uniform values, never zeros (METHOD: "never time on zeros").
        x = generate({Distribution::uniform, std::nullopt}, r.dtype, kTimingN, 1).x;
        ReductionProblem p;
        p.op = Op::sum;
        p.rows = 1;
        p.cols = kTimingN;
        p.x = &x;
        gpu.upload(p);
        uploaded = r.dtype;
      }
      const Shape shape = r.kernel == "cub" ? Shape::cub : *parse_in(kGalleryShapeNames, r.kernel);
      const KernelSpec spec{r.op, r.dtype, default_out_dtype(r.dtype), r.acc, shape};
      const GpuBackend::Timing tm = gpu.time(spec, LaunchConfig{}, 3, 10);
      r.ms = tm.median_ms;
      r.gbps = tm.gbps;
      if (t.cub_fp32_gbps && *t.cub_fp32_gbps > 0) r.fraction_of_cub = tm.gbps / *t.cub_fp32_gbps;
    } catch (const GpuError& e) {
      r.note = std::string("timing failed: ") + e.what();
    }
  }
}

std::string number(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("unknown");
}

std::string ulp_text(const GalleryRow& r) {
  std::string s = r.max_ulp ? fmt::format("{:.4g}", *r.max_ulp) : std::string("-");
  if (r.without_ulp) s += fmt::format(" (+{} without)", r.without_ulp);
  return s;
}

std::string median_text(const GalleryRow& r) {
  if (r.ulps.empty()) return "-";
  std::vector<double> v = r.ulps;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return fmt::format("{:.3g}", v[v.size() / 2]);
}

std::string model_text(const GalleryRow& r) {
  if (r.model_checked == 0) return "-";
  return fmt::format("{}/{}", r.matches_model, r.model_checked);
}

std::vector<std::string> row_cells(const GalleryRow& r) {
  const int ok = r.cells - r.failed;
  return {r.kernel,
          std::string(to_string(r.op)),
          std::string(to_string(r.acc)),
          number(r.ms, "{:.3f}"),
          number(r.gbps, "{:.1f}"),
          number(r.fraction_of_cub, "{:.2f}"),
          median_text(r),
          ulp_text(r),
          fmt::format("{}/{}", r.correctly_rounded, ok),
          std::to_string(r.max_distinct_runs),
          std::to_string(r.max_distinct_configs),
          model_text(r) + (r.failed ? fmt::format(" ({} failed)", r.failed) : std::string())};
}

const std::vector<std::string> kHeader = {"kernel",  "op",     "acc",        "time ms",  "GB/s",        "x cub",
                                          "median ulp", "max ulp", "CR",     "runs",       "configs",  "GPU = model"};

std::string heading(const GalleryTable& t, Dtype d) {
  const std::string timing = t.backend == "cpu"
                                 ? "timing needs a GPU: unknown on the CPU models"
                                 : fmt::format("timing: n = {}, uniform inputs, median of 10 launches; cub::DeviceReduce::Sum "
                                               "fp32 {:.1f} GB/s",
                                               t.timing_n, t.cub_fp32_gbps.value_or(0.0));
  return fmt::format("Seed gallery, {} inputs, {} ({}); {}", to_string(d), t.device, t.backend, timing);
}

void write_text(const GalleryTable& t, std::ostream& out, bool markdown) {
  std::vector<std::size_t> width(kHeader.size());
  for (std::size_t i = 0; i < kHeader.size(); ++i) width[i] = kHeader[i].size();
  for (const GalleryRow& r : t.rows) {
    const auto cells = row_cells(r);
    for (std::size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = markdown ? "|" : "";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const bool left = i < 3;
      s += markdown ? " " : (i ? "  " : "");
      s += left ? fmt::format("{:<{}}", cells[i], width[i]) : fmt::format("{:>{}}", cells[i], width[i]);
      s += markdown ? " |" : "";
    }
    out << s << '\n';
  };
  std::optional<Dtype> current;
  for (const GalleryRow& r : t.rows) {
    if (current != r.dtype) {
      if (current) out << '\n';
      out << (markdown ? "### " : "") << heading(t, r.dtype) << "\n";
      if (markdown) out << '\n';
      line(kHeader);
      if (markdown) {
        std::vector<std::string> rule;
        for (std::size_t i = 0; i < width.size(); ++i) rule.push_back(std::string(width[i], '-'));
        line(rule);
      }
      current = r.dtype;
    }
    line(row_cells(r));
    if (!r.note.empty()) out << "    " << r.kernel << ": " << r.note << '\n';
  }
  out << '\n' << t.settings << '\n'
      << "median ulp, max ulp: the median and worst ULP error against the exact value (\"+k without\": cells with no ULP number, a NaN or "
         "infinite result or reference); CR: correctly rounded cells; runs, "
         "configs: most distinct results over repeated runs and over launch configurations; GPU = model: cells "
         "whose GPU bits equal the CPU model's (atomics have no fixed order: not checked).\n";
}

void write_json(const GalleryTable& t, std::ostream& out) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json rows = nlohmann::json::array();
  for (const GalleryRow& r : t.rows)
    rows.push_back({{"dtype", std::string(to_string(r.dtype))},
                    {"kernel", r.kernel},
                    {"op", std::string(to_string(r.op))},
                    {"accumulator", std::string(to_string(r.acc))},
                    {"cells", r.cells},
                    {"failed", r.failed},
                    {"max_ulp_error", opt(r.max_ulp)},
                    {"ulp_errors", r.ulps},
                    {"cells_without_ulp", r.without_ulp},
                    {"correctly_rounded", r.correctly_rounded},
                    {"max_distinct_results", r.max_distinct_runs},
                    {"max_distinct_across_configs", r.max_distinct_configs},
                    {"matches_model", r.matches_model},
                    {"model_checked", r.model_checked},
                    {"median_ms", opt(r.ms)},
                    {"gbps", opt(r.gbps)},
                    {"fraction_of_cub", opt(r.fraction_of_cub)},
                    {"note", r.note}});
  const nlohmann::json j = {{"schema", "ulpscope.gallery/1"},
                            {"backend", t.backend},
                            {"device", t.device},
                            {"timing_n", t.backend == "cpu" ? nlohmann::json(nullptr) : nlohmann::json(t.timing_n)},
                            {"cub_fp32_gbps", opt(t.cub_fp32_gbps)},
                            {"settings", t.settings},
                            {"rows", rows}};
  out << j.dump(2) << '\n';
}

}  // namespace

MatrixSettings gallery_matrix(const std::vector<Dtype>& dtypes, bool gpu) {
  MatrixSettings s = default_matrix(false);  // its adversarial distributions
  s.ops = {Op::sum, Op::max};
  s.dtypes = dtypes;
  s.accumulators = {Accumulator::naive, Accumulator::fp32};
  s.shapes.clear();
  for (const auto& [shape, name] : kGalleryShapeNames) s.shapes.push_back(shape);
  if (gpu) s.shapes.push_back(Shape::cub);
  s.sizes = {4097, (1 << 20) + 3};
  s.seeds = {1};
  s.axes = {Axis::all};
  s.runs = 5;
  s.permutations = 2;
  s.throughput_n = 0;  // timed by time_rows, at the seeds' N
  return s;
}

GalleryTable gallery_table(const std::vector<Dtype>& dtypes, GpuBackend* gpu, const MatrixProgress& progress,
                           PhaseTimes* clock) {
  for (Dtype d : dtypes)
    if (d != Dtype::fp32 && d != Dtype::fp16 && d != Dtype::bf16)
      throw std::invalid_argument("the seed gallery takes fp32, fp16 and bf16 inputs, not " +
                                  std::string(to_string(d)));
  const MatrixSettings s = gallery_matrix(dtypes, gpu != nullptr);
  const MatrixRun run = run_matrix(s, gpu, progress, std::nullopt, {}, clock);

  GalleryTable t;
  t.backend = gpu ? "cuda" : "cpu";
  t.device = gpu ? gpu->info().name : "CPU models";
  std::vector<std::string> sizes;
  for (auto n : s.sizes) sizes.push_back(std::to_string(n));
  t.settings = fmt::format("Each row: {} distributions x n in {{{}}}, seed 1, {} runs on {}, {} launch configurations.",
                           s.distributions.size(), fmt::join(sizes, ", "), s.runs,
                           gpu ? "the GPU" : "the models (atomic orders drawn per run)", 4);

  std::map<Key, GalleryRow> rows;
  for (const Cell& c : run.cells) add_cell(rows[Key{c.dtype, c.shape, c.op, c.accumulator}], c);
  std::vector<std::string> kernels;
  for (const auto& [shape, name] : kGalleryShapeNames) kernels.emplace_back(name);
  if (gpu) kernels.emplace_back("cub");
  for (Dtype d : dtypes)
    for (const std::string& k : kernels)
      for (const Variant& v : variants(d)) {
        const auto it = rows.find(Key{std::string(to_string(d)), k, std::string(to_string(v.op)),
                                      std::string(to_string(v.acc))});
        if (it == rows.end()) continue;  // a combination this backend does not run (cub's accumulators)
        GalleryRow r = it->second;
        r.dtype = d;
        r.kernel = k;
        r.op = v.op;
        r.acc = v.acc;
        if (!gpu) r.note.clear();
        t.rows.push_back(r);
      }
  if (gpu) {
    const auto scope = timed(clock, Phase::throughput);
    time_rows(t, *gpu);
  }
  return t;
}

void write_gallery(const GalleryTable& t, const std::string& format, std::ostream& out) {
  if (format == "json") return write_json(t, out);
  if (format == "table" || format == "md") return write_text(t, out, format == "md");
  throw std::invalid_argument("--gallery writes table, md or json, not " + format);
}

}  // namespace ulpscope
