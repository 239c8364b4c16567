#include "reports/verdict.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <tuple>

#include "reports/cell_facts.hpp"

namespace ulpscope {
namespace {

using KernelKey = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::string>;

KernelKey kernel_key(const Cell& c) {
  return {c.op, c.dtype, c.out_dtype, c.accumulator, c.shape, c.axis, c.saturation};
}

void add_to_worst(WorstError& w, const Cell& c) {
  ++w.cells;
  if (!c.ulp_error) {
    if (!w.unbounded) w.distribution = c.distribution, w.n = c.n, w.seed = c.seed;
    w.unbounded = true;
    return;
  }
  const bool larger = !w.max_ulp || *c.ulp_error > *w.max_ulp;
  if (larger) w.max_ulp = c.ulp_error;
  if (!w.unbounded && larger) w.distribution = c.distribution, w.n = c.n, w.seed = c.seed;
}

// "no" as soon as one cell gave different bits; "yes" when at least one cell
// could have told (more than one run, configuration or order) and none did.
void add_same_bits(SameBits& s, bool measured, bool differs) {
  if (differs) s = SameBits::no;
  else if (measured && s == SameBits::not_measured) s = SameBits::yes;
}

void add_cell(Verdict& v, const Cell& c) {
  ++v.cells;
  if (c.correctly_rounded) ++v.correctly_rounded;
  if (is_failed(c)) {
    ++v.failed;
    return;
  }
  switch (distribution_group(c.distribution)) {
    case DistributionGroup::realistic: add_to_worst(v.realistic, c); break;
    // Special values (NaN, Inf, -0 inputs) are part of what an adversary sends.
    case DistributionGroup::adversarial:
    case DistributionGroup::special: add_to_worst(v.adversarial, c); break;
    case DistributionGroup::user_input: add_to_worst(v.user_input, c); break;
  }
  add_same_bits(v.run_to_run, c.runs > 1, is_non_deterministic(c));
  add_same_bits(v.across_configs, c.configs > 1, is_config_dependent(c));
  add_same_bits(v.across_orders, c.permutations.value_or(0) > 0, is_order_dependent(c));
  if (c.gbps && std::isfinite(*c.gbps) && (!v.throughput_n || c.throughput_n.value_or(0) > *v.throughput_n)) {
    v.gbps = c.gbps;
    v.fraction_of_cub = finite_or_null(c.fraction_of_cub);
    v.throughput_n = c.throughput_n.value_or(0);
  }
}

}  // namespace

std::string to_string(SameBits s) {
  switch (s) {
    case SameBits::yes: return "yes";
    case SameBits::no: return "no";
    case SameBits::not_measured: break;
  }
  return "n/a";
}

const WorstError& Verdict::worst(DistributionGroup g) const {
  switch (g) {
    case DistributionGroup::realistic: return realistic;
    case DistributionGroup::adversarial:
    case DistributionGroup::special: return adversarial;
    case DistributionGroup::user_input: break;
  }
  return user_input;
}

double Verdict::correctly_rounded_share() const {
  return cells == 0 ? 0.0 : double(correctly_rounded) / double(cells);
}

std::vector<Verdict> verdicts(const std::vector<Cell>& cells) {
  std::vector<Verdict> out;
  std::map<KernelKey, std::size_t> index;
  for (const Cell& c : cells) {
    auto [it, fresh] = index.try_emplace(kernel_key(c), out.size());
    if (fresh) {
      Verdict v;
      v.op = c.op, v.dtype = c.dtype, v.out_dtype = c.out_dtype, v.accumulator = c.accumulator;
      v.shape = c.shape, v.axis = c.axis, v.saturation = c.saturation;
      out.push_back(std::move(v));
    }
    add_cell(out[it->second], c);
  }
  return out;
}

std::string worst_ulp_text(const WorstError& w) {
  if (w.cells == 0) return "-";
  if (w.unbounded) return "inf";
  return short_number(w.max_ulp);
}

std::string verdict_format_text(const Verdict& v) {
  std::string s = v.dtype == v.out_dtype ? v.dtype : fmt::format("{}->{}", v.dtype, v.out_dtype);
  if (!v.axis.empty() && v.axis != "all") s += " " + v.axis;
  if (!v.saturation.empty()) s += " " + v.saturation;
  return s;
}

std::string correctly_rounded_text(const Verdict& v) {
  if (v.cells == 0) return "0/0";
  const std::size_t percent = v.correctly_rounded * 100 / v.cells;  // rounded down
  if (percent == 0 && v.correctly_rounded > 0) return "<1%";
  return fmt::format("{}%", percent);
}

std::string throughput_text(const Verdict& v) {
  if (!v.gbps) return "not measured";
  if (!v.fraction_of_cub) return fmt::format("{:.0f} GB/s", *v.gbps);
  return fmt::format("{:.0f} GB/s, {:.0f}% of cub", *v.gbps, *v.fraction_of_cub * 100);
}

}  // namespace ulpscope
