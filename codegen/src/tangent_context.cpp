// The builders tangent rules write IR with: arithmetic that knows exact zeros, constants,
// components and TangentCall statements.
#include <cstring>

#include "kjit/ir/builder.hpp"
#include "kjit/error.hpp"
#include "tangent_rules.hpp"

namespace kjit::codegen {

namespace {
constexpr ir::ValueId kZero = ir::kNoValue;
}  // namespace

TangentContext::TangentContext(ir::Function& fn, ir::Block& out, const ir::Stmt& call,
                               std::vector<ir::ValueId> tangents)
    : fn_(fn), out_(out), call_(call), tangents_(std::move(tangents)) {
  KJIT_CHECK(tangents_.size() == call_.args.size(), "a tangent per argument");
}

ir::ValueId TangentContext::emit(ir::Op op, const ir::Type& t, std::vector<ir::ValueId> args, int64_t imm,
                                 uint64_t bits) {
  return ir::Builder(fn_).add(out_, op, t, std::move(args), imm, call_.loc, bits);
}

ir::ValueId TangentContext::call(ir::Builtin b, std::vector<ir::ValueId> args) {
  std::vector<ir::Type> types;
  for (ir::ValueId a : args) {
    KJIT_CHECK(a != kZero, std::string("a tangent rule passed a zero to ") + ir::builtin_info(b).name);
    types.push_back(type(a));
  }
  std::string error;
  auto t = ir::infer_builtin_type(b, types.data(), int(types.size()), &error);
  KJIT_CHECK(t, "a tangent rule built an ill-typed call: " + error);
  return emit(ir::Op::Call, *t, std::move(args), int64_t(b));
}

ir::ValueId TangentContext::add(ir::ValueId x, ir::ValueId y) {
  if (x == kZero) return y;
  if (y == kZero) return x;
  return call(ir::Builtin::Add, {x, y});
}

ir::ValueId TangentContext::sub(ir::ValueId x, ir::ValueId y) {
  if (y == kZero) return x;
  if (x == kZero) return neg(y);
  return call(ir::Builtin::Sub, {x, y});
}

ir::ValueId TangentContext::neg(ir::ValueId x) { return x == kZero ? kZero : call(ir::Builtin::Neg, {x}); }

ir::ValueId TangentContext::mul(ir::ValueId x, ir::ValueId y) {
  if (x == kZero || y == kZero) return kZero;
  return call(ir::Builtin::Mul, {x, y});
}

ir::ValueId TangentContext::mul_add(ir::ValueId x, ir::ValueId y, ir::ValueId z) {
  if (x == kZero || y == kZero) return z;
  if (z == kZero) return mul(x, y);
  if (type(x).shape == ir::Shape::Scalar && type(y).shape != ir::Shape::Scalar) std::swap(x, y);  // fma's scalar is b
  // Fused exactly where fma's type rule takes the operands (builtin_rules_misc.cpp).
  const ir::Type types[] = {type(x), type(y), type(z)};
  std::string refused;
  if (ir::infer_builtin_type(ir::Builtin::Fma, types, 3, &refused)) return call(ir::Builtin::Fma, {x, y, z});
  return add(mul(x, y), z);
}

ir::ValueId TangentContext::div(ir::ValueId x, ir::ValueId y) {
  if (x == kZero) return kZero;
  return call(ir::Builtin::Div, {x, y});
}

ir::ValueId TangentContext::where(ir::ValueId c, ir::ValueId x, ir::ValueId y) {
  if (x == kZero && y == kZero) return kZero;
  const ir::Type& t = type(x != kZero ? x : y);
  return call(ir::Builtin::Where, {c, value_or_zero(x, t), value_or_zero(y, t)});
}

ir::ValueId TangentContext::constant(double v, const ir::Type& like) {
  const ir::Type t = ir::Type::scalar_of(like.scalar);
  uint64_t bits;
  if (t.is_float()) {
    std::memcpy(&bits, &v, sizeof bits);
  } else {
    bits = uint64_t(int64_t(v));
  }
  return emit(ir::Op::Const, t, {}, 0, bits);
}

ir::ValueId TangentContext::zero(const ir::Type& t) {
  KJIT_CHECK(!t.is_array() && !t.is_void(), "the zero of " + t.str());
  if (t.shape == ir::Shape::Scalar) return emit(ir::Op::Const, t, {}, 0, 0);
  return emit(ir::Op::Construct, t, {}, 0);
}

ir::ValueId TangentContext::value_or_zero(ir::ValueId x, const ir::Type& t) { return x == kZero ? zero(t) : x; }

ir::ValueId TangentContext::index(int i) {
  return emit(ir::Op::Const, ir::Type::scalar_of(ir::Scalar::I32), {}, 0, uint64_t(int64_t(i)));
}

ir::ValueId TangentContext::component(ir::ValueId x, const ir::Type& whole, int i) {
  if (x == kZero) return kZero;
  const ir::Type part = whole.shape == ir::Shape::Matrix ? ir::Type::vector(whole.cols, whole.scalar)
                                                         : ir::Type::scalar_of(whole.scalar);
  return emit(ir::Op::Extract, part, {x, index(i)}, 0);
}

ir::ValueId TangentContext::construct(const ir::Type& t, const std::vector<ir::ValueId>& parts) {
  bool any = false;
  for (ir::ValueId p : parts) any = any || p != kZero;
  if (!any) return kZero;
  std::vector<ir::ValueId> args;
  for (ir::ValueId p : parts) args.push_back(value_or_zero(p, ir::Type::scalar_of(t.scalar)));
  return emit(ir::Op::Construct, t, std::move(args), 0);
}

ir::ValueId TangentContext::insert(ir::ValueId whole, ir::ValueId part, int i) {
  return emit(ir::Op::Insert, type(whole), {whole, part, index(i)}, 0);
}

ir::ValueId TangentContext::tangent_call(ir::Builtin as) {
  bool any = false;
  std::vector<ir::ValueId> args = call_.args;
  std::vector<ir::Type> types;
  for (ir::ValueId a : call_.args) types.push_back(type(a));
  for (size_t k = 0; k < call_.args.size(); ++k) {
    if (!types[k].is_float()) continue;
    any = any || tangents_[k] != kZero;
    args.push_back(value_or_zero(tangents_[k], types[k]));
  }
  if (!any) return kZero;
  std::string error;
  auto t = ir::infer_builtin_type(as, types.data(), int(types.size()), &error);
  KJIT_CHECK(t, "a tangent call of an ill-typed builtin: " + error);
  return emit(ir::Op::TangentCall, *t, std::move(args), int64_t(as), uint64_t(call_.args.size()));
}

}  // namespace kjit::codegen
