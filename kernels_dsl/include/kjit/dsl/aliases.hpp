// kjit/dsl/aliases.hpp — DSL handle names of the common element types: Float, Vec3f, Mat33d,
// Quatf, Transformf, SpatialVectorf, ... (the host types of kjit/type_aliases.hpp as Value<T>).
#pragma once

#include "kjit/dsl/value.hpp"

namespace kjit::dsl {

// The host element types, for Array<mat<2, 2, int32_t>>, Value<quat<double>> and the like.
using kjit::bfloat16;
using kjit::half;
using kjit::mat;
using kjit::quat;
using kjit::transform;
using kjit::vec;

using Bool = Value<bool>;
using Int8 = Value<int8_t>;
using UInt8 = Value<uint8_t>;
using Int16 = Value<int16_t>;
using UInt16 = Value<uint16_t>;
using Int = Value<int32_t>;
using Int32 = Value<int32_t>;
using UInt32 = Value<uint32_t>;
using Int64 = Value<int64_t>;
using UInt64 = Value<uint64_t>;
using Half = Value<half>;
using Float16 = Value<half>;
using BFloat16 = Value<bfloat16>;
using Float = Value<float>;
using Float32 = Value<float>;
using Double = Value<double>;
using Float64 = Value<double>;

using Vec2f = Value<vec2f>; using Vec3f = Value<vec3f>; using Vec4f = Value<vec4f>;
using Vec2d = Value<vec2d>; using Vec3d = Value<vec3d>; using Vec4d = Value<vec4d>;
using Vec2h = Value<vec2h>; using Vec3h = Value<vec3h>; using Vec4h = Value<vec4h>;
using Vec2bf = Value<vec2bf>; using Vec3bf = Value<vec3bf>; using Vec4bf = Value<vec4bf>;
using Vec2i = Value<vec2i>; using Vec3i = Value<vec3i>; using Vec4i = Value<vec4i>;
using Vec2ui = Value<vec2ui>; using Vec3ui = Value<vec3ui>; using Vec4ui = Value<vec4ui>;
using Vec2b = Value<vec2b>; using Vec3b = Value<vec3b>; using Vec4b = Value<vec4b>;
using Vec2ub = Value<vec2ub>; using Vec3ub = Value<vec3ub>; using Vec4ub = Value<vec4ub>;
using Vec2s = Value<vec2s>; using Vec3s = Value<vec3s>; using Vec4s = Value<vec4s>;
using Vec2us = Value<vec2us>; using Vec3us = Value<vec3us>; using Vec4us = Value<vec4us>;
using Vec2l = Value<vec2l>; using Vec3l = Value<vec3l>; using Vec4l = Value<vec4l>;
using Vec2ul = Value<vec2ul>; using Vec3ul = Value<vec3ul>; using Vec4ul = Value<vec4ul>;

using Mat22f = Value<mat22f>; using Mat33f = Value<mat33f>; using Mat44f = Value<mat44f>;
using Quatf = Value<quatf>; using Transformf = Value<transformf>;
using SpatialVectorf = Value<spatial_vectorf>; using SpatialMatrixf = Value<spatial_matrixf>;
using Mat22d = Value<mat22d>; using Mat33d = Value<mat33d>; using Mat44d = Value<mat44d>;
using Quatd = Value<quatd>; using Transformd = Value<transformd>;
using SpatialVectord = Value<spatial_vectord>; using SpatialMatrixd = Value<spatial_matrixd>;
using Mat22h = Value<mat22h>; using Mat33h = Value<mat33h>; using Mat44h = Value<mat44h>;
using Quath = Value<quath>; using Transformh = Value<transformh>;
using SpatialVectorh = Value<spatial_vectorh>; using SpatialMatrixh = Value<spatial_matrixh>;

}  // namespace kjit::dsl
