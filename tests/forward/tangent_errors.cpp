// What forward mode refuses, and bad tangent launches: each a User error that names the
// kernel, the line and what to do, never a crash or a wrong tangent.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "forward_support.hpp"
#include "user_error.hpp"

namespace fwd_errors {
KJIT_MODULE(forward_errors)
using namespace kjit::dsl;

KJIT_KERNEL(minimum, (Array<Double> x, Array<Double> lo)) { atomic_min(lo, 0, x[tid()]); }
KJIT_KERNEL(maximum, (Array<Double> x, Array<Double> hi)) { atomic_max(hi, 0, x[tid()] * 2.0); }
KJIT_KERNEL(exchange, (Array<Double> x, Array<Double> slot)) { atomic_exch(slot, 0, x[tid()]); }
KJIT_KERNEL(used_result, (Array<Double> x, Array<Double> acc, Array<Double> out)) {
  Double before = atomic_add(acc, 0, x[tid()]);
  out[tid()] = before * 2.0;
}
/// Integer atomics and an integer atomic's result are fine: no tangent to keep.
KJIT_KERNEL(integer_atomics, (Array<Double> x, Array<Int> counter, Array<Double> out)) {
  Int slot = atomic_add(counter, 0, 1);
  atomic_max(counter, 1, slot);
  out[tid()] = x[tid()] * Double(slot + 1);
}
KJIT_KERNEL(plain, (Array<Double> x, Double s, Array<Double> out)) { out[tid()] = x[tid()] * s; }
}  // namespace fwd_errors

using namespace kjit;
using kjit::test::error_of;

TEST_CASE("atomic_min / atomic_max / atomic_exch of floats and used atomic results are refused, naming the line") {
  auto X = from_vector(std::vector<double>{1, 2, 3}), A = zeros<double>({1});
  struct Case {
    std::string text;
    std::vector<std::string> expected;
  };
  std::vector<Case> cases = {
      {error_of([&] { tangent_of(fwd_errors::minimum); }), {"kernel 'fwd_errors::minimum'", "atomic_min on array 'lo'", "reverse mode"}},
      {error_of([&] { launch_tangent(fwd_errors::maximum, 3, {X, A}, {{}, {}}); }), {"'fwd_errors::maximum'", "atomic_max on array 'hi'"}},
      {error_of([&] { tangent_of(fwd_errors::exchange); }), {"atomic_exch on array 'slot'", "race"}},
      {error_of([&] { tangent_of(fwd_errors::used_result); }), {"the value returned by atomic_add is used"}},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(c.text.find("tangent_errors.cpp:") != std::string::npos);
    for (const std::string& e : c.expected) CHECK(c.text.find(e) != std::string::npos);
  }
  // The forward launch and the adjoint are unaffected, and so are the module's other kernels.
  launch(fwd_errors::minimum, 3, X, A);
  CHECK(A.to_vector<double>()[0] == 0.0);
  auto out = zeros<double>({3}), dout = zeros<double>({3});
  launch_tangent(fwd_errors::plain, 3, {X, 2.0, out}, {{}, 1.0, dout});
  CHECK(dout.to_vector<double>() == std::vector<double>{1, 2, 3});
  // check_gradients reports why forward mode was not checked, and still checks the adjoint.
  GradCheckReport r = check_gradients(fwd_errors::maximum, 3, {X, from_vector(std::vector<double>{-10.0})});
  CHECK(r.passed());
  CHECK(r.tangents.empty());
  CHECK(r.tangent_error.find("atomic_max") != std::string::npos);
}

TEST_CASE("integer atomics are plain effects in the tangent kernel") {
  auto counter = zeros<int32_t>({2}), out = zeros<double>({4}), dout = zeros<double>({4});
  launch_tangent(fwd_errors::integer_atomics, 4, {from_vector(std::vector<double>{1, 1, 1, 1}), counter, out},
                 {from_vector(std::vector<double>{1, 1, 1, 1}), {}, dout});
  auto c = counter.to_vector<int32_t>();
  CHECK(c[0] == 4);
  CHECK(c[1] == 3);
  auto o = out.to_vector<double>(), d = dout.to_vector<double>();
  CHECK(o == d);  // out = x (slot + 1), dout = dx (slot + 1), with x = dx = 1
}

TEST_CASE("bad tangent launches name the kernel and the argument") {
  auto X = from_vector(std::vector<double>{1, 2, 3}), out = zeros<double>({3});
  std::string count = error_of([&] { launch_tangent(fwd_errors::plain, 3, {X, 2.0, out}, {{}, {}}); });
  CHECK(count.find("launch_tangent of kernel 'fwd_errors::plain': expected 3 tangents") != std::string::npos);
  std::string shape = error_of([&] { launch_tangent(fwd_errors::plain, 3, {X, 2.0, out}, {zeros<double>({4}), {}, {}}); });
  CHECK(shape.find("tangent of argument 1 ('x') must have the shape") != std::string::npos);
  std::string not_array = error_of([&] { launch_tangent(fwd_errors::plain, 3, {X, 2.0, out}, {1.0, {}, {}}); });
  CHECK(not_array.find("tangent of argument 1 ('x') must be an array") != std::string::npos);
  std::string value_as_array = error_of([&] { launch_tangent(fwd_errors::plain, 3, {X, 2.0, out}, {{}, X, {}}); });
  CHECK(value_as_array.find("tangent of argument 2 ('s') must be a float64 value (a direction), not an array") !=
        std::string::npos);
  double da = 0;
  std::string value_as_pointer = error_of([&] { launch_tangent(fwd_errors::plain, 3, {X, 2.0, out}, {{}, &da, {}}); });
  CHECK(value_as_pointer.find("tangent of argument 2 ('s') must be a float64 value (a direction), not a pointer") !=
        std::string::npos);
  std::string type = error_of([&] { launch_tangent(fwd_errors::plain, 3, {X, 2.0, out}, {zeros<float>({3}), {}, {}}); });
  CHECK(type.find("'fwd_errors::plain.tangent'") != std::string::npos);
  CHECK(type.find("'d_x'") != std::string::npos);
  CHECK(type.find("float32") != std::string::npos);
}
