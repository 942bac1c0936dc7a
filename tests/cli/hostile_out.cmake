# --out's file handling, in one scripted scene:
#  1. an existing OUT.tmp (someone else's file) is left alone;
#  2. a symbolic link is written through: the link stays, its target changes;
#  3. an existing directory is refused with its own cause, and left as it was.
# -DSMELT=<smelt-match> -DCONFIG=<a valid native config> -DDIR=<scratch directory>
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/out-dir)
file(READ ${CONFIG} expected)

file(WRITE ${DIR}/out.json.tmp "not ours\n")
execute_process(COMMAND ${SMELT} convert ${CONFIG} --out ${DIR}/out.json RESULT_VARIABLE rc)
file(READ ${DIR}/out.json.tmp tmp)
file(READ ${DIR}/out.json out)
if(NOT rc EQUAL 0 OR NOT tmp STREQUAL "not ours\n" OR NOT out STREQUAL expected)
  message(FATAL_ERROR "--out onto out.json: exit ${rc}, out.json.tmp now '${tmp}'")
endif()

file(WRITE ${DIR}/target.json "old\n")
file(CREATE_LINK target.json ${DIR}/link.json SYMBOLIC)
execute_process(COMMAND ${SMELT} convert ${CONFIG} --out ${DIR}/link.json RESULT_VARIABLE rc)
file(READ ${DIR}/target.json target)
if(NOT rc EQUAL 0 OR NOT IS_SYMLINK ${DIR}/link.json OR NOT target STREQUAL expected)
  message(FATAL_ERROR "--out onto a link: exit ${rc}; the link should stay and target.json hold the config")
endif()

execute_process(COMMAND ${SMELT} convert ${CONFIG} --out ${DIR}/out-dir RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 4 OR NOT err MATCHES "cannot write '[^']*out-dir': Is a directory\n$" OR NOT IS_DIRECTORY ${DIR}/out-dir)
  message(FATAL_ERROR "--out onto a directory: exit ${rc}, stderr: ${err}")
endif()
file(GLOB left ${DIR}/*.tmp ${DIR}/out-dir/*)
if(NOT left STREQUAL "${DIR}/out.json.tmp")
  message(FATAL_ERROR "temporary files left behind: ${left}")
endif()
message("ok: --out keeps OUT.tmp, writes through links, refuses directories")
