// The IR printer's text for the example kernels, against golden files.
#include <doctest/doctest.h>
#include <string>

#include "golden.hpp"
#include "kjit/ir/printer.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

TEST_CASE("IR listings of the example kernels match their golden files") {
  for (const char* name : {"demo::saxpy", "demo::springs", "demo::damp", "demo::iterate"}) {
    const KernelDef* k = Registry::get().find_kernel(name);
    REQUIRE(k);
    std::string file = std::string(name).substr(6) + ".ir";
    std::string diff = test::compare_golden("ir/" + file, ir::print(k->ir()));
    CHECK_MESSAGE(diff.empty(), diff);
  }
}

TEST_CASE("the printer shows types, regions and source lines") {
  std::string text = ir::print(demo::damp.def().ir());
  CHECK(text.rfind("kernel demo::damp(v: array1d<vec3f>, c: float32, steps: int32, out: array1d<vec3f>) {", 0) == 0);
  CHECK(text.find("  for %") != std::string::npos);
  CHECK(text.find("    %") != std::string::npos);  // statements nested in the loop body
  CHECK(text.find("# loops.hpp:") != std::string::npos);
  ir::PrintOptions bare;
  bare.locations = false;
  CHECK(ir::print(demo::damp.def().ir(), bare).find("#") == std::string::npos);
}
