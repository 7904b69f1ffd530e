// Long kernels, whose adjoint sweeps back span by span (ModuleOptions::adjoint_span; each span
// run again from its checkpoint before its reverse): the same gradients, bit for bit, as one
// replay and one sweep, and right against finite differences, with variables, branches,
// dynamic loops with Break, atomics, a device function, a value parameter and an early
// Return across span edges; CUDA text compiled for sm_80 and sm_90.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_builds.hpp"
#include "gradient_support.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/runtime/gradcheck.hpp"

using namespace kjit;
using namespace kjit::dsl;

namespace {

const auto blend = func("long_blend", [](Double a, Double b) { return a * 0.75 + sin(b) * 0.25; });

/// `rounds` rounds of five kinds of statement over two variables: the body has about 30 IR
/// statements per round, so spans of 8 cut it (and every loop, branch and call) dozens of times.
auto long_body(int rounds) {
  return [rounds](Array<double> x, Double k, Int n, Array<double> acc, Array<double> out) {
    Int i = tid();
    Var<Double> y = x[i];
    Var<Double> z = 0.5;
    for (int r = 0; r < rounds; ++r) {
      const double c = 0.01 * (r + 1);
      y = y * k + c;
      If(y > 0.0, [&] { z = z + sin(y) * 0.5; }).Else([&] { z = z - y * y * 0.25; });
      For(0, n, [&](Int j) {
        y = y * 0.9 + 0.05 * cos(z + Double(j));
        If(y > 3.0, [&] { Break(); });
      });
      atomic_add(acc, (i + r) % 4, y * z);
      z = blend(z, y);
      if (r == rounds / 2) If(x[i] < -0.9, [&] { Return(); });
    }
    out[i] = y + z * z;
  };
}

using LongKernel = kjit::detail::KernelRegistration<Array<double>, Double, Int, Array<double>, Array<double>>;

LongKernel long_kernel(const std::string& module, int rounds, int span) {
  ModuleOptions o;
  o.adjoint_span = span;
  kjit::module(module).set_options(o);
  return make_kernel<Array<double>, Double, Int, Array<double>, Array<double>>(
      module + "::long", module, {"x", "k", "n", "acc", "out"}, long_body(rounds));
}

struct Gradients {
  std::vector<double> x, acc_in, out_in;
  double k = 0;
};

/// The adjoint of `kernel` at fixed inputs and output weights.
Gradients adjoint(const LongKernel& kernel, int threads) {
  std::vector<double> xs(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) xs[size_t(t)] = -1.0 + 2.1 * t / threads;  // some return early
  auto X = from_vector(xs), acc = zeros<double>({4}), out = zeros<double>({threads});
  launch(kernel, threads, X, 0.8, 3, acc, out);
  std::vector<double> w_out(static_cast<size_t>(threads)), w_acc{0.3, -0.7, 1.1, 0.2};
  for (int t = 0; t < threads; ++t) w_out[size_t(t)] = 0.5 + 0.25 * (t % 3);
  auto gx = zeros<double>({threads}), gacc = from_vector(w_acc), gout = from_vector(w_out);
  Gradients g;
  launch_adjoint(kernel, threads, {X, 0.8, 3, acc, out}, {gx, &g.k, {}, gacc, gout});
  g.x = gx.to_vector<double>();
  g.acc_in = gacc.to_vector<double>();
  g.out_in = gout.to_vector<double>();
  return g;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("a long adjoint swept in spans gives the gradients of one sweep, bit for bit") {
  const LongKernel whole = long_kernel("autodiff_long_whole", 12, 0);
  const LongKernel spans = long_kernel("autodiff_long_spans", 12, 8);
  // The spans are there: the text runs spans again from their checkpoints; the whole one not.
  const codegen::CodegenOptions cut = [] {
    codegen::CodegenOptions o;
    o.adjoint_span = 8;
    return o;
  }();
  const std::string text = codegen::generate_module("autodiff_long_spans", {&spans.def().ir()}, cut).text;
  CHECK(text.find("span 1 again, from its checkpoint") != std::string::npos);
  CHECK(text.find("kj::opaque(") != std::string::npos);
  // Each span is swept in a function of its own, which the body calls.
  const std::string fn = "void kjit_autodiff_long_spans__long_adj_span1(";
  const size_t def = text.find(fn);
  CHECK(def != std::string::npos);
  CHECK(text.rfind("KJ_SPAN_FUNC", def) != std::string::npos);
  CHECK(text.find("kjit_autodiff_long_spans__long_adj_span1(", def + fn.size()) != std::string::npos);
  codegen::CodegenOptions one = cut;
  one.adjoint_span = 0;
  CHECK(codegen::generate_module("autodiff_long_whole", {&whole.def().ir()}, one).text.find("span 1 again") ==
        std::string::npos);

  for (int threads : {1, 7, 37}) {  // 37: lane blocks of the cpu and a tail
    CAPTURE(threads);
    const Gradients a = adjoint(whole, threads), b = adjoint(spans, threads);
    CHECK(same_bits(a.x, b.x));
    CHECK(same_bits({a.k}, {b.k}));
    CHECK(same_bits(a.acc_in, b.acc_in));
    CHECK(a.k != 0.0);  // the value parameter's adjoint is summed over threads
  }
}

namespace {
/// A device function long enough for spans of 8: its adjoint sweeps them inline (only a
/// kernel's spans become functions of their own).
const auto long_chain = func("long_chain", [](Double a, Double b) {
  Double u = a;
  for (int r = 0; r < 40; ++r) u = u * 0.99 + sin(b + 0.01 * r) * 0.01;
  return u;
});

kjit::detail::KernelRegistration<Array<double>, Double, Array<double>> chain_kernel(const std::string& module, int span) {
  ModuleOptions o;
  o.adjoint_span = span;
  kjit::module(module).set_options(o);
  return make_kernel<Array<double>, Double, Array<double>>(
      module + "::chain", module, {"x", "k", "out"},
      [](Array<double> x, Double k, Array<double> out) { out[tid()] = long_chain(x[tid()], k) * k; });
}
}  // namespace

TEST_CASE("a long device function's adjoint sweeps its spans inline, with the gradients of one sweep") {
  const auto whole = chain_kernel("autodiff_chain_whole", 0), spans = chain_kernel("autodiff_chain_spans", 8);
  codegen::CodegenOptions cut;
  cut.adjoint_span = 8;
  const std::string text = codegen::generate_module("autodiff_chain_spans", {&spans.def().ir()}, cut).text;
  CHECK(text.find("{  // span 1 again, from its checkpoint") != std::string::npos);  // the function's
  CHECK(text.find("KJ_SPAN_FUNC void") == std::string::npos);  // the kernel's body is short
  auto X = from_vector(std::vector<double>{0.3, -1.2, 2.5}), out = zeros<double>({3});
  std::vector<double> gx[2];
  double gk[2] = {0, 0};
  int at = 0;
  for (const auto* k : {&whole, &spans}) {
    launch(*k, 3, X, 0.7, out);
    auto G = zeros<double>({3});
    launch_adjoint(*k, 3, {X, 0.7, out}, {G, &gk[at], from_vector(std::vector<double>{1.0, -0.5, 2.0})});
    gx[at++] = G.to_vector<double>();
  }
  CHECK(same_bits(gx[0], gx[1]));
  CHECK(std::memcmp(&gk[0], &gk[1], sizeof(double)) == 0);
  CHECK(gk[0] != 0);
}

TEST_CASE("a long adjoint swept in spans agrees with finite differences") {
  const LongKernel spans = long_kernel("autodiff_long_fd", 6, 8);
  std::vector<double> xs{-0.95, -0.4, 0.1, 0.35, 0.8};
  auto report = check_gradients(spans, 5, {from_vector(xs), 0.8, 3, zeros<double>({4}), zeros<double>({5})});
  autodiff_support::expect_pass(report);
}

TEST_CASE("short kernels are never cut, and a span below zero is refused") {
  const LongKernel short_one = long_kernel("autodiff_long_short", 1, 256);
  codegen::CodegenOptions o;  // the default span: a round of ~30 statements stays whole
  CHECK(codegen::generate_module("autodiff_long_short", {&short_one.def().ir()}, o).text.find("kj::opaque(") ==
        std::string::npos);
  ModuleOptions bad;
  bad.adjoint_span = -1;
  try {
    kjit::module("autodiff_long_short").set_options(bad);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("ModuleOptions::adjoint_span must be >= 0") != std::string::npos);
  }
}

TEST_CASE("NVRTC compiles a long adjoint's spans for sm_80 and sm_90") {
  const LongKernel spans = long_kernel("autodiff_long_nvrtc", 12, 8);
  compiler::ModuleSource s = module_compile_input("autodiff_long_nvrtc").source;
  REQUIRE(s.generate);
  CHECK(s.generate().find("span 1 again, from its checkpoint") != std::string::npos);
  test::check_builds_for_gpus(s, "autodiff_long_nvrtc");
}
