# cmake -P KjitCheckOpenedLibraries.cmake <readelf> <binary>...: fails when a binary lists
# libcuda, libnvrtc or libcrypto in its DT_NEEDED entries. kjit opens the CUDA driver, NVRTC
# and OpenSSL's libcrypto at run time, on first use, so that everything built here starts fast
# (and without the first two installed) and the cpu device works (ctest's
# opened_libraries_not_linked runs it over the build's binaries).
math(EXPR last "${CMAKE_ARGC} - 1")
set(readelf "${CMAKE_ARGV3}")
set(bad "")
foreach(i RANGE 4 ${last})
  set(file "${CMAKE_ARGV${i}}")
  execute_process(COMMAND "${readelf}" -d "${file}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot read the dynamic section of ${file}")
  endif()
  # readelf brackets the names ([libcuda.so.1]); unbalanced brackets would break CMake lists.
  string(REPLACE "[" " " out "${out}")
  string(REPLACE "]" " " out "${out}")
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*lib(cuda|nvrtc|crypto)[-.a-z]*\\.so[.0-9]*" hits "${out}")
  foreach(hit IN LISTS hits)
    string(REGEX REPLACE ".*(lib(cuda|nvrtc|crypto)[-.a-z]*\\.so[.0-9]*)" "\\1" lib "${hit}")
    string(APPEND bad "  ${file}: ${lib}\n")
  endforeach()
  math(EXPR checked "${i} - 3")
endforeach()
if(bad)
  message(FATAL_ERROR "these binaries need libcuda, libnvrtc or libcrypto (each must be opened at "
                      "run time, never linked):\n${bad}")
endif()
message(STATUS "${checked} binaries checked: none needs libcuda, libnvrtc or libcrypto")
