#include "reports/cli_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "accuracy/distribution.hpp"
#include "accuracy/run_matrix.hpp"      // the default matrices, shown in --help
#include "accuracy/settings_check.hpp"  // the limits only (header)
#include "formats/named_enum.hpp"
#include "reports/report_format.hpp"

namespace ulpscope {
namespace {

// --dtype takes the formats' names and two groups.
constexpr NameTable<Dtype, 5> kInputDtypeNames = {{{Dtype::fp32, "fp32"},
                                                   {Dtype::fp16, "fp16"},
                                                   {Dtype::bf16, "bf16"},
                                                   {Dtype::fp8_e4m3, "fp8_e4m3"},
                                                   {Dtype::fp8_e5m2, "fp8_e5m2"}}};
constexpr NameTable<Dtype, 6> kOutDtypeNames = {{{Dtype::fp64, "fp64"},
                                                 {Dtype::fp32, "fp32"},
                                                 {Dtype::fp16, "fp16"},
                                                 {Dtype::bf16, "bf16"},
                                                 {Dtype::fp8_e4m3, "fp8_e4m3"},
                                                 {Dtype::fp8_e5m2, "fp8_e5m2"}}};
constexpr NameTable<Saturation, 2> kSaturationNames = {
    {{Saturation::satfinite, "satfinite"}, {Saturation::nosat, "nosat"}}};

// The flags that write one more output each, in the format they name.
constexpr std::array<std::pair<const char*, ReportFormat>, 4> kExtraOutputFlags = {
    {{"--json", ReportFormat::json}, {"--md", ReportFormat::md}, {"--html", ReportFormat::html},
     {"--csv", ReportFormat::csv}}};

struct UsageError {
  std::string message;
};

template <class E, std::size_t N>
E parse_one(const NameTable<E, N>& table, const std::string& flag, const std::string& value,
            const std::string& extra = "") {
  if (auto e = parse_in(table, value)) return *e;
  throw UsageError{fmt::format("unknown {} '{}' (accepted: {}{})", flag, value, names_of(table), extra)};
}

template <class E, std::size_t N>
std::vector<E> parse_list(const NameTable<E, N>& table, const std::string& flag,
                          const std::vector<std::string>& values) {
  std::vector<E> out;
  for (const auto& v : values) {
    const E e = parse_one(table, flag, v);
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

std::vector<Dtype> parse_dtypes(const std::vector<std::string>& values) {
  std::vector<Dtype> out;
  auto add = [&](Dtype d) {
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  };
  for (const auto& v : values) {
    if (v == "all") {
      for (Dtype d : kInputDtypes) add(d);
    } else if (v == "fp8") {
      add(Dtype::fp8_e4m3);
      add(Dtype::fp8_e5m2);
    } else {
      add(parse_one(kInputDtypeNames, "--dtype", v, ", fp8, all"));
    }
  }
  return out;
}

// "a, b, c" of anything with a to_string.
template <class T>
std::string joined(const std::vector<T>& values) {
  std::string out;
  for (const T& v : values) {
    if (!out.empty()) out += ", ";
    if constexpr (std::is_same_v<T, DistributionSpec>) out += v.name();
    else if constexpr (std::is_arithmetic_v<T>) out += fmt::to_string(v);
    else out += to_string(v);
  }
  return out;
}

// "all", "all but min", or the list, of the ops of a matrix.
std::string op_names(const std::vector<Op>& ops) {
  std::vector<Op> missing;
  for (const auto& [op, name] : kOpNames)
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) missing.push_back(op);
  if (missing.empty()) return "all";
  if (missing.size() <= 2) return "all but " + joined(missing);
  return joined(ops);
}

// "(default: X; --full: Y)", or "(default: X)" when --full keeps it.
std::string defaults(const std::string& normal, const std::string& full) {
  return normal == full ? fmt::format("(default: {})", normal) : fmt::format("(default: {}; --full: {})", normal, full);
}

// 2^26, 2^16+3: sizes from 2^14 up written as a power of two and what it is off by; smaller ones as numbers.
std::string size_name(std::int64_t n) {
  for (int k = 40; k >= 14; --k)
    if (const std::int64_t p = std::int64_t(1) << k; n >= p && n - p < 1024)
      return n == p ? fmt::format("2^{}", k) : fmt::format("2^{}+{}", k, n - p);
  return fmt::to_string(n);
}
std::string size_names(const std::vector<std::int64_t>& sizes) {
  std::string out;
  for (std::int64_t n : sizes) out += (out.empty() ? "" : ", ") + size_name(n);
  return out;
}

// The distributions of a matrix that carry a parameter ("ill_conditioned:1e8, ...").
std::string parameterised(const MatrixSettings& s) {
  std::vector<DistributionSpec> with;
  for (const DistributionSpec& d : s.distributions)
    if (d.param) with.push_back(d);
  return joined(with);
}

// The --help footer: every distribution in one line, the exit statuses, examples.
std::string help_footer() {
  std::string text = "Distributions (--dist; name:param sets a parameter; realistic or adversarial, as the verdict "
                     "groups them):\n";
  for (const DistributionSummary& d : kDistributionSummaries)
    text += fmt::format("  {:<19} {:<12} {}\n", to_string(d.d), to_string(d.group), d.summary);
  text += "\nExit status:\n"
          "  0  done\n"
          "  1  a cell failed, or the gate found a regression (--gate)\n"
          "  2  bad usage or input: one line on standard error, no output file written (docs/bad-inputs.md)\n"
          "\nExamples:\n"
          "  accuracy_report --dtype fp16                      the verdict for fp16 (--cells: every cell too)\n"
          "  accuracy_report --dtype all --json r.json --html r.html --md r.md\n"
          "                                                    one run, the text on stdout and three files\n"
          "  accuracy_report --op sum --dtype bf16 --n 2^20 --dist normal,ill_conditioned:1e12\n"
          "                                                    a smaller matrix\n"
          "  accuracy_report --recommend rmsnorm --dtype bf16 --hidden 4096\n"
          "                                                    the cheapest accumulator within --ulp-tolerance\n"
          "  accuracy_report --baseline base.json --gate --gate-summary summary.md\n"
          "                                                    re-run a stored report's matrix, exit 1 on a regression\n"
          "  accuracy_report --input x.npy --op sum            the correctly rounded sum of your own data\n";
  return text;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::int64_t> parse_size(const std::string& text) {
  constexpr std::int64_t kMax = kMaxSize;
  std::string_view s = text;
  if (s.empty()) return std::nullopt;
  if (s.size() > 2 && s.substr(0, 2) == "2^") {
    // 2^k, optionally followed by +c or -c.
    const std::size_t op = s.find_first_of("+-", 2);
    const auto k = parse_u64(s.substr(2, op == std::string_view::npos ? s.npos : op - 2));
    if (!k || *k > 40) return std::nullopt;
    std::int64_t v = std::int64_t(1) << *k;
    if (op != std::string_view::npos) {
      const auto c = parse_u64(s.substr(op + 1));
      if (!c || *c > std::uint64_t(kMax)) return std::nullopt;
      v = s[op] == '+' ? v + std::int64_t(*c) : v - std::int64_t(*c);
    }
    if (v < 0 || v > kMax) return std::nullopt;
    return v;
  }
  if (auto v = parse_u64(s)) {
    if (*v > std::uint64_t(kMax)) return std::nullopt;
    return std::int64_t(*v);
  }
  // 1e6 style: a whole number written with an exponent.
  const std::size_t e = s.find_first_of("eE");
  if (e != std::string_view::npos) {
    const auto mant = parse_u64(s.substr(0, e));
    const auto exp = parse_u64(s.substr(e + 1));
    if (!mant || !exp || *exp > 12) return std::nullopt;
    double v = double(*mant) * std::pow(10.0, double(*exp));
    if (v > double(kMax)) return std::nullopt;
    return std::int64_t(v);
  }
  return std::nullopt;
}

std::variant<CliOptions, CliExit> parse_cli(int argc, const char* const* argv) {
  CliOptions o;
  for (int i = 0; i < argc; ++i) {
    if (i) o.command_line += ' ';
    o.command_line += argv[i];
  }

  CLI::App app{
      "ulpscope accuracy_report: accuracy (ULPs against exact MPFR references), reproducibility and "
      "throughput of GPU reductions, side by side.\nLists are comma-separated.",
      "accuracy_report"};
  app.set_version_flag("--version", std::string("ulpscope ") + ULPSCOPE_VERSION);
  app.get_formatter()->column_width(34);
  app.footer(help_footer());
  const MatrixSettings normal = default_matrix(false), full = default_matrix(true);

  std::vector<std::string> dtypes, ops, accs, shapes, sizes, seeds;
  AllreduceCliText allreduce_text;
  std::string throughput_n, eps;
  std::string backend = "auto", out_dtype, saturation, axis, recommend, rows, cols;
  const auto list = [&](const char* name, std::vector<std::string>& into, const std::string& help) {
    return app.add_option(name, into, help)->delimiter(',')->type_name("LIST");
  };
  list("--dtype", dtypes,
       "Input formats: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, fp8 (both), all " +
           defaults(joined(normal.dtypes), joined(full.dtypes)))
      ->group("Matrix");
  list("--op", ops,
       "Ops: " + names_of(kOpNames) + " " + defaults(op_names(normal.ops), op_names(full.ops)) +
           "; the all-reduce family, alone: allreduce_sum, allreduce_mean")
      ->group("Matrix");
  list("--accumulator", accs,
       "Accumulators: " + names_of(kAccumulatorNames) + " (default: all)")
      ->group("Matrix");
  list("--shape", shapes,
       "Kernel shapes: " + names_of(kShapeNames) + " (default: all); scans (--op cumsum; its default): serial, " +
           names_of(kScanShapeNames) + ", cub; or seed-gallery kernels by name: " + names_of(kGalleryShapeNames))
      ->group("Matrix");
  list("--dist", o.distributions,
       "Distributions, listed below (name or name:param) " +
           defaults("all, with " + parameterised(normal), "all, with " + parameterised(full)))
      ->group("Matrix");
  list("--n", sizes,
       "Sizes: 1024, 1e6, 2^20, 2^20+3 (repeats are dropped) " +
           defaults(size_names(normal.sizes), size_names(full.sizes)))
      ->group("Matrix");
  list("--seed", seeds, "Seeds of the input generator " + defaults(joined(normal.seeds), joined(full.seeds)))
      ->group("Matrix");
  app.add_option("--out-dtype", out_dtype, "Output format (default: the input's; fp32 for fp8 inputs): fp64, " +
                                               names_of(kInputDtypeNames))
      ->group("Matrix");
  app.add_option("--saturation", saturation,
                 fmt::format("fp8 outputs beyond the largest finite value: satfinite, nosat (default {})",
                             name_in(kSaturationNames, normal.saturation)))
      ->group("Matrix");
  app.add_option("--axis", axis,
                 "Reduced dimension: all (whole array), inner (rows), outer (columns) " +
                     defaults(joined(normal.axes), joined(full.axes)))
      ->group("Matrix");
  app.add_option("--rows", rows, "Rows of a row-wise problem ([rows, cols])")->group("Matrix");
  app.add_option("--cols", cols, fmt::format("Columns of a row-wise problem ([rows, cols]) (default {})", normal.row_cols))
      ->group("Matrix");
  app.add_option("--eps", eps,
                 fmt::format("The eps of rms, rmsnorm and layernorm, inside the square root (default {}; PyTorch's "
                             "and llm.c's norms use 1e-5), passed to plug-ins as ulpscope_call.eps",
                             MatrixSettings{}.eps))
      ->type_name("EPS")
      ->group("Matrix");
  app.add_flag("--full", o.full, "The thorough matrix instead of the default one")->group("Matrix");
  app.add_option("--runs", o.runs,
                 "Repeated runs per launch configuration " + defaults(fmt::to_string(normal.runs), fmt::to_string(full.runs)))
      ->check(CLI::Range(1, kMaxRuns))
      ->group("Matrix");

  add_allreduce_options(app, allreduce_text);

  app.add_option("--throughput-n", throughput_n,
                 "Measure each GPU kernel's throughput at this many elements, once, where smaller cells cannot "
                 "reach bandwidth (default " + size_name(normal.throughput_n) + "; 0: not measured)")
      ->type_name("N")
      ->group("Running");
  app.add_option("--backend", backend, "auto (CUDA when a GPU is present), cuda, cpu (the CPU models) (default auto)")
      ->group("Running");
  app.add_option("--format", o.format,
                 "The main output: " + names_of(kReportFormatNames) + " (default: table, or what --out's name ends with)")
      ->group("Output");
  app.add_option("--out", o.out_path,
                 "Write the main output to FILE (atomically) instead of standard output; a name ending .json, .md, "
                 ".html, .csv or .txt picks the format, and must agree with --format")
      ->type_name("FILE")
      ->group("Output");
  app.add_flag("--cells", o.cells, "The text table lists every cell after the verdict (JSON and CSV always have them)")
      ->group("Output");
  std::array<std::string, kExtraOutputFlags.size()> extra_paths;
  for (std::size_t i = 0; i < kExtraOutputFlags.size(); ++i)
    app.add_option(kExtraOutputFlags[i].first, extra_paths[i],
                   fmt::format("Also write the report as {} to FILE (atomically), in the same run",
                               to_string(kExtraOutputFlags[i].second)))
        ->type_name("FILE")
        ->group("Output");
  app.add_option("--input", o.input_path,
                 "Measure a user's data: a .npy file, or raw little-endian binary with --dtype and --n; "
                 "float64 .npy data is rounded to fp32 unless --dtype says otherwise; 16- and 8-bit integer or "
                 "void data is read as the bit patterns of --dtype; any conversion is said on stderr and in the report")
      ->type_name("FILE")
      ->group("Input");
  std::vector<std::string> checks;
  app.add_option("--check", checks,
                 "Score values you got elsewhere (PyTorch, NumPy) for the --input's one --op (sum, mean, norm2, "
                 "...): decimal or hex-float, inf, nan; ULPs against the same reference, correctly rounded or not")
      ->type_name("V1,V2,...")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("Input");
  app.add_option("--kernel-lib", o.kernel_libs,
                 "Measure the kernels a plug-in library exports (plugin/ulpscope_plugin.h); repeatable")
      ->type_name("FILE")
      ->group("Input");
  app.add_option("--kernel-timeout", o.kernel_timeout,
                 "Seconds a plug-in's call may take (default 60); host calls run in a child process, device calls "
                 "in ulpscope-kernel-host (its own CUDA context), so a crash, exit, abort, hang, CUDA error or write "
                 "past its output fails that cell only; 0: in this process, no limit")
      ->type_name("SECONDS")
      ->group("Input");
  app.add_flag("-q,--quiet", o.quiet, "No progress bar")->group("Output");
  app.add_flag("--phase-times", o.phase_times,
               "Print where the run's time went (inputs, references, kernel runs, model checks, ...) on standard "
               "error")
      ->group("Output");
  app.add_flag("--gallery", o.gallery,
               "The seed gallery's table (v1..v6, atomics, cg, cluster, two-stage): speed next to accuracy and "
               "determinism, for --dtype fp32, fp16, bf16 (default: all three)")
      ->group("Gallery");

  app.add_option("--baseline", o.baseline_path, "A JSON report to compare with")->type_name("FILE")->group("Gate");
  app.add_option("--current", o.current_path, "Compare this JSON report instead of re-running")
      ->type_name("FILE")
      ->group("Gate");
  app.add_flag("--gate", o.gate, "Exit 1 when a cell regressed against --baseline")->group("Gate");
  app.add_option("--ulp-tolerance", o.ulp_tolerance,
                 "Allowed growth of ulp_error (gate, default 0); error budget (recommend, default 1)")
      ->group("Gate");
  app.add_option("--throughput-tolerance", o.throughput_tolerance,
                 "Allowed relative drop of throughput in [0, 1], e.g. 0.1 (gate)")
      ->group("Gate");
  app.add_option("--gate-summary", o.gate_summary_path,
                 "Write the gate's Markdown summary to FILE (also appended to $GITHUB_STEP_SUMMARY when set)")
      ->type_name("FILE")
      ->group("Gate");
  app.add_option("--label", o.label, "Name the current run (a commit, a branch) in the gate's summary")
      ->type_name("TEXT")
      ->group("Gate");
  app.add_option("--recommend", recommend, "Choose the accumulator for rmsnorm, layernorm, norm2 or sum")
      ->group("Recommend");
  app.add_option("--hidden", o.hidden, "Row width for --recommend")->check(CLI::PositiveNumber)->group("Recommend");
  std::string budget_metric;
  app.add_option("--budget-metric", budget_metric,
                 "What --ulp-tolerance is measured in for --recommend: accumulator (the accumulator's own error, "
                 "default for rmsnorm and layernorm, budget 2) or strict (ulp_error, budget 1)")
      ->group("Recommend");

  try {
    app.parse(argc, argv);
    o.dtypes = parse_dtypes(dtypes);
    try {
      o.allreduce = parse_allreduce_options(allreduce_text, ops);  // takes the family's names out of ops
    } catch (const std::invalid_argument& e) {
      throw UsageError{e.what()};
    }
    o.ops = parse_list(kOpNames, "--op", ops);
    o.accumulators = parse_list(kAccumulatorNames, "--accumulator", accs);
    // The seed gallery's teaching kernels run only when named (docs/gallery.md).
    for (const auto& v : shapes) {
      const auto parsed = parse_shape(v);
      const Shape sh = parsed ? *parsed
                              : parse_one(kShapeNames, "--shape", v,
                                          "; scan shapes: " + names_of(kScanShapeNames) +
                                              "; gallery kernels: " + names_of(kGalleryShapeNames));
      if (std::find(o.shapes.begin(), o.shapes.end(), sh) == o.shapes.end()) o.shapes.push_back(sh);
    }
    o.backend = parse_one(kBackendNames, "--backend", backend);
    if (!parse_in(kReportFormatNames, o.format))
      throw UsageError{fmt::format("unknown --format '{}' (accepted: {})", o.format, names_of(kReportFormatNames))};
    // --out's name picks the format, and may not contradict --format.
    if (const auto named = o.out_path.empty() ? std::nullopt : format_for_extension(o.out_path)) {
      if (app.count("--format") > 0 && to_string(*named) != o.format)
        throw UsageError{fmt::format("--out {} names a {} file but --format is {} (drop one of them)", o.out_path,
                                     to_string(*named), o.format)};
      o.format = std::string(to_string(*named));
    }
    for (std::size_t i = 0; i < kExtraOutputFlags.size(); ++i) {
      const auto& [flag, format] = kExtraOutputFlags[i];
      if (extra_paths[i].empty()) continue;
      if (const auto named = format_for_extension(extra_paths[i]); named && *named != format)
        throw UsageError{fmt::format("{} {} names a {} file (give it a .{} name)", flag, extra_paths[i],
                                     to_string(*named), to_string(format))};
      o.extra_outputs.push_back({flag, std::string(to_string(format)), extra_paths[i]});
    }
    // Split here, not by CLI11, which drops empty items: "4444,,4450" is a mistake to report.
    for (const auto& text : checks) {
      for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        o.check_values.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
        if (o.check_values.back().empty())
          throw UsageError{fmt::format("bad --check value '' in '{}' (values are comma-separated)", text)};
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    if (!out_dtype.empty()) o.out_dtype = parse_one(kOutDtypeNames, "--out-dtype", out_dtype);
    if (!saturation.empty()) o.saturation = parse_one(kSaturationNames, "--saturation", saturation);
    if (!axis.empty()) o.axis = parse_one(kAxisNames, "--axis", axis);
    for (const auto& s : sizes) {
      const auto n = parse_size(s);
      if (!n) throw UsageError{fmt::format("bad --n '{}' (a whole number up to 2^40: 1024, 1e6, 2^20, 2^20+3)", s)};
      // A repeated value would make the same cells twice (docs/bad-inputs.md).
      if (std::find(o.sizes.begin(), o.sizes.end(), *n) == o.sizes.end()) o.sizes.push_back(*n);
    }
    if (!throughput_n.empty()) {
      const auto n = parse_size(throughput_n);
      if (!n) throw UsageError{fmt::format("bad --throughput-n '{}' (a whole number up to 2^40, or 0)", throughput_n)};
      o.throughput_n = *n;
    }
    if (!eps.empty()) {
      // Parsed here, not by CLI11, so that every bad value gets the same one line.
      double v = 0;
      const auto [end, ec] = std::from_chars(eps.data(), eps.data() + eps.size(), v);
      if (ec != std::errc() || end != eps.data() + eps.size() || !std::isfinite(v) || v <= 0)
        throw UsageError{fmt::format("bad --eps '{}' (a finite number > 0, e.g. 1e-5)", eps)};
      o.eps = v;
    }
    for (const auto& s : seeds) {
      const auto v = parse_u64(s);
      if (!v) throw UsageError{fmt::format("bad --seed '{}' (a whole number)", s)};
      if (std::find(o.seeds.begin(), o.seeds.end(), *v) == o.seeds.end()) o.seeds.push_back(*v);
    }
    for (auto [text, into] : {std::pair{&rows, &o.rows}, std::pair{&cols, &o.cols}}) {
      if (text->empty()) continue;
      const auto v = parse_size(*text);
      if (!v || *v == 0) throw UsageError{fmt::format("bad row/column count '{}'", *text)};
      *into = *v;
    }
    if (!recommend.empty()) {
      const Op op = parse_one(kOpNames, "--recommend", recommend);
      if (op != Op::rmsnorm && op != Op::layernorm && op != Op::norm2 && op != Op::sum)
        throw UsageError{fmt::format("unknown --recommend '{}' (accepted: rmsnorm, layernorm, norm2, sum)", recommend)};
      o.recommend = op;
    }
    if (!budget_metric.empty()) o.budget_metric = parse_one(kBudgetMetricNames, "--budget-metric", budget_metric);
    // Checked here rather than by CLI11, whose range message prints the
    // lowest double in full (310 digits) and lets NaN through.
    if (o.ulp_tolerance && !(std::isfinite(*o.ulp_tolerance) && *o.ulp_tolerance >= 0))
      throw UsageError{fmt::format("bad --ulp-tolerance {} (a number >= 0)", *o.ulp_tolerance)};
    if (o.throughput_tolerance && !(*o.throughput_tolerance >= 0 && *o.throughput_tolerance <= 1))
      throw UsageError{fmt::format("bad --throughput-tolerance {} (a number in [0, 1])", *o.throughput_tolerance)};
    if (!(std::isfinite(o.kernel_timeout) && o.kernel_timeout >= 0))
      throw UsageError{fmt::format("bad --kernel-timeout {} (seconds >= 0; 0: no child process)", o.kernel_timeout)};
    if (o.gallery) {
      // The gallery runs its own matrix: a flag it would ignore is refused, so
      // that "--gallery --baseline b.json --gate" cannot pass a CI gate unseen.
      const std::pair<bool, const char*> ignored[] = {
          {!o.baseline_path.empty(), "--baseline"}, {!o.current_path.empty(), "--current"},
          {o.gate, "--gate"},  {!o.gate_summary_path.empty(), "--gate-summary"},
          {!o.kernel_libs.empty(), "--kernel-lib"}, {!o.input_path.empty(), "--input"},
          {!recommend.empty(), "--recommend"},      {!checks.empty(), "--check"}};
      for (const auto& [given, flag] : ignored)
        if (given) throw UsageError{fmt::format("--gallery does not go with {} (the gallery runs its own matrix)", flag)};
      if (o.cells) throw UsageError{"--gallery does not go with --cells (the gallery's table has one row per kernel)"};
      if (!o.extra_outputs.empty())
        throw UsageError{fmt::format("--gallery does not go with {} (it writes one output: --format and --out)",
                                     o.extra_outputs.front().flag)};
    }
    if (!o.current_path.empty() && !o.extra_outputs.empty())
      throw UsageError{fmt::format("--current does not go with {} (comparing two stored reports writes no report)",
                                   o.extra_outputs.front().flag)};
    if (o.gate && o.baseline_path.empty()) throw UsageError{"--gate needs --baseline FILE"};
    if (!o.current_path.empty() && o.baseline_path.empty()) throw UsageError{"--current needs --baseline FILE"};
    if (!o.label.empty() && o.baseline_path.empty())
      throw UsageError{"--label needs --baseline FILE (it names the current run in the gate's summary)"};
    if (std::any_of(o.label.begin(), o.label.end(), [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }))
      throw UsageError{"bad --label: one line of text, without control characters"};
  } catch (const CLI::CallForHelp&) {
    return CliExit{0, app.help()};
  } catch (const CLI::CallForAllHelp&) {
    return CliExit{0, app.help("", CLI::AppFormatMode::All)};
  } catch (const CLI::CallForVersion&) {
    return CliExit{0, std::string("ulpscope ") + ULPSCOPE_VERSION + "\n"};
  } catch (const CLI::ParseError& e) {
    return CliExit{2, e.what()};
  } catch (const UsageError& e) {
    return CliExit{2, e.message};
  }
  return o;
}

}  // namespace ulpscope
