#pragma once
// docs/spec.md, "Accumulators": the names and facts of each, one row per
// accumulator. The value types that implement them (add, merge, finish; host
// and device) are in accumulators/.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "formats/named_enum.hpp"

namespace ulpscope {

enum class Accumulator : std::uint8_t { naive, fp32, fp64, kahan, pairwise, welford, two_pass, exact };

// Where an accumulator's running value is rounded (docs/spec.md,
// "Accumulators"): the a-priori error bound (accuracy/error_bound.cpp) takes
// its unit roundoff from here.
enum class RoundsIn : std::uint8_t { input_format, fp32, fp64, nowhere };

// One row per accumulator: everything the suite needs to know about one
// outside its arithmetic (accumulators/) and its reducers (reducer_table.hpp).
struct AccumulatorFacts {
  Accumulator accumulator;
  std::string_view name;
  RoundsIn rounds_in;
  // Relative work per element in the tree kernel, memory traffic equal:
  // --recommend's cost where no throughput was measured. naive/fp32 one add
  // (or FMA); pairwise the same adds in another order plus a small stack;
  // kahan/Neumaier 4 flops and a compare per element (Higham 2002, Alg. 4.2);
  // welford a division per element; fp64 runs on fp64 units (half the fp32
  // rate on H100, far less on consumer parts); two_pass reads the row twice;
  // exact keeps an integer or binned state per thread.
  double modelled_cost;
};

inline constexpr std::array<AccumulatorFacts, 8> kAccumulators = {{
    {Accumulator::naive, "naive", RoundsIn::input_format, 1.0},
    {Accumulator::fp32, "fp32", RoundsIn::fp32, 1.0},
    {Accumulator::fp64, "fp64", RoundsIn::fp64, 2.0},
    {Accumulator::kahan, "kahan", RoundsIn::fp32, 1.5},
    {Accumulator::pairwise, "pairwise", RoundsIn::fp32, 1.2},
    {Accumulator::welford, "welford", RoundsIn::fp32, 2.0},
    {Accumulator::two_pass, "two_pass", RoundsIn::fp32, 2.0},
    {Accumulator::exact, "exact", RoundsIn::nowhere, 3.0},
}};

constexpr const AccumulatorFacts& facts_of(Accumulator a) {
  for (const AccumulatorFacts& f : kAccumulators)
    if (f.accumulator == a) return f;
  return kAccumulators[0];  // unreachable: every enumerator has its row (checked below)
}

namespace detail {
template <std::size_t... I>
constexpr NameTable<Accumulator, sizeof...(I)> accumulator_names(std::index_sequence<I...>) {
  return {{{kAccumulators[I].accumulator, kAccumulators[I].name}...}};
}
constexpr bool every_accumulator_has_its_row() {
  for (std::size_t i = 0; i < kAccumulators.size(); ++i)
    if (std::size_t(kAccumulators[i].accumulator) != i) return false;
  return true;
}
}  // namespace detail
static_assert(detail::every_accumulator_has_its_row(), "kAccumulators: one row per enumerator, in its order");

inline constexpr NameTable<Accumulator, kAccumulators.size()> kAccumulatorNames =
    detail::accumulator_names(std::make_index_sequence<kAccumulators.size()>{});

constexpr std::string_view to_string(Accumulator a) { return name_in(kAccumulatorNames, a); }

}  // namespace ulpscope
