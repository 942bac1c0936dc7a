# The exports (src/export/): library tests in their own binary, and the CLI command.
add_executable(smelt_export_tests support/main_test.cpp unit/export/megatron_export_test.cpp
                                  unit/export/hf_export_test.cpp)
target_include_directories(smelt_export_tests PRIVATE support ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(smelt_export_tests PRIVATE smelt::smelt Catch2::Catch2 ${SMELT_FMT} smelt_warnings)
target_compile_definitions(smelt_export_tests PRIVATE SMELT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
catch_discover_tests(smelt_export_tests EXTRA_ARGS --warn NoTests)
include(cli/cli_export_tests.cmake)
