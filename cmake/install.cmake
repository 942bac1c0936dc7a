# Installs the library, headers and CLI with a CMake package, so that
# find_package(smelt) gives smelt::smelt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS smelt EXPORT smeltTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS smelt-match RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/smelt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${SMELT_GENERATED_INCLUDE_DIR}/smelt/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/smelt)
install(EXPORT smeltTargets NAMESPACE smelt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/smelt)

configure_package_config_file(cmake/smeltConfig.cmake.in
  ${PROJECT_BINARY_DIR}/smeltConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/smelt)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/smeltConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/smeltConfig.cmake ${PROJECT_BINARY_DIR}/smeltConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/smelt)
