// A vector plus a scalar of its own element type (Warp has no such broadcast either).
// expect-error: kjit: cannot add a scalar to a vector or matrix
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(vector_plus_scalar, (Array<Vec3f> v, Array<Float> x)) {
  Int i = tid();
  v[i] = v[i] + x[i];  // expect-here
}
}  // namespace snippet
