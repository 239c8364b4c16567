#pragma once
// docs/spec.md, "Adversarial distributions": inputs generated from (name, param,
// dtype, n, seed) alone, the same bits on every machine, drawn in the input
// format (every value is rounded there, once).
//
// Most distributions are elementwise: element i is a pure function of
// (spec, dtype, n, seed, stream, i) built on CounterRng (counter_rng.hpp),
// so any chunking or threading gives the same array. The others (sorted,
// exact cancellation, ill-conditioned) post-process an elementwise array with
// deterministic steps of their own (a total order on bits, a Fisher-Yates
// shuffle driven by the same generator, exact MPFR sums).
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "formats/dtype.hpp"
#include "formats/named_enum.hpp"
#include "formats/typed_array.hpp"

namespace ulpscope {

enum class Distribution : std::uint8_t {
  uniform,             // U[0, 1)
  normal,              // N(0, 1)
  constant,            // every value = param (default 1): stagnation once the sum passes 2^p
  ill_conditioned,     // sum|x| / |sum x| = param (default 1e16), Ogita-Rump-Oishi style
  log_uniform,         // magnitudes log-uniform over the whole range (subnormals to max), random signs
  sorted_ascending,    // normal(0,1) sorted ascending
  sorted_descending,   // normal(0,1) sorted descending
  alternating,         // H, t, -H, t, ...: every tiny t is absorbed when added to a huge H
  near_max,            // U[0.6 max, max]: any sum of two, and every square, overflows
  tiny_squares,        // |x| so small that x^2 rounds to 0 in the format, random signs
  cauchy,              // standard Cauchy (heavy tails), clamped to the format's range
  lognormal,           // exp(param * N(0,1)), param = sigma (default 1)
  llm_activations,     // N(0,1) with a few outlier channels 100-1000x larger; param = hidden size
  large_mean,          // param + N(0,1): breaks E[x^2] - E[x]^2; mean 1e4 by default, at most 2^(p-2)
  exact_cancellation,  // x and -x pairs shuffled, plus one tiny value 2^-p
  with_nan,            // N(0,1) with one NaN
  with_inf,            // N(0,1) with one +Inf (NaN in fp8_e4m3, which has no infinity)
  inf_minus_inf,       // N(0,1) with one +Inf and one -Inf: the sum is NaN
  negative_zeros,      // every value -0: the sum is -0 (IEEE 754, 6.3)
};

inline constexpr NameTable<Distribution, 19> kDistributionNames = {
    {{Distribution::uniform, "uniform"},
     {Distribution::normal, "normal"},
     {Distribution::constant, "constant"},
     {Distribution::ill_conditioned, "ill_conditioned"},
     {Distribution::log_uniform, "log_uniform"},
     {Distribution::sorted_ascending, "sorted_ascending"},
     {Distribution::sorted_descending, "sorted_descending"},
     {Distribution::alternating, "alternating"},
     {Distribution::near_max, "near_max"},
     {Distribution::tiny_squares, "tiny_squares"},
     {Distribution::cauchy, "cauchy"},
     {Distribution::lognormal, "lognormal"},
     {Distribution::llm_activations, "llm_activations"},
     {Distribution::large_mean, "large_mean"},
     {Distribution::exact_cancellation, "exact_cancellation"},
     {Distribution::with_nan, "with_nan"},
     {Distribution::with_inf, "with_inf"},
     {Distribution::inf_minus_inf, "inf_minus_inf"},
     {Distribution::negative_zeros, "negative_zeros"}}};

constexpr std::string_view to_string(Distribution d) { return name_in(kDistributionNames, d); }

// docs/spec.md, "Distribution groups": the data a kernel meets in practice
// (realistic), the data built to break it (adversarial), IEEE special
// values (special), and data this build did not generate (a user's --input
// file, "file:x.npy"). The verdict and --recommend judge per group.
enum class DistributionGroup : std::uint8_t { realistic, adversarial, special, user_input };
inline constexpr NameTable<DistributionGroup, 4> kDistributionGroupNames = {
    {{DistributionGroup::realistic, "realistic"},
     {DistributionGroup::adversarial, "adversarial"},
     {DistributionGroup::special, "special"},
     {DistributionGroup::user_input, "user input"}}};
constexpr std::string_view to_string(DistributionGroup g) { return name_in(kDistributionGroupNames, g); }

// Every distribution's group and one line for --help. Header-only, like the
// names: reports/ and the command line use it without linking accuracy/.
struct DistributionSummary {
  Distribution d;
  DistributionGroup group;
  std::string_view summary;
};
inline constexpr std::array<DistributionSummary, 19> kDistributionSummaries = {{
    {Distribution::uniform, DistributionGroup::realistic, "U[0, 1)"},
    {Distribution::normal, DistributionGroup::realistic, "N(0, 1)"},
    {Distribution::constant, DistributionGroup::adversarial, "every value :v (default 1): the sum stagnates past 2^p"},
    {Distribution::ill_conditioned, DistributionGroup::adversarial,
     "a sum with condition number sum|x|/|sum x| = :C (default 1e16)"},
    {Distribution::log_uniform, DistributionGroup::adversarial,
     "magnitudes log-uniform over every binade, subnormals included, random signs"},
    {Distribution::sorted_ascending, DistributionGroup::adversarial, "the normal values, sorted ascending"},
    {Distribution::sorted_descending, DistributionGroup::adversarial, "the normal values, sorted descending"},
    {Distribution::alternating, DistributionGroup::adversarial,
     "H, t, -H, t, ...: each tiny t is lost when added to a huge H"},
    {Distribution::near_max, DistributionGroup::adversarial, "U[0.6 max, max]: any sum of two, and any square, overflows"},
    {Distribution::tiny_squares, DistributionGroup::adversarial, "|x| so small that x^2 rounds to 0 in the format"},
    {Distribution::cauchy, DistributionGroup::adversarial, "standard Cauchy (heavy tails), clamped to the finite range"},
    {Distribution::lognormal, DistributionGroup::realistic, "exp(:sigma N(0,1)) (default sigma 1)"},
    {Distribution::llm_activations, DistributionGroup::realistic,
     "N(0,1) with a few outlier channels 100-1000x larger (:H channels, default 4096)"},
    {Distribution::large_mean, DistributionGroup::realistic, ":mu + N(0,1): breaks E[x^2] - E[x]^2"},
    {Distribution::exact_cancellation, DistributionGroup::adversarial, "pairs x, -x plus one 2^-p: the sum is 2^-p"},
    {Distribution::with_nan, DistributionGroup::special, "N(0,1) with one NaN"},
    {Distribution::with_inf, DistributionGroup::special, "N(0,1) with one +Inf"},
    {Distribution::inf_minus_inf, DistributionGroup::special, "N(0,1) with one +Inf and one -Inf: the sum is NaN"},
    {Distribution::negative_zeros, DistributionGroup::special, "every value -0: the sum is -0"},
}};

// The group of a cell's distribution as the report names it
// ("ill_conditioned:1e16", "file:x.npy"): a name this build does not
// generate is a user's input.
constexpr DistributionGroup distribution_group(std::string_view name) {
  const std::string_view bare = name.substr(0, name.find(':'));
  for (const DistributionSummary& s : kDistributionSummaries)
    if (to_string(s.d) == bare) return s.group;
  return DistributionGroup::user_input;
}

constexpr DistributionGroup group_of(Distribution d) {
  for (const DistributionSummary& s : kDistributionSummaries)
    if (s.d == d) return s.group;
  return DistributionGroup::adversarial;
}

// What a distribution's parameter means ("" when it takes none), and its default.
std::string_view parameter_meaning(Distribution d);
std::optional<double> default_parameter(Distribution d);

struct DistributionSpec {
  Distribution d = Distribution::uniform;
  std::optional<double> param;  // nullopt: the default

  // "ill_conditioned:1e16", or the bare name without a parameter; parses back.
  std::string name() const;
  // The parameter in effect (param, else the default); nullopt when none.
  std::optional<double> parameter() const;
};

// "name" or "name:param" (as on the command line). nullopt, with a one-line
// reason in *error, for an unknown name, a parameter the distribution does
// not take, or a parameter out of its range.
std::optional<DistributionSpec> parse_distribution(std::string_view text, std::string* error = nullptr);

struct GeneratedInput {
  TypedArray x;
  std::optional<TypedArray> y;  // the second vector of a dot product, when asked for
  // What the inputs turned out to be where it may differ from what was asked:
  // "condition reached 3.2e15 (asked 1e16)", "fp8_e4m3 has no infinity: ...".
  std::string note;
  // ill_conditioned: sum|x|/|sum x| and, with y, sum|x_i y_i|/|x.y|, exactly.
  std::optional<double> achieved_condition, achieved_dot_condition;
};

// x is the same whether or not y is asked for. Throws std::invalid_argument
// for fp64 (an output format only) or n < 0.
GeneratedInput generate(const DistributionSpec& spec, Dtype dtype, std::int64_t n, std::uint64_t seed,
                        bool with_y = false);

// Whether element i depends only on (spec, dtype, n, seed, stream, i).
bool is_elementwise(Distribution d);

// Elements [first, first + out.size()) of an elementwise distribution, already
// rounded to dtype and widened to double: stream 0 is x, stream 1 is y.
// Throws std::invalid_argument for a distribution that is not elementwise.
void generate_elements(const DistributionSpec& spec, Dtype dtype, std::int64_t n, std::uint64_t seed,
                       int stream, std::int64_t first, std::span<double> out);

// Values already in the format (as generate_elements gives them) as a TypedArray.
TypedArray to_typed_array(std::span<const double> values, Dtype dtype);

// RN_F(v) with values beyond the format's range clamped to its largest finite
// value first (Cauchy tails, outliers): the inputs are always finite unless a
// distribution puts a NaN or an infinity there on purpose.
double round_into_format(double v, Dtype dtype);

}  // namespace ulpscope
