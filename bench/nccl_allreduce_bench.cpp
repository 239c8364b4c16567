// NCCL all-reduce on the GPUs of one machine: plain (NCCL in the input
// format), upcast (fp32 in, one rounding out; fp64 for fp32) and exact (the
// integer state, rounded once), for P ranks, formats and algorithms. Each
// row: the median time of one all-reduce (CUDA events), nccl-tests' busbw,
// the time over the plain all-reduce of the same data in the same run, the
// per-element ULPs against the exact result, and whether the exact result is
// correctly rounded on a sample of elements (MPFR). The P = 4 ranks hold
// a, c, b, -c where the P = 2 ranks hold a, b: the same exact sums, so the
// distinct results across P and algorithms are comparable.
//   nccl_allreduce_bench [--ranks 2,4] [--dtypes bf16,fp16,fp32] [--log2-n 26]
//       [--algorithms ring,tree] [--methods plain,upcast,exact] [--protocol simple]
//       [--repetitions 10] [--runs 3] [--timeout 60] [--sample 65536] [--json FILE] [--nccl-log FILE]
#include <CLI/CLI.hpp>
#include <mpfr.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "formats/binary_format.hpp"
#include "kernels/allreduce/nccl/element_bits.hpp"
#include "kernels/allreduce/nccl_runner.hpp"
#include "kernels/counter_rng.hpp"
#include "reference/exact_real.hpp"
#include "reference/round_to_format.hpp"

namespace {

using namespace ulpscope;
using namespace ulpscope::allreduce;
using Tensor = std::vector<std::uint8_t>;

// Gradient-like data: normal values (Box-Muller on SplitMix64 of a counter,
// so that threads fill their slices independently), seeded per tensor.
Tensor normal_tensor(Dtype d, std::size_t n, std::uint64_t seed) {
  Tensor t(n * bytes_of(d));
  const unsigned threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (std::size_t i = k * n / threads; i < (k + 1) * n / threads; ++i) {
        const std::uint64_t h = mix64(kGoldenGamma + (seed * 0x100000001B3ull ^ i)), g = mix64(kGoldenGamma + h);
        const double u1 = (double(h >> 11) + 1.0) * 0x1p-53, u2 = double(g >> 11) * 0x1p-53;
        const double v = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        const std::uint32_t b = bits_of(d, v);
        std::memcpy(t.data() + i * bytes_of(d), &b, bytes_of(d));
      }
    });
  for (auto& th : pool) th.join();
  return t;
}


// An integer that orders finite values as their values (for ULP distances).
std::int64_t ordered(Dtype d, std::uint32_t b) {
  const std::uint32_t sign = 1u << (format_info(d).bits - 1);
  return (b & sign) ? -std::int64_t(b & (sign - 1)) : std::int64_t(b);
}

struct UlpStats {
  double share_exact = 0;   // elements equal to the correctly rounded result
  std::int64_t max_ulp = 0;  // largest distance from it, in units in the last place
};

UlpStats ulps_against(const Tensor& got, const Tensor& exact, Dtype d, std::size_t n) {
  std::size_t equal = 0;
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t g = bits_at(got, d, i), e = bits_at(exact, d, i);
    if (g == e) {
      ++equal;
      continue;
    }
    if (std::isfinite(value_of(d, g)) && std::isfinite(value_of(d, e))) {
      const std::int64_t dist = ordered(d, g) - ordered(d, e);
      worst = std::max(worst, dist < 0 ? -dist : dist);
    }
  }
  return {double(equal) / double(n), worst};
}

// Elements of the exact result that differ from MPFR's RN(sum), on `sample` evenly spaced elements.
std::size_t reference_mismatches(const std::vector<Tensor>& ranks, const Tensor& got, Dtype d, std::size_t n,
                                 std::size_t sample) {
  std::size_t wrong = 0;
  const std::size_t step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, sample));
  for (std::size_t i = 0; i < n; i += step) {
    ExactReal sum = ExactReal::from_double(value_of(d, bits_at(ranks[0], d, i)));
    for (std::size_t r = 1; r < ranks.size(); ++r)
      sum = exact_add(sum, ExactReal::from_double(value_of(d, bits_at(ranks[r], d, i))));
    const std::uint32_t want = bits_of(d, round_to_format(sum, d)), g = bits_at(got, d, i);
    if (std::isnan(value_of(d, want)) ? !std::isnan(value_of(d, g)) : g != want) ++wrong;
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"NCCL all-reduce: time, busbw and accuracy of plain, upcast and exact, across P and algorithms"};
  std::vector<int> ranks_list = {2, 4};
  std::vector<std::string> dtype_names = {"bf16", "fp16", "fp32"}, algorithm_names = {"ring", "tree"},
                           method_names = {"plain", "upcast", "exact"};
  std::string protocol_name = "simple", json_path;
  int log2_n = 26, repetitions = 10, runs = 3;
  double timeout = 60;
  std::size_t sample = 65536;
  app.add_option("--ranks", ranks_list, "P values (those above the GPUs present are listed as not run)")->delimiter(',')
      ->check(CLI::Range(1, 63));
  app.add_option("--dtypes", dtype_names, "formats")->delimiter(',')->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  app.add_option("--log2-n", log2_n, "log2 of the elements per rank")->check(CLI::Range(0, 30));
  app.add_option("--algorithms", algorithm_names, "NCCL_ALGO")->delimiter(',')->check(CLI::IsMember({"ring", "tree"}));
  app.add_option("--methods", method_names, "methods")->delimiter(',')->check(CLI::IsMember({"plain", "upcast", "exact"}));
  app.add_option("--protocol", protocol_name, "NCCL_PROTO")->check(CLI::IsMember({"simple", "ll", "ll128"}));
  app.add_option("--repetitions", repetitions, "timed all-reduces (median)")->check(CLI::Range(1, 1000));
  app.add_option("--runs", runs, "all-reduces whose results are compared")->check(CLI::Range(1, 1000));
  app.add_option("--timeout", timeout, "seconds each step may take")->check(CLI::Range(0.1, 3600.0));
  app.add_option("--sample", sample, "elements checked against MPFR")->check(CLI::Range(std::size_t(1), std::size_t(1) << 31));
  app.add_option("--json", json_path, "also write the rows as JSON");
  std::string log_path;
  app.add_option("--nccl-log", log_path, "write each cell's NCCL INFO log (rings, trees, tuning) to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help, or one line about the bad flag
  }
  if (runs > repetitions) {
    std::fprintf(stderr, "nccl_allreduce_bench: --runs %d exceeds --repetitions %d\n", runs, repetitions);
    return 2;
  }
  const std::map<std::string, Algorithm> algorithms = {{"ring", Algorithm::ring}, {"tree", Algorithm::tree}};
  const std::map<std::string, Method> methods = {{"plain", Method::plain}, {"upcast", Method::upcast},
                                                 {"exact", Method::exact}};
  const std::map<std::string, Protocol> protocols = {{"simple", Protocol::simple}, {"ll", Protocol::ll},
                                                     {"ll128", Protocol::ll128}};
  const std::size_t n = std::size_t(1) << log2_n;
  if (!log_path.empty()) std::ofstream(log_path, std::ios::trunc);
  nlohmann::json rows = nlohmann::json::array();
  int status = 0;
  std::printf("| P | dtype | algorithm | method | ms | busbw GB/s | / plain | second round | ranks agree | "
              "distinct runs | = exact | max ulp | exact vs MPFR |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& dn : dtype_names) {
    const Dtype d = *parse_dtype(dn);
    const Tensor a = normal_tensor(d, n, 1), b = normal_tensor(d, n, 2), c = normal_tensor(d, n, 3);
    const Tensor minus_c = negated(d, c);
    std::map<std::string, std::vector<Tensor>> distinct;  // per method, across P and algorithms
    Tensor exact_result;
    for (int p : ranks_list) {
      if (p != 2 && p != 4) {
        std::printf("| %d | %s | | | not run: the data are built for P = 2 and 4 | | | | | | | | |\n", p, dn.c_str());
        continue;
      }
      if (const std::string why = nccl_unavailable(p); !why.empty()) {
        std::printf("| %d | %s | | | not run: %s | | | | | | | | |\n", p, dn.c_str(), why.c_str());
        continue;
      }
      const std::vector<Tensor> inputs = p == 2 ? std::vector<Tensor>{a, b} : std::vector<Tensor>{a, c, b, minus_c};
      for (const std::string& an : algorithm_names) {
        // exact first: the other methods' ULPs are counted against it.
        std::vector<std::string> order = method_names;
        std::stable_partition(order.begin(), order.end(), [](const std::string& m) { return m == "exact"; });
        for (const std::string& mn : order) {
          NcclRequest q;
          q.dtype = d;
          q.method = methods.at(mn);
          q.algorithm = algorithms.at(an);
          q.protocol = protocols.at(protocol_name);
          q.ranks = p;
          q.n = n;
          q.inputs = &inputs;
          q.runs = runs;
          q.repetitions = repetitions;
          q.timeout_s = timeout;
          NcclResult r;
          try {
            r = run_nccl_allreduce(q);
          } catch (const std::exception& e) {
            std::printf("| %d | %s | %s | %s | failed: %s | | | | | | | | |\n", p, dn.c_str(), an.c_str(), mn.c_str(),
                        e.what());
            status = 1;
            continue;
          }
          if (!log_path.empty()) {
            std::ofstream log(log_path, std::ios::app);
            log << "==== P=" << p << " " << dn << " " << an << " " << mn << "\n" << r.nccl_log;
          }
          auto& seen = distinct[mn];
          if (std::find(seen.begin(), seen.end(), r.output) == seen.end()) seen.push_back(r.output);
          std::string vs_mpfr = "";
          long long mismatches = -1;
          if (q.method == Method::exact) {
            mismatches = (long long)reference_mismatches(inputs, r.output, d, n, sample);
            vs_mpfr = mismatches == 0 ? "correctly rounded" : std::to_string(mismatches) + " wrong";
            if (mismatches) status = 1;
            if (exact_result.empty()) exact_result = r.output;
          }
          UlpStats u;
          const bool have_exact = !exact_result.empty();
          if (have_exact) u = ulps_against(r.output, exact_result, d, n);
          std::printf("| %d | %s | %s | %s | %.3f | %.1f | %.2f | %zu | %s | %d | %s | %lld | %s |\n", p, dn.c_str(),
                      an.c_str(), mn.c_str(), r.seconds * 1e3, r.bus_bandwidth * 1e-9, r.seconds / r.plain_seconds,
                      r.second_round_elements, r.ranks_agree ? "yes" : "NO", r.distinct_runs,
                      have_exact ? (std::to_string(u.share_exact * 100).substr(0, 7) + "%").c_str() : "",
                      have_exact ? (long long)u.max_ulp : -1LL, vs_mpfr.c_str());
          std::fflush(stdout);
          rows.push_back({{"ranks", p},
                          {"dtype", dn},
                          {"algorithm", an},
                          {"protocol", protocol_name},
                          {"method", mn},
                          {"n", n},
                          {"seconds", r.seconds},
                          {"plain_seconds", r.plain_seconds},
                          {"bus_bandwidth", r.bus_bandwidth},
                          {"second_round_elements", r.second_round_elements},
                          {"ranks_agree", r.ranks_agree},
                          {"distinct_runs", r.distinct_runs},
                          {"share_equal_to_exact", have_exact ? nlohmann::json(u.share_exact) : nlohmann::json()},
                          {"max_ulp_from_exact", have_exact ? nlohmann::json(u.max_ulp) : nlohmann::json()},
                          {"exact_mismatches_vs_mpfr", mismatches >= 0 ? nlohmann::json(mismatches) : nlohmann::json()},
                          {"mpfr_sample", sample},
                          {"nccl_version", r.nccl_version},
                          {"nccl_log_lines", std::count(r.nccl_log.begin(), r.nccl_log.end(), '\n')}});
        }
      }
    }
    for (const auto& [mn, seen] : distinct)
      std::printf("\n%s %s: %zu distinct result(s) across P and algorithms\n", dn.c_str(), mn.c_str(), seen.size());
    std::printf("\n");
  }
  if (!json_path.empty()) {
    // Written beside, then renamed: never a half-written file.
    const std::string tmp = json_path + ".tmp";
    std::ofstream f(tmp);
    f << rows.dump(1) << "\n";
    f.close();
    if (!f || std::rename(tmp.c_str(), json_path.c_str()) != 0) {
      std::remove(tmp.c_str());
      std::fprintf(stderr, "nccl_allreduce_bench: cannot write %s\n", json_path.c_str());
      return 2;
    }
  }
  return status;
}
