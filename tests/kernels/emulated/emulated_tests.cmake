# The CUDA kernels and the CUDA backend's host code run on the CPU: the kernels
# compiled as host C++ through tests/kernels/emulated/cuda_emulation.hpp, the runtime and cuBLAS
# faked by tests/kernels/emulated/fake_cuda.cpp. No CUDA library and no device, only CUDA's
# headers: the toolkit's where this build has CUDA, else tests/kernels/emulated/cuda_stand_in/,
# which declares the few types and calls used, so that every machine runs them.
if(SMELT_HAS_CUDA)
  set(cuda_headers ${CUDAToolkit_INCLUDE_DIRS})
else()
  set(cuda_headers ${CMAKE_CURRENT_SOURCE_DIR}/kernels/emulated/cuda_stand_in)
endif()

# The kernels themselves, compiled as host C++ and run through a CPU emulation
# (cuda_emulation.hpp): CUDA headers only, no CUDA library, no device.
add_executable(kernels_emulated_test kernels/emulated/kernels_emulated_test.cpp)
target_include_directories(kernels_emulated_test PRIVATE kernels/emulated support ${PROJECT_SOURCE_DIR}/kernels ${cuda_headers})
target_link_libraries(kernels_emulated_test PRIVATE smelt_test_main Threads::Threads)
# The kernels are device code written for nvcc: the host project's -Wconversion
# family does not apply to them, g++ does not know #pragma unroll, and their
# 16-byte accesses through uint4 pointers need -fno-strict-aliasing on a host compiler.
target_compile_options(kernels_emulated_test
  PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-unknown-pragmas -fno-strict-aliasing>)
catch_discover_tests(kernels_emulated_test PROPERTIES TIMEOUT 120)  # a kernel bug can deadlock a barrier
# LayerRunner whole on the CPU: the backend's host sources as they are (one
# OBJECT library, kernels/sources.cmake's list, for every test that runs them),
# the kernel launchers through the emulation, the runtime and cuBLAS faked.
include(${PROJECT_SOURCE_DIR}/kernels/sources.cmake)
add_library(kernels_emulated_objects OBJECT ${SMELT_KERNELS_EMULATED_SOURCES} kernels/emulated/emulated_kernels.cpp
  kernels/emulated/fake_cuda.cpp)
target_include_directories(kernels_emulated_objects PUBLIC kernels/emulated ${SMELT_KERNELS_DIR} ${PROJECT_SOURCE_DIR}/src ${cuda_headers})
target_link_libraries(kernels_emulated_objects PUBLIC smelt::smelt smelt_util_internal Threads::Threads ${SMELT_FMT})
target_compile_options(kernels_emulated_objects
  PUBLIC $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-unknown-pragmas -fno-strict-aliasing>)
# Under AddressSanitizer (fake device memory is allocated to the byte): a
# kernel or product reaching past a buffer fails the test.
if(NOT SMELT_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(kernels_emulated_objects PUBLIC -fsanitize=address -fno-omit-frame-pointer)
  target_link_options(kernels_emulated_objects PUBLIC -fsanitize=address)
endif()
set_source_files_properties(kernels/emulated/fake_cuda.cpp PROPERTIES COMPILE_OPTIONS -O2)  # its naive GEMMs
add_executable(emulated_layer_test kernels/emulated/emulated_layer_test.cpp)
target_include_directories(emulated_layer_test PRIVATE support)
target_link_libraries(emulated_layer_test PRIVATE smelt_test_main kernels_emulated_objects)
# Up to 69 s each in Release on 2 idle cores (docs/development.md): a wide margin for a busy machine.
catch_discover_tests(emulated_layer_test PROPERTIES TIMEOUT 900)
# The same under ThreadSanitizer: a race between a block's threads (a missing
# __syncthreads or __syncwarp, on shared or global memory) is reported.
if(NOT SMELT_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  add_executable(kernels_emulated_tsan_test kernels/emulated/kernels_emulated_test.cpp)
  target_include_directories(kernels_emulated_tsan_test PRIVATE kernels/emulated support ${PROJECT_SOURCE_DIR}/kernels ${cuda_headers})
  target_link_libraries(kernels_emulated_tsan_test PRIVATE smelt_test_main Threads::Threads)
  target_compile_options(kernels_emulated_tsan_test
    PRIVATE -Wall -Wextra -Wno-unknown-pragmas -fno-strict-aliasing -fsanitize=thread -O1 -g)
  target_link_options(kernels_emulated_tsan_test PRIVATE -fsanitize=thread)
  add_test(NAME kernels.emulated.races COMMAND kernels_emulated_tsan_test)
  # Skipped, not failed, where the kernel's address-space layout keeps TSan from starting.
  set_tests_properties(kernels.emulated.races PROPERTIES TIMEOUT 900 ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1"
    SKIP_REGULAR_EXPRESSION "unexpected memory mapping")
endif()
