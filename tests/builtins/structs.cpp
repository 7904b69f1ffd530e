// User structs: as a kernel parameter, as array elements and as a Var local; forward values,
// adjoints against central finite differences (struct arrays hold struct-of-adjoint
// gradients), the packer's bytes against the generated code's reading, and the layout in
// describe_kernel's JSON.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kjit/codegen/codegen.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "lanes.hpp"

namespace structs {
using namespace kjit::dsl;
KJIT_MODULE(builtins_structs)

KJIT_STRUCT(Body, (Double, mass), (Vec3d, pos), (Vec3d, vel), (Int, id));
KJIT_STRUCT(Params, (Double, dt), (Vec3d, gravity));
KJIT_STRUCT(Mixed, (Int8, a), (Double, b), (Half, c), (Vec3f, d), (Bool, e), (UInt16, f));
KJIT_STRUCT(Outer, (Int, tag), (Body, body), (Float, w));

/// One explicit Euler step of each body; the struct param holds the step and gravity.
KJIT_KERNEL(step, (Value<Params> p, Array<Body> bodies, Array<Body> out, Array<double> energy)) {
  Int i = tid();
  Var<Body> b = bodies[i];                       // a struct local
  b.vel() += p.gravity() * p.dt();               // field read-modify-write
  b.pos() += b.vel() * p.dt();
  b.vel().y() *= 0.5 + 0.25 * sin(b.pos().x());  // a component of a field
  b.id() = b.id() + 1;
  out[i] = b;
  energy[i] = 0.5 * b.mass() * dot(b.vel(), b.vel()) + b.mass() * b.pos().z();
}

/// Writes the struct parameter into an array: the bytes the packer wrote, as the kernel read them.
KJIT_KERNEL(copy_mixed, (Value<Mixed> m, Array<Mixed> out)) { out[tid()] = m; }
KJIT_KERNEL(copy_outer, (Value<Outer> m, Array<Outer> out)) { out[tid()] = m; }

/// Builds a struct from fields.
KJIT_KERNEL(make_body, (Array<double> mass, Array<Body> out)) {
  Int i = tid();
  out[i] = Value<Body>(mass[i], Vec3d(1.0, 2.0, 3.0), Vec3d(0.0), i);
}
}  // namespace structs

using namespace kjit;
using structs::Body;

namespace {
std::vector<Body> bodies(int n) {
  std::vector<Body> b(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    b[size_t(i)] = Body{1.0 + 0.5 * i, vec3d{{0.1 * i, -0.2, 0.3 + 0.1 * i}}, vec3d{{0.5, 1.0 - 0.3 * i, -0.4}}, 10 * i};
  return b;
}
}  // namespace

TEST_CASE("a kernel with a struct parameter, a struct array and a struct local: forward values") {
  const int n = 4;
  auto in = bodies(n);
  structs::Params p{0.1, vec3d{{0, -9.8, 0}}};
  NdArray out = zeros<Body>({n}), energy = zeros<double>({n});
  launch(structs::step, n, p, from_vector(in), out, energy);
  auto o = out.to_vector<Body>();
  auto e = energy.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    Body b = in[size_t(i)];
    for (int k = 0; k < 3; ++k) b.vel[k] += p.gravity[k] * p.dt;
    for (int k = 0; k < 3; ++k) b.pos[k] += b.vel[k] * p.dt;
    b.vel[1] *= 0.5 + 0.25 * std::sin(b.pos[0]);
    CHECK(o[size_t(i)].id == b.id + 1);
    CHECK(o[size_t(i)].mass == doctest::Approx(b.mass));
    for (int k = 0; k < 3; ++k) {
      CHECK(o[size_t(i)].pos[k] == doctest::Approx(b.pos[k]));
      CHECK(o[size_t(i)].vel[k] == doctest::Approx(b.vel[k]));
    }
    double ke = 0.5 * b.mass * (b.vel[0] * b.vel[0] + b.vel[1] * b.vel[1] + b.vel[2] * b.vel[2]) + b.mass * b.pos[2];
    CHECK(e[size_t(i)] == doctest::Approx(ke));
  }
}

TEST_CASE("struct adjoints (a struct of adjoints per element) match central finite differences") {
  const int n = 3;
  auto in = bodies(n);
  structs::Params p{0.1, vec3d{{0.2, -9.8, 0.1}}};
  // Random output weights; L = <w_out, out> + <w_e, energy>.
  NdArray w_out = zeros<Body>({n}), w_e = zeros<double>({n});
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < n; ++i) {
    std::vector<double> l = test::read_lanes(w_out, i);
    for (size_t k = 0; k + 1 < l.size(); ++k) l[k] = u(rng);  // the last lane (id) has no gradient
    test::write_lanes(w_out, i, l);
    test::write_lanes(w_e, i, {u(rng)});
  }
  auto loss = [&](const std::vector<Body>& b) {
    NdArray out = zeros<Body>({n}), energy = zeros<double>({n});
    launch(structs::step, n, p, from_vector(b), out, energy);
    double s = 0;
    for (int i = 0; i < n; ++i) {
      auto o = test::read_lanes(out, i), w = test::read_lanes(w_out, i);
      for (size_t k = 0; k + 1 < o.size(); ++k) s += o[k] * w[k];
      s += test::read_lanes(energy, i)[0] * test::read_lanes(w_e, i)[0];
    }
    return s;
  };
  NdArray grad = zeros<Body>({n});
  NdArray out = zeros<Body>({n}), energy = zeros<double>({n});
  launch(structs::step, n, p, from_vector(in), out, energy);
  launch_adjoint(structs::step, n, {p, from_vector(in), out, energy}, {{}, grad, w_out, w_e});
  NdArray in_array = from_vector(in);
  for (int i = 0; i < n; ++i) {
    auto g = test::read_lanes(grad, i);
    auto x = test::read_lanes(in_array, i);
    for (size_t k = 0; k + 1 < x.size(); ++k) {  // mass, pos, vel (id is an integer)
      const double h = 1e-6;
      auto at = [&](double v) {
        NdArray b = from_vector(in);
        auto l = x;
        l[k] = v;
        test::write_lanes(b, i, l);
        return loss(b.to_vector<Body>());
      };
      double numeric = (at(x[k] + h) - at(x[k] - h)) / (2 * h);
      INFO("element " << i << " lane " << k);
      CHECK(g[k] == doctest::Approx(numeric).epsilon(1e-6));
    }
  }
}

TEST_CASE("the packer writes struct parameters as the generated code reads them") {
  structs::Mixed m;
  std::memset(static_cast<void*>(&m), 0, sizeof m);  // padding too: the bytes are compared
  m.a = -7;
  m.b = 3.25;
  m.c = half(1.5f);
  m.d = vec3f{{1, 2, 3}};
  m.e = true;
  m.f = 65000;
  NdArray out = zeros<structs::Mixed>({2});
  launch(structs::copy_mixed, 2, m, out);
  auto o = out.to_vector<structs::Mixed>();
  CHECK(sizeof(structs::Mixed) == size_t(ir::struct_info(ir_type_of<structs::Mixed>().struct_id).size));
  for (const auto& x : o) {
    CHECK(x.a == -7);
    CHECK(x.b == 3.25);
    CHECK(float(x.c) == 1.5f);
    CHECK(x.d[2] == 3.0f);
    CHECK(x.e);
    CHECK(x.f == 65000);
  }
  structs::Outer outer{5, Body{2.0, vec3d{{1, 2, 3}}, vec3d{{4, 5, 6}}, 9}, 0.5f};
  NdArray oo = zeros<structs::Outer>({1});
  launch(structs::copy_outer, 1, outer, oo);
  auto r = oo.to_vector<structs::Outer>()[0];
  CHECK(r.tag == 5);
  CHECK(r.body.vel[1] == 5.0);
  CHECK(r.body.id == 9);
  CHECK(r.w == 0.5f);
}

TEST_CASE("structs built from their fields in a kernel") {
  NdArray out = zeros<Body>({3});
  launch(structs::make_body, 3, from_vector(std::vector<double>{1, 2, 3}), out);
  auto o = out.to_vector<Body>();
  CHECK(o[2].mass == 3.0);
  CHECK(o[2].pos[1] == 2.0);
  CHECK(o[2].id == 2);
}

TEST_CASE("describe_kernel reports struct layouts for the FFI shim") {
  nlohmann::json k = codegen::describe_kernel(structs::step.def().ir(), true);
  const auto& p = k["params"][0];
  CHECK(p["type"] == "structs::Params");
  CHECK(p["struct"]["size"] == sizeof(structs::Params));
  CHECK(p["struct"]["fields"][1]["name"] == "gravity");
  CHECK(p["struct"]["fields"][1]["offset"] == offsetof(structs::Params, gravity));
  CHECK(p["struct"]["fields"][1]["type"] == "vec3d");
  const auto& arr = k["params"][1];
  CHECK(arr["ndim"] == 1);
  CHECK(arr["struct"]["fields"][3]["name"] == "id");
  CHECK(arr["struct"]["fields"][3]["scalar"] == "int32");
  CHECK(arr["differentiable"] == true);
  nlohmann::json o = codegen::describe_kernel(structs::copy_outer.def().ir(), true);
  CHECK(o["params"][0]["struct"]["fields"][1]["struct"]["name"] == "structs::Body");
}
