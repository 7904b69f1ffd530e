// NVRTC compile time (sm_90 cubin, default options, with and without adjoints) of a module that
// uses 50 different builtins against the saxpy module: the prelude carries only the chunks a
// module uses, so small modules stay cheap. Numbers: docs/BENCHMARKS.md, section DSL.
#include <benchmark/benchmark.h>

#include <string>

#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "nvrtc_compiler.hpp"
#include "saxpy.hpp"

namespace bench_dsl {
using namespace kjit::dsl;

/// 50 different builtins (operators, scalar and vector math, matrices, quaternions,
/// transforms, random numbers, noise, utility).
KJIT_KERNEL(fifty, (Array<Vec3f> x, Array<float> s, Array<Quatf> q, Array<float> out)) {
  Int i = tid();
  Float a = s[i];
  Vec3f v = x[i];
  Quatf r = normalize(q[i]);                                                    // 1 normalize
  Float b = sin(a) + cos(a) * tan(a) - exp(a) / log(abs(a) + 2.0f);            // 2-10 + - * / sin cos tan exp log abs
  b = b + sqrt(abs(b)) + pow(abs(b), 0.5f) + atan2(a, b) + tanh(b) + erf(a);   // 11-15 sqrt pow atan2 tanh erf
  b = b + min(a, b) + max(a, b) + clamp(b, -1.0f, 1.0f) + floor(b) + frac(b);  // 16-20 min max clamp floor frac
  Vec3f w = cross(v, Vec3f(b)) + normalize(v) * length(v);                      // 21-23 cross length (normalize)
  b = b + dot(v, w) + length_sq(w) + norm_l1(w);                                // 24-26 dot length_sq norm_l1
  Mat33f m = outer(v, w) + skew(v);                                             // 27-28 outer skew
  b = b + determinant(m) + trace(transpose(m)) + inverse(m)(0, 0);              // 29-32 determinant trace transpose inverse
  Vec3f p = quat_rotate(r, v) + quat_rotate_inv(r, w);                          // 33-34
  Mat33f rm = quat_to_matrix(quat_from_axis_angle(normalize(v), a));            // 35-36
  Transformf t = transformation(p, r);
  b = b + transform_point(t, v).x() + transform_vector(t, w).y() + rm(1, 1);    // 37-38
  b = b + quat_slerp(r, quat_identity<float>(), 0.3f).w();                      // 39
  Var<UInt32> st = rand_init(7, i);                                             // 40
  b = b + randf(st) + randn(st) + noise(st, v);                                 // 41-43
  b = b + lerp(a, b, 0.25f) + smoothstep(0.0f, 1.0f, a) + where(a > b, a, b);   // 44-47 lerp smoothstep where gt
  b = b + cw_mul(v, w).z() + sign(b) + degrees(a);                              // 48-50 cw_mul sign degrees
  out[i] = b;
}
/// 50 scalar operations (for comparison: the size of an adjoint, not which builtins).
KJIT_KERNEL(fifty_scalar, (Array<float> s, Array<float> out)) {
  Int i = tid();
  Float a = s[i];
  Var<float> b = a;
  for (int k = 0; k < 25; ++k) b = sin(b) * a + Float(b);
  out[i] = b;
}
}  // namespace bench_dsl

namespace {
std::string text_of(const kjit::KernelDef& k, bool with_adjoint) {
  kjit::codegen::CodegenOptions o;
  o.enable_adjoint = with_adjoint;
  return kjit::codegen::generate_module("bench", {&k.ir()}, o).text;
}
/// One compile through the compiler layer's NVRTC driver with the default options.
double nvrtc_seconds(const std::string& text) {
  kjit::compiler::CompileOutput out =
      kjit::compiler::nvrtc_compile(text, "module.cu", kjit::compiler::Target::cubin(90), kjit::compiler::CompileOptions{});
  return out.ok ? out.ms / 1000.0 : -1;
}
void run(benchmark::State& state, const kjit::KernelDef& k, bool with_adjoint) {
  const std::string text = text_of(k, with_adjoint);
  for (auto _ : state) {
    double s = nvrtc_seconds(text);
    if (s < 0) state.SkipWithError("NVRTC failed");
    state.SetIterationTime(s);
  }
  state.counters["source_bytes"] = double(text.size());
}
}  // namespace

static void BM_nvrtc_saxpy(benchmark::State& state) { run(state, demo::saxpy.def(), true); }
static void BM_nvrtc_fifty_builtins(benchmark::State& state) { run(state, bench_dsl::fifty.def(), true); }
static void BM_nvrtc_fifty_scalar_ops(benchmark::State& state) { run(state, bench_dsl::fifty_scalar.def(), true); }
BENCHMARK(BM_nvrtc_fifty_scalar_ops)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);
static void BM_nvrtc_saxpy_forward_only(benchmark::State& state) { run(state, demo::saxpy.def(), false); }
static void BM_nvrtc_fifty_builtins_forward_only(benchmark::State& state) { run(state, bench_dsl::fifty.def(), false); }
BENCHMARK(BM_nvrtc_saxpy)->UseManualTime()->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_nvrtc_fifty_builtins)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_nvrtc_saxpy_forward_only)->UseManualTime()->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_nvrtc_fifty_builtins_forward_only)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);
