# Compiles one snippet of the compile-fail suite with -fsyntax-only (cmake -P; CXX, FLAGS,
# SNIPPET). A snippet with `// expect-error: TEXT` must fail to compile, its first error must
# contain TEXT, within the first 5 lines of the output, and those lines must name the line
# marked `// expect-here`. A snippet without one must compile without a warning.
# Fails the check with its arguments printed as they are (message(FATAL_ERROR) would rewrap it).
function(snippet_failed)
  set(text "${ARGV0}${ARGV1}")  # by index: the output may hold semicolons
  message("${text}")
  message(FATAL_ERROR "compile-fail check of ${SNIPPET} failed")
endfunction()

set(ENV{LC_ALL} C)  # plain quotes and English messages, whatever the machine's locale
file(READ "${SNIPPET}" text)
get_filename_component(file_name "${SNIPPET}" NAME)
string(REGEX MATCH "// expect-error: ([^\n]*)" has_expectation "${text}")
set(expected "${CMAKE_MATCH_1}")
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
set(command "${CXX}" -std=c++17 -fsyntax-only -fdiagnostics-color=never -Wall -Wextra ${flags})
if(NOT has_expectation)
  list(APPEND command -Werror)
endif()
execute_process(COMMAND ${command} "${SNIPPET}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)

if(NOT has_expectation)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "")
    snippet_failed("${file_name} must compile without a warning:\n${out}")
  endif()
  return()
endif()
if(rc EQUAL 0)
  snippet_failed("${file_name} compiled; it must fail with '${expected}'")
endif()

# The first 5 lines of the output, and its first error line.
set(head "")
set(rest "${out}")
foreach(k RANGE 1 5)
  string(FIND "${rest}" "\n" nl)
  if(nl EQUAL -1)
    string(APPEND head "${rest}")
    break()
  endif()
  math(EXPR next "${nl} + 1")
  string(SUBSTRING "${rest}" 0 ${next} line)
  string(SUBSTRING "${rest}" ${next} -1 rest)
  string(APPEND head "${line}")
endforeach()
string(REGEX MATCH "[^\n]*error:[^\n]*" first_error "${out}")
string(FIND "${first_error}" "${expected}" in_error)
string(FIND "${head}" "${expected}" in_head)
if(in_error EQUAL -1 OR in_head EQUAL -1)
  snippet_failed("${file_name}: the first error is not kjit's message '${expected}' within the "
                 "first 5 lines of the output:\n${head}\n(all of it:)\n${out}")
endif()

# The line the snippet marks is where the first lines say the error comes from.
string(FIND "${text}" "// expect-here" marker)
if(NOT marker EQUAL -1)
  string(SUBSTRING "${text}" 0 ${marker} before)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines line_number)
  math(EXPR line_number "${line_number} + 1")
  string(FIND "${head}" "${file_name}:${line_number}:" at_line)
  if(at_line EQUAL -1)
    snippet_failed("${file_name}: the first 5 lines do not name ${file_name}:${line_number}:\n${head}")
  endif()
endif()
