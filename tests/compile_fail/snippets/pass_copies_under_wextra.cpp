// Copying every kind of DSL handle compiles without a warning under -Wall -Wextra -Werror
// (issue 17, item 7: copying a Var warned from kjit's own var.hpp).
#include <kjit/kjit.hpp>
namespace snippet {
using namespace kjit::dsl;
KJIT_STRUCT(Pt, (Float, m), (Vec3f, p));
inline const auto twice = func("twice", [](Float x) { return x * 2.0f; });
KJIT_KERNEL(copies_under_wextra, (Array<Float> x, Array<Vec3f> v, Array<Pt> pts, Value<Pt> q)) {
  Int i = tid();
  Var<Float> a = x[i];
  Var<Float> b = a;   // Var copy-constructor
  Var<Float> c(b);
  Float d = a;        // Value from a Var
  Float e(d);         // Value copy
  Var<Vec3f> w = v[i];
  auto r = w.x();     // Ref copy
  auto y = r;
  Array<Float> alias = x;  // array handle copy
  auto g = twice;          // device function copy
  Var<Pt> p = pts[i];
  Var<Pt> p2 = p;
  Value<Pt> q2 = q;
  c += b + d + e + y + g(alias[i]) + p2.m() + q2.m();
  x[i] = c;
}
}  // namespace snippet
