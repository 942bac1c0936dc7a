# Installs the build into a scratch prefix, then configures, builds and runs
# the consumer project against it.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)
run(${CMAKE_COMMAND} --install "${SMELT_BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -G "${CMAKE_GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
message("${last_output}")
