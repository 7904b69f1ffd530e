// Modules for the compiler and cache tests: generated modules (from fixture_kernels.hpp) and
// tiny hand-written ones that compile quickly with NVRTC and the host compiler, plus helpers
// that load and run `cpu` artifacts.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <vector>

#include <kjit/abi.h>

#include "fixture_kernels.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/artifact.hpp"
#include "kjit/compiler/module_source.hpp"
#include "kjit/error.hpp"
#include "kjit/kernel.hpp"

namespace kjit::test {

/// A module generated from the fixture kernels `kernels` ("kjit_fixture::saxpy", ...).
inline compiler::ModuleSource generated_module(const std::string& name, const std::vector<std::string>& kernels,
                                               bool adjoint = true) {
  std::vector<const ir::Function*> fns;
  for (const std::string& k : kernels) {
    const KernelDef* def = Registry::get().find_kernel(k);
    if (!def) throw Error(ErrorKind::Internal, "test fixture kernel missing: " + k);
    fns.push_back(&def->ir());
  }
  codegen::CodegenOptions o;
  o.enable_adjoint = adjoint;
  codegen::GeneratedModule g = codegen::generate_module(name, fns, o);
  compiler::ModuleSource s;
  s.name = name;
  s.identity = codegen::module_identity(name, fns, o);
  s.text = g.text;
  s.entry_points = g.entry_points;
  s.kernels = g.kernels;
  return s;
}

/// The generated saxpy module, forward and adjoint.
inline compiler::ModuleSource saxpy_module(const std::string& name = "saxpy") {
  return generated_module(name, {"kjit_fixture::saxpy"});
}

/// The entry point of a tiny module.
inline std::string tiny_entry(const std::string& name) { return "kjit_" + name + "_fill"; }

/// A module with one entry point that writes `value` to out[i] for every thread i; the text
/// is its identity. It compiles with NVRTC and (in well under a second) the host compiler.
inline compiler::ModuleSource tiny_module(const std::string& name, float value) {
  const std::string e = tiny_entry(name);
  const std::string v = std::to_string(value) + "f";
  compiler::ModuleSource s;
  s.name = name;
  s.text = "// tiny test module " + name + "\n"
           "#if defined(__CUDACC__)\n"
           "extern \"C\" __global__ void " + e + "(float* out, long long n) {\n"
           "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) out[i] = " + v + ";\n"
           "}\n"
           "#else\n"
           "extern \"C\" __attribute__((visibility(\"default\"))) void " + e +
           "(void** args, long long begin, long long end) {\n"
           "  float* out = *(float**)args[0];\n"
           "  for (long long i = begin; i < end; ++i) out[i] = " + v + ";\n"
           "}\n"
           "#endif\n";
  s.entry_points = {e};
  // Described as codegen describes a kernel (the cache validates descriptions on every hit).
  s.kernels = nlohmann::json::array({{{"name", name},
                                      {"params", nlohmann::json::array()},
                                      {"launch_ndim", 0},
                                      {"forward", e},
                                      {"adjoint", nullptr},
                                      {"checks", false},
                                      {"dynamic_shared_bytes", {{"forward", 0}}},
                                      {"loops", nlohmann::json::array()}}});
  return s;
}

/// Opens a `cpu` artifact and returns its entry `entry` (throws when either is missing).
inline void* cpu_entry(const compiler::Artifact& a, const std::string& entry) {
  void* lib = ::dlopen(a.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw Error(ErrorKind::Internal, std::string("dlopen failed: ") + ::dlerror());
  void* f = ::dlsym(lib, entry.c_str());
  if (!f) throw Error(ErrorKind::Internal, "dlsym found no " + entry + " in " + a.library_path);
  return f;
}

/// Runs a tiny module's `cpu` artifact on n floats and returns them.
inline std::vector<float> run_tiny(const compiler::Artifact& a, const std::string& name, int n = 16) {
  using Fill = void (*)(void**, long long, long long);
  auto fill = reinterpret_cast<Fill>(cpu_entry(a, tiny_entry(name)));
  std::vector<float> out(size_t(n), -1.0f);
  float* p = out.data();
  void* args[] = {&p};
  fill(args, 0, n);
  return out;
}

/// Whether a tiny module's `cpu` artifact writes `value` everywhere.
inline bool tiny_computes(const compiler::Artifact& a, const std::string& name, float value) {
  for (float f : run_tiny(a, name))
    if (f != value) return false;
  return true;
}

/// A contiguous 1-D array_t over `v` (and an optional gradient buffer).
inline kj::array_t<float> view(std::vector<float>& v, std::vector<float>* grad = nullptr) {
  kj::array_t<float> a{};
  a.data = v.data();
  a.grad = grad ? grad->data() : nullptr;
  a.shape[0] = int32_t(v.size());
  a.ndim = 1;
  a.strides[0] = sizeof(float);
  return a;
}

/// One-dimensional launch bounds of n threads.
inline kj::launch_bounds_t bounds(int n) {
  kj::launch_bounds_t b{};
  b.shape[0] = n;
  b.shape[1] = b.shape[2] = b.shape[3] = 1;
  b.ndim = 1;
  b.size = n;
  return b;
}

}  // namespace kjit::test
