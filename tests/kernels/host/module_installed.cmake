# The installed smelt-match finds the installed CUDA backend module (the path
# from bin/ to lib/ is fixed at build time): bench --backend cuda either runs
# (a machine with a GPU) or fails for want of a device, never because the
# module cannot be loaded.
# cmake -DBUILD_DIR=<dir> -DCONFIG=<json> -DWORK_DIR=<dir> -P module_installed.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed (${rc}):\n${out}\n${err}")
endif()
file(GLOB_RECURSE modules ${WORK_DIR}/*/libsmelt_cuda_backend.so)
if(NOT modules)
  message(FATAL_ERROR "no libsmelt_cuda_backend.so installed under ${WORK_DIR}")
endif()
execute_process(COMMAND ${WORK_DIR}/bin/smelt-match bench ${CONFIG} --backend cuda --tokens 8 --context 8 --warmup 0
                        --repetitions 1 --json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(err MATCHES "cannot load" OR NOT (rc EQUAL 0 OR err MATCHES "unavailable: "))
  message(FATAL_ERROR "installed bench --backend cuda (module ${modules}): exit ${rc}\n${out}\n${err}")
endif()
message("installed module ${modules}: exit ${rc} ${err}")
