# The exports (src/export/): library tests in their own binary, and the CLI command.
add_executable(smelt_export_tests unit/export/megatron_export_test.cpp unit/export/hf_export_test.cpp)
target_include_directories(smelt_export_tests PRIVATE support ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(smelt_export_tests PRIVATE smelt_test_main smelt::smelt ${SMELT_FMT} smelt_warnings)
target_compile_definitions(smelt_export_tests PRIVATE SMELT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
smelt_optimise_tests(smelt_export_tests)
smelt_unity_tests(smelt_export_tests)
smelt_add_catch_tests(smelt_export_tests)
include(cli/cli_export_tests.cmake)
