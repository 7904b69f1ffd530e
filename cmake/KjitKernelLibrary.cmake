# Kernel libraries in CMake: kjit_add_kernel_library builds one, kjit_precompile fills the
# module cache with its modules at build time. Used in kjit's own build, and installed with the
# CMake package (kjitConfig.cmake includes it) for projects that use kjit.

# kjit_add_kernel_library(NAME SOURCES...): a shared library of kernels (their headers
# included by SOURCES). Its kernels register themselves when it loads; `kjit precompile`
# builds their modules. Source paths are recorded relative to the project, so module keys
# do not depend on where the tree is checked out.
function(kjit_add_kernel_library name)
  add_library(${name} SHARED ${ARGN})
  target_link_libraries(${name} PUBLIC kjit::kjit)
  kjit_relative_source_paths(${name} "${PROJECT_SOURCE_DIR}")
endfunction()

# kjit_relative_source_paths(TARGET ROOT): the source paths TARGET's kernels record (__FILE__:
# error messages, #line directives, module keys) are relative to ROOT. The compiler may see a
# file under ROOT by its absolute path or, when ccache rewrites paths under its base_dir
# (CCACHE_BASEDIR), relative to the folder it runs in: both prefixes map to nothing.
function(kjit_relative_source_paths target root)
  target_compile_options(${target} PRIVATE "-fmacro-prefix-map=${root}/=")
  # Ninja runs the compiler in the top binary folder, Makefiles in the target's own.
  foreach(dir IN ITEMS "${CMAKE_BINARY_DIR}" "${CMAKE_CURRENT_BINARY_DIR}")
    file(RELATIVE_PATH rel "${dir}" "${root}")
    string(REGEX REPLACE "/+$" "" rel "${rel}")
    if(rel AND NOT IS_ABSOLUTE "${rel}")
      target_compile_options(${target} PRIVATE "-fmacro-prefix-map=${rel}/=")
    endif()
  endforeach()
endfunction()

# kjit_precompile(TARGET <kernel library>
#                 [ARCHS sm_80 sm_90 ...] [CPU] [ALL_DEVICES | CURRENT_DEVICE] [PTX] [NO_ADJOINT] [TANGENT]
#                 [MODULES name ...] [CACHE_DIR folder] [JOBS n])
# Runs `kjit precompile` on the kernel library after it builds, so that programs using it find
# every module in the cache and compile nothing. Adds the target <library>_precompile (built
# by default); it reruns whenever the library (or the kjit tool) changes. The options are those
# of `kjit precompile` (docs/CLI.md). CACHE_DIR (relative to the current binary folder) is the
# cache to fill — a folder to ship with an application; without it the builder's own cache
# ($KJIT_CACHE_DIR, else ~/.cache/kjit) is filled. The tool is $KJIT_EXECUTABLE when set, else
# this build's kjit when kjit is part of the build, else the package's kjit::tool, else `kjit`
# found in PATH.
function(kjit_precompile)
  cmake_parse_arguments(P "CPU;ALL_DEVICES;CURRENT_DEVICE;PTX;NO_ADJOINT;TANGENT" "TARGET;CACHE_DIR;JOBS"
                        "ARCHS;MODULES" ${ARGN})
  if(NOT P_TARGET)
    message(FATAL_ERROR "kjit_precompile: name the kernel library with TARGET <target>")
  endif()
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kjit_precompile(${P_TARGET}): unknown arguments ${P_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT P_ARCHS AND NOT P_CPU AND NOT P_ALL_DEVICES AND NOT P_CURRENT_DEVICE)
    message(FATAL_ERROR "kjit_precompile(${P_TARGET}): give ARCHS sm_80 sm_90 ..., CPU, "
                        "ALL_DEVICES or CURRENT_DEVICE")
  endif()

  if(KJIT_EXECUTABLE)
    set(tool "${KJIT_EXECUTABLE}")
    set(tool_target "")
  elseif(KJIT_BUILD_TOOLS)  # kjit is part of this build: its tool target may come later
    set(tool "$<TARGET_FILE:kjit_tool>")
    set(tool_target kjit_tool)
  elseif(TARGET kjit::tool)  # find_package(kjit): the installed tool
    set(tool "$<TARGET_FILE:kjit::tool>")
    set(tool_target "")
  else()
    find_program(KJIT_EXECUTABLE kjit)
    if(NOT KJIT_EXECUTABLE)
      message(FATAL_ERROR "kjit_precompile: the kjit tool was not found; set KJIT_EXECUTABLE")
    endif()
    set(tool "${KJIT_EXECUTABLE}")
    set(tool_target "")
  endif()

  set(args precompile "$<TARGET_FILE:${P_TARGET}>")
  if(P_ARCHS)
    list(JOIN P_ARCHS "," archs)
    list(APPEND args --arch "${archs}")
  endif()
  foreach(flag CPU ALL_DEVICES CURRENT_DEVICE PTX NO_ADJOINT TANGENT)
    if(P_${flag})
      string(TOLOWER "${flag}" option)
      string(REPLACE "_" "-" option "${option}")
      list(APPEND args "--${option}")
    endif()
  endforeach()
  foreach(m IN LISTS P_MODULES)
    list(APPEND args --module "${m}")
  endforeach()
  set(where "the user's cache")
  if(P_CACHE_DIR)
    get_filename_component(cache_dir "${P_CACHE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    list(APPEND args --cache-dir "${cache_dir}")
    set(where "${cache_dir}")
  endif()
  if(P_JOBS)
    list(APPEND args --jobs "${P_JOBS}")
  endif()

  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/kjit_precompile/${P_TARGET}.stamp")
  add_custom_command(OUTPUT "${stamp}"
    COMMAND "${tool}" ${args}
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS ${P_TARGET} ${tool_target}
    COMMENT "kjit precompile ${P_TARGET} into ${where}"
    VERBATIM)
  add_custom_target(${P_TARGET}_precompile ALL DEPENDS "${stamp}")
endfunction()
