// Value handles: binding, the region rule for plain handles, and Var loads and stores.
#include "kjit/dsl/launch_index.hpp"
#include "kjit/dsl/value.hpp"

namespace kjit::dsl {

namespace detail {
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
  if (auto* t = detail::Tracer::current()) home_ = t->scope();
}

ir::ValueId ValueBase::use(Loc loc) const {
  auto& t = detail::Tracer::get(loc);
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
