// `x.shape[k]`, Warp's spelling of an array's extent (issue 17, item 5), and kjit's x.shape(k).
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_KERNEL(shape_subscript, (Array<Float, 3> x, Array<Int> out)) {
  auto [i, j, k] = tid<3>();
  Int n = x.shape[0] * x.shape[1] + x.shape[2];
  If(i < x.shape[0] && j < x.shape(1) && k < len(x), [&] { out[0] = n; });
  For(0, x.shape[2], [&](Int) { out[1] = x.shape[1]; });
}
}  // namespace snippet
