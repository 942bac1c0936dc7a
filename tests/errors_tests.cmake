# The error tree: structured violations, library messages in API names, the
# CLI's one flag table and exit-code mapping.
add_executable(smelt_errors_tests support/main_test.cpp unit/util/library_names_test.cpp cli/exit_codes_test.cpp
                                  ${PROJECT_SOURCE_DIR}/cli/flag_names.cpp)
target_include_directories(smelt_errors_tests PRIVATE support ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/cli)
target_link_libraries(smelt_errors_tests PRIVATE smelt::smelt Catch2::Catch2 ${SMELT_FMT} smelt_warnings)
target_compile_definitions(smelt_errors_tests PRIVATE SMELT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_options(smelt_errors_tests PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-Wno-missing-field-initializers>)
catch_discover_tests(smelt_errors_tests EXTRA_ARGS --warn NoTests)

# No string literal in the library names a flag (the unit tests above trigger the
# messages; this catches one no test triggers yet).
add_test(NAME errors.no_flag_literals COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/unit/util/no_flag_literals.sh
                                              ${PROJECT_SOURCE_DIR})
