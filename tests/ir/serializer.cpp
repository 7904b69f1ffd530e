// The stable encoding behind module keys: deterministic, and sensitive to every change.
#include <doctest/doctest.h>
#include <string>

#include "kjit/ir/serializer.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "saxpy.hpp"
#include "test_support.hpp"

using namespace kjit;

namespace se_tests {
using namespace kjit::dsl;
KJIT_MODULE(ir_serializer)
KJIT_KERNEL(scale2, (Array<Float> x, Array<Float> out)) { out[tid()] = x[tid()] * 2.0f; }
KJIT_KERNEL(scale3, (Array<Float> x, Array<Float> out)) { out[tid()] = x[tid()] * 3.0f; }
KJIT_KERNEL(scale2d, (Array<Double> x, Array<Double> out)) { out[tid()] = x[tid()] * 2.0; }
}  // namespace se_tests

TEST_CASE("serialisation is deterministic and names source files by base name") {
  std::string a = ir::serialize(demo::saxpy.def().ir());
  CHECK(a == ir::serialize(demo::saxpy.def().ir()));
  CHECK(a.find("@saxpy.hpp:") != std::string::npos);
  CHECK(a.find("/examples/") == std::string::npos);  // no folder: the same in every checkout
  CHECK(a.rfind("kjit-ir/1 demo::saxpy", 0) == 0);
}

TEST_CASE("any change to a kernel changes its encoding") {
  std::string two = ir::serialize(se_tests::scale2.def().ir());
  std::string three = ir::serialize(se_tests::scale3.def().ir());
  std::string dbl = ir::serialize(se_tests::scale2d.def().ir());
  CHECK(two != three);  // a constant
  CHECK(two != dbl);    // a type
  // Same statements under another name and line still differ (names and lines are part of it).
  CHECK(two.substr(two.find('(')) != three.substr(three.find('(')));
}
