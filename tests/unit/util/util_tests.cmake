target_sources(smelt_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/util_test.cpp)
# Allocation counts of the readers: a program of its own, whose global operator new counts.
add_executable(smelt_alloc_tests ${CMAKE_CURRENT_LIST_DIR}/readers_alloc_test.cpp)
target_link_libraries(smelt_alloc_tests PRIVATE smelt_test_main smelt::smelt ${SMELT_FMT} smelt_warnings)
target_include_directories(smelt_alloc_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
target_compile_definitions(smelt_alloc_tests PRIVATE SMELT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
smelt_optimise_tests(smelt_alloc_tests)
smelt_add_catch_tests(smelt_alloc_tests)

# The walls between modules: a module includes another's private headers only
# when its CMake names it (USES), and cli/, python/src/ and kernels/ include no
# private header (docs/architecture.md).
add_test(NAME util.module_walls COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/module_walls.sh ${PROJECT_SOURCE_DIR}
                                        ${PROJECT_BINARY_DIR}/module_graph.txt)
