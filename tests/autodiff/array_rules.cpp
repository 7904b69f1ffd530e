// The adjoint rules of array accesses: reads accumulate (plainly at the thread's own index,
// atomically elsewhere), stores read the element's adjoint, atomics propagate per their op,
// gradients accumulate across launches, and constructs that cannot be differentiated are
// rejected with the user's line.
#include <doctest/doctest.h>
#include <string>

#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/kernel.hpp"

using namespace kjit;

namespace ar_tests {
KJIT_MODULE(autodiff_arrays)
using namespace kjit::dsl;

KJIT_KERNEL(gather, (Array<Double> x, Array<Double> y, Array<Int> idx, Array<Double> out)) {
  Int i = tid();
  out[i] = x[i] * y[idx[i]];  // x only at this thread's index; y at a shared one
}

KJIT_KERNEL(gather_mixed, (Array<Double> x, Array<Int> idx, Array<Double> out)) {
  Int i = tid();
  out[i] = x[i] * x[idx[i]];  // one shared read makes every add to x's adjoint atomic
}

KJIT_KERNEL(gather2d, (Array<Double, 2> x, Array<Double, 2> y, Array<Double, 2> out)) {
  auto [i, j] = tid<2>();
  out(i, j) = x(i, j) * y(j, i);  // (i, j) is this thread's; (j, i) another's
}

KJIT_KERNEL(scatter_ops, (Array<Double> x, Array<Double> sum, Array<Double> lo, Array<Double> hi)) {
  Int i = tid();
  Double v = x[i] * 2.0;
  atomic_add(sum, 0, v);
  atomic_sub(sum, 1, v);
  atomic_min(lo, 0, v);
  atomic_max(hi, 0, v);
}

KJIT_KERNEL(in_place, (Array<Double> x)) {
  Int i = tid();
  x[i] = x[i] * 2.0;
}

KJIT_KERNEL(counter, (Array<Int> count, Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Int slot = atomic_add(count, 0, 1);
  out[slot] = x[i];
}

/// A device function that returns an atomic's result: the slot a caller then writes.
inline const auto take_slot = func("take_slot", [](Array<Int> count) { return atomic_add(count, 0, 1); });

KJIT_KERNEL(counter_in_function, (Array<Int> count, Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Int slot = take_slot(count);
  out[slot] = x[i];
}

KJIT_KERNEL(scale, (Array<Double> x, Double s, Array<Double> out)) {
  Int i = tid();
  out[i] = x[i] * s;
}
}  // namespace ar_tests

namespace ow_tests {
KJIT_MODULE(autodiff_overwrites)
using namespace kjit::dsl;

KJIT_KERNEL(store_twice, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  out[i] = x[i] * 2.0;
  out[tid()] = x[i] * 3.0;  // the same element again: tid() is tid()
}

KJIT_KERNEL(store_in_loop, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int) {
    y = y * 2.0;
    out[i] = y;  // every iteration overwrites out[i]
  });
}

KJIT_KERNEL(store_per_branch, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  If(x[i] > 0.0, [&] { out[i] = x[i] * 2.0; }).Else([&] { out[i] = x[i] * x[i]; });
}

KJIT_KERNEL(store_per_iteration, (Array<Double> x, Int n, Array<Double, 2> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int k) {
    y = y * 2.0 + sin(y);
    out(i, k) = y;  // a different element each iteration
  });
}

KJIT_KERNEL(store_two_elements, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  out[2 * i] = x[i] * 2.0;
  out[2 * i + 1] = x[i] * x[i];
}
}  // namespace ow_tests

namespace {
std::string module_text(const char* module) {
  std::vector<const ir::Function*> fns;
  for (const KernelDef* k : Registry::get().find_module(module)->kernels()) fns.push_back(&k->ir());
  return codegen::generate_module(module, fns, codegen::CodegenOptions{}).text;
}
std::string slice(const std::string& text, const std::string& from, const std::string& to) {
  size_t a = text.find(from);
  REQUIRE(a != std::string::npos);
  size_t b = text.find(to, a);
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}
}  // namespace

TEST_CASE("a read at the thread's own index adds plainly; a shared index adds atomically") {
  std::string text = module_text("autodiff_arrays");
  std::string gather = slice(text, "kjit_ar_tests__gather_adj_body", "#if KJ_CUDA");
  CHECK(gather.find("if (adj_p_x.data) kj::own_add(adj_p_x, kj::elem(adj_p_x, ") != std::string::npos);
  CHECK(gather.find("// own element: plain add") != std::string::npos);
  CHECK(gather.find("kj::array_add(adj_p_y, &kj::elem(adj_p_y, ") != std::string::npos);
  CHECK(gather.find("kj::array_add(adj_p_x, ") == std::string::npos);
  std::string mixed = slice(text, "kjit_ar_tests__gather_mixed_adj_body", "#if KJ_CUDA");
  CHECK(mixed.find("// own element: plain add") == std::string::npos);
  CHECK(mixed.find("kj::array_add(adj_p_x, &kj::elem(adj_p_x, ") != std::string::npos);
  std::string gather2d = slice(text, "kjit_ar_tests__gather2d_adj_body", "#if KJ_CUDA");
  CHECK(gather2d.find("kj::elem(adj_p_x, ") < gather2d.find("// own element: plain add"));
  CHECK(gather2d.find("kj::array_add(adj_p_y, &kj::elem(adj_p_y,") != std::string::npos);

  // All give the right gradient: d/dx_k of sum_i w_i x_i x_idx(i).
  std::vector<double> x = {0.5, -1.0, 2.0, 3.0};
  std::vector<int> idx = {2, 2, 0, 1};
  std::vector<double> w = {1.0, -2.0, 0.5, 3.0};
  std::vector<double> expect(4, 0.0);
  for (int i = 0; i < 4; ++i) {
    expect[size_t(i)] += w[size_t(i)] * x[size_t(idx[size_t(i)])];
    expect[size_t(idx[size_t(i)])] += w[size_t(i)] * x[size_t(i)];
  }
  auto X = from_vector(x), I = from_vector(idx), out = zeros<double>({4}), gx = zeros<double>({4});
  launch(ar_tests::gather_mixed, 4, X, I, out);
  launch_adjoint(ar_tests::gather_mixed, 4, {X, I, out}, {gx, {}, from_vector(w)});
  auto g = gx.to_vector<double>();
  for (int k = 0; k < 4; ++k) CHECK(g[size_t(k)] == doctest::Approx(expect[size_t(k)]));

  auto r = check_gradients(ar_tests::gather, 4, {X, from_vector(w), I, zeros<double>({4})});
  INFO(r.str());
  CHECK(r.passed());
  auto X2 = NdArray::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  auto Y2 = NdArray::from_vector(std::vector<double>{9, 8, 7, 6, 5, 4, 3, 2, 1}, {3, 3});
  auto r2 = check_gradients(ar_tests::gather2d, Dims{3, 3}, {X2, Y2, NdArray::zeros(X2.element(), {3, 3})});
  INFO(r2.str());
  CHECK(r2.passed());
}

TEST_CASE("atomic adjoints: add and sub pass the element's adjoint, min/max only to the winner") {
  std::vector<double> x = {0.5, -1.0, 2.0, 0.25};
  auto X = from_vector(x);
  auto sum = zeros<double>({2});
  auto lo = from_vector(std::vector<double>{100.0}), hi = from_vector(std::vector<double>{-100.0});
  launch(ar_tests::scatter_ops, 4, X, sum, lo, hi);
  CHECK(sum.to_vector<double>()[0] == doctest::Approx(3.5));
  CHECK(sum.to_vector<double>()[1] == doctest::Approx(-3.5));
  CHECK(lo.to_vector<double>()[0] == -2.0);
  CHECK(hi.to_vector<double>()[0] == 4.0);
  auto gx = zeros<double>({4});
  launch_adjoint(ar_tests::scatter_ops, 4, {X, sum, lo, hi},
                 {gx, from_vector(std::vector<double>{1.0, 10.0}), from_vector(std::vector<double>{100.0}),
                  from_vector(std::vector<double>{1000.0})});
  auto g = gx.to_vector<double>();
  // d/dx_i = 2 * (1 - 10) for everyone, plus 2*100 for the min (x_1) and 2*1000 for the max (x_2).
  CHECK(g[0] == doctest::Approx(-18.0));
  CHECK(g[1] == doctest::Approx(-18.0 + 200.0));
  CHECK(g[2] == doctest::Approx(-18.0 + 2000.0));
  CHECK(g[3] == doctest::Approx(-18.0));
}

TEST_CASE("gradients accumulate across adjoint launches; zero_grad resets them") {
  auto X = from_vector(std::vector<double>{1.0, 2.0});
  X.requires_grad();
  auto out = zeros<double>({2});
  out.requires_grad();
  launch(ar_tests::scale, 2, X, 3.0, out);
  std::vector<double> ones = {1.0, 1.0};
  out.grad().copy_from(from_vector(ones));
  launch_adjoint_grads(ar_tests::scale, 2, X, 3.0, out);
  CHECK(X.grad().to_vector<double>() == std::vector<double>{3.0, 3.0});
  launch_adjoint_grads(ar_tests::scale, 2, X, 3.0, out);
  CHECK(X.grad().to_vector<double>() == std::vector<double>{6.0, 6.0});
  X.zero_grad();
  CHECK(X.grad().to_vector<double>() == std::vector<double>{0.0, 0.0});
}

TEST_CASE("an array read and written by one kernel has no adjoint, and says where") {
  auto X = from_vector(std::vector<double>{1.0, 2.0});
  launch(ar_tests::in_place, 2, X);  // the forward pass is fine
  CHECK(X.to_vector<double>() == std::vector<double>{2.0, 4.0});
  try {
    launch_adjoint(ar_tests::in_place, 2, {X}, {zeros<double>({2})});
    FAIL("no error");
  } catch (const Error& e) {
    std::string m = e.what();
    CHECK(e.kind() == ErrorKind::User);
    CHECK(m.find("array 'x' is read at ") != std::string::npos);
    CHECK(m.find("array_rules.cpp:") != std::string::npos);
    CHECK(m.find("enable_adjoint = false") != std::string::npos);
  }
}

TEST_CASE("using an atomic's result rejects the adjoint, naming the line, in a kernel or a device function") {
  // A device function's returned atomic result counts as a use too: its replay cannot give
  // back the slot the forward pass took, so the caller's store would be reversed elsewhere.
  const std::vector<std::pair<const KernelDef*, const char*>> cases = {
      {&ar_tests::counter.def(), "array_rules.cpp:"}, {&ar_tests::counter_in_function.def(), "take_slot"}};
  for (const auto& [kernel, names] : cases) {
    INFO(kernel->name());
    auto count = zeros<int32_t>({1});
    auto X = from_vector(std::vector<double>{1.0, 2.0}), out = zeros<double>({2});
    launch(*kernel, 2, {count, X, out});
    CHECK(count.to_vector<int32_t>()[0] == 2);
    try {
      launch_adjoint(*kernel, 2, {count, X, out}, {{}, zeros<double>({2}), zeros<double>({2})});
      FAIL("no error");
    } catch (const Error& e) {
      std::string m = e.what();
      CHECK(e.kind() == ErrorKind::User);
      CHECK(m.find("the value returned by atomic_add is used") != std::string::npos);
      CHECK(m.find(names) != std::string::npos);
    }
  }
}

namespace {
/// The message launch_adjoint gives for `kernel`, or "" when it runs.
template <class K>
std::string adjoint_error(const K& kernel, const Dims& dims, std::vector<LaunchArg> args, std::vector<LaunchArg> adj) {
  try {
    launch_adjoint(kernel, dims, args, adj);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("an element one thread writes twice has no adjoint: two stores at one index") {
  auto X = from_vector(std::vector<double>{1.0, 2.0}), out = zeros<double>({2});
  launch(ow_tests::store_twice, 2, X, out);  // forward: the last store wins
  CHECK(out.to_vector<double>() == std::vector<double>{3.0, 6.0});
  std::string m = adjoint_error(ow_tests::store_twice, 2, {X, out}, {zeros<double>({2}), from_vector(std::vector<double>{1.0, 1.0})});
  CHECK(m.find("kernel 'ow_tests::store_twice'") != std::string::npos);
  CHECK(m.find("array 'out' is written at ") != std::string::npos);
  CHECK(m.find("and again at ") != std::string::npos);
  CHECK(m.find("at the same index") != std::string::npos);
  CHECK(m.find("array_rules.cpp:") != std::string::npos);
}

TEST_CASE("an element one thread writes twice has no adjoint: a store in a loop at a fixed index") {
  auto X = from_vector(std::vector<double>{1.0, 2.0}), out = zeros<double>({2});
  launch(ow_tests::store_in_loop, 2, X, 3, out);
  CHECK(out.to_vector<double>() == std::vector<double>{8.0, 16.0});
  std::string m = adjoint_error(ow_tests::store_in_loop, 2, {X, 3, out}, {zeros<double>({2}), {}, from_vector(std::vector<double>{1.0, 1.0})});
  CHECK(m.find("array 'out' is written at ") != std::string::npos);
  CHECK(m.find("inside the loop at ") != std::string::npos);
  CHECK(m.find("an index the loop does not change") != std::string::npos);
  CHECK(m.find("store it once after the loop") != std::string::npos);
}

TEST_CASE("stores in exclusive branches, at distinct indices or per loop iteration differentiate") {
  std::vector<double> x = {1.5, -0.5, 0.25, -2.0};
  auto X = from_vector(x);
  auto out1 = zeros<double>({4});
  auto r1 = check_gradients(ow_tests::store_per_branch, 4, {X, out1});
  INFO(r1.str());
  CHECK(r1.passed());
  // d out / d x: 2 where x > 0, 2x elsewhere.
  auto gx = zeros<double>({4});
  launch(ow_tests::store_per_branch, 4, X, out1);
  launch_adjoint(ow_tests::store_per_branch, 4, {X, out1}, {gx, from_vector(std::vector<double>(4, 1.0))});
  CHECK(gx.to_vector<double>() == std::vector<double>{2.0, -1.0, 2.0, -4.0});
  auto out2 = zeros<double>({4, 5});
  auto r2 = check_gradients(ow_tests::store_per_iteration, 4, {X, 5, out2});
  INFO(r2.str());
  CHECK(r2.passed());
  auto out3 = zeros<double>({8});
  auto r3 = check_gradients(ow_tests::store_two_elements, 4, {X, out3});
  INFO(r3.str());
  CHECK(r3.passed());
}
