// Example-like kernels for the compiler and cache benchmarks (the shapes of DESIGN §1), and
// the modules generated from them.
#pragma once

#include <string>
#include <vector>

#include <kjit/dsl.hpp>

#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/module_source.hpp"
#include "kjit/error.hpp"
#include "kjit/kernel.hpp"

namespace kjit_bench {
using namespace kjit::dsl;

inline Vec3f spring_force(Vec3f d, Float rest, Float k) {
  Float len = length(d);
  return d * (k * (len - rest) / len);
}

KJIT_KERNEL(saxpy, (Array<Float> x, Array<Float> y, Float a, Array<Float> out)) {
  Int i = tid();
  out[i] = a * x[i] + y[i];
}

KJIT_KERNEL(springs, (Array<Vec3f> x, Array<Int> pairs, Array<Float> rest, Float k, Array<Vec3f> f)) {
  Int s = tid();
  Int a = pairs[2 * s], b = pairs[2 * s + 1];
  Vec3f force = spring_force(x[a] - x[b], rest[s], k);
  atomic_add(f, a, -force);
  atomic_add(f, b, force);
}

KJIT_KERNEL(damp, (Array<Vec3f> v, Float c, Int steps, Array<Vec3f> out)) {
  Int i = tid();
  Var<Vec3f> w = v[i];
  For(0, steps, [&](Int) { w = w * c; });
  If(length(w) > 10.0f, [&] { w = normalize(w) * 10.0f; });
  out[i] = w;
}

/// The module `module` of one kernel `fn`, forward and (when `adjoint`) adjoint.
inline kjit::compiler::ModuleSource module_source(const std::string& module, const kjit::ir::Function& fn,
                                                  bool adjoint, int adjoint_span = kjit::ModuleOptions{}.adjoint_span) {
  std::vector<const kjit::ir::Function*> fns{&fn};
  kjit::codegen::CodegenOptions o;
  o.enable_adjoint = adjoint;
  o.adjoint_span = adjoint_span;
  kjit::codegen::GeneratedModule g = kjit::codegen::generate_module(module, fns, o);
  kjit::compiler::ModuleSource s;
  s.name = module;
  s.identity = kjit::codegen::module_identity(module, fns, o);
  s.text = g.text;
  s.entry_points = g.entry_points;
  s.kernels = g.kernels;
  return s;
}

/// A module of one benchmark kernel ("saxpy", "springs", "damp"), forward and (when
/// `adjoint`) adjoint, named `name`.
inline kjit::compiler::ModuleSource bench_module(const std::string& kernel, bool adjoint = true,
                                                 const std::string& name = "") {
  const kjit::KernelDef* def = kjit::Registry::get().find_kernel("kjit_bench::" + kernel);
  if (!def) throw kjit::Error(kjit::ErrorKind::Internal, "no benchmark kernel " + kernel);
  return module_source(name.empty() ? kernel : name, def->ir(), adjoint);
}

}  // namespace kjit_bench
