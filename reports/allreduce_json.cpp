#include "reports/allreduce_json.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace ulpscope {
namespace {

using ojson = nlohmann::ordered_json;

template <class T>
ojson or_null(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

const nlohmann::json& need(const nlohmann::json& v, const char* key) {
  const auto it = v.find(key);
  if (it == v.end()) throw std::invalid_argument(fmt::format("{}: missing", key));
  return *it;
}

std::string name(const nlohmann::json& v, const char* key, std::initializer_list<const char*> allowed) {
  const auto& e = need(v, key);
  if (e.is_string())
    for (const char* a : allowed)
      if (e.get<std::string>() == a) return a;
  throw std::invalid_argument(fmt::format("{}: {} is not one of {}", key, e.dump(), fmt::join(allowed, ", ")));
}

std::optional<double> number(const nlohmann::json& v, const char* key, bool non_negative) {
  const auto& e = need(v, key);
  if (e.is_null()) return std::nullopt;
  if (!e.is_number() || (non_negative && e.get<double>() < 0))
    throw std::invalid_argument(fmt::format("{}: expected a number{} or null, found {}", key,
                                            non_negative ? " >= 0" : "", e.dump()));
  return e.get<double>();
}

std::int64_t whole(const nlohmann::json& v, const char* key) {
  const auto& e = need(v, key);
  if (!e.is_number_integer() || e.get<std::int64_t>() < 0)
    throw std::invalid_argument(fmt::format("{}: expected a whole number >= 0, found {}", key, e.dump()));
  return e.get<std::int64_t>();
}

std::string text(const nlohmann::json& v, const char* key) {
  const auto& e = need(v, key);
  if (!e.is_string()) throw std::invalid_argument(fmt::format("{}: expected a string, found {}", key, e.dump()));
  return e.get<std::string>();
}

std::string csv_number(std::optional<double> v) { return v ? fmt::format("{}", *v) : std::string(); }

}  // namespace

ojson allreduce_to_json(const AllreduceProfile& a) {
  ojson j;
  j["ranks"] = a.ranks;
  j["algorithm"] = a.algorithm;
  j["protocol"] = a.protocol;
  j["method"] = a.method;
  j["channels"] = a.channels;
  j["max_ulp_error"] = or_null(a.max_ulp_error);
  j["mean_ulp_error"] = or_null(a.mean_ulp_error);
  j["share_correctly_rounded"] = a.share_correctly_rounded;
  j["worst_element"] = a.worst_element;
  j["digest"] = a.digest;
  j["ranks_agree"] = or_null(a.ranks_agree);
  j["seconds"] = or_null(a.seconds);
  j["bus_bandwidth"] = or_null(a.bus_bandwidth);
  j["fraction_of_plain"] = or_null(a.fraction_of_plain);
  j["nccl_version"] = a.nccl_version.empty() ? ojson(nullptr) : ojson(a.nccl_version);
  return j;
}

AllreduceProfile allreduce_from_json(const nlohmann::json& v) {
  if (!v.is_object()) throw std::invalid_argument("expected an object");
  AllreduceProfile a;
  const std::int64_t ranks = whole(v, "ranks");
  if (ranks < 1 || ranks > 1 << 20) throw std::invalid_argument(fmt::format("ranks: {} is not a rank count", ranks));
  a.ranks = static_cast<int>(ranks);
  a.algorithm = name(v, "algorithm", {"ring", "tree"});
  a.protocol = name(v, "protocol", {"simple", "ll", "ll128"});
  a.method = name(v, "method", {"plain", "upcast", "exact"});
  a.channels = static_cast<int>(whole(v, "channels"));
  a.max_ulp_error = number(v, "max_ulp_error", true);
  a.mean_ulp_error = number(v, "mean_ulp_error", true);
  const auto share = number(v, "share_correctly_rounded", true);
  if (!share || *share > 1) throw std::invalid_argument("share_correctly_rounded: expected a number in [0, 1]");
  a.share_correctly_rounded = *share;
  a.worst_element = whole(v, "worst_element");
  a.digest = text(v, "digest");
  const auto& agree = need(v, "ranks_agree");
  if (!agree.is_null() && !agree.is_boolean())
    throw std::invalid_argument(fmt::format("ranks_agree: expected true, false or null, found {}", agree.dump()));
  if (agree.is_boolean()) a.ranks_agree = agree.get<bool>();
  a.seconds = number(v, "seconds", true);
  a.bus_bandwidth = number(v, "bus_bandwidth", true);
  a.fraction_of_plain = number(v, "fraction_of_plain", true);
  const auto& version = need(v, "nccl_version");
  if (!version.is_null()) a.nccl_version = text(v, "nccl_version");
  return a;
}

std::vector<std::pair<std::string, std::string>> allreduce_csv_columns(const AllreduceProfile* a) {
  auto get = [&](auto f) { return a ? f(*a) : std::string(); };
  return {
      {"allreduce_ranks", get([](const auto& x) { return fmt::to_string(x.ranks); })},
      {"allreduce_algorithm", get([](const auto& x) { return x.algorithm; })},
      {"allreduce_protocol", get([](const auto& x) { return x.protocol; })},
      {"allreduce_method", get([](const auto& x) { return x.method; })},
      {"allreduce_channels", get([](const auto& x) { return fmt::to_string(x.channels); })},
      {"allreduce_max_ulp_error", get([](const auto& x) { return csv_number(x.max_ulp_error); })},
      {"allreduce_mean_ulp_error", get([](const auto& x) { return csv_number(x.mean_ulp_error); })},
      {"allreduce_share_correctly_rounded",
       get([](const auto& x) { return fmt::format("{}", x.share_correctly_rounded); })},
      {"allreduce_worst_element", get([](const auto& x) { return fmt::to_string(x.worst_element); })},
      {"allreduce_digest", get([](const auto& x) { return x.digest; })},
      {"allreduce_ranks_agree",
       get([](const auto& x) { return x.ranks_agree ? (*x.ranks_agree ? "true" : "false") : std::string(); })},
      {"allreduce_seconds", get([](const auto& x) { return csv_number(x.seconds); })},
      {"allreduce_bus_bandwidth", get([](const auto& x) { return csv_number(x.bus_bandwidth); })},
      {"allreduce_fraction_of_plain", get([](const auto& x) { return csv_number(x.fraction_of_plain); })},
      {"allreduce_nccl_version", get([](const auto& x) { return x.nccl_version; })},
  };
}

}  // namespace ulpscope
