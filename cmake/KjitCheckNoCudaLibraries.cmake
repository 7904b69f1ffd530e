# cmake -P KjitCheckNoCudaLibraries.cmake <readelf> <binary>...: fails when a binary lists
# libcuda or libnvrtc in its DT_NEEDED entries. kjit opens the CUDA driver and NVRTC at run
# time, so that everything built here starts (fast, and without either installed) and the cpu
# device works (ctest's no_cuda_libraries_needed runs it over the build's binaries).
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
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*lib(cuda|nvrtc)[-.a-z]*\\.so[.0-9]*" hits "${out}")
  foreach(hit IN LISTS hits)
    string(REGEX REPLACE ".*(lib(cuda|nvrtc)[-.a-z]*\\.so[.0-9]*)" "\\1" lib "${hit}")
    string(APPEND bad "  ${file}: ${lib}\n")
  endforeach()
  math(EXPR checked "${i} - 3")
endforeach()
if(bad)
  message(FATAL_ERROR "these binaries need libcuda or libnvrtc (both must be opened at run time, "
                      "never linked):\n${bad}")
endif()
message(STATUS "${checked} binaries checked: none needs libcuda or libnvrtc")
