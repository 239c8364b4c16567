#pragma once
// What --recommend's budget (--ulp-tolerance) is measured in (docs/spec.md,
// "Choosing an accumulator"): the accumulator's own error, the default where
// the op has one (rmsnorm, layernorm), or the strict ulp_error.
#include <cstdint>

#include "formats/named_enum.hpp"

namespace ulpscope {

enum class BudgetMetric : std::uint8_t { accumulator, strict };
inline constexpr NameTable<BudgetMetric, 2> kBudgetMetricNames = {
    {{BudgetMetric::accumulator, "accumulator"}, {BudgetMetric::strict, "strict"}}};

}  // namespace ulpscope
