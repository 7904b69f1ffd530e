// Kernels for the FFI and JAX robustness tests: one a*x + y per element kind (vmap over each),
// an in/out kernel (vmap expand_dims with an unbatched in/out operand), a static value of every
// scalar dtype echoed into an array, and a guarded kernel for the extent checks.
#pragma once

#include <kjit/kjit.hpp>

namespace tests::robust {
using namespace kjit::dsl;
KJIT_MODULE(jax_test_robust)

/// out = a x + y for scalars, vectors, matrices and quaternions.
KJIT_KERNEL(axpy_f, (Array<Float> x, Array<Float> y, Float a, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] * a + y[i];
}
KJIT_KERNEL(axpy_v, (Array<Vec3f> x, Array<Vec3f> y, Float a, Array<Vec3f> out)) {
  Int i = tid();
  out[i] = x[i] * a + y[i];
}
KJIT_KERNEL(axpy_m, (Array<Mat33f> x, Array<Mat33f> y, Float a, Array<Mat33f> out)) {
  Int i = tid();
  out[i] = x[i] * a + y[i];
}
KJIT_KERNEL(axpy_q, (Array<Quatf> x, Array<Quatf> y, Float a, Array<Quatf> out)) {
  Int i = tid();
  out[i] = x[i] * a + y[i];
}
/// A transform's p and q, each a x + y (a transform has no arithmetic of its own).
KJIT_KERNEL(axpy_t, (Array<Transformf> x, Array<Transformf> y, Float a, Array<Transformf> out)) {
  Int i = tid();
  Transformf tx = x[i], ty = y[i];
  out[i] = transformation(tx.p() * a + ty.p(), tx.q() * a + ty.q());
}

/// acc += a x, acc in/out.
KJIT_KERNEL(accumulate_v, (Array<Vec3f> x, Float a, Array<Vec3f> acc)) {
  Int i = tid();
  acc[i] = acc[i] + x[i] * a;
}

/// Every static scalar dtype, echoed into a one-element array of its type.
KJIT_KERNEL(echo_scalars,
            (Bool b, Int8 i8, UInt8 u8, Int16 i16, UInt16 u16, Int i32, UInt32 u32, Int64 i64, UInt64 u64, Half f16,
             BFloat16 bf16, Float f32, Double f64, Array<bool> ob, Array<int8_t> oi8, Array<uint8_t> ou8,
             Array<int16_t> oi16, Array<uint16_t> ou16, Array<int32_t> oi32, Array<uint32_t> ou32,
             Array<int64_t> oi64, Array<uint64_t> ou64, Array<kjit::half> of16, Array<kjit::bfloat16> obf16,
             Array<float> of32, Array<double> of64)) {
  Int i = tid();
  ob[i] = b;
  oi8[i] = i8;
  ou8[i] = u8;
  oi16[i] = i16;
  ou16[i] = u16;
  oi32[i] = i32;
  ou32[i] = u32;
  oi64[i] = i64;
  ou64[i] = u64;
  of16[i] = f16;
  obf16[i] = bf16;
  of32[i] = f32;
  of64[i] = f64;
}

/// Vector statics of the 16-bit floats and of uint64.
KJIT_KERNEL(echo_vectors, (Vec3h h, Vec3bf bf, Vec3ul ul, Array<Vec3h> oh, Array<Vec3bf> obf, Array<Vec3ul> oul)) {
  Int i = tid();
  oh[i] = h;
  obf[i] = bf;
  oul[i] = ul;
}

/// out = 2 x where i < x's extent, else 0: a launch longer than x is fine.
KJIT_KERNEL(guarded_double, (Array<Float> x, Array<Float> out)) {
  Int i = tid();
  Var<Float> v = 0.0f;
  If(i < x.shape(0), [&] { v = x[i] * 2.0f; });
  out[i] = v;
}
}  // namespace tests::robust
