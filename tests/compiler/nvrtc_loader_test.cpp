// NVRTC opened at run time: kjit's declarations match <nvrtc.h>, the search order, the library
// found, and (run by ctest with KJIT_NVRTC_PATH at an empty folder or "none") the exact error
// a GPU target gets without NVRTC while the cpu device keeps working.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <type_traits>

#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/error.hpp"
#include "kjit/runtime/launch.hpp"
#include "kjit/runtime/ndarray.hpp"
#include "module_fixtures.hpp"
#include "nvrtc_api.hpp"
#include "nvrtc_compiler.hpp"
#include "test_support.hpp"

#if __has_include(<nvrtc.h>)
#include <nvrtc.h>
#define KJIT_TEST_HAVE_NVRTC_H 1
#endif

using namespace kjit::compiler;

namespace {

#ifdef KJIT_TEST_HAVE_NVRTC_H
/// Maps a type spelt with nvrtc.h's types to the same type spelt with kjit's.
template <class T> struct Ours { using type = T; };
template <> struct Ours<::nvrtcResult> { using type = kjit::compiler::nvrtcResult; };
template <> struct Ours<::_nvrtcProgram> { using type = NvrtcProgramHandle; };
template <class T> struct Ours<T*> { using type = typename Ours<T>::type*; };
template <class T> struct Ours<const T> { using type = const typename Ours<T>::type; };
template <class R, class... A> struct Ours<R (*)(A...)> {
  using type = typename Ours<R>::type (*)(typename Ours<A>::type...);
};

// Every entry of nvrtc_symbols.def has nvrtc.h's signature, and the named results its values.
#define KJIT_NVRTC_SYMBOL(name, result, parameters)                                          \
  static_assert(std::is_same_v<Ours<decltype(&::name)>::type, decltype(NvrtcApi::name)>,    \
                #name " in nvrtc_symbols.def does not match nvrtc.h");
#include "nvrtc_symbols.def"
#undef KJIT_NVRTC_SYMBOL
static_assert(int(kjit::compiler::NVRTC_SUCCESS) == int(::NVRTC_SUCCESS));
static_assert(int(kjit::compiler::NVRTC_ERROR_OUT_OF_MEMORY) == int(::NVRTC_ERROR_OUT_OF_MEMORY));
static_assert(int(kjit::compiler::NVRTC_ERROR_INVALID_OPTION) == int(::NVRTC_ERROR_INVALID_OPTION));
static_assert(int(kjit::compiler::NVRTC_ERROR_COMPILATION) == int(::NVRTC_ERROR_COMPILATION));
#endif

/// The candidates' paths for an environment `env`, without the toolkit and loader entries
/// (which every search ends with).
std::vector<std::string> paths(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  for (const NvrtcCandidate& c : nvrtc_candidates([&](const char* name) -> const char* {
         auto it = env.find(name);
         return it == env.end() ? nullptr : it->second.c_str();
       }))
    out.push_back(c.path);
  return out;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

TEST_CASE("kjit's NVRTC declarations match nvrtc.h") {
#ifdef KJIT_TEST_HAVE_NVRTC_H
  // The signatures and results are checked at compile time, above; the table's size here.
  size_t rows = 0;
#define KJIT_NVRTC_SYMBOL(name, result, parameters) ++rows;
#include "nvrtc_symbols.def"
#undef KJIT_NVRTC_SYMBOL
  CHECK(rows == sizeof(NvrtcApi) / sizeof(void*));
#elif defined(KJIT_TEST_EXPECT_CUDA_HEADERS)
  FAIL("CMake found nvrtc.h, but this compile could not include it");
#else
  // Registered as the skipped test compiler_nvrtc_declarations, which says so loudly.
  MESSAGE("no nvrtc.h here: kjit's NVRTC declarations are not checked");
#endif
}

TEST_CASE("the NVRTC search: KJIT_NVRTC_PATH alone, else a venv's wheel, then the toolkit, then the loader") {
  kjit::test::TempDir dir("nvrtc-search");
  // A folder: each supported soname in it, newest first, and nothing else.
  CHECK(paths({{"KJIT_NVRTC_PATH", dir.path()}, {"CUDA_PATH", "/opt/cuda"}}) ==
        std::vector<std::string>{dir.path() + "/libnvrtc.so.13", dir.path() + "/libnvrtc.so.12"});
  // A file: exactly that file.
  std::string file = dir.path() + "/libnvrtc.so.12.4";
  kjit::test::write_file(file, "");
  CHECK(paths({{"KJIT_NVRTC_PATH", file}}) == std::vector<std::string>{file});
  CHECK(paths({{"KJIT_NVRTC_PATH", "none"}}).empty());

  // The default search, from a venv holding both wheels' folders.
  std::string venv = dir.path() + "/venv";
  std::string site = venv + "/lib/python3.11/site-packages";
  std::filesystem::create_directories(site);  // lib/python3.X is found by listing lib/
  std::vector<std::string> all = paths({{"VIRTUAL_ENV", venv}, {"CUDA_PATH", "/opt/cuda"}});
  std::vector<std::string> expected = {
      site + "/nvidia/cu13/lib/libnvrtc.so.13", site + "/nvidia/cu13/lib/libnvrtc.so.12",
      site + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.13", site + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"};
  REQUIRE(all.size() >= expected.size() + 10);
  CHECK(std::vector<std::string>(all.begin(), all.begin() + 4) == expected);
  // Then the project venv (when the build has one), the toolkit, and the loader's own path.
  std::vector<std::string> tail(all.end() - 10, all.end());
  CHECK(tail == std::vector<std::string>{
                    "/opt/cuda/lib64/libnvrtc.so.13", "/opt/cuda/lib64/libnvrtc.so.12",
                    "/opt/cuda/lib/libnvrtc.so.13", "/opt/cuda/lib/libnvrtc.so.12",
                    "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
                    "/usr/local/cuda/lib/libnvrtc.so.13", "/usr/local/cuda/lib/libnvrtc.so.12",
                    "libnvrtc.so.13", "libnvrtc.so.12"});
}

TEST_CASE("NVRTC is found, resolved and reports its version" * doctest::skip(env_or_empty("KJIT_NVRTC_PATH") == "none")) {
  const NvrtcLibrary& lib = nvrtc_library();
  REQUIRE_MESSAGE(lib.reason.empty(), lib.reason);
  CHECK(lib.major >= 12);
  CHECK(nvrtc_version_string() == "NVRTC " + std::to_string(lib.major) + "." + std::to_string(lib.minor));
  MESSAGE("NVRTC " << lib.major << "." << lib.minor << " from " << lib.path << ", builtins "
                   << (lib.builtins_path.empty() ? "(found by NVRTC itself)" : lib.builtins_path));
  std::string wanted = env_or_empty("KJIT_NVRTC_PATH");
  if (!wanted.empty()) CHECK(lib.path.rfind(wanted, 0) == 0);  // the override was used
  // The builtins library is NVRTC's own version, from NVRTC's folder when it is there.
  if (!lib.builtins_path.empty())
    CHECK(lib.builtins_path.find("libnvrtc-builtins.so." + std::to_string(lib.major) + "." +
                                 std::to_string(lib.minor)) != std::string::npos);
}

// Run by the ctests compiler_without_nvrtc (KJIT_NVRTC_PATH at an empty folder),
// compiler_nvrtc_disabled (KJIT_NVRTC_PATH=none) and compiler_nvrtc_not_a_library (a text
// file); skipped in a plain run.
TEST_CASE("without NVRTC a GPU target is a Driver error saying how to get it; the cpu device works" *
          doctest::skip()) {
  std::string where = env_or_empty("KJIT_NVRTC_PATH");
  REQUIRE_MESSAGE(!where.empty(), "run with KJIT_NVRTC_PATH=<empty folder> or none");
  // A file that is no library (compiler_nvrtc_not_a_library): dlopen's own complaint follows.
  bool is_file = !where.empty() && where != "none" && !std::filesystem::is_directory(where);
  std::string expected =
      is_file ? "NVRTC could not be loaded from KJIT_NVRTC_PATH: " + where + " cannot be opened (" + where +
                    ": invalid ELF header). To compile for GPU targets, install the CUDA toolkit (12 or "
                    "newer), run `pip install nvidia-cuda-nvrtc` in the active or the project's venv, "
                    "or set KJIT_NVRTC_PATH to the folder (or the file) of libnvrtc.so; the cpu target "
                    "needs no NVRTC"
      : where == "none"
          ? "NVRTC is disabled (KJIT_NVRTC_PATH=none), so GPU targets cannot be compiled; unset "
            "KJIT_NVRTC_PATH to search for the CUDA toolkit's or the nvidia-cuda-nvrtc wheel's NVRTC"
          : "NVRTC was not found: no libnvrtc.so.13 or libnvrtc.so.12 in " + where +
                " (KJIT_NVRTC_PATH). To compile for GPU targets, install the CUDA toolkit (12 or "
                "newer), run `pip install nvidia-cuda-nvrtc` in the active or the project's venv, "
                "or set KJIT_NVRTC_PATH to the folder (or the file) of libnvrtc.so; the cpu target "
                "needs no NVRTC";
  CHECK(nvrtc_library().reason == expected);

  auto expect_driver_error = [&](const std::function<void()>& f) {
    try {
      f();
      FAIL("expected the NVRTC error");
    } catch (const kjit::Error& e) {
      CHECK(e.kind() == kjit::ErrorKind::Driver);
      CHECK(std::string(e.what()) == expected);
    }
  };
  expect_driver_error([] { Target::parse("sm_90"); });
  expect_driver_error([] { nvrtc_supported_archs(); });
  kjit::test::TempDir dir("no-nvrtc");
  CacheConfig cfg;
  cfg.dir = dir.path();
  Cache cache(cfg);
  ModuleSource m = kjit::test::saxpy_module();
  expect_driver_error([&] { build_module(m, Target::cubin(90), CompileOptions{}, cache); });
  expect_driver_error([&] { nvrtc_run("__global__ void k() {}", "k.cu", TargetKind::Ptx, {}); });
  // A misspelt target is still reported as one.
  CHECK_THROWS_WITH(Target::parse("gpu"),
                    doctest::Contains("invalid compilation target 'gpu': not a target name"));

  // The cpu device needs no NVRTC: build, launch and read back.
  std::vector<float> x = {1, 2, 3, 4, 5};
  kjit::NdArray X = kjit::NdArray::from_vector(x);
  kjit::NdArray O = kjit::NdArray::from_vector(std::vector<float>(5, 0.0f));
  kjit::launch(kjit_fixture::scale, 5, X, 3.0f, O);
  CHECK(O.to_vector<float>() == std::vector<float>{3, 6, 9, 12, 15});
}
