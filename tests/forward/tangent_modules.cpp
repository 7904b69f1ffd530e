// Tangent kernels as kernels of their own module: names and parameter layout, found by name
// as the FFI finds kernels, the module of every kernel's tangent, its options (second
// derivatives on or off), the disk cache (a hit once built, KJIT_NO_COMPILE naming the
// tangent module), and NVRTC compiling the tangent and tangent-adjoint entry points for sm_80
// and sm_90.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "forward_support.hpp"
#include "gpu_builds.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/runtime/modules.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "test_support.hpp"
#include "user_error.hpp"

using namespace kjit;
using kjit::test::error_of;

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

TEST_CASE("tangent kernels by name, as the FFI finds kernels: made on first use, entries, launches") {
  // A module no other test has asked tangents of, so that its tangents do not exist yet.
  auto k = make_kernel<dsl::Array<double>, dsl::Value<double>, dsl::Array<double>>(
      "fwd_byname::square", "forward_by_name", {"x", "s", "out"},
      [](dsl::Array<double> x, dsl::Value<double> s, dsl::Array<double> out) {
        out[dsl::tid()] = s * x[dsl::tid()] * x[dsl::tid()];
      });
  CHECK(Registry::get().find_kernel("fwd_byname::square.tangent") == nullptr);
  const KernelDef* t = find_kernel_or_tangent("fwd_byname::square.tangent");
  REQUIRE(t);
  CHECK(t == &tangent_of(k));
  CHECK(Registry::get().find_kernel("fwd_byname::square.tangent") == t);  // now registered
  CHECK(find_kernel_or_tangent("fwd_byname::square") == &k.def());
  const KernelDef* tt = find_kernel_or_tangent("fwd_byname::square.tangent.tangent");
  REQUIRE(tt);
  CHECK(tt == &tangent_of(*t));
  CHECK(tt->params().size() == 12);
  // Forward over forward asked first, when not even the first tangent exists.
  auto k2 = make_kernel<dsl::Array<double>, dsl::Array<double>>(
      "fwd_byname::cube", "forward_by_name_2", {"x", "out"},
      [](dsl::Array<double> x, dsl::Array<double> out) { out[dsl::tid()] = x[dsl::tid()] * x[dsl::tid()] * x[dsl::tid()]; });
  CHECK(Registry::get().find_kernel("fwd_byname::cube.tangent") == nullptr);
  const KernelDef* tt2 = find_kernel_or_tangent("fwd_byname::cube.tangent.tangent");
  REQUIRE(tt2);
  CHECK(tt2 == &tangent_of(tangent_of(k2)));
  CHECK(tt2->params().size() == 8);
  for (const char* missing : {"fwd_byname::nope", "fwd_byname::nope.tangent", ".tangent", "fwd_byname::square.tan"})
    CHECK_MESSAGE(find_kernel_or_tangent(missing) == nullptr, missing);
  CHECK(error_of([] { find_kernel_or_tangent("fwd_errors::maximum.tangent"); }).find("atomic_max on array 'hi'") !=
        std::string::npos);

  // What the FFI reads: the module's entry points (tangent and its adjoint) and the layout.
  compiler::ModuleSource s = module_compile_input(t->module()).source;
  const std::string fwd = codegen::entry_name(t->name(), codegen::EntryKind::Forward);
  const std::string adj = codegen::entry_name(t->name(), codegen::EntryKind::Adjoint);
  CHECK(std::count(s.entry_points.begin(), s.entry_points.end(), fwd) == 1);
  CHECK(std::count(s.entry_points.begin(), s.entry_points.end(), adj) == 1);

  // Launched as a plain kernel with run-time typed values: out = s x^2, dout = 2 s x dx + x^2 ds;
  // its adjoint with cotangents (w, u) of (out, dout): adj_x = 2 s x w + (2 s dx + 2 x ds) u,
  // adj_dx = 2 s x u.
  const size_t n = 37;  // a lane block and a tail
  std::vector<double> x(n), dx(n), w(n), u(n);
  for (size_t i = 0; i < n; ++i) x[i] = 0.1 * double(i) - 1.0, dx[i] = 0.5 - 0.03 * double(i), w[i] = 1.0 + 0.01 * double(i), u[i] = 0.7 - 0.02 * double(i);
  const double sv = 1.5, ds = -0.25;
  auto X = from_vector(x), DX = from_vector(dx), out = zeros<double>({int64_t(n)}), dout = zeros<double>({int64_t(n)});
  auto value = [&](size_t p, const double& v) { return LaunchArg::from_bytes(t->params()[p].type, &v); };
  std::vector<LaunchArg> args{X, value(1, sv), out, DX, value(4, ds), dout};
  launch(*t, int64_t(n), args);
  auto adj_x = zeros<double>({int64_t(n)}), adj_dx = zeros<double>({int64_t(n)});
  launch_adjoint(*t, int64_t(n), args, {adj_x, 0.0, from_vector(w), adj_dx, 0.0, from_vector(u)});
  const std::vector<double> o = out.to_vector<double>(), d = dout.to_vector<double>();
  const std::vector<double> ax = adj_x.to_vector<double>(), adx = adj_dx.to_vector<double>();
  for (size_t i = 0; i < n; ++i) {
    INFO("i = " << i);
    CHECK(o[i] == doctest::Approx(sv * x[i] * x[i]).epsilon(1e-14));
    CHECK(d[i] == doctest::Approx(2 * sv * x[i] * dx[i] + x[i] * x[i] * ds).epsilon(1e-14));
    CHECK(ax[i] == doctest::Approx(2 * sv * x[i] * w[i] + (2 * sv * dx[i] + 2 * x[i] * ds) * u[i]).epsilon(1e-14));
    CHECK(adx[i] == doctest::Approx(2 * sv * x[i] * u[i]).epsilon(1e-14));
  }
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
    test::check_builds_for_gpus(s, name);
  }
}
