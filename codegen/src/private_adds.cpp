// Which array parameters an entry point only adds into (see private_adds.hpp).
#include "private_adds.hpp"

#include <map>
#include <set>

#include "own_index.hpp"

namespace kjit::codegen {

bool privatizable_element(const ir::Type& element) {
  switch (element.shape) {
    case ir::Shape::Scalar: case ir::Shape::Vector: case ir::Shape::Matrix: case ir::Shape::Quat:
    case ir::Shape::Transform:
      break;
    case ir::Shape::Void: case ir::Shape::Struct:
      return false;
  }
  switch (element.scalar) {
    case ir::Scalar::F32: case ir::Scalar::F64: case ir::Scalar::I32: case ir::Scalar::U32:
    case ir::Scalar::I64: case ir::Scalar::U64:
      return true;
    case ir::Scalar::Bool: case ir::Scalar::I8: case ir::Scalar::U8: case ir::Scalar::I16:
    case ir::Scalar::U16: case ir::Scalar::F16: case ir::Scalar::BF16:
      return false;
  }
  return false;
}

namespace {

/// How one entry point touches one array parameter.
struct Uses {
  int adds = 0;           ///< adds into it (or into its adjoint)
  bool atomic = false;    ///< some of them atomic
  bool elsewhere = false; ///< some of them not at the thread's own index
  bool other = false;     ///< anything else: it cannot be privatized
};

class Analysis {
 public:
  explicit Analysis(const ir::Function& fn) : fn_(fn), own_index_(fn) {
    ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
      if (s.op == ir::Op::Param) param_of_[s.result] = int(s.param());
    });
  }

  /// Per kernel parameter, how the entry point of `kind` touches it (or its adjoint).
  std::vector<Uses> uses(EntryKind kind) const {
    std::vector<Uses> out(fn_.params.size());
    ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
      for (size_t i = 0; i < s.args.size(); ++i) {
        auto p = param_of_.find(s.args[i]);
        if (p == param_of_.end() || !fn_.params[size_t(p->second)].type.is_array()) continue;
        Uses& u = out[size_t(p->second)];
        if (i != 0) u.other = true;  // an array as an index or value: not something kernels do
        else if (kind == EntryKind::Forward) forward_use(s, u);
        else adjoint_use(s, u);
      }
    });
    return out;
  }

 private:
  void forward_use(const ir::Stmt& s, Uses& u) const {
    const bool add = s.op == ir::Op::ArrayAtomic &&
                     (s.atomic_op() == ir::AtomicOp::Add || s.atomic_op() == ir::AtomicOp::Sub);
    if (add && !own_index_.def_use().used(s.result)) {
      ++u.adds;
      u.atomic = true;
      if (!own_index_(s)) u.elsewhere = true;
    } else if (s.op != ir::Op::ArrayShape) {
      u.other = true;
    }
  }

  /// The reverse sweep adds a read's adjoint into the adjoint array; the adjoints of stores
  /// and atomics read it; a device function's adjoint may do anything with it.
  void adjoint_use(const ir::Stmt& s, Uses& u) const {
    if (s.op == ir::Op::ArrayLoad) {
      ++u.adds;
      if (!own_index_(s)) u.atomic = u.elsewhere = true;  // the reverse sweep's add is atomic
    } else if (s.op != ir::Op::ArrayShape) {
      u.other = true;
    }
  }

  const ir::Function& fn_;
  const OwnIndex own_index_;  // with the function's use/def facts
  std::map<ir::ValueId, int> param_of_;
};

}  // namespace

std::vector<PrivateAdd> private_adds(const ir::Function& fn, EntryKind kind) {
  std::vector<PrivateAdd> out;
  if (fn.is_function) return out;
  const std::vector<Uses> uses = Analysis(fn).uses(kind);
  const int offset = kind == EntryKind::Adjoint ? int(fn.params.size()) : 0;
  for (size_t p = 0; p < uses.size(); ++p) {
    const ir::Type& t = fn.params[p].type;
    if (!t.is_array() || !privatizable_element(t.element())) continue;
    if (kind == EntryKind::Adjoint && !t.is_differentiable()) continue;
    const Uses& u = uses[p];
    if (u.other || !u.atomic || u.adds == 0) continue;
    out.push_back({offset + int(p), u.adds, !u.elsewhere});
  }
  return out;
}

std::vector<int> own_adds(const ir::Function& fn) {
  std::vector<int> out;
  if (fn.is_function) return out;
  OwnedArrays owned(fn);
  std::map<int, bool> read;  // differentiable array parameter -> read somewhere
  std::map<ir::ValueId, int> param_of;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) param_of[s.result] = int(s.param());
    if (s.op != ir::Op::ArrayLoad || !s.type.is_differentiable()) return;
    auto p = param_of.find(s.args[0]);
    if (p != param_of.end() && fn.params[size_t(p->second)].type.is_differentiable() && owned(s.args[0]))
      read[p->second] = true;
  });
  for (const auto& [p, yes] : read)
    if (yes) out.push_back(int(fn.params.size()) + p);
  return out;
}

}  // namespace kjit::codegen
