target_sources(smelt_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/util_test.cpp)

# The walls between modules: a module includes another's private headers only
# when its CMake names it (USES), and cli/, python/src/ and kernels/ include no
# private header (docs/architecture.md).
add_test(NAME util.module_walls COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/module_walls.sh ${PROJECT_SOURCE_DIR}
                                        ${PROJECT_BINARY_DIR}/module_graph.txt)
