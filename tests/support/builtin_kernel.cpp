// Run-time construction of one-builtin kernels for table-driven tests.
#include "builtin_kernel.hpp"

#include "kjit/dsl/tracer.hpp"

namespace kjit::test {

ir::Type builtin_result(ir::Builtin builtin, const std::vector<ir::Type>& args) {
  std::string error;
  auto r = ir::infer_builtin_type(builtin, args.data(), int(args.size()), &error);
  if (!r) throw Error(ErrorKind::User, error);
  return *r;
}

std::unique_ptr<KernelDef> make_builtin_kernel(const std::string& name, const std::string& module,
                                               ir::Builtin builtin, const std::vector<ir::Type>& args) {
  ir::Type result = builtin_result(builtin, args);
  std::vector<KernelParam> params;
  for (size_t k = 0; k < args.size(); ++k) params.push_back({"a" + std::to_string(k), ir::Type::array(args[k], 1)});
  params.push_back({"out", ir::Type::array(result, 1)});
  ir::SourceLoc loc{__FILE__, __LINE__};
  auto trace = [builtin, args, result, loc, n = params.size()](const ir::ValueId* param_ids) {
    dsl::Loc l{loc.file, loc.line};
    auto& t = dsl::detail::Tracer::get(l);
    std::vector<ir::ValueId> arrays(param_ids, param_ids + n);
    ir::ValueId i = t.emit(ir::Op::ThreadId, ir::Type::scalar_of(ir::Scalar::I32), {}, -1, l);
    std::vector<ir::ValueId> values;
    for (size_t k = 0; k < args.size(); ++k)
      values.push_back(t.emit(ir::Op::ArrayLoad, args[k], {arrays[k], i}, 0, l));
    ir::ValueId r = t.emit(ir::Op::Call, result, values, int64_t(builtin), l);
    t.emit(ir::Op::ArrayStore, ir::Type::void_type(), {arrays.back(), i, r}, 0, l);
  };
  return std::make_unique<KernelDef>(name, module, params, loc, detail::ir_kernel_body(trace));
}

}  // namespace kjit::test
