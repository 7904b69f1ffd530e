// The extent analysis: unguarded array accesses at affine functions of the thread index.
#include "kjit/ir/extent_facts.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <unordered_map>


namespace kjit::ir {

namespace {

/// A value as scale * t + offset (t: thread index component `comp`, -1 flat), or a constant
/// (scale 0), or unknown.
struct Affine {
  bool known = false;
  int comp = -2;  ///< -2: no thread index (a constant)
  int64_t scale = 0;
  int64_t offset = 0;
};

constexpr int64_t kLimit = int64_t(1) << 31;  ///< coefficients beyond this are not tracked

bool small(int64_t v) { return v > -kLimit && v < kLimit; }

Affine constant(int64_t v) {
  Affine a;
  a.known = small(v);
  a.offset = v;
  return a;
}

/// Whether an integer type holds every (non-negative, int32) thread index unchanged.
bool wide_int(const Type& t) { return t.is_scalar() && t.is_integer() && scalar_bytes(t.scalar) >= 4; }

Affine combine(Builtin builtin, const Affine& x, const Affine& y) {
  Affine r;
  if (!x.known || !y.known) return r;
  if (x.comp != -2 && y.comp != -2) return r;  // products or sums of two thread indices: not tracked
  const Affine& t = x.comp != -2 ? x : y;
  r.comp = t.comp;
  switch (builtin) {
    case Builtin::Add:
      r.scale = x.scale + y.scale;
      r.offset = x.offset + y.offset;
      break;
    case Builtin::Sub:
      if (y.comp != -2) return Affine{};  // c - t: decreasing, not tracked
      r.scale = x.scale;
      r.offset = x.offset - y.offset;
      break;
    case Builtin::Mul: {
      const Affine& c = x.comp != -2 ? y : x;
      r.scale = t.scale * c.offset;
      r.offset = t.offset * c.offset;
      break;
    }
    default:
      return Affine{};
  }
  r.known = small(r.scale) && small(r.offset);
  return r;
}

bool may_return(const Stmt& s) {
  if (s.op == Op::Return) return true;
  for (const Block& b : s.regions)
    for (const Stmt& t : b.stmts)
      if (may_return(t)) return true;
  return false;
}

class Analysis {
 public:
  explicit Analysis(const Function& fn) : fn_(fn), affine_(fn.values.size()), param_of_(fn.values.size(), -1) {
    out_.accessed.assign(fn.params.size(), false);
  }

  ExtentFacts run() {
    for_each_stmt(fn_.body, [&](const Stmt& s) { note_params(s); });
    for_each_stmt(fn_.body, [&](const Stmt& s) { note_access(s); });
    for (const Stmt& s : fn_.body.stmts) {
      if (may_return(s)) break;  // what follows runs only on some threads' paths
      eval(s);
    }
    return std::move(out_);
  }

 private:
  void note_params(const Stmt& s) {
    if (s.op == Op::Param && s.result != kNoValue && s.type.is_array()) param_of_[s.result] = int(s.param());
  }

  /// Marks arrays whose elements the kernel may touch, anywhere in its body.
  void note_access(const Stmt& s) {
    switch (s.op) {
      case Op::ArrayLoad: case Op::ArrayStore: case Op::ArrayAtomic: case Op::AdjArrayAdd: case Op::AdjArrayRead:
        mark(s.args[0]);
        break;
      case Op::CallFunc:
        for (ValueId a : s.args) mark(a);
        break;
      case Op::Const: case Op::Param: case Op::ThreadId: case Op::LaunchDim: case Op::Call: case Op::Cast:
      case Op::Construct: case Op::Extract: case Op::Insert: case Op::DeclVar: case Op::LoadVar:
      case Op::StoreVar: case Op::ArrayShape: case Op::If: case Op::For: case Op::While: case Op::Break:
      case Op::Continue: case Op::Return: case Op::Print: case Op::TangentCall: case Op::AccumVar:
      case Op::CallAdjoint: case Op::StrongZero: case Op::AccumParam: case Op::Checkpoint: case Op::ReverseSegments: case Op::GradView:
      case Op::GradFunc:  // its arguments are values
        break;
    }
  }

  void mark(ValueId v) {
    if (v < param_of_.size() && param_of_[v] >= 0) out_.accessed[size_t(param_of_[v])] = true;
  }

  /// One statement of the unguarded prefix of the body.
  void eval(const Stmt& s) {
    switch (s.op) {
      case Op::Const:
        if (s.type.is_scalar() && s.type.is_integer()) set(s, constant(s.const_int()));
        break;
      case Op::ThreadId:
        if (s.axis() >= -1 && s.axis() < 4) {
          Affine a;
          a.known = true;
          a.comp = int(s.axis());
          a.scale = 1;
          set(s, a);
        }
        break;
      case Op::Cast:
        if (wide_int(s.type) && !s.args.empty()) set(s, get(s.args[0]));
        break;
      case Op::Call:
        if (wide_int(s.type) && s.args.size() == 2)
          set(s, combine(s.builtin(), get(s.args[0]), get(s.args[1])));
        break;
      case Op::ArrayLoad: case Op::ArrayStore: case Op::ArrayAtomic:
        record(s);
        break;
      case Op::Param: case Op::LaunchDim: case Op::Construct: case Op::Extract: case Op::Insert:
      case Op::DeclVar: case Op::LoadVar: case Op::StoreVar: case Op::ArrayShape: case Op::If: case Op::For:
      case Op::While: case Op::Break: case Op::Continue: case Op::Return: case Op::Print: case Op::CallFunc:
      case Op::GradFunc: case Op::TangentCall: case Op::AccumVar: case Op::CallAdjoint: case Op::StrongZero: case Op::AdjArrayAdd: case Op::AdjArrayRead: case Op::AccumParam: case Op::Checkpoint: case Op::ReverseSegments: case Op::GradView:
        break;  // no affine value; regions are guarded (or repeated) and not looked into
    }
  }

  void record(const Stmt& s) {
    if (s.args.empty()) return;
    int param = s.args[0] < param_of_.size() ? param_of_[s.args[0]] : -1;
    if (param < 0) return;  // an array over an address, not a parameter
    const int ndim = fn_.type_of(s.args[0]).ndim;
    for (int d = 0; d < ndim && size_t(1 + d) < s.args.size(); ++d) {
      Affine a = get(s.args[size_t(1 + d)]);
      if (!a.known || a.comp == -2 || a.scale < 1 || a.offset < 0) continue;
      ExtentFact f;
      f.param = param;
      f.dim = d;
      f.launch_dim = a.comp;
      f.scale = a.scale;
      f.offset = a.offset;
      f.loc = s.loc;
      auto same = [&](const ExtentFact& g) {
        return g.param == f.param && g.dim == f.dim && g.launch_dim == f.launch_dim && g.scale == f.scale &&
               g.offset == f.offset;
      };
      if (std::none_of(out_.unguarded.begin(), out_.unguarded.end(), same)) out_.unguarded.push_back(f);
    }
  }

  void set(const Stmt& s, const Affine& a) {
    if (s.result != kNoValue && s.result < affine_.size()) affine_[s.result] = a;
  }
  Affine get(ValueId v) const { return v < affine_.size() ? affine_[v] : Affine{}; }

  const Function& fn_;
  std::vector<Affine> affine_;
  std::vector<int> param_of_;
  ExtentFacts out_;
};

}  // namespace

int64_t ExtentFact::needed(int64_t threads) const {
  if (threads <= 0) return 0;
  __int128 n = __int128(scale) * (threads - 1) + offset + 1;
  return n > INT64_MAX ? INT64_MAX : int64_t(n);
}

std::string ExtentFact::index_str() const {
  std::string t = launch_dim < 0 ? "tid()" : "tid(" + std::to_string(launch_dim) + ")";
  if (scale != 1) t = std::to_string(scale) + "*" + t;
  if (offset) t += " + " + std::to_string(offset);
  return t;
}

ExtentFacts extent_facts(const Function& fn) { return Analysis(fn).run(); }

}  // namespace kjit::ir
