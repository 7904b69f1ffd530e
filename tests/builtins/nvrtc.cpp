// Every builtin compiles with NVRTC for sm_90 in the test run, forward and adjoint (no GPU is
// needed to compile): one kernel per builtin with adjoints, one per further scalar variant
// forward only, and every other module of this suite (dsl_surface's kernel calls every
// builtin through the DSL). Modules compile on two threads.
#include <doctest/doctest.h>

#include <future>
#include <map>
#include <memory>
#include <set>

#include "builtin_kernel.hpp"
#include "forward_cases.hpp"
#include "kjit/ir/builtins.hpp"
#include "kjit/kjit.hpp"
#include "nvrtc_check.hpp"

using namespace kjit;

TEST_CASE("every builtin and every module of the suite compiles with NVRTC for sm_90") {
  // One kernel per builtin (its first signature, float32 when it has one) with adjoints; one
  // per builtin and integer or bool type forward only (float64 instantiates the same
  // templates as float32).
  std::vector<std::unique_ptr<KernelDef>> kernels;
  std::vector<const KernelDef*> with_adjoints, forward_only;
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
      kernels.push_back(test::make_builtin_kernel("nvrtc::" + c.builtin + "_" + std::to_string(counter++), "builtins_nvrtc",
                                                  *ir::find_builtin(c.builtin), types));
      (first_of_builtin ? with_adjoints : forward_only).push_back(kernels.back().get());
    }
  }
  std::map<std::string, std::string> texts;
  texts["builtins (adjoints)"] = test::module_text("builtins_nvrtc", with_adjoints, true);
  texts["builtins (further types)"] = test::module_text("builtins_nvrtc_types", forward_only, false);
  const std::set<std::string> broken_on_purpose = {"builtins_component_errors", "builtins_function_errors", "builtins_nvrtc"};
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
  CHECK(with_adjoints.size() == size_t(ir::kBuiltinCount) - 5);  // all but sample_cdf, lower_bound, ...
}
