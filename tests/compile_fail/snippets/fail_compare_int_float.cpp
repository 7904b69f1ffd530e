// Comparing an Int with a Float: convert one explicitly.
// expect-error: kjit: operands of < have different element types
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(compare_int_float, (Array<Float> x)) {
  Int i = tid();
  If(i < x[i], [&] { x[i] = 0.0f; });  // expect-here
}
}  // namespace snippet
