// Module options: every field of ModuleOptions reaches the code generator or the compiler
// (and so the key), and a module built with another C++ standard still runs.
#include <doctest/doctest.h>
#include <string>

#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"

using namespace kjit;

TEST_CASE("every ModuleOptions field reaches the compiler's options or the code generator") {
  ModuleOptions o;
  o.fast_math = true;
  o.line_info = true;
  o.debug = true;
  o.max_registers = 40;
  o.opt_level = 1;
  o.fast_compile = true;
  o.cxx_standard = "c++20";
  const compiler::CompileOptions c = module_compile_input("saxpy", o).options;
  CHECK(c.fast_math);
  CHECK(c.line_info);
  CHECK(c.debug);
  CHECK(c.max_registers == 40);
  CHECK(c.opt_level == 1);
  CHECK(c.fast_compile);
  CHECK(c.cxx_standard == "c++20");
  CHECK(module_compile_input("saxpy", ModuleOptions{}).options.cxx_standard == "c++17");
  // The code generator's options change the module's identity (and so its key).
  const std::string base = module_compile_input("loops", ModuleOptions{}).source.identity;
  ModuleOptions forward_only;
  forward_only.enable_adjoint = false;
  CHECK(module_compile_input("loops", forward_only).source.identity != base);
  ModuleOptions fewer_checkpoints;
  fewer_checkpoints.loop_checkpoints = 8;
  CHECK(module_compile_input("loops", fewer_checkpoints).source.identity != base);
  CHECK(o != ModuleOptions{});
  ModuleOptions std20;
  std20.cxx_standard = "c++20";
  CHECK(std20 != ModuleOptions{});
}

TEST_CASE("a module built as C++20 runs on cpu and gives the same results") {
  ModuleDef& m = kjit::module("saxpy");
  const ModuleOptions saved = m.options();
  ModuleOptions o = saved;
  o.cxx_standard = "c++20";
  m.set_options(o);
  auto X = from_vector(std::vector<float>{1, 2, 3}), Y = from_vector(std::vector<float>{10, 20, 30});
  auto out = zeros<float>({3});
  launch(demo::saxpy, 3, X, Y, 2.0f, out);
  m.set_options(saved);
  CHECK(out.to_vector<float>() == std::vector<float>{12, 24, 36});
}
