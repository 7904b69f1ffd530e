// The generated text of every example module compiles with NVRTC for sm_80 and sm_90
// (CUBIN) and compute_90 (PTX), forward and adjoint, and with the host compiler.
#include <doctest/doctest.h>

#include <cstring>

#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

namespace {
compiler::ModuleSource source_of(const std::string& module) { return module_compile_input(module).source; }
}  // namespace

TEST_CASE("example modules compile with NVRTC for sm_80, sm_90 and compute_90") {
  for (const char* module : {"saxpy", "springs", "loops"}) {
    compiler::ModuleSource s = source_of(module);
    for (const char* target : {"sm_80", "sm_90", "compute_90"}) {
      INFO(module << " for " << target);
      compiler::Artifact a = compiler::build_module(s, compiler::Target::parse(target), {});
      REQUIRE(a.image.size() > 16);
      if (std::string(target).rfind("sm_", 0) == 0) {
        CHECK(std::memcmp(a.image.data(), "\x7f" "ELF", 4) == 0);
      } else {
        std::string ptx(a.image.data());
        CHECK(ptx.find(".target sm_90") != std::string::npos);
        for (const std::string& e : s.entry_points) CHECK(ptx.find(".entry " + e) != std::string::npos);
      }
    }
  }
}

TEST_CASE("example modules compile with the host compiler and export their entries") {
  for (const char* module : {"saxpy", "springs", "loops"}) {
    INFO(module);
    compiler::Artifact a = compiler::build_module(source_of(module), compiler::Target::host(), {});
    CHECK(!a.library_path.empty());
  }
}
