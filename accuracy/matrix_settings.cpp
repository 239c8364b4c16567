// The run matrix's settings: as JSON (the report header's "settings", which a
// gate compares) and the default and --full matrices (docs/spec.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy/run_matrix.hpp"

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
      {"throughput_n", throughput_n},
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
  // Names are echoed in messages, which must stay one line (docs/bad-inputs.md).
  auto name = [](const char* key, const nlohmann::json& v) {
    std::string text = v.get<std::string>();
    if (std::any_of(text.begin(), text.end(), [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; }))
      throw std::invalid_argument(fmt::format("settings: {} {} holds a control character", key, v.dump()));
    return text;
  };
  auto list = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_array()) throw std::invalid_argument(fmt::format("settings: no list '{}'", key));
    std::vector<std::string> out;
    for (const auto& v : j[key]) out.push_back(name(key, v));
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
  // (docs/bad-inputs.md); the ranges are settings_problem's.
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
    for (const auto& name : list("shapes")) {
      const auto sh = parse_shape(name);
      if (!sh) throw std::invalid_argument(fmt::format("settings: unknown shapes '{}'", name));
      s.shapes.push_back(*sh);
    }
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
    // Not get<uint64_t>: from a float such as 1e300 that conversion is undefined.
    for (const auto& seed : j.at("seeds")) {
      if (!seed.is_number_unsigned())
        throw std::invalid_argument("settings: seed " + seed.dump() + " is not a whole number >= 0");
      s.seeds.push_back(seed.get<std::uint64_t>());
    }
    if (!j.at("out_dtype").is_null()) {
      s.out_dtype = parse_dtype(j.at("out_dtype").get<std::string>());
      if (!s.out_dtype) throw std::invalid_argument("settings: unknown out_dtype " + j.at("out_dtype").dump());
    }
    const std::string saturation = name("saturation", j.at("saturation"));
    if (saturation != "nosat" && saturation != "satfinite")
      throw std::invalid_argument("settings: unknown saturation '" + saturation + "'");
    s.saturation = saturation == "nosat" ? Saturation::nosat : Saturation::satfinite;
    s.row_cols = integer("row_cols");
    s.runs = small("runs");
    s.permutations = small("permutations");
    s.eps = j.at("eps").get<double>();
    if (j.contains("throughput_n")) s.throughput_n = integer("throughput_n");
    if (j.contains("user_kernels")) s.user_kernels = list("user_kernels");
    if (j.contains("nondeterministic_kernels")) s.nondeterministic_kernels = list("nondeterministic_kernels");
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
                 : std::vector<std::int64_t>{4096, (1 << 16) + 3};  // the norms: one row of 4096
  s.seeds = full ? std::vector<std::uint64_t>{1, 2, 3} : std::vector<std::uint64_t>{1};
  s.axes = full ? std::vector<Axis>{Axis::all, Axis::inner, Axis::outer} : std::vector<Axis>{Axis::all};
  s.runs = full ? 10 : 3;
  s.permutations = full ? 4 : 2;
  return s;
}

}  // namespace ulpscope
