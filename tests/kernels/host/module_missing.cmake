# smelt-match copied where its CUDA backend module is not (a scratch bin/ with
# no lib/ beside it): bench --backend cpu and auto still run, and --backend cuda
# fails with exit 2 and the loader's reason, never a crash.
# cmake -DSMELT_MATCH=<file> -DCONFIG=<json> -DWORK_DIR=<dir> -P module_missing.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(COPY ${SMELT_MATCH} DESTINATION ${WORK_DIR}/bin)
get_filename_component(exe_name ${SMELT_MATCH} NAME)
set(exe ${WORK_DIR}/bin/${exe_name})
set(small --tokens 8 --context 8 --warmup 0 --repetitions 1)
foreach(backend cpu auto)
  execute_process(COMMAND ${exe} bench ${CONFIG} --backend ${backend} ${small} --json RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\"backend\": \"cpu\"")
    message(FATAL_ERROR "--backend ${backend} without the module: exit ${rc}\n${out}\n${err}")
  endif()
endforeach()
execute_process(COMMAND ${exe} bench ${CONFIG} --backend cuda ${small} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
set(expected "unavailable: cannot load the cuda backend's module: [^\n]*/lib[^\n]*/libsmelt_cuda_backend.so: cannot open shared object file")
if(NOT rc EQUAL 5 OR NOT err MATCHES "${expected}" OR NOT out STREQUAL "")
  message(FATAL_ERROR "--backend cuda without the module: exit ${rc} (expected 5), stderr:\n${err}\n"
                      "expected to match: ${expected}")
endif()
message("--backend cuda without the module: ${err}")
