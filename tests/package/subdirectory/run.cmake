# Configures, builds and runs tests/package/subdirectory, which builds smelt
# from SMELT_SOURCE_DIR with add_subdirectory (the library alone: no CUDA).
file(REMOVE_RECURSE "${WORK_DIR}")
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)
# Debug without debug information (-O0 alone): the quickest build of the library, about a fifth less CPU than -g.
run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}" -G "${CMAKE_GENERATOR}" -DCMAKE_BUILD_TYPE=Debug
    -DCMAKE_CXX_FLAGS_DEBUG=-O0
    "-DSMELT_SOURCE_DIR=${SMELT_SOURCE_DIR}" -DSMELT_WITH_CUDA=OFF "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}" --target consumer)
run("${WORK_DIR}/consumer")
message("${last_output}")
