// The kernels of function_adjoints.cpp, included into two modules (the includer's namespace
// names its KJIT_MODULE; one is loaded with each adjoint writer, so no #pragma once): device
// functions whose own adjoints read and add into adjoint arrays of their array parameters,
// hand value parameters' adjoints back, and sweep a loop and an early return back.
using namespace kjit::dsl;

inline const auto gather = func("fadj_gather", [](Array<Double> a, Int i, Double s) { return a[i] * s * s; });
inline const auto spread = func("fadj_spread", [](Array<Double> acc, Int i, Double v) {
  atomic_add(acc, i, v * 2.0);
  return i;
});
inline const auto damped = func("fadj_damped", [](Array<Double> w, Int n, Vec3d v) {
  If(n > 6, [&] { Return(v.x() * 3.0); });
  Var<Vec3d> y = v;
  For(0, n, [&](Int k) { y = y * w[k % 3] + Vec3d(0.1, 0.2, 0.3) * sin(w[k % 3]); });
  return dot(Vec3d(y), Vec3d(y));
});

KJIT_KERNEL(through_functions, (Array<Double> a, Array<Double> w, Array<Int> idx, Double s, Int n, Array<Double> acc,
                                Array<Double> out)) {
  Int t = tid();
  Double g = gather(a, idx[t], a[t] * s);
  spread(acc, idx[t], g);
  out[t] = damped(w, n, Vec3d(g, a[t], s));
}
