// Gradients where Warp's special-value rules choose the result: min, max and clamp pass the
// gradient to the operand they return (a NaN operand is missing, so the other one), asin and
// acos clamp their argument (no gradient outside [-1, 1]), smoothstep of a NaN position is 0.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/tape.hpp"

namespace special_grads {
using namespace kjit::dsl;
KJIT_MODULE(autodiff_special_values)

/// out = [min(a, b), max(a, b), clamp(a, b, c), acos(a), asin(a), smoothstep(b, c, a)]: one
/// builtin per launch, chosen by `which`, so each gradient stands alone.
KJIT_KERNEL(pick, (Int which, Array<Double> a, Array<Double> b, Array<Double> c, Array<Double> out)) {
  Int i = tid();
  Double x = a[i], y = b[i], z = c[i];
  Double r = where(which == 0, min(x, y),
             where(which == 1, max(x, y),
             where(which == 2, clamp(x, y, z),
             where(which == 3, acos(x),
             where(which == 4, asin(x), smoothstep(y, z, x))))));
  out[i] = r;
}
}  // namespace special_grads

using namespace kjit;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();

struct Grads { double value, a, b, c; };

/// The value and the gradients of builtin `which` at (a, b, c).
Grads run(int which, double a, double b, double c) {
  NdArray xa = from_vector<double>({a}).requires_grad(), xb = from_vector<double>({b}).requires_grad(),
          xc = from_vector<double>({c}).requires_grad(), out = zeros<double>({1});
  Tape tape;
  {
    auto on = tape.record();
    launch(special_grads::pick, 1, which, xa, xb, xc, out);
  }
  tape.backward(out);
  return {out.to_vector<double>()[0], xa.grad().to_vector<double>()[0], xb.grad().to_vector<double>()[0],
          xc.grad().to_vector<double>()[0]};
}
}  // namespace

TEST_CASE("min, max and clamp give the gradient to the operand they return, a NaN operand being missing") {
  Grads g = run(0, kNan, 2.0, 0.0);  // min(NaN, 2) = 2
  CHECK(g.value == 2.0);
  CHECK((g.a == 0.0 && g.b == 1.0));
  g = run(0, 1.0, kNan, 0.0);  // min(1, NaN) = 1
  CHECK((g.value == 1.0 && g.a == 1.0 && g.b == 0.0));
  g = run(0, 3.0, 3.0, 0.0);  // tie: the first operand
  CHECK((g.a == 1.0 && g.b == 0.0));
  g = run(1, 3.0, kNan, 0.0);  // max(3, NaN) = 3
  CHECK((g.value == 3.0 && g.a == 1.0 && g.b == 0.0));
  g = run(1, kNan, -4.0, 0.0);
  CHECK((g.value == -4.0 && g.a == 0.0 && g.b == 1.0));

  g = run(2, kNan, 0.0, 1.0);  // clamp(NaN, 0, 1) = 0, from lo
  CHECK((g.value == 0.0 && g.a == 0.0 && g.b == 1.0 && g.c == 0.0));
  g = run(2, 1.5, 0.0, 1.0);  // above: hi
  CHECK((g.value == 1.0 && g.c == 1.0 && g.a == 0.0));
  g = run(2, 5.0, 2.0, 1.0);  // lo > hi: hi wins, as Warp's min(max(lo, x), hi)
  CHECK((g.value == 1.0 && g.c == 1.0 && g.a == 0.0 && g.b == 0.0));
  g = run(2, 0.0, 0.0, 1.0);  // x on the bound: x's
  CHECK((g.value == 0.0 && g.a == 1.0 && g.b == 0.0));
  g = run(2, 0.25, 0.0, kNan);  // a NaN bound is missing too
  CHECK((g.value == 0.25 && g.a == 1.0 && g.c == 0.0));
}

TEST_CASE("asin and acos clamp their argument: Warp's values, no gradient outside [-1, 1]") {
  Grads g = run(3, 3.0, 0.0, 0.0);
  CHECK((g.value == 0.0 && g.a == 0.0));
  g = run(3, kNan, 0.0, 0.0);
  CHECK(g.value == doctest::Approx(M_PI));
  g = run(4, -2.0, 0.0, 0.0);
  CHECK((g.value == doctest::Approx(-M_PI / 2) && g.a == 0.0));
  g = run(3, 0.5, 0.0, 0.0);
  CHECK(g.a == doctest::Approx(-1 / std::sqrt(0.75)));
  g = run(4, 0.5, 0.0, 0.0);
  CHECK(g.a == doctest::Approx(1 / std::sqrt(0.75)));
}

TEST_CASE("smoothstep of a NaN position is 0 with no gradient") {
  Grads g = run(5, kNan, 0.0, 1.0);
  CHECK(g.value == 0.0);
  CHECK((g.a == 0.0 && g.b == 0.0 && g.c == 0.0));
  g = run(5, 0.5, 0.0, 1.0);
  CHECK((g.value == 0.5 && g.a == doctest::Approx(1.5)));
}
