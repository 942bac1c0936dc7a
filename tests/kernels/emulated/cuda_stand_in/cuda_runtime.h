// A stand-in for the CUDA toolkit's <cuda_runtime.h> where the toolkit is
// absent, so that the emulated-kernel tests (tests/kernels/emulated/cuda_emulation.hpp,
// tests/kernels/emulated/fake_cuda.cpp) build and run on any machine. It declares only what the
// benchmark's kernels and host code use, with the toolkit's names and values;
// the functions are defined by tests/kernels/emulated/fake_cuda.cpp. Never used with nvcc.
#pragma once

#include <math.h>  // expf, tanhf in the global namespace, as the toolkit's header gives them

#include <cstddef>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __align__(n) __attribute__((aligned(n)))

struct uint2 {
  unsigned int x, y;
} __attribute__((aligned(8)));
struct uint3 {
  unsigned int x, y, z;
};
struct uint4 {
  unsigned int x, y, z, w;
} __attribute__((aligned(16)));
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};

enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

typedef enum cudaDataType_t { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 } cudaDataType;

struct CUstream_st;
struct CUevent_st;
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;

#define cudaStreamNonBlocking 0x01
#define cudaEventDisableTiming 0x02

struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  int major;
  int minor;
  int multiProcessorCount;
  int l2CacheSize;
};

struct cudaFuncAttributes {
  std::size_t sharedSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
};

extern "C" {
cudaError_t cudaMalloc(void** p, std::size_t bytes);
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t stream);
cudaError_t cudaGetLastError(void);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* func);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);
}
