# Precompiled headers for the heavy third-party headers (docs/development.md,
# "Build time", measures them). Without them every translation unit parses
# nlohmann/json, fmt, CLI11 or Catch2 again: 5-20 s each of a 4-minute build.
# One precompiled header serves all of the library's modules (they share their
# flags, smelt_add_module), one the CLI's files, one each test program's.
# Off with -DSMELT_PCH=OFF (clang-tidy, or to check that every file includes
# what it uses).
option(SMELT_PCH "Precompile the heavy third-party headers" ON)
# The library's modules and the CLI as one translation unit each (a Release
# build of smelt-match: 2.0 CPU-minutes instead of 6): files keep their
# file-local names distinct for it. Off with -DSMELT_UNITY=OFF.
# On by default with GCC only: clang's -Wshadow counts the file-local aliases
# that several files of a module repeat (`using i64 = ...`) as shadowing, so a
# clang unity build (scripts/fuzz.sh's) turns that warning off (CMakeLists.txt).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(_smelt_unity_default ON)
else()
  set(_smelt_unity_default OFF)
endif()
option(SMELT_UNITY "Build the library modules and the CLI as unity builds" ${_smelt_unity_default})

set(SMELT_PCH_STD_HEADERS <algorithm> <array> <cmath> <cstdint> <functional> <limits> <map> <memory> <optional>
    <stdexcept> <string> <string_view> <utility> <vector>)

# smelt_precompile_headers(TARGET HEADER...): TARGET's own precompiled header
# of the standard headers above and HEADER...
function(smelt_precompile_headers target)
  if(SMELT_PCH)
    target_precompile_headers(${target} PRIVATE ${SMELT_PCH_STD_HEADERS} ${ARGN})
  endif()
endfunction()

# smelt_reuse_precompiled_headers(TARGET FROM): TARGET compiles with FROM's
# precompiled header (same flags required: the library's modules).
function(smelt_reuse_precompiled_headers target from)
  if(SMELT_PCH)
    target_precompile_headers(${target} REUSE_FROM ${from})
  endif()
endfunction()

# smelt_skip_precompiled_headers(FILE...): files built with flags of their own
# (-O2 in a Debug build), which a precompiled header of the target's flags does
# not fit: clang refuses the mismatch outright.
function(smelt_skip_precompiled_headers)
  set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
