// The scans' throughput beside cub::DeviceScan::InclusiveSum on fp32, in the
// same process: bytes read plus bytes written per second (n elements of the
// input format in, n of the output format out), median of --reps
// CUDA-event-timed launches after --warmup. One row per (shape,
// accumulator, format); the fraction is of cub's fp32 GB/s.
//   scan_bench [--n 268435456] [--reps 20] [--warmup 5] [--json FILE]
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

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
  const unsigned pattern = d == Dtype::fp32 ? 0x3F000000u : d == Dtype::fp16 ? 0x38003800u : 0x3F003F00u;
  const std::int64_t words = (n * std::int64_t(bytes_of(d)) + 3) / 4;
  fill_words<<<1024, 256>>>(static_cast<unsigned*>(x), words, pattern);
  check(cudaDeviceSynchronize(), "fill");
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = std::int64_t(1) << 28;
  int reps = 20, warmup = 5;
  std::string json_path;
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
      else throw std::invalid_argument(a);
    } catch (const std::exception&) {
      std::fprintf(stderr, "scan_bench: bad argument %s (usage: --n N --reps R --warmup W --json FILE)\n", a.c_str());
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
    void *x = nullptr, *out = nullptr, *ws = nullptr;
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
    std::printf("| shape | accumulator | format | ms | GB/s | fraction of cub fp32 |\n|---|---|---|---:|---:|---:|\n");
    std::string json = "{\"device\": \"" + std::string(prop.name) + "\", \"n\": " + std::to_string(n) +
                       ", \"cub_fp32_gbps\": " + std::to_string(cub_gbps) + ", \"rows\": [";
    bool first = true;
    for (Shape shape : {Shape::warp, Shape::block, Shape::reduce_then_scan, Shape::lookback})
      for (Accumulator acc : {Accumulator::naive, Accumulator::fp32, Accumulator::fp64, Accumulator::kahan})
        for (Dtype in : {Dtype::fp32, Dtype::fp16, Dtype::bf16}) {
          const KernelSpec spec{Op::cumsum, in, default_out_dtype(in), acc, shape};
          if (scan::gpu_unavailable(spec, Axis::all)) continue;
          // One block walks the whole array: far too slow to time at 2^28.
          if ((shape == Shape::warp || shape == Shape::block) && n > (std::int64_t(1) << 22)) continue;
          fill_half(x, n, in);
          DeviceProblem p;
          p.op = Op::cumsum;
          p.in = in;
          p.rows = 1;
          p.cols = n;
          p.x = x;
          const LaunchConfig cfg = scan::launch_configs(spec, n).front();
          const std::size_t need = scan::workspace_bytes(spec, p, cfg);
          cudaFree(ws);
          ws = nullptr;
          if (need > 0) check(cudaMalloc(&ws, need), "cudaMalloc workspace");
          const double ms = median_ms([&] { scan::launch(spec, p, cfg, DeviceWorkspace{ws, need}, out, nullptr); },
                                      warmup, reps);
          const double gbps = double(n) * double(bytes_of(in) + bytes_of(spec.out)) / (ms * 1e6);
          std::printf("| %s | %s | %s | %.3f | %.1f | %.3f |\n", std::string(to_string(shape)).c_str(),
                      std::string(to_string(acc)).c_str(), std::string(to_string(in)).c_str(), ms, gbps,
                      gbps / cub_gbps);
          json += std::string(first ? "" : ", ") + "{\"shape\": \"" + std::string(to_string(shape)) +
                  "\", \"accumulator\": \"" + std::string(to_string(acc)) + "\", \"dtype\": \"" +
                  std::string(to_string(in)) + "\", \"ms\": " + std::to_string(ms) +
                  ", \"gbps\": " + std::to_string(gbps) + ", \"fraction_of_cub\": " + std::to_string(gbps / cub_gbps) +
                  "}";
          first = false;
        }
    json += "]}\n";
    if (!json_path.empty()) std::ofstream(json_path) << json;
    cudaFree(ws);
    cudaFree(cub_temp);
    cudaFree(x);
    cudaFree(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
