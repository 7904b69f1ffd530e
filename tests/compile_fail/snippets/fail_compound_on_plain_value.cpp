// `+=` on a plain Double (issue 17, item 2): advice to declare a Var, not 41 lines of failed
// overloads.
// expect-error: kjit: `+=` (and -=, *=, /=, %=) needs a Var<T>: declare `Var<Float> a = ...`
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(compound_on_plain_value, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double a = 0.0;
  a += x[i];  // expect-here
  out[i] = a;
}
}  // namespace snippet
