#pragma once
// docs/spec.md, "Accumulators": the names. The value types that implement them
// (add, merge, finish; host and device) are in accumulators/.
#include <cstdint>

#include "formats/named_enum.hpp"

namespace ulpscope {

enum class Accumulator : std::uint8_t { naive, fp32, fp64, kahan, pairwise, welford, two_pass, exact };

inline constexpr NameTable<Accumulator, 8> kAccumulatorNames = {{{Accumulator::naive, "naive"},
                                                                 {Accumulator::fp32, "fp32"},
                                                                 {Accumulator::fp64, "fp64"},
                                                                 {Accumulator::kahan, "kahan"},
                                                                 {Accumulator::pairwise, "pairwise"},
                                                                 {Accumulator::welford, "welford"},
                                                                 {Accumulator::two_pass, "two_pass"},
                                                                 {Accumulator::exact, "exact"}}};

constexpr std::string_view to_string(Accumulator a) { return name_in(kAccumulatorNames, a); }

}  // namespace ulpscope
