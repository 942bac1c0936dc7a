# The CUDA backend's sources, by folder (docs/architecture.md): backend/ is the
# BenchBackend and the layer it runs, device/ the kernels and the runtime and
# cuBLAS wrappers they need, cupti/ the hardware counters. Listed once here for
# kernels/CMakeLists.txt and for the CPU emulation of tests/kernels/emulated/.
set(SMELT_KERNELS_DIR ${CMAKE_CURRENT_LIST_DIR})
# Device code (nvcc; the emulation compiles it as host C++).
set(SMELT_KERNELS_CUDA_SOURCES
  ${SMELT_KERNELS_DIR}/device/fill.cu
  ${SMELT_KERNELS_DIR}/device/attention_kernels.cu
  ${SMELT_KERNELS_DIR}/device/moe_kernels.cu)
# Host code that the emulation runs as it is, against a faked runtime and cuBLAS.
set(SMELT_KERNELS_EMULATED_SOURCES
  ${SMELT_KERNELS_DIR}/device/device.cpp
  ${SMELT_KERNELS_DIR}/device/gemm.cpp
  ${SMELT_KERNELS_DIR}/device/timing.cpp
  ${SMELT_KERNELS_DIR}/backend/device_weights.cpp
  ${SMELT_KERNELS_DIR}/backend/layer_runner.cpp)
# Host code that needs the real libraries (CUPTI, the whole backend).
set(SMELT_KERNELS_HOST_SOURCES
  ${SMELT_KERNELS_EMULATED_SOURCES}
  ${SMELT_KERNELS_DIR}/backend/correctness.cpp
  ${SMELT_KERNELS_DIR}/backend/counted_flops.cpp
  ${SMELT_KERNELS_DIR}/backend/cuda_backend.cpp
  ${SMELT_KERNELS_DIR}/cupti/cupti_counters.cpp
  ${SMELT_KERNELS_DIR}/cupti/cupti_session.cpp)
