// Forward-value cases: random draws (the same integer stream computed here) and noise (Warp's
// lattice gradients, summed over the cell's corners in float64; curl noise from its exact gradients).
#include <cstdint>

#include "forward_cases.hpp"
#include "random_reference.hpp"

namespace kjit::test {

using ir::Scalar;
using ir::Type;
using namespace ref;

namespace {
const std::vector<double> kStates = {0, 1, 12345, 4294967295.0, 2024, 77, 3000000000.0};

FwdCase draw(const char* name, std::vector<ArgSpec> extra, std::function<Lanes(uint32_t, const Inputs&)> f, double tol = 1e-6) {
  std::vector<ArgSpec> args{UInt(kStates)};
  args.insert(args.end(), extra.begin(), extra.end());
  FwdCase c{name, args, [f](const Inputs& in) { return f(uint32_t(in[0][0]), in); }, nullptr, tol, tol, {Scalar::F32}};
  return c;
}
}  // namespace

std::vector<FwdCase> random_cases() {
  using namespace rng;
  std::vector<FwdCase> c;
  c.push_back({"rand_init", {UInt(kStates)}, [](const Inputs& in) { return Lanes{double(pcg(uint32_t(in[0][0])))}; }, nullptr, 0, 0, {Scalar::F32}});
  c.push_back({"rand_init", {Int({0, 5, -7, 100}), Int({3, 0, 9, 1})}, [](const Inputs& in) {
                 return Lanes{double(pcg(uint32_t(int32_t(in[0][0])) + pcg(uint32_t(int32_t(in[1][0])))))};
               }, nullptr, 0, 0, {Scalar::F32}});
  c.push_back(draw("randi", {}, [](uint32_t s, const Inputs&) { uint32_t n = pcg(s); return Lanes{double(int32_t(n)), double(n)}; }, 0));
  c.push_back(draw("randi", {Int({-5, 0, 10}), Int({5, 3, 1000})}, [](uint32_t s, const Inputs& in) {
                     uint32_t n = pcg(s), lo = uint32_t(int32_t(in[1][0])), hi = uint32_t(int32_t(in[2][0]));
                     return Lanes{double(int32_t(lo + n % (hi - lo))), double(n)};
                   }, 0));
  c.push_back(draw("randu", {}, [](uint32_t s, const Inputs&) { uint32_t n = pcg(s); return Lanes{double(n), double(n)}; }, 0));
  c.push_back(draw("randu", {UInt({0, 7}), UInt({10, 9})}, [](uint32_t s, const Inputs& in) {
                     uint32_t n = pcg(s);
                     return Lanes{double(uint32_t(in[1][0]) + n % (uint32_t(in[2][0]) - uint32_t(in[1][0]))), double(n)};
                   }, 0));
  c.push_back(draw("randf", {}, [](uint32_t s, const Inputs&) { uint32_t n = pcg(s); return Lanes{unit(n), double(n)}; }, 0));
  c.push_back(draw("randf", {Fixed(Type::scalar_of(Scalar::F32), {-1, 2}), Fixed(Type::scalar_of(Scalar::F32), {1, 5})},
                   [](uint32_t s, const Inputs& in) { uint32_t n = pcg(s); return Lanes{in[1][0] + (in[2][0] - in[1][0]) * unit(n), double(n)}; }));
  c.push_back(draw("randn", {}, [](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a);
                     return Lanes{std::sqrt(-2 * std::log(unit(a) + double(5.96e-8f))) * std::cos(2 * M_PI * unit(b)), double(b)};  // Warp's: u1 + 2^-24 > 0
                   }, 2e-6));
  c.push_back(draw("poisson", {Fixed(Type::scalar_of(Scalar::F32), {0.5, 3, 9.5, 15, 60, 0})},
                   [](uint32_t s, const Inputs& in) { auto [k, n] = poisson(s, float(in[1][0])); return Lanes{double(k), double(n)}; }, 0));
  c.push_back(draw("sample_triangle", {}, [](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a);
                     double r = std::sqrt(unit(a));
                     return Lanes{1 - r, r * unit(b), double(b)};
                   }));
  c.push_back(draw("sample_unit_square", {}, [](uint32_t s, const Inputs&) { uint32_t a = pcg(s), b = pcg(a); return Lanes{unit(a) - 0.5, unit(b) - 0.5, double(b)}; }));
  c.push_back(draw("sample_unit_cube", {}, [](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a), d = pcg(b);
                     return Lanes{unit(a) - 0.5, unit(b) - 0.5, unit(d) - 0.5, double(d)};
                   }));
  c.push_back(draw("sample_unit_ring", {}, [](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s);
                     double t = 2 * M_PI * unit(a);
                     return Lanes{std::cos(t), std::sin(t), double(a)};
                   }));
  c.push_back(draw("sample_unit_disk", {}, [](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a);
                     double r = std::sqrt(unit(a)), t = 2 * M_PI * unit(b);
                     return Lanes{r * std::cos(t), r * std::sin(t), double(b)};
                   }));
  auto direction = [](double u1, double u2, double zmin) {
    double z = 1 - (1 - zmin) * u1, r = std::sqrt(std::max(0.0, 1 - z * z)), t = 2 * M_PI * u2;
    return Lanes{r * std::cos(t), r * std::sin(t), z};
  };
  c.push_back(draw("sample_unit_sphere_surface", {}, [direction](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a);
                     return concat(direction(unit(a), unit(b), -1), Lanes{double(b)});
                   }, 2e-6));
  c.push_back(draw("sample_unit_hemisphere_surface", {}, [direction](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a);
                     return concat(direction(unit(a), unit(b), 0), Lanes{double(b)});
                   }, 2e-6));
  c.push_back(draw("sample_unit_sphere", {}, [direction](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a), d = pcg(b);
                     return concat(scale(direction(unit(a), unit(b), -1), std::cbrt(unit(d))), Lanes{double(d)});
                   }, 2e-6));
  c.push_back(draw("sample_unit_hemisphere", {}, [direction](uint32_t s, const Inputs&) {
                     uint32_t a = pcg(s), b = pcg(a), d = pcg(b);
                     return concat(scale(direction(unit(a), unit(b), 0), std::cbrt(unit(d))), Lanes{double(d)});
                   }, 2e-6));

  // Noise (values to 1e-5 in float32, closely in float64).
  for (int n = 1; n <= 4; ++n) {
    ArgSpec x = n == 1 ? S(-5, 5) : V(n, -5, 5);
    c.push_back({"noise", {UInt({3, 99}), x}, [](const Inputs& in) { return Lanes{perlin(uint32_t(in[0][0]), in[1], nullptr).v}; }, nullptr, 1e-5, 1e-12});
    std::vector<ArgSpec> args{UInt({3, 99}), n == 1 ? S(0, 9) : V(n, 0, 9)};
    for (int d = 0; d < n; ++d) args.push_back(Int({double(2 + d), 3}));
    c.push_back({"pnoise", args, [n](const Inputs& in) {
                   std::vector<int> p;
                   for (int d = 0; d < n; ++d) p.push_back(int(in[size_t(2 + d)][0]));
                   return Lanes{perlin(uint32_t(in[0][0]), in[1], &p).v};
                 }, nullptr, 1e-5, 1e-12});
  }
  for (int n = 2; n <= 4; ++n)
    c.push_back({"curlnoise", {UInt({3, 8}), V(n, -3, 3), UInt({1, 3}), Sfix({2.0, 1.7}), Sfix({0.5, 0.6})},
                 [](const Inputs& in) { return curl(uint32_t(in[0][0]), in[1], uint32_t(in[2][0]), in[3][0], in[4][0]); }, nullptr, 2e-4, 1e-6});
  return c;
}

}  // namespace kjit::test
