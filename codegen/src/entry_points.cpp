// Entry point wrappers around kernel body functions.
#include "entry_points.hpp"

#include <cctype>

#include "kjit/ir/type.hpp"

namespace kjit::codegen {

std::string entry_name(const std::string& kernel_name, EntryKind kind) {
  std::string out = "kjit_";
  for (char c : kernel_name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out + (kind == EntryKind::Forward ? "_fwd" : "_adj");
}

std::vector<EntryParam> entry_params(const ir::Function& fn, const Names& names, EntryKind kind) {
  auto param = [&](size_t i, std::string name, bool adjoint) {
    const ir::Type& t = fn.params[i].type;
    EntryParam p;
    p.type = t.cpp();
    p.name = std::move(name);
    if (t.is_array()) {
      p.kind = EntryParam::Kind::Array;
      p.element = t.element().cpp();
    } else if (!adjoint) {
      p.kind = EntryParam::Kind::Value;
    } else if (t.is_differentiable()) {
      p.kind = EntryParam::Kind::Sum;
      p.sum = ir::adjoint_sum_type(t).cpp();
    } else {
      p.kind = EntryParam::Kind::None;
    }
    return p;
  };
  std::vector<EntryParam> out;
  for (size_t i = 0; i < fn.params.size(); ++i) out.push_back(param(i, names.param(i), false));
  if (kind == EntryKind::Adjoint)
    for (size_t i = 0; i < fn.params.size(); ++i) out.push_back(param(i, names.adj_param(i), true));
  return out;
}

namespace {
bool by_reference(const std::string& type) {
  // Arrays and aggregates pass by reference into the inlined body; scalars by value.
  return type.rfind("kj::", 0) == 0;
}

using Kind = EntryParam::Kind;

/// Names the entry points give a Sum's pieces: its destination (the ABI's pointer), the host's
/// sum over a block of threads, and one thread's sum.
std::string to(const EntryParam& p) { return "kj_to_" + p.name; }
std::string acc(const EntryParam& p) { return "kj_acc_" + p.name; }
std::string one(const EntryParam& p) { return "kj_t_" + p.name; }

/// The host entry's loops over its threads: plain() drops the sums, reduce() writes them.
class HostLoops {
 public:
  HostLoops(SourceWriter& w, const std::string& body, const std::vector<EntryParam>& params,
            const std::string& lanes, const std::string& tail, const std::string& block, bool fence)
      : w_(w), body_(body), params_(params), lanes_(lanes), tail_(tail), block_(block), fence_(fence) {}

  /// The body called for thread `index` (dense arrays or not); each Sum gets `sum(p)`.
  template <class SumArg>
  std::string call(const std::string& index, bool dense, SumArg sum) const {
    std::string out = body_ + "<" + (dense ? "true" : "false") + ">(dim, " + index;
    for (const EntryParam& p : params_) {
      if (p.kind == Kind::None) continue;
      out += ", ";
      if (p.kind == Kind::Sum) out += sum(p);
      else out += (dense && p.kind == Kind::Array ? "kj_dense_" : "") + p.name;
    }
    return out + ");";
  }
  /// A call of the lane function (or the tail function, `fn`) at `base`: dense arrays and the
  /// values. Lane functions run only where no sum is wanted (plain()), so they take none.
  std::string lane_call(const std::string& fn, const std::string& base) const {
    std::string out = fn + "(dim, " + base;
    for (const EntryParam& p : params_)
      if (p.kind == Kind::Array || p.kind == Kind::Value)
        out += ", " + std::string(p.kind == Kind::Array ? "kj_dense_" : "") + p.name;
    return out + ");";
  }
  /// "{ S kj_t_a = {}; ... <call> <after> }" around a call that hands sums back, or the call.
  std::string with_sums(const std::string& call, const std::string& after) const {
    std::string open;
    for (const EntryParam& p : params_)
      if (p.kind == Kind::Sum) open += p.sum + " " + one(p) + " = {}; ";
    if (open.empty()) return call;
    return "{ " + open + call + after + " }";
  }
  std::string dense_test() const {
    std::string t;
    for (const EntryParam& p : params_)
      if (p.kind == Kind::Array) t += (t.empty() ? "" : " && ") + std::string("kj::is_dense(") + p.name + ")";
    return t;
  }
  void dense_copies(int indent) const {
    for (const EntryParam& p : params_)
      if (p.kind == Kind::Array)
        w_.line("const kj::dense_array_t<" + p.element + "> kj_dense_" + p.name + "{" + p.name + "};", indent);
  }

  /// The loops of a launch whose sums nobody asked for (or that has none): each thread's
  /// sums start at zero and are dropped. With `strided` false only the dense path (a launch
  /// with strided arrays goes on past it); `done` ends a dense launch.
  void plain(int indent, bool strided, const std::string& done = "return;") const {
    auto dropped = [&](const std::string& index, bool dense) {
      return with_sums(call(index, dense, one), "");
    };
    // The index is int32 as tid() is (the runtime refuses launches over 2^31-1 threads): a
    // 64-bit index truncated to int32 in the body is not an affine access to GCC, an int32
    // loop variable is, and that is what lets the dense loop vectorize.
    const std::string loop = "KJ_THREADS_INDEPENDENT for (kj_int32 kj_i = (kj_int32)kj_begin; kj_i < (kj_int32)kj_end; ++kj_i)";
    const std::string dense = dense_test();
    if (!dense.empty()) {
      w_.line("if (" + dense + ") {", indent);
      dense_copies(indent + 1);
      if (lanes_.empty()) {
        w_.line(loop, indent + 1);
        w_.line(dropped("kj_i", true), indent + 2);
      } else {
        w_.line("kj_int32 kj_i = (kj_int32)kj_begin;", indent + 1);
        w_.line("for (; kj_i + " + block_ + " <= (kj_int32)kj_end; kj_i += " + block_ + ")", indent + 1);
        w_.line(lane_call(lanes_, "kj_i"), indent + 2);
        if (tail_.empty()) {
          w_.line("KJ_THREADS_INDEPENDENT for (; kj_i < (kj_int32)kj_end; ++kj_i)", indent + 1);
          w_.line(dropped("kj_i", false), indent + 2);
        } else {
          w_.line(lane_call(tail_, "kj_i, (kj_int32)kj_end"), indent + 1);
        }
        // The lane function's non-temporal block stores are weakly ordered: fenced before the
        // launch's completion is reported.
        if (fence_) w_.line("kj::stream_fence();", indent + 1);
      }
      w_.line(done, indent + 1);
      w_.line("}", indent);
    }
    if (!strided) return;
    w_.line(loop, indent);
    w_.line(dropped("kj_i", false), indent + 1);
  }

  /// The loops that sum: blocks of reduce_block threads, each thread's sum added in thread
  /// order, one partial per block and Sum (written when it has a destination). One call of the
  /// strided body serves dense and strided arrays, in a plain loop: the entry holds no more
  /// copies of the body than without sums (BENCHMARKS.md, value gradients, has the compile
  /// times). Lane functions hand back no sums (the adjoint's keep no per-lane adjoint of a
  /// value parameter), so launches that want sums run the strided body only.
  void reduce(int indent) const {
    w_.line("const kj_int64 kj_block = kj::reduce_block(dim.size);", indent);
    w_.line("for (kj_int64 kj_b = kj_begin; kj_b < kj_end;) {", indent);
    const int in = indent + 1;
    w_.line("const kj_int64 kj_next = kj_b - kj_b % kj_block + kj_block;", in);
    w_.line("const kj_int32 kj_e = (kj_int32)(kj_next < kj_end ? kj_next : kj_end);", in);
    for (const EntryParam& p : params_)
      if (p.kind == Kind::Sum) w_.line(p.sum + " " + acc(p) + " = {};", in);
    std::string added;
    for (const EntryParam& p : params_)
      if (p.kind == Kind::Sum) added += " " + acc(p) + " += " + one(p) + ";";
    w_.line("for (kj_int32 kj_i = (kj_int32)kj_b; kj_i < kj_e; ++kj_i)", in);
    w_.line(with_sums(call("kj_i", false, one), added), in + 1);
    for (const EntryParam& p : params_)
      if (p.kind == Kind::Sum) w_.line("if (" + to(p) + ") " + to(p) + "[kj_b / kj_block] = " + acc(p) + ";", in);
    w_.line("kj_b = kj_e;", in);
    w_.line("}", indent);
  }

 private:
  SourceWriter& w_;
  const std::string& body_;
  const std::vector<EntryParam>& params_;
  const std::string& lanes_;
  const std::string& tail_;
  const std::string& block_;
  bool fence_;  ///< the lane function writes non-temporal block stores
};

}  // namespace

void open_body_function(SourceWriter& w, const std::string& body, const std::vector<EntryParam>& params) {
  std::string sig = "template <bool KJ_DENSE> static KJ_FUNC void " + body +
                    "(const kj::launch_bounds_t& dim, kj_int64 kj_index";
  for (const EntryParam& p : params) {
    switch (p.kind) {
      case Kind::Array: sig += ", const kj::array_of<KJ_DENSE, " + p.element + ">& " + p.name; break;
      case Kind::Value: sig += ", " + (by_reference(p.type) ? "const " + p.type + "& " : p.type + " ") + p.name; break;
      case Kind::Sum: sig += ", " + p.sum + "& " + p.name; break;
      case Kind::None: break;
    }
  }
  w.line(sig + ") {");
}

void emit_entry_points(SourceWriter& w, const std::string& entry, const std::string& body,
                       const std::vector<EntryParam>& params, const std::string& lanes, const std::string& tail,
                       const std::string& block, bool fence) {
  HostLoops host(w, body, params, lanes, tail, block, fence);

  w.line("#if KJ_CUDA");
  std::string sig = "extern \"C\" __global__ void " + entry + "(kj::launch_bounds_t dim";
  for (const EntryParam& p : params) {
    switch (p.kind) {
      case Kind::Array: sig += ", " + p.type + " " + p.name; break;
      case Kind::Value: sig += ", kj::value_t<" + p.type + "> kj_in_" + p.name; break;
      case Kind::Sum: sig += ", " + p.type + "* " + to(p); break;
      case Kind::None: sig += ", const void*"; break;
    }
  }
  w.line(sig + ") {");
  for (const EntryParam& p : params) {
    if (p.kind == Kind::Value) w.line("const " + p.type + " " + p.name + " = kj::value_of(kj_in_" + p.name + ");", 1);
    if (p.kind == Kind::Sum) w.line(p.sum + " " + p.name + " = {};", 1);
  }
  // Unrolling the grid-stride loop (NVVM's default, 4x) roughly doubles compile time for
  // no gain on memory-bound kernels: most threads run one or two iterations.
  w.line("#pragma unroll 1", 1);
  // A 32-bit index, as on the host: launches have at most 2^31-1 threads (tid() is int32) and
  // the runtime's grid at most the device's resident threads, so index + stride stays below
  // 2^32. The 64-bit loop took 12 of saxpy's 53 SASS instructions (docs/BENCHMARKS.md).
  w.line("for (kj_uint32 kj_index = blockIdx.x * blockDim.x + threadIdx.x; kj_index < (kj_uint32)dim.size;", 1);
  w.line("     kj_index += blockDim.x * gridDim.x)", 1);
  w.line(host.call("kj_index", false, [](const EntryParam& p) { return p.name; }), 2);
  // Every thread of the block reaches these (no thread leaves the loop early), and the test
  // is the same for the whole grid: block_add's barriers are safe.
  for (const EntryParam& p : params)
    if (p.kind == Kind::Sum) w.line("if (" + to(p) + ") kj::block_add(" + to(p) + ", " + p.name + ");", 1);
  w.line("}");

  w.line("#else");
  // The host entry's parameters, read from kj_args. Copies, not references into kj_args: a
  // store through an array cannot change them, so the compiler keeps them in registers and
  // hoists them out of the loop. Returns the test "some sum has a destination".
  auto read_params = [&]() {
    w.line("const kj::launch_bounds_t dim = *(const kj::launch_bounds_t*)kj_args[0];", 1);
    std::string wanted;
    for (size_t i = 0; i < params.size(); ++i) {
      const EntryParam& p = params[i];
      const std::string arg = "kj_args[" + std::to_string(i + 1) + "]";
      switch (p.kind) {
        case Kind::Array: w.line("const " + p.type + " " + p.name + " = *(const " + p.type + "*)" + arg + ";", 1); break;
        case Kind::Value:
          w.line("const " + p.type + " " + p.name + " = kj::value_of(*(const kj::value_t<" + p.type + ">*)" + arg + ");", 1);
          break;
        case Kind::Sum:
          w.line(p.sum + "* const " + to(p) + " = *(" + p.sum + "* const*)" + arg + ";", 1);
          wanted += (wanted.empty() ? "" : " || ") + to(p);
          break;
        case Kind::None:
          break;
      }
    }
    return wanted;
  };
  const std::string signature = "(void** kj_args, kj_int64 kj_begin, kj_int64 kj_end)";
  bool sums = false;
  for (const EntryParam& p : params) sums = sums || p.kind == Kind::Sum;
  if (sums) {
    // The summing loops in a function of their own: the entry's dense loop is then compiled
    // (registers included) as in an entry without sums.
    w.line("static KJ_NOINLINE void " + entry + "_sums" + signature + " {");
    read_params();
    host.reduce(1);
    w.line("}");
  }
  if (!sums) {
    w.line("KJ_EXPORT void " + entry + signature + " {");
    read_params();
    host.plain(1, true);
    w.line("}");
  } else {
    // Without destinations, dense launches drop the sums (and the work that only fed them),
    // in a function of their own too; strided ones, the slow path anyway, share the summing
    // loops.
    w.line("static KJ_NOINLINE bool " + entry + "_plain" + signature + " {");
    const std::string wanted = read_params();
    w.line("if (" + wanted + ") return false;", 1);
    host.plain(1, false, "return true;");
    w.line("return false;", 1);
    w.line("}");
    w.line("KJ_EXPORT void " + entry + signature + " {");
    w.line("if (!" + entry + "_plain(kj_args, kj_begin, kj_end)) " + entry + "_sums(kj_args, kj_begin, kj_end);", 1);
    w.line("}");
  }
  w.line("#endif");
}

}  // namespace kjit::codegen
