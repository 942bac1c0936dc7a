# Configures, builds and runs tests/package/subdirectory, which builds smelt
# from SMELT_SOURCE_DIR with add_subdirectory (the library alone: no CUDA).
file(REMOVE_RECURSE "${WORK_DIR}")
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)
run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}" -G "${CMAKE_GENERATOR}" -DCMAKE_BUILD_TYPE=Debug
    "-DSMELT_SOURCE_DIR=${SMELT_SOURCE_DIR}" -DSMELT_WITH_CUDA=OFF "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}" --target consumer)
run("${WORK_DIR}/consumer")
message("${last_output}")
