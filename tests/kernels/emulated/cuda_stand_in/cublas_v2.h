// A stand-in for the CUDA toolkit's <cublas_v2.h> where the toolkit is absent
// (see cuda_runtime.h here): the types, values and calls the benchmark's
// host code uses, defined by tests/kernels/emulated/fake_cuda.cpp.
#pragma once

#include "cuda_runtime.h"

typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_COMPUTE_32F = 68 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0 } cublasPointerMode_t;

struct cublasContext;
typedef cublasContext* cublasHandle_t;

extern "C" {
cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
const char* cublasGetStatusString(cublasStatus_t status);
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmGroupedBatchedEx(cublasHandle_t handle, const cublasOperation_t transa_array[],
                                          const cublasOperation_t transb_array[], const int m_array[],
                                          const int n_array[], const int k_array[], const void* alpha_array,
                                          const void* const Aarray[], cudaDataType_t Atype, const int lda_array[],
                                          const void* const Barray[], cudaDataType_t Btype, const int ldb_array[],
                                          const void* beta_array, void* const Carray[], cudaDataType_t Ctype,
                                          const int ldc_array[], int group_count, const int group_size[],
                                          cublasComputeType_t computeType);
}
