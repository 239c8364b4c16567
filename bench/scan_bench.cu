// The scans' throughput beside cub::DeviceScan::InclusiveSum on fp32, in the
// same process: bytes read plus bytes written per second (n elements of the
// input format in, n of the output format out, each counted once), median of
// --reps CUDA-event-timed launches after --warmup. One row per (shape,
// accumulator, format) with a kernel, every launch configuration of
// scan::launch_configs timed: the default's and the best's fraction of cub's
// fp32 GB/s. Then the floors (docs/spec.md, "Scan shapes"): the exact scan
// at 0.8 of cub, lookback with the fp32 accumulator at 0.9, reduce_then_scan
// against its two-pass ceiling of 2/3; and a check that the exact scans of
// lookback and reduce_then_scan give the same bits over the whole array (of
// varied values: every binade, both signs).
//   scan_bench [--n 268435456] [--reps 20] [--warmup 5] [--shapes warp,block,...] [--json FILE]
// --shapes times only those shapes (default: all four); a floor whose shape
// is left out is listed as not timed.
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "formats/binary_format.hpp"
#include "kernels/scan/scan_dispatch.hpp"
#include "kernels/scan/scan_model.hpp"

namespace {

using namespace ulpscope;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class F>
double median_ms(F&& launch, int warmup, int reps) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(a), "cudaEventRecord");
    launch();
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  check(cudaGetLastError(), "launch");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::size_t bytes_of(Dtype d) { return std::size_t(format_info(d).bits / 8); }

__global__ void fill_words(unsigned* w, std::int64_t words, unsigned pattern) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < words;
       i += std::int64_t(gridDim.x) * blockDim.x)
    w[i] = pattern;
}

// Every element 0.5 in format d (a value whose running sums round).
void fill_half(void* x, std::int64_t n, Dtype d) {
  std::uint32_t e = 0;
  switch (d) {
    case Dtype::fp32: e = encode<Fp32Format>(0.5); break;
    case Dtype::fp16: e = encode<Fp16Format>(0.5); break;
    case Dtype::bf16: e = encode<Bf16Format>(0.5); break;
    case Dtype::fp8_e4m3: e = encode<Fp8E4M3Format>(0.5); break;
    case Dtype::fp8_e5m2: e = encode<Fp8E5M2Format>(0.5); break;
    default: throw std::invalid_argument("not an input format");
  }
  unsigned pattern = 0;
  const int bits = format_info(d).bits;
  for (int at = 0; at < 32; at += bits) pattern |= e << at;
  const std::int64_t words = (n * std::int64_t(bytes_of(d)) + 3) / 4;
  fill_words<<<1024, 256>>>(static_cast<unsigned*>(x), words, pattern);
  check(cudaDeviceSynchronize(), "fill");
}

// Element i a hash of i's bits in format d (Bits its storage): every sign
// and binade, the infinities and NaNs moved to finite values by clearing the
// exponent's lowest bit, so that the exact prefixes cancel and round.
template <class Bits>
__global__ void fill_hashed(Bits* x, std::int64_t n, unsigned exponent_mask, unsigned exponent_low_bit) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    unsigned long long h = (unsigned long long)(i) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    unsigned bits = sizeof(Bits) == 4 ? unsigned(h) : unsigned(h) & ((1u << (8 * sizeof(Bits))) - 1);
    if ((bits & exponent_mask) == exponent_mask) bits &= ~exponent_low_bit;
    x[i] = Bits(bits);
  }
}

void fill_varied(void* x, std::int64_t n, Dtype d) {
  const FormatInfo& f = format_info(d);
  const int man = f.precision - 1, exp = f.bits - 1 - man;
  const unsigned exponent_mask = ((1u << exp) - 1) << man, low = 1u << man;
  if (f.bits == 32) fill_hashed<<<1024, 256>>>(static_cast<std::uint32_t*>(x), n, exponent_mask, low);
  else if (f.bits == 16) fill_hashed<<<1024, 256>>>(static_cast<std::uint16_t*>(x), n, exponent_mask, low);
  else fill_hashed<<<1024, 256>>>(static_cast<std::uint8_t*>(x), n, exponent_mask, low);
  check(cudaDeviceSynchronize(), "fill");
}

__global__ void count_differences(const unsigned* a, const unsigned* b, std::int64_t words,
                                  unsigned long long* count) {
  unsigned long long mine = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < words;
       i += std::int64_t(gridDim.x) * blockDim.x)
    mine += a[i] != b[i];
  if (mine != 0) atomicAdd(count, mine);
}

struct Timed {
  LaunchConfig cfg;
  double ms, gbps;
};

struct Row {
  Shape shape;
  Accumulator acc;
  Dtype in;
  std::vector<Timed> configs;  // scan::launch_configs' order: the default first
  const Timed& best() const {
    return *std::min_element(configs.begin(), configs.end(), [](const Timed& a, const Timed& b) { return a.ms < b.ms; });
  }
};

std::string str(Shape s) { return std::string(to_string(s)); }
std::string str(Accumulator a) { return std::string(to_string(a)); }
std::string str(Dtype d) { return std::string(to_string(d)); }

// One scan into out, on the default stream.
struct Scanner {
  void* x;
  std::int64_t n;
  void* ws = nullptr;
  std::size_t ws_bytes = 0;
  DeviceProblem problem(Dtype in) const {
    DeviceProblem p;
    p.op = Op::cumsum;
    p.in = in;
    p.rows = 1;
    p.cols = n;
    p.x = x;
    return p;
  }
  void prepare(const KernelSpec& spec, const LaunchConfig& cfg) {
    const std::size_t need = scan::workspace_bytes(spec, problem(spec.in), cfg);
    if (need > ws_bytes) {
      cudaFree(ws);
      ws = nullptr;
      ws_bytes = 0;
      check(cudaMalloc(&ws, need), "cudaMalloc workspace");
      ws_bytes = need;
    }
  }
  void run(const KernelSpec& spec, const LaunchConfig& cfg, void* out) const {
    scan::launch(spec, problem(spec.in), cfg, DeviceWorkspace{ws, ws_bytes}, out, nullptr);
  }
};

// A comma-separated list of scan shapes with kernels; throws on any other name.
std::vector<Shape> scan_shapes(const std::string& list) {
  std::vector<Shape> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const auto shape = parse_in(kScanShapeNames, std::string_view(list).substr(at, comma - at));
    if (!shape) throw std::invalid_argument(list);
    out.push_back(*shape);
    at = comma + 1;
  }
  return out;
}

const char* verdict(double fraction, double floor) { return fraction >= floor ? "met" : "NOT met"; }

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = std::int64_t(1) << 28;
  int reps = 20, warmup = 5;
  std::string json_path;
  std::vector<Shape> shapes = {Shape::warp, Shape::block, Shape::reduce_then_scan, Shape::lookback};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "scan_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--n") n = std::stoll(next());
      else if (a == "--reps") reps = std::stoi(next());
      else if (a == "--warmup") warmup = std::stoi(next());
      else if (a == "--json") json_path = next();
      else if (a == "--shapes") shapes = scan_shapes(next());
      else throw std::invalid_argument(a);
    } catch (const std::exception&) {
      std::fprintf(stderr, "scan_bench: bad argument %s (usage: --n N --reps R --warmup W --shapes LIST --json FILE)\n", a.c_str());
      return 2;
    }
  }
  if (n < 1 || reps < 1 || warmup < 0) {
    std::fprintf(stderr, "scan_bench: --n and --reps must be at least 1, --warmup at least 0\n");
    return 2;
  }
  try {
    int device = 0;
    cudaDeviceProp prop{};
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    const int sms = prop.multiProcessorCount;  // the launches are the device's (scan::launch_configs)
    void *x = nullptr, *out = nullptr;
    check(cudaMalloc(&x, std::size_t(n) * 4), "cudaMalloc x");
    check(cudaMalloc(&out, std::size_t(n) * 4), "cudaMalloc out");
    fill_half(x, n, Dtype::fp32);

    // The yardstick: cub's fp32 inclusive sum, 4 bytes in and 4 out.
    std::size_t cub_bytes = 0;
    check(cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, static_cast<const float*>(x), static_cast<float*>(out),
                                        n),
          "cub temp size");
    void* cub_temp = nullptr;
    check(cudaMalloc(&cub_temp, std::max<std::size_t>(cub_bytes, 1)), "cudaMalloc cub");
    const double cub_ms = median_ms(
        [&] {
          cub::DeviceScan::InclusiveSum(cub_temp, cub_bytes, static_cast<const float*>(x), static_cast<float*>(out),
                                        n);
        },
        warmup, reps);
    const double cub_gbps = double(n) * 8 / (cub_ms * 1e6);
    std::printf("# %s, n = %lld, median of %d after %d warm-ups\n", prop.name, (long long)n, reps, warmup);
    std::printf("cub::DeviceScan::InclusiveSum fp32: %.3f ms, %.1f GB/s (read + written)\n\n", cub_ms, cub_gbps);

    Scanner scanner{x, n};
    std::vector<Row> rows;
    for (Shape shape : shapes)
      for (Accumulator acc :
           {Accumulator::naive, Accumulator::fp32, Accumulator::fp64, Accumulator::kahan, Accumulator::exact})
        for (Dtype in : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2}) {
          const KernelSpec spec{Op::cumsum, in, default_out_dtype(in), acc, shape};
          if (scan::gpu_unavailable(spec, Axis::all)) continue;
          // One block walks the whole array: far too slow to time at 2^28.
          if ((shape == Shape::warp || shape == Shape::block) && n > (std::int64_t(1) << 22)) continue;
          fill_half(x, n, in);
          Row row{shape, acc, in, {}};
          for (const LaunchConfig& cfg : scan::launch_configs(spec, n, sms)) {
            scanner.prepare(spec, cfg);
            const double ms = median_ms([&] { scanner.run(spec, cfg, out); }, warmup, reps);
            row.configs.push_back({cfg, ms, double(n) * double(bytes_of(in) + bytes_of(spec.out)) / (ms * 1e6)});
          }
          rows.push_back(row);
        }

    std::printf("| shape | accumulator | format | default threads x blocks | ms | fraction of cub fp32 "
                "| best threads x blocks | ms | GB/s | fraction of cub fp32 |\n");
    std::printf("|---|---|---|---|---:|---:|---|---:|---:|---:|\n");
    for (const Row& r : rows) {
      const Timed &d = r.configs.front(), &b = r.best();
      std::printf("| %s | %s | %s | %d x %d | %.3f | %.3f | %d x %d | %.3f | %.1f | %.3f |\n", str(r.shape).c_str(),
                  str(r.acc).c_str(), str(r.in).c_str(), d.cfg.threads, d.cfg.blocks, d.ms, d.gbps / cub_gbps,
                  b.cfg.threads, b.cfg.blocks, b.ms, b.gbps, b.gbps / cub_gbps);
    }

    // The floors, each on the best launch configuration (and the default's).
    auto find = [&](Shape shape, Accumulator acc, Dtype in) -> const Row* {
      for (const Row& r : rows)
        if (r.shape == shape && r.acc == acc && r.in == in) return &r;
      return nullptr;
    };
    struct Floor {
      Shape shape;
      Accumulator acc;
      Dtype in;
      double floor;
      const char* what;
    };
    const double two_pass_ceiling = 2.0 / 3.0;
    const Floor floors[] = {
        {Shape::lookback, Accumulator::exact, Dtype::fp16, 0.8, "the exact scan, fp16"},
        {Shape::lookback, Accumulator::exact, Dtype::bf16, 0.8, "the exact scan, bf16"},
        {Shape::lookback, Accumulator::exact, Dtype::fp8_e4m3, 0.8, "the exact scan, fp8_e4m3"},
        {Shape::lookback, Accumulator::exact, Dtype::fp8_e5m2, 0.8, "the exact scan, fp8_e5m2"},
        {Shape::lookback, Accumulator::fp32, Dtype::fp32, 0.9, "tree-shaped fp32 accumulator, fp32"},
        {Shape::lookback, Accumulator::fp32, Dtype::fp16, 0.9, "tree-shaped fp32 accumulator, fp16"},
        {Shape::lookback, Accumulator::fp32, Dtype::bf16, 0.9, "tree-shaped fp32 accumulator, bf16"},
        {Shape::reduce_then_scan, Accumulator::fp32, Dtype::fp32, two_pass_ceiling,
         "reduce_then_scan fp32 accumulator, fp32, against its two-pass ceiling"},
        {Shape::reduce_then_scan, Accumulator::exact, Dtype::fp16, two_pass_ceiling,
         "reduce_then_scan exact, fp16, against its two-pass ceiling"},
    };
    std::printf("\n| target | shape | floor | best fraction of cub fp32 | launch | default's fraction | verdict |\n");
    std::printf("|---|---|---:|---:|---|---:|---|\n");
    std::string floors_json;
    for (const Floor& f : floors) {
      const Row* r = find(f.shape, f.acc, f.in);
      if (r == nullptr) {
        const KernelSpec spec{Op::cumsum, f.in, default_out_dtype(f.in), f.acc, f.shape};
        const auto why = scan::gpu_unavailable(spec, Axis::all);
        std::printf("| %s | %s | %.3f | - | - | - | no kernel: %s |\n", f.what, str(f.shape).c_str(), f.floor,
                    why ? why->c_str() : "not timed at this n");
        continue;
      }
      const double best = r->best().gbps / cub_gbps, dflt = r->configs.front().gbps / cub_gbps;
      std::printf("| %s | %s | %.3f | %.3f | %d x %d | %.3f | %s |\n", f.what, str(f.shape).c_str(), f.floor, best,
                  r->best().cfg.threads, r->best().cfg.blocks, dflt, verdict(best, f.floor));
      floors_json += std::string(floors_json.empty() ? "" : ", ") + "{\"target\": \"" + f.what + "\", \"shape\": \"" +
                     str(f.shape) + "\", \"accumulator\": \"" + str(f.acc) + "\", \"dtype\": \"" + str(f.in) +
                     "\", \"floor\": " + std::to_string(f.floor) + ", \"best_fraction_of_cub\": " +
                     std::to_string(best) + ", \"default_fraction_of_cub\": " + std::to_string(dflt) +
                     ", \"met\": " + (best >= f.floor ? "true" : "false") + "}";
    }

    // The exact scans of two shapes over the whole array: one bit pattern.
    bool exact_agree = true;
    std::string agree_json;
    {
      void* out2 = nullptr;
      unsigned long long* count = nullptr;
      check(cudaMalloc(&out2, std::size_t(n) * 4), "cudaMalloc out2");
      check(cudaMalloc(&count, sizeof *count), "cudaMalloc count");
      std::printf("\n");
      for (Dtype in : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2}) {
        const KernelSpec look{Op::cumsum, in, default_out_dtype(in), Accumulator::exact, Shape::lookback};
        const KernelSpec rts{Op::cumsum, in, default_out_dtype(in), Accumulator::exact, Shape::reduce_then_scan};
        if (scan::gpu_unavailable(look, Axis::all) || scan::gpu_unavailable(rts, Axis::all)) continue;
        fill_varied(x, n, in);
        const LaunchConfig c1 = scan::launch_configs(look, n, sms).front(), c2 = scan::launch_configs(rts, n, sms).back();
        scanner.prepare(look, c1);
        scanner.prepare(rts, c2);
        scanner.run(look, c1, out);
        scanner.run(rts, c2, out2);
        check(cudaMemset(count, 0, sizeof *count), "cudaMemset");
        const std::int64_t words = (n * std::int64_t(bytes_of(look.out)) + 3) / 4;
        count_differences<<<1024, 256>>>(static_cast<const unsigned*>(out), static_cast<const unsigned*>(out2),
                                         words, count);
        unsigned long long differing = 0;
        check(cudaMemcpy(&differing, count, sizeof differing, cudaMemcpyDeviceToHost), "cudaMemcpy count");
        // The same lookback timed on these values: every binade, so most
        // threads' spans are too wide for the double shortcut
        // (kernels/scan/exact_double_run.hpp) and take the integer path.
        const double varied_ms = median_ms([&] { scanner.run(look, c1, out); }, warmup, reps);
        const double varied = double(n) * double(bytes_of(in) + bytes_of(look.out)) / (varied_ms * 1e6) / cub_gbps;
        std::printf("exact %s: lookback (%d threads) and reduce_then_scan (%d x %d) outputs: "
                    "%llu differing words of %lld; lookback on these values %.3f ms, %.3f of cub fp32\n",
                    str(in).c_str(), c1.threads, c2.threads, c2.blocks, differing, (long long)words, varied_ms,
                    varied);
        exact_agree = exact_agree && differing == 0;
        agree_json += std::string(agree_json.empty() ? "" : ", ") + "{\"dtype\": \"" + str(in) +
                      "\", \"differing_words\": " + std::to_string(differing) +
                      ", \"lookback_ms_on_these_values\": " + std::to_string(varied_ms) +
                      ", \"fraction_of_cub_on_these_values\": " + std::to_string(varied) + "}";
      }
      cudaFree(out2);
      cudaFree(count);
    }

    std::string json = "{\"device\": \"" + std::string(prop.name) + "\", \"n\": " + std::to_string(n) +
                       ", \"reps\": " + std::to_string(reps) + ", \"warmup\": " + std::to_string(warmup) +
                       ", \"cub_fp32_ms\": " + std::to_string(cub_ms) + ", \"cub_fp32_gbps\": " +
                       std::to_string(cub_gbps) + ", \"rows\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      json += std::string(i ? ", " : "") + "{\"shape\": \"" + str(r.shape) + "\", \"accumulator\": \"" + str(r.acc) +
              "\", \"dtype\": \"" + str(r.in) + "\", \"configs\": [";
      for (std::size_t k = 0; k < r.configs.size(); ++k) {
        const Timed& t = r.configs[k];
        json += std::string(k ? ", " : "") + "{\"threads\": " + std::to_string(t.cfg.threads) +
                ", \"blocks\": " + std::to_string(t.cfg.blocks) + ", \"ms\": " + std::to_string(t.ms) +
                ", \"gbps\": " + std::to_string(t.gbps) + ", \"fraction_of_cub\": " +
                std::to_string(t.gbps / cub_gbps) + "}";
      }
      json += "], \"best_fraction_of_cub\": " + std::to_string(r.best().gbps / cub_gbps) + "}";
    }
    json += "], \"floors\": [" + floors_json + "], \"exact_lookback_vs_reduce_then_scan\": [" + agree_json + "]}\n";
    if (!json_path.empty()) {
      std::ofstream f(json_path);
      f << json;
      if (!f) throw std::runtime_error("cannot write " + json_path);
    }
    cudaFree(scanner.ws);
    cudaFree(cub_temp);
    cudaFree(x);
    cudaFree(out);
    if (!exact_agree) {
      std::fprintf(stderr, "scan_bench: the exact scans of lookback and reduce_then_scan differ\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
