// A library for the JAX tests: a C++ callable launching a demo kernel twice and a C++
// callback, registered when the library loads. Kernels are found by name (the demo kernel
// library defines them), so they are registered once.
#include <cstring>

#include <kjit/kjit.hpp>

namespace tests {
using namespace kjit::dsl;

/// Does nothing: what bench/ffi_jax_timing.py times, the cost of the call itself.
KJIT_KERNEL(noop, (Array<Float> x, Array<Float> out)) {}

}  // namespace tests

namespace {

const kjit::KernelDef& kernel(const char* name) {
  const kjit::KernelDef* k = kjit::Registry::get().find_kernel(name);
  if (!k) throw kjit::Error(kjit::ErrorKind::User, std::string("kernel ") + name + " is not loaded");
  return *k;
}

/// out = a * (a * x + y) + y: two launches of demo::saxpy on the call's stream.
const kjit::ffi::CallableRegistration saxpy_twice(
    "tests::saxpy_twice",
    kjit::ffi::params<kjit::dsl::Array<float>, kjit::dsl::Array<float>, kjit::dsl::Float, kjit::dsl::Array<float>>(
        {"x", "y", "a", "out"}),
    [](const kjit::ffi::CallContext& ctx) {
      const kjit::NdArray& x = ctx.array("x");
      const kjit::NdArray& out = ctx.array("out");
      ctx.launch(kernel("demo::saxpy"), x.shape(0), {x, ctx.arg("y"), ctx.arg("a"), out});
      ctx.launch(kernel("demo::saxpy"), x.shape(0), {out, ctx.arg("y"), ctx.arg("a"), out});
    });

/// outputs[0] = attrs["scale"] * inputs[0] (cpu memory), for register_ffi_callback.
struct RegisterCallback {
  RegisterCallback() {
    kjit::ffi::register_callback("tests::scale", [](kjit::ffi::CallbackContext& ctx) {
      if (ctx.inputs.size() != 1 || ctx.outputs.size() != 1 || ctx.inputs[0].dtype_name != "float32")
        throw kjit::Error(kjit::ErrorKind::User, "tests::scale takes one float32 array");
      const float scale = float(ctx.attrs.at("scale").f);
      const auto* in = static_cast<const float*>(ctx.inputs[0].data);
      auto* out = static_cast<float*>(ctx.outputs[0].data);
      size_t n = 1;
      for (int64_t d : ctx.inputs[0].shape) n *= size_t(d);
      for (size_t i = 0; i < n; ++i) out[i] = scale * in[i];
    });
  }
  ~RegisterCallback() { kjit::ffi::unregister_callback("tests::scale"); }
} register_callback;

}  // namespace
