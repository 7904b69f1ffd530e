// The non-template tracing API of kjit/dsl/trace_api.hpp: thin calls into the active Tracer,
// and the tracing errors whose messages the DSL's templates used to format themselves.
#include "kjit/dsl/trace_api.hpp"

#include <string>

#include "kjit/dsl/tracer.hpp"
#include "kjit/ir/builtins.hpp"

namespace kjit::dsl::detail {

Loc last_loc() { return Tracer::get(Loc{}).last_loc(); }

void fail(Loc loc, const char* message) { Tracer::get(loc).fail(loc, message); }

ir::ValueId emit(ir::Op op, const ir::Type& type, const ir::ValueId* args, size_t count,
                 int64_t imm, Loc loc, uint64_t bits) {
  return Tracer::get(loc).emit(op, type, std::vector<ir::ValueId>(args, args + count), imm, loc, bits);
}

ir::ValueId constant_float(const ir::Type& t, double v, Loc loc) {
  return Tracer::get(loc).constant_float(t, v, loc);
}

ir::ValueId constant_int(const ir::Type& t, int64_t v, Loc loc) {
  return Tracer::get(loc).constant_int(t, v, loc);
}

ir::ValueId call_builtin(ir::Builtin b, const ir::ValueId* args, size_t count, Loc loc) {
  return Tracer::get(loc).call_ids(b, std::vector<ir::ValueId>(args, args + count), loc);
}

ir::ValueId call_builtin_as(ir::Builtin b, const ir::Type& expected, const ir::ValueId* args,
                            size_t count, Loc loc) {
  Tracer& t = Tracer::get(loc);
  ir::ValueId r = t.call_ids(b, std::vector<ir::ValueId>(args, args + count), loc);
  KJIT_CHECK(t.function().type_of(r) == expected,
             std::string("builtin ") + ir::builtin_info(b).name + " typed as " +
                 t.function().type_of(r).str() + ", DSL expected " + expected.str());
  return r;
}

ir::Type type_of(ir::ValueId v) { return Tracer::get(Loc{}).function().type_of(v); }

void use_launch_dims(int ndim, Loc loc) { Tracer::get(loc).use_launch_dims(ndim, loc); }

void fail_float_literal(double v, const ir::Type& t, Loc loc) {
  Tracer::get(loc).fail(loc, "the floating literal " + std::to_string(v) + " cannot stand for a " +
                                 dsl_type_name(t) + "; write an integer literal or convert explicitly");
}

void fail_literal_range(bool is_signed, uint64_t bits, const ir::Type& t, Loc loc) {
  const std::string text = is_signed ? std::to_string(int64_t(bits)) : std::to_string(bits);
  Tracer::get(loc).fail(loc, "the literal " + text + " does not fit in " + dsl_type_name(t));
}

void fail_component(int k, int lanes, const ir::Type& t, Loc loc) {
  Tracer::get(loc).fail(loc, "component " + std::to_string(k) + " of a " + dsl_type_name(t) +
                                 ", which has " + std::to_string(lanes));
}

void fail_shape_dim(int dim, int ndim, Loc loc) {
  Tracer::get(loc).fail(loc, "shape(" + std::to_string(dim) + ") of a " + std::to_string(ndim) + "-D array");
}

void fail_atomic_indices(int ndim, Loc loc) {
  Tracer::get(loc).fail(loc, "an atomic on a " + std::to_string(ndim) + "-D array takes " +
                                 std::to_string(ndim) + " indices");
}

}  // namespace kjit::dsl::detail
