// Lane access to array elements of any kjit type.
#include "lanes.hpp"

#include <cstring>

#include "kjit/ir/structs.hpp"

namespace kjit::test {

namespace {
double get_scalar(ir::Scalar s, const unsigned char* p) {
  switch (s) {
#define KJIT_GET(E, T) case ir::Scalar::E: { T v; std::memcpy(&v, p, sizeof v); return double(v); }
    KJIT_GET(Bool, bool) KJIT_GET(I8, int8_t) KJIT_GET(U8, uint8_t) KJIT_GET(I16, int16_t) KJIT_GET(U16, uint16_t)
    KJIT_GET(I32, int32_t) KJIT_GET(U32, uint32_t) KJIT_GET(I64, int64_t) KJIT_GET(U64, uint64_t)
    KJIT_GET(F32, float) KJIT_GET(F64, double)
#undef KJIT_GET
    case ir::Scalar::F16: { half h; std::memcpy(&h, p, 2); return double(float(h)); }
    case ir::Scalar::BF16: { bfloat16 h; std::memcpy(&h, p, 2); return double(float(h)); }
  }
  return 0;
}
void set_scalar(ir::Scalar s, unsigned char* p, double v) {
  switch (s) {
#define KJIT_SET(E, T) case ir::Scalar::E: { T x = T(v); std::memcpy(p, &x, sizeof x); return; }
    KJIT_SET(I8, int8_t) KJIT_SET(U8, uint8_t) KJIT_SET(I16, int16_t) KJIT_SET(U16, uint16_t)
    KJIT_SET(I32, int32_t) KJIT_SET(U32, uint32_t) KJIT_SET(I64, int64_t) KJIT_SET(U64, uint64_t)
    KJIT_SET(F32, float) KJIT_SET(F64, double)
#undef KJIT_SET
    case ir::Scalar::Bool: { bool b = v != 0; std::memcpy(p, &b, 1); return; }
    case ir::Scalar::F16: { half h = half(float(v)); std::memcpy(p, &h, 2); return; }
    case ir::Scalar::BF16: { bfloat16 h = bfloat16(float(v)); std::memcpy(p, &h, 2); return; }
  }
}
template <class F>
void walk(const ir::Type& t, unsigned char* base, F&& f) {
  if (t.shape == ir::Shape::Struct) {
    for (const ir::StructField& field : ir::struct_info(t.struct_id).fields) walk(field.type, base + field.offset, f);
    return;
  }
  for (int l = 0; l < t.lanes(); ++l) f(t.scalar, base + size_t(l) * size_t(ir::scalar_bytes(t.scalar)));
}
}  // namespace

int lane_count(const ir::Type& t) {
  if (t.shape != ir::Shape::Struct) return t.lanes();
  int n = 0;
  for (const ir::StructField& f : ir::struct_info(t.struct_id).fields) n += lane_count(f.type);
  return n;
}

std::vector<double> read_lanes(const NdArray& a, int64_t i) {
  std::vector<double> out;
  auto* base = static_cast<unsigned char*>(a.data()) + size_t(i) * a.element_bytes();
  walk(a.element(), base, [&](ir::Scalar s, unsigned char* p) { out.push_back(get_scalar(s, p)); });
  return out;
}

void write_lanes(NdArray& a, int64_t i, const std::vector<double>& lanes) {
  auto* base = static_cast<unsigned char*>(a.data()) + size_t(i) * a.element_bytes();
  size_t k = 0;
  walk(a.element(), base, [&](ir::Scalar s, unsigned char* p) { set_scalar(s, p, k < lanes.size() ? lanes[k++] : 0.0); });
}

}  // namespace kjit::test
