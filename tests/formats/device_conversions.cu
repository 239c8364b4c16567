#include "device_conversions.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "formats/binary_format.hpp"

namespace ulpscope::test {
namespace {

template <class F>
__device__ void vendor(double x, std::uint32_t* out);
template <class F>
__device__ double vendor_widen(std::uint32_t b);

template <>
__device__ void vendor<Fp16Format>(double x, std::uint32_t* out) {
  out[0] = out[1] = __half_as_ushort(__float2half_rn(static_cast<float>(x)));
  out[2] = out[3] = __half_as_ushort(__double2half(x));
}
template <>
__device__ double vendor_widen<Fp16Format>(std::uint32_t b) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(b)));
}
template <>
__device__ void vendor<Bf16Format>(double x, std::uint32_t* out) {
  out[0] = out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(x)));
  out[2] = out[3] = __bfloat16_as_ushort(__double2bfloat16(x));
}
template <>
__device__ double vendor_widen<Bf16Format>(std::uint32_t b) {
  return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(b)));
}

// On sm_89 and later the float conversions with __NV_SATFINITE and the
// widening are single hardware cvt instructions (cuda_fp8.hpp).
template <__nv_fp8_interpretation_t K>
__device__ void vendor_fp8(double x, std::uint32_t* out) {
  const float f = static_cast<float>(x);
  out[0] = __nv_cvt_float_to_fp8(f, __NV_NOSAT, K);
  out[1] = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, K);
  out[2] = __nv_cvt_double_to_fp8(x, __NV_NOSAT, K);
  out[3] = __nv_cvt_double_to_fp8(x, __NV_SATFINITE, K);
}
template <>
__device__ void vendor<Fp8E4M3Format>(double x, std::uint32_t* out) { vendor_fp8<__NV_E4M3>(x, out); }
template <>
__device__ void vendor<Fp8E5M2Format>(double x, std::uint32_t* out) { vendor_fp8<__NV_E5M2>(x, out); }
template <>
__device__ double vendor_widen<Fp8E4M3Format>(std::uint32_t b) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E4M3)));
}
template <>
__device__ double vendor_widen<Fp8E5M2Format>(std::uint32_t b) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E5M2)));
}

// Thread i converts input i (if any) and widens pattern i (if any).
template <class F>
__global__ void convert(const double* x, std::uint32_t n, std::uint32_t* ours, std::uint32_t* theirs,
                        double* ours_dec, double* their_dec) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (1u << F::bits)) {
    ours_dec[i] = decode<F>(i);
    their_dec[i] = vendor_widen<F>(i);
  }
  if (i < n) {
    ours[2 * i] = encode<F>(x[i], Saturation::nosat);
    ours[2 * i + 1] = encode<F>(x[i], Saturation::satfinite);
    vendor<F>(x[i], theirs + 4 * i);
  }
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : n_(n) { ok_ = cudaMalloc(&p_, n * sizeof(T) + 1) == cudaSuccess; }
  ~DeviceArray() {
    if (ok_) cudaFree(p_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  bool ok() const { return ok_; }
  T* get() const { return p_; }
  bool put(const std::vector<T>& v) {
    return cudaMemcpy(p_, v.data(), n_ * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess;
  }
  bool take(std::vector<T>& v) const {
    v.resize(n_);
    return cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
  bool ok_ = false;
};

}  // namespace

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <class F>
DeviceConversions convert_on_device(const std::vector<double>& inputs) {
  DeviceConversions r;
  const auto n = static_cast<std::uint32_t>(inputs.size());
  const std::uint32_t patterns = 1u << F::bits;
  const std::uint32_t threads = n > patterns ? n : patterns;
  DeviceArray<double> x(n), ours_dec(patterns), their_dec(patterns);
  DeviceArray<std::uint32_t> ours(2 * std::size_t(n)), theirs(4 * std::size_t(n));
  if (!x.ok() || !ours_dec.ok() || !their_dec.ok() || !ours.ok() || !theirs.ok()) {
    r.error = "cudaMalloc failed";
    return r;
  }
  if (!x.put(inputs)) {
    r.error = "cudaMemcpy to the device failed";
    return r;
  }
  constexpr unsigned kBlock = 256;
  convert<F><<<(threads + kBlock - 1) / kBlock, kBlock>>>(x.get(), n, ours.get(), theirs.get(), ours_dec.get(),
                                                           their_dec.get());
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    r.error = cudaGetErrorString(e);
    return r;
  }
  if (!ours.take(r.ours) || !theirs.take(r.theirs) || !ours_dec.take(r.ours_decode) ||
      !their_dec.take(r.their_decode))
    r.error = "cudaMemcpy from the device failed";
  return r;
}

template DeviceConversions convert_on_device<Fp16Format>(const std::vector<double>&);
template DeviceConversions convert_on_device<Bf16Format>(const std::vector<double>&);
template DeviceConversions convert_on_device<Fp8E4M3Format>(const std::vector<double>&);
template DeviceConversions convert_on_device<Fp8E5M2Format>(const std::vector<double>&);

}  // namespace ulpscope::test
