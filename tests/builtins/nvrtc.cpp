// Every builtin compiles with NVRTC for sm_90 in the test run, forward and adjoint (no GPU is
// needed to compile): one kernel per builtin with adjoints, one per further scalar variant
// forward only, and every other module of this suite (dsl_surface's kernel calls every
// builtin through the DSL). Modules compile on two threads. And every differentiable
// builtin's tangent rule, with its second derivatives, for sm_80 and sm_90.
#include <doctest/doctest.h>

#include <future>
#include <map>
#include <memory>
#include <set>

#include "builtin_kernel.hpp"
#include "forward_cases.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/codegen/tangent.hpp"
#include "kjit/ir/builtins.hpp"
#include "kjit/kjit.hpp"
#include "nvrtc_check.hpp"

using namespace kjit;

namespace {
/// One kernel per builtin (its first signature, float32 when it has one), `first`; one per
/// builtin and integer or bool type, `further` (float64 instantiates the same templates as
/// float32). Registered while this lives.
struct BuiltinKernels {
  std::vector<std::unique_ptr<KernelDef>> kernels;
  std::vector<const KernelDef*> first, further;
  std::vector<ir::Builtin> first_builtin;  ///< the builtin of each of `first`
  BuiltinKernels() {
    std::set<std::pair<std::string, int>> seen;
    int counter = 0;
    for (const test::FwdCase& c : test::all_forward_cases()) {
      std::vector<ir::Scalar> variants = c.variants;
      std::stable_partition(variants.begin(), variants.end(), [](ir::Scalar s) { return s == ir::Scalar::F32; });
      for (ir::Scalar s : variants) {
        if (s == ir::Scalar::F64 && variants.size() > 1) continue;
        bool first_of_builtin = seen.insert({c.builtin, -1}).second;
        if (!first_of_builtin && !seen.insert({c.builtin, int(s)}).second) continue;
        std::vector<ir::Type> types;
        for (const test::ArgSpec& a : c.args) types.push_back(a.type(s));
        kernels.push_back(test::make_builtin_kernel("nvrtc::" + c.builtin + "_" + std::to_string(counter++),
                                                    "builtins_nvrtc", *ir::find_builtin(c.builtin), types));
        (first_of_builtin ? first : further).push_back(kernels.back().get());
        if (first_of_builtin) first_builtin.push_back(*ir::find_builtin(c.builtin));
      }
    }
  }
};
}  // namespace

TEST_CASE("every builtin and every module of the suite compiles with NVRTC for sm_90") {
  BuiltinKernels b;
  const std::vector<const KernelDef*>& with_adjoints = b.first;
  std::map<std::string, std::string> texts;
  texts["builtins (adjoints)"] = test::module_text("builtins_nvrtc", with_adjoints, true);
  texts["builtins (further types)"] = test::module_text("builtins_nvrtc_types", b.further, false);
  const std::set<std::string> broken_on_purpose = {"builtins_component_errors", "builtins_function_errors",
                                                    "builtins_early_return_errors", "builtins_func_grad_errors",
                                                    "builtins_nvrtc"};
  for (const ModuleDef* m : Registry::get().modules()) {
    if (m->name().rfind("builtins_", 0) != 0 || broken_on_purpose.count(m->name())) continue;
    // dsl_surface's one big kernel: forward only (its adjoints are the first module's).
    texts[m->name()] = test::module_text(m->name(), m->kernels(), m->name() != "builtins_surface");
  }
  std::vector<std::string> names;
  for (const auto& [name, text] : texts) names.push_back(name);
  auto compile = [&](size_t from) {
    std::map<std::string, std::pair<std::string, double>> logs;
    for (size_t i = from; i < names.size(); i += 2) {
      double seconds = 0;
      std::string log = test::nvrtc_compile(texts[names[i]], "sm_90", &seconds);
      logs[names[i]] = {log, seconds};
    }
    return logs;
  };
  auto other = std::async(std::launch::async, compile, size_t(1));
  auto logs = compile(0);
  for (auto& entry : other.get()) logs.insert(entry);
  for (const auto& [name, result] : logs) {
    INFO(name << ":\n" << result.first.substr(0, 20000));
    CHECK(result.first.empty());
    MESSAGE(name << ": NVRTC sm_90 " << result.second << " s");
  }
  CHECK(logs.size() >= 10);
  CHECK(with_adjoints.size() == size_t(ir::kBuiltinCount) - 16);  // all but sample_cdf, lower_bound, ..., the 11 mesh traversals
}

TEST_CASE("every differentiable builtin's tangent compiles with NVRTC for sm_80 and sm_90, second derivatives included") {
  // The tangent kernels of the builtins' kernels, in one module with adjoint entry points
  // (those of the dual-evaluated builtins are refused: they have none, and are counted).
  BuiltinKernels b;
  std::vector<ir::Function> tangents;
  tangents.reserve(b.first.size());
  for (size_t i = 0; i < b.first.size(); ++i)
    if (ir::builtin_info(b.first_builtin[i]).differentiable) tangents.push_back(codegen::tangent_kernel(b.first[i]->ir()));
  std::vector<const ir::Function*> fns;
  for (const ir::Function& t : tangents) fns.push_back(&t);
  codegen::CodegenOptions o;
  o.line_directives = false;
  codegen::GeneratedModule m = codegen::generate_module("builtins_nvrtc.tangent", fns, o);
  // Exactly the tangents without a TangentCall (a dual-number evaluation) have an adjoint.
  std::set<std::string> expected;
  size_t adjoints = 0;
  for (const ir::Function& t : tangents) {
    bool dual = false;
    ir::for_each_stmt(t.body, [&](const ir::Stmt& s) { dual |= s.op == ir::Op::TangentCall; });
    expected.insert(codegen::entry_name(t.name, codegen::EntryKind::Forward));
    if (!dual) adjoints += expected.insert(codegen::entry_name(t.name, codegen::EntryKind::Adjoint)).second;
  }
  CHECK(std::set<std::string>(m.entry_points.begin(), m.entry_points.end()) == expected);
  CHECK(m.entry_points.size() == expected.size());
  CHECK(adjoints > tangents.size() / 2);
  CHECK(adjoints < tangents.size());  // some are dual-evaluated
  CHECK(m.text.find("kj::tangent_part<") != std::string::npos);  // dual evaluations
  CHECK(m.text.find("tangent_curlnoise(") != std::string::npos);  // prelude tangent functions
  auto compile = [&](std::string arch) {
    double seconds = 0;
    std::string log = test::nvrtc_compile(m.text, arch, &seconds);
    return std::make_pair(log, seconds);
  };
  auto sm80 = std::async(std::launch::async, compile, "sm_80");
  auto sm90 = compile("sm_90");
  for (auto [arch, result] : {std::make_pair(std::string("sm_80"), sm80.get()), std::make_pair(std::string("sm_90"), sm90)}) {
    INFO(arch << ":\n" << result.first.substr(0, 20000));
    CHECK(result.first.empty());
    MESSAGE(tangents.size() << " builtin tangents (" << adjoints << " with adjoints): NVRTC " << arch << " "
                            << result.second << " s");
  }
}
