// The Warp accumulation loop written with a plain Double: the same advice, at compile time.
// expect-error: kjit: `+=` (and -=, *=, /=, %=) needs a Var<T>
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(compound_in_loop, (Array<Double> x, Array<Double> out)) {
  Double a = 0.0;
  For(0, x.shape[0], [&](Int k) {
    a *= x[k];  // expect-here
  });
  out[tid()] = a;
}
}  // namespace snippet
