#include "reports/cli_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "accuracy/run_matrix.hpp"      // MatrixSettings' default eps (header)
#include "accuracy/settings_check.hpp"  // the limits only (header)
#include "formats/named_enum.hpp"

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
constexpr std::array<std::string_view, 5> kFormatNames = {"table", "json", "csv", "md", "html"};

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

  std::vector<std::string> dtypes, ops, accs, shapes, sizes, seeds;
  std::string throughput_n, eps;
  std::string backend = "auto", out_dtype, saturation, axis, recommend, rows, cols;
  const auto list = [&](const char* name, std::vector<std::string>& into, const std::string& help) {
    return app.add_option(name, into, help)->delimiter(',')->type_name("LIST");
  };
  list("--dtype", dtypes, "Input formats: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, fp8 (both), all")
      ->group("Matrix");
  list("--op", ops, "Ops: " + names_of(kOpNames))->group("Matrix");
  list("--accumulator", accs, "Accumulators: " + names_of(kAccumulatorNames))->group("Matrix");
  list("--shape", shapes, "Kernel shapes: " + names_of(kShapeNames) + "; or seed-gallery kernels by name: " + names_of(kGalleryShapeNames))->group("Matrix");
  list("--dist", o.distributions,
       "Adversarial distributions (name or name:param, e.g. ill_conditioned:1e16)")
      ->group("Matrix");
  list("--n", sizes, "Sizes: 1024, 1e6, 2^20, 2^20+3 (repeats are dropped)")->group("Matrix");
  list("--seed", seeds, "Seeds of the input generator")->group("Matrix");
  app.add_option("--out-dtype", out_dtype, "Output format (default: the input's; fp32 for fp8 inputs): fp64, " +
                                               names_of(kInputDtypeNames))
      ->group("Matrix");
  app.add_option("--saturation", saturation, "fp8 outputs beyond the largest finite value: satfinite, nosat")
      ->group("Matrix");
  app.add_option("--axis", axis, "Reduced dimension: all (whole array), inner (rows), outer (columns)")
      ->group("Matrix");
  app.add_option("--rows", rows, "Rows of a row-wise problem ([rows, cols])")->group("Matrix");
  app.add_option("--cols", cols, "Columns of a row-wise problem ([rows, cols])")->group("Matrix");
  app.add_option("--eps", eps,
                 fmt::format("The eps of rms, rmsnorm and layernorm, inside the square root (default {}; PyTorch's "
                             "and llm.c's norms use 1e-5), passed to plug-ins as ulpscope_call.eps",
                             MatrixSettings{}.eps))
      ->type_name("EPS")
      ->group("Matrix");
  app.add_flag("--full", o.full, "The thorough matrix instead of the default one")->group("Matrix");
  app.add_option("--runs", o.runs, "Repeated runs per launch configuration")
      ->check(CLI::Range(1, kMaxRuns))
      ->group("Matrix");

  app.add_option("--throughput-n", throughput_n,
                 "Measure each GPU kernel's throughput at this many elements, once, where smaller cells cannot "
                 "reach bandwidth (default 2^26; 0: not measured)")
      ->type_name("N")
      ->group("Running");
  app.add_option("--backend", backend, "auto (CUDA when a GPU is present), cuda, cpu (the CPU models)")
      ->group("Running");
  app.add_option("--format", o.format, "table, json, csv, md, html")->group("Output");
  app.add_option("--out", o.out_path, "Write the report to FILE (atomically) instead of standard output")
      ->type_name("FILE")
      ->group("Output");
  app.add_option("--input", o.input_path,
                 "Measure a user's data: a .npy file, or raw little-endian binary with --dtype and --n; "
                 "float64 .npy data is rounded to fp32 unless --dtype says otherwise (a note on stderr)")
      ->type_name("FILE")
      ->group("Input");
  app.add_option("--kernel-lib", o.kernel_libs,
                 "Measure the kernels a plug-in library exports (plugin/ulpscope_plugin.h); repeatable")
      ->type_name("FILE")
      ->group("Input");
  app.add_option("--kernel-timeout", o.kernel_timeout,
                 "Seconds a plug-in's host call may take (default 60); each runs in a child process, so a crash, "
                 "exit, abort, hang or write past its output fails that cell only; 0: in this process, no limit")
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
  app.add_option("--ulp-tolerance", o.ulp_tolerance, "Allowed growth of ulp_error (gate); error budget (recommend)")
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

  try {
    app.parse(argc, argv);
    o.dtypes = parse_dtypes(dtypes);
    o.ops = parse_list(kOpNames, "--op", ops);
    o.accumulators = parse_list(kAccumulatorNames, "--accumulator", accs);
    // The seed gallery's teaching kernels run only when named (docs/gallery.md).
    for (const auto& v : shapes) {
      const auto parsed = parse_shape(v);
      const Shape sh = parsed ? *parsed
                              : parse_one(kShapeNames, "--shape", v, "; gallery kernels: " + names_of(kGalleryShapeNames));
      if (std::find(o.shapes.begin(), o.shapes.end(), sh) == o.shapes.end()) o.shapes.push_back(sh);
    }
    o.backend = parse_one(kBackendNames, "--backend", backend);
    if (std::find(kFormatNames.begin(), kFormatNames.end(), o.format) == kFormatNames.end())
      throw UsageError{fmt::format("unknown --format '{}' (accepted: {})", o.format, fmt::join(kFormatNames, ", "))};
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
          {!recommend.empty(), "--recommend"}};
      for (const auto& [given, flag] : ignored)
        if (given) throw UsageError{fmt::format("--gallery does not go with {} (the gallery runs its own matrix)", flag)};
    }
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
