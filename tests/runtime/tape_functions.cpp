// Recorded functions with their own backward on kjit::Tape (Warp's record_func), launches kept
// off the tape (Warp's record_tape=False), and both inside checkpoints, whose forward is given
// the tape it records on; the mistakes are User errors.
#include <doctest/doctest.h>

#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/tape.hpp"
#include "user_error.hpp"

using namespace kjit;

namespace tape_function_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_tape_functions)
KJIT_KERNEL(scale, (Array<Float> x, Float s, Array<Float> y)) {
  Int i = tid();
  y[i] = x[i] * s;
}
/// scale's adjoint by hand: d x += s d y.
KJIT_KERNEL(scale_backward, (Array<Float> dy, Float s, Array<Float> dx)) {
  Int i = tid();
  dx[i] = dx[i] + dy[i] * s;
}
KJIT_KERNEL(sum_squares, (Array<Float> y, Array<Float> loss)) {
  Int i = tid();
  atomic_add(loss, 0, y[i] * y[i]);
}
}  // namespace tape_function_tests

namespace {
namespace k = tape_function_tests;
using kjit::test::error_of;

/// y = 3 x, run off the tape, with its adjoint recorded as a function on `tape`.
void scale_with_custom_backward(Tape& tape, const NdArray& x, const NdArray& y, int* backward_runs) {
  LaunchOptions unrecorded;
  unrecorded.record_tape = false;
  launch(k::scale.def(), Dims{x.size()}, {x, 3.0f, y}, unrecorded);
  tape.record_func(
      [x, y, backward_runs] {
        ++*backward_runs;
        launch(k::scale_backward, x.size(), y.grad(), 3.0f, x.grad());
      },
      {x, y});
}

}  // namespace

TEST_CASE("record_tape = false keeps a launch off the tape; its writes of watched arrays are still seen") {
  auto x = from_vector<float>({1, 2, 3}), y = zeros<float>({3}), loss = zeros<float>({1});
  Tape tape;
  {
    auto on = tape.record();
    LaunchOptions unrecorded;
    unrecorded.record_tape = false;
    launch(k::scale.def(), Dims{3}, {x, 2.0f, y}, unrecorded);
    CHECK(tape.size() == 0);
    launch(k::sum_squares, 3, y, loss);
    CHECK(tape.size() == 1);
    launch(k::scale.def(), Dims{3}, {x, 5.0f, y}, unrecorded);  // overwrites what sum_squares read
  }
  CHECK(loss.to_vector<float>()[0] == 56.0f);
  CHECK(error_of([&] { tape.backward(loss); })
            .rfind("Tape::backward: step 0 (kernel 'tape_function_tests::sum_squares') read its array argument 'y', "
                   "which has been overwritten since the step was recorded (last by a launch of kernel "
                   "'tape_function_tests::scale', argument 'y')",
                   0) == 0);
}

TEST_CASE("a checkpoint's forward records functions on the tape it is given: the gradient is the recorded one") {
  const std::vector<float> values{0.5f, -1.25f, 2.0f, 3.0f};
  // The reference: every launch recorded, no checkpoint.
  auto x_ref = from_vector(values).requires_grad(), y_ref = zeros<float>({4}), loss_ref = zeros<float>({1});
  Tape reference;
  {
    auto on = reference.record();
    launch(k::scale, 4, x_ref, 3.0f, y_ref);
    launch(k::sum_squares, 4, y_ref, loss_ref);
  }
  reference.backward(loss_ref);

  auto x = from_vector(values).requires_grad(), y = zeros<float>({4}).requires_grad(), loss = zeros<float>({1});
  int forward_runs = 0, backward_runs = 0;
  Tape tape;
  {
    auto on = tape.record();
    tape.record_checkpoint([x, y, &forward_runs, &backward_runs](Tape& t) {
      ++forward_runs;
      scale_with_custom_backward(t, x, y, &backward_runs);
    });
    launch(k::sum_squares, 4, y, loss);
  }
  CHECK(forward_runs == 1);
  CHECK(tape.size() == 2);  // the checkpoint and sum_squares
  CHECK(loss.to_vector<float>() == loss_ref.to_vector<float>());
  tape.backward(loss);
  CHECK(forward_runs == 2);  // run again in backward(), where its function was recorded and ran once
  CHECK(backward_runs == 1);
  CHECK(x.grad().to_vector<float>() == x_ref.grad().to_vector<float>());
  CHECK(x.grad().to_vector<float>() == std::vector<float>{9.0f, -22.5f, 36.0f, 54.0f});  // 2 * 9 x
}

TEST_CASE("recording a function on the wrong tape from a checkpoint's forward is a User error") {
  auto x = from_vector<float>({1, 2}).requires_grad(), y = zeros<float>({2}).requires_grad();
  int runs = 0;
  Tape tape;
  auto on = tape.record();
  const std::string suspended = error_of([&] {
    tape.record_checkpoint([&] { scale_with_custom_backward(tape, x, y, &runs); });
  });
  CHECK(suspended ==
        "Tape::record_func: this tape's recording is suspended while a checkpoint's forward runs; the forward records "
        "on the tape it is given: record_checkpoint([=](kjit::Tape& t) { ... t.record_func(...); })");
  on.stop();
  // From a recorded function that runs during backward(): the tape cannot grow while it runs.
  Tape other;
  {
    auto rec = other.record();
    launch(k::scale, 2, x, 2.0f, y);
  }
  other.record_func([&] { other.record_func([] {}); });
  CHECK(error_of([&] { other.backward({{y, from_vector<float>({1, 1})}}); })
            .find("Tape::record_func: the tape is running backward()") == 0);
}
