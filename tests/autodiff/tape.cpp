// kjit::Tape: gradients of recorded programs against closed forms and finite differences,
// the tape's own gradients for intermediates, overwritten reads reported before anything runs,
// custom host steps, nesting, checkpointing, and the whole-program gradient check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "../runtime/user_error.hpp"
#include "gradient_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/tape.hpp"

using namespace kjit;
using kjit::test::error_of;

namespace tape_tests {
KJIT_MODULE(autodiff_tape)
using namespace kjit::dsl;

KJIT_KERNEL(sine, (Array<Double> x, Array<Double> y)) {
  Int i = tid();
  y[i] = sin(x[i]);
}
KJIT_KERNEL(scale, (Array<Double> x, Double k, Array<Double> y)) {
  Int i = tid();
  y[i] = k * x[i];
}
KJIT_KERNEL(sum_squares, (Array<Double> y, Array<Double> loss)) {
  Int i = tid();
  atomic_add(loss, 0, y[i] * y[i]);
}
KJIT_KERNEL(in_place, (Array<Double> x)) {
  Int i = tid();
  x[i] = x[i] * 2.0;
}
/// One step of a damped oscillator: what a rollout records many times.
KJIT_KERNEL(oscillate, (Array<Double> x0, Array<Double> v0, Double dt, Array<Double> x1, Array<Double> v1)) {
  Int i = tid();
  Double a = -sin(x0[i]) - 0.1 * v0[i];
  Double v = v0[i] + dt * a;
  v1[i] = v;
  x1[i] = x0[i] + dt * v;
}
KJIT_KERNEL(sum_f32, (Array<Float> y, Array<Float> loss)) {
  Int i = tid();
  atomic_add(loss, 0, y[i]);
}
}  // namespace tape_tests

using namespace tape_tests;

namespace {

NdArray doubles(const std::vector<double>& v) { return from_vector(v); }
std::vector<double> host(const NdArray& a) { return a.to_vector<double>(); }
const std::vector<double> kX = {0.3, -1.2, 2.0, 0.7, -0.1};
const int64_t kN = int64_t(kX.size());

}  // namespace

TEST_CASE("a tape's backward gives the chain rule's gradient, through an intermediate without a gradient buffer") {
  NdArray x = doubles(kX).requires_grad();
  NdArray y = zeros<double>({kN});  // no requires_grad: the tape gives it a buffer
  NdArray loss = zeros<double>({1});
  Tape tape;
  {
    auto on = tape.record();
    launch(sine, kN, x, y);
    launch(sum_squares, kN, y, loss);
  }
  CHECK(tape.size() == 2);
  CHECK(host(loss)[0] == doctest::Approx([] { double s = 0; for (double v : kX) s += std::sin(v) * std::sin(v); return s; }()));
  tape.backward(loss);
  std::vector<double> g = host(x.grad()), gy = host(tape.gradient(y));
  for (size_t i = 0; i < kX.size(); ++i) {
    CHECK(g[i] == doctest::Approx(2 * std::sin(kX[i]) * std::cos(kX[i])).epsilon(1e-14));
    CHECK(gy[i] == doctest::Approx(2 * std::sin(kX[i])).epsilon(1e-14));
  }
  CHECK(host(tape.gradient(loss))[0] == 1.0);
  CHECK_FALSE(tape.gradient(from_vector<double>({1.0})).defined());  // never recorded

  // Gradients accumulate across backward calls, the intermediates' too (Warp's rule): zero()
  // clears them all, and the next backward gives the gradient again.
  tape.zero();
  for (double v : host(x.grad())) CHECK(v == 0.0);
  for (double v : host(tape.gradient(y))) CHECK(v == 0.0);
  CHECK(host(tape.gradient(loss))[0] == 0.0);
  tape.backward(loss);
  CHECK(host(x.grad()) == g);

  // The tape lists its steps.
  std::string listing = tape.str();
  CHECK(listing.find("step 0 (kernel 'tape_tests::sine') over {5} on cpu") != std::string::npos);
  CHECK(listing.find("step 1 (kernel 'tape_tests::sum_squares')") != std::string::npos);
}

TEST_CASE("an intermediate without a gradient buffer read or written through views keeps the chain") {
  // y = sin x over ten elements; the loss reads y through a view. The tape's buffer for y is
  // the memory's: each view finds its gradient at its own offset, as requires_grad's does.
  const std::vector<double> ten = {0.3, -1.2, 2.0, 0.7, -0.1, 0.9, 1.1, -0.4, 0.2, 0.5};
  auto grad_of_x = [&](auto write_view, auto read_view) {
    NdArray x = doubles(ten).requires_grad();
    NdArray y = zeros<double>({10}), loss = zeros<double>({1});
    Tape tape;
    {
      auto on = tape.record();
      NdArray w = write_view(y), r = read_view(y);
      launch(sine, w.size(), write_view(x), w);
      launch(sum_squares, r.size(), r, loss);
    }
    tape.backward(loss);
    return host(x.grad());
  };
  auto whole = [](NdArray a) { return a; };
  auto middle = [](NdArray a) { return a.slice(2, 7); };
  auto odds = [](NdArray a) { return a.reshape({5, 2}).transpose()[1]; };
  auto check = [&](const std::vector<double>& g, const std::vector<int>& in_loss) {
    for (int i = 0; i < 10; ++i) {
      const bool counted = std::find(in_loss.begin(), in_loss.end(), i) != in_loss.end();
      INFO("element " << i);
      CHECK(g[size_t(i)] == doctest::Approx(counted ? 2 * std::sin(ten[size_t(i)]) * std::cos(ten[size_t(i)]) : 0.0).epsilon(1e-14));
    }
  };
  check(grad_of_x(whole, middle), {2, 3, 4, 5, 6});
  check(grad_of_x(whole, odds), {1, 3, 5, 7, 9});
  check(grad_of_x(middle, whole), {2, 3, 4, 5, 6});  // y's other elements stay 0: sin(0) = 0
  check(grad_of_x(odds, middle), {3, 5});
}

/// A program of three launches and a host step between them: y = sin x; z = 3 y on the host
/// (recorded with a backward that multiplies by `backward_factor`); loss = sum z^2.
struct HostStepProgram {
  NdArray x = doubles(kX).requires_grad();
  NdArray y = zeros<double>({kN}).requires_grad(), z = zeros<double>({kN}).requires_grad();
  NdArray loss = zeros<double>({1});
  double backward_factor = 3.0;

  void operator()(Tape& tape) {
    loss.zero();
    launch(sine, kN, x, y);
    std::vector<double> hy = host(y), hz(hy.size());
    for (size_t i = 0; i < hy.size(); ++i) hz[i] = 3 * hy[i];
    z.copy_from(from_vector(hz));
    tape.record_func(
        [this] {
          std::vector<double> gz = host(z.grad()), gy = host(y.grad());
          for (size_t i = 0; i < gz.size(); ++i) gy[i] += backward_factor * gz[i];
          y.grad().copy_from(from_vector(gy));
        },
        {y, z});
    launch(sum_squares, kN, z, loss);
  }
};

TEST_CASE("recorded host functions run their own backward at their place in the reverse sweep") {
  HostStepProgram p;
  Tape tape;
  {
    auto on = tape.record();
    p(tape);
  }
  CHECK(tape.size() == 3);
  tape.backward(p.loss);
  std::vector<double> g = host(p.x.grad());
  for (size_t i = 0; i < kX.size(); ++i)
    CHECK(g[i] == doctest::Approx(18 * std::sin(kX[i]) * std::cos(kX[i])).epsilon(1e-13));
  tape.zero();  // the recorded function's arrays too
  for (const NdArray& a : {p.x, p.y, p.z})
    for (double v : host(a.grad())) CHECK(v == 0.0);
  CHECK(tape.str().find("step 1 (a recorded function)") != std::string::npos);
}

TEST_CASE("check_gradients over a program passes on a right backward and fails on a wrong one") {
  HostStepProgram p;
  GradCheckReport good = check_gradients(std::ref(p), p.loss, {p.x});
  autodiff_support::expect_pass(good);
  REQUIRE(good.params.size() == 1);
  CHECK(good.params[0].name == "input 0");
  CHECK(good.params[0].checked == kN);
  CHECK(host(p.x) == kX);  // the inputs are restored

  p.backward_factor = 2.0;  // a custom backward that is wrong
  GradCheckReport bad = check_gradients(std::ref(p), p.loss, {p.x});
  CHECK_FALSE(bad.passed());
  CHECK(bad.params[0].max_rel_error == doctest::Approx(1.0 / 3.0).epsilon(1e-6));

  // Inputs the check cannot perturb are named.
  NdArray no_grad = doubles(kX);
  CHECK(error_of([&] { check_gradients(std::ref(p), p.loss, {p.x, no_grad}); }) ==
        "check_gradients of a program: input 1 has no gradient buffer: call requires_grad() on it");
}

TEST_CASE("a read overwritten after it was recorded is reported before anything runs") {
  auto setup = [](Tape& tape, NdArray& x, NdArray& y, NdArray& loss) {
    x = doubles(kX).requires_grad();
    y = zeros<double>({kN}).requires_grad();
    loss = zeros<double>({1}).requires_grad();
    auto on = tape.record();
    launch(sine, kN, x, y);
    launch(sum_squares, kN, y, loss);
  };
  const std::string step0 = "Tape::backward: step 0 (kernel 'tape_tests::sine') read its array argument 'x', which "
                            "has been overwritten since the step was recorded (last by ";
  const std::string tail = "); its adjoint would replay with the new values and give a wrong gradient. Nothing was "
                           "run: write the new values to another array, or keep a copy of the old ones for the tape";
  SUBCASE("by a later recorded launch") {
    Tape tape;
    NdArray x, y, loss;
    setup(tape, x, y, loss);
    {
      auto on = tape.record();
      launch(scale, kN, y, 0.5, x);  // the classic: x = f(y) in place of a fresh array
    }
    CHECK(error_of([&] { tape.backward(loss); }) == step0 + "a launch of kernel 'tape_tests::scale', argument 'y'" + tail);
    for (double v : host(x.grad())) CHECK(v == 0.0);  // nothing ran, the seed was not set
    CHECK(host(loss.grad())[0] == 0.0);
  }
  SUBCASE("by a launch after the recording") {
    Tape tape;
    NdArray x, y, loss;
    setup(tape, x, y, loss);
    launch(in_place, kN, x);
    CHECK(error_of([&] { tape.backward(loss); }) == step0 + "a launch of kernel 'tape_tests::in_place', argument 'x'" + tail);
  }
  SUBCASE("by host writes") {
    for (int how = 0; how < 3; ++how) {
      Tape tape;
      NdArray x, y, loss;
      setup(tape, x, y, loss);
      NdArray alias = x;  // a copy of the handle is the same memory
      const char* writer = how == 0 ? "NdArray::zero" : how == 1 ? "NdArray::fill" : "NdArray::copy_from";
      if (how == 0) alias.zero();
      if (how == 1) alias.fill(1.5);
      if (how == 2) alias.copy_from(doubles(kX));  // same values, still a write
      CHECK(error_of([&] { tape.backward(loss); }) == step0 + writer + tail);
    }
  }
  SUBCASE("through another view of the same memory, and not through a disjoint one") {
    // Ten values; the tape reads x, a view of some of them, and writes land through other views.
    const std::vector<double> ten = {0.3, -1.2, 2.0, 0.7, -0.1, 0.9, 1.1, -0.4, 0.2, 0.5};
    auto run = [&](auto view_of, auto write) {
      NdArray buf = doubles(ten);
      NdArray x = view_of(buf);
      NdArray y = zeros<double>({x.size()}), loss = zeros<double>({1});
      Tape tape;
      {
        auto on = tape.record();
        launch(sine, x.size(), x, y);
        launch(sum_squares, x.size(), y, loss);
      }
      write(buf);
      try {
        tape.backward(loss);
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string();  // ran
    };
    auto first_five = [](NdArray b) { return b.slice(0, 5); };
    auto evens = [](NdArray b) { return b.reshape({5, 2}).transpose()[0]; };  // elements 0, 2, .., 8
    const std::string x_read = "Tape::backward: step 0 (kernel 'tape_tests::sine') read its array argument 'x', which "
                               "has been overwritten since the step was recorded (last by ";
    // Overlapping: a slice, a row of a reshape, a strided column, a column read and a slice written.
    CHECK(run(first_five, [](NdArray b) { launch(in_place, 2, b.slice(4, 6)); }) ==
          x_read + "a launch of kernel 'tape_tests::in_place', argument 'x'" + tail);
    CHECK(run(first_five, [](NdArray b) { b.reshape({2, 5})[0].fill(1.0); }) == x_read + "NdArray::fill" + tail);
    CHECK(run(first_five, [](NdArray b) { b.reshape({5, 2}).transpose()[1].copy_from(doubles({1, 2, 3, 4, 5})); }) ==
          x_read + "NdArray::copy_from" + tail);
    CHECK(run(evens, [](NdArray b) { launch(in_place, 1, b.slice(8, 9)); }) ==
          x_read + "a launch of kernel 'tape_tests::in_place', argument 'x'" + tail);
    // Disjoint: the other half, the other column (interleaved with x's elements).
    CHECK(run(first_five, [](NdArray b) { b.slice(5, 10).fill(1.0); }).empty());
    CHECK(run(evens, [](NdArray b) { launch(in_place, 5, b.reshape({5, 2}).transpose()[1]); }).empty());
    CHECK(run(evens, [](NdArray b) { b.reshape({5, 2}).transpose()[1].copy_from(doubles({1, 2, 3, 4, 5})); }).empty());
  }
  SUBCASE("not for writes to what a step only wrote, nor after reset()") {
    Tape tape;
    NdArray x, y, loss;
    setup(tape, x, y, loss);
    loss.fill(7.0);  // an output: its adjoint does not read it
    tape.backward(loss);
    CHECK(host(x.grad())[1] == doctest::Approx(2 * std::sin(kX[1]) * std::cos(kX[1])));
    tape.reset();
    CHECK(tape.size() == 0);
    CHECK(host(x.grad())[1] == 0.0);  // reset() zeroes first
    x.fill(0.25);
    tape.backward(loss);  // nothing recorded: nothing to replay, nothing to report
  }
}

TEST_CASE("a tape refuses what it cannot differentiate, naming the step") {
  NdArray x = doubles(kX).requires_grad(), loss = zeros<double>({1});
  Tape tape;
  {
    auto on = tape.record();
    launch(in_place, kN, x);
    launch(sum_squares, kN, x, loss);
    CHECK(error_of([&] { tape.backward(loss); }) ==
          "Tape::backward: the tape is still recording; stop its Recording first");
    CHECK(error_of([&] { auto again = tape.record(); }) == "Tape::record: this tape is already recording");
  }
  CHECK(error_of([&] { tape.backward(loss); }) ==
        "Tape::backward: step 0 (kernel 'tape_tests::in_place'): kernel 'tape_tests::in_place': array 'x' is read at "
        "tests/autodiff/tape.cpp:37 and written at tests/autodiff/tape.cpp:37; its adjoint would replay reads of values "
        "the forward launch overwrote. Write results to a separate array, or build the module with enable_adjoint = false");
  CHECK(host(x.grad())[0] == 0.0);
  CHECK(error_of([&] { tape.backward(x); }) ==
        "Tape::backward: the loss must be a one-element float32 or float64 array, not float64 array of 5 elements");
  CHECK(error_of([&] { tape.backward({{x, zeros<float>({kN})}}); }) ==
        "Tape::backward: a seed must be a gradient of its array's element type and shape");
}

TEST_CASE("nested tapes: the inner one is a partial tape of the outer one") {
  NdArray x = doubles(kX).requires_grad(), y = zeros<double>({kN}).requires_grad();
  NdArray loss = zeros<double>({1});
  Tape outer, inner;
  {
    auto on = outer.record();
    launch(sine, kN, x, y);
    {
      auto in = inner.record();
      launch(sum_squares, kN, y, loss);
    }
  }
  CHECK(outer.size() == 2);
  CHECK(inner.size() == 1);
  inner.backward(loss);  // d loss / d y only
  for (size_t i = 0; i < kX.size(); ++i) CHECK(host(y.grad())[i] == doctest::Approx(2 * std::sin(kX[i])));
  CHECK(host(x.grad())[0] == 0.0);
  inner.zero();
  outer.backward(loss);
  for (size_t i = 0; i < kX.size(); ++i)
    CHECK(host(x.grad())[i] == doctest::Approx(2 * std::sin(kX[i]) * std::cos(kX[i])));

  // A launch made on another thread is not this thread's recording.
  Tape alone;
  {
    auto on = alone.record();
    std::thread([&] { launch(sine, kN, x, y); }).join();
  }
  CHECK(alone.size() == 0);
  // Recordings that end out of order end all the same.
  Tape a, b;
  auto ra = a.record();
  auto rb = b.record();
  ra.stop();
  launch(sine, kN, x, y);
  rb.stop();
  CHECK(a.size() == 0);
  CHECK(b.size() == 1);
}

namespace {

/// A rollout of `steps` oscillator steps from x, v; the loss is the sum of the final x squared.
/// With `checkpoint`, each step is a checkpoint whose states are allocated inside it, except
/// the ones the next step reads.
struct Rollout {
  int steps;
  NdArray x0 = doubles(kX).requires_grad();
  NdArray v0 = doubles({0.5, 0.1, -0.3, 0.0, 1.0}).requires_grad();
  NdArray loss = zeros<double>({1});

  void run(Tape& tape, bool checkpoint) {
    loss.zero();
    NdArray x = x0, v = v0;
    for (int s = 0; s < steps; ++s) {
      NdArray x1 = zeros<double>({kN}), v1 = zeros<double>({kN});
      auto step = [x, v, x1, v1] {
        // Two half steps through a state that lives only inside the step.
        NdArray xh = zeros<double>({kN}), vh = zeros<double>({kN});
        launch(oscillate, kN, x, v, 0.05, xh, vh);
        launch(oscillate, kN, xh, vh, 0.05, x1, v1);
      };
      if (checkpoint) tape.record_checkpoint(step);
      else step();
      x = x1;
      v = v1;
    }
    launch(sum_squares, kN, x, loss);
  }
};

}  // namespace

TEST_CASE("checkpointed rollouts give the gradients of recorded ones, bit for bit") {
  for (int steps : {1, 4, 16}) {
    CAPTURE(steps);
    Rollout plain{steps}, checkpointed{steps};
    Tape t1, t2;
    {
      auto on = t1.record();
      plain.run(t1, false);
    }
    {
      auto on = t2.record();
      checkpointed.run(t2, true);
    }
    CHECK(t1.size() == size_t(2 * steps + 1));
    CHECK(t2.size() == size_t(steps + 1));  // a checkpoint is one step
    CHECK(host(plain.loss) == host(checkpointed.loss));
    t1.backward(plain.loss);
    t2.backward(checkpointed.loss);
    CHECK(host(plain.x0.grad()) == host(checkpointed.x0.grad()));
    CHECK(host(plain.v0.grad()) == host(checkpointed.v0.grad()));
    double any = 0;
    for (double g : host(checkpointed.v0.grad())) any += std::fabs(g);
    CHECK(any > 0);
    // And both agree with the loss's central differences.
    Rollout fresh{steps};
    autodiff_support::expect_pass(check_gradients([&](Tape& t) { fresh.run(t, true); }, fresh.loss, {fresh.x0, fresh.v0}));
  }
}

TEST_CASE("a checkpoint's inputs are watched like a launch's reads") {
  Rollout r{3};
  Tape tape;
  {
    auto on = tape.record();
    r.run(tape, true);
  }
  r.v0.fill(0.0);
  CHECK(error_of([&] { tape.backward(r.loss); }) ==
        "Tape::backward: step 0 (a checkpoint) read its input array 1, which has been overwritten since the step was "
        "recorded (last by NdArray::fill); its adjoint would replay with the new values and give a wrong gradient. "
        "Nothing was run: write the new values to another array, or keep a copy of the old ones for the tape");
}

TEST_CASE("a float32 loss and record_launch of a launch made elsewhere") {
  NdArray y = from_vector<float>({1.0f, 2.0f, 3.0f}).requires_grad();
  NdArray loss = zeros<float>({1});
  launch(sum_f32, 3, y, loss);
  Tape tape;
  tape.record_launch(sum_f32, 3, {y, loss});
  CHECK(tape.size() == 1);
  tape.backward(loss);
  CHECK(y.grad().to_vector<float>() == std::vector<float>{1.0f, 1.0f, 1.0f});
}
