// The adjoint modules of this suite (every control-flow construct, the array rules, the
// checkpoint bound, the overwrite rules, the combinations, the value parameters' sums over a
// block) compile with NVRTC for sm_80 and sm_90: the
// gradients checked on cpu are the same text a GPU runs.
#include <doctest/doctest.h>

#include "gpu_builds.hpp"
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
    test::check_builds_for_gpus(s, module);
  }
}
