// Tangent kernels as kernels of their own module: names and parameter layout, the module of
// every kernel's tangent, its options (second derivatives on or off), the disk cache (a hit
// once built, KJIT_NO_COMPILE naming the tangent module), and NVRTC compiling the tangent and
// tangent-adjoint entry points for sm_80 and sm_90.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <string_view>

#include "forward_support.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/runtime/modules.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "test_support.hpp"

using namespace kjit;

TEST_CASE("a tangent kernel: its name, module and parameters, made once") {
  const KernelDef& t = tangent_of(demo::daxpy);
  CHECK(t.name() == "demo::daxpy.tangent");
  CHECK(t.module() == "saxpy.tangent");
  CHECK(&tangent_of(demo::daxpy) == &t);
  const std::vector<std::string> names = {"x", "y", "a", "out", "d_x", "d_y", "d_a", "d_out"};
  REQUIRE(t.params().size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    CHECK(t.params()[i].name == names[i]);
    CHECK(t.params()[i].type == demo::daxpy.def().params()[i % 4].type);
  }
  // The module holds the tangent of every kernel of saxpy's module, so that its key does not
  // depend on which tangent was asked for first.
  const ModuleDef* m = Registry::get().find_module("saxpy.tangent");
  REQUIRE(m);
  CHECK(m->kernels().size() == module("saxpy").kernels().size());
  CHECK(make_tangent_module("saxpy") == "saxpy.tangent");
  CHECK(Registry::get().find_kernel("demo::saxpy.tangent") == &tangent_of(demo::saxpy));
}

TEST_CASE("the tangent module takes its module's options; tangent_adjoint turns second derivatives off") {
  auto X = from_vector(std::vector<double>{0.5, 1.0}), C = from_vector(std::vector<double>{0.9, 0.8});
  auto args = std::vector<LaunchArg>{X, C, 3, zeros<double>({2}), X, C, 0, zeros<double>({2})};
  ModuleOptions o = module("loops").options();
  o.tangent_adjoint = false;
  module("loops").set_options(o);
  const KernelDef& t = tangent_of(demo::iterate);
  CHECK(!module("loops.tangent").options().enable_adjoint);
  launch(t, 2, args);
  try {
    launch_adjoint(t, 2, args, {zeros<double>({2}), {}, {}, {}, {}, {}, {}, zeros<double>({2})});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("enable_adjoint = false") != std::string::npos);
  }
  o.tangent_adjoint = true;
  module("loops").set_options(o);
  CHECK(&tangent_of(demo::iterate) == &t);  // the same kernel, its module rebuilt
  CHECK(module("loops.tangent").options().enable_adjoint);
  launch_adjoint(t, 2, args, {zeros<double>({2}), {}, {}, {}, {}, {}, {}, zeros<double>({2})});
}

TEST_CASE("a tangent module comes from the disk cache once built; KJIT_NO_COMPILE names it") {
  auto X = from_vector(std::vector<double>{1.0, 2.0});
  launch_tangent(demo::daxpy, 2, {X, X, 1.0, zeros<double>({2})}, {X, {}, {}, zeros<double>({2})});
  CHECK(build_module_for("saxpy.tangent", "cpu").from_cache);

  // A kernel no earlier run has built: its constant comes from the clock.
  const double stamp = double(std::chrono::steady_clock::now().time_since_epoch().count() % 1000003);
  auto k = make_kernel<dsl::Array<double>, dsl::Array<double>>(
      "fwd_cache::stamped", "forward_stamped", {"x", "out"},
      [stamp](dsl::Array<double> x, dsl::Array<double> out) { out[dsl::tid()] = x[dsl::tid()] * stamp; });
  launch(k, 2, X, zeros<double>({2}));  // the module itself compiles
  test::ScopedEnv env("KJIT_NO_COMPILE", "1");
  try {
    launch_tangent(k, 2, {X, zeros<double>({2})}, {X, zeros<double>({2})});
    FAIL("no error");
  } catch (const Error& e) {
    std::string msg = e.what();
    CHECK(e.kind() == ErrorKind::User);
    CHECK(msg.find("module 'forward_stamped.tangent'") != std::string::npos);
    CHECK(msg.find("--tangent") != std::string::npos);
    CHECK(msg.find("KJIT_NO_COMPILE") != std::string::npos);
  }
}

TEST_CASE("NVRTC compiles the suite's tangent modules, tangent and tangent-adjoint entry points, for sm_80 and sm_90") {
  for (const char* primal : {"loops", "forward_features", "forward_functions", "forward_second_order"}) {
    const std::string name = make_tangent_module(primal);
    REQUIRE(name == std::string(primal) + ".tangent");
    compiler::ModuleSource s = module_compile_input(name).source;
    size_t adjoints = 0, forwards = 0;
    for (const std::string& e : s.entry_points) {
      adjoints += e.size() > 4 && e.compare(e.size() - 4, 4, "_adj") == 0;
      forwards += e.find("_tangent_fwd") != std::string::npos;
    }
    CHECK_MESSAGE(forwards > 0, name << " has no tangent entry point");
    CHECK_MESSAGE(adjoints > 0, name << " has no tangent-adjoint entry point");
    compiler::CompileOptions fast;
    fast.fast_compile = true;
    for (const char* target : {"sm_80", "sm_90"}) {
      INFO(name << " for " << target);
      compiler::Artifact a = compiler::build_module(s, compiler::Target::parse(target), fast);
      REQUIRE(a.image.size() > 16);
      CHECK(std::memcmp(a.image.data(), "\x7f" "ELF", 4) == 0);
      std::string_view image(a.image.data(), a.image.size());
      for (const std::string& e : s.entry_points) CHECK_MESSAGE(image.find(e) != std::string_view::npos, e);
    }
  }
}
