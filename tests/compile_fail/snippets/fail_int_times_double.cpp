// Int times Double (issue 17, item 3): kjit's message is the first error, not a failed
// operator= on a void result 70 lines before it.
// expect-error: kjit: operands of * have different element types; convert one explicitly
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(int_times_double, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  out[i] = i * x[i];  // expect-here
}
}  // namespace snippet
