# Every public header compiles on its own: one generated source per header,
# built as an object library (never run).
file(GLOB_RECURSE public_headers RELATIVE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/include/smelt/*.hpp)
set(header_sources)
foreach(header IN LISTS public_headers)
  string(MAKE_C_IDENTIFIER ${header} id)
  set(source ${CMAKE_CURRENT_BINARY_DIR}/header_check/${id}.cpp)
  file(CONFIGURE OUTPUT ${source} CONTENT "#include \"${header}\"\n#include \"${header}\"  // and twice\n")
  list(APPEND header_sources ${source})
endforeach()
add_library(smelt_header_check OBJECT ${header_sources})
target_link_libraries(smelt_header_check PRIVATE smelt::smelt smelt_warnings)
