#include "reports/allreduce_cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "accuracy/allreduce_matrix.hpp"
#include "kernels/allreduce/allreduce_names.hpp"

namespace ulpscope {
namespace {

template <class E, std::size_t N>
std::vector<E> names(const NameTable<E, N>& table, const std::vector<std::string>& values, const char* flag,
                     const char* what) {
  std::vector<E> out;
  for (const auto& v : values) {
    const auto e = parse_in(table, v);
    if (!e) {
      std::string accepted;
      for (const auto& [value, name] : table) accepted += (accepted.empty() ? "" : ", ") + std::string(name);
      throw std::invalid_argument(fmt::format("unknown {} '{}' ({}: {})", flag, v, what, accepted));
    }
    if (std::find(out.begin(), out.end(), *e) == out.end()) out.push_back(*e);
  }
  return out;
}

int whole(const std::string& v, const char* flag, int low, int high, const char* what) {
  int x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || x < low || x > high)
    throw std::invalid_argument(fmt::format("bad {} '{}' ({} from {} to {})", flag, v, what, low, high));
  return x;
}

}  // namespace

void add_allreduce_options(CLI::App& app, AllreduceCliText& text) {
  const auto list = [&](const char* name, std::vector<std::string>& into, const std::string& help) {
    return app.add_option(name, into, help)->delimiter(',')->type_name("LIST")->group("All-reduce");
  };
  list("--ranks", text.ranks,
       fmt::format("Ranks P of --op allreduce_sum/allreduce_mean, 1 to {} (default 2,4: the GPU machines' counts; "
                   "the CPU backend simulates any P)",
                   kMaxRanks));
  list("--algo", text.algorithms, "NCCL's algorithms: ring, tree (default both)");
  list("--proto", text.protocols, "NCCL's protocols: simple, ll, ll128 (default simple)");
  list("--method", text.methods,
       "What is all-reduced: plain (the inputs), upcast (in fp32, rounded once), exact (correctly rounded) "
       "(default all three)");
  app.add_option("--channels", text.channels, "Channels, 1 to 64: the CPU models' (default 1), and through NCCL pinned with NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS (default: NCCL's choice)")
      ->type_name("K")
      ->group("All-reduce");
}

AllreduceCli parse_allreduce_options(const AllreduceCliText& text, std::vector<std::string>& ops) {
  AllreduceCli c;
  std::vector<std::string> rest;
  for (const std::string& op : ops) {
    if (op == "allreduce_sum" || op == "allreduce_mean") {
      const bool mean = op == "allreduce_mean";
      if (std::find(c.means.begin(), c.means.end(), mean) == c.means.end()) c.means.push_back(mean);
    } else {
      rest.push_back(op);
    }
  }
  ops = rest;
  for (const std::string& r : text.ranks) {
    const int p = whole(r, "--ranks", 1, kMaxRanks, "a rank count");
    if (std::find(c.ranks.begin(), c.ranks.end(), p) == c.ranks.end()) c.ranks.push_back(p);
  }
  c.algorithms = names(allreduce::kAlgorithmNames, text.algorithms, "--algo", "NCCL's algorithms measured here");
  c.protocols = names(allreduce::kProtocolNames, text.protocols, "--proto", "NCCL's protocols");
  c.methods = names(allreduce::kMethodNames, text.methods, "--method", "the all-reduce methods");
  if (!text.channels.empty()) c.channels = whole(text.channels, "--channels", 1, 64, "a channel count");
  c.any_flag = !text.ranks.empty() || !text.algorithms.empty() || !text.protocols.empty() || !text.methods.empty() ||
               !text.channels.empty();
  if (c.any_flag && c.means.empty())
    throw std::invalid_argument(
        "--ranks, --algo, --proto, --method and --channels belong to --op allreduce_sum or allreduce_mean");
  if (!c.means.empty() && !ops.empty())
    throw std::invalid_argument(fmt::format("--op allreduce_sum/allreduce_mean run alone, not with {} (two runs)",
                                            ops.front()));
  return c;
}

}  // namespace ulpscope
