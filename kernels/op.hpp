#pragma once
// docs/spec.md, "Ops".
#include <cstdint>

#include "formats/named_enum.hpp"

namespace ulpscope {

enum class Op : std::uint8_t {
  sum, mean, dot, sumsq, norm2, rms, mean_var, max, min, amax, logsumexp, rmsnorm, layernorm, cumsum
};

inline constexpr NameTable<Op, 14> kOpNames = {{{Op::sum, "sum"},
                                                {Op::mean, "mean"},
                                                {Op::dot, "dot"},
                                                {Op::sumsq, "sumsq"},
                                                {Op::norm2, "norm2"},
                                                {Op::rms, "rms"},
                                                {Op::mean_var, "mean_var"},
                                                {Op::max, "max"},
                                                {Op::min, "min"},
                                                {Op::amax, "amax"},
                                                {Op::logsumexp, "logsumexp"},
                                                {Op::rmsnorm, "rmsnorm"},
                                                {Op::layernorm, "layernorm"},
                                                {Op::cumsum, "cumsum"}}};

constexpr std::string_view to_string(Op op) { return name_in(kOpNames, op); }

// How many values one reduction produces: mean_var gives the mean and the
// variance; rmsnorm and layernorm give a whole row (cols values).
constexpr int components(Op op) { return op == Op::mean_var ? 2 : 1; }
constexpr bool is_elementwise_output(Op op) { return op == Op::rmsnorm || op == Op::layernorm; }
// cumsum: one output per element, each a prefix with its own reference
// (docs/spec.md, "Scans"); its kernels are in scan/.
constexpr bool is_scan(Op op) { return op == Op::cumsum; }
constexpr bool takes_second_input(Op op) { return op == Op::dot; }
// max, min and amax round nothing: any order gives the same value.
constexpr bool is_selection(Op op) { return op == Op::max || op == Op::min || op == Op::amax; }

}  // namespace ulpscope
