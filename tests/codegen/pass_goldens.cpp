// The IR after each of codegen's passes (kjit/codegen/passes.hpp) for the example kernels,
// forward with the adjoint's analyses and their tangent kernels, against golden files
// (KJIT_UPDATE_GOLDEN=1 rewrites them); and what the pass list guarantees of every kernel.
#include <doctest/doctest.h>
#include <string>

#include "golden.hpp"
#include "kjit/codegen/passes.hpp"
#include "kjit/codegen/tangent.hpp"
#include "kjit/ir/verifier.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"
#include "test_support.hpp"

using namespace kjit;

namespace {

std::vector<const KernelDef*> module_kernels(const std::string& module) {
  return Registry::get().find_module(module)->kernels();
}

std::string listing(const std::vector<codegen::PassSnapshot>& snapshots) {
  std::string text;
  for (const codegen::PassSnapshot& s : snapshots) text += "\n# after " + s.pass + ": " + s.function + "\n" + s.ir;
  return text;
}

}  // namespace

namespace branch_tests {
using namespace kjit::dsl;
KJIT_MODULE(codegen_branches)
/// Branches without a loop: nested, with else sides, a variable stored in each side and a
/// value (w) defined in a side whose sweep reads it.
KJIT_KERNEL(branchy, (Array<double> x, Array<double> out)) {
  Int i = tid();
  Double v = x[i];
  Var<Double> y = 0.0;
  If(v > 0.5, [&] {
    Double w = v * v;
    If(w > 2.0, [&] { y = sin(w); }).Else([&] { y = w * 3.0; });
  }).Else([&] { y = exp(v); });
  out[i] = y;
}
}  // namespace branch_tests

namespace loop_tests {
using namespace kjit::dsl;
KJIT_MODULE(codegen_loops)
/// A While in a For, each carrying a variable across its iterations (checkpointed), a branch
/// inside, a value read only in the loops (kept at their entry), and a break (a flag).
KJIT_KERNEL(nested, (Array<double> x, Int n, Array<double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Var<Double> scale = x[i] * 0.5;
  For(0, n, [&](Int k) {
    Var<Int> m = 0;
    While([&] { return m < k + 2; }, [&] {
      y = cos(y) * scale + y * 0.7;
      If(y > 1.2, [&] { Break(); });
      m = m + 1;
    });
  });
  out[i] = y;
}
}  // namespace loop_tests

TEST_CASE("the IR after each pass of the example kernels matches the golden files") {
  (void)loop_tests::nested.def().ir();
  for (const char* module : {"saxpy", "springs", "loops", "codegen_loops"}) {
    INFO("module " << module);
    std::string text = "# codegen's passes over module " + std::string(module) + "'s kernels\n";
    codegen::CodegenOptions with_adjoint;
    for (const KernelDef* k : module_kernels(module)) {
      text += "\n## " + k->name() + ": forward and adjoint\n" + listing(codegen::pass_snapshots({&k->ir()}, with_adjoint));
      const ir::Function tangent = codegen::tangent_kernel(k->ir());
      codegen::CodegenOptions forward_only;
      forward_only.enable_adjoint = false;
      text += "\n## " + k->name() + ": tangent\n" + listing(codegen::pass_snapshots({&tangent}, forward_only));
    }
    const std::string diff = test::compare_golden(std::string("passes/") + module + ".passes", text);
    CHECK_MESSAGE(diff.empty(), diff);
  }
}

TEST_CASE("the pass list: traced first, every kernel lowered once, analyses only where a printer reads them") {
  const KernelDef* damp = nullptr;
  for (const KernelDef* k : module_kernels("loops"))
    if (k->name() == "demo::damp") damp = k;
  REQUIRE(damp);
  codegen::CodegenOptions o;
  std::vector<std::string> passes;
  for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&damp->ir()}, o)) {
    CHECK(s.function == "kernel demo::damp");
    passes.push_back(s.pass);
  }
  CHECK(passes == std::vector<std::string>{"traced", "lower_jumps", "adjoint_obstacle", "sweep_spans", "forward_lanes",
                                           "adjoint_lanes", "adjoint_loops", "reverse_transform"});
  o.enable_adjoint = false;
  passes.clear();
  for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&damp->ir()}, o)) passes.push_back(s.pass);
  CHECK(passes == std::vector<std::string>{"traced", "lower_jumps", "forward_lanes"});
  // Bounds-checked modules get no lane functions, so no lane analyses either.
  o.bounds_check = true;
  passes.clear();
  for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&damp->ir()}, o)) passes.push_back(s.pass);
  CHECK(passes == std::vector<std::string>{"traced", "lower_jumps"});
}

TEST_CASE("the reverse transform builds the kernels' adjoints, behind its one predicate") {
  // A kernel swept back in one span gets its adjoint from the reverse transform (a pass, its IR
  // verified), printed by the scalar printer, damp's (a loop and a branch) too; every kernel
  // with CodegenOptions::reverse_transform off (KJIT_REVERSE_IR=0) gets the adjoint emitter's.
  auto passes_of = [](const KernelDef& k, const codegen::CodegenOptions& o) {
    std::vector<std::string> passes;
    for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&k.ir()}, o)) passes.push_back(s.pass);
    return passes;
  };
  auto text_of = [](const std::string& module, const codegen::CodegenOptions& o) {
    std::vector<const ir::Function*> fns;
    for (const KernelDef* k : module_kernels(module)) fns.push_back(&k->ir());
    return codegen::generate_module(module, fns, o).text;
  };
  const std::string marker = "the reverse transform's adjoint";
  codegen::CodegenOptions o;
  o.reverse_transform = true;
  CHECK(passes_of(demo::saxpy.def(), o) ==
        std::vector<std::string>{"traced", "lower_jumps", "adjoint_obstacle", "sweep_spans", "forward_lanes",
                                 "adjoint_loops", "reverse_transform"});
  CHECK(passes_of(demo::damp.def(), o).back() == "reverse_transform");
  const std::string saxpy = text_of("saxpy", o), loops = text_of("loops", o);
  CHECK(saxpy.find(marker) != std::string::npos);
  CHECK(saxpy.find("// forward replay (no stores") == std::string::npos);
  const size_t body = saxpy.find("kjit_demo__saxpy_adj_body");
  REQUIRE(body != std::string::npos);
  CHECK(saxpy.find("KJ_SZ_IF(", body) != std::string::npos);  // a * x[i]: the product's strong zero
  CHECK(saxpy.find("if (adj_p_y.data) kj::own_add(adj_p_y, kj::elem(adj_p_y, v4), ", body) != std::string::npos);
  // damp's loop: replayed keeping checkpoints of w (the emitter's kj_ckpt0_ slots, by the same
  // code), swept back segment by segment, each iteration's w restored, replayed and swept back.
  const size_t damp = loops.find("kjit_demo__damp_adj_body");
  REQUIRE(damp != std::string::npos);
  CHECK(loops.find(marker, damp) != std::string::npos);
  for (const char* text : {"kj_n0 = 0; kj_stride0 = 1; kj_count0 = 0; kj_ovf0 = false;", "kj_ckpt0_var0[kj_count0] = var0;",
                           "kj::report_status(dim, 1);", "for (kj_int32 kj_seg0 = kj_count0 - 1;",
                           "var0 = kj_seg0_var0[kj_k0 - kj_k00];"})
    CHECK_MESSAGE(loops.find(text, damp) != std::string::npos, text);
  o.reverse_transform = false;
  CHECK(passes_of(demo::saxpy.def(), o).back() == "adjoint_loops");
  CHECK(text_of("saxpy", o).find(marker) == std::string::npos);
  CHECK(o.fingerprint() != codegen::CodegenOptions{}.fingerprint());  // a module of each in the cache
  o.reverse_transform = true;
  CHECK(o.fingerprint() == codegen::CodegenOptions{}.fingerprint());  // on by default
  // springs' gathers, atomic adds and length (a strong zero) are covered too.
  const std::string springs = text_of("springs", o);
  CHECK(springs.find(marker) != std::string::npos);
  CHECK(springs.find("kj::adj_length_ref(", springs.find("kjit_demo__springs_adj_body")) != std::string::npos);
  // Branches too: the sweep's branches test the replay's conditions, and w, which the inner
  // branch's sweep reads, is kept in a variable by the replay and loaded in the sweep's side.
  (void)branch_tests::branchy.def().ir();
  CHECK(passes_of(branch_tests::branchy.def(), o).back() == "reverse_transform");
  std::string ir;
  for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&branch_tests::branchy.def().ir()}, o))
    if (s.pass == "reverse_transform") ir = s.ir;
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = ir.find(what); at != std::string::npos; at = ir.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count(" if %") == 4);  // two replayed, two swept back
  CHECK(count("call_adjoint sin ") == 1);
  CHECK(count("call_adjoint exp ") == 1);
  CHECK(count("call_adjoint mul ") == 2);  // v * v, w * 3.0
  CHECK(count(" = const 3 ") == 2);  // in the replay and again in the sweep's side, not kept
  const std::string branchy = text_of("codegen_branches", o);
  const size_t adj = branchy.find("kjit_branch_tests__branchy_adj_body");
  REQUIRE(adj != std::string::npos);
  CHECK(branchy.find(marker, adj) != std::string::npos);
  CHECK(branchy.find("kj::adj_sin_ref(", adj) != std::string::npos);
  CHECK(branchy.find("kj::adj_exp_ref(", adj) != std::string::npos);
  // Nested loops: each replayed with its checkpoints, each swept back in segments (the While
  // inside the For's reversed iteration, after that iteration's replay), their IR verified.
  CHECK(passes_of(loop_tests::nested.def(), o).back() == "reverse_transform");
  ir.clear();
  for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&loop_tests::nested.def().ir()}, o))
    if (s.pass == "reverse_transform") ir = s.ir;
  CHECK(count("checkpoint declare loop ") == 2);
  CHECK(count("reverse_segments loop 0 ") == 1);
  CHECK(count("reverse_segments loop 1 ") == 1);
  CHECK(count("checkpoint step loop 1 ") == 3);  // the While replayed forward, then in the For's record and reverse
  CHECK(count("call_adjoint cos ") == 1);
}
