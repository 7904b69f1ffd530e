// The tracer: appends statements to the open region, tracks scopes, reports tracing errors.
#include "kjit/dsl/tracer.hpp"

#include <cstring>

namespace kjit::dsl::detail {

namespace {
thread_local Tracer* t_current = nullptr;

const char* frame_kind_name(FrameKind k) {
  switch (k) {
    case FrameKind::Kernel: return "kernel body";
    case FrameKind::Then: return "If body";
    case FrameKind::Else: return "Else body";
    case FrameKind::LoopBody: return "loop body";
    case FrameKind::WhileCond: return "While condition";
  }
  return "region";
}
}  // namespace

Tracer::Tracer(ir::Function& fn, const std::string& kernel_name)
    : fn_(fn), kernel_name_(kernel_name), previous_(t_current) {
  push(&fn_.body, FrameKind::Kernel, Loc{fn.loc.file, fn.loc.line});
  value_scope_.resize(fn_.values.size(), scope());
  t_current = this;
}

Tracer::~Tracer() { t_current = previous_; }

Tracer* Tracer::current() { return t_current; }

Tracer& Tracer::get(Loc loc) {
  if (!t_current) {
    throw Error(ErrorKind::User,
                std::string("kjit DSL values exist only while a kernel is traced; one was used "
                            "outside a kernel at ") +
                    source_loc(loc).str());
  }
  t_current->note(loc);
  return *t_current;
}

bool Tracer::in_user_code(Loc loc) {
  // libstdc++ and libc++ both install their headers under .../include/c++/<version>/. The
  // last answer is kept: __builtin_FILE gives one pointer per file, so a trace asks rarely.
  thread_local const char* last_file = nullptr;
  thread_local bool last_answer = false;
  if (!loc.file) return false;
  if (loc.file != last_file) {
    last_file = loc.file;
    last_answer = std::strstr(loc.file, "/include/c++/") == nullptr;
  }
  return last_answer;
}

void Tracer::fail(Loc loc, const std::string& message) const {
  Loc where = this->where(loc);
  throw Error(ErrorKind::User, std::string(fn_.is_function ? "device function '" : "kernel '") + kernel_name_ + "' at " +
                                   ir::SourceLoc{where.file, where.line}.str() + ": " + message);
}

void Tracer::push(ir::Block* block, FrameKind kind, Loc loc) {
  uint32_t id = next_scope_++;
  scope_loc_.push_back(loc);
  scope_kind_.push_back(kind);
  frames_.push_back(Frame{block, id, kind, loc});
}

void Tracer::pop() { frames_.pop_back(); }

bool Tracer::scope_open(uint32_t s) const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
    if (it->scope == s) return true;
  return false;
}

std::string Tracer::describe_scope(uint32_t s) const {
  if (s >= scope_loc_.size()) return "an unknown region";
  return std::string("the ") + frame_kind_name(scope_kind_[s]) + " opened at " +
         ir::SourceLoc{scope_loc_[s].file, scope_loc_[s].line}.str();
}

bool Tracer::in_loop() const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
    if (it->kind == FrameKind::LoopBody) return true;
  return false;
}

ir::ValueId Tracer::new_block_arg(ir::Type t) {
  ir::ValueId v = fn_.new_value(t);
  value_scope_.push_back(scope());
  return v;
}

void Tracer::check_use(ir::ValueId v, Loc loc) const {
  if (v == ir::kNoValue)
    fail(loc, "a DSL value is used before it was given one (declare it with an initial value, "
              "or use Var<T> for a value that is assigned later)");
  KJIT_CHECK(v < value_scope_.size(), "value id out of range");
  uint32_t s = value_scope_[v];
  if (!scope_open(s)) {
    fail(loc, "a value created inside " + describe_scope(s) +
                  " is used after that region ended; declare a Var<T> before the region, "
                  "assign it inside, and read it after");
  }
}

ir::ValueId Tracer::emit(ir::Op op, ir::Type type, std::initializer_list<ir::ValueId> args,
                         int64_t imm, Loc loc, uint64_t bits) {
  return emit(op, type, std::vector<ir::ValueId>(args), imm, loc, bits);
}

ir::ValueId Tracer::emit(ir::Op op, ir::Type type, std::vector<ir::ValueId> args, int64_t imm,
                         Loc loc, uint64_t bits) {
  note(loc);
  Loc at = where(loc);
  for (ir::ValueId a : args) check_use(a, at);
  ir::Stmt s;
  s.op = op;
  s.type = type;
  s.args = std::move(args);
  s.imm = imm;
  s.bits = bits;
  s.loc = ir::SourceLoc{at.file, at.line};
  if (!type.is_void()) {
    s.result = fn_.new_value(type);
    value_scope_.push_back(scope());
  }
  s.regions.resize(size_t(ir::op_info(op).regions));
  ir::ValueId result = s.result;
  frames_.back().block->stmts.push_back(std::move(s));
  return result;
}

ir::ValueId Tracer::constant_float(ir::Type t, double v, Loc loc) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return emit(ir::Op::Const, t, {}, 0, loc, bits);
}

ir::ValueId Tracer::constant_int(ir::Type t, int64_t v, Loc loc) {
  return emit(ir::Op::Const, t, {}, 0, loc, uint64_t(v));
}

ir::ValueId Tracer::call(ir::Builtin b, std::initializer_list<ir::ValueId> args, Loc loc) {
  return call_ids(b, std::vector<ir::ValueId>(args), loc);
}

ir::ValueId Tracer::call_ids(ir::Builtin b, std::vector<ir::ValueId> args, Loc loc) {
  note(loc);
  std::vector<ir::Type> types;
  for (ir::ValueId a : args) {
    check_use(a, where(loc));
    types.push_back(fn_.type_of(a));
  }
  std::string error;
  auto result = ir::infer_builtin_type(b, types.data(), int(types.size()), &error);
  if (!result) fail(loc, error);
  return emit(ir::Op::Call, *result, std::move(args), int64_t(b), loc);
}

uint32_t Tracer::declare_var(ir::Type t, Loc loc) {
  fn_.vars.push_back(ir::LocalVar{t, ir::SourceLoc{loc.file, loc.line}});
  uint32_t id = uint32_t(fn_.vars.size() - 1);
  var_scope_.push_back(scope());
  emit(ir::Op::DeclVar, ir::Type::void_type(), {}, id, loc);
  return id;
}

void Tracer::check_var(uint32_t var, Loc loc) const {
  KJIT_CHECK(var < var_scope_.size(), "variable id out of range");
  if (!scope_open(var_scope_[var]))
    fail(loc, "a Var declared inside " + describe_scope(var_scope_[var]) +
                  " is used after that region ended");
}

void Tracer::use_launch_dims(int ndim, Loc loc) {
  if (ndim == 0) return;
  if (fn_.launch_ndim != 0 && fn_.launch_ndim != ndim)
    fail(loc, "the kernel asks for a " + std::to_string(ndim) +
                  "-D launch index here but for a " + std::to_string(fn_.launch_ndim) +
                  "-D one elsewhere; a kernel has one launch dimensionality");
  fn_.launch_ndim = ndim;
}

uint32_t Tracer::add_path(LPath path) {
  paths_.push_back(std::move(path));
  return uint32_t(paths_.size());
}

const LPath* Tracer::path(uint32_t id) const {
  return id >= 1 && id <= paths_.size() ? &paths_[id - 1] : nullptr;
}

int64_t Tracer::intern_string(const std::string& s) {
  for (size_t i = 0; i < fn_.strings.size(); ++i)
    if (fn_.strings[i] == s) return int64_t(i);
  fn_.strings.push_back(s);
  return int64_t(fn_.strings.size() - 1);
}

}  // namespace kjit::dsl::detail

namespace kjit::dsl::detail {
std::vector<ir::Stmt> Tracer::take_tail(size_t from) {
  auto& stmts = frames_.back().block->stmts;
  std::vector<ir::Stmt> tail(std::make_move_iterator(stmts.begin() + long(from)),
                             std::make_move_iterator(stmts.end()));
  stmts.erase(stmts.begin() + long(from), stmts.end());
  return tail;
}
}  // namespace kjit::dsl::detail
