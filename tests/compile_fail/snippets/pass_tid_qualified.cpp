// Warp's `tid = wp.tid()` keeps its name when the builtin is qualified (issue 32, item 5).
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(tid_qualified, (Array<Float> x)) {
  Int tid = kjit::dsl::tid();
  x[tid] = 1.0f;
}
}  // namespace snippet
