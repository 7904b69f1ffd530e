// kjit/runtime/tape.hpp — a record of launches whose adjoints run in reverse: Warp's wp.Tape,
// with custom host steps, nesting, gradient checkpointing and a whole-program gradient check.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kjit/runtime/gradcheck.hpp"
#include "kjit/runtime/launch.hpp"

namespace kjit {

/// Records forward launches so that backward() runs their adjoints in reverse order, each with
/// the gradient buffers of its array arguments (docs/TAPE.md).
///
///     kjit::Tape tape;
///     { auto on = tape.record(); kjit::launch(step, n, x, y); kjit::launch(loss_of, n, y, loss); }
///     tape.backward(loss);   // x.grad() now holds d loss / d x
///
/// An array's gradient is its own buffer (NdArray::requires_grad), or — for an array that one
/// recorded launch writes and a later one reads and that has none — a buffer the tape gives
/// it (gradient()), so an intermediate without requires_grad does not cut the chain. Value
/// parameters get no gradient (as in Warp). A read that is overwritten after it was recorded —
/// by a later launch, NdArray::zero/fill/copy_from, or a launch after the recording — makes
/// backward() throw a User error naming both, before any adjoint runs; a write through any
/// view that shares a byte with the read counts (slices, reshapes, strided columns). Writes
/// through data() are not seen.
///
/// Recording is per thread; a tape may be recorded from one thread at a time.
class Tape {
 public:
  Tape();
  ~Tape();
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  /// While it lives, every kjit::launch the thread makes is recorded on this tape and on every
  /// tape whose recording encloses it (an inner tape is a partial tape of the outer one).
  class Recording {
   public:
    Recording(Recording&& o) noexcept : tape_(std::exchange(o.tape_, nullptr)) {}
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;
    Recording& operator=(Recording&&) = delete;
    ~Recording();
    /// Stops recording before the end of the scope.
    void stop();

   private:
    friend class Tape;
    explicit Recording(Tape* tape) : tape_(tape) {}
    Tape* tape_;
  };
  /// Starts recording this thread's launches: `auto on = tape.record();`. Recordings nest
  /// and end in reverse order; recording a tape twice at once is a User error.
  [[nodiscard]] Recording record();

  /// Records a launch without running it (one that ran elsewhere, e.g. in a CUDA graph).
  void record_launch(const KernelDef& kernel, const Dims& dims, std::vector<LaunchArg> args,
                     const LaunchOptions& options = {});
  template <class... P>
  void record_launch(const Kernel<P...>& kernel, const Dims& dims, std::vector<LaunchArg> args,
                     const LaunchOptions& options = {}) {
    record_launch(kernel.def(), dims, std::move(args), options);
  }

  /// A host step with its own backward (Warp's record_func): `backward` runs at this place in
  /// the reverse sweep; zero() clears the gradients of `arrays`. Inside a checkpoint's forward,
  /// record on the tape the forward receives; recording on a tape that is running backward()
  /// is a User error.
  void record_func(std::function<void()> backward, std::vector<NdArray> arrays = {});

  /// Gradient checkpointing: runs `forward` now, keeping none of its launches (the arrays it
  /// allocates are freed when it returns); backward() runs it again at this place in the
  /// reverse sweep on a tape of its own and runs that tape's backward. `forward` must compute
  /// the same values when run again: its inputs are watched like a launch's reads.
  void record_checkpoint(std::function<void()> forward);
  /// The same, with `forward` given the tape it records on (each run its own): where it records
  /// functions, `[=](kjit::Tape& t) { ...; t.record_func(backward, arrays); }`.
  void record_checkpoint(std::function<void(Tape&)> forward);

  /// Sets `loss`'s gradient to 1 (a one-element float32/float64 array), then backward().
  void backward(const NdArray& loss);
  /// Copies each seed into its array's gradient (seeds: array, gradient of the same shape),
  /// then backward().
  void backward(const std::vector<std::pair<NdArray, NdArray>>& seeds);
  /// Runs the recorded adjoints and backward functions in reverse order, adding into the
  /// gradient buffers. Checks everything first (overwritten reads, kernels without an adjoint)
  /// and runs nothing when a check fails.
  void backward();

  /// The gradient buffer backward() uses for `array`: its own, or the tape's for an
  /// intermediate; an empty handle when it has none.
  NdArray gradient(const NdArray& array) const;
  /// Zeroes the gradient of every array the tape has recorded (and the tape's own buffers),
  /// the arrays held in fields of struct arguments included (as Warp's).
  void zero();
  /// Forgets everything recorded, after zero().
  void reset();
  /// Recorded steps (launches, functions, checkpoints).
  size_t size() const;
  /// One line per recorded step: its number, what it is (kernel and dims, function, checkpoint).
  std::string str() const;

  struct Step;  ///< one recorded step (tape.cpp)

 private:
  friend struct TapeAccess;
  void stop_recording() noexcept;
  void add(std::unique_ptr<Step> step);
  /// Throws when a recorded read was overwritten or a recorded kernel has no adjoint.
  void check_replayable() const;
  /// Runs the steps' adjoints and backward functions in reverse order (checked and seeded).
  void run_reverse();
  /// The gradient buffers of the recorded arrays, by data address; intermediates without their
  /// own get the tape's.
  void assign_gradients();

  std::vector<std::unique_ptr<Step>> steps_;
  struct Gradients;
  std::unique_ptr<Gradients> grads_;
  const Tape* parent_ = nullptr;  ///< the tape whose checkpoint this tape replays
  bool recording_ = false;
  bool in_backward_ = false;
};

/// Checks a whole program's gradients: runs `program` recorded on a tape (it may record its own
/// host steps and checkpoints on the tape it is given; it must write the scalar `loss` from
/// scratch each time, e.g. zeroing it first), takes `loss`'s gradient with respect to each of
/// `inputs` (arrays with gradient buffers; they and every gradient on the tape are zeroed
/// first), and compares sampled components with
/// the central difference of `loss` over runs of `program` (on a tape that never runs backward)
/// with that component perturbed; the inputs are restored. One row per input in
/// report.params, named "input 0", "input 1", ...; the options are check_gradients' (step,
/// tolerances, richardson, max_elements, seed; the rest do not apply: the arrays are perturbed
/// where they live).
GradCheckReport check_gradients(const std::function<void(Tape&)>& program, const NdArray& loss,
                                const std::vector<NdArray>& inputs, const GradCheckOptions& options = {});

}  // namespace kjit
