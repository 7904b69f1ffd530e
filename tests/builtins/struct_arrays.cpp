// Arrays as struct fields (Warp's array members of a @wp.struct, issue 32): KJIT_STRUCT fields
// declared Array<T, N> hold a kjit::ArrayRef on the host, set from an NdArray, and are Array
// handles in kernels — read, written, atomically updated, their shapes; in a struct parameter,
// an array of structs, a Var and a device function. Reverse mode adds the gradients of what a
// kernel reads through a field into that array's own gradient buffer (dense lanes and strided,
// bit for bit the gradients of the same kernel taking the array as a parameter); forward mode
// reads and writes the same field of the struct's tangent, the tangent launch's argument
// (bit for bit the tangents of the kernel taking the array as a parameter; an unset field is a
// zero direction). Host assignments that do not fit are errors that say so. The module is
// compiled with NVRTC by nvrtc.cpp (every builtins_* module).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "strided_views.hpp"
#include "test_support.hpp"

namespace sarrays {
using namespace kjit::dsl;
KJIT_MODULE(builtins_struct_arrays)

using Grid = Array<float, 2>;  // a field type with a comma needs an alias
KJIT_STRUCT(Queue, (Array<int>, buffer), (Int, capacity), (Array<int>, head));
KJIT_STRUCT(Model, (Array<double>, x), (Double, k), (Grid, grid));
KJIT_STRUCT(Holder, (Int, tag), (Model, model));  // a struct holding a struct with arrays

/// Reads through the struct's fields, writes and updates them atomically, reads their shapes.
KJIT_KERNEL(queue_k, (Value<Queue> q, Array<int> out)) {
  Int i = tid();
  Int slot = atomic_add(q.head(), 0, 1);  // each thread claims a slot
  q.buffer()[slot % q.capacity()] = i * 10;
  out[i] = q.buffer().shape[0] * 1000 + q.capacity();
}

/// A device function taking the struct; an array of structs, each with its own arrays.
inline const auto weighted = func("weighted", [](Value<Model> m, Int i) {
  return m.k() * m.x()[i] * m.x()[i] + Double(m.grid()(i % 2, 1));
});
KJIT_KERNEL(models_k, (Array<Model> models, Array<double> out)) {
  Int i = tid();
  Var<Model> m = models[i % 2];  // a struct local holding arrays
  out[i] = weighted(m, i) + Double(m.grid().shape[1]);
}
KJIT_KERNEL(holder_k, (Value<Holder> h, Array<double> out)) {
  Int i = tid();
  out[i] = h.model().x()[i] * Double(h.tag());
}

/// sum k x_i^2 sin(x_i) with x in a struct, and the same with x a parameter: their gradients
/// must agree bit for bit.
KJIT_KERNEL(energy_field, (Value<Model> m, Array<double> out)) {
  Int i = tid();
  out[i] = m.k() * m.x()[i] * m.x()[i] * sin(m.x()[i]);
}
KJIT_KERNEL(energy_param, (Array<double> x, Double k, Array<double> out)) {
  Int i = tid();
  out[i] = k * x[i] * x[i] * sin(x[i]);
}

/// The same in forward mode, k read before x: the order in which tangents are defined picks
/// which product a fused tangent rounds once (AUTODIFF.md, "Fused products"), and C++ leaves
/// the order of `m.k() * m.x()[i]`'s operands to the compiler.
KJIT_KERNEL(energy_field_ordered, (Value<Model> m, Array<double> out)) {
  Int i = tid();
  Double k = m.k();
  Double v = m.x()[i];
  out[i] = k * v * v * sin(v);
}
KJIT_KERNEL(energy_param_ordered, (Array<double> x, Double k, Array<double> out)) {
  Int i = tid();
  Double kk = k;
  Double v = x[i];
  out[i] = kk * v * v * sin(v);
}

/// A struct of arrays only (a mesh: points and the edges' point indices), read in a device
/// function; its tangent is the tangent struct's points.
KJIT_STRUCT(Cloud, (Array<kjit::vec3d>, points), (Array<int>, ids));
inline const auto edge_length = func("edge_length", [](Value<Cloud> c, Int e) {
  return length(c.points()[c.ids()[2 * e + 1]] - c.points()[c.ids()[2 * e]]);
});
inline const auto edge_length_p = func("edge_length_p", [](Array<kjit::vec3d> points, Array<int> ids, Int e) {
  return length(points[ids[2 * e + 1]] - points[ids[2 * e]]);
});
KJIT_KERNEL(edges_field, (Value<Cloud> c, Array<double> out)) {
  Int e = tid();
  out[e] = edge_length(c, e);
  c.points()[e] = c.points()[e] * 2.0;  // a write through the field: its tangent is written too
}
KJIT_KERNEL(edges_param, (Array<kjit::vec3d> points, Array<int> ids, Array<double> out)) {
  Int e = tid();
  out[e] = edge_length_p(points, ids, e);
}

/// Reads and writes the same field array: its adjoint would replay overwritten reads.
KJIT_KERNEL(read_write_field, (Value<Model> m)) {
  Int i = tid();
  m.x()[i] = m.x()[i] * 2.0;
}
}  // namespace sarrays

using namespace kjit;


TEST_CASE("a struct's array fields: reads, stores, atomics and shapes through a struct parameter") {
  NdArray buffer = zeros<int>({8}), head = zeros<int>({1}), out = zeros<int>({6});
  sarrays::Queue q;
  q.buffer = buffer;
  q.capacity = 8;
  q.head = head;
  CHECK(q.buffer.data == buffer.data());
  CHECK(q.buffer.ndim == 1);
  CHECK(q.buffer.shape[0] == 8);
  launch(sarrays::queue_k, 6, q, out);
  CHECK(head.to_vector<int>()[0] == 6);
  std::vector<int> b = buffer.to_vector<int>();
  std::vector<int> claimed(b.begin(), b.begin() + 6);
  std::sort(claimed.begin(), claimed.end());
  CHECK(claimed == std::vector<int>{0, 10, 20, 30, 40, 50});
  CHECK(b[6] == 0);
  CHECK(out.to_vector<int>() == std::vector<int>(6, 8008));
}

TEST_CASE("array fields in an array of structs, a Var, a device function, a nested struct and a 2-D field") {
  NdArray x0 = from_vector(std::vector<double>{1, 2, 3, 4}), x1 = from_vector(std::vector<double>{-1, 0.5, 2, 8});
  NdArray g0 = NdArray::from_vector(std::vector<float>{0, 10, 0, 0, 20, 0}, {2, 3});
  NdArray g1 = NdArray::from_vector(std::vector<float>{0, 1, 0, 0, 2, 0}, {2, 3});
  std::vector<sarrays::Model> ms(2);
  ms[0].x = x0;
  ms[0].k = 2.0;
  ms[0].grid = g0;
  ms[1].x = x1;
  ms[1].k = -1.0;
  ms[1].grid = g1;
  NdArray out = zeros<double>({4});
  launch(sarrays::models_k, 4, NdArray::from_vector(ms), out);
  // thread i uses model i % 2: k x_i^2 + its grid(i % 2, 1) + 3 columns
  CHECK(out.to_vector<double>() == std::vector<double>{2.0 * 1 + 10 + 3, -1.0 * 0.25 + 2 + 3, 2.0 * 9 + 10 + 3, -1.0 * 64 + 2 + 3});

  sarrays::Holder h;
  h.tag = 3;
  h.model = ms[1];
  launch(sarrays::holder_k, 4, h, out);
  CHECK(out.to_vector<double>() == std::vector<double>{-3, 1.5, 6, 24});
}

TEST_CASE("reverse mode: gradients through a struct's array field go to that array's gradient buffer") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);  // dense arrays then run the lane functions
  for (int n : {5, 37}) {
    for (bool strided : {false, true}) {
      CAPTURE(n);
      CAPTURE(strided);
      std::vector<double> xs(static_cast<size_t>(n)), seeds(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        xs[size_t(i)] = 0.3 + 0.17 * i;
        seeds[size_t(i)] = 1.0 - 0.05 * i;
      }
      // Strided: every other element of a buffer with a gradient buffer (a view shares it).
      std::vector<double> wide(static_cast<size_t>(2 * n), 0.0);
      for (int i = 0; i < n; ++i) wide[size_t(2 * i)] = xs[size_t(i)];
      NdArray x = strided ? from_vector(wide).requires_grad().reshape({n, 2}).transpose()[0] : from_vector(xs).requires_grad();
      REQUIRE(x.is_contiguous() == !strided);
      NdArray out = zeros<double>({n}), gx = zeros<double>({n}), gk = zeros<double>({1});
      sarrays::Model m;
      m.x = x;
      m.k = 1.5;
      NdArray gm = zeros<sarrays::Model>({1});
      launch(sarrays::energy_field, n, m, out);
      launch_adjoint(sarrays::energy_field, n, {m, out}, {gm, from_vector(seeds)});
      launch_adjoint(sarrays::energy_param, n, {x, 1.5, out}, {gx, gk, from_vector(seeds)});
      std::vector<double> through_field = test::read_array<double>(x.grad()), as_param = gx.to_vector<double>();
      CHECK(through_field == as_param);
      for (int i = 0; i < n; ++i) {
        const double v = xs[size_t(i)];
        CHECK(as_param[size_t(i)] == doctest::Approx(seeds[size_t(i)] * 1.5 * (2 * v * std::sin(v) + v * v * std::cos(v))));
      }
      CHECK(gm.to_vector<sarrays::Model>()[0].k == doctest::Approx(gk.to_vector<double>()[0]).epsilon(1e-14));
    }
  }
  // No gradient buffer: nothing is written, nothing fails.
  NdArray x = from_vector(std::vector<double>{1, 2});
  sarrays::Model m;
  m.x = x;
  m.k = 1.0;
  launch_adjoint(sarrays::energy_field, 2, {m, zeros<double>({2})}, {{}, from_vector(std::vector<double>{1, 1})});
  CHECK_FALSE(x.has_grad());
}

TEST_CASE("array fields: assignments that do not fit, field tangents that do not fit and a field both read and written in reverse mode are errors") {
  sarrays::Model m;
  CHECK(test::user_error([&] { m.x = zeros<float>({3}); }) == "a struct field Array<float64, 1> cannot hold an array of 1 dimension of float32");
  CHECK(test::user_error([&] { m.x = zeros<double>({2, 2}); }) == "a struct field Array<float64, 1> cannot hold an array of 2 dimensions of float64");
  m.x = NdArray();  // no array: a null field
  CHECK(m.x.data == nullptr);
  CHECK(m.x.ndim == 0);

  // Forward mode: a field's tangent must have the field array's shape; an array of structs
  // holding arrays needs its tangents given (kjit cannot make up their arrays).
  NdArray x2 = from_vector(std::vector<double>{1, 2}), out2 = zeros<double>({2});
  m.x = x2;
  sarrays::Model dm;
  dm.x = zeros<double>({3});
  CHECK(test::user_error([&] { launch_tangent(sarrays::energy_field, 2, {m, out2}, {dm, {}}); }) ==
        "launch_tangent of kernel 'sarrays::energy_field': tangent of argument 1 ('m'): the array field 'x' must "
        "have the shape of the array it is the tangent of");
  sarrays::Holder h, dh;
  h.model = m;
  dh.model.x = zeros<double>({1});
  CHECK(test::user_error([&] { launch_tangent(sarrays::holder_k, 2, {h, out2}, {dh, {}}); }) ==
        "launch_tangent of kernel 'sarrays::holder_k': tangent of argument 1 ('h'): the array field 'model.x' must "
        "have the shape of the array it is the tangent of");
  m.grid = zeros<float>({2, 2});
  NdArray models = NdArray::from_vector(std::vector<sarrays::Model>{m, m});
  CHECK(test::user_error([&] { launch_tangent(sarrays::models_k, 2, {models, out2}, {{}, {}}); }) ==
        "launch_tangent of kernel 'sarrays::models_k': tangent of argument 1 ('models') must be given: an array of "
        "structs holding arrays has its tangents in an array of the same structs, whose array fields hold the "
        "arrays' tangents");

  NdArray x = from_vector(std::vector<double>{1, 2});
  m.x = x;
  std::string a = test::user_error([&] { launch_adjoint(sarrays::read_write_field, 2, {m}, {{}}); });
  CHECK(a.find("array field 'x' is read at tests/builtins/struct_arrays.cpp:") != std::string::npos);
}

TEST_CASE("forward mode: tangents through a struct's array field are the same field of the struct's tangent") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);  // dense arrays then run the lane functions
  for (int n : {5, 37}) {
    for (bool strided : {false, true}) {
      CAPTURE(n);
      CAPTURE(strided);
      std::vector<double> xs(static_cast<size_t>(n)), vs(static_cast<size_t>(n)), ws(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        xs[size_t(i)] = 0.3 + 0.17 * i;
        vs[size_t(i)] = std::cos(1.3 * i) - 0.2;
        ws[size_t(i)] = 1.0 - 0.05 * i;
      }
      auto make = [&](const std::vector<double>& v, bool grad) {  // strided: every other element
        if (!strided) return grad ? from_vector(v).requires_grad() : from_vector(v);
        std::vector<double> wide(size_t(2 * n), 0.0);
        for (int i = 0; i < n; ++i) wide[size_t(2 * i)] = v[size_t(i)];
        NdArray a = grad ? from_vector(wide).requires_grad() : from_vector(wide);
        return a.reshape({n, 2}).transpose()[0];
      };
      NdArray x = make(xs, true), dx = make(vs, false);
      REQUIRE(dx.is_contiguous() == !strided);
      const double k = 1.5, dk = -0.75;
      sarrays::Model m, dm;
      m.x = x;
      m.k = k;
      dm.x = dx;
      dm.k = dk;
      NdArray out_f = zeros<double>({n}), dout_f = zeros<double>({n}), out_p = zeros<double>({n}),
              dout_p = zeros<double>({n});
      launch_tangent(sarrays::energy_field_ordered, n, {m, out_f}, {dm, dout_f});
      launch_tangent(sarrays::energy_param_ordered, n, {x, k, out_p}, {dx, dk, dout_p});
      const std::vector<double> jv = dout_f.to_vector<double>();
      CHECK(jv == dout_p.to_vector<double>());  // bit for bit
      CHECK(out_f.to_vector<double>() == out_p.to_vector<double>());
      for (int i = 0; i < n; ++i) {
        const double v = xs[size_t(i)], s = std::sin(v), c = std::cos(v);
        CHECK(jv[size_t(i)] == doctest::Approx(dk * v * v * s + k * (2 * v * s + v * v * c) * vs[size_t(i)]));
      }
      // <J v, w> = <v, J^T w>: the tangent against the adjoint, whose gradient goes to x's buffer.
      NdArray gm = zeros<sarrays::Model>({1});
      launch_adjoint(sarrays::energy_field_ordered, n, {m, out_f}, {gm, from_vector(ws)});
      const std::vector<double> g = test::read_array<double>(x.grad());
      double lhs = 0, rhs = dk * gm.to_vector<sarrays::Model>()[0].k;
      for (int i = 0; i < n; ++i) {
        lhs += jv[size_t(i)] * ws[size_t(i)];
        rhs += vs[size_t(i)] * g[size_t(i)];
      }
      CHECK(lhs == doctest::Approx(rhs).epsilon(1e-13));
      // An unset field is a zero direction: only k's tangent remains.
      sarrays::Model dk_only;
      dk_only.k = dk;
      launch_tangent(sarrays::energy_field_ordered, n, {m, out_f}, {dk_only, dout_f});
      launch_tangent(sarrays::energy_param_ordered, n, {x, k, out_p}, {{}, dk, dout_p});
      CHECK(dout_f.to_vector<double>() == dout_p.to_vector<double>());
    }
  }
}

TEST_CASE("forward mode: field tangents in a nested struct, an array of structs with a Var and a device function, and writes") {
  NdArray x0 = from_vector(std::vector<double>{1, 2, 3, 4}), x1 = from_vector(std::vector<double>{-1, 0.5, 2, 8});
  NdArray g0 = NdArray::from_vector(std::vector<float>{0, 10, 0, 0, 20, 0}, {2, 3});
  NdArray g1 = NdArray::from_vector(std::vector<float>{0, 1, 0, 0, 2, 0}, {2, 3});
  const std::vector<double> v0{0.5, -1, 2, 0.25}, v1{3, 1, -2, 0.125};
  NdArray dx0 = from_vector(v0), dx1 = from_vector(v1);
  NdArray dg0 = NdArray::from_vector(std::vector<float>{0, 0.5f, 0, 0, -4, 0}, {2, 3});
  std::vector<sarrays::Model> ms(2), dms(2);
  ms[0].x = x0;
  ms[0].k = 2.0;
  ms[0].grid = g0;
  ms[1].x = x1;
  ms[1].k = -1.0;
  ms[1].grid = g1;
  dms[0].x = dx0;
  dms[0].k = 0.5;
  dms[0].grid = dg0;
  dms[1].x = dx1;
  dms[1].k = 0.0;
  dms[1].grid = zeros<float>({2, 3});
  NdArray out = zeros<double>({4}), dout = zeros<double>({4});
  launch_tangent(sarrays::models_k, 4, {NdArray::from_vector(ms), out}, {NdArray::from_vector(dms), dout});
  CHECK(out.to_vector<double>() == std::vector<double>{2.0 * 1 + 10 + 3, -1.0 * 0.25 + 2 + 3, 2.0 * 9 + 10 + 3, -1.0 * 64 + 2 + 3});
  // thread i: dk x_i^2 + 2 k x_i dx_i + dgrid(i % 2, 1) of model i % 2 (the device function's tangent)
  CHECK(dout.to_vector<double>() == std::vector<double>{0.5 * 1 + 2 * 2.0 * 1 * 0.5 + 0.5, 0.0 + 2 * -1.0 * 0.5 * 1 + 0,
                                                        0.5 * 9 + 2 * 2.0 * 3 * 2 + 0.5, 0.0 + 2 * -1.0 * 8 * 0.125 + 0});

  sarrays::Holder h, dh;
  h.tag = 3;
  h.model = ms[1];
  dh.model = dms[1];
  launch_tangent(sarrays::holder_k, 4, {h, out}, {dh, dout});
  CHECK(out.to_vector<double>() == std::vector<double>{-3, 1.5, 6, 24});
  CHECK(dout.to_vector<double>() == std::vector<double>{9, 3, -6, 0.375});
  launch_tangent(sarrays::holder_k, 4, {h, out}, {{}, dout});  // no tangent: a zero direction
  CHECK(dout.to_vector<double>() == std::vector<double>(4, 0.0));

  // A write through a field writes the field of the struct's tangent (in place: x = 2 x).
  sarrays::Model m, dm;
  NdArray x = from_vector(std::vector<double>{1, 2, 3}), dx = from_vector(std::vector<double>{0.5, -1, 4});
  m.x = x;
  dm.x = dx;
  launch_tangent(sarrays::read_write_field, 3, {m}, {dm});
  CHECK(x.to_vector<double>() == std::vector<double>{2, 4, 6});
  CHECK(dx.to_vector<double>() == std::vector<double>{1, -2, 8});
  launch_tangent(sarrays::read_write_field, 3, {m}, {{}});  // an unwanted tangent: zeros of its own
  CHECK(x.to_vector<double>() == std::vector<double>{4, 8, 12});
  // Integer arrays carry no tangent: the queue's tangent launch is its launch.
  NdArray buffer = zeros<int>({8}), head = zeros<int>({1}), iout = zeros<int>({2});
  sarrays::Queue q;
  q.buffer = buffer;
  q.capacity = 8;
  q.head = head;
  launch_tangent(sarrays::queue_k, 2, {q, iout}, {{}, {}});
  CHECK(head.to_vector<int>()[0] == 2);
}

TEST_CASE("forward mode: a struct of arrays only (a mesh's points) has tangents through its floating array") {
  const int n = 6;  // edges (i, i + 1) of n + 1 points
  std::vector<vec3d> ps, vs;
  std::vector<int> ids;
  for (int i = 0; i <= n; ++i) {
    ps.push_back(vec3d{{std::cos(0.7 * i), std::sin(1.1 * i) + 0.1 * i, 0.5 * i}});
    vs.push_back(vec3d{{0.3 - 0.1 * i, std::cos(2.0 * i), 1.0 / (1 + i)}});
  }
  for (int e = 0; e < n; ++e) {
    ids.push_back(e);
    ids.push_back(e + 1);
  }
  NdArray points = from_vector(ps), dpoints = from_vector(vs), id = from_vector(ids);
  NdArray out_f = zeros<double>({n}), dout_f = zeros<double>({n}), out_p = zeros<double>({n}), dout_p = zeros<double>({n});
  launch_tangent(sarrays::edges_param, n, {points, id, out_p}, {dpoints, {}, dout_p});
  sarrays::Cloud c, dc;
  c.points = points;
  c.ids = id;
  dc.points = dpoints;
  launch_tangent(sarrays::edges_field, n, {c, out_f}, {dc, dout_f});
  CHECK(out_f.to_vector<double>() == out_p.to_vector<double>());
  CHECK(dout_f.to_vector<double>() == dout_p.to_vector<double>());  // bit for bit
  const std::vector<double> jv = dout_f.to_vector<double>();
  for (int e = 0; e < n; ++e) {  // d|b - a| = <b - a, db - da> / |b - a|
    double d[3], dd[3], len = 0, dot = 0;
    for (int k = 0; k < 3; ++k) {
      d[k] = ps[size_t(e + 1)][k] - ps[size_t(e)][k];
      dd[k] = vs[size_t(e + 1)][k] - vs[size_t(e)][k];
      len += d[k] * d[k];
      dot += d[k] * dd[k];
    }
    CHECK(jv[size_t(e)] == doctest::Approx(dot / std::sqrt(len)));
  }
  // The write through the field doubled the first n points and their tangents.
  const std::vector<vec3d> p2 = points.to_vector<vec3d>(), v2 = dpoints.to_vector<vec3d>();
  for (int i = 0; i <= n; ++i)
    for (int k = 0; k < 3; ++k) {
      CHECK(p2[size_t(i)][k] == (i < n ? 2 : 1) * ps[size_t(i)][k]);
      CHECK(v2[size_t(i)][k] == (i < n ? 2 : 1) * vs[size_t(i)][k]);
    }
}
