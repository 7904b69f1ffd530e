// kjit/type_aliases.hpp — the host names of common element types (Warp's spellings: vec3f,
// vec3d, vec3h, vec3i, vec3ui, vec3b (int8), vec3ub, vec3s (int16), vec3us, vec3l, vec3ul,
// mat33f, quatf, transformf, spatial_vectorf, ...). Included by kjit/types.hpp.
#pragma once

namespace kjit {

using vec2f = vec<2, float>; using vec3f = vec<3, float>; using vec4f = vec<4, float>;
using vec2d = vec<2, double>; using vec3d = vec<3, double>; using vec4d = vec<4, double>;
using vec2h = vec<2, half>; using vec3h = vec<3, half>; using vec4h = vec<4, half>;
using vec2bf = vec<2, bfloat16>; using vec3bf = vec<3, bfloat16>; using vec4bf = vec<4, bfloat16>;
using vec2i = vec<2, int32_t>; using vec3i = vec<3, int32_t>; using vec4i = vec<4, int32_t>;
using vec2ui = vec<2, uint32_t>; using vec3ui = vec<3, uint32_t>; using vec4ui = vec<4, uint32_t>;
using vec2b = vec<2, int8_t>; using vec3b = vec<3, int8_t>; using vec4b = vec<4, int8_t>;
using vec2ub = vec<2, uint8_t>; using vec3ub = vec<3, uint8_t>; using vec4ub = vec<4, uint8_t>;
using vec2s = vec<2, int16_t>; using vec3s = vec<3, int16_t>; using vec4s = vec<4, int16_t>;
using vec2us = vec<2, uint16_t>; using vec3us = vec<3, uint16_t>; using vec4us = vec<4, uint16_t>;
using vec2l = vec<2, int64_t>; using vec3l = vec<3, int64_t>; using vec4l = vec<4, int64_t>;
using vec2ul = vec<2, uint64_t>; using vec3ul = vec<3, uint64_t>; using vec4ul = vec<4, uint64_t>;

using mat22f = mat<2, 2, float>; using mat33f = mat<3, 3, float>; using mat44f = mat<4, 4, float>;
using quatf = quat<float>; using transformf = transform<float>;
using spatial_vectorf = vec<6, float>; using spatial_matrixf = mat<6, 6, float>;
using mat22d = mat<2, 2, double>; using mat33d = mat<3, 3, double>; using mat44d = mat<4, 4, double>;
using quatd = quat<double>; using transformd = transform<double>;
using spatial_vectord = vec<6, double>; using spatial_matrixd = mat<6, 6, double>;
using mat22h = mat<2, 2, half>; using mat33h = mat<3, 3, half>; using mat44h = mat<4, 4, half>;
using quath = quat<half>; using transformh = transform<half>;
using spatial_vectorh = vec<6, half>; using spatial_matrixh = mat<6, 6, half>;

}  // namespace kjit
