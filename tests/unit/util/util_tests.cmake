target_sources(smelt_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/util_test.cpp)
