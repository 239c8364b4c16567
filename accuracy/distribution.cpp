#include "accuracy/distribution.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/counter_rng.hpp"
#include "accuracy/ill_conditioned.hpp"
#include "formats/round_to_dtype.hpp"
#include "reference/usable_cores.hpp"

namespace ulpscope {
namespace {

struct ParameterInfo {
  std::string_view meaning;
  double fallback;
  double lo, hi;  // accepted range, inclusive
  bool integer;
};

std::optional<ParameterInfo> parameter_info(Distribution d) {
  switch (d) {
    case Distribution::constant: return ParameterInfo{"the value", 1.0, -1e300, 1e300, false};
    case Distribution::ill_conditioned:
      return ParameterInfo{"the condition number sum|x|/|sum x|", 1e16, 1.0, 1e300, false};
    case Distribution::lognormal: return ParameterInfo{"sigma of the underlying normal", 1.0, 1e-3, 20.0, false};
    case Distribution::llm_activations: return ParameterInfo{"hidden size (channels)", 4096, 1, 1 << 30, true};
    case Distribution::large_mean: return ParameterInfo{"the mean (standard deviation 1; default 1e4, at most 2^(p-2))", 1e4, -1e300, 1e300, false};
    default: return std::nullopt;
  }
}

// "1e16" rather than "1e+16"; "4096", "0.5": the shortest form that parses back.
std::string format_parameter(double v) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // Drop the exponent's "+" and leading zeros: "1e+16" -> "1e16", "1e-05" -> "1e-5".
  std::string s;
  bool in_exponent = false, leading = false;
  for (const char* q = buf; *q; ++q) {
    if (*q == 'e') {
      in_exponent = leading = true;
    } else if (in_exponent && (*q == '+' || (leading && *q == '0' && q[1] != '\0'))) {
      continue;
    } else if (in_exponent && *q != '-') {
      leading = false;
    }
    s += *q;
  }
  return s;
}

// large_mean's default mean: 1e4 (the fp32 case), but no more than
// 2^(p-2), the largest mean at which a standard deviation of 1 still keeps two
// bits in the format (else nearly every value would round to the mean itself).
double large_mean_default(Dtype d) { return std::min(1e4, std::ldexp(1.0, format_info(d).precision - 2)); }

struct Format {
  int p, emin, emax;
  double max_finite;
  bool has_infinity;
};

Format format_of(Dtype d) {
  const FormatInfo& f = format_info(d);
  return {f.precision, f.emin, f.emax, f.max_finite, f.has_infinity};
}

// A counter far above every element's draws, for per-array choices (where the
// NaN goes, which channel is an outlier for sure).
constexpr std::uint64_t kArrayCounter = std::uint64_t(1) << 62;

double with_sign(double v, bool negative) { return negative ? -v : v; }

// Element i of an elementwise distribution, unrounded.
double raw_element(Distribution d, double param, const Format& f, std::int64_t n, const CounterRng& rng,
                   std::uint64_t seed, int stream, std::int64_t i) {
  const std::uint64_t c = std::uint64_t(i) * kDrawsPerElement;
  switch (d) {
    case Distribution::uniform: return rng.uniform(c);
    case Distribution::normal: return standard_normal(rng, std::uint64_t(i));
    case Distribution::constant: return param;
    case Distribution::log_uniform: {
      // Exponent uniform over every binade that holds a value, subnormal ones
      // included (they keep fewer bits), significand uniform in [1, 2).
      const int lo = f.emin - f.p + 1;
      const int e = lo + int(rng.below(c, std::uint64_t(f.emax - lo + 1)));
      const double m = 1.0 + rng.uniform(c + 1);
      return with_sign(m * detail::exact_pow2(e), rng.bits(c + 2) & 1);
    }
    case Distribution::alternating: {
      // x[4k] = H_k, x[4k+2] = -H_k, odd positions tiny t in [1, 2). H in
      // [2^(p+2), 2^(p+3)): half an ulp of H is 4 > t, so H + t rounds back to
      // H in the input format and a naive or pairwise sum loses every t.
      const std::int64_t j = i % 4;
      if (j % 2 == 1) return 1.0 + rng.uniform(c);
      const std::uint64_t pair = std::uint64_t(i - j) * kDrawsPerElement;
      const double h = (1.0 + rng.uniform(pair)) * detail::exact_pow2(f.p + 2);
      return j == 0 ? h : -h;
    }
    // U[0.6 max, max]: any two of them sum past the largest finite value by
    // more than half an ulp, in every format (rounding included).
    case Distribution::near_max: return f.max_finite * (0.6 + 0.4 * rng.uniform(c));
    case Distribution::tiny_squares: {
      // |x| < 2^((emin - p)/2) puts x^2 under half the smallest subnormal
      // 2^(emin - p + 1), so it rounds to zero in the format. Binades
      // [E_lo, E_hi], normal ones where the format has any.
      const int sub = f.emin - f.p + 1;
      const int hi = int(std::floor((sub - 1) / 2.0)) - 1;
      const int lo = std::max(std::min(hi, f.emin), hi - 8);
      const int e = lo + int(rng.below(c, std::uint64_t(hi - lo + 1)));
      return with_sign((1.0 + rng.uniform(c + 1)) * detail::exact_pow2(e), rng.bits(c + 2) & 1);
    }
    case Distribution::cauchy: return standard_cauchy(rng, std::uint64_t(i));
    case Distribution::lognormal: return portable::exp(param * standard_normal(rng, std::uint64_t(i)));
    case Distribution::llm_activations: {
      // Channel i mod H. About one channel in 512 is an outlier (and one
      // chosen channel always is), as in the few systematic outlier features
      // of LLM.int8() (Dettmers et al. 2022): a consistent sign and a scale
      // log-uniform in [100, 1000], 1 + N(0,1)/4 around it. The choice of
      // channels depends on the seed, not on the stream.
      const std::int64_t hidden = std::int64_t(param);
      const std::uint64_t channel = std::uint64_t(i % hidden);
      const CounterRng channels(seed, 0x11A);
      const std::uint64_t forced = channels.below(kArrayCounter, std::uint64_t(std::min(hidden, std::max<std::int64_t>(n, 1))));
      const std::uint64_t cc = channel * kDrawsPerElement;
      const double z = standard_normal(rng, std::uint64_t(i));
      if (channel != forced && channels.below(cc, 512) != 0) return z;
      const double scale = portable::exp(4.605170185988091 + channels.uniform(cc + 1) * 2.302585092994046);
      return with_sign(scale * (1.0 + 0.25 * z), channels.bits(cc + 2) & 1);
    }
    case Distribution::large_mean: return param + standard_normal(rng, std::uint64_t(i));
    case Distribution::with_nan:
    case Distribution::with_inf:
    case Distribution::inf_minus_inf: {
      const CounterRng where(seed, 0x5BEC + std::uint64_t(stream));
      const std::uint64_t first = where.below(kArrayCounter, std::uint64_t(n));
      // fp8_e4m3 has no infinity: its only NaN stands in.
      const double inf = f.has_infinity ? HUGE_VAL : std::nan("");
      if (std::uint64_t(i) == first) return d == Distribution::with_nan ? std::nan("") : inf;
      if (d == Distribution::inf_minus_inf && n > 1) {
        const std::uint64_t second =
            (first + 1 + where.below(kArrayCounter + 1, std::uint64_t(n - 1))) % std::uint64_t(n);
        if (std::uint64_t(i) == second) return f.has_infinity ? -HUGE_VAL : std::nan("");
      }
      return standard_normal(rng, std::uint64_t(i));
    }
    case Distribution::negative_zeros: return -0.0;
    case Distribution::ill_conditioned:
    case Distribution::exact_cancellation:
    case Distribution::sorted_ascending:
    case Distribution::sorted_descending: break;
  }
  throw std::invalid_argument("not an elementwise distribution: " + std::string(to_string(d)));
}

// A total order on the bits of doubles: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN
// (IEEE 754-2019, 5.10 totalOrder), so that sorting is deterministic with ties of -0 and +0.
std::uint64_t total_order_key(double v) {
  const std::uint64_t u = detail::double_bits(v);
  return (u >> 63) ? ~u : (u | (std::uint64_t(1) << 63));
}

void sort_total_order(std::vector<double>& v, bool ascending) {
  std::sort(v.begin(), v.end(), [ascending](double a, double b) {
    return ascending ? total_order_key(a) < total_order_key(b) : total_order_key(a) > total_order_key(b);
  });
}

// Fisher-Yates with the project's generator: the same permutation everywhere.
void shuffle(std::vector<double>& v, const CounterRng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i, i)]);
}

int stream_of(bool y) { return y ? 1 : 0; }

std::vector<double> elements(const DistributionSpec& spec, Dtype dtype, std::int64_t n, std::uint64_t seed,
                             int stream) {
  std::vector<double> out(static_cast<std::size_t>(n));
  // Large arrays in parallel chunks; the bits do not depend on the split.
  const std::int64_t chunk = std::int64_t(1) << 20;
  const unsigned workers = std::min(usable_cores(), 16u);
  if (n < 2 * chunk || workers == 1) {
    generate_elements(spec, dtype, n, seed, stream, 0, out);
    return out;
  }
  const std::int64_t per = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    const std::int64_t first = std::int64_t(w) * per;
    const std::int64_t count = std::min(per, n - first);
    if (count <= 0) break;
    threads.emplace_back([&, first, count] {
      generate_elements(spec, dtype, n, seed, stream, first, std::span<double>(out).subspan(first, count));
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

// x and -x pairs, one tiny value 2^-p (half an ulp of 1: kept only by an exact
// or very careful sum), a +0 to fill an even n, shuffled.
std::vector<double> exact_cancellation(Dtype dtype, std::int64_t n, std::uint64_t seed, int stream) {
  const Format f = format_of(dtype);
  const CounterRng rng(seed, 0xCA9C + std::uint64_t(stream));
  std::vector<double> v;
  v.reserve(std::size_t(n));
  const std::int64_t pairs = n > 0 ? (n - 1) / 2 : 0;
  for (std::int64_t k = 0; k < pairs; ++k) {
    const double a = round_into_format(standard_normal(rng, std::uint64_t(k)), dtype);
    v.push_back(a);
    v.push_back(-a);
  }
  if (n > 0) v.push_back(detail::exact_pow2(-f.p));
  if (std::int64_t(v.size()) < n) v.push_back(0.0);
  shuffle(v, CounterRng(seed, 0x5F1E + std::uint64_t(stream)));
  return v;
}

std::string note_for(const DistributionSpec& spec, Dtype dtype, std::int64_t n) {
  const Format f = format_of(dtype);
  switch (spec.d) {
    case Distribution::with_inf:
    case Distribution::inf_minus_inf:
      if (!f.has_infinity) return std::string(to_string(dtype)) + " has no infinity: NaN stands in its place";
      if (spec.d == Distribution::inf_minus_inf && n == 1) return "n = 1: only the +Inf";
      break;
    case Distribution::large_mean: {
      const double mean = spec.param ? *spec.param : large_mean_default(dtype);
      std::string note = "mean " + format_parameter(mean) + ", standard deviation 1";
      if (std::abs(mean) > f.max_finite) note += ": beyond " + std::string(to_string(dtype)) + "'s range, clamped";
      else if (ulp_in(mean, dtype) > 1.0)
        note += ": the format's ulp at the mean is " + format_parameter(ulp_in(mean, dtype)) +
                ", so most values equal the mean";
      return note;
    }
    case Distribution::constant:
      if (std::abs(*spec.parameter()) > f.max_finite)
        return "parameter beyond " + std::string(to_string(dtype)) + "'s range: clamped to its largest value";
      break;
    default: break;
  }
  return "";
}

}  // namespace

std::string_view parameter_meaning(Distribution d) {
  const auto info = parameter_info(d);
  return info ? info->meaning : std::string_view{};
}

std::optional<double> default_parameter(Distribution d) {
  const auto info = parameter_info(d);
  if (!info) return std::nullopt;
  return info->fallback;
}

std::optional<double> DistributionSpec::parameter() const { return param ? param : default_parameter(d); }

std::string DistributionSpec::name() const {
  std::string s(to_string(d));
  if (param) {
    s += ':';
    s += format_parameter(*param);
  }
  return s;
}

std::optional<DistributionSpec> parse_distribution(std::string_view text, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<DistributionSpec> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const auto d = parse_in(kDistributionNames, name);
  if (!d)
    return fail("unknown distribution '" + std::string(name) + "' (expected one of " +
                names_of(kDistributionNames) + ")");
  DistributionSpec spec{*d, std::nullopt};
  if (colon == std::string_view::npos) return spec;
  const auto info = parameter_info(*d);
  if (!info) return fail("distribution '" + std::string(name) + "' takes no parameter");
  const std::string_view arg = text.substr(colon + 1);
  double v = 0;
  const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), v);
  if (ec != std::errc{} || end != arg.data() + arg.size() || !std::isfinite(v))
    return fail("distribution '" + std::string(name) + "': '" + std::string(arg) + "' is not a number");
  if (v < info->lo || v > info->hi || (info->integer && v != std::floor(v)))
    return fail("distribution '" + std::string(name) + "': " + std::string(info->meaning) + " must be " +
                (info->integer ? "an integer " : "") + "in [" + format_parameter(info->lo) + ", " +
                format_parameter(info->hi) + "], got " + std::string(arg));
  spec.param = v;
  return spec;
}

bool is_elementwise(Distribution d) {
  return d != Distribution::ill_conditioned && d != Distribution::exact_cancellation &&
         d != Distribution::sorted_ascending && d != Distribution::sorted_descending;
}

double round_into_format(double v, Dtype dtype) {
  if (std::isnan(v)) return std::nan("");  // the format's one NaN, whatever its sign
  const double max = format_info(dtype).max_finite;
  if (v > max) v = max;
  if (v < -max) v = -max;
  return round_to_dtype(v, dtype, Saturation::satfinite);
}

void generate_elements(const DistributionSpec& spec, Dtype dtype, std::int64_t n, std::uint64_t seed,
                       int stream, std::int64_t first, std::span<double> out) {
  if (!is_elementwise(spec.d))
    throw std::invalid_argument("not an elementwise distribution: " + spec.name());
  const Format f = format_of(dtype);
  const double param = spec.d == Distribution::large_mean && !spec.param ? large_mean_default(dtype)
                                                                          : spec.parameter().value_or(0.0);
  const CounterRng rng(seed, std::uint64_t(spec.d) * 16 + std::uint64_t(stream));
  for (std::size_t k = 0; k < out.size(); ++k) {
    const double v = raw_element(spec.d, param, f, n, rng, seed, stream, first + std::int64_t(k));
    // Infinities are placed on purpose (with_inf); everything else is clamped.
    out[k] = std::isinf(v) && spec.d != Distribution::cauchy ? v : round_into_format(v, dtype);
  }
}

TypedArray to_typed_array(std::span<const double> values, Dtype dtype) {
  TypedArray a(dtype, values.size());
  std::visit(
      [&](auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        for (std::size_t i = 0; i < values.size(); ++i) {
          if constexpr (std::is_same_v<T, float>) v[i] = static_cast<float>(values[i]);
          else v[i] = T(values[i], Saturation::nosat);
        }
      },
      a.data());
  return a;
}

GeneratedInput generate(const DistributionSpec& spec, Dtype dtype, std::int64_t n, std::uint64_t seed,
                        bool with_y) {
  if (dtype == Dtype::fp64) throw std::invalid_argument("fp64 is an output format, not an input format");
  if (n < 0) throw std::invalid_argument("negative size");
  GeneratedInput out;
  if (spec.d == Distribution::ill_conditioned) {
    IllConditionedInput ill = generate_ill_conditioned(*spec.parameter(), dtype, n, seed, with_y);
    out.x = to_typed_array(ill.x, dtype);
    if (with_y) out.y = to_typed_array(ill.y, dtype);
    out.note = std::move(ill.note);
    out.achieved_condition = ill.achieved;
    out.achieved_dot_condition = ill.achieved_dot;
    return out;
  }
  auto one = [&](int stream) {
    std::vector<double> v;
    if (spec.d == Distribution::exact_cancellation) {
      v = exact_cancellation(dtype, n, seed, stream);
    } else {
      const bool sorted = spec.d == Distribution::sorted_ascending || spec.d == Distribution::sorted_descending;
      // The sorted ones hold the very values of normal with the same seed.
      v = elements(sorted ? DistributionSpec{Distribution::normal, std::nullopt} : spec, dtype, n, seed, stream);
      if (spec.d == Distribution::sorted_ascending) sort_total_order(v, true);
      if (spec.d == Distribution::sorted_descending) sort_total_order(v, false);
    }
    return to_typed_array(v, dtype);
  };
  out.x = one(stream_of(false));
  if (with_y) out.y = one(stream_of(true));
  out.note = note_for(spec, dtype, n);
  return out;
}

}  // namespace ulpscope
