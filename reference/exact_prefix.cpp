#include "reference/exact_prefix.hpp"

#include <algorithm>
#include <iterator>

#include "reference/exact_accumulator.hpp"
#include "reference/on_threads.hpp"
#include "reference/round_to_format.hpp"
#include "reference/usable_cores.hpp"

namespace ulpscope {
namespace {

// Below this many elements a scan's references are made on one thread.
constexpr std::size_t kElementsPerThread = std::size_t(1) << 16;

// make(exact prefix i) for every i, in index order. The prefixes are one
// exact accumulator read out after each addition; a long array is cut into
// chunks, one a thread: each chunk's sum first, then each chunk's prefixes
// from the exact sum of the chunks before it (their accumulators merged:
// exact, so every prefix is the same number as from one accumulator).
template <class Out, class Make>
std::vector<Out> prefixes(const TypedArray& x, Make make) {
  const std::size_t n = x.size();
  const unsigned threads =
      unsigned(std::clamp<std::size_t>(n / kElementsPerThread, 1, std::min(usable_cores(), 64u)));
  auto begin = [&](unsigned t) { return n * t / threads; };
  std::vector<ExactAccumulator> before(threads);
  std::vector<std::vector<Out>> parts(threads);
  visit_typed(x, [&](const auto& v) {
    if (threads > 1) {
      // Each chunk's sum, then the sums before each chunk.
      std::vector<ExactAccumulator> sums(threads);
      on_threads(threads, [&](unsigned t) {
        for (std::size_t i = begin(t); i < begin(t + 1); ++i) sums[t].add(to_double(v[i]));
      });
      for (unsigned t = 1; t < threads; ++t) {
        before[t] = before[t - 1];
        before[t].merge(sums[t - 1]);
      }
    }
    on_threads(threads, [&](unsigned t) {
      ExactAccumulator acc = before[t];
      parts[t].reserve(begin(t + 1) - begin(t));
      for (std::size_t i = begin(t); i < begin(t + 1); ++i) {
        acc.add(to_double(v[i]));  // exact: every input value is a double
        parts[t].push_back(make(acc.value()));
      }
    });
  });
  std::vector<Out> out = std::move(parts[0]);
  out.reserve(n);
  for (unsigned t = 1; t < threads; ++t) std::move(parts[t].begin(), parts[t].end(), std::back_inserter(out));
  return out;
}

}  // namespace

std::vector<Reference> cumsum_reference(const TypedArray& x, OutputFormat out) {
  // No decimal strings: one an element would cost more than the prefix
  // itself (decimal_of writes the one a cell reports).
  return prefixes<Reference>(x, [&](ExactReal prefix) { return rounded_reference(std::move(prefix), out); });
}

std::vector<double> cumsum_rounded(const TypedArray& x, OutputFormat out) {
  return prefixes<double>(x, [&](const ExactReal& prefix) { return round_to_format(prefix, out.dtype, out.sat); });
}

}  // namespace ulpscope
