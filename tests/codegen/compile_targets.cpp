// The generated text of every example module compiles with NVRTC for sm_80 and sm_90
// (CUBIN) and compute_90 (PTX), forward and adjoint, and with the host compiler.
#include <doctest/doctest.h>

#include <cstring>

#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/kernel.hpp"
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

namespace {
/// A module of one kernel that calls sin, cos and tan `calls` times in all, in float or double.
template <class F>
codegen::GeneratedModule trig_module(const std::string& name, int calls) {
  using namespace kjit::dsl;
  auto kernel = kjit::make_kernel<Array<F>, Array<F>>(
      "trig_test::" + name, name, {"x", "out"}, [calls](Array<F> x, Array<F> out) {
        Int i = tid();
        Var<F> y = x[i];
        for (int c = 0; c < calls; ++c) y = c % 3 == 0 ? F(sin(y)) : c % 3 == 1 ? F(cos(y)) : F(tan(y));
        out[i] = y;
      });
  std::vector<const ir::Function*> fns{&Registry::get().find_kernel("trig_test::" + name)->ir()};  // while `kernel` lives
  return codegen::generate_module(name, fns, codegen::CodegenOptions{});
}
/// The module's PTX for compute_90.
std::string ptx_of(const codegen::GeneratedModule& g, const std::string& name) {
  compiler::ModuleSource s;
  s.name = name;
  s.identity = g.text;
  s.text = g.text;
  s.entry_points = g.entry_points;
  s.kernels = g.kernels;
  compiler::CacheConfig cc;
  cc.in_memory = true;
  compiler::Cache cache(cc);
  compiler::Artifact a = compiler::build_module(s, compiler::Target::ptx(90), {}, cache);
  return std::string(a.image.data(), a.image.size());
}
}  // namespace

TEST_CASE("from 16 float sin/cos/tan calls, CUDA calls one out-of-line copy of each (compile time)") {
  const std::string define = "#define KJ_OUTLINE_TRIG 1";
  codegen::GeneratedModule below = trig_module<kjit::dsl::Float>("trig15", 15);
  codegen::GeneratedModule at = trig_module<kjit::dsl::Float>("trig16", 16);
  codegen::GeneratedModule f64 = trig_module<kjit::dsl::Double>("trig16d", 16);  // double: its slow path is a call already
  CHECK(below.text.find(define) == std::string::npos);
  CHECK(at.text.find(define) != std::string::npos);
  CHECK(f64.text.find(define) == std::string::npos);
  const std::string inlined = ptx_of(below, "trig15"), called = ptx_of(at, "trig16");
  auto calls = [](const std::string& ptx) {
    size_t n = 0;
    for (size_t p = ptx.find("call.uni"); p != std::string::npos; p = ptx.find("call.uni", p + 1)) ++n;
    return n;
  };
  CHECK(inlined.find("kj_sinf_call") == std::string::npos);
  CHECK(calls(inlined) == 0);
  // Forward, replay and the adjoint's rules (adj_sin takes a cos, adj_cos a sin; adj_tan none).
  CHECK(calls(called) >= 16 * 2);
  for (const char* f : {"kj_sinf_call", "kj_cosf_call", "kj_tanf_call"}) {
    INFO(f);
    CHECK(called.find(std::string(".func  (.param .b32 func_retval0) _Z12") + f) != std::string::npos);
  }
}
