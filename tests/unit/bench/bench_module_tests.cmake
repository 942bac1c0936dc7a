# make_module_backend against two tiny modules of tests/unit/bench/fake_backend_module.cpp,
# one built for this version and one for another (no CUDA needed).
foreach(variant current old)
  add_library(smelt_fake_module_${variant} MODULE unit/bench/fake_backend_module.cpp)
  target_link_libraries(smelt_fake_module_${variant} PRIVATE smelt::smelt smelt_warnings)
  target_link_options(smelt_fake_module_${variant} PRIVATE LINKER:--exclude-libs,ALL)
  set_target_properties(smelt_fake_module_${variant} PROPERTIES CXX_VISIBILITY_PRESET hidden)
endforeach()
target_compile_definitions(smelt_fake_module_old PRIVATE SMELT_FAKE_MODULE_VERSION="0.0.1")
target_sources(smelt_tests PRIVATE unit/bench/bench_module_test.cpp)
target_compile_definitions(smelt_tests PRIVATE SMELT_FAKE_MODULE="$<TARGET_FILE:smelt_fake_module_current>"
                                               SMELT_FAKE_MODULE_OLD="$<TARGET_FILE:smelt_fake_module_old>")
add_dependencies(smelt_tests smelt_fake_module_current smelt_fake_module_old)
