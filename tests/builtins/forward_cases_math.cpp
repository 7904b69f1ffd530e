// Forward-value cases: operators, scalar math, vectors, matrices and utility builtins.
#include <algorithm>
#include <limits>

#include "forward_cases.hpp"

namespace kjit::test {

using ir::Scalar;
using ir::Type;
using namespace ref;

namespace {
const std::vector<Scalar> kInts = {Scalar::I32, Scalar::I64, Scalar::U32, Scalar::I8, Scalar::U16};
const std::vector<Scalar> kSigned = {Scalar::I32, Scalar::I64, Scalar::I16};
const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

/// A case of a function of scalars (each lane of every argument maps to one output lane).
FwdCase unary(const char* name, ArgSpec x, std::function<double(double)> f, double tol32 = 2e-6) {
  FwdCase c{name, {x}, [f](const Inputs& in) { Lanes o; for (double v : in[0]) o.push_back(f(v)); return o; }, nullptr, tol32};
  return c;
}
FwdCase binary(const char* name, ArgSpec x, ArgSpec y, std::function<double(double, double)> f, double tol32 = 2e-6) {
  return FwdCase{name, {x, y}, [f](const Inputs& in) {
                   Lanes o;
                   for (size_t k = 0; k < std::max(in[0].size(), in[1].size()); ++k)
                     o.push_back(f(in[0][std::min(k, in[0].size() - 1)], in[1][std::min(k, in[1].size() - 1)]));
                   return o;
                 }, nullptr, tol32};
}
FwdCase ints(FwdCase c, std::vector<Scalar> v = kInts) { c.variants = std::move(v); return c; }

/// The inverse error function in float64: Newton steps on std::erf from a rough start.
double erfinv_ref(double y) {
  if (y <= -1) return y == -1 ? -kInf : kNan;
  if (y >= 1) return y == 1 ? kInf : kNan;
  double x = 0;
  for (int k = 0; k < 100; ++k) x -= (std::erf(x) - y) / (2 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}
double erfcinv_ref(double y) {
  // Far in the tail 1 - y rounds to 1: start from the asymptote erfc(x) ~ exp(-x^2) / (x sqrt(pi)).
  double x = erfinv_ref(1 - y);
  if (y > 0 && y < 1e-8) {
    x = std::sqrt(-std::log(y));
    for (int k = 0; k < 50; ++k) x = std::sqrt(-std::log(y * x * std::sqrt(M_PI) * (1 - 0.5 / (x * x) + 0.75 / (x * x * x * x))));
  }
  for (int k = 0; k < 10; ++k) x += (std::erfc(x) - y) / (2 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}
double norm(const Lanes& v) { return std::sqrt(dot(v, v)); }
}  // namespace

std::vector<FwdCase> math_cases() {
  std::vector<FwdCase> c;
  // Operators on floats, vectors, matrices, quaternions, transforms.
  c.push_back(binary("add", S(-2, 2), S(-2, 2), [](double a, double b) { return a + b; }));
  c.push_back(binary("add", V(3), V(3), [](double a, double b) { return a + b; }));
  c.push_back(binary("add", M(2, 3), M(2, 3), [](double a, double b) { return a + b; }));
  c.push_back(binary("add", Qany(), Qany(), [](double a, double b) { return a + b; }));
  c.push_back(binary("add", T(), T(), [](double a, double b) { return a + b; }));
  c.push_back(ints(binary("add", S(-100, 100), S(-100, 100), [](double a, double b) { return a + b; }), {Scalar::I32, Scalar::I64}));
  c.push_back(binary("sub", S(-2, 2), S(-2, 2), [](double a, double b) { return a - b; }));
  c.push_back(binary("sub", V(4), V(4), [](double a, double b) { return a - b; }));
  c.push_back(binary("mul", S(-2, 2), S(-2, 2), [](double a, double b) { return a * b; }));
  c.push_back(ints(binary("mul", S(-100, 100), S(-100, 100), [](double a, double b) { return a * b; }), {Scalar::I32, Scalar::I64}));
  c.push_back(binary("mul", V(3), S(-2, 2), [](double a, double b) { return a * b; }));
  c.push_back(binary("mul", S(-2, 2), V(3), [](double a, double b) { return a * b; }));
  c.push_back(binary("mul", M(3, 3), S(-2, 2), [](double a, double b) { return a * b; }));
  c.push_back({"mul", {M(2, 3), V(3)}, [](const Inputs& in) { return matmul(in[0], 2, 3, in[1], 1); }});
  c.push_back({"mul", {V(2), M(2, 3)}, [](const Inputs& in) { return matmul(in[0], 1, 2, in[1], 3); }});
  c.push_back({"mul", {M(2, 3), M(3, 4)}, [](const Inputs& in) { return matmul(in[0], 2, 3, in[1], 4); }});
  c.push_back({"mul", {Qany(), Qany()}, [](const Inputs& in) { return qmul(in[0], in[1]); }});
  c.push_back({"mul", {T(), T()}, [](const Inputs& in) {
                 Lanes p = add(qrotate(slice(in[0], 3, 4), slice(in[1], 0, 3)), slice(in[0], 0, 3));
                 return concat(p, qmul(slice(in[0], 3, 4), slice(in[1], 3, 4)));
               }});
  c.push_back(binary("div", S(-2, 2), S(0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back(binary("div", V(3), S(0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back(binary("div", S(-2, 2), V(3, 0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back(binary("div", Qany(), S(0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back(ints(binary("div", S(-100, 100), Sfix({7, -3, 5, 1}), [](double a, double b) { return std::trunc(a / b); }), kSigned));
  c.push_back(binary("div_approx", S(-2, 2), S(0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back(binary("div_approx", V(3), S(0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back(binary("mod", Sfix({2.3, -2.3, 5.5, -7.25}), Sfix({0.9, 0.9, -1.5, 2.0}), [](double a, double b) { return std::fmod(a, b); }));
  c.push_back(ints(binary("mod", Sfix({7, -7, 13, 100}), Sfix({3, 3, -5, 7}), [](double a, double b) { return std::fmod(a, b); }), kSigned));
  c.push_back(unary("neg", V(3), [](double a) { return -a; }));
  c.push_back(unary("neg", S(-2, 2), [](double a) { return -a; }));
  c.push_back(unary("neg", M(2, 2), [](double a) { return -a; }));
  c.push_back(unary("pos", S(-2, 2), [](double a) { return a; }));
  c.push_back(binary("floordiv", Sfix({7, -7, 6.5, -0.5}), Sfix({2, 2, -2, 3}), [](double a, double b) { return std::floor(a / b); }));
  c.push_back(ints(binary("floordiv", Sfix({7, -7, 6, -1}), Sfix({2, 2, -4, 3}), [](double a, double b) { return std::floor(a / b); }), kSigned));
  auto bit = [](const char* name, std::function<long long(long long, long long)> f) {
    return ints(binary(name, Sfix({12, 10, 255, 6}), Sfix({10, 3, 15, 1}), [f](double a, double b) { return double(f((long long)a, (long long)b)); }),
                {Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U8});
  };
  c.push_back(bit("bit_and", [](long long a, long long b) { return a & b; }));
  c.push_back(bit("bit_or", [](long long a, long long b) { return a | b; }));
  c.push_back(bit("bit_xor", [](long long a, long long b) { return a ^ b; }));
  c.push_back(bit("lshift", [](long long a, long long b) { return (a << b) & 0xff; }));
  c.back().variants = {Scalar::U8};
  c.push_back(bit("lshift", [](long long a, long long b) { return a << b; }));
  c.back().variants = {Scalar::I32, Scalar::I64};
  c.push_back(bit("rshift", [](long long a, long long b) { return a >> b; }));
  c.push_back(ints(unary("invert", Sfix({0, 5, -9, 100}), [](double a) { return double(~(long long)a); }), kSigned));
  c.push_back(ints(unary("unot", Sfix({0, 5, -9, 1}), [](double a) { return a == 0 ? 1.0 : 0.0; }), {Scalar::I32, Scalar::Bool}));
  c.push_back(ints(binary("logical_and", Bools(), Fixed(Type::scalar_of(Scalar::Bool), {1, 1, 0}), [](double a, double b) { return double(a && b); }), {Scalar::Bool}));
  c.push_back(ints(binary("logical_or", Bools(), Fixed(Type::scalar_of(Scalar::Bool), {0, 0, 1}), [](double a, double b) { return double(a || b); }), {Scalar::Bool}));
  const std::vector<double> xs{1, 2, 3, -1}, ys{1, 1, 4, -2};
  c.push_back(binary("lt", Sfix(xs), Sfix(ys), [](double a, double b) { return double(a < b); }));
  c.push_back(binary("le", Sfix(xs), Sfix(ys), [](double a, double b) { return double(a <= b); }));
  c.push_back(binary("gt", Sfix(xs), Sfix(ys), [](double a, double b) { return double(a > b); }));
  c.push_back(binary("ge", Sfix(xs), Sfix(ys), [](double a, double b) { return double(a >= b); }));
  c.push_back(binary("eq", Sfix(xs), Sfix(ys), [](double a, double b) { return double(a == b); }));
  c.push_back(binary("ne", Sfix(xs), Sfix(ys), [](double a, double b) { return double(a != b); }));
  c.push_back(ints(binary("lt", Sfix(xs), Sfix(ys), [](double a, double b) { return double(a < b); }), kSigned));
  c.push_back({"eq", {Fixed(Type::vector(3, Scalar::F64), {1, 2}), Fixed(Type::vector(3, Scalar::F64), {1, 1, 2, 2})},
               [](const Inputs& in) { return Lanes{double(in[0] == in[1])}; }, nullptr, 0, 0, {Scalar::F64}});

  // Scalar math.
  c.push_back(unary("sin", S(-4, 4), [](double x) { return std::sin(x); }));
  c.push_back(unary("cos", S(-4, 4), [](double x) { return std::cos(x); }));
  c.push_back(unary("tan", S(-1.4, 1.4), [](double x) { return std::tan(x); }, 1e-5));
  c.push_back(unary("exp", S(-5, 5), [](double x) { return std::exp(x); }));
  c.push_back(unary("log", S(0.01, 10), [](double x) { return std::log(x); }));
  c.push_back(unary("sqrt", Sfix({0, 0.25, 2, 1e6}), [](double x) { return std::sqrt(x); }));
  c.push_back(binary("pow", S(0.1, 3), S(-3, 3), [](double x, double y) { return std::pow(x, y); }, 1e-5));
  c.push_back(unary("abs", Sfix({-1.5, 0, 2, -0.0}), [](double x) { return std::fabs(x); }));
  c.push_back(unary("abs", V(3), [](double x) { return std::fabs(x); }));
  c.push_back(ints(unary("abs", Sfix({-5, 0, 7}), [](double x) { return std::fabs(x); }), kSigned));
  c.push_back(binary("min", Sfix(xs), Sfix(ys), [](double a, double b) { return std::min(a, b); }));
  c.push_back(binary("min", V(3), V(3), [](double a, double b) { return std::min(a, b); }));
  c.push_back({"min", {V(4)}, [](const Inputs& in) { return Lanes{*std::min_element(in[0].begin(), in[0].end())}; }});
  c.push_back(binary("max", Sfix(xs), Sfix(ys), [](double a, double b) { return std::max(a, b); }));
  c.push_back(ints(binary("max", Sfix(xs), Sfix(ys), [](double a, double b) { return std::max(a, b); }), kSigned));
  c.push_back({"max", {V(4)}, [](const Inputs& in) { return Lanes{*std::max_element(in[0].begin(), in[0].end())}; }});
  c.push_back(unary("floor", Sfix({1.5, -1.5, 2, -0.25}), [](double x) { return std::floor(x); }));
  c.push_back(unary("ceil", Sfix({1.5, -1.5, 2, -0.25}), [](double x) { return std::ceil(x); }));
  c.push_back({"clamp", {Sfix({-2, 0.3, 2}), Sfix({-1}), Sfix({1})}, [](const Inputs& in) { return Lanes{std::min(std::max(in[0][0], in[1][0]), in[2][0])}; }});
  c.push_back(ints({"clamp", {Sfix({-20, 3, 20}), Sfix({-10}), Sfix({10})}, [](const Inputs& in) { return Lanes{std::min(std::max(in[0][0], in[1][0]), in[2][0])}; }}, kSigned));
  c.push_back({"where", {Bools(), V(3), V(3)}, [](const Inputs& in) { return in[0][0] ? in[1] : in[2]; }});
  c.push_back({"where", {Bools(), S(-1, 1), S(-1, 1)}, [](const Inputs& in) { return in[0][0] ? in[1] : in[2]; }});
  c.push_back({"select", {Bools(), V(2), V(2)}, [](const Inputs& in) { return in[0][0] ? in[2] : in[1]; }});
  c.push_back({"select", {Bools(), Q(), Q()}, [](const Inputs& in) { return in[0][0] ? in[2] : in[1]; }});
  c.push_back(unary("acos", S(-0.99, 0.99), [](double x) { return std::acos(x); }));
  c.push_back(unary("asin", S(-0.99, 0.99), [](double x) { return std::asin(x); }));
  c.push_back(unary("atan", S(-10, 10), [](double x) { return std::atan(x); }));
  c.push_back(binary("atan2", Sfix({1, -1, 0, 2, -3}), Sfix({1, 1, -1, -2, 0}), [](double y, double x) { return std::atan2(y, x); }));
  c.push_back(unary("cbrt", Sfix({-8, 0, 0.001, 27, 5}), [](double x) { return std::cbrt(x); }));
  c.push_back(binary("copysign", Sfix({1.5, -2, 3, -4}), Sfix({-1, 1, 0, -0.0}), [](double x, double y) { return std::copysign(x, y); }));
  c.push_back(unary("cosh", S(-3, 3), [](double x) { return std::cosh(x); }));
  c.push_back(unary("sinh", S(-3, 3), [](double x) { return std::sinh(x); }));
  c.push_back(unary("tanh", S(-3, 3), [](double x) { return std::tanh(x); }));
  c.push_back(unary("degrees", S(-4, 4), [](double x) { return x * 180 / M_PI; }));
  c.push_back(unary("radians", S(-400, 400), [](double x) { return x * M_PI / 180; }));
  c.push_back(unary("erf", S(-3, 3), [](double x) { return std::erf(x); }));
  c.push_back(unary("erfc", S(-3, 3), [](double x) { return std::erfc(x); }));
  c.push_back(unary("erfinv", Sfix({-0.999, -0.5, 0, 0.3, 0.9, 0.99999, 1, -1}), erfinv_ref, 2e-5));
  c.push_back(unary("erfcinv", Sfix({1e-6, 0.01, 0.5, 1, 1.5, 1.99, 0, 2, 1e-12, 1e-30}), erfcinv_ref, 2e-5));
  c.push_back(unary("log2", S(0.01, 100), [](double x) { return std::log2(x); }));
  c.push_back(unary("log10", S(0.01, 100), [](double x) { return std::log10(x); }));
  c.push_back(unary("frac", Sfix({1.25, -1.25, 3, 0.5}), [](double x) { return x - std::trunc(x); }));
  c.push_back(unary("trunc", Sfix({1.75, -1.75, 3, -0.5}), [](double x) { return std::trunc(x); }));
  c.push_back(unary("round", Sfix({2.5, -2.5, 1.4, -0.6}), [](double x) { return std::round(x); }));
  c.push_back(unary("rint", Sfix({2.5, -2.5, 1.5, 0.5}), [](double x) { return std::nearbyint(x); }));
  c.push_back(unary("isfinite", Sfix({1, kNan, kInf, -kInf}), [](double x) { return double(std::isfinite(x)); }));
  c.push_back(unary("isinf", Sfix({1, kNan, kInf, -kInf}), [](double x) { return double(std::isinf(x)); }));
  c.push_back(unary("isnan", Sfix({1, kNan, kInf, -kInf}), [](double x) { return double(std::isnan(x)); }));
  c.push_back(unary("sign", Sfix({-2, 0, 3, -0.5}), [](double x) { return x < 0 ? -1.0 : 1.0; }));
  c.push_back(unary("sign", V(3), [](double x) { return x < 0 ? -1.0 : 1.0; }));
  c.push_back(ints(unary("sign", Sfix({-2, 0, 3}), [](double x) { return x < 0 ? -1.0 : 1.0; }), kSigned));
  c.push_back(unary("step", Sfix({-2, 0, 3, -0.5}), [](double x) { return x < 0 ? 1.0 : 0.0; }));
  c.push_back(unary("nonzero", Sfix({-2, 0, 3, 0.5}), [](double x) { return x != 0 ? 1.0 : 0.0; }));
  c.push_back(ints(unary("nonzero", Sfix({-2, 0, 3}), [](double x) { return x != 0 ? 1.0 : 0.0; }), kSigned));
  // bit_count counts the bits of x's own width: -1 has as many as its type. The oracle clears
  // the lowest set bit until none is left (the prelude uses the compilers' popcount).
  auto set_bits = [](double x, int width) {
    unsigned long long u = (unsigned long long)(long long)x;
    if (width < 64) u &= (1ull << width) - 1;
    double n = 0;
    for (; u; u &= u - 1) ++n;
    return n;
  };
  c.push_back(ints(unary("bit_count", Sfix({0, 1, 7, 100, 127}), [=](double x) { return set_bits(x, 64); }),
                   {Scalar::I8, Scalar::U8, Scalar::I16, Scalar::U16, Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64}));
  for (auto [type, width] : {std::pair{Scalar::I8, 8}, {Scalar::I16, 16}, {Scalar::I32, 32}, {Scalar::I64, 64}})
    c.push_back(ints(unary("bit_count", Sfix({-1, -2, -128, 5}), [=, w = width](double x) { return set_bits(x, w); }), {type}));
  c.push_back(ints(unary("bit_count", Sfix({4294967295.0, 2147483648.0, 65535}), [=](double x) { return set_bits(x, 32); }),
                   {Scalar::U32}));

  // Vectors.
  c.push_back({"dot", {V(3), V(3)}, [](const Inputs& in) { return Lanes{dot(in[0], in[1])}; }});
  c.push_back({"dot", {Qany(), Qany()}, [](const Inputs& in) { return Lanes{dot(in[0], in[1])}; }});
  c.push_back(ints({"dot", {Fixed(Type::vector(3, Scalar::I32), {1, 2, 3}), Fixed(Type::vector(3, Scalar::I32), {4, -1})},
                    [](const Inputs& in) { return Lanes{dot(in[0], in[1])}; }}, {Scalar::I32}));
  c.push_back({"cross", {V(3), V(3)}, [](const Inputs& in) { return cross(in[0], in[1]); }});
  c.push_back({"length", {V(4)}, [](const Inputs& in) { return Lanes{norm(in[0])}; }});
  c.push_back({"length", {Qany()}, [](const Inputs& in) { return Lanes{norm(in[0])}; }});
  c.push_back({"length_sq", {V(3)}, [](const Inputs& in) { return Lanes{dot(in[0], in[0])}; }});
  c.push_back({"length_sq", {Qany()}, [](const Inputs& in) { return Lanes{dot(in[0], in[0])}; }});
  c.push_back({"normalize", {V(3)}, [](const Inputs& in) { return scale(in[0], 1 / norm(in[0])); }});
  c.push_back({"normalize", {Fixed(Type::vector(2, Scalar::F64), {0})}, [](const Inputs&) { return Lanes{0, 0}; }, nullptr, 0, 0, {Scalar::F64}});
  c.push_back({"normalize", {Qany()}, [](const Inputs& in) { return scale(in[0], 1 / norm(in[0])); }});
  c.push_back({"norm_l1", {V(3)}, [](const Inputs& in) { double s = 0; for (double v : in[0]) s += std::fabs(v); return Lanes{s}; }});
  c.push_back({"norm_l2", {V(3)}, [](const Inputs& in) { return Lanes{norm(in[0])}; }});
  auto huber = [](const Lanes& v, double d) { double l = norm(v); return l <= d ? 0.5 * l * l : d * (l - 0.5 * d); };
  c.push_back({"norm_huber", {V(3), Sfix({0.5, 2, 1})}, [huber](const Inputs& in) { return Lanes{huber(in[0], in[1][0])}; }});
  auto pseudo = [](const Lanes& v, double d) { return d * std::sqrt(1 + dot(v, v) / (d * d)); };
  c.push_back({"norm_pseudo_huber", {V(3), Sfix({0.5, 2, 1})}, [pseudo](const Inputs& in) { return Lanes{pseudo(in[0], in[1][0])}; }});
  c.push_back({"smooth_normalize", {V(3), Sfix({0.5, 2, 1})}, [pseudo](const Inputs& in) { return scale(in[0], 1 / pseudo(in[0], in[1][0])); }});
  c.push_back(binary("cw_mul", V(3), V(3), [](double a, double b) { return a * b; }));
  c.push_back(binary("cw_mul", M(2, 2), M(2, 2), [](double a, double b) { return a * b; }));
  c.push_back(binary("cw_div", V(4), V(4, 0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back(binary("cw_div", M(3, 2), M(3, 2, 0.5, 2), [](double a, double b) { return a / b; }));
  c.push_back({"outer", {V(3), V(2)}, [](const Inputs& in) { return matmul(in[0], 3, 1, in[1], 2); }});
  c.push_back({"argmin", {V(4)}, [](const Inputs& in) { return Lanes{double(std::min_element(in[0].begin(), in[0].end()) - in[0].begin())}; }});
  c.push_back({"argmax", {V(4)}, [](const Inputs& in) { return Lanes{double(std::max_element(in[0].begin(), in[0].end()) - in[0].begin())}; }});
  c.push_back(ints({"argmax", {Fixed(Type::vector(3, Scalar::I32), {1, 5, 2})}, [](const Inputs&) { return Lanes{0}; }}, {Scalar::I32}));

  // Matrices.
  c.push_back({"transpose", {M(2, 3)}, [](const Inputs& in) { return transpose(in[0], 2, 3); }});
  c.push_back({"trace", {M(3, 3)}, [](const Inputs& in) { return Lanes{in[0][0] + in[0][4] + in[0][8]}; }});
  for (int n = 2; n <= 4; ++n) {
    c.push_back({"determinant", {M(n, n)}, [n](const Inputs& in) { return Lanes{det(in[0], n)}; }, nullptr, 1e-5});
    c.push_back({"inverse", {M(n, n, -1, 1)}, [n](const Inputs& in) { return inverse(in[0], n); }, nullptr, 2e-3, 1e-8});
    c.push_back({"inverse_approx", {M(n, n, -1, 1)}, [n](const Inputs& in) { return inverse(in[0], n); }, nullptr, 2e-3, 1e-8});
  }
  c.push_back({"inverse", {Fixed(Type::matrix(2, 2, Scalar::F64), {1})}, [](const Inputs&) { return Lanes{0, 0, 0, 0}; }, nullptr, 0, 0, {Scalar::F64}});
  c.push_back({"diag", {V(3)}, [](const Inputs& in) { Lanes m(9, 0.0); for (int i = 0; i < 3; ++i) m[size_t(4 * i)] = in[0][size_t(i)]; return m; }});
  c.push_back({"get_diag", {M(3, 3)}, [](const Inputs& in) { return Lanes{in[0][0], in[0][4], in[0][8]}; }});
  c.push_back({"ddot", {M(2, 3), M(2, 3)}, [](const Inputs& in) { return Lanes{dot(in[0], in[1])}; }});
  c.push_back({"skew", {V(3)}, [](const Inputs& in) {
                 const Lanes& a = in[0];
                 return Lanes{0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
               }});
  c.push_back({"matrix_from_cols", {V(3), V(3)}, [](const Inputs& in) { return transpose(concat(in[0], in[1]), 2, 3); }});
  c.push_back({"matrix_from_cols", {V(2), V(2), V(2), V(2)}, [](const Inputs& in) { return transpose(concat(concat(in[0], in[1]), concat(in[2], in[3])), 4, 2); }});
  c.push_back({"matrix_from_rows", {V(4), V(4), V(4)}, [](const Inputs& in) { return concat(concat(in[0], in[1]), in[2]); }});
  c.push_back({"matrix_from_rows", {V(3), V(3)}, [](const Inputs& in) { return concat(in[0], in[1]); }});
  // Decompositions: A rebuilt from the factors, orthogonal factors, ordered values.
  c.push_back({"svd3", {M(3, 3)}, nullptr, [](const Inputs& in, const Lanes& r) {
                 Lanes U = slice(r, 0, 9), s = slice(r, 9, 3), Vm = slice(r, 12, 9);
                 Lanes S{s[0], 0, 0, 0, s[1], 0, 0, 0, s[2]};
                 double e = diff(matmul(matmul(U, 3, 3, S, 3), 3, 3, transpose(Vm, 3, 3), 3), in[0]);
                 e = std::max({e, orthogonality(U, 3), orthogonality(Vm, 3)});
                 if (!(s[0] >= s[1] && s[1] >= s[2] && s[2] >= 0)) e = 1;
                 return e;
               }, 1e-5, 1e-10});
  c.push_back({"svd2", {M(2, 2)}, nullptr, [](const Inputs& in, const Lanes& r) {
                 Lanes U = slice(r, 0, 4), s = slice(r, 4, 2), Vm = slice(r, 6, 4);
                 double e = diff(matmul(matmul(U, 2, 2, Lanes{s[0], 0, 0, s[1]}, 2), 2, 2, transpose(Vm, 2, 2), 2), in[0]);
                 e = std::max({e, orthogonality(U, 2), orthogonality(Vm, 2)});
                 if (!(s[0] >= s[1] && s[1] >= 0)) e = 1;
                 return e;
               }, 1e-5, 1e-10});
  c.push_back({"qr3", {M(3, 3)}, nullptr, [](const Inputs& in, const Lanes& r) {
                 Lanes Qm = slice(r, 0, 9), R = slice(r, 9, 9);
                 double e = std::max(diff(matmul(Qm, 3, 3, R, 3), in[0]), orthogonality(Qm, 3));
                 if (R[3] != 0 || R[6] != 0 || R[7] != 0 || R[0] < 0 || R[4] < 0 || R[8] < 0) e = 1;
                 return e;
               }, 1e-5, 1e-10});
  c.push_back({"eig3", {Sym3()}, nullptr, [](const Inputs& in, const Lanes& r) {
                 Lanes Qm = slice(r, 0, 9), d = slice(r, 9, 3);
                 Lanes D{d[0], 0, 0, 0, d[1], 0, 0, 0, d[2]};
                 double e = std::max(diff(matmul(matmul(Qm, 3, 3, D, 3), 3, 3, transpose(Qm, 3, 3), 3), in[0]), orthogonality(Qm, 3));
                 if (!(d[0] <= d[1] && d[1] <= d[2])) e = 1;
                 return e;
               }, 1e-5, 1e-10});

  // Utility.
  c.push_back({"lerp", {S(-2, 2), S(-2, 2), S(0, 1)}, [](const Inputs& in) { return Lanes{in[0][0] + (in[1][0] - in[0][0]) * in[2][0]}; }});
  c.push_back({"lerp", {V(3), V(3), S(0, 1)}, [](const Inputs& in) { return add(in[0], scale(sub(in[1], in[0]), in[2][0])); }});
  c.push_back({"lerp", {Q(), Q(), S(0, 1)}, [](const Inputs& in) { return add(in[0], scale(sub(in[1], in[0]), in[2][0])); }});
  c.push_back({"lerp", {M(2, 2), M(2, 2), S(0, 1)}, [](const Inputs& in) { return add(in[0], scale(sub(in[1], in[0]), in[2][0])); }});
  c.push_back({"fma", {S(-2, 2), S(-2, 2), S(-2, 2)}, [](const Inputs& in) { return Lanes{std::fma(in[0][0], in[1][0], in[2][0])}; }});
  c.push_back({"fma", {V(3), S(-2, 2), V(3)}, [](const Inputs& in) { return add(scale(in[0], in[1][0]), in[2]); }});
  c.push_back({"fma", {Q(), S(-2, 2), Q()}, [](const Inputs& in) { return add(scale(in[0], in[1][0]), in[2]); }});
  c.push_back({"fma", {M(2, 3), S(-2, 2), M(2, 3)}, [](const Inputs& in) { return add(scale(in[0], in[1][0]), in[2]); }});
  c.push_back({"smoothstep", {Sfix({0, -1}), Sfix({1, 2}), Sfix({-0.5, 0.25, 0.5, 1.5, 0.9})}, [](const Inputs& in) {
                 double t = std::min(1.0, std::max(0.0, (in[2][0] - in[0][0]) / (in[1][0] - in[0][0])));
                 return Lanes{t * t * (3 - 2 * t)};
               }});
  return c;
}

}  // namespace kjit::test
