// GPU calibration test (CTest label "gpu"): reads the tensor-core counters
// over one known cuBLAS bf16 GEMM (m = n = k = 4096, fp32 accumulate, so
// 2*4096^3 FLOPs) and prints each metric's value per FLOP, which says what one
// counted "op" is on this chip (a FLOP, an FMA, an instruction...). A second
// range over two GEMMs checks that a range counts only its own work; two
// calibration sets split the counts by instruction family (HGMMA vs HMMA).
//
// Exits 77 (skipped) where there is no device; 0 where the counters cannot be
// read here (printed as "counters unavailable: <reason>", informative only);
// 1 where the counters were read but a value is missing, zero or not finite.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <cuda_bf16.h>

#include "cupti/cupti_counters.hpp"
#include "device/cuda_check.hpp"
#include "device/device.hpp"

namespace {

using smelt::kernels::CounterReading;
using smelt::kernels::TensorCounter;

constexpr int kM = 4096;
constexpr int kN = 4096;
constexpr int kK = 4096;
constexpr double kFlops = 2.0 * kM * kN * kK;

struct Gemm {
  cublasHandle_t handle = nullptr;
  __nv_bfloat16* a = nullptr;
  __nv_bfloat16* b = nullptr;
  float* c = nullptr;

  Gemm() {
    SMELT_CUDA_CALL(cublasCreate(&handle));
    SMELT_CUDA_CALL(cudaMalloc(&a, sizeof(__nv_bfloat16) * kM * kK));
    SMELT_CUDA_CALL(cudaMalloc(&b, sizeof(__nv_bfloat16) * kK * kN));
    SMELT_CUDA_CALL(cudaMalloc(&c, sizeof(float) * kM * kN));
    // Bytes 0x3f make every bf16 0x3f3f (about 0.75): finite, non-zero inputs.
    SMELT_CUDA_CALL(cudaMemset(a, 0x3f, sizeof(__nv_bfloat16) * kM * kK));
    SMELT_CUDA_CALL(cudaMemset(b, 0x3f, sizeof(__nv_bfloat16) * kK * kN));
  }
  ~Gemm() {
    cudaFree(c);
    cudaFree(b);
    cudaFree(a);
    if (handle != nullptr) cublasDestroy(handle);
  }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  void run() const {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    SMELT_CUDA_CALL(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kM, kN, kK, &alpha, a, CUDA_R_16BF, kM, b,
                                 CUDA_R_16BF, kK, &beta, c, CUDA_R_32F, kM, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
};

struct Measurement {
  bool ok = false;
  std::string reason;
  std::string mode;
  std::vector<std::string> tensor_metrics;  // filled only where the counter failed
  std::vector<CounterReading> one;          // one GEMM
  std::vector<CounterReading> two;          // two GEMMs
};

// One counter object at a time: each is built, used over two ranges and gone.
Measurement measure(const Gemm& gemm, const std::vector<std::string>* metrics) {
  TensorCounter counter = metrics != nullptr ? TensorCounter(*metrics) : TensorCounter();
  Measurement m;
  m.mode = counter.mode();
  if (counter.ok()) {
    counter.begin();
    gemm.run();
    SMELT_CUDA_CALL(cudaDeviceSynchronize());
    m.one = counter.end();
    counter.begin();
    gemm.run();
    gemm.run();
    SMELT_CUDA_CALL(cudaDeviceSynchronize());
    m.two = counter.end();
  }
  m.ok = counter.ok();
  m.reason = counter.reason();
  if (!m.ok) m.tensor_metrics = counter.counter_metrics("tensor");
  return m;
}

bool usable(const CounterReading& reading) {
  return reading.available && std::isfinite(reading.value) && reading.value != 0;
}

// Prints each reading per FLOP; false where a reading is missing, zero or not finite.
bool report(const Measurement& m) {
  std::printf("mode: %s\n", m.mode.c_str());
  bool good = true;
  for (std::size_t i = 0; i < m.one.size(); ++i) {
    const CounterReading& r = m.one[i];
    std::printf("%s [%s]: %s\n", r.metric.c_str(), r.unit.c_str(), r.description.c_str());
    if (!usable(r)) {
      std::printf("  FAILED: %s\n", r.available ? "value is zero or not finite" : r.reason.c_str());
      good = false;
      continue;
    }
    std::printf("  one GEMM:  %.6e   value/FLOPs = %.6g   FLOPs/value = %.6g\n", r.value, r.value / kFlops,
                kFlops / r.value);
    if (i < m.two.size() && usable(m.two[i])) {
      const double ratio = m.two[i].value / r.value;
      std::printf(
          "  two GEMMs: %.6e   two/one = %.4f%s\n", m.two[i].value, ratio,
          std::fabs(ratio - 2.0) > 0.05 ? "   WARNING: expected 2 (does a range count only its own work?)" : "");
    } else {
      std::printf("  two GEMMs: FAILED: %s\n", i < m.two.size() ? m.two[i].reason.c_str() : "no reading");
      good = false;
    }
  }
  return good;
}

void print_unavailable(const Measurement& m) {
  std::printf("counters unavailable: %s\n", m.reason.c_str());
  std::printf("tensor counter metrics on this chip (%zu):", m.tensor_metrics.size());
  for (const std::string& name : m.tensor_metrics) std::printf(" %s", name.c_str());
  std::printf("\n");
}

int run() {
  const smelt::kernels::DeviceInfo info = smelt::kernels::query_device();
  if (!info.available) {
    std::printf("skipped: %s\n", info.reason.c_str());
    return 77;
  }
  std::printf("device: %s (sm_%d%d)\n", info.name.c_str(), info.compute_major, info.compute_minor);

  Gemm gemm;
  gemm.run();  // warm-up: cuBLAS picks and loads its kernel outside the measured ranges
  SMELT_CUDA_CALL(cudaDeviceSynchronize());
  std::printf("GEMM bf16 x bf16 -> fp32, m=n=k=%d: %.6e FLOPs (%.6e FMAs)\n", kM, kFlops, kFlops / 2);

  // The default metrics decide the exit status.
  std::printf("\n== default metrics\n");
  const Measurement main_counter = measure(gemm, nullptr);
  if (!main_counter.ok) {
    std::printf("mode: %s\n", main_counter.mode.c_str());
    print_unavailable(main_counter);
    return 0;
  }
  const int status = report(main_counter) ? 0 : 1;

  // Calibration only (Hopper names; informative, never the exit status): the
  // ops and instruction counters split by instruction family, each set in one
  // pass, so also a check of user ranges against the default set's mode.
  const std::vector<std::vector<std::string>> extra = {
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
       "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum"},
      {"sm__inst_executed_pipe_tensor.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
       "sm__inst_executed_pipe_tensor_op_hmma.sum"}};
  for (const std::vector<std::string>& metrics : extra) {
    std::printf("\n== calibration set (informative)\n");
    const Measurement m = measure(gemm, &metrics);
    if (!m.ok) {
      std::printf("mode: %s\n", m.mode.c_str());
      print_unavailable(m);
      continue;
    }
    report(m);
    for (const CounterReading& r : m.one)
      for (const CounterReading& d : main_counter.one)
        if (r.metric == d.metric && usable(r) && usable(d))
          std::printf("%s: this set / default set = %.4f%s\n", r.metric.c_str(), r.value / d.value,
                      std::fabs(r.value / d.value - 1.0) > 0.02 ? "   WARNING: the two modes disagree" : "");
  }
  std::printf("\n%s\n", status == 0 ? "PASSED" : "FAILED");
  return status;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}
