// Gradients of value parameters (scalars, vectors, matrices, structs, float16): the sum over a
// launch's threads of each thread's adjoint, written where the caller says. Exact sums over
// 1, 37, 1003 and 100000 threads (lane blocks and tails, pool chunks), dense and strided
// arrays; loops, branches and device functions against finite differences; concurrent
// launches; the destinations' errors.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "gradient_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"

namespace vg {
using namespace kjit::dsl;
KJIT_MODULE(value_gradients)

// d out_i / d k = x_i^2 + 2 k: exact in binary for the inputs below, so sums are exact in any
// order and compare with ==.
KJIT_KERNEL(poly_d, (Array<Double> x, Double k, Array<Double> out)) {
  Int i = tid();
  out[i] = k * x[i] * x[i] + k * k;
}
KJIT_KERNEL(poly_f, (Array<Float> x, Float k, Array<Float> out)) {
  Int i = tid();
  out[i] = k * x[i] * x[i] + k * k;
}

KJIT_KERNEL(affine_d, (Array<Vec3d> v, Vec3d d, Mat33d m, Array<Vec3d> out)) {
  Int i = tid();
  out[i] = m * (v[i] + d);
}
KJIT_KERNEL(affine_f, (Array<Vec3f> v, Vec3f d, Mat33f m, Array<Vec3f> out)) {
  Int i = tid();
  out[i] = m * (v[i] + d);
}

/// Every thread takes its own path: a loop of 0..2 more iterations, and a branch.
KJIT_KERNEL(looped, (Array<Double> x, Double c, Double b, Int steps, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, steps + i % 3, [&](Int) { y = y * c + sin(y) * b; });
  If(y > 0.0, [&] { out[i] = y * c; }).Else([&] { out[i] = y * b - c; });
}

/// The scalar reaches the thread's adjoint through a device function's parameter.
inline const auto blend = func("blend", [](auto x, auto k) { return x * k + sin(k * x); });
KJIT_KERNEL(through_function, (Array<Double> x, Double k, Array<Double> out)) { out[tid()] = blend(x[tid()], k); }

KJIT_KERNEL(poly_h, (Array<Float> x, Half k, Array<Float> out)) { out[tid()] = Float(k) * x[tid()]; }

KJIT_STRUCT(Coeffs, (Double, a), (Vec3d, b), (Int, tag));
KJIT_KERNEL(structured, (Array<Vec3d> v, Value<Coeffs> c, Array<Vec3d> out)) {
  Int i = tid();
  out[i] = v[i] * c.a() + c.b() * Double(c.tag());
}

/// float16 fields in a struct: the struct's sum is kept as it is (field offsets unchanged).
KJIT_STRUCT(HalfCoeffs, (Half, a), (Float, f), (Vec3h, b));
KJIT_KERNEL(structured_h, (Array<Float> x, Value<HalfCoeffs> c, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] * Float(c.a()) + c.f() * 2.0f + Float(c.b()[1]) * x[i];
}
}  // namespace vg

using namespace kjit;
using autodiff_support::expect_pass;
using autodiff_support::random_values;

namespace {

const int kSizes[] = {1, 37, 1003, 100000};

double x_of(int i) { return 0.25 * (i % 7); }
double w_of(int i) { return 0.5 * ((i % 5) - 2); }

/// sum_i w_i (x_i^2 + 2 k), exact.
double poly_sum(int n, double k) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += w_of(i) * (x_of(i) * x_of(i) + 2 * k);
  return s;
}

template <class T>
std::vector<T> values(int n, double (*f)(int)) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = T(f(i));
  return v;
}

/// `f(i)` for i < n as an array of T: dense, or (strided) every other element of an array
/// twice as long, which sends a launch down the strided body. `keep` holds what a view needs.
template <class T>
NdArray laid_out(int n, double (*f)(int), bool dense, std::vector<NdArray>& keep) {
  std::vector<T> v = values<T>(n, f);
  if (dense) return from_vector(v);
  std::vector<T> wide(2 * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) wide[2 * size_t(i)] = v[size_t(i)];
  NdArray backing = keep.emplace_back(from_vector(wide));
  return NdArray::view(backing.data(), backing.element(), {n}, backing.device(), {int64_t(2 * sizeof(T))});
}

}  // namespace

TEST_CASE("a Double's gradient is the sum of its threads' adjoints, added to the destination") {
  for (int n : kSizes) {
    for (bool dense : {true, false}) {
      CAPTURE(n);
      CAPTURE(dense);
      const double k = 0.75;
      std::vector<NdArray> keep;
      NdArray X = laid_out<double>(n, x_of, dense, keep), gout = laid_out<double>(n, w_of, dense, keep);
      CHECK(X.is_contiguous() == dense);
      NdArray out = zeros<double>({n}), gx = zeros<double>({n});
      double dk = 1.5;  // gradients accumulate
      launch_adjoint(vg::poly_d, n, {X, k, out}, {gx, &dk, gout});
      CHECK(dk == 1.5 + poly_sum(n, k));
      std::vector<double> g = gx.to_vector<double>();
      for (int i = 0; i < n; i += 97) CHECK(g[size_t(i)] == 2 * k * x_of(i) * w_of(i));
    }
  }
}

TEST_CASE("a Float's gradient into a one-element array, every size, dense and strided") {
  for (int n : kSizes) {
    for (bool dense : {true, false}) {
      CAPTURE(n);
      CAPTURE(dense);
      std::vector<NdArray> keep;
      NdArray X = laid_out<float>(n, x_of, dense, keep), gout = laid_out<float>(n, w_of, dense, keep);
      CHECK(X.is_contiguous() == dense);
      NdArray dk = zeros<float>({1});
      launch_adjoint(vg::poly_f, n, {X, 0.75f, zeros<float>({n})}, {{}, dk, gout});
      // Every partial sum is a multiple of 1/32 below 2^19: exact in float32.
      CHECK(double(dk.to_vector<float>()[0]) == poly_sum(n, 0.75));
    }
  }
}

TEST_CASE("vector and matrix values: each component's gradient sums over the threads") {
  for (int n : {37, 1003}) {
    CAPTURE(n);
    std::vector<double> r = random_values(6 * n + 12, -1, 1, unsigned(n));
    std::vector<vec3d> v(static_cast<size_t>(n)), w(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) v[size_t(i)][c] = r[size_t(6 * i + c)], w[size_t(i)][c] = r[size_t(6 * i + 3 + c)];
    vec3d d{{r[size_t(6 * n)], r[size_t(6 * n + 1)], r[size_t(6 * n + 2)]}};
    mat33d m{};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) m[a][b] = r[size_t(6 * n + 3 + 3 * a + b)];
    // dL/dd = sum_i m^T w_i, dL/dm = sum_i w_i (v_i + d)^T.
    vec3d want_d{};
    mat33d want_m{};
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          want_d[b] += m[a][b] * w[size_t(i)][a];
          want_m[a][b] += w[size_t(i)][a] * (v[size_t(i)][b] + d[b]);
        }
    vec3d dd{};
    NdArray dm = zeros<mat33d>({1});
    launch_adjoint(vg::affine_d, n, {from_vector(v), d, m, zeros<vec3d>({n})}, {{}, &dd, dm, from_vector(w)});
    mat33d got_m = dm.to_vector<mat33d>()[0];
    for (int a = 0; a < 3; ++a) {
      CHECK(dd[a] == doctest::Approx(want_d[a]).epsilon(1e-12));
      for (int b = 0; b < 3; ++b) CHECK(got_m[a][b] == doctest::Approx(want_m[a][b]).epsilon(1e-12));
    }

    // float32: the same sums, to float32's precision.
    std::vector<vec3f> vf(static_cast<size_t>(n)), wf(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) vf[size_t(i)][c] = float(v[size_t(i)][c]), wf[size_t(i)][c] = float(w[size_t(i)][c]);
    vec3f df{{float(d[0]), float(d[1]), float(d[2])}};
    mat33f mf{};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) mf[a][b] = float(m[a][b]);
    NdArray ddf = zeros<vec3f>({1});
    mat33f dmf{};
    launch_adjoint(vg::affine_f, n, {from_vector(vf), df, mf, zeros<vec3f>({n})}, {{}, ddf, &dmf, from_vector(wf)});
    vec3f got_df = ddf.to_vector<vec3f>()[0];
    for (int a = 0; a < 3; ++a) {
      CHECK(got_df[a] == doctest::Approx(want_d[a]).epsilon(1e-4));
      for (int b = 0; b < 3; ++b) CHECK(dmf[a][b] == doctest::Approx(want_m[a][b]).epsilon(1e-4));
    }
  }
}

TEST_CASE("check_gradients checks value parameters: loops, branches and device functions") {
  for (int n : {37, 1003}) {
    CAPTURE(n);
    NdArray X = from_vector(random_values(n, -1.5, 1.5, 7));
    GradCheckReport r = check_gradients(vg::looped, n, {X, 0.9, 0.3, 2, zeros<double>({n})});
    expect_pass(r);
    REQUIRE(r.params.size() == 3);  // x, c and b; not the integer steps
    CHECK(r.params[1].name == "c");
    CHECK(r.params[2].name == "b");
    CHECK(r.params[1].checked == 1);
    GradCheckReport f = check_gradients(vg::through_function, n, {X, 1.3, zeros<double>({n})});
    expect_pass(f);
    CHECK(f.params.size() == 2);
  }
  // Named: just the value.
  GradCheckOptions only_k;
  only_k.inputs = {"d", "m"};
  NdArray V = from_vector(std::vector<vec3d>(50, vec3d{{0.5, -0.25, 1.0}}));
  GradCheckReport v = check_gradients(vg::affine_d, 50, {V, vec3d{{0.1, 0.2, 0.3}}, mat33d{}, zeros<vec3d>({50})}, only_k);
  expect_pass(v);
  REQUIRE(v.params.size() == 2);
  CHECK(v.params[0].checked == 3);
  CHECK(v.params[1].checked == 9);
}

TEST_CASE("a float16 value sums in float32 and is rounded once into its float16 destination") {
  const int n = 1003;
  std::vector<float> xv(static_cast<size_t>(n));
  double want = 0;
  for (int i = 0; i < n; ++i) {
    xv[size_t(i)] = 0.1f * float(i % 7) + 0.01f;
    want += double(xv[size_t(i)]);
  }
  half dk{};
  launch_adjoint(vg::poly_h, n, {from_vector(xv), half(0.5f), zeros<float>({n})},
                 {{}, &dk, from_vector(std::vector<float>(size_t(n), 1.0f))});
  // ~560: float16's spacing there is 0.5. Sums kept in float16 would drift by whole units.
  CHECK(std::fabs(double(float(dk)) - want) <= 0.25);
}

TEST_CASE("a struct value's gradient: its floating fields, field by field") {
  const int n = 37;
  std::vector<vec3d> v(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = vec3d{{0.5 * i, -1.0, 0.25}}, w[size_t(i)] = vec3d{{1.0, 0.5 * (i % 3), -2.0}};
  vg::Coeffs c{2.0, vec3d{{1.0, 2.0, 3.0}}, 3};
  vg::Coeffs dc{};
  dc.tag = 99;  // not floating: left as it is
  launch_adjoint(vg::structured, n, {from_vector(v), c, zeros<vec3d>({n})}, {{}, &dc, from_vector(w)});
  double da = 0;
  vec3d db{};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) da += w[size_t(i)][k] * v[size_t(i)][k], db[k] += w[size_t(i)][k] * 3.0;
  CHECK(dc.a == doctest::Approx(da).epsilon(1e-12));
  for (int k = 0; k < 3; ++k) CHECK(dc.b[k] == doctest::Approx(db[k]).epsilon(1e-12));
  CHECK(dc.tag == 99);
}

TEST_CASE("a struct's float16 fields: each field's gradient lands in its own field") {
  const int n = 37;
  std::vector<float> x(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  double sx = 0, sw = 0;
  for (int i = 0; i < n; ++i) {
    x[size_t(i)] = 0.25f * float(i % 4), w[size_t(i)] = 0.5f * float(i % 3);
    sx += double(w[size_t(i)]) * x[size_t(i)], sw += w[size_t(i)];
  }
  vg::HalfCoeffs c{half(1.0f), 3.0f, vec3h{{half(1.0f), half(2.0f), half(3.0f)}}};
  vg::HalfCoeffs dc{};
  launch_adjoint(vg::structured_h, n, {from_vector(x), c, zeros<float>({n})}, {{}, &dc, from_vector(w)});
  CHECK(float(dc.a) == doctest::Approx(sx));
  CHECK(dc.f == doctest::Approx(2 * sw));
  CHECK(float(dc.b[0]) == 0.0f);
  CHECK(float(dc.b[1]) == doctest::Approx(sx));
  CHECK(float(dc.b[2]) == 0.0f);
}

TEST_CASE("the sum is the same however the launch is split: repeated launches agree bit for bit") {
  const int n = 100000;
  NdArray X = from_vector(random_values(n, -1, 1, 11)), W = from_vector(random_values(n, -1, 1, 12));
  double first = 0;
  for (int run = 0; run < 4; ++run) {  // the pool's chunks follow the kernel's measured cost, which moves
    double dk = 0;
    launch_adjoint(vg::poly_d, n, {X, 0.3, zeros<double>({n})}, {{}, &dk, W});
    if (run == 0) first = dk;
    CHECK(std::memcmp(&dk, &first, sizeof dk) == 0);
  }
}

TEST_CASE("concurrent launches from several threads each sum into their own destination") {
  const int n = 5003;
  NdArray X = from_vector(values<double>(n, x_of)), W = from_vector(values<double>(n, w_of));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) {
        const double k = 0.25 * (t + 1);
        double dk = 0;
        launch_adjoint(vg::poly_d, n, {X, k, zeros<double>({n})}, {{}, &dk, W});
        if (dk != poly_sum(n, k)) ++wrong;
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(wrong.load() == 0);
}

namespace {
std::string adjoint_error(const std::vector<LaunchArg>& args, const std::vector<LaunchArg>& adj) {
  try {
    launch_adjoint(vg::looped, 4, args, adj);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("value adjoint slots: none, zero, and clear errors for what cannot receive a gradient") {
  NdArray X = from_vector(std::vector<double>{0.5, -0.5, 1.0, 2.0}), out = zeros<double>({4});
  NdArray gout = from_vector(std::vector<double>(4, 1.0));
  std::vector<LaunchArg> args{X, 0.9, 0.3, 2, out};
  // {} and a zero value both mean "not asked for" (a zero was how it was spelled before).
  CHECK(adjoint_error(args, {zeros<double>({4}), {}, 0.0, 0, gout}) == "");
  const std::string where = "launch of kernel 'vg::looped': adjoint of argument ";
  CHECK(adjoint_error(args, {{}, 1.0, {}, {}, gout}) ==
        where + "2 ('c') is a float64 value: a value's adjoint is not passed in but written out; expects a "
                "one-element array of float64 or a pointer to one (where the gradient of 'c' is added), or {} for none");
  CHECK(adjoint_error(args, {{}, zeros<double>({2}), {}, {}, gout}) ==
        where + "2 ('c') expects a one-element array of float64 or a pointer to one (where the gradient of 'c' is "
                "added), or {} for none, got a 1-D array of float64 of 2 elements");
  CHECK(adjoint_error(args, {{}, zeros<float>({1}), {}, {}, gout}).find("got a 1-D array of float32 of 1 elements") !=
        std::string::npos);
  float wrong_type = 0;
  CHECK(adjoint_error(args, {{}, &wrong_type, {}, {}, gout}) ==
        where + "2 ('c') is a pointer to float32; expects a one-element array of float64 or a pointer to one (where "
                "the gradient of 'c' is added), or {} for none");
  int32_t steps_grad = 0;
  CHECK(adjoint_error(args, {{}, {}, {}, &steps_grad, gout}) ==
        where + "4 ('steps') is a pointer, but 'steps' (int32) has no adjoint (only floating values carry one); pass {}");
  double dc = 0;
  try {
    launch(vg::looped, 4, X, &dc, 0.3, 2, out);
    FAIL("a pointer as a forward value was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "launch of kernel 'vg::looped': argument 2 ('c') expects a float64 value, got a pointer to float64");
  }
}
