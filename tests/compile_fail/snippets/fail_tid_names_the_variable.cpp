// Warp's `tid = wp.tid()` written as `Int tid = tid();` (issue 32, item 5): the initializer
// calls the variable being declared; kjit's advice, not "no match for call".
// expect-error: kjit: `Int tid = tid();` calls the variable being declared
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(tid_names_the_variable, (Array<Float> x)) {
  Int tid = tid();  // expect-here
  x[tid] = 1.0f;
}
}  // namespace snippet
