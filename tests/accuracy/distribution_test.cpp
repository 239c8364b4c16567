#include "accuracy/distribution.hpp"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "kernels/counter_rng.hpp"
#include "formats/round_to_dtype.hpp"

namespace ulpscope {
namespace {

std::vector<Distribution> all_distributions() {
  std::vector<Distribution> v;
  for (const auto& [d, name] : kDistributionNames) v.push_back(d);
  return v;
}

std::uint64_t bits_of(double v) { return std::bit_cast<std::uint64_t>(v); }

// Exact sum of doubles by mpfr_sum (an independent path from the generator's own sums).
double exact_sum_rounded(const std::vector<double>& v) {
  std::vector<mpfr_t> terms(v.size());
  std::vector<mpfr_ptr> ptrs(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    mpfr_init2(terms[i], 53);
    mpfr_set_d(terms[i], v[i], MPFR_RNDN);
    ptrs[i] = terms[i];
  }
  mpfr_t s;
  mpfr_init2(s, 53);
  mpfr_sum(s, ptrs.data(), v.size(), MPFR_RNDN);
  const double r = mpfr_get_d(s, MPFR_RNDN);
  mpfr_clear(s);
  for (auto& t : terms) mpfr_clear(t);
  return r;
}

// --- names and parameters ---

TEST(DistributionNames, EveryNameParsesBack) {
  for (Distribution d : all_distributions()) {
    const DistributionSpec spec{d, std::nullopt};
    const auto back = parse_distribution(spec.name());
    ASSERT_TRUE(back.has_value()) << spec.name();
    EXPECT_EQ(back->d, d);
    EXPECT_FALSE(back->param.has_value());
    EXPECT_EQ(default_parameter(d).has_value(), !parameter_meaning(d).empty()) << spec.name();
  }
}

TEST(DistributionNames, ParametersRoundTrip) {
  for (const char* text : {"ill_conditioned:1e16", "ill_conditioned:3.5e27", "lognormal:0.5", "llm_activations:1024",
                           "large_mean:10000", "constant:-2.5", "ill_conditioned:1e-5"}) {
    std::string error;
    const auto spec = parse_distribution(text, &error);
    if (std::string(text) == "ill_conditioned:1e-5") {
      EXPECT_FALSE(spec.has_value());
      EXPECT_NE(error.find("must be"), std::string::npos) << error;
      continue;
    }
    ASSERT_TRUE(spec.has_value()) << text << ": " << error;
    const auto again = parse_distribution(spec->name());
    ASSERT_TRUE(again.has_value()) << spec->name();
    EXPECT_EQ(again->param, spec->param) << text;
  }
  EXPECT_EQ(parse_distribution("ill_conditioned:1e16")->name(), "ill_conditioned:1e16");
  EXPECT_EQ(parse_distribution("lognormal:0.5")->name(), "lognormal:0.5");
  EXPECT_EQ((DistributionSpec{Distribution::ill_conditioned, std::nullopt}.parameter()), 1e16);
}

TEST(DistributionNames, BadTextGivesOneClearLine) {
  std::string error;
  EXPECT_FALSE(parse_distribution("gaussian", &error));
  EXPECT_NE(error.find("unknown distribution 'gaussian'"), std::string::npos) << error;
  EXPECT_NE(error.find("ill_conditioned"), std::string::npos) << error;  // lists the accepted names
  EXPECT_FALSE(parse_distribution("uniform:3", &error));
  EXPECT_NE(error.find("takes no parameter"), std::string::npos) << error;
  EXPECT_FALSE(parse_distribution("ill_conditioned:lots", &error));
  EXPECT_NE(error.find("not a number"), std::string::npos) << error;
  EXPECT_FALSE(parse_distribution("ill_conditioned:", &error));
  EXPECT_FALSE(parse_distribution("llm_activations:10.5", &error));
  EXPECT_NE(error.find("integer"), std::string::npos) << error;
  EXPECT_FALSE(parse_distribution("lognormal:inf", &error));
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(DistributionGenerate, RejectsFp64AndNegativeSizes) {
  EXPECT_THROW(generate({Distribution::uniform, std::nullopt}, Dtype::fp64, 10, 1), std::invalid_argument);
  EXPECT_THROW(generate({Distribution::uniform, std::nullopt}, Dtype::fp32, -1, 1), std::invalid_argument);
  std::vector<double> out(4);
  EXPECT_THROW(generate_elements({Distribution::sorted_ascending, std::nullopt}, Dtype::fp32, 4, 1, 0, 0, out),
               std::invalid_argument);
}

// --- the generator ---

TEST(CounterRng, IsAPureFunctionOfSeedStreamAndCounter) {
  const CounterRng a(42, 0), b(42, 0), c(43, 0), d(42, 1);
  EXPECT_EQ(a.bits(0), b.bits(0));
  EXPECT_EQ(a.bits(123456789), b.bits(123456789));
  EXPECT_NE(a.bits(0), c.bits(0));
  EXPECT_NE(a.bits(0), d.bits(0));
  // SplitMix64's published first output for seed 0 (Vigna's splitmix64.c): our
  // bits(0) with key 0 is that value, which pins the mixing function.
  EXPECT_EQ(mix64(kGoldenGamma), 0xE220A8397B1DCDAFull);
  // The sequential form (the shuffles' and benchmarks' generator) gives the
  // same published outputs from state 0 (Vigna's splitmix64.c, x = 0):
  // 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, and CounterRng's counter form
  // with key 0.
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64(state), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(splitmix64(state), mix64(3 * kGoldenGamma));
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const double u = a.uniform(i);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    EXPECT_LT(a.below(i, 7), 7u);
  }
}

TEST(PortableMath, MatchesLibmToAFewUlps) {
  for (double x : {1e-300, 1e-10, 0.1, 0.5, 0.7071, 0.99999, 1.0, 1.5, 2.0, 10.0, 12345.678, 1e300}) {
    EXPECT_NEAR(portable::log(x), std::log(x), 4e-16 * std::max(1.0, std::abs(std::log(x)))) << x;
  }
  EXPECT_EQ(portable::log(1.0), 0.0);
  for (double x : {-700.0, -30.0, -1.0, -1e-9, 0.0, 1e-9, 0.5, 1.0, 2.302585092994046, 30.0, 700.0}) {
    EXPECT_NEAR(portable::exp(x) / std::exp(x), 1.0, 4e-16) << x;
  }
}

// --- determinism: chunks, threads, repeats ---

class EveryDtype : public ::testing::TestWithParam<Dtype> {};

TEST_P(EveryDtype, ChunkedAndThreadedGenerationGiveTheSameBits) {
  const Dtype dt = GetParam();
  const std::int64_t n = 10007;
  for (Distribution d : all_distributions()) {
    if (!is_elementwise(d)) continue;
    const DistributionSpec spec{d, std::nullopt};
    const std::vector<double> whole = generate(spec, dt, n, 99).x.to_doubles();
    std::vector<double> pieces(static_cast<std::size_t>(n));
    // Ugly chunk sizes, each generated on its own thread.
    const std::vector<std::int64_t> cuts = {0, 1, 32, 65, 1088, 4097, n};
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      threads.emplace_back([&, k] {
        generate_elements(spec, dt, n, 99, 0, cuts[k],
                          std::span<double>(pieces).subspan(cuts[k], cuts[k + 1] - cuts[k]));
      });
    }
    for (auto& t : threads) t.join();
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(bits_of(whole[i]), bits_of(pieces[i])) << spec.name() << " element " << i;
  }
}

TEST_P(EveryDtype, SameArgumentsSameBitsOtherSeedOtherBits) {
  const Dtype dt = GetParam();
  for (Distribution d : all_distributions()) {
    const DistributionSpec spec{d, std::nullopt};
    for (std::int64_t n : {0, 1, 31, 33, 1000}) {
      const GeneratedInput a = generate(spec, dt, n, 5, true), b = generate(spec, dt, n, 5, true);
      ASSERT_EQ(a.x.size(), std::size_t(n));
      ASSERT_TRUE(a.y.has_value());
      ASSERT_EQ(a.y->size(), std::size_t(n));
      ASSERT_EQ(a.x.dtype(), dt);
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(bits_of(a.x.at(i)), bits_of(b.x.at(i))) << spec.name() << " n=" << n << " i=" << i;
        ASSERT_EQ(bits_of(a.y->at(i)), bits_of(b.y->at(i))) << spec.name() << " n=" << n << " i=" << i;
      }
    }
    if (d == Distribution::constant || d == Distribution::negative_zeros) continue;
    const auto a = generate(spec, dt, 1000, 5).x.to_doubles(), c = generate(spec, dt, 1000, 6).x.to_doubles();
    int same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += bits_of(a[i]) == bits_of(c[i]);
    // fp8 has few values (and alternating's tiny ones are in [1, 2]): many repeats by chance, not all.
    EXPECT_LT(same, 900) << spec.name() << " ignores its seed";
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, EveryDtype, ::testing::ValuesIn(kInputDtypes),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(DistributionGenerate, ThreadedLargeArrayEqualsOneSequentialPass) {
  // n above the size from which generate() splits the work over threads.
  const std::int64_t n = (std::int64_t(1) << 21) + 3;
  const DistributionSpec spec{Distribution::normal, std::nullopt};
  const auto threaded = generate(spec, Dtype::bf16, n, 3).x.to_doubles();
  std::vector<double> sequential(static_cast<std::size_t>(n));
  generate_elements(spec, Dtype::bf16, n, 3, 0, 0, sequential);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(bits_of(threaded[i]), bits_of(sequential[i])) << i;
}

// --- what each distribution is ---

std::vector<double> draw(Distribution d, Dtype dt, std::int64_t n, std::uint64_t seed = 11) {
  return generate({d, std::nullopt}, dt, n, seed).x.to_doubles();
}

struct Moments {
  double mean = 0, sd = 0;
};
Moments moments(const std::vector<double>& v) {
  long double s = 0, s2 = 0;
  for (double x : v) s += x;
  const long double m = s / v.size();
  for (double x : v) s2 += (x - m) * (x - m);
  return {double(m), double(std::sqrt(s2 / v.size()))};
}

TEST_P(EveryDtype, EveryValueIsAValueOfTheFormat) {
  const Dtype dt = GetParam();
  for (Distribution d : all_distributions()) {
    for (double v : generate({d, std::nullopt}, dt, 2000, 8, true).x.to_doubles())
      ASSERT_TRUE(is_representable(v, dt)) << to_string(d) << " " << v;
  }
}

TEST_P(EveryDtype, UniformNormalAndConstant) {
  const Dtype dt = GetParam();
  const auto u = draw(Distribution::uniform, dt, 100000);
  for (double v : u) ASSERT_TRUE(v >= 0.0 && v <= 1.0) << v;  // 1: [0,1) rounded to the format
  const Moments mu = moments(u);
  EXPECT_NEAR(mu.mean, 0.5, 0.01);
  EXPECT_NEAR(mu.sd, std::sqrt(1.0 / 12), 0.01);
  const Moments mn = moments(draw(Distribution::normal, dt, 100000));
  EXPECT_NEAR(mn.mean, 0.0, 0.02);
  EXPECT_NEAR(mn.sd, 1.0, 0.02);
  for (double v : draw(Distribution::constant, dt, 100)) ASSERT_EQ(v, 1.0);
  for (double v : generate({Distribution::constant, 3.0}, dt, 100, 1).x.to_doubles()) ASSERT_EQ(v, 3.0);
}

TEST(DistributionShape, NormalHasGaussianTails) {
  // P(|Z| > 1) = 0.3173, P(|Z| > 2) = 0.0455, P(|Z| > 3) = 0.0027.
  const auto v = draw(Distribution::normal, Dtype::fp32, 200000);
  double over[3] = {};
  for (double x : v)
    for (int k = 0; k < 3; ++k) over[k] += std::abs(x) > k + 1;
  EXPECT_NEAR(over[0] / v.size(), 0.3173, 0.004);
  EXPECT_NEAR(over[1] / v.size(), 0.0455, 0.0015);
  EXPECT_NEAR(over[2] / v.size(), 0.0027, 0.0004);
}

TEST_P(EveryDtype, LogUniformCoversTheWholeRange) {
  const Dtype dt = GetParam();
  const FormatInfo& f = format_info(dt);
  const auto v = draw(Distribution::log_uniform, dt, 20000);
  double lo = HUGE_VAL, hi = 0;
  int negative = 0;
  for (double x : v) {
    ASSERT_NE(x, 0.0);
    lo = std::min(lo, std::abs(x));
    hi = std::max(hi, std::abs(x));
    negative += std::signbit(x);
  }
  EXPECT_LT(lo, f.min_normal);  // subnormals too
  EXPECT_GT(hi, f.max_finite / 4);
  EXPECT_NEAR(double(negative) / v.size(), 0.5, 0.02);
}

TEST_P(EveryDtype, SortedHoldNormalsValuesInOrder) {
  const Dtype dt = GetParam();
  auto normal = draw(Distribution::normal, dt, 4097);
  const auto up = draw(Distribution::sorted_ascending, dt, 4097);
  const auto down = draw(Distribution::sorted_descending, dt, 4097);
  for (std::size_t i = 1; i < up.size(); ++i) {
    ASSERT_LE(up[i - 1], up[i]);
    ASSERT_GE(down[i - 1], down[i]);
    // -0 before +0 going up (totalOrder).
    if (up[i - 1] == 0 && up[i] == 0) {
      ASSERT_FALSE(std::signbit(up[i]) && !std::signbit(up[i - 1]));
    }
  }
  std::sort(normal.begin(), normal.end());
  auto up_values = up;
  std::sort(up_values.begin(), up_values.end());
  EXPECT_EQ(normal, up_values);
}

TEST_P(EveryDtype, AlternatingTinyValuesVanishNextToHugeOnes) {
  const Dtype dt = GetParam();
  const auto v = draw(Distribution::alternating, dt, 1001);
  for (std::size_t i = 0; i + 2 < v.size(); i += 4) {
    ASSERT_EQ(v[i], -v[i + 2]);
    for (std::size_t t : {i + 1, i + 3}) {
      ASSERT_GE(v[t], 1.0);
      ASSERT_LE(v[t], 2.0);
      ASSERT_EQ(round_to_dtype(v[i] + v[t], dt), v[i]) << "tiny " << v[t] << " not absorbed by " << v[i];
    }
  }
}

TEST_P(EveryDtype, NearMaxOverflowsSumsAndSquares) {
  const Dtype dt = GetParam();
  const FormatInfo& f = format_info(dt);
  for (double x : draw(Distribution::near_max, dt, 1000)) {
    ASSERT_GE(x, f.max_finite / 2);
    ASSERT_LE(x, f.max_finite);
    ASSERT_FALSE(std::isfinite(round_to_dtype(x + x, dt, Saturation::nosat))) << x;
    ASSERT_FALSE(std::isfinite(round_to_dtype(x * x, dt, Saturation::nosat))) << x;
  }
}

TEST_P(EveryDtype, TinySquaresUnderflowToZero) {
  const Dtype dt = GetParam();
  int negative = 0;
  for (double x : draw(Distribution::tiny_squares, dt, 1000)) {
    ASSERT_NE(x, 0.0);
    ASSERT_EQ(round_to_dtype(x * x, dt), 0.0) << x;
    negative += std::signbit(x);
  }
  EXPECT_GT(negative, 400);
  EXPECT_LT(negative, 600);
}

TEST(DistributionShape, CauchyAndLognormalHaveHeavyTails) {
  auto c = draw(Distribution::cauchy, Dtype::fp32, 100001);
  for (double& x : c) x = std::abs(x);
  std::nth_element(c.begin(), c.begin() + 50000, c.end());
  EXPECT_NEAR(c[50000], 1.0, 0.02);  // the median of |Cauchy| is 1
  EXPECT_GT(*std::max_element(c.begin(), c.end()), 1e4);
  auto l = draw(Distribution::lognormal, Dtype::fp32, 100001);
  for (double x : l) ASSERT_GT(x, 0.0);
  EXPECT_NEAR(moments(l).mean, std::exp(0.5), 0.05);
  std::nth_element(l.begin(), l.begin() + 50000, l.end());
  EXPECT_NEAR(l[50000], 1.0, 0.02);  // the median of exp(N(0,1)) is 1
}

TEST(DistributionShape, LlmActivationsHaveAFewOutlierChannels) {
  const std::int64_t hidden = 4096, tokens = 8;
  const auto v = generate({Distribution::llm_activations, std::nullopt}, Dtype::fp32, hidden * tokens, 4).x.to_doubles();
  int outliers = 0;
  for (std::int64_t c = 0; c < hidden; ++c) {
    double smallest = HUGE_VAL;
    for (std::int64_t t = 0; t < tokens; ++t) smallest = std::min(smallest, std::abs(v[t * hidden + c]));
    if (smallest >= 20) {
      ++outliers;
      // The same sign in every token, 100-1000x the others' unit scale.
      for (std::int64_t t = 1; t < tokens; ++t) ASSERT_EQ(std::signbit(v[t * hidden + c]), std::signbit(v[c]));
    }
  }
  EXPECT_GE(outliers, 1);
  EXPECT_LE(outliers, 40);
  // Small arrays still get one.
  const auto small = generate({Distribution::llm_activations, std::nullopt}, Dtype::fp32, 31, 4).x.to_doubles();
  EXPECT_GE(std::abs(*std::max_element(small.begin(), small.end(),
                                       [](double a, double b) { return std::abs(a) < std::abs(b); })),
            50.0);
}

// The test for the large-mean distribution: in fp32, the textbook
// E[x^2] - E[x]^2 loses every digit, Welford and two-pass keep them. All three
// in serial order here. (Beyond about 2^15 values the serial fp32 mean itself
// drifts: at n = 1e5 its error is about 7, and a serial two-pass variance
// loses too; a tree-shaped mean does not.)
class LargeMean : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(LargeMean, BreaksTheTextbookVarianceInFp32) {
  const auto v = draw(Distribution::large_mean, Dtype::fp32, GetParam());
  const Moments m = moments(v);
  EXPECT_NEAR(m.mean, 1e4, 0.1);
  EXPECT_NEAR(m.sd, 1.0, 0.1);
  const double exact_var = m.sd * m.sd;
  const float n = float(v.size());
  float s = 0, s2 = 0;
  for (double x : v) {
    s += float(x);
    s2 += float(x) * float(x);
  }
  const float textbook = s2 / n - (s / n) * (s / n);
  float mean = 0, m2 = 0;  // Welford
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float d = float(v[i]) - mean;
    mean += d / float(i + 1);
    m2 += d * (float(v[i]) - mean);
  }
  const float welford = m2 / n;
  float two_mean = 0;
  for (double x : v) two_mean += float(x);
  two_mean /= n;
  float ss = 0;
  for (double x : v) ss += (float(x) - two_mean) * (float(x) - two_mean);
  const float two_pass = ss / n;
  EXPECT_GT(std::abs(textbook - exact_var) / exact_var, 1.0) << "textbook " << textbook;
  EXPECT_LT(std::abs(welford - exact_var) / exact_var, 1e-2) << "welford " << welford;
  EXPECT_LT(std::abs(two_pass - exact_var) / exact_var, 1e-2) << "two_pass " << two_pass;
}

INSTANTIATE_TEST_SUITE_P(Sizes, LargeMean, ::testing::Values(1000, 4096, 32768));

TEST_P(EveryDtype, ExactCancellationSumsToTheTinyValue) {
  const Dtype dt = GetParam();
  const double tiny = std::ldexp(1.0, -format_info(dt).precision);
  for (std::int64_t n : {1, 2, 31, 32, 1000, 4097}) {
    const auto v = draw(Distribution::exact_cancellation, dt, n);
    EXPECT_EQ(exact_sum_rounded(v), tiny) << n;
    if (n >= 1000) {
      int at_tiny = 0;  // shuffled: the tiny value is not at the end
      EXPECT_NE(v.back(), tiny);
      for (double x : v) at_tiny += x == tiny;
      EXPECT_GE(at_tiny, 1);
    }
  }
}

TEST_P(EveryDtype, SpecialValues) {
  const Dtype dt = GetParam();
  const bool has_inf = format_info(dt).has_infinity;
  for (std::int64_t n : {1, 2, 33, 1000}) {
    auto count = [](const std::vector<double>& v, auto pred) { return std::count_if(v.begin(), v.end(), pred); };
    const auto nan = draw(Distribution::with_nan, dt, n);
    EXPECT_EQ(count(nan, [](double x) { return std::isnan(x); }), 1) << n;
    const auto inf = draw(Distribution::with_inf, dt, n);
    EXPECT_EQ(count(inf, [&](double x) { return has_inf ? x == HUGE_VAL : std::isnan(x); }), 1) << n;
    const auto both = draw(Distribution::inf_minus_inf, dt, n);
    if (has_inf) {
      EXPECT_EQ(count(both, [](double x) { return x == HUGE_VAL; }), 1) << n;
      EXPECT_EQ(count(both, [](double x) { return x == -HUGE_VAL; }), n > 1 ? 1 : 0) << n;
    } else {
      EXPECT_EQ(count(both, [](double x) { return std::isnan(x); }), std::min<std::int64_t>(n, 2)) << n;
      EXPECT_NE(generate({Distribution::with_inf, std::nullopt}, dt, n, 11).note.find("no infinity"),
                std::string::npos);
    }
    for (double x : draw(Distribution::negative_zeros, dt, n)) ASSERT_TRUE(x == 0 && std::signbit(x));
  }
}

// --- pinned bits ---

// FNV-1a (64-bit) over each value's bit pattern in the input format, little
// endian, x then y: a change to any generator shows up here.
std::uint64_t hash_values(const TypedArray& a, std::uint64_t h) {
  visit_typed(a, [&](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    for (const T& e : v) {
      std::uint32_t b;
      int bytes;
      if constexpr (std::is_same_v<T, float>) {
        b = std::bit_cast<std::uint32_t>(e);
        bytes = 4;
      } else {
        b = e.bits;
        bytes = int(sizeof(e.bits));
      }
      for (int k = 0; k < bytes; ++k) {
        h ^= (b >> (8 * k)) & 0xFF;
        h *= 0x100000001B3ull;
      }
    }
  });
  return h;
}

struct PinnedHash {
  const char* distribution;
  const char* dtype;
  std::uint64_t hash;
};

// generate(name, dtype, n = 4096, seed = 2026, with_y = true). Regenerate only
// on purpose (a deliberate change to a generator), from the test's output.
constexpr PinnedHash kPinned[] = {
#include "distribution_hashes.inc"
};

TEST(DistributionBits, PinnedHashesOfTheFirst4096Values) {
  int checked = 0;
  std::string table;
  for (Distribution d : all_distributions()) {
    for (Dtype dt : kInputDtypes) {
      const GeneratedInput g = generate({d, std::nullopt}, dt, 4096, 2026, true);
      const std::uint64_t h = hash_values(*g.y, hash_values(g.x, 0xCBF29CE484222325ull));
      char line[160];
      std::snprintf(line, sizeof line, "    {\"%s\", \"%s\", 0x%016llXull},\n", std::string(to_string(d)).c_str(),
                    std::string(to_string(dt)).c_str(), static_cast<unsigned long long>(h));
      table += line;
      for (const PinnedHash& p : kPinned) {
        if (to_string(d) == p.distribution && to_string(dt) == p.dtype) {
          EXPECT_EQ(h, p.hash) << to_string(d) << " " << to_string(dt) << " changed its bits";
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, int(kDistributionNames.size() * kInputDtypes.size())) << "the table now reads:\n" << table;
}

}  // namespace
}  // namespace ulpscope
