// kjit::optim's SGD and Adam: every option on every element kind against a C++ restatement of
// Warp's update rules (bit for bit), errors that name the parameter, and a fit on a tape.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "../runtime/user_error.hpp"
#include "gradient_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/optim.hpp"
#include "kjit/runtime/tape.hpp"

using namespace kjit;
using kjit::test::error_of;

namespace {

/// Warp's SGD kernel for one component, in the parameter's precision.
template <class R>
void sgd_oracle(R& p, R g, R& b, R lr, R momentum, R damping, R weight_decay, bool nesterov, int64_t t) {
  R gt = g;
  if (weight_decay != R(0)) gt += weight_decay * p;
  if (momentum != R(0)) {
    R bt = b;
    if (t > 0) bt = momentum * bt + (R(1) - damping) * gt;
    else bt = gt;
    if (nesterov) gt += momentum * bt;
    else gt = bt;
    b = bt;
  }
  p = p - lr * gt;
}

/// Warp's Adam kernels for one component: the float kernel, or (vector_form) the vec3 one.
template <class R>
void adam_oracle(R& p, R g, R& m, R& v, R lr, R beta1, R beta2, R t, R eps, bool vector_form) {
  m = beta1 * m + (R(1) - beta1) * g;
  v = vector_form ? beta2 * v + (R(1) - beta2) * (g * g) : beta2 * v + (R(1) - beta2) * g * g;
  R mhat = m / (R(1) - std::pow(beta1, t + R(1)));
  R vhat = v / (R(1) - std::pow(beta2, t + R(1)));
  R denom = std::sqrt(vhat) + eps;
  p = vector_form ? p - lr * (mhat / denom) : p - lr * mhat / denom;
}

/// An array of `count` elements of `element` (lanes components of R) holding `values`.
template <class R>
NdArray array_of(const ir::Type& element, int64_t count, const std::vector<R>& values) {
  NdArray a = NdArray::empty(element, {count});
  REQUIRE(values.size() == size_t(count * element.lanes()));
  NdArray flat = NdArray::view(a.data(), ir_type_of<R>(), {int64_t(values.size())}, a.device());
  flat.copy_from(from_vector(values));
  return a;
}
template <class R>
std::vector<R> components_of(const NdArray& a) {
  NdArray flat = NdArray::view(a.data(), ir_type_of<R>(), {a.size() * a.element().lanes()}, a.device());
  return flat.to_vector<R>();
}

template <class R>
void check_sgd(const ir::Type& element) {
  const int64_t n = 7;
  const size_t comps = size_t(n * element.lanes());
  for (double momentum : {0.0, 0.9})
    for (double dampening : {0.0, 0.25})
      for (double weight_decay : {0.0, 0.01})
        for (bool nesterov : {false, true}) {
          CAPTURE(element.str());
          CAPTURE(momentum);
          CAPTURE(dampening);
          CAPTURE(weight_decay);
          CAPTURE(nesterov);
          std::vector<R> p = autodiff_support::random_values<R>(int(comps), -2, 2, 1), b(comps, R(0));
          NdArray param = array_of(element, n, p);
          optim::SGD sgd({param}, 0.05, momentum, dampening, weight_decay, nesterov);
          for (int step = 0; step < 3; ++step) {
            std::vector<R> g = autodiff_support::random_values<R>(int(comps), -1, 1, 10 + unsigned(step));
            sgd.step({array_of(element, n, g)});
            for (size_t c = 0; c < comps; ++c)
              sgd_oracle<R>(p[c], g[c], b[c], R(0.05), R(momentum), R(dampening), R(weight_decay), nesterov, step);
            CHECK(components_of<R>(param) == p);
          }
          CHECK(sgd.t == 3);
        }
}

template <class R>
void check_adam(const ir::Type& element) {
  const int64_t n = 9;
  const size_t comps = size_t(n * element.lanes());
  CAPTURE(element.str());
  std::vector<R> p = autodiff_support::random_values<R>(int(comps), -2, 2, 2), m(comps, R(0)), v(comps, R(0));
  NdArray param = array_of(element, n, p).requires_grad();
  optim::Adam adam({param}, 0.01, 0.8, 0.99, 1e-6);
  for (int step = 0; step < 4; ++step) {
    std::vector<R> g = autodiff_support::random_values<R>(int(comps), -1, 1, 20 + unsigned(step));
    // Through the parameter's own gradient buffer (step()) and through given gradients.
    if (step % 2) {
      NdArray flat = NdArray::view(param.grad().data(), ir_type_of<R>(), {int64_t(comps)}, param.device());
      flat.copy_from(from_vector(g));
      adam.step();
    } else {
      adam.step({array_of(element, n, g)});
    }
    for (size_t c = 0; c < comps; ++c)
      adam_oracle<R>(p[c], g[c], m[c], v[c], R(0.01), R(0.8), R(0.99), R(step), R(1e-6), element.lanes() > 1);
    CHECK(components_of<R>(param) == p);
  }
  // reset_internal_state starts the moments and the bias correction again.
  adam.reset_internal_state();
  std::fill(m.begin(), m.end(), R(0));
  std::fill(v.begin(), v.end(), R(0));
  std::vector<R> g = autodiff_support::random_values<R>(int(comps), -1, 1, 30);
  adam.step({array_of(element, n, g)});
  for (size_t c = 0; c < comps; ++c)
    adam_oracle<R>(p[c], g[c], m[c], v[c], R(0.01), R(0.8), R(0.99), R(0), R(1e-6), element.lanes() > 1);
  CHECK(components_of<R>(param) == p);
}

}  // namespace

TEST_CASE("SGD takes Warp's steps, bit for bit, for every option on every element kind") {
  using ir::Scalar;
  check_sgd<float>(ir::Type::scalar_of(Scalar::F32));
  check_sgd<double>(ir::Type::scalar_of(Scalar::F64));
  check_sgd<float>(ir::Type::vector(3, Scalar::F32));
  check_sgd<double>(ir::Type::matrix(2, 2, Scalar::F64));
  check_sgd<float>(ir::Type::quat(Scalar::F32));
}

TEST_CASE("Adam takes Warp's steps, bit for bit: its float kernel for scalars, its vec3 kernel otherwise") {
  using ir::Scalar;
  check_adam<float>(ir::Type::scalar_of(Scalar::F32));
  check_adam<float>(ir::Type::vector(3, Scalar::F32));
  check_adam<double>(ir::Type::scalar_of(Scalar::F64));
  check_adam<double>(ir::Type::vector(2, Scalar::F64));
  check_adam<float>(ir::Type::transform(Scalar::F32));
}

TEST_CASE("optimizers name what they cannot update") {
  NdArray ints = from_vector<int32_t>({1, 2, 3});
  NdArray p = from_vector<float>({1.0f, 2.0f, 3.0f});
  CHECK(error_of([&] { optim::SGD({p, ints}); }) ==
        "SGD: parameter 1 holds int32; optimizers update float32 and float64 scalars, vectors and matrices");
  CHECK(error_of([&] { optim::Adam({p.transpose().slice(0, 3), NdArray()}); }) == "Adam: parameter 1 is an empty handle");
  NdArray wide = zeros<float>({4, 4});
  CHECK(error_of([&] { optim::Adam({wide.transpose()}); }) == "Adam: parameter 0 is not contiguous");
  optim::Adam adam({p});
  CHECK(error_of([&] { adam.step(); }) ==
        "Adam::step(): parameter 0 has no gradient buffer (requires_grad), and no gradient was given");
  CHECK(error_of([&] { adam.step({from_vector<double>({1, 2, 3})}); }) ==
        "Adam::step: gradient 0 must be a contiguous array of its parameter's element type (float32), shape and device");
  CHECK(error_of([&] { adam.step({}); }) == "Adam::step: 0 gradients for 1 parameters");
  CHECK(p.to_vector<float>() == std::vector<float>{1.0f, 2.0f, 3.0f});  // nothing was updated
  CHECK(adam.t == 0);
}

namespace optim_tests {
KJIT_MODULE(autodiff_optim)
using namespace kjit::dsl;
KJIT_KERNEL(line_loss, (Array<Float> x, Array<Float> y, Array<Float> ab, Array<Float> loss)) {
  Int i = tid();
  Float r = ab[0] * x[i] + ab[1] - y[i];
  atomic_add(loss, 0, r * r);
}
}  // namespace optim_tests

TEST_CASE("a line fitted with a tape and Adam, as Warp's examples train") {
  std::vector<float> xs, ys;
  for (int i = 0; i < 32; ++i) {
    xs.push_back(float(i) / 8.0f);
    ys.push_back(1.5f * xs.back() - 0.75f);
  }
  NdArray x = from_vector(xs), y = from_vector(ys), loss = zeros<float>({1});
  NdArray ab = from_vector<float>({0.0f, 0.0f}).requires_grad();
  optim::Adam adam({ab}, 0.05);
  float first = 0, last = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Tape tape;
    {
      auto on = tape.record();
      loss.zero();
      launch(optim_tests::line_loss, 32, x, y, ab, loss);
    }
    tape.backward(loss);
    adam.step();
    tape.zero();
    last = loss.to_vector<float>()[0];
    if (iter == 0) first = last;
  }
  CHECK(first > 10.0f);
  CHECK(last < 1e-4f);
  std::vector<float> fit = ab.to_vector<float>();
  CHECK(fit[0] == doctest::Approx(1.5).epsilon(1e-2));
  CHECK(fit[1] == doctest::Approx(-0.75).epsilon(1e-2));
}
