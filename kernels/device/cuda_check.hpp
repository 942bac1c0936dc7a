// One checked-call macro for every CUDA runtime and cuBLAS call: a failure
// throws smelt::cuda_error naming the call, file:line and the error string.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "smelt/error.hpp"

namespace smelt::kernels::detail {

[[noreturn]] void throw_cuda(const char* call, const char* file, int line, const std::string& what);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda(call, file, line, cudaGetErrorString(status));
}

inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cuda(call, file, line, cublasGetStatusString(status));
}

}  // namespace smelt::kernels::detail

#define SMELT_CUDA_CALL(call) ::smelt::kernels::detail::check((call), #call, __FILE__, __LINE__)
