// A library for the JAX tests: kernels with an effect outside their results, with a struct
// parameter and with value parameters of every shape (traced values), C++ callables launching a demo kernel, and a C++ callback, registered when the
// library loads. Demo kernels are found by name (the demo kernel library defines them), so
// they are registered once.
#include <cstring>

#include <kjit/ffi.hpp>

namespace tests {
using namespace kjit::dsl;

/// Does nothing: what bench/ffi_jax_timing.py times, the cost of the call itself.
KJIT_KERNEL(noop, (Array<Float> x, Array<Float> out)) {}

namespace effects {
KJIT_MODULE(jax_test_effects)

/// out = x, and 2 x written through a raw address (`n` floats of device memory; host memory
/// on the cpu): an effect outside the call's results, for the has_side_effect test.
KJIT_KERNEL(mark, (Array<Float> x, UInt64 address, Int n, Array<Float> out)) {
  Int i = tid();
  auto view = array<float>(address, n);
  view[i] = x[i] * 2.0f;
  out[i] = x[i];
}

KJIT_STRUCT(Pair, (Float, a), (Int, b));

/// A struct array parameter, which JAX cannot pass (the shim says so, naming it).
KJIT_KERNEL(pair_sum, (Array<Pair> pairs, Array<Float> out)) {
  Var<Pair> p = pairs[tid()];
  out[tid()] = p.a();
}
}  // namespace effects

namespace values {
KJIT_MODULE(jax_test_values)

/// Value parameters of every shape, for traced values and their gradients from JAX:
/// out = s * m (v + d), the affine map of every point.
KJIT_KERNEL(affine, (Array<Vec3d> v, Vec3d d, Mat33d m, Double s, Array<Vec3d> out)) {
  Int i = tid();
  out[i] = m * (v[i] + d) * s;
}
KJIT_KERNEL(affine_f, (Array<Vec3f> v, Vec3f d, Mat33f m, Float s, Array<Vec3f> out)) {
  Int i = tid();
  out[i] = m * (v[i] + d) * s;
}

/// A loop whose trip count is an integer value (traced or static) and a branch per thread.
KJIT_KERNEL(decay, (Array<Double> x, Double k, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int) { y = y * k + sin(y); });
  If(y > 0.0, [&] { out[i] = y; }).Else([&] { out[i] = y * k; });
}
/// A loop over a vec3 state that reads the next point's q: Jacobians that mix threads, a
/// loop-carried vector, for forward mode and second derivatives from JAX.
KJIT_KERNEL(swirl, (Array<Vec3d> p, Array<Vec3d> q, Double k, Int n, Array<Vec3d> out)) {
  Int i = tid();
  Vec3d qi = q[(i + 1) % len(q)];
  Var<Vec3d> w = p[i];
  For(0, n, [&](Int) { w = w * cos(k * dot(w, qi)) + cross(w, qi) * k; });
  out[i] = w;
}
/// No input array: out[i] = i * step over launch_dims, so a call with a static step has no
/// operand at all (Warp's example_jax_kernel.py example7 is such a call).
KJIT_KERNEL(ramp, (Float step, Array<Float> out)) {
  Int i = tid();
  out[i] = Float(i) * step;
}
}  // namespace values

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

/// saxpy_twice registered with a graph cache bound of 5, which jax_callable keeps by default,
/// and demo::saxpy to preload, which jax_callable preloads when JAX traces a call.
const kjit::ffi::CallableRegistration saxpy_twice_bounded = [] {
  kjit::ffi::CallableOptions o;
  o.graph_cache_max = 5;
  o.preload_kernels = {"demo::saxpy"};
  return kjit::ffi::CallableRegistration(
      "tests::saxpy_twice_bounded",
      kjit::ffi::params<kjit::dsl::Array<float>, kjit::dsl::Array<float>, kjit::dsl::Float, kjit::dsl::Array<float>>(
          {"x", "y", "a", "out"}),
      [](const kjit::ffi::CallContext& ctx) {
        ctx.launch(kernel("demo::saxpy"), ctx.array("x").shape(0), {ctx.array("x"), ctx.arg("y"), ctx.arg("a"),
                                                                     ctx.array("out")});
      },
      o);
}();

/// outputs[0] = attrs["scale"] * inputs[0], for register_ffi_callback: a loop over host memory
/// on the cpu; on CUDA a launch of demo::saxpy (scale - 1) * x + x on XLA's stream.
struct RegisterCallback {
  RegisterCallback() {
    kjit::ffi::register_callback("tests::scale", [](kjit::ffi::CallbackContext& ctx) {
      if (ctx.inputs.size() != 1 || ctx.outputs.size() != 1 || ctx.inputs[0].dtype_name != "float32")
        throw kjit::Error(kjit::ErrorKind::User, "tests::scale takes one float32 array");
      const float scale = float(ctx.attrs.at("scale").f);
      if (ctx.platform == kjit::ffi::Platform::Cuda) {
        const kjit::ir::Type f32 = kjit::ir::Type::scalar_of(kjit::ir::Scalar::F32);
        kjit::NdArray x = ctx.inputs[0].as_array(f32, ctx.device), out = ctx.outputs[0].as_array(f32, ctx.device);
        kjit::LaunchOptions o;
        o.stream = ctx.stream;
        kjit::launch(kernel("demo::saxpy"), x.size(), {x, x, scale - 1.0f, out}, o);
        return;
      }
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
