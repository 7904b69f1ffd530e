// Bad input to kjit: each a clear message naming the problem and what to do, a non-zero exit
// status (2), and nothing written to the cache.
#include <doctest/doctest.h>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

namespace {

/// Runs `arguments` with cache folders that do not exist yet (KJIT_CACHE_DIR, and --cache-dir
/// for the subcommands that take it) and checks the error and that neither was created.
void check_rejected(const std::string& arguments, const std::string& expected_message,
                    const std::string& environment = "") {
  TempDir dir("cli-bad-input");
  std::string option_cache = dir / "option-cache", env_cache = dir / "env-cache";
  bool takes_cache_dir = arguments.rfind("precompile", 0) == 0 || arguments.rfind("cache", 0) == 0;
  Run r = run_kjit(arguments + (takes_cache_dir ? " --cache-dir " + option_cache : ""),
                   "KJIT_CACHE_DIR=" + env_cache + " " + environment);
  INFO("kjit " << arguments << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.err.find("kjit: error: ") == 0);
  CHECK(r.err.find(expected_message) != std::string::npos);
  CHECK(r.out.empty());
  CHECK_MESSAGE(!path_exists(option_cache), "the --cache-dir folder was created");
  CHECK_MESSAGE(!path_exists(env_cache), "the KJIT_CACHE_DIR folder was created");
}

}  // namespace

TEST_CASE("precompile rejects bad libraries, names and targets without touching the cache") {
  TempDir files("cli-bad-files");
  write_file(files / "not_a_library.so", "this is text, not an ELF shared object\n");

  check_rejected("precompile " + files / "missing.so" + " --arch sm_90",
                 "cannot open kernel library '" + files / "missing.so" + "': No such file or directory");
  check_rejected("precompile " + files / "not_a_library.so" + " --arch sm_90", "as a kernel library: ");
  check_rejected("precompile " + files.path() + " --arch sm_90", "is not a file");
  check_rejected("precompile --arch sm_90", "no kernel library given");
  check_rejected("precompile " + kDemoLibrary + " --arch sm_13",
                 "invalid compilation target 'sm_13': architecture 13 is not supported by the installed NVRTC");
  check_rejected("precompile " + kDemoLibrary + " --arch bogus", "invalid compilation target 'bogus': not a target name");
  check_rejected("precompile " + kDemoLibrary + " --arch sm_90,", "--arch has an empty target");
  check_rejected("precompile " + kDemoLibrary, "no target to build for. Give --arch sm_80,sm_90");
  check_rejected("precompile " + kDemoLibrary + " --arch sm_90 --module sprngs",
                 "no module named 'sprngs' in " + kDemoLibrary + ". Did you mean 'springs'?");
  // A valid shared library that is not a kernel library.
  check_rejected("precompile " + kFakeDriver + " --arch sm_90", "registers no kjit kernels");
}

TEST_CASE("--all-devices and --current-device without a GPU fail and suggest --arch") {
  for (const char* flag : {"--all-devices", "--current-device"}) {
    check_rejected(std::string("precompile ") + kDemoLibrary + " " + flag,
                   std::string(flag) + " builds for this machine's GPUs, but none is usable: ",
                   "KJIT_CUDA_DRIVER=none");
    check_rejected(std::string("precompile ") + kDemoLibrary + " " + flag, "--arch sm_80,sm_90", "KJIT_CUDA_DRIVER=none");
    // A driver with no device.
    check_rejected(std::string("precompile ") + kDemoLibrary + " " + flag, "no device",
                   "KJIT_CUDA_DRIVER=" + kFakeDriver + " KJIT_FAKE_CUDA_DEVICES=");
  }
}

TEST_CASE("source and list reject unknown kernels and bad arguments") {
  check_rejected("source " + kDemoLibrary + " demo::sxapy",
                 "no kernel named 'demo::sxapy' in " + kDemoLibrary + ". Did you mean 'demo::saxpy'?");
  check_rejected("source " + kDemoLibrary + " nothing_like_it", "Its kernels: demo::damp, demo::daxpy");
  check_rejected("source " + kDemoLibrary, "which kernel of '" + kDemoLibrary + "'?");
  check_rejected("source " + kDemoLibrary + " demo::saxpy --ir --adjoint", "Drop --ir to see the adjoint");
  check_rejected("source " + kDemoLibrary + " demo::saxpy --ir --passes", "--passes already starts with the traced IR");
  check_rejected("source " + kDemoLibrary + " demo::saxpy --passes --target sm_90",
                 "the passes are the same for every target");
  check_rejected("source " + kDemoLibrary + " demo::saxpy --target sm_13", "--target: invalid compilation target 'sm_13'");
  check_rejected("list", "no kernel library given");
}

TEST_CASE("the command line itself: unknown subcommands, options and cache actions") {
  Run none = run_kjit("");
  CHECK(none.status == 2);
  CHECK(none.err.find("no subcommand given") != std::string::npos);
  Run unknown = run_kjit("compile x.so");
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("unknown subcommand 'compile'") != std::string::npos);
  Run option = run_kjit("precompile " + kDemoLibrary + " --arch sm_90 --frobnicate");
  CHECK(option.status == 2);
  CHECK(option.err.find("Unknown command line argument '--frobnicate'") != std::string::npos);

  check_rejected("cache", "give an action: kjit cache stats|verify|prune|clear");
  check_rejected("cache stat", "unknown cache action 'stat'. Did you mean 'stats'?");
  check_rejected("cache stats --max-size 1G", "--max-size is an option of 'kjit cache prune'");
  check_rejected("cache verify --yes", "--yes is an option of 'kjit cache clear'");
}
