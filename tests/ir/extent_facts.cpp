// The extent analysis (kjit/ir/extent_facts.hpp): unguarded accesses at affine functions of the
// thread index are found; guarded, data-dependent and conditional ones are not.
#include <doctest/doctest.h>
#include <string>

#include "kjit/ir/extent_facts.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "springs.hpp"

using namespace kjit;

namespace extent_tests {
using namespace kjit::dsl;

KJIT_KERNEL(plain, (Array<Float> x, Array<Float> y, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] + y[2 * i + 1];
}
KJIT_KERNEL(guarded_if, (Array<Float> x, Array<Float> out)) {
  Int i = tid();
  If(i < x.shape(0), [&] { out[i] = x[i]; });
}
KJIT_KERNEL(early_return, (Array<Float> x, Array<Float> out)) {
  Int i = tid();
  If(i >= x.shape(0), [&] { Return(); });
  out[i] = x[i];
}
KJIT_KERNEL(data_dependent, (Array<Float> x, Array<Int> idx, Array<Float> shape_only, Array<Float> out)) {
  Int i = tid();
  out[i] = x[idx[i]] + cast<float>(shape_only.shape(0));
}
KJIT_KERNEL(shifted_and_looped, (Array<Float> x, Int n, Array<Float> out)) {
  Int i = tid();
  Var<Float> s = x[i - 1];  // a negative offset: not recorded
  For(0, n, [&](Int) { s += out[i]; });
  out[i + 3] = s;
}
KJIT_KERNEL(grid, (Array<Float, 2> m, Array<Float, 2> out)) {
  auto [r, c] = tid<2>();
  out(r, c) = m(r, c + 1);
}
}  // namespace extent_tests

namespace {

std::string facts_str(const KernelDef& k) {
  std::string s;
  for (const ir::ExtentFact& f : ir::extent_facts(k.ir()).unguarded)
    s += k.ir().params[size_t(f.param)].name + "[" + std::to_string(f.dim) + "]=" + f.index_str() + ";";
  return s;
}

}  // namespace

TEST_CASE("extent facts: unguarded affine accesses, and what each needs of a launch") {
  CHECK(facts_str(extent_tests::plain.def()) == "y[0]=2*tid() + 1;x[0]=tid();out[0]=tid();");
  const auto& facts = ir::extent_facts(extent_tests::plain.def().ir());
  CHECK(facts.unguarded[0].needed(10) == 20);  // y[2*9 + 1]
  CHECK(facts.unguarded[1].needed(10) == 10);
  CHECK(facts.unguarded[0].needed(0) == 0);
  CHECK(facts.unguarded[0].needed(INT64_MAX) == INT64_MAX);
  CHECK(facts.unguarded[0].loc.known());
  CHECK(facts_str(extent_tests::shifted_and_looped.def()) == "out[0]=tid() + 3;");
  CHECK(facts_str(extent_tests::grid.def()) == "m[0]=tid(0);m[1]=tid(1) + 1;out[0]=tid(0);out[1]=tid(1);");
}

TEST_CASE("extent facts: guards, early returns and data-dependent indices prove nothing") {
  CHECK(facts_str(extent_tests::guarded_if.def()).empty());
  CHECK(facts_str(extent_tests::early_return.def()).empty());
  CHECK(facts_str(extent_tests::data_dependent.def()) == "idx[0]=tid();out[0]=tid();");
  CHECK(facts_str(demo::springs.def()) == "pairs[0]=2*tid();pairs[0]=2*tid() + 1;rest[0]=tid();");
}

TEST_CASE("extent facts: which arrays the kernel touches at all") {
  const auto& a = ir::extent_facts(extent_tests::data_dependent.def().ir()).accessed;
  CHECK(a == std::vector<bool>{true, true, false, true});
  CHECK(ir::extent_facts(extent_tests::guarded_if.def().ir()).accessed == std::vector<bool>{true, true});
}
