# consumer_test.cmake — `cmake -P` driver of the install tests. MODE=installed: installs kjit's
# build into a fresh prefix, checks the layout, then configures, builds and runs
# tests/install/consumer against it with nothing but CMAKE_PREFIX_PATH, and checks that asking
# for a later minor version fails. MODE=subdirectory / fetchcontent: configures the consumer
# with kjit as a subproject (the consumer's CMakeLists asserts that kjit's library, tool and
# functions are there, and that kjit added none of its tests, benchmarks or examples).
# Inputs (-D): MODE KJIT_BUILD_DIR KJIT_SOURCE_DIR KJIT_VERSION WORK_DIR GENERATOR CXX [SANITIZE]
# [LAUNCHER] [CUDA_ROOT]
cmake_minimum_required(VERSION 3.22)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

set(consumer "${KJIT_SOURCE_DIR}/tests/install/consumer")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(common -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX}" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if(LAUNCHER)
  list(APPEND common "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
if(SANITIZE)  # a sanitized libkjit.so needs its runtime in the program too
  list(APPEND common "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}"
       "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}" "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()

if(MODE STREQUAL "installed")
  set(prefix "${WORK_DIR}/prefix")
  run("cmake --install" "${CMAKE_COMMAND}" --install "${KJIT_BUILD_DIR}" --prefix "${prefix}")
  foreach(f include/kjit/kjit.hpp include/kjit/dsl.hpp include/kjit/abi.h lib/libkjit.so bin/kjit
            lib/cmake/kjit/kjitConfig.cmake lib/cmake/kjit/kjitConfigVersion.cmake
            lib/cmake/kjit/kjitTargets.cmake lib/cmake/kjit/KjitKernelLibrary.cmake
            share/kjit/python/kjit/__init__.py)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "the install has no ${f}")
    endif()
  endforeach()
  # The installed headers are the public ones only: no internal layer, no nlohmann_json (the
  # consumer compiles all three umbrella headers, so nothing they need is missing).
  foreach(f include/kjit/ir/ir.hpp include/kjit/compiler/cache.hpp include/kjit/codegen/codegen.hpp
            include/kjit/runtime/compile_input.hpp)
    if(EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "the install has the internal header ${f}")
    endif()
  endforeach()
  file(GLOB_RECURSE headers "${prefix}/include/*")
  foreach(h IN LISTS headers)
    file(STRINGS "${h}" json REGEX "nlohmann")
    if(json)
      message(FATAL_ERROR "the installed ${h} names nlohmann_json: ${json}")
    endif()
  endforeach()
  # Nothing of the build tree or the sources may leak into the installed package.
  file(GLOB package_files "${prefix}/lib/cmake/kjit/*.cmake")
  foreach(f IN LISTS package_files)
    file(READ "${f}" text)
    foreach(tree "${KJIT_BUILD_DIR}" "${KJIT_SOURCE_DIR}")
      string(FIND "${text}" "${tree}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${f} names ${tree}")
      endif()
    endforeach()
  endforeach()
  run("the installed kjit tool" "${prefix}/bin/kjit" --version)
  # The Python package records the prefix, and finds this prefix's libkjit.so from it.
  file(READ "${prefix}/share/kjit/python/kjit/kjit_prefix.txt" recorded)
  if(NOT recorded STREQUAL "${prefix}\n")
    message(FATAL_ERROR "kjit_prefix.txt says '${recorded}', not '${prefix}'")
  endif()
  find_program(python NAMES python3 REQUIRED)
  run("the installed Python package's libkjit.so lookup" "${CMAKE_COMMAND}" -E env
      --unset=KJIT_LIBRARY "PYTHONPATH=${prefix}/share/kjit/python" "${python}" -c
      "import kjit, kjit._libkjit as l\nprint(kjit.__version__, l.candidates()[0][1])")  # no ';': run() takes a list
  # One version: the Python package's is the CMake project's.
  if(NOT last_output MATCHES "^${KJIT_VERSION} ${prefix}/lib/libkjit.so")
    message(FATAL_ERROR "the installed package is not version ${KJIT_VERSION} or looks elsewhere "
                        "first for libkjit.so:\n${last_output}")
  endif()

  set(build "${WORK_DIR}/consumer-build")
  run("configuring the consumer" "${CMAKE_COMMAND}" -S "${consumer}" -B "${build}" ${common}
      "-DCMAKE_PREFIX_PATH=${prefix}")
  run("building the consumer" "${CMAKE_COMMAND}" --build "${build}")
  if(NOT EXISTS "${build}/kernel-cache")
    message(FATAL_ERROR "kjit_precompile filled no cache at ${build}/kernel-cache")
  endif()
  run("running the consumer" "${CMAKE_COMMAND}" -E env "KJIT_CACHE_DIR=${build}/kernel-cache"
      "${build}/consumer")
  string(FIND "${last_output}" "consumer: ok" ok)
  if(ok EQUAL -1)
    message(FATAL_ERROR "the consumer did not say ok:\n${last_output}")
  endif()
  message(STATUS "${last_output}")

  # find_package(kjit 0.3) must not accept 0.2.
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${consumer}" -B "${WORK_DIR}/too-new" ${common}
                  "-DCMAKE_PREFIX_PATH=${prefix}" -DKJIT_CONSUMER_VERSION=0.3
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(FIND "${out}${err}" "requested version \"0.3\"" named)
  if(rc EQUAL 0 OR named EQUAL -1)
    message(FATAL_ERROR "find_package(kjit 0.3) did not fail on version 0.2 (${rc}):\n${out}${err}")
  endif()
elseif(MODE STREQUAL "subdirectory" OR MODE STREQUAL "fetchcontent")
  if(MODE STREQUAL "subdirectory")
    set(how "-DKJIT_CONSUMER_SOURCE=${KJIT_SOURCE_DIR}")
  else()
    set(how "-DKJIT_CONSUMER_FETCH=${KJIT_SOURCE_DIR}")
  endif()
  run("configuring the consumer with kjit as a ${MODE}" "${CMAKE_COMMAND}" -S "${consumer}"
      -B "${WORK_DIR}/build" ${common} "${how}" "-DCUDAToolkit_ROOT=${CUDA_ROOT}")
else()
  message(FATAL_ERROR "MODE must be installed, subdirectory or fetchcontent, not '${MODE}'")
endif()
