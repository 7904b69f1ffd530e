// The gradient checker itself: it fails, naming the parameter, the worst element and both
// values, when an adjoint is wrong; and it passes when only the element it does not sample
// would be wrong. Every gradient test of the suite leans on it, so it is tested against a
// kernel whose adjoint is wrong on purpose.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"

using namespace kjit;

namespace gc_tests {
KJIT_MODULE(autodiff_checker)
using namespace kjit::dsl;

/// x^2 whose user adjoint is right (2x) for x <= 2.5 and wrong (3x) above.
inline const auto square = func("square", [](auto x) { return x * x; })
                               .grad([](auto x, auto adj_ret, auto& adj_x) {
                                 adj_x += adj_ret * where(x > 2.5, x * 3.0, x * 2.0);
                               });

KJIT_KERNEL(squares, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  out[i] = square(x[i]) + y[i] * 4.0;
}
}  // namespace gc_tests

TEST_CASE("the gradient checker catches a wrong adjoint and names the worst element") {
  auto X = from_vector(std::vector<double>{1.0, 2.0, 3.0, 0.5}), Y = from_vector(std::vector<double>{1, 2, 3, 4});
  auto out = zeros<double>({4});
  GradCheckReport r = check_gradients(gc_tests::squares, 4, {X, Y, out});
  INFO(r.str());
  CHECK_FALSE(r.passed());
  REQUIRE(r.params.size() == 2);
  const GradCheckParam& px = r.params[0];
  const GradCheckParam& py = r.params[1];
  CHECK(px.name == "x");
  CHECK_FALSE(px.passed);
  CHECK(px.checked == 4);
  CHECK(px.worst_index == 2);  // x = 3: the only element above 2.5
  CHECK(px.worst_component == 0);
  // adjoint w * 9, finite difference w * 6, for the element's random output weight w.
  CHECK(px.worst_adjoint / px.worst_numeric == doctest::Approx(1.5).epsilon(1e-6));
  CHECK(px.max_rel_error == doctest::Approx(1.0 / 3.0).epsilon(1e-6));
  CHECK(px.max_abs_error == doctest::Approx(std::abs(px.worst_adjoint - px.worst_numeric)));
  CHECK(py.name == "y");
  CHECK(py.passed);
  CHECK(py.max_rel_error < 1e-8);
  // The table says which parameter failed.
  std::string table = r.str();
  CHECK(table.find("FAILED") != std::string::npos);
  CHECK(table.find("x") != std::string::npos);
}

TEST_CASE("the gradient checker passes where the wrong branch is never taken") {
  auto X = from_vector(std::vector<double>{1.0, 2.0, -3.0, 0.5}), Y = from_vector(std::vector<double>{1, 2, 3, 4});
  auto out = zeros<double>({4});
  GradCheckReport r = check_gradients(gc_tests::squares, 4, {X, Y, out});
  INFO(r.str());
  CHECK(r.passed());
  CHECK(r.params.at(0).max_rel_error < 1e-8);
}

TEST_CASE("the gradient checker checks only the inputs it is asked for") {
  auto X = from_vector(std::vector<double>{1.0, 2.0, 3.0, 0.5}), Y = from_vector(std::vector<double>{1, 2, 3, 4});
  auto out = zeros<double>({4});
  GradCheckOptions o;
  o.inputs = {"y"};
  GradCheckReport r = check_gradients(gc_tests::squares, 4, {X, Y, out}, o);
  INFO(r.str());
  CHECK(r.passed());
  REQUIRE(r.params.size() == 1);
  CHECK(r.params[0].name == "y");
}
