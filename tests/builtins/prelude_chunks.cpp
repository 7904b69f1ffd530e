// The prelude stays granular: a module carries the chunks its builtins and types need and
// nothing else (a module that uses sin carries no quaternion, dual-number, decomposition,
// noise or random code), so small modules compile fast.
#include <doctest/doctest.h>

#include "kjit/kjit.hpp"
#include "nvrtc_check.hpp"

namespace chunks {
using namespace kjit::dsl;
KJIT_MODULE(builtins_chunks)
KJIT_KERNEL(uses_sin, (Array<float> x, Array<float> out)) { out[tid()] = sin(x[tid()]); }
KJIT_KERNEL(uses_quat, (Array<Quatf> q, Array<Vec3f> v, Array<Vec3f> out)) { out[tid()] = quat_rotate(q[tid()], v[tid()]); }
KJIT_KERNEL(uses_svd, (Array<Mat33f> a, Array<Vec3f> out)) {
  auto [U, s, V] = svd3(Mat33f(a[tid()]));
  out[tid()] = s;
}
}  // namespace chunks

using namespace kjit;

namespace {
bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }
}  // namespace

TEST_CASE("a module carries only the prelude chunks it uses") {
  const std::string sin_text = test::module_text("sin", {&chunks::uses_sin.def()});
  for (const char* absent : {"struct quat_t {", "struct dual", "svd3", "perlin", "pcg(", "half_to_float", "struct transform_t {", "mat_t<R, C, T> operator*"})
    CHECK_MESSAGE(!has(sin_text, absent), "a module using sin carries " << std::string(absent));
  CHECK(has(sin_text, "adj_sin"));
  const std::string quat_text = test::module_text("quat", {&chunks::uses_quat.def()});
  CHECK(has(quat_text, "struct quat_t {"));
  for (const char* absent : {"svd3", "perlin", "pcg(", "half_to_float", "struct transform_t {", "erfinv"})
    CHECK_MESSAGE(!has(quat_text, absent), "a module using quat_rotate carries " << std::string(absent));
  const std::string svd_text = test::module_text("svd", {&chunks::uses_svd.def()});
  CHECK(has(svd_text, "svd3"));
  CHECK(!has(svd_text, "struct quat_t {"));
  CHECK(sin_text.size() < quat_text.size());
}
