# The CUDA backend as a module (kernels/CMakeLists.txt): smelt-match itself
# links no CUDA library, so every command but bench starts as a build without
# CUDA does; the module links them; without the module, bench still runs on
# the CPU and --backend cuda says why it cannot.
set(cuda_libraries "^lib(cudart|cublas|cublasLt|cupti|cuda|nvrtc|nvperf_host)\\.so")
add_test(NAME kernels.module.cli_links_no_cuda
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:smelt-match> "-DFORBID=${cuda_libraries}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/kernels/host/linked_libraries.cmake)
add_test(NAME kernels.module.links_cuda
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:smelt_cuda_backend> "-DREQUIRE=^libcudart\\.so"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/kernels/host/linked_libraries.cmake)
add_test(NAME kernels.module.missing
  COMMAND ${CMAKE_COMMAND} -DSMELT_MATCH=$<TARGET_FILE:smelt-match> -DCONFIG=${PROJECT_SOURCE_DIR}/examples/tiny-moe.json
          -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/module-missing -P ${CMAKE_CURRENT_SOURCE_DIR}/kernels/host/module_missing.cmake)
add_test(NAME kernels.module.installed
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DCONFIG=${PROJECT_SOURCE_DIR}/examples/tiny-moe.json
          -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/module-installed
          -P ${CMAKE_CURRENT_SOURCE_DIR}/kernels/host/module_installed.cmake)
