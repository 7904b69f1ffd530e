// A device function whose body returns a C++ number (not a DSL value): an error that says what
// a function can return, not a silent void.
// expect-error: kjit: a device function returns nothing, a DSL value, or several of them
#include <kjit/kjit.hpp>
namespace snippet {
using namespace kjit::dsl;
inline const auto number = func("number", [](Float) { return 2; });
KJIT_KERNEL(func_returns_cpp_number, (Array<Float> x)) {
  auto r = number(x[tid()]);  // expect-here
  (void)r;
}
}  // namespace snippet
