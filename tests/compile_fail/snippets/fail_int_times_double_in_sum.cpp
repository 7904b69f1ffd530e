// Int times Double inside a sum, through <kjit/kjit.hpp> (one more include level): the issue's
// first error was "no match for 'operator+' ('VarHandle<double>' and 'void')".
// expect-error: kjit: operands of * have different element types
#include <kjit/kjit.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(int_times_double_in_sum, (Array<Double> x, Array<Double> out)) {
  Var<Double> s = 0.0;
  For(0, x.shape[0], [&](Int i) {
    s = s + i * x[i];  // expect-here
  });
  out[tid()] = s;
}
}  // namespace snippet
