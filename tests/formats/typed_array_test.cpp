// TypedArray over every input format: sizes, bytes, exact widening.
#include "formats/typed_array.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <type_traits>
#include <stdexcept>

#include "pattern_kind.hpp"
#include "spec_formats.hpp"

namespace ulpscope::test {
namespace {

template <class F>
class TypedArrayOf : public ::testing::Test {};
TYPED_TEST_SUITE(TypedArrayOf, AllFormats, FormatName);

// The stored element type: float for fp32, SmallFloat for the others.
template <class F>
using Element = storage_of_t<Spec<F>::dtype>;

template <class F>
Element<F> element_from_bits(std::uint32_t b) {
  static_assert(sizeof(Element<F>) * 8 == F::bits);
  static_assert(std::is_trivially_copyable_v<Element<F>>);  // read and written as raw bytes
  if constexpr (std::is_same_v<Element<F>, float>) return std::bit_cast<float>(b);
  else return Element<F>::from_bits(b);
}

TYPED_TEST(TypedArrayOf, ZerosOfEachSize) {
  using F = TypeParam;
  const Dtype d = Spec<F>::dtype;
  for (std::size_t n : {0u, 1u, 31u, 33u, 1000u}) {
    const TypedArray a(d, n);
    EXPECT_EQ(a.dtype(), d);
    EXPECT_EQ(a.size(), n);
    EXPECT_EQ(a.bytes(), n * F::bits / 8);
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same_value(a.at(i), 0.0)) << i;
  }
}

TYPED_TEST(TypedArrayOf, HoldsEveryPatternAndWidensItExactly) {
  using F = TypeParam;
  const std::vector<std::uint32_t> patterns = patterns_of<F>();
  std::vector<Element<F>> values;
  for (std::uint32_t b : patterns) values.push_back(element_from_bits<F>(b));
  const TypedArray a(values);
  ASSERT_EQ(a.size(), patterns.size());
  EXPECT_EQ(a.dtype(), Spec<F>::dtype);
  const std::vector<double> wide = a.to_doubles();
  const auto* raw = static_cast<const unsigned char*>(a.raw());
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const double want = spec_value<F>(patterns[i]);
    ASSERT_TRUE(same_value(wide[i], want)) << show_bits(patterns[i]);
    ASSERT_TRUE(same_value(a.at(i), want)) << show_bits(patterns[i]);
    std::uint32_t stored = 0;
    std::memcpy(&stored, raw + i * F::bits / 8, F::bits / 8);
    ASSERT_EQ(stored, patterns[i]);
  }
  const std::size_t visited = visit_typed(a, [](const auto& v) { return v.size(); });
  EXPECT_EQ(visited, patterns.size());
  EXPECT_EQ(a.template as<Element<F>>().size(), patterns.size());
}

TEST(TypedArray, Fp64IsNotAnInputFormat) {
  EXPECT_THROW(TypedArray(Dtype::fp64, 4), std::invalid_argument);
}

}  // namespace
}  // namespace ulpscope::test
