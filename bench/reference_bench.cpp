// Speed of the exact references (issue 10), as ratios to a yardstick
// measured in the same run: a plain vectorised fp32 sum of the same 2^28
// values on one core, which runs at about memory speed.
//
//   build/<dir>/bench/reference_bench --benchmark_counters_tabular=true
//
// Each exact benchmark reports items_per_second (its own time only) and
// `vs_yardstick`: its elements per second over the yardstick's, the two timed
// alternately in every iteration so that a shared machine's changing load
// hits both alike.
#include <benchmark/benchmark.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "formats/small_float.hpp"
#include "formats/typed_array.hpp"
#include "kernels/counter_rng.hpp"
#include "reference/exact_sum.hpp"
#include "reference/op_reference.hpp"

namespace {

using namespace ulpscope;

constexpr std::size_t kN = std::size_t(1) << 28;
constexpr std::size_t kLogsumexpN = std::size_t(1) << 20;

enum class Spread { narrow, wide };

// narrow: uniform in (-1, 1), what activations look like in scale;
// wide: random finite bit patterns, every exponent of the format (the
// adversarial case for exponent-sensitive methods).
template <class T>
const std::vector<T>& data(Spread spread, int which = 0) {
  static std::vector<T> cache[2][2];
  std::vector<T>& v = cache[int(spread)][which];
  if (!v.empty()) return v;
  v.resize(kN);
  std::uint64_t s = 12345 + 77 * std::uint64_t(which) + 1000 * std::uint64_t(spread);
  for (std::size_t i = 0; i < kN; ++i) {
    for (;;) {
      const std::uint64_t r = splitmix64(s);
      T x;
      if (spread == Spread::narrow) {
        const double u = double(r >> 11) * 0x1p-52 - 1.0;
        if constexpr (std::is_same_v<T, float>) x = float(u);
        else x = T(u);
      } else {
        if constexpr (std::is_same_v<T, float>) x = std::bit_cast<float>(std::uint32_t(r));
        else x = T::from_bits(std::uint32_t(r));
      }
      if (std::isfinite(to_double(x))) {
        v[i] = x;
        break;
      }
    }
  }
  return v;
}

// The yardstick: sixteen independent fp32 lanes, which the compiler turns
// into vector adds (no reassociation needed, so no fast-math).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
float plain_sum(const float* x, std::size_t n) {
  float lanes[16] = {};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; ++l) lanes[l] += x[i + l];
  float s = 0;
  for (; i < n; ++i) s += x[i];
  for (float l : lanes) s += l;
  return s;
}

template <class F>
double timed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double yardstick_seconds() {
  const auto& x = data<float>(Spread::narrow);
  return timed([&] { benchmark::DoNotOptimize(plain_sum(x.data(), x.size())); });
}

void BM_yardstick_fp32_plain_sum(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(yardstick_seconds());
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN));
  state.counters["vs_yardstick"] = 1.0;
}

template <class T>
void BM_exact(benchmark::State& state, Terms terms, Spread spread, unsigned threads) {
  const auto& x = data<T>(spread, 0);
  const auto& y = terms == Terms::product ? data<T>(spread, 1) : x;
  double exact_total = 0, yardstick_total = 0;
  for (auto _ : state) {
    yardstick_total += yardstick_seconds();
    const double t = timed([&] {
      ExactAccumulator acc;
      accumulate<T>(terms, std::span<const T>(x), std::span<const T>(y), acc, threads);
      benchmark::DoNotOptimize(acc);
    });
    exact_total += t;
    state.SetIterationTime(t);
  }
  state.SetItemsProcessed(std::int64_t(state.iterations() * kN));
  state.counters["vs_yardstick"] = yardstick_total / exact_total;  // same n: a ratio of rates
}

void BM_logsumexp_reference(benchmark::State& state) {
  // 2^20 values of a standard-normal-like spread (sum of four uniforms).
  std::vector<float> v(kLogsumexpN);
  std::uint64_t s = 99;
  for (float& e : v) {
    double u = 0;
    for (int k = 0; k < 4; ++k) u += double(splitmix64(s) >> 11) * 0x1p-53 - 0.5;
    e = float(u * std::sqrt(3.0));
  }
  const TypedArray x(std::move(v));
  for (auto _ : state) benchmark::DoNotOptimize(logsumexp_reference(x, {Dtype::fp32, Saturation::nosat}).rounded);
  state.SetItemsProcessed(std::int64_t(state.iterations() * kLogsumexpN));
}

void register_all() {
  auto add = [](const char* name, auto fn) {
    return benchmark::RegisterBenchmark(name, fn)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(1.0);
  };
  add("yardstick/fp32_plain_sum/1core", BM_yardstick_fp32_plain_sum);
  add("exact_sum/fp32/narrow/1core", [](auto& s) { BM_exact<float>(s, Terms::value, Spread::narrow, 1); });
  add("exact_sum/fp32/narrow/2cores", [](auto& s) { BM_exact<float>(s, Terms::value, Spread::narrow, 2); });
  add("exact_sum/fp32/wide/1core", [](auto& s) { BM_exact<float>(s, Terms::value, Spread::wide, 1); });
  add("exact_sum/fp16/narrow/1core", [](auto& s) { BM_exact<Fp16>(s, Terms::value, Spread::narrow, 1); });
  add("exact_sum/fp16/wide/1core", [](auto& s) { BM_exact<Fp16>(s, Terms::value, Spread::wide, 1); });
  add("exact_sum/bf16/narrow/1core", [](auto& s) { BM_exact<Bf16>(s, Terms::value, Spread::narrow, 1); });
  add("exact_sum/bf16/wide/1core", [](auto& s) { BM_exact<Bf16>(s, Terms::value, Spread::wide, 1); });
  add("exact_sum/fp8_e4m3/narrow/1core", [](auto& s) { BM_exact<Fp8E4M3>(s, Terms::value, Spread::narrow, 1); });
  add("exact_sum/fp8_e5m2/narrow/1core", [](auto& s) { BM_exact<Fp8E5M2>(s, Terms::value, Spread::narrow, 1); });
  add("exact_sumsq/fp32/narrow/1core", [](auto& s) { BM_exact<float>(s, Terms::square, Spread::narrow, 1); });
  add("exact_dot/fp32/narrow/1core", [](auto& s) { BM_exact<float>(s, Terms::product, Spread::narrow, 1); });
  add("exact_sumsq/fp32/wide/1core", [](auto& s) { BM_exact<float>(s, Terms::square, Spread::wide, 1); });
  benchmark::RegisterBenchmark("logsumexp_reference/fp32/2^20", BM_logsumexp_reference)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(2);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
