// A Vec3f scaled by a Double: element types differ.
// expect-error: kjit: operands of * have different element types
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(vector_times_other_scalar, (Array<Vec3f> v, Array<Double> x)) {
  Int i = tid();
  v[i] = v[i] * x[i];  // expect-here
}
}  // namespace snippet
