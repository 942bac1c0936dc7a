# Every public header compiles on its own: one generated source per header,
# built as an object library (never run). The library's headers, its
# generated smelt/version.hpp, and the CUDA backend's public header where this
# build has CUDA (the one header a program that links smelt::kernels includes).
file(GLOB_RECURSE public_headers RELATIVE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/include/smelt/*.hpp)
list(APPEND public_headers smelt/version.hpp)
function(smelt_header_check target)
  set(header_sources)
  foreach(header IN LISTS ARGN)
    string(MAKE_C_IDENTIFIER ${header} id)
    set(source ${CMAKE_CURRENT_BINARY_DIR}/header_check/${id}.cpp)
    file(CONFIGURE OUTPUT ${source} CONTENT "#include \"${header}\"\n#include \"${header}\"  // and twice\n")
    list(APPEND header_sources ${source})
  endforeach()
  add_library(${target} OBJECT ${header_sources})
endfunction()
# A compile-only check of the headers' text: the tree without sanitizers runs it (their flags find nothing more).
if(NOT SMELT_SANITIZE)
  smelt_header_check(smelt_header_check ${public_headers})
  target_link_libraries(smelt_header_check PRIVATE smelt::smelt smelt_warnings)
  if(TARGET smelt_kernels)
    smelt_header_check(smelt_kernels_header_check backend/cuda_backend.hpp)
    target_link_libraries(smelt_kernels_header_check PRIVATE smelt::kernels smelt_warnings)
  endif()
endif()
