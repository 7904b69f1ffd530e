// float16 and bfloat16 arrays: exact round trips through host memory and kernels, and
// arithmetic (computed in float32, rounded to the storage type per operation) within stated
// tolerances: 2 units in the last place per operation (float16: 2^-10 relative; bfloat16:
// 2^-7 relative).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "kjit/kjit.hpp"

namespace halves {
using namespace kjit::dsl;
KJIT_MODULE(builtins_half)

KJIT_KERNEL(copy_h, (Array<Half> x, Array<Half> out)) { out[tid()] = x[tid()]; }
KJIT_KERNEL(copy_bf, (Array<BFloat16> x, Array<BFloat16> out)) { out[tid()] = x[tid()]; }
KJIT_KERNEL(arith_h, (Array<Half> a, Array<Half> b, Array<Half> out, Array<float> widened)) {
  Int i = tid();
  Half x = a[i], y = b[i];
  out[i] = x * y + x / y - sqrt(abs(x));
  widened[i] = Float(x) + Float(y);
}
KJIT_KERNEL(arith_bf, (Array<BFloat16> a, Array<BFloat16> b, Array<BFloat16> out)) {
  Int i = tid();
  BFloat16 x = a[i], y = b[i];
  out[i] = x * y + x / y - sin(x);
}
KJIT_KERNEL(vec_h, (Array<Vec3h> a, Array<Vec3h> out)) {
  Int i = tid();
  Var<Vec3h> v = a[i];
  v.y() += v.x();
  out[i] = v * Half(2.0f) - a[i];
}
KJIT_KERNEL(narrow, (Array<float> x, Array<Half> h, Array<BFloat16> b)) {
  Int i = tid();
  h[i] = Half(x[i]);
  b[i] = BFloat16(x[i]);
}
}  // namespace halves

using namespace kjit;

namespace {
std::vector<float> samples() {
  std::vector<float> v;
  for (float x : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1e-5f, 5.96e-8f, 3.14159f, 1e-3f, -700.0f}) v.push_back(x);
  for (int i = 0; i < 54; ++i) v.push_back(std::sin(float(i)) * std::pow(2.0f, float(i % 17 - 8)));
  return v;
}
/// |got - want| within `ulps` units of `unit` relative to |want| (absolute near zero).
bool near(float got, double want, double unit, double ulps) { return std::fabs(got - want) <= ulps * unit * std::max(std::fabs(want), 1e-4); }
}  // namespace

TEST_CASE("float16 and bfloat16 arrays round-trip exactly through host memory and kernels") {
  std::vector<half> h;
  std::vector<bfloat16> b;
  for (float x : samples()) h.push_back(half(x)), b.push_back(bfloat16(x));
  const int n = int(h.size());
  NdArray ah = from_vector(h), ab = from_vector(b);
  NdArray oh = zeros<half>({n}), ob = zeros<bfloat16>({n});
  launch(halves::copy_h, n, ah, oh);
  launch(halves::copy_bf, n, ab, ob);
  auto rh = oh.to_vector<half>();
  auto rb = ob.to_vector<bfloat16>();
  for (int i = 0; i < n; ++i) {
    CHECK(rh[size_t(i)].bits == h[size_t(i)].bits);
    CHECK(rb[size_t(i)].bits == b[size_t(i)].bits);
  }
  // Narrowing in a kernel rounds exactly as the host types do (nearest even).
  auto xs = samples();
  NdArray nh = zeros<half>({n}), nb = zeros<bfloat16>({n});
  launch(halves::narrow, n, from_vector(xs), nh, nb);
  auto kh = nh.to_vector<half>();
  auto kb = nb.to_vector<bfloat16>();
  for (int i = 0; i < n; ++i) {
    CHECK(kh[size_t(i)].bits == half(xs[size_t(i)]).bits);
    CHECK(kb[size_t(i)].bits == bfloat16(xs[size_t(i)]).bits);
  }
}

TEST_CASE("float16 and bfloat16 arithmetic within 2 units in the last place per operation") {
  std::vector<half> a, b;
  std::vector<bfloat16> c, d;
  for (int i = 0; i < 40; ++i) {
    float x = 0.3f + 0.17f * i, y = 1.1f - 0.02f * i;
    a.push_back(half(x)), b.push_back(half(y)), c.push_back(bfloat16(x)), d.push_back(bfloat16(y));
  }
  const int n = int(a.size());
  NdArray out = zeros<half>({n}), widened = zeros<float>({n}), outb = zeros<bfloat16>({n});
  launch(halves::arith_h, n, from_vector(a), from_vector(b), out, widened);
  launch(halves::arith_bf, n, from_vector(c), from_vector(d), outb);
  auto o = out.to_vector<half>();
  auto w = widened.to_vector<float>();
  auto ob = outb.to_vector<bfloat16>();
  const double eh = std::ldexp(1.0, -10), eb = std::ldexp(1.0, -7);
  for (int i = 0; i < n; ++i) {
    double x = float(a[size_t(i)]), y = float(b[size_t(i)]);
    double want = x * y + x / y - std::sqrt(std::fabs(x));
    // four rounded operations, each within half an ulp of its (magnitude-bounded) result
    double scale = std::fabs(x * y) + std::fabs(x / y) + std::sqrt(std::fabs(x));
    CHECK(std::fabs(float(o[size_t(i)]) - want) <= 2 * eh * scale);
    CHECK(w[size_t(i)] == float(x + y));  // widening to float32 is exact
    double xb = float(c[size_t(i)]), yb = float(d[size_t(i)]);
    double wantb = xb * yb + xb / yb - std::sin(xb);
    double scaleb = std::fabs(xb * yb) + std::fabs(xb / yb) + std::fabs(std::sin(xb));
    CHECK(std::fabs(float(ob[size_t(i)]) - wantb) <= 2 * eb * scaleb);
  }
}

TEST_CASE("vectors of float16: components, arithmetic") {
  std::vector<vec3h> a{vec3h{{half(1.0f), half(2.0f), half(-3.0f)}}, vec3h{{half(0.5f), half(0.25f), half(8.0f)}}};
  NdArray out = zeros<vec3h>({2});
  launch(halves::vec_h, 2, from_vector(a), out);
  auto o = out.to_vector<vec3h>();
  CHECK(float(o[0][0]) == 1.0f);
  CHECK(float(o[0][1]) == 4.0f);  // (2 + 1) * 2 - 2
  CHECK(float(o[1][2]) == 8.0f);
  CHECK(near(float(o[1][1]), 0.75 * 2 - 0.25, std::ldexp(1.0, -10), 2));
}
