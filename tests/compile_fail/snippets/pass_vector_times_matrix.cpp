// `v * M`, a row vector times a matrix (issue 17, item 1), with every kind of operand: named
// values, Vars, array elements, non-square matrices; and `M * v` beside it.
#include <kjit/dsl.hpp>
namespace snippet {
using namespace kjit::dsl;
using mat23f = kjit::mat<2, 3, float>;
using Mat23f = Value<mat23f>;
KJIT_KERNEL(vector_times_matrix, (Array<Vec3d> v, Array<Mat33d> m, Array<Vec2f> u, Array<mat23f> w,
                                  Array<Vec3d> out, Array<Vec3f> out3)) {
  Int i = tid();
  Vec3d a = v[i];
  Mat33d M = m[i];
  Var<Vec3d> x = a * M;
  x = x * M;
  x = v[i] * m[i];
  out[i] = M * (x * M);
  Mat23f W = w[i];
  Vec3f b = u[i] * W;
  out3[i] = b + u[i] * w[i];
}
}  // namespace snippet
