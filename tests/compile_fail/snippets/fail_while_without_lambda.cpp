// While with a Bool instead of a lambda (issue 17, item 6): kjit's message, not an error
// inside <type_traits>.
// expect-error: kjit: the While condition is a lambda returning a Bool, evaluated before every iteration
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(while_without_lambda, (Array<Int> out)) {
  Var<Int> k = 0;
  While(k < 3, [&] { k += 1; });  // expect-here
  out[tid()] = k;
}
}  // namespace snippet
