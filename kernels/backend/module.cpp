// The CUDA backend's module entry points (include/smelt/bench_module.hpp):
// libsmelt_cuda_backend.so, loaded by smelt-match only when bench asks for the
// CUDA backend. The only symbols the module exports.
#include <new>

#include "backend/cuda_backend.hpp"
#include "smelt/bench_module.hpp"
#include "smelt/version.hpp"

extern "C" {

__attribute__((visibility("default"))) const char* smelt_bench_module_version() { return SMELT_VERSION; }

__attribute__((visibility("default"))) smelt::BenchBackend* smelt_bench_module_create() {
  return new (std::nothrow) smelt::kernels::CudaBackend();
}

}  // extern "C"
