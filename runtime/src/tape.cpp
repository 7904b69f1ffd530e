// kjit::Tape: recording launches, host steps and checkpoints, and running their adjoints in
// reverse with each array's gradient buffer.
#include "kjit/runtime/tape.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "array_uses.hpp"
#include "checked_size.hpp"
#include "kjit/abi.h"
#include "kjit/ir/structs.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/internal/module_table.hpp"
#include "param_packer.hpp"
#include "tape_hooks.hpp"
#include "write_log.hpp"

namespace kjit {

struct Tape::Step {
  enum class Kind { Launch, Func, Checkpoint };
  Kind kind = Kind::Launch;
  // A launch: what it ran, and which of its parameters it reads / writes as arrays.
  const KernelDef* kernel = nullptr;
  Shape dims;
  std::vector<LaunchArg> args;
  LaunchOptions options;
  std::vector<size_t> written;
  // What the step read, as it was when recorded: a launch's parameter (read_params[k]) or a
  // checkpoint's input (inputs[k]).
  std::vector<detail::WatchedRead> reads;
  std::vector<size_t> read_params;
  // A launch's reads of arrays in fields of its struct arguments, and which field each is.
  std::vector<detail::WatchedRead> field_reads;
  std::vector<detail::ArrayOrigin> field_read_origins;
  // A function's backward.
  std::function<void()> fn;
  // A checkpoint's forward, given the tape it records on.
  std::function<void(Tape&)> forward;
  // A function: the arrays zero() clears. A checkpoint: the arrays it read that it had not
  // written first (its inputs, kept alive for the replay).
  std::vector<NdArray> arrays;
  // A checkpoint: the memory it wrote (MemoryAccess::key).
  std::vector<const void*> wrote;

  ~Step() {
    for (const detail::WatchedRead& r : reads) detail::unwatch(r);
    for (const detail::WatchedRead& r : field_reads) detail::unwatch(r);
  }
  /// The array a read was of.
  const NdArray& read_array(size_t k) const {
    return kind == Kind::Launch ? args[read_params[k]].array() : arrays[k];
  }
  std::string what(size_t number) const {
    std::string s = "step " + std::to_string(number) + " (";
    switch (kind) {
      case Kind::Launch: return s + "kernel '" + kernel->name() + "')";
      case Kind::Func: return s + "a recorded function)";
      case Kind::Checkpoint: return s + "a checkpoint)";
    }
    return s + ")";
  }
  std::string read_name(size_t k) const {
    if (kind == Kind::Launch) return "array argument '" + kernel->params()[read_params[k]].name + "'";
    return "input array " + std::to_string(k);
  }
};

namespace detail {

/// An array's memory as the tape's gradients of intermediates see it: the buffer is the
/// memory's, as requires_grad's is, so that every view finds its gradient at its own offset.
struct MemoryAccess {
  /// What the tape keys an intermediate's gradient by: the start of the memory kjit allocated,
  /// or, for a view of memory kjit does not own, the view's first element.
  static const void* key(const NdArray& a) { return a.memory_.resource() ? a.memory_.resource() : a.data_; }
  /// A zeroed gradient buffer for `a`'s memory (for foreign memory: for `a`, which is contiguous
  /// or gets a copy's layout).
  static NdArray buffer_for(const NdArray& a) {
    const size_t bytes = a.memory_.bytes();
    if (!a.memory_.resource() || bytes == 0) return NdArray::zeros(a.element_, a.shape(), a.device_);
    return NdArray::zeros(a.element_, {int64_t(bytes / a.element_bytes())}, a.device_);
  }
  /// `a`'s elements in `buffer` (from buffer_for): a handle with a's layout that keeps it alive.
  static NdArray in(const NdArray& a, const NdArray& buffer) {
    if (!a.memory_.resource()) return buffer;
    NdArray g = a;
    g.data_ = static_cast<char*>(buffer.data_) + (static_cast<char*>(a.data_) - static_cast<char*>(a.memory_.resource()));
    g.memory_ = buffer.memory_;
    g.grad_ = nullptr;
    g.grad_memory_.reset();
    return g;
  }
};

}  // namespace detail

/// The gradient buffers of one backward: the arrays' own by data address, the tape's by memory.
struct Tape::Gradients {
  std::unordered_map<const void*, NdArray> own;    ///< from arrays that have one
  std::unordered_map<const void*, NdArray> owned;  ///< the tape's, for intermediates (MemoryAccess::key)
  /// The gradient buffers of array fields of struct arguments, by their own address: views,
  /// for zero() (the fields hold no NdArray; their arrays must outlive the launches anyway).
  std::unordered_map<const void*, NdArray> fields;
};

namespace {

/// Adds the gradient buffers of the array fields of the struct value `bytes` of type `type` (at
/// any depth) to `out`, as views on `device`, the launch's: a kernel adds into them through the
/// fields, so zero() clears them, as Warp's Tape.zero clears a struct argument's arrays.
void add_field_gradients(const ir::Type& type, const unsigned char* bytes, const Device& device,
                         std::unordered_map<const void*, NdArray>& out) {
  for (const ir::StructField& f : ir::struct_info(type.struct_id).fields) {
    if (f.type.is_struct()) {
      add_field_gradients(f.type, bytes + f.offset, device, out);
      continue;
    }
    if (!f.type.is_array() || !f.type.element().is_differentiable()) continue;
    kj::array_t<void> a;
    std::memcpy(static_cast<void*>(&a), bytes + f.offset, sizeof a);
    if (a.grad == nullptr || a.ndim < 1 || out.count(a.grad)) continue;
    out.emplace(a.grad, NdArray::view(a.grad, f.type.element(), Shape(a.shape, a.shape + a.ndim), device,
                                      std::vector<int64_t>(a.strides, a.strides + a.ndim)));
  }
}

/// The tapes this thread records on, outermost first.
thread_local std::vector<Tape*> recording_stack;

/// Makes the thread record on exactly `tapes` until it goes (a checkpoint's replay and probe
/// are not recorded by the tapes around them).
class RecordingSwap {
 public:
  explicit RecordingSwap(std::vector<Tape*> tapes) : saved_(std::exchange(recording_stack, std::move(tapes))) {}
  ~RecordingSwap() { recording_stack = std::move(saved_); }

 private:
  std::vector<Tape*> saved_;
};

}  // namespace

struct TapeAccess {
  static void add(Tape& t, std::unique_ptr<Tape::Step> s) { t.add(std::move(s)); }
};

namespace detail {

namespace {

/// "argument 'layer'", or with the field (names joined by dots) the array is in: "argument
/// 'layer' (its field 'inner.w')".
std::string argument_text(const KernelDef& kernel, size_t param, const std::string* field) {
  return "argument '" + kernel.params()[param].name + "'" + (field ? " (its field '" + *field + "')" : "");
}

/// Who wrote argument `param` (or the array in its field `field`) of a launch of `kernel`, for
/// an overwritten read's report.
struct LaunchWriter {
  const KernelDef* kernel;
  size_t param;
  const std::string* field = nullptr;
};
std::string describe_launch_write(const void* context) {
  const auto& w = *static_cast<const LaunchWriter*>(context);
  return "a launch of kernel '" + w.kernel->name() + "', " + argument_text(*w.kernel, w.param, w.field);
}

/// The array in the field at `path` of struct argument `arg` (its footprint, and the fields'
/// names joined by dots in `name`); empty when the argument carries no value here.
MemoryFootprint field_array(const LaunchArg& arg, const std::vector<int64_t>& path, std::string& name) {
  if (arg.is_array() || arg.absent() || arg.destination() || !arg.type().is_struct()) return {};
  ir::Type type = arg.type();
  const unsigned char* bytes = static_cast<const unsigned char*>(arg.bytes());
  name.clear();
  for (int64_t index : path) {
    if (!type.is_struct()) return {};
    const ir::StructField& f = ir::struct_info(type.struct_id).fields.at(size_t(index));
    name += (name.empty() ? "" : ".") + f.name;
    bytes += f.offset;
    type = f.type;
  }
  if (!type.is_array()) return {};
  kj::array_t<void> a;
  std::memcpy(static_cast<void*>(&a), bytes, sizeof a);
  return footprint_of(a, type.element().element_bytes());
}

}  // namespace

void after_forward_launch(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
                          const LaunchOptions& options, const Device& device) {
  if (!any_watched() && recording_stack.empty()) return;
  const ArrayUses& uses = kernel_array_uses(kernel);
  for (size_t p : uses.written) {
    if (p >= args.size() || !args[p].is_array()) continue;
    const LaunchWriter writer{&kernel, p};
    note_write(args[p].array(), describe_launch_write, &writer);
  }
  if (any_watched())
    for (const ArrayOrigin& o : uses.field_written) {
      std::string name;
      const MemoryFootprint f = o.param < args.size() ? field_array(args[o.param], o.path, name) : MemoryFootprint{};
      const LaunchWriter writer{&kernel, o.param, &name};
      note_watched_write(f, describe_launch_write, &writer);
    }
  if (!options.record_tape) return;
  for (Tape* tape : recording_stack) {
    auto step = std::make_unique<Tape::Step>();
    step->kernel = &kernel;
    step->dims = dims.shape();
    step->args = args;
    step->options = options;
    step->options.device = device;
    for (size_t p : uses.written)
      if (p < args.size() && args[p].is_array()) step->written.push_back(p);
    for (size_t p : uses.read) {
      if (p >= args.size() || !args[p].is_array()) continue;
      step->reads.push_back(watch(footprint_of(args[p].array())));
      step->read_params.push_back(p);
    }
    for (const ArrayOrigin& o : uses.field_read) {
      std::string name;
      const MemoryFootprint f = o.param < args.size() ? field_array(args[o.param], o.path, name) : MemoryFootprint{};
      if (f.empty()) continue;
      step->field_reads.push_back(watch(f));
      step->field_read_origins.push_back(o);
    }
    TapeAccess::add(*tape, std::move(step));
  }
}

}  // namespace detail

Tape::Tape() : grads_(std::make_unique<Gradients>()) {}

Tape::~Tape() { stop_recording(); }

Tape::Recording::~Recording() { stop(); }

void Tape::Recording::stop() {
  if (tape_) std::exchange(tape_, nullptr)->stop_recording();
}

Tape::Recording Tape::record() {
  if (recording_) throw Error(ErrorKind::User, "Tape::record: this tape is already recording");
  if (in_backward_) throw Error(ErrorKind::User, "Tape::record: the tape is running backward()");
  recording_stack.push_back(this);
  recording_ = true;
  return Recording(this);
}

void Tape::stop_recording() noexcept {
  if (!recording_) return;
  auto& s = recording_stack;
  s.erase(std::remove(s.begin(), s.end(), this), s.end());
  recording_ = false;
}

void Tape::add(std::unique_ptr<Step> step) { steps_.push_back(std::move(step)); }

void Tape::record_launch(const KernelDef& kernel, const Dims& dims, std::vector<LaunchArg> args,
                         const LaunchOptions& options) {
  const Device device = detail::launch_device(kernel, args, nullptr, options);
  RecordingSwap only({this});
  LaunchOptions recorded = options;
  recorded.record_tape = true;
  detail::after_forward_launch(kernel, dims, args, recorded, device);
}

void Tape::record_func(std::function<void()> backward, std::vector<NdArray> arrays) {
  if (!backward) throw Error(ErrorKind::User, "Tape::record_func: the backward function is empty");
  if (in_backward_)
    throw Error(ErrorKind::User,
                "Tape::record_func: the tape is running backward() (a checkpoint's forward, run again?); a "
                "checkpoint's forward records on the tape it is given: record_checkpoint([=](kjit::Tape& t) { ... "
                "t.record_func(...); })");
  if (recording_ && std::find(recording_stack.begin(), recording_stack.end(), this) == recording_stack.end())
    throw Error(ErrorKind::User,
                "Tape::record_func: this tape's recording is suspended while a checkpoint's forward runs; the "
                "forward records on the tape it is given: record_checkpoint([=](kjit::Tape& t) { ... "
                "t.record_func(...); })");
  auto step = std::make_unique<Step>();
  step->kind = Step::Kind::Func;
  step->fn = std::move(backward);
  step->arrays = std::move(arrays);
  add(std::move(step));
}

void Tape::record_checkpoint(std::function<void()> forward) {
  if (!forward) throw Error(ErrorKind::User, "Tape::record_checkpoint: the forward function is empty");
  record_checkpoint(std::function<void(Tape&)>([forward = std::move(forward)](Tape&) { forward(); }));
}

void Tape::record_checkpoint(std::function<void(Tape&)> forward) {
  if (!forward) throw Error(ErrorKind::User, "Tape::record_checkpoint: the forward function is empty");
  auto step = std::make_unique<Step>();
  step->kind = Step::Kind::Checkpoint;
  {
    // The segment runs on a probe tape of its own: what it read before writing it are its
    // inputs; the probe goes with the arrays the segment allocated.
    Tape probe;
    {
      RecordingSwap only({});
      auto on = probe.record();
      forward(probe);
    }
    // An array the segment wrote before reading (through any view sharing its memory) is
    // its own; the others are inputs, each once.
    std::vector<detail::MemoryFootprint> wrote, inputs;
    auto among = [](const std::vector<detail::MemoryFootprint>& list, const detail::MemoryFootprint& f, bool same) {
      return std::any_of(list.begin(), list.end(), [&](const detail::MemoryFootprint& g) {
        return same ? g.same(f) : detail::shares_memory(g, f);
      });
    };
    for (auto& s : probe.steps_) {
      if (s->kind != Step::Kind::Launch) continue;
      for (size_t k = 0; k < s->reads.size(); ++k) {
        const NdArray& a = s->read_array(k);
        const detail::MemoryFootprint f = detail::footprint_of(a);
        if (among(wrote, f, false) || among(inputs, f, true)) continue;
        inputs.push_back(f);
        step->reads.push_back(std::exchange(s->reads[k], detail::WatchedRead{}));
        step->arrays.push_back(a);
      }
      for (size_t p : s->written) {
        const NdArray& a = s->args[p].array();
        wrote.push_back(detail::footprint_of(a));
        if (std::find(step->wrote.begin(), step->wrote.end(), detail::MemoryAccess::key(a)) == step->wrote.end())
          step->wrote.push_back(detail::MemoryAccess::key(a));
      }
    }
  }
  step->forward = std::move(forward);
  add(std::move(step));
}

NdArray Tape::gradient(const NdArray& array) const {
  if (!array.defined()) return {};
  if (array.has_grad()) return array.grad();
  for (const Tape* t = this; t; t = t->parent_) {
    auto own = t->grads_->own.find(array.data());
    if (own != t->grads_->own.end()) return own->second;
    auto owned = t->grads_->owned.find(detail::MemoryAccess::key(array));
    if (owned != t->grads_->owned.end()) return detail::MemoryAccess::in(array, owned->second);
  }
  return {};
}

void Tape::assign_gradients() {
  Gradients& g = *grads_;
  std::unordered_set<const void*> written;
  auto need = [&](const NdArray& a) {
    if (!a.defined() || a.has_grad() || !a.element().is_differentiable() || gradient(a).defined()) return;
    if (!written.count(detail::MemoryAccess::key(a))) return;
    g.owned.emplace(detail::MemoryAccess::key(a), detail::MemoryAccess::buffer_for(a));
  };
  for (auto& s : steps_) {
    for (const LaunchArg& a : s->args) {
      if (a.is_array() && a.array().has_grad()) g.own.emplace(a.array().data(), a.array().grad());
      if (!a.is_array() && !a.absent() && !a.destination() && a.type().is_struct())
        add_field_gradients(a.type(), static_cast<const unsigned char*>(a.bytes()), *s->options.device, g.fields);
    }
    for (const NdArray& a : s->arrays)
      if (a.has_grad()) g.own.emplace(a.data(), a.grad());
    for (size_t k = 0; k < s->reads.size(); ++k) need(s->read_array(k));
    for (size_t p : s->written) written.insert(detail::MemoryAccess::key(s->args[p].array()));
    written.insert(s->wrote.begin(), s->wrote.end());
  }
}

void Tape::backward(const NdArray& loss) {
  if (!loss.defined() || loss.size() != 1 || loss.element().lanes() != 1 ||
      (loss.element().scalar != ir::Scalar::F32 && loss.element().scalar != ir::Scalar::F64))
    throw Error(ErrorKind::User, "Tape::backward: the loss must be a one-element float32 or float64 array, not " +
                                     (loss.defined() ? loss.element().str() + " array of " + std::to_string(loss.size()) +
                                                           " elements" : std::string("an empty handle")));
  NdArray one = loss.element().scalar == ir::Scalar::F64 ? from_vector<double>({1.0}, loss.shape())
                                                         : from_vector<float>({1.0f}, loss.shape());
  backward({{loss, one}});
}

void Tape::backward(const std::vector<std::pair<NdArray, NdArray>>& seeds) {
  for (const auto& [array, seed] : seeds)
    if (!array.defined() || !seed.defined() || seed.element() != array.element() || !seed.same_shape(array))
      throw Error(ErrorKind::User, "Tape::backward: a seed must be a gradient of its array's element type and shape");
  // Everything is checked before anything runs: a wrong gradient is never half computed.
  check_replayable();
  for (const auto& [array, seed] : seeds) {
    // An array without a gradient buffer that no step wrote gets the tape's: the loss of a
    // program whose last launch writes it.
    if (!array.has_grad() && !grads_->owned.count(detail::MemoryAccess::key(array)))
      grads_->owned.emplace(detail::MemoryAccess::key(array), detail::MemoryAccess::buffer_for(array));
  }
  assign_gradients();
  for (const auto& [array, seed] : seeds) {
    NdArray g = gradient(array);
    g.copy_from(seed.device() == g.device() ? seed : seed.to(g.device()));
  }
  run_reverse();
}

void Tape::backward() { backward(std::vector<std::pair<NdArray, NdArray>>{}); }

void Tape::check_replayable() const {
  if (recording_) throw Error(ErrorKind::User, "Tape::backward: the tape is still recording; stop its Recording first");
  if (in_backward_) throw Error(ErrorKind::User, "Tape::backward: called from within this tape's backward()");
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    auto check = [&](const detail::WatchedRead& read, const std::string& name) {
      std::string writer;
      if (detail::read_state(read, &writer) != detail::ReadState::Written) return;
      throw Error(ErrorKind::User,
                  "Tape::backward: " + s.what(i) + " read its " + name +
                      ", which has been overwritten since the step was recorded (last by " + writer +
                      "); its adjoint would replay with the new values and give a wrong gradient. Nothing was run: "
                      "write the new values to another array, or keep a copy of the old ones for the tape");
    };
    for (size_t k = 0; k < s.reads.size(); ++k) check(s.reads[k], s.read_name(k));
    for (size_t k = 0; k < s.field_reads.size(); ++k) {
      const detail::ArrayOrigin& o = s.field_read_origins[k];
      std::string field;
      detail::field_array(s.args[o.param], o.path, field);
      check(s.field_reads[k], "array in " + detail::argument_text(*s.kernel, o.param, &field));
    }
    if (s.kind == Step::Kind::Launch) {
      const detail::KernelEntry& entry = detail::kernel_entry(*s.kernel, *s.options.device);
      if (!entry.adjoint) throw Error(ErrorKind::User, "Tape::backward: " + s.what(i) + ": " + entry.adjoint_error);
    }
  }
}

void Tape::run_reverse() {
  in_backward_ = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{in_backward_};
  for (size_t i = steps_.size(); i-- > 0;) {
    Step& s = *steps_[i];
    switch (s.kind) {
      case Step::Kind::Launch: {
        std::vector<LaunchArg> adj(s.args.size());
        for (size_t p = 0; p < s.args.size(); ++p)
          if (s.args[p].is_array()) adj[p] = gradient(s.args[p].array());
        launch_adjoint(*s.kernel, Dims(s.dims), s.args, adj, s.options);
        break;
      }
      case Step::Kind::Func:
        s.fn();
        break;
      case Step::Kind::Checkpoint: {
        Tape replay;
        replay.parent_ = this;
        {
          RecordingSwap only({});
          auto on = replay.record();
          s.forward(replay);
        }
        replay.backward();
        break;
      }
    }
  }
}

void Tape::zero() {
  assign_gradients();
  for (auto& [data, g] : grads_->own) g.zero();
  for (auto& [data, g] : grads_->owned) g.zero();
  for (auto& [grad, g] : grads_->fields) {
    if (g.is_contiguous()) g.zero();
    else g.copy_from(NdArray::zeros(g.element(), g.shape(), g.device()));
  }
  for (auto& s : steps_)
    if (s->kind == Step::Kind::Func)
      for (NdArray& a : s->arrays) a.zero_grad();
}

void Tape::reset() {
  zero();
  steps_.clear();
  grads_ = std::make_unique<Gradients>();
}

size_t Tape::size() const { return steps_.size(); }

std::string Tape::str() const {
  std::string out;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    out += s.what(i);
    if (s.kind == Step::Kind::Launch) {
      out += " over " + detail::shape_text(s.dims.data(), s.dims.size()) + " on " + s.options.device->name();
    }
    out += "\n";
  }
  return out;
}

}  // namespace kjit
