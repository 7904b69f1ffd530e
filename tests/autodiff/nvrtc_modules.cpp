// The adjoint modules of this suite (every control-flow construct, the array rules, the
// checkpoint bound, the overwrite rules, the combinations, the value parameters' sums over a
// block) compile with NVRTC for sm_80 and sm_90: the
// gradients checked on cpu are the same text a GPU runs.
#include <doctest/doctest.h>

#include <cstring>
#include <string_view>

#include "kjit/compiler/build.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"

using namespace kjit;

TEST_CASE("the autodiff suite's modules compile with NVRTC for sm_80 and sm_90, adjoints included") {
  for (const char* module : {"autodiff_control_flow", "autodiff_arrays", "autodiff_bounded", "autodiff_overwrites",
                             "autodiff_combinations", "value_gradients", "autodiff_lanes"}) {
    compiler::ModuleSource s = module_compile_input(module).source;
    size_t adjoints = 0;
    for (const std::string& e : s.entry_points) adjoints += e.size() > 4 && e.compare(e.size() - 4, 4, "_adj") == 0;
    CHECK_MESSAGE(adjoints > 0, module << " has no adjoint entry point");
    compiler::CompileOptions fast;
    fast.fast_compile = true;  // the suite checks that the text compiles, not how fast it runs
    for (const char* target : {"sm_80", "sm_90"}) {
      INFO(module << " for " << target);
      compiler::Artifact a = compiler::build_module(s, compiler::Target::parse(target), fast);
      REQUIRE(a.image.size() > 16);
      CHECK(std::memcmp(a.image.data(), "\x7f" "ELF", 4) == 0);
      std::string_view image(a.image.data(), a.image.size());
      for (const std::string& e : s.entry_points) CHECK_MESSAGE(image.find(e) != std::string_view::npos, e);
    }
  }
}
