// `+=` of an Int onto a Var<Double>: convert it explicitly.
// expect-error: kjit: the right side of `+=` (or -=, *=, /=, %=) has another element type than the Var
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(compound_other_type, (Array<Double> out)) {
  Int i = tid();
  Var<Double> s = 0.0;
  s += i;  // expect-here
  out[i] = s;
}
}  // namespace snippet
