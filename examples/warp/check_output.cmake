# Runs a Warp port (cmake -P; PROGRAM, ARGS, GOLDEN, OUT) and requires its output file to equal
# Warp's, byte for byte (tests/golden/warp_examples/, written from Warp 1.19 on the cpu).
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args} --out "${OUT}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (${rc}):\n${out}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT}" "${GOLDEN}" RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "${PROGRAM}'s output ${OUT} differs from Warp's ${GOLDEN}")
endif()
# The program's last lines (a port that prints per item, as Warp's work queue, prints thousands).
string(LENGTH "${out}" length)
if(length GREATER 2000)
  math(EXPR from "${length} - 2000")
  string(SUBSTRING "${out}" ${from} -1 out)
  set(out "...\n${out}")
endif()
message("${out}output identical to Warp's (${GOLDEN})")
