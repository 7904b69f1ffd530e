// The kernel library examples/warp/jax_kernel.py and jax_callable.py load (libwarp_jax_interop.so):
// the ported kernels, and the two Python functions example_jax_callable.py hands to
// jax_callable, which kjit takes as C++ callables registered when the library loads.
#include <kjit/ffi.hpp>

#include "kernels.hpp"

namespace {
using namespace kjit::dsl;

/// Modules a callable's launches need, loaded before the first CUDA capture (as Warp preloads
/// the module of the function it wraps).
kjit::ffi::CallableOptions preloading(std::vector<std::string> kernels) {
  kjit::ffi::CallableOptions o;
  o.preload_kernels = std::move(kernels);
  return o;
}

/// scale_func: c = a * s and d = b * s, two launches over each input's shape.
const kjit::ffi::CallableRegistration scale_func(
    "warp_jax::scale_func",
    kjit::ffi::params<Array<Float>, Array<Vec2f>, Float, Array<Float>, Array<Vec2f>>({"a", "b", "s", "c", "d"}),
    [](const kjit::ffi::CallContext& ctx) {
      const kjit::NdArray& a = ctx.array("a");
      const kjit::NdArray& b = ctx.array("b");
      ctx.launch(warp_jax::scale_kernel, kjit::Dims(a.shape()), {a, ctx.arg("s"), ctx.array("c")});
      ctx.launch(warp_jax::scale_vec_kernel, kjit::Dims(b.shape()), {b, ctx.arg("s"), ctx.array("d")});
    },
    preloading({"warp_jax::scale_kernel", "warp_jax::scale_vec_kernel"}));

/// in_out_func: c = 2 a, then b += a (b is in/out: jax_callable(in_out_argnames=["b"])).
const kjit::ffi::CallableRegistration in_out_func(
    "warp_jax::in_out_func", kjit::ffi::params<Array<Float>, Array<Float>, Array<Float>>({"a", "b", "c"}),
    [](const kjit::ffi::CallContext& ctx) {
      const kjit::NdArray& a = ctx.array("a");
      ctx.launch(warp_jax::scale_kernel, a.size(), {a, 2.0f, ctx.array("c")});
      ctx.launch(warp_jax::accum_kernel, a.size(), {a, ctx.array("b")});
    },
    preloading({"warp_jax::scale_kernel", "warp_jax::accum_kernel"}));

}  // namespace
