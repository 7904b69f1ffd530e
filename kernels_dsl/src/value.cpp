// Value handles: binding, the region rule for plain handles, and Var loads and stores.
#include <cctype>

#include "kjit/dsl/launch_index.hpp"
#include "kjit/dsl/tracer.hpp"
#include "kjit/dsl/value.hpp"
#include "kjit/ir/structs.hpp"

namespace kjit::dsl {

namespace detail {

ir::Type component_type(const ir::Type& t, const PathStep& step) {
  switch (step.kind) {
    case PathStep::Field: return ir::struct_info(t.struct_id).fields.at(size_t(step.field)).type;
    case PathStep::Index2: return ir::Type::scalar_of(t.scalar);
    case PathStep::Index:
      if (t.shape == ir::Shape::Matrix) return ir::Type::vector(t.cols, t.scalar);
      return ir::Type::scalar_of(t.scalar);
  }
  return ir::Type();
}

namespace {
std::vector<ir::ValueId> step_indices(const PathStep& step) {
  if (step.kind == PathStep::Index) return {step.i};
  if (step.kind == PathStep::Index2) return {step.i, step.j};
  return {};
}
}  // namespace

ir::ValueId extract_step(ir::ValueId value, const PathStep& step, Loc loc) {
  auto& t = Tracer::get(loc);
  const ir::Type whole = t.function().type_of(value);
  std::vector<ir::ValueId> args{value};
  for (ir::ValueId i : step_indices(step)) args.push_back(i);
  return t.emit(ir::Op::Extract, component_type(whole, step), std::move(args),
                step.kind == PathStep::Field ? step.field : 0, loc);
}

void assign_path(const LPath& path, ir::ValueId value, Loc loc) {
  auto& t = Tracer::get(loc);
  t.check_var(path.var, loc);
  const ir::Type var_type = t.function().vars.at(path.var).type;
  // Read down to the innermost aggregate, then rebuild it bottom up with the new part.
  std::vector<ir::ValueId> levels{t.emit(ir::Op::LoadVar, var_type, {}, path.var, loc)};
  for (size_t k = 0; k + 1 < path.steps.size(); ++k)
    levels.push_back(extract_step(levels.back(), path.steps[k], loc));
  ir::ValueId part = value;
  for (size_t k = path.steps.size(); k-- > 0;) {
    const PathStep& step = path.steps[k];
    const ir::Type whole = t.function().type_of(levels[k]);
    const ir::Type want = component_type(whole, step);
    if (t.function().type_of(part) != want)
      t.fail(loc, "cannot store a " + dsl_type_name(t.function().type_of(part)) + " into a " +
                      dsl_type_name(want) + " component");
    std::vector<ir::ValueId> args{levels[k], part};
    for (ir::ValueId i : step_indices(step)) args.push_back(i);
    part = t.emit(ir::Op::Insert, whole, std::move(args), step.kind == PathStep::Field ? step.field : 0, loc);
  }
  t.emit(ir::Op::StoreVar, ir::Type::void_type(), {part}, path.var, loc);
}

int struct_field_index(const ir::Type& t, const char* name, Loc loc) {
  const ir::StructInfo& info = ir::struct_info(t.struct_id);
  for (size_t k = 0; k < info.fields.size(); ++k)
    if (info.fields[k].name == name) return int(k);
  Tracer::get(loc).fail(loc, "struct " + info.name + " has no field '" + name + "'");
}

ir::ValueId construct_struct(const ir::Type& t, const ir::ValueId* ids, size_t count, Loc loc) {
  auto& tr = Tracer::get(loc);
  std::vector<ir::ValueId> fields(ids, ids + count);
  const ir::StructInfo& info = ir::struct_info(t.struct_id);
  if (fields.size() != info.fields.size())
    tr.fail(loc, "struct " + info.name + " has " + std::to_string(info.fields.size()) +
                     " fields; its constructor got " + std::to_string(fields.size()) + " values");
  for (size_t k = 0; k < fields.size(); ++k)
    if (tr.function().type_of(fields[k]) != info.fields[k].type)
      tr.fail(loc, "field '" + info.fields[k].name + "' of " + info.name + " is a " +
                       dsl_type_name(info.fields[k].type) + ", got a " +
                       dsl_type_name(tr.function().type_of(fields[k])));
  return tr.emit(ir::Op::Construct, t, std::move(fields), 0, loc);
}

ir::ValueId struct_field_literal(const ir::Type& t, int k, bool is_float, double f, int64_t i, Loc loc) {
  auto& tr = Tracer::get(loc);
  const ir::StructInfo& info = ir::struct_info(t.struct_id);
  const ir::Type ft = info.fields.at(size_t(k)).type;
  if (!ft.is_scalar())
    tr.fail(loc, "field '" + info.fields[size_t(k)].name + "' of " + info.name + " is a " +
                     dsl_type_name(ft) + "; a literal cannot stand for it");
  if (ft.is_float()) return tr.constant_float(ft, is_float ? f : double(i), loc);
  if (is_float) tr.fail(loc, "a floating literal for the integer field '" + info.fields[size_t(k)].name + "'");
  return tr.constant_int(ft, ft.is_bool() ? (i != 0) : i, loc);
}

std::string dsl_type_name(const ir::Type& t) {
  if (t.is_scalar()) {
    switch (t.scalar) {
      case ir::Scalar::Bool: return "Bool";
      case ir::Scalar::I8: return "Int8";
      case ir::Scalar::U8: return "UInt8";
      case ir::Scalar::I16: return "Int16";
      case ir::Scalar::U16: return "UInt16";
      case ir::Scalar::I32: return "Int";
      case ir::Scalar::U32: return "UInt32";
      case ir::Scalar::I64: return "Int64";
      case ir::Scalar::U64: return "UInt64";
      case ir::Scalar::F16: return "Half";
      case ir::Scalar::BF16: return "BFloat16";
      case ir::Scalar::F32: return "Float";
      case ir::Scalar::F64: return "Double";
    }
  }
  std::string s = t.str();
  if (!s.empty() && t.shape != ir::Shape::Struct) s[0] = char(std::toupper(s[0]));
  return s;
}
}  // namespace detail

ValueBase::ValueBase() {
  if (auto* t = detail::Tracer::current()) {
    home_ = t->scope();
    owner_ = &t->function();
  }
}

uint32_t ValueBase::var_id() const {
  KJIT_CHECK(kind_ == Kind::Var, "var_id of a handle that is not a Var");
  return var_;
}

uint32_t ValueBase::extend_path(const detail::PathStep& step) const {
  auto& t = detail::Tracer::get(Loc{});
  detail::LPath p;
  if (kind_ == Kind::Var) {
    p.var = var_;
  } else if (const detail::LPath* from = owner_ == &t.function() ? t.path(path_) : nullptr) {
    p = *from;
  } else {
    return 0;
  }
  p.steps.push_back(step);
  return t.add_path(std::move(p));
}

void ValueBase::write_path(ir::ValueId value, const ir::Type& type, Loc loc) const {
  auto& t = detail::Tracer::get(loc);
  if (path_ && owner_ && owner_ != &t.function())
    t.fail(loc, "a value of another function is used here: a device function sees only its "
                "arguments (pass the value as an argument instead of capturing it)");
  const detail::LPath* p = t.path(path_);
  if (!p)
    t.fail(loc, "cannot assign to a " + detail::dsl_type_name(type) +
                    " component of a value that is not a Var (an array element, a parameter or an "
                    "expression); copy it into a Var<...>, change the Var, and store it back");
  detail::assign_path(*p, value, loc);
}

ir::ValueId ValueBase::use(Loc loc) const {
  auto& t = detail::Tracer::get(loc);
  if (owner_ && owner_ != &t.function() && kind_ != Kind::Unbound)
    t.fail(loc, "a value of another function is used here: a device function sees only its "
                "arguments (pass the value as an argument instead of capturing it)");
  switch (kind_) {
    case Kind::Unbound:
      t.fail(loc, "a value is used before it was given one; initialise it where it is "
                  "declared, or declare a Var<T> to assign it later");
    case Kind::Bound:
      t.check_use(id_, loc);
      return id_;
    case Kind::Var:
      t.check_var(var_, loc);
      return t.emit(ir::Op::LoadVar, t.function().vars.at(var_).type, {}, var_, loc);
  }
  return ir::kNoValue;
}

void ValueBase::rebind(ir::ValueId id, const ir::Type& type, Loc loc) {
  auto& t = detail::Tracer::get(loc);
  owner_ = &t.function();
  KJIT_CHECK(kind_ != Kind::Var, "rebind on a Var");
  if (home_ != t.scope() && t.scope_open(home_)) {
    const std::string name = detail::dsl_type_name(type);
    t.fail(loc, "a plain " + name + " created in " + t.describe_scope(home_) +
                    " is assigned inside " + t.describe_scope(t.scope()) +
                    "; a plain value is traced once, so this assignment would neither repeat "
                    "nor stay conditional. Declare it as Var<" + name +
                    "> (a mutable local) instead");
  }
  home_ = t.scope();
  bind(id);
}

void ValueBase::declare_var(const ir::Type& type, ir::ValueId init, Loc loc) {
  auto& t = detail::Tracer::get(loc);
  owner_ = &t.function();
  var_ = t.declare_var(type, loc);
  kind_ = Kind::Var;
  home_ = t.scope();
  store(init, loc);
}

void ValueBase::store(ir::ValueId id, Loc loc) const {
  auto& t = detail::Tracer::get(loc);
  t.check_var(var_, loc);
  const ir::Type& want = t.function().vars.at(var_).type;
  const ir::Type& got = t.function().type_of(id);
  if (want != got)
    t.fail(loc, "cannot store a " + detail::dsl_type_name(got) + " into a Var<" +
                    detail::dsl_type_name(want) + ">");
  t.emit(ir::Op::StoreVar, ir::Type::void_type(), {id}, var_, loc);
}

Int tid(Loc loc) {
  auto& t = detail::Tracer::get(loc);
  return detail::wrap<int32_t>(
      t.emit(ir::Op::ThreadId, ir::Type::scalar_of(ir::Scalar::I32), {}, -1, loc));
}

Int launch_dim(int dim, Loc loc) {
  auto& t = detail::Tracer::get(loc);
  if (dim < 0 || dim > 3) t.fail(loc, "launch_dim(" + std::to_string(dim) + "): dims are 0..3");
  return detail::wrap<int32_t>(
      t.emit(ir::Op::LaunchDim, ir::Type::scalar_of(ir::Scalar::I32), {}, dim, loc));
}

}  // namespace kjit::dsl
