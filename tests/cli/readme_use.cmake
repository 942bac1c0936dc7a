# Runs every `smelt-match ...` line (and makes the folder of a `mkdir -p DIR` line) of README.md's "## Use" block, in order, as
# written (the comment after '#' dropped), in a scratch directory that holds the
# repository's examples/, with the built binary; each must exit 0.
#   cmake -DREADME=<README.md> -DSOURCE_DIR=<repo> -DBINARY=<smelt-match> -DWORK_DIR=<scratch> -P readme_use.cmake
file(READ "${README}" text)
string(FIND "${text}" "\n## Use\n" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${README}: no '## Use' section")
endif()
string(SUBSTRING "${text}" ${start} -1 text)
string(FIND "${text}" "```sh\n" open)
string(SUBSTRING "${text}" ${open} -1 text)
string(LENGTH "```sh\n" skip)
string(SUBSTRING "${text}" ${skip} -1 text)
string(FIND "${text}" "```" close)
string(SUBSTRING "${text}" 0 ${close} block)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(CREATE_LINK "${SOURCE_DIR}/examples" "${WORK_DIR}/examples" SYMBOLIC)

string(REPLACE "\n" ";" lines "${block}")
set(count 0)
foreach(line IN LISTS lines)
  # The scratch folder the lines write into (a `mkdir -p DIR` line).
  if(line MATCHES "^mkdir -p ([^ ]+)$")
    file(MAKE_DIRECTORY "${WORK_DIR}/${CMAKE_MATCH_1}")
    continue()
  endif()
  if(NOT line MATCHES "^smelt-match ")
    continue()
  endif()
  string(REGEX REPLACE "[ \t]+#.*$" "" line "${line}")
  separate_arguments(args UNIX_COMMAND "${line}")
  list(POP_FRONT args)
  execute_process(COMMAND "${BINARY}" ${args} WORKING_DIRECTORY "${WORK_DIR}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "README line exits ${rc}, not 0: ${line}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  message("ok: ${line}")
  math(EXPR count "${count} + 1")
endforeach()
# A renamed section or a reformatted block must not pass by running nothing.
if(count LESS 10)
  message(FATAL_ERROR "found ${count} smelt-match lines in README.md's Use block, expected at least 10")
endif()
message("${count} README lines ran")
