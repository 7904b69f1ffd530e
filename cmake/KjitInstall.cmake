# Install rules: headers, libkjit.so, the kjit tool, the Python shim and the CMake package
# (kjitConfig.cmake, its version file, the exported targets kjit::kjit and kjit::tool, and the
# kernel-library functions), all in the GNUInstallDirs places.
include(CMakePackageConfigHelpers)

set(KJIT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/kjit" CACHE STRING
  "Where the CMake package (kjitConfig.cmake) is installed, relative to the prefix")

# The public headers go into one include folder: what <kjit/dsl.hpp>, <kjit/kjit.hpp> and
# <kjit/ffi.hpp> reach, and nothing else. The IR's headers, codegen's and the compiler's API
# (the kjit tool's, with nlohmann_json) and runtime/compile_input.hpp stay in the build tree;
# tests/install checks that the installed headers compile and name no nlohmann_json.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/kernels_dsl/include/" "${PROJECT_SOURCE_DIR}/kernels_dsl/ir/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT kjit_development FILES_MATCHING PATTERN "*.hpp" PATTERN "*.def"
        REGEX "/kjit/ir/[^/]*\\.hpp$" EXCLUDE)
install(FILES "${PROJECT_SOURCE_DIR}/codegen/include/kjit/abi.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kjit"
        COMPONENT kjit_development)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/" "${PROJECT_SOURCE_DIR}/ffi/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT kjit_development
        FILES_MATCHING PATTERN "*.hpp" PATTERN "compile_input.hpp" EXCLUDE)

# Installed binaries find libkjit.so beside them (lib/) wherever the prefix is moved.
set_target_properties(kjit PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS kjit EXPORT kjitTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT kjit_runtime)
if(KJIT_BUILD_TOOLS)
  file(RELATIVE_PATH kjit_bin_to_lib "/${CMAKE_INSTALL_BINDIR}" "/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(kjit_tool PROPERTIES EXPORT_NAME tool INSTALL_RPATH "$ORIGIN/${kjit_bin_to_lib}")
  install(TARGETS kjit_tool EXPORT kjitTargets RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
          COMPONENT kjit_runtime)
endif()

# The JAX shim, a pure-Python package: `pip install <prefix>/share/kjit/python`.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/python/" DESTINATION "${CMAKE_INSTALL_DATADIR}/kjit/python"
        COMPONENT kjit_python
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN "*.egg-info" EXCLUDE
        PATTERN "build" EXCLUDE PATTERN "kjit_prefix.txt" EXCLUDE)
# The package records the prefix (as given at install time, without DESTDIR), so that a
# `pip install` of this copy into any venv still finds this prefix's libkjit.so.
install(CODE "file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/kjit/python/kjit/kjit_prefix.txt\" \"\${CMAKE_INSTALL_PREFIX}\\n\")"
        COMPONENT kjit_python)

install(EXPORT kjitTargets NAMESPACE kjit:: DESTINATION "${KJIT_INSTALL_CMAKEDIR}"
        COMPONENT kjit_development)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/kjitConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/kjitConfig.cmake" INSTALL_DESTINATION "${KJIT_INSTALL_CMAKEDIR}")
# 0.x: a minor version may break the API, so 0.2 accepts 0.2.* only.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/kjitConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/kjitConfig.cmake" "${PROJECT_BINARY_DIR}/kjitConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/KjitKernelLibrary.cmake"
        DESTINATION "${KJIT_INSTALL_CMAKEDIR}" COMPONENT kjit_development)
