// Arrays as struct fields (Warp's array members of a @wp.struct, issue 32): KJIT_STRUCT fields
// declared Array<T, N> hold a kjit::ArrayRef on the host, set from an NdArray, and are Array
// handles in kernels — read, written, atomically updated, their shapes; in a struct parameter,
// an array of structs, a Var and a device function. Reverse mode adds the gradients of what a
// kernel reads through a field into that array's own gradient buffer (dense lanes and strided,
// bit for bit the gradients of the same kernel taking the array as a parameter); forward mode
// and host assignments that do not fit are errors that say so. The module is compiled with
// NVRTC by nvrtc.cpp (every builtins_* module).
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

TEST_CASE("array fields: assignments that do not fit, forward mode and a field both read and written are errors") {
  sarrays::Model m;
  CHECK(test::user_error([&] { m.x = zeros<float>({3}); }) == "a struct field Array<float64, 1> cannot hold an array of 1 dimension of float32");
  CHECK(test::user_error([&] { m.x = zeros<double>({2, 2}); }) == "a struct field Array<float64, 1> cannot hold an array of 2 dimensions of float64");
  m.x = NdArray();  // no array: a null field
  CHECK(m.x.data == nullptr);
  CHECK(m.x.ndim == 0);

  std::string t = test::user_error([] { (void)tangent_of(sarrays::energy_field); });
  CHECK(t.find("the array field 'x' of sarrays::Model: forward mode has no tangents for arrays held in struct fields") !=
        std::string::npos);
  CHECK(t.find("tests/builtins/struct_arrays.cpp:") != std::string::npos);

  NdArray x = from_vector(std::vector<double>{1, 2});
  m.x = x;
  std::string a = test::user_error([&] { launch_adjoint(sarrays::read_write_field, 2, {m}, {{}}); });
  CHECK(a.find("array field 'x' is read at tests/builtins/struct_arrays.cpp:") != std::string::npos);
}
