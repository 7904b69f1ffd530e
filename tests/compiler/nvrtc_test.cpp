// The NVRTC driver: generated modules compile to cubins (sm_80, sm_90) and PTX (compute_90)
// with every entry point present; options map to NVRTC flags; resources are recorded.
#include <doctest/doctest.h>

#include <algorithm>

#include "elf_reader.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "module_fixtures.hpp"
#include "nvrtc_compiler.hpp"

using namespace kjit::compiler;

namespace {

Cache& memory_cache() {
  static Cache cache([] {
    CacheConfig c;
    c.in_memory = true;
    return c;
  }());
  return cache;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("a generated module compiles to cubins for sm_80 and sm_90") {
  ModuleSource m = kjit::test::saxpy_module();
  REQUIRE(m.entry_points.size() == 2);  // forward and adjoint
  for (int arch : {80, 90}) {
    CAPTURE(arch);
    Artifact a = build_module(m, Target::cubin(arch), CompileOptions{}, memory_cache());
    CHECK(a.origin == ArtifactOrigin::Compiled);
    CHECK(a.compile_ms > 0);
    CHECK(a.library_path.empty());
    std::string_view bytes(a.image.data(), a.image.size());
    REQUIRE(is_elf(bytes));
    std::string err;
    auto syms = elf_defined_functions(bytes, false, &err);
    REQUIRE_MESSAGE(syms, err);
    for (const std::string& e : m.entry_points) CHECK(syms->count(e) == 1);
    // Registers per entry are read from the cubin and recorded in meta.json.
    for (const std::string& e : m.entry_points) {
      REQUIRE(a.meta["resources"].contains(e));
      CHECK(a.meta["resources"][e]["registers"].get<int>() > 0);
      CHECK(a.meta["resources"][e]["stack_bytes"].get<int>() >= 0);
    }
    CHECK(a.meta["target"] == "sm_" + std::to_string(arch));
    CHECK(a.meta["kernels"] == m.kernels);
  }
}

TEST_CASE("a generated module compiles to PTX for compute_90") {
  ModuleSource m = kjit::test::saxpy_module();
  Artifact a = build_module(m, Target::ptx(90), CompileOptions{}, memory_cache());
  REQUIRE(!a.image.empty());
  CHECK(a.image.back() == '\0');  // ready for cuModuleLoadData
  std::string ptx(a.image.data());
  CHECK(ptx.find(".version ") != std::string::npos);
  CHECK(ptx.find(".target sm_90") != std::string::npos);
  for (const std::string& e : m.entry_points) CHECK(ptx.find(".entry " + e + "(") != std::string::npos);
  CHECK(a.meta["resources"].is_null());  // the driver's JIT decides them
}

TEST_CASE("compile options become NVRTC flags") {
  CompileOptions o;
  auto base = nvrtc_options(Target::cubin(90), o);
  CHECK(has(base, "--gpu-architecture=sm_90"));
  CHECK(has(base, "-std=c++17"));
  CHECK(has(base, "-w"));
  CHECK_FALSE(has(base, "--use_fast_math"));
  o.fast_math = true;
  o.line_info = true;
  o.max_registers = 32;
  o.opt_level = 1;
  o.fast_compile = true;
  o.cxx_standard = "c++14";
  o.extra = {"-DKJIT_TEST_FLAG=1"};
  auto opts = nvrtc_options(Target::cubin(90), o);
  CHECK(has(opts, "--use_fast_math"));
  CHECK(has(opts, "-lineinfo"));
  CHECK(has(opts, "--maxrregcount=32"));
  CHECK(has(opts, "--ptxas-options=-O1"));
  CHECK(has(opts, "-Ofc=min"));
  CHECK(has(opts, "-std=c++14"));
  CHECK(opts.back() == "-DKJIT_TEST_FLAG=1");
  CHECK_FALSE(has(nvrtc_options(Target::ptx(90), o), "--ptxas-options=-O1"));  // no ptxas for PTX
  CompileOptions d;
  d.debug = true;
  CHECK(has(nvrtc_options(Target::cubin(90), d), "-G"));

  // Every such set compiles (each is its own cache key).
  ModuleSource m = kjit::test::saxpy_module();
  CHECK_NOTHROW(build_module(m, Target::cubin(90), o, memory_cache()));
  CHECK_NOTHROW(build_module(m, Target::cubin(90), d, memory_cache()));
}

TEST_CASE("an invalid NVRTC option is a Compile error carrying NVRTC's complaint") {
  CompileOptions o;
  o.extra = {"--no-such-nvrtc-option"};
  try {
    build_module(kjit::test::tiny_module("badopt", 1.0f), Target::ptx(90), o, memory_cache());
    FAIL("expected a compile error");
  } catch (const kjit::Error& e) {
    CHECK(e.kind() == kjit::ErrorKind::Compile);
    std::string msg = e.what();
    CHECK(msg.find("--no-such-nvrtc-option") != std::string::npos);
    CHECK(msg.find("NVRTC") != std::string::npos);
  }
}

TEST_CASE("out-of-range options are User errors") {
  CompileOptions o;
  o.opt_level = 7;
  CHECK_THROWS_AS(build_module(kjit::test::tiny_module("o7", 1.0f), Target::ptx(90), o, memory_cache()),
                  kjit::Error);
  o.opt_level = 3;
  o.max_registers = -1;
  CHECK_THROWS_AS(build_module(kjit::test::tiny_module("r1", 1.0f), Target::ptx(90), o, memory_cache()),
                  kjit::Error);
}

TEST_CASE("a missing entry point is an Internal error, not a silent success") {
  ModuleSource m = kjit::test::tiny_module("missing_entry", 1.0f);
  m.entry_points.push_back("kjit_not_defined_anywhere");
  for (Target t : {Target::cubin(90), Target::ptx(90)}) {
    try {
      build_module(m, t, CompileOptions{}, memory_cache());
      FAIL("expected an error");
    } catch (const kjit::Error& e) {
      CHECK(e.kind() == kjit::ErrorKind::Internal);
      CHECK(std::string(e.what()).find("kjit_not_defined_anywhere") != std::string::npos);
    }
  }
}
