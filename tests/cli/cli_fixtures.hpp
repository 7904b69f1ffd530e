// Helpers of the cli tests: running the real kjit binary with separate stdout and stderr, and
// one cache of the example library built for sm_80 and sm_90 that the tests share (NVRTC
// builds take seconds, so they happen once per test process).
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace kjit::test::cli {

/// Paths the build gives the tests (tests/cli/CMakeLists.txt).
inline const std::string kTool = KJIT_TOOL;                     ///< build/tools/kjit
inline const std::string kDemoLibrary = KJIT_DEMO_LIBRARY;      ///< libdemo_kernels.so
inline const std::string kDemoProgram = KJIT_DEMO_PROGRAM;      ///< kjit_demo
inline const std::string kTestLibrary = KJIT_CLI_TEST_LIBRARY;  ///< libcli_test_kernels.so
/// libffi_jax_test_kernels.so: its module geometry_mesh has kernels taking a kjit::dsl::Mesh.
inline const std::string kStructTestLibrary = KJIT_STRUCT_TEST_LIBRARY;
/// The same library built from a copy of its sources at another path (another checkout).
inline const std::string kMovedTestLibrary = KJIT_CLI_MOVED_TEST_LIBRARY;
inline const std::string kFakeDriver = KJIT_FAKE_CUDA_LIBRARY;  ///< the recording fake libcuda
/// The cache kjit_precompile filled at build time (module cli_ok for the cpu).
inline const std::string kBuildTimeCache = KJIT_BUILD_TIME_CACHE;

/// What one run of a command did.
struct Run {
  int status = -1;
  std::string out;  ///< standard output
  std::string err;  ///< standard error
  /// stdout parsed as JSON (a doctest failure names the text when it is not JSON).
  nlohmann::json json() const;
};

/// Runs `command` through the shell with stdout and stderr captured apart.
Run run(const std::string& command);
/// Runs `kjit <arguments>` with `environment` ("NAME=value ..." prefixes) before it.
Run run_kjit(const std::string& arguments, const std::string& environment = "");

/// Copies a cache folder, keeping its owner-only permissions.
void copy_cache(const std::string& from, const std::string& to);
/// Whether `path` exists (a file or a folder).
inline bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// The example library precompiled for sm_80 and sm_90 into a folder that lives as long as
/// the test process; `first` is the JSON of the run that filled it.
struct ExampleCache {
  std::unique_ptr<TempDir> folder;
  std::string dir;  ///< the cache folder (KJIT_CACHE_DIR / --cache-dir)
  Run first;
};
/// Builds the shared cache on first use.
const ExampleCache& example_cache();

}  // namespace kjit::test::cli
