// Device functions' own adjoints (adj_<f>) as the reverse transform builds them: with array
// parameters, value parameters, a loop and an early return; the same bits as the adjoint
// emitter's (KJIT_REVERSE_IR=0), and against central differences.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gradient_support.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "test_support.hpp"

using namespace kjit;

namespace fadj_transform {
KJIT_MODULE(autodiff_function_adjoints)
#include "function_adjoint_kernels.hpp"
}  // namespace fadj_transform

namespace fadj_emitter {
KJIT_MODULE(autodiff_function_adjoints_emitter)
#include "function_adjoint_kernels.hpp"
}  // namespace fadj_emitter

namespace {
using autodiff_support::expect_pass;
using autodiff_support::random_values;

/// The gradients of a, w and s of `kernel` at n = `steps` (each module is loaded, with the
/// environment's adjoint writer, at its first launch).
template <class K>
std::vector<double> gradients(const K& kernel, int steps) {
  const int threads = 7;
  auto A = from_vector(random_values(threads, -0.9, 0.9, 31)), W = from_vector(random_values(3, 0.5, 1.1, 32));
  auto I = from_vector(std::vector<int>{0, 2, 2, 5, 1, 6, 2});
  auto acc = zeros<double>({threads}), out = zeros<double>({threads});
  launch(kernel, threads, A, W, I, 0.7, steps, acc, out);
  auto ga = zeros<double>({threads}), gw = zeros<double>({3}), gs = zeros<double>({1});
  auto gacc = from_vector(random_values(threads, 0.5, 1.0, 33)), gout = from_vector(random_values(threads, 0.5, 1.0, 34));
  launch_adjoint(kernel, threads, {A, W, I, 0.7, steps, acc, out}, {ga, gw, {}, gs, {}, gacc, gout});
  std::vector<double> g = ga.to_vector<double>();
  for (double v : gw.to_vector<double>()) g.push_back(v);
  g.push_back(gs.to_vector<double>().at(0));
  return g;
}
}  // namespace

TEST_CASE("device functions' own adjoints by the reverse transform: the emitter's bits") {
  // The transform builds all three functions' adjoints (their bodies open with its comment);
  // with it off, the emitter writes them.
  const ir::Function& fn = fadj_transform::through_functions.def().ir();
  codegen::CodegenOptions emitter;
  emitter.reverse_transform = false;
  const std::string marker = "\n  // the reverse transform's adjoint";
  auto adjoints_by_transform = [&](const codegen::CodegenOptions& o) {
    const std::string text = codegen::generate_module("autodiff_function_adjoints", {&fn}, o).text;
    int n = 0;
    for (size_t at = text.find("void adj_kjf_"); at != std::string::npos; at = text.find("void adj_kjf_", at + 1))
      n += text.compare(text.find('\n', at), marker.size(), marker) == 0;
    return n;
  };
  CHECK(adjoints_by_transform({}) == 3);
  CHECK(adjoints_by_transform(emitter) == 0);
  // The same bits: the emitter's module loaded under KJIT_REVERSE_IR=0, the transform's without.
  for (int steps : {0, 4, 9}) {  // no loop, a loop, the early return
    INFO("steps = " << steps);
    std::vector<double> by_emitter;
    {
      kjit::test::ScopedEnv emitter_writes("KJIT_REVERSE_IR", "0");
      by_emitter = gradients(fadj_emitter::through_functions, steps);
    }
    const std::vector<double> by_transform = gradients(fadj_transform::through_functions, steps);
    REQUIRE(by_emitter.size() == by_transform.size());
    CHECK(std::memcmp(by_emitter.data(), by_transform.data(), by_emitter.size() * sizeof(double)) == 0);
  }
  // Against central differences.
  const int threads = 7;
  auto A = from_vector(random_values(threads, -0.9, 0.9, 35)), W = from_vector(random_values(3, 0.5, 1.1, 36));
  auto I = from_vector(std::vector<int>{0, 2, 2, 5, 1, 6, 2});
  for (int steps : {0, 4, 9}) {
    INFO("steps = " << steps);
    expect_pass(check_gradients(fadj_transform::through_functions, threads,
                                {A, W, I, 0.7, steps, zeros<double>({threads}), zeros<double>({threads})}));
  }
}
