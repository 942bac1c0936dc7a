// The CUDA runtime and cuBLAS calls of the CUDA backend's host code, done on
// the CPU, so that LayerRunner can run a whole plan with no GPU
// (tests/kernels/emulated/emulated_layer_test.cpp). Device memory is host memory, every
// allocation is registered, and each GEMM checks its leading dimensions as
// cuBLAS does and that every element it reads or writes lies inside one
// allocation; a violation is reported on stderr and returned as
// CUBLAS_STATUS_INVALID_VALUE, which the backend's checked calls turn into an
// exception. Streams and events carry no ordering: everything runs at once, in
// issue order, which is one of the orders the real streams allow.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace {

std::mutex mutex;
std::map<const char*, std::size_t> allocations;  // start -> bytes

// Whether [p, p + bytes) lies inside one allocation.
bool inside(const void* p, std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex);
  const char* c = static_cast<const char*>(p);
  auto it = allocations.upper_bound(c);
  if (it == allocations.begin()) return false;
  --it;
  return c + bytes <= it->first + it->second;
}

std::size_t element_bytes(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

float load(const void* p, cudaDataType_t t, long long i) {
  if (t == CUDA_R_32F) return static_cast<const float*>(p)[i];
  return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
}

void store(void* p, cudaDataType_t t, long long i, float v) {
  if (t == CUDA_R_32F)
    static_cast<float*>(p)[i] = v;
  else
    static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
}

cublasStatus_t refuse(const char* what) {
  std::fprintf(stderr, "fake cuBLAS: %s\n", what);
  return CUBLAS_STATUS_INVALID_VALUE;
}

// One column-major product as cuBLAS defines it, alpha and beta fp32 on the host.
cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const void* A,
                    cudaDataType_t at, int lda, const void* B, cudaDataType_t bt, int ldb, float beta, void* C,
                    cudaDataType_t ct, int ldc) {
  if (m < 0 || n < 0 || k < 0) return refuse("negative dimension");
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  const bool na = ta == CUBLAS_OP_N, nb = tb == CUBLAS_OP_N;
  const int a_rows = na ? m : k, a_cols = na ? k : m, b_rows = nb ? k : n, b_cols = nb ? n : k;
  if (lda < std::max(1, a_rows)) return refuse("lda below the rows of A");
  if (ldb < std::max(1, b_rows)) return refuse("ldb below the rows of B");
  if (ldc < std::max(1, m)) return refuse("ldc below m");
  const auto span = [](int rows, int cols, int ld, cudaDataType_t t) {
    return (static_cast<std::size_t>(rows - 1) + static_cast<std::size_t>(cols - 1) * static_cast<std::size_t>(ld) +
            1) *
           element_bytes(t);
  };
  if (k > 0 && !inside(A, span(a_rows, a_cols, lda, at))) return refuse("A reaches outside its allocation");
  if (k > 0 && !inside(B, span(b_rows, b_cols, ldb, bt))) return refuse("B reaches outside its allocation");
  if (!inside(C, span(m, n, ldc, ct))) return refuse("C reaches outside its allocation");
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l) {
        const long long ai = na ? i + static_cast<long long>(l) * lda : l + static_cast<long long>(i) * lda;
        const long long bi = nb ? l + static_cast<long long>(j) * ldb : j + static_cast<long long>(l) * ldb;
        sum += static_cast<double>(load(A, at, ai)) * load(B, bt, bi);
      }
      const long long ci = i + static_cast<long long>(j) * ldc;
      const double old = beta == 0.f ? 0.0 : static_cast<double>(beta) * load(C, ct, ci);  // beta 0: C not read
      store(C, ct, ci, static_cast<float>(alpha * sum + old));
    }
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
T* token() {
  return reinterpret_cast<T*>(new char);
}
template <class T>
void drop(T* t) {
  delete reinterpret_cast<char*>(t);
}

using Clock = std::chrono::steady_clock;

}  // namespace

// The CUDA runtime.
// Exactly `bytes` (256-byte aligned, as cudaMalloc's are), so that under
// AddressSanitizer a kernel that reaches past the end of a buffer is caught.
cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = ::operator new (std::max<size_t>(bytes, 1), std::align_val_t{256}, std::nothrow);
  if (*p == nullptr) return cudaErrorMemoryAllocation;
  const std::lock_guard<std::mutex> lock(mutex);
  allocations[static_cast<const char*>(*p)] = bytes;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  if (p == nullptr) return cudaSuccess;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (allocations.erase(static_cast<const char*>(p)) != 1) return cudaErrorInvalidValue;
  }
  ::operator delete (p, std::align_val_t{256});
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) {
  std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int) {
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "CPU stand-in");
  prop->major = 9;
  prop->l2CacheSize = 50 << 20;
  return cudaSuccess;
}
const char* cudaGetErrorString(cudaError_t) { return "error in the CPU stand-in of the CUDA runtime"; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void*) {
  *attributes = cudaFuncAttributes{};
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  *stream = token<CUstream_st>();
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  drop(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = reinterpret_cast<cudaEvent_t>(new Clock::time_point());
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) { return cudaEventCreate(event); }
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  *reinterpret_cast<Clock::time_point*>(event) = Clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t from, cudaEvent_t to) {
  const auto d = *reinterpret_cast<Clock::time_point*>(to) - *reinterpret_cast<Clock::time_point*>(from);
  *ms = std::chrono::duration<float, std::milli>(d).count();
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<Clock::time_point*>(event);
  return cudaSuccess;
}

// cuBLAS (fp32 scale, CUBLAS_POINTER_MODE_HOST).
cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = token<cublasContext>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  drop(handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t) { return CUBLAS_STATUS_SUCCESS; }
const char* cublasGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "success" : "invalid value (CPU stand-in of cuBLAS; see stderr)";
}

cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType at, int lda, const void* B, cudaDataType bt,
                            int ldb, const void* beta, void* C, cudaDataType ct, int ldc, cublasComputeType_t,
                            cublasGemmAlgo_t) {
  return gemm(ta, tb, m, n, k, *static_cast<const float*>(alpha), A, at, lda, B, bt, ldb,
              *static_cast<const float*>(beta), C, ct, ldc);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType at, int lda,
                                          long long int stride_a, const void* B, cudaDataType bt, int ldb,
                                          long long int stride_b, const void* beta, void* C, cudaDataType ct, int ldc,
                                          long long int stride_c, int batch, cublasComputeType_t, cublasGemmAlgo_t) {
  for (int i = 0; i < batch; ++i) {
    const cublasStatus_t s =
        gemm(ta, tb, m, n, k, *static_cast<const float*>(alpha),
             static_cast<const char*>(A) + i * stride_a * static_cast<long long>(element_bytes(at)), at, lda,
             static_cast<const char*>(B) + i * stride_b * static_cast<long long>(element_bytes(bt)), bt, ldb,
             *static_cast<const float*>(beta),
             static_cast<char*>(C) + i * stride_c * static_cast<long long>(element_bytes(ct)), ct, ldc);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmGroupedBatchedEx(cublasHandle_t, const cublasOperation_t ta[], const cublasOperation_t tb[],
                                          const int m[], const int n[], const int k[], const void* alpha,
                                          const void* const A[], cudaDataType_t at, const int lda[],
                                          const void* const B[], cudaDataType_t bt, const int ldb[], const void* beta,
                                          void* const C[], cudaDataType_t ct, const int ldc[], int groups,
                                          const int group_size[], cublasComputeType_t) {
  // The pointer arrays live in device memory, as cuBLAS requires: check that too.
  int total = 0;
  for (int g = 0; g < groups; ++g) total += group_size[g];
  for (const void* array : {static_cast<const void*>(A), static_cast<const void*>(B), static_cast<const void*>(C)})
    if (!inside(array, static_cast<std::size_t>(total) * sizeof(void*)))
      return refuse("a pointer array is not in device memory");
  int p = 0;
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < group_size[g]; ++i, ++p) {
      const cublasStatus_t s = gemm(ta[g], tb[g], m[g], n[g], k[g], static_cast<const float*>(alpha)[g], A[p], at,
                                    lda[g], B[p], bt, ldb[g], static_cast<const float*>(beta)[g], C[p], ct, ldc[g]);
      if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
  return CUBLAS_STATUS_SUCCESS;
}
