#include "accuracy/allreduce_matrix.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "accuracy/allreduce_problem.hpp"
#include "kernels/allreduce/allreduce_model.hpp"
#include "kernels/allreduce/allreduce_names.hpp"
#include "kernels/allreduce/allreduce_topology.hpp"

namespace ulpscope {
namespace {

using allreduce::Algorithm;
using allreduce::Method;
using allreduce::Protocol;

std::vector<double> values_from_bits(const std::vector<std::uint8_t>& bits, Dtype d, std::size_t n) {
  TypedArray a(d, n);
  if (bits.size() != a.bytes())
    throw std::runtime_error(fmt::format("NCCL gave {} bytes for {} {} elements", bits.size(), n, to_string(d)));
  std::visit([&](auto& v) { std::memcpy(static_cast<void*>(v.data()), bits.data(), bits.size()); }, a.data());
  return a.to_doubles();
}

struct CellPlan {
  bool mean;
  Dtype dtype;
  Method method;
  Algorithm algorithm;
  Protocol protocol;
  int ranks;
  std::int64_t n;
  DistributionSpec distribution;
  std::uint64_t seed;
};

Cell cell_skeleton(const CellPlan& c) {
  Cell cell;
  cell.op = allreduce_op_name(c.mean);
  cell.dtype = cell.out_dtype = std::string(to_string(c.dtype));
  cell.accumulator = std::string(to_string(c.method));
  // P in the shape's name too: the verdict and the tables show a line per P.
  cell.shape = fmt::format("{}/{} P={}", to_string(c.algorithm), to_string(c.protocol), c.ranks);
  cell.distribution = c.distribution.name();
  cell.n = c.n;
  cell.seed = c.seed;
  cell.rows = c.ranks;  // P tensors of n: the reduction runs down the columns of [P, n]
  cell.cols = c.n;
  cell.axis = "outer";
  // NCCL's fp8 conversions saturate (__nv_fp8_e4m3(__half) is __NV_SATFINITE).
  if (is_fp8(c.dtype)) cell.saturation = "satfinite";
  cell.configs = 1;
  cell.distinct_across_configs = 1;
  AllreduceProfile a;
  a.ranks = c.ranks;
  a.algorithm = std::string(to_string(c.algorithm));
  a.protocol = std::string(to_string(c.protocol));
  a.method = cell.accumulator;
  cell.allreduce = a;
  return cell;
}

void fill_scores(Cell& cell, const AllreduceScore& s) {
  AllreduceProfile& a = *cell.allreduce;
  a.max_ulp_error = s.profile.max_ulp_error;
  a.mean_ulp_error = s.profile.mean_ulp_error;
  a.share_correctly_rounded = s.profile.share_correctly_rounded;
  a.worst_element = s.profile.worst_element;
  a.digest = s.profile.digest;
  cell.ulp_error = s.profile.max_ulp_error;
  cell.correctly_rounded = s.correctly_rounded;
  cell.result = s.result;
  cell.reference_rounded = s.reference_rounded;
  cell.reference_exact = s.reference_exact;
  cell.error_note = s.error_note;
  if (cell.n > 0) cell.component = fmt::format("element {}", s.profile.worst_element);
}

AllreduceProblem problem_of(const CellPlan& c) {
  AllreduceProblem p;
  p.mean = c.mean;
  p.dtype = c.dtype;
  p.ranks = c.ranks;
  p.n = c.n;
  p.distribution = c.distribution;
  p.seed = c.seed;
  return p;
}

std::vector<int> reversed_holders(int ranks) {
  std::vector<int> h(static_cast<std::size_t>(ranks));
  std::iota(h.rbegin(), h.rend(), 0);
  return h;
}

// Every cell of one problem on the CPU models, scored in one pass over its
// tensors (each drawn once): the cells' orders, and each again with the
// ranks' tensors reversed.
std::vector<Cell> model_cells(const std::vector<CellPlan>& plans, const AllreduceSettings& s, unsigned threads) {
  const AllreduceProblem p = problem_of(plans.front());
  const bool permute = s.permutations > 0 && p.ranks > 1;
  std::vector<AllreduceVariant> variants;
  for (const CellPlan& c : plans) {
    const AllreduceMethod m{c.method, c.algorithm, c.protocol, allreduce::default_topology(c.ranks, s.channels)};
    variants.push_back({m, {}, nullptr});
    if (permute) variants.push_back({m, reversed_holders(c.ranks), nullptr});
  }
  const std::vector<AllreduceScore> scores = score_allreduce(p, variants, threads);
  std::vector<Cell> cells;
  for (std::size_t k = 0; k < plans.size(); ++k) {
    const CellPlan& c = plans[k];
    const std::size_t v = permute ? 2 * k : k;
    Cell cell = cell_skeleton(c);
    fill_scores(cell, scores[v]);
    const Dtype reduced = c.method == Method::upcast ? allreduce::upcast_dtype(c.dtype) : c.dtype;
    cell.allreduce->channels = static_cast<int>(allreduce::channel_parts(variants[v].method.topology, c.algorithm,
                                                                         c.protocol, reduced,
                                                                         static_cast<std::size_t>(c.n))
                                                    .size());
    cell.runs = 1;
    cell.distinct_results = 1;
    if (permute) {
      cell.permutations = 1;
      cell.distinct_across_permutations = scores[v + 1].profile.digest == scores[v].profile.digest ? 1 : 2;
    }
    cell.note = fmt::format("CPU model of NCCL 2.28's {} ({} channel{}, ring and chain 0..{})",
                            to_string(c.algorithm), s.channels, s.channels == 1 ? "" : "s", c.ranks - 1);
    cells.push_back(std::move(cell));
  }
  return cells;
}

#if defined(ULPSCOPE_HAVE_NCCL) && ULPSCOPE_HAVE_NCCL
// One cell through NCCL: the device's output scored and compared with the
// model of the topology NCCL's log describes.
Cell nccl_cell(const CellPlan& c, const AllreduceSettings& s, unsigned threads,
               const std::vector<std::vector<std::uint8_t>>& inputs,
               const std::vector<std::vector<std::uint8_t>>* reversed_inputs) {
  Cell cell = cell_skeleton(c);
  allreduce::NcclRequest r;
  r.dtype = c.dtype;
  r.mean = c.mean;
  r.method = c.method;
  r.algorithm = c.algorithm;
  r.protocol = c.protocol;
  r.ranks = c.ranks;
  r.n = static_cast<std::size_t>(c.n);
  r.inputs = &inputs;
  r.runs = s.runs;
  r.channels = s.nccl_channels;
  try {
    const allreduce::NcclResult got = allreduce::run_nccl_allreduce(r);
    std::string why;
    const Dtype reduced = c.method == Method::upcast ? allreduce::upcast_dtype(c.dtype) : c.dtype;
    const auto parsed = allreduce::parse_nccl_topology(
        got.nccl_log, c.ranks, &why, static_cast<std::size_t>(c.n) * static_cast<std::size_t>(format_info(reduced).bits / 8));
    if (!parsed) throw std::runtime_error("NCCL's log: " + why);
    const AllreduceProblem p = problem_of(c);
    const std::vector<double> output = values_from_bits(got.output, c.dtype, static_cast<std::size_t>(c.n));
    const AllreduceScore score =
        score_allreduce(p, {c.method, c.algorithm, c.protocol, parsed->topology}, &output, threads);
    fill_scores(cell, score);
    cell.matches_model = score.matches_model;
    cell.runs = s.runs;
    cell.distinct_results = got.distinct_runs;
    AllreduceProfile& a = *cell.allreduce;
    a.channels = parsed->topology.task_channels;
    a.ranks_agree = got.ranks_agree;
    a.seconds = got.seconds;
    a.bus_bandwidth = got.bus_bandwidth;
    if (got.plain_seconds > 0) a.fraction_of_plain = got.seconds / got.plain_seconds;
    // The log's "NCCL version" line when it has one, else ncclGetVersion's number (22809 for 2.28.9).
    a.nccl_version = !parsed->version.empty() ? parsed->version : fmt::to_string(got.nccl_version);
    cell.gbps = got.bus_bandwidth / 1e9;
    cell.throughput_n = c.n;
    if (reversed_inputs) {
      r.inputs = reversed_inputs;
      r.runs = 1;
      const allreduce::NcclResult other = allreduce::run_nccl_allreduce(r);
      cell.permutations = 1;
      cell.distinct_across_permutations = other.output == got.output ? 1 : 2;
    }
    if (!got.ranks_agree) cell.status = "failed: the ranks' outputs differ";
    cell.note = fmt::format("NCCL {} through {} channel{}", a.nccl_version, a.channels, a.channels == 1 ? "" : "s");
  } catch (const std::exception& e) {
    cell.status = std::string("failed: ") + e.what();
  }
  return cell;
}
#endif

}  // namespace

std::string allreduce_op_name(bool mean) { return mean ? "allreduce_mean" : "allreduce_sum"; }

std::string AllreduceSettings::to_json() const {
  auto names = [](const auto& values) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& v : values) a.push_back(std::string(to_string(v)));
    return a;
  };
  nlohmann::json ops = nlohmann::json::array(), dists = nlohmann::json::array();
  for (bool m : means) ops.push_back(allreduce_op_name(m));
  for (const auto& d : distributions) dists.push_back(d.name());
  const nlohmann::json j = {
      {"family", "allreduce"},
      {"ops", ops},
      {"dtypes", names(dtypes)},
      {"methods", names(methods)},
      {"algorithms", names(algorithms)},
      {"protocols", names(protocols)},
      {"ranks", ranks},
      {"distributions", dists},
      {"sizes", sizes},
      {"seeds", seeds},
      {"channels", channels},
      {"nccl_channels", nccl_channels},
      {"permutations", permutations},
      {"runs", runs},
  };
  return j.dump();
}

bool is_allreduce_settings_json(const std::string& json) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  return j.is_object() && j.contains("family") && j["family"] == "allreduce";
}

AllreduceSettings allreduce_settings_from_json(const std::string& json) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (!is_allreduce_settings_json(json)) throw std::invalid_argument("settings: not an all-reduce family's settings");
  auto list = [&](const char* key) -> const nlohmann::json& {
    if (!j.contains(key) || !j[key].is_array()) throw std::invalid_argument(fmt::format("settings: no list '{}'", key));
    return j[key];
  };
  auto names = [&](const char* key, const auto& table) {
    std::vector<std::decay_t<decltype(table[0].first)>> out;
    for (const auto& v : list(key)) {
      const auto e = v.is_string() ? parse_in(table, v.get<std::string>()) : std::nullopt;
      if (!e) throw std::invalid_argument(fmt::format("settings: unknown {} {}", key, v.dump()));
      out.push_back(*e);
    }
    return out;
  };
  auto whole = [&](const nlohmann::json& v, const char* key) {
    if (!v.is_number_integer()) throw std::invalid_argument(fmt::format("settings: {} {} is not whole", key, v.dump()));
    return v.get<std::int64_t>();
  };
  auto small = [&](const char* key) {
    if (!j.contains(key)) throw std::invalid_argument(fmt::format("settings: no '{}'", key));
    const std::int64_t v = whole(j[key], key);
    if (v < 0 || v > kMaxRanks) throw std::invalid_argument(fmt::format("settings: {} {} is out of range", key, v));
    return static_cast<int>(v);
  };
  AllreduceSettings s;
  s.means.clear();
  for (const auto& v : list("ops")) {
    if (v == "allreduce_sum") s.means.push_back(false);
    else if (v == "allreduce_mean") s.means.push_back(true);
    else throw std::invalid_argument(fmt::format("settings: unknown ops {}", v.dump()));
  }
  s.dtypes.clear();
  for (const auto& v : list("dtypes")) {
    const auto d = v.is_string() ? parse_dtype(v.get<std::string>()) : std::nullopt;
    if (!d) throw std::invalid_argument(fmt::format("settings: unknown dtypes {}", v.dump()));
    s.dtypes.push_back(*d);
  }
  s.methods = names("methods", allreduce::kMethodNames);
  s.algorithms = names("algorithms", allreduce::kAlgorithmNames);
  s.protocols = names("protocols", allreduce::kProtocolNames);
  s.ranks.clear();
  for (const auto& v : list("ranks")) {
    const std::int64_t p = whole(v, "ranks");
    if (p < 1 || p > kMaxRanks) throw std::invalid_argument(fmt::format("settings: ranks {} is out of range", p));
    s.ranks.push_back(static_cast<int>(p));
  }
  s.distributions.clear();
  for (const auto& v : list("distributions")) {
    std::string why;
    const auto d = v.is_string() ? parse_distribution(v.get<std::string>(), &why) : std::nullopt;
    if (!d) throw std::invalid_argument("settings: " + (why.empty() ? v.dump() : why));
    s.distributions.push_back(*d);
  }
  s.sizes.clear();
  for (const auto& v : list("sizes")) s.sizes.push_back(whole(v, "sizes"));
  s.seeds.clear();
  for (const auto& v : list("seeds")) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
      throw std::invalid_argument(fmt::format("settings: seeds {} is not a seed", v.dump()));
    s.seeds.push_back(v.get<std::uint64_t>());
  }
  s.channels = small("channels");
  if (j.contains("nccl_channels")) s.nccl_channels = small("nccl_channels");
  s.permutations = small("permutations");
  s.runs = small("runs");
  return s;
}

std::string allreduce_settings_problem(const AllreduceSettings& s) {
  if (s.means.empty() || s.dtypes.empty() || s.methods.empty() || s.algorithms.empty() || s.protocols.empty() ||
      s.ranks.empty() || s.distributions.empty() || s.sizes.empty() || s.seeds.empty())
    return "the all-reduce matrix is empty: every list needs a value";
  for (int p : s.ranks)
    if (p < 1 || p > kMaxRanks)
      return fmt::format("--ranks {}: P must be 1 to {} (the CPU models keep P x 2^22/P inputs a thread)", p,
                         kMaxRanks);
  for (Dtype d : s.dtypes)
    if (d == Dtype::fp64) return "--dtype fp64: NCCL's all-reduce is measured on fp32, fp16, bf16 and fp8 inputs";
  for (const DistributionSpec& d : s.distributions)
    if (!is_elementwise(d.d))
      return fmt::format("--dist {}: each rank's tensor is drawn element by element, in pieces; {} is not elementwise "
                         "(its values depend on the whole array)",
                         d.name(), d.name());
  for (std::int64_t n : s.sizes)
    if (n < 1 || n > (std::int64_t(1) << 34)) return fmt::format("--n {}: an all-reduce takes 1 to 2^34 elements a rank", n);
  if (s.channels < 1 || s.channels > 64) return fmt::format("--channels {}: NCCL has 1 to 64 channels", s.channels);
  if (s.nccl_channels < 0 || s.nccl_channels > 64)
    return fmt::format("nccl_channels {}: NCCL has 1 to 64 channels (0: its own choice)", s.nccl_channels);
  if (s.runs < 1 || s.runs > 1000) return fmt::format("--runs {}: 1 to 1000", s.runs);
  return "";
}

AllreduceMatrixRun run_allreduce_matrix(const AllreduceSettings& s, bool use_nccl, unsigned threads) {
  if (const std::string why = allreduce_settings_problem(s); !why.empty()) throw std::invalid_argument(why);
#if !(defined(ULPSCOPE_HAVE_NCCL) && ULPSCOPE_HAVE_NCCL)
  if (use_nccl) throw std::invalid_argument("this build has no NCCL (ULPSCOPE_HAVE_NCCL is off)");
#endif
  AllreduceMatrixRun run;
  if (!use_nccl)
    run.unavailable.push_back({"nccl", "the CPU backend runs the CPU models of NCCL's ring and tree orders; NCCL "
                                       "itself needs --backend cuda on a build with NCCL"});
  for (int ranks : s.ranks)
    for (bool mean : s.means)
      for (Dtype d : s.dtypes)
        for (const DistributionSpec& dist : s.distributions)
          for (std::int64_t n : s.sizes)
            for (std::uint64_t seed : s.seeds) {
#if defined(ULPSCOPE_HAVE_NCCL) && ULPSCOPE_HAVE_NCCL
              std::vector<std::vector<std::uint8_t>> inputs, reversed;
              if (use_nccl) {
                AllreduceProblem p = problem_of({mean, d, Method::plain, Algorithm::ring, Protocol::simple, ranks, n,
                                                 dist, seed});
                for (int r = 0; r < ranks; ++r) inputs.push_back(rank_bits(p, r));
                if (s.permutations > 0 && ranks > 1) reversed.assign(inputs.rbegin(), inputs.rend());
              }
#endif
              std::vector<CellPlan> plans;
              for (Method m : s.methods)
                for (Algorithm a : s.algorithms)
                  for (Protocol proto : s.protocols) plans.push_back({mean, d, m, a, proto, ranks, n, dist, seed});
#if defined(ULPSCOPE_HAVE_NCCL) && ULPSCOPE_HAVE_NCCL
              if (use_nccl) {
                for (const CellPlan& c : plans)
                  run.cells.push_back(nccl_cell(c, s, threads, inputs, reversed.empty() ? nullptr : &reversed));
                continue;
              }
#endif
              try {
                for (Cell& c : model_cells(plans, s, threads)) run.cells.push_back(std::move(c));
              } catch (const std::exception& e) {
                for (const CellPlan& c : plans) {
                  Cell failed = cell_skeleton(c);
                  failed.status = std::string("failed: ") + e.what();
                  run.cells.push_back(failed);
                }
              }
            }
  return run;
}

}  // namespace ulpscope
