// kjit/dsl/random.hpp — random numbers and noise under Warp's names. A thread's stream lives
// in a Var<UInt32> made by rand_init(seed, offset); every draw advances it, as Warp advances
// its `state` in place. Noise takes the state as a seed and does not advance it.
#pragma once

#include "kjit/dsl/array.hpp"
#include "kjit/dsl/linalg.hpp"

namespace kjit::dsl {

namespace detail {
template <class I> constexpr bool is_seed_v = std::is_same_v<I, int32_t> || std::is_same_v<I, uint32_t>;

/// Calls random builtin `b` on `state` (and `extra` operands), stores the next state back
/// into the Var and returns the drawn value.
template <class V>
Value<V> draw(ir::Builtin b, VarHandle<uint32_t>& state, std::initializer_list<ir::ValueId> extra, Loc loc) {
  ir::ValueId args[8] = {state.use(loc)};
  size_t n = 1;
  for (ir::ValueId e : extra) args[n++] = e;
  ir::ValueId r = call_builtin(b, args, n, loc);
  state = field_of<uint32_t>(r, 1, loc);
  return field_of<V>(r, 0, loc);
}
}  // namespace detail

/// A per-thread random state from a seed (and an offset, usually the thread index): equal
/// seeds and offsets give equal streams on every device.
template <class I, std::enable_if_t<detail::is_seed_v<I>, int> = 0>
UInt32 rand_init(const Value<I>& seed, Loc loc = Loc::here()) {
  return detail::call<uint32_t>(ir::Builtin::RandInit, loc, seed.use(loc));
}
template <class I, class J, std::enable_if_t<detail::is_seed_v<I> && detail::is_seed_v<J>, int> = 0>
UInt32 rand_init(const Value<I>& seed, const Value<J>& offset, Loc loc = Loc::here()) {
  return detail::call<uint32_t>(ir::Builtin::RandInit, loc, seed.use(loc), offset.use(loc));
}
inline UInt32 rand_init(int32_t seed, Loc loc = Loc::here()) { return rand_init(Int(seed, loc), loc); }
template <class J, std::enable_if_t<detail::is_seed_v<J>, int> = 0>
UInt32 rand_init(int32_t seed, const Value<J>& offset, Loc loc = Loc::here()) { return rand_init(Int(seed, loc), offset, loc); }

/// A uniform int32 in [-2^31, 2^31), or in [lo, hi).
inline Int randi(VarHandle<uint32_t>& state, Loc loc = Loc::here()) { return detail::draw<int32_t>(ir::Builtin::Randi, state, {}, loc); }
inline Int randi(VarHandle<uint32_t>& state, Operand<int32_t> lo, Operand<int32_t> hi) {
  return detail::draw<int32_t>(ir::Builtin::Randi, state, {lo.id, hi.id}, hi.loc);
}
/// A uniform uint32 in [0, 2^32), or in [lo, hi).
inline UInt32 randu(VarHandle<uint32_t>& state, Loc loc = Loc::here()) { return detail::draw<uint32_t>(ir::Builtin::Randu, state, {}, loc); }
inline UInt32 randu(VarHandle<uint32_t>& state, Operand<uint32_t> lo, Operand<uint32_t> hi) {
  return detail::draw<uint32_t>(ir::Builtin::Randu, state, {lo.id, hi.id}, hi.loc);
}
/// A uniform float in [0, 1) (24 random bits), or in [lo, hi).
inline Float randf(VarHandle<uint32_t>& state, Loc loc = Loc::here()) { return detail::draw<float>(ir::Builtin::Randf, state, {}, loc); }
inline Float randf(VarHandle<uint32_t>& state, Operand<float> lo, Operand<float> hi) {
  return detail::draw<float>(ir::Builtin::Randf, state, {lo.id, hi.id}, hi.loc);
}
/// A standard normal float.
inline Float randn(VarHandle<uint32_t>& state, Loc loc = Loc::here()) { return detail::draw<float>(ir::Builtin::Randn, state, {}, loc); }
/// A Poisson-distributed count with mean `lam`.
inline UInt32 poisson(VarHandle<uint32_t>& state, Operand<float> lam) { return detail::draw<uint32_t>(ir::Builtin::Poisson, state, {lam.id}, lam.loc); }
/// An index drawn from a cumulative distribution (non-decreasing, ending at 1).
inline Int sample_cdf(VarHandle<uint32_t>& state, const ArrayHandle<float, 1>& cdf, Loc loc = Loc::here()) {
  return detail::draw<int32_t>(ir::Builtin::SampleCdf, state, {cdf.id()}, loc);
}
#define KJIT_DSL_SAMPLE(name, builtin, R)                                                      \
  inline Value<R> name(VarHandle<uint32_t>& state, Loc loc = Loc::here()) {                    \
    return detail::draw<R>(ir::Builtin::builtin, state, {}, loc);                              \
  }
/// Barycentric (u, v) of a uniform point in a triangle.
KJIT_DSL_SAMPLE(sample_triangle, SampleTriangle, vec2f)
/// A uniform point in [-0.5, 0.5)^2.
KJIT_DSL_SAMPLE(sample_unit_square, SampleUnitSquare, vec2f)
/// A uniform point in [-0.5, 0.5)^3.
KJIT_DSL_SAMPLE(sample_unit_cube, SampleUnitCube, vec3f)
/// A uniform point in the unit disk.
KJIT_DSL_SAMPLE(sample_unit_disk, SampleUnitDisk, vec2f)
/// A uniform point on the unit circle.
KJIT_DSL_SAMPLE(sample_unit_ring, SampleUnitRing, vec2f)
/// A uniform point in the unit ball.
KJIT_DSL_SAMPLE(sample_unit_sphere, SampleUnitSphere, vec3f)
/// A uniform point on the unit sphere.
KJIT_DSL_SAMPLE(sample_unit_sphere_surface, SampleUnitSphereSurface, vec3f)
/// A uniform point in the unit half ball z >= 0.
KJIT_DSL_SAMPLE(sample_unit_hemisphere, SampleUnitHemisphere, vec3f)
/// A uniform point on the unit hemisphere z >= 0.
KJIT_DSL_SAMPLE(sample_unit_hemisphere_surface, SampleUnitHemisphereSurface, vec3f)
#undef KJIT_DSL_SAMPLE

// Noise: differentiable in the coordinate (curlnoise also in lacunarity and gain).
/// Perlin-style gradient noise at a scalar or 2-, 3- or 4-vector coordinate.
template <class X, std::enable_if_t<is_floating_v<X> && (is_scalar_v<X> || is_vector_v<X>), int> = 0>
Value<scalar_of_t<X>> noise(const UInt32& state, const Value<X>& x, Loc loc = Loc::here()) {
  return detail::call<scalar_of_t<X>>(ir::Builtin::Noise, loc, state.use(loc), x.use(loc));
}
/// Noise that repeats every p cells along each axis (positive integer periods).
template <class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>
Value<S> pnoise(const UInt32& state, const Value<S>& x, Operand<int32_t> px) {
  return detail::call<S>(ir::Builtin::Pnoise, px.loc, state.use(px.loc), x.use(px.loc), px.id);
}
template <class S>
Value<S> pnoise(const UInt32& state, const Value<vec<2, S>>& x, Operand<int32_t> px, Operand<int32_t> py) {
  return detail::call<S>(ir::Builtin::Pnoise, py.loc, state.use(py.loc), x.use(py.loc), px.id, py.id);
}
template <class S>
Value<S> pnoise(const UInt32& state, const Value<vec<3, S>>& x, Operand<int32_t> px, Operand<int32_t> py, Operand<int32_t> pz) {
  return detail::call<S>(ir::Builtin::Pnoise, pz.loc, state.use(pz.loc), x.use(pz.loc), px.id, py.id, pz.id);
}
template <class S>
Value<S> pnoise(const UInt32& state, const Value<vec<4, S>>& x, Operand<int32_t> px, Operand<int32_t> py, Operand<int32_t> pz,
                Operand<int32_t> pt) {
  return detail::call<S>(ir::Builtin::Pnoise, pt.loc, state.use(pt.loc), x.use(pt.loc), px.id, py.id, pz.id, pt.id);
}
/// A divergence-free field: the rotated noise gradient for a 2-vector, the curl of three
/// noise potentials for a 3- or 4-vector (octave o: frequency lacunarity^o, weight gain^o).
template <int N, class S, std::enable_if_t<N >= 2 && N <= 4, int> = 0>
Value<vec<(N == 2 ? 2 : 3), S>> curlnoise(const UInt32& state, const Value<vec<N, S>>& x, Operand<uint32_t> octaves,
                                         detail::same_t<Operand<S>> lacunarity, detail::same_t<Operand<S>> gain) {
  return detail::call<vec<(N == 2 ? 2 : 3), S>>(ir::Builtin::Curlnoise, gain.loc, state.use(gain.loc), x.use(gain.loc),
                                                 octaves.id, lacunarity.id, gain.id);
}
template <int N, class S, std::enable_if_t<N >= 2 && N <= 4, int> = 0>
Value<vec<(N == 2 ? 2 : 3), S>> curlnoise(const UInt32& state, const Value<vec<N, S>>& x, Loc loc = Loc::here()) {
  return curlnoise(state, x, Operand<uint32_t>(1, loc), detail::same_t<Operand<S>>(2.0, loc), detail::same_t<Operand<S>>(0.5, loc));
}

}  // namespace kjit::dsl
