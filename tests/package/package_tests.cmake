# smelt as a dependency, both ways a project takes one: find_package(smelt)
# from an installed tree, and add_subdirectory of the source tree (not under
# sanitizers: the consumers are built without them). Both print the version
# from the generated smelt/version.hpp, which must equal project(VERSION).
if(NOT SMELT_SANITIZE)
  add_test(NAME package.consumer
    COMMAND ${CMAKE_COMMAND} -DSMELT_BUILD_DIR=${PROJECT_BINARY_DIR} -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/package/consumer
            -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer-work -DCMAKE_GENERATOR=${CMAKE_GENERATOR}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/package/consumer/run.cmake)
  set_tests_properties(package.consumer PROPERTIES
    PASS_REGULAR_EXPRESSION "consumer: smelt ${PROJECT_VERSION}, mixtral total 46702792704")
  add_test(NAME package.subdirectory
    COMMAND ${CMAKE_COMMAND} -DSMELT_SOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/package/subdirectory
            -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/subdirectory-work -DCMAKE_GENERATOR=${CMAKE_GENERATOR}
            "-DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}" -P ${CMAKE_CURRENT_SOURCE_DIR}/package/subdirectory/run.cmake)
  # It builds the whole library once more.
  set_tests_properties(package.subdirectory PROPERTIES TIMEOUT 1800
    PASS_REGULAR_EXPRESSION "consumer: smelt ${PROJECT_VERSION}, mixtral total 46702792704")
endif()
