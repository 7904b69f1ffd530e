// Partial sums of value parameters' adjoints on the cpu and their merge into destinations.
#include "kjit/runtime/internal/value_sums.hpp"

#include <algorithm>
#include <cstring>

#include "kjit/ir/structs.hpp"
#include "kjit/types.hpp"

namespace kjit::detail {

namespace {

using Component = ValueSums::Component;

/// The floating components of a value of type `t` at `dst_base` in the destination and
/// `sum_base` in a partial sum. A struct's sum is kept as the struct (ir::adjoint_sum_type), so
/// inside one nothing is widened: a float16 field's sum is a float16 at the field's offset.
void components(const ir::Type& t, size_t dst_base, size_t sum_base, bool in_struct, std::vector<Component>& out) {
  if (t.shape == ir::Shape::Struct) {
    for (const ir::StructField& f : ir::struct_info(t.struct_id).fields)
      if (f.differentiable())
        components(f.type, dst_base + size_t(f.offset), sum_base + size_t(f.offset), true, out);
    return;
  }
  if (!ir::scalar_is_float(t.scalar)) return;
  const ir::Type s = in_struct ? t : ir::adjoint_sum_type(t);
  for (int k = 0; k < t.lanes(); ++k)
    out.push_back({t.scalar, s.scalar, dst_base + size_t(k * ir::scalar_bytes(t.scalar)),
                   sum_base + size_t(k * ir::scalar_bytes(s.scalar))});
}

double read(ir::Scalar kind, const unsigned char* p) {
  switch (kind) {
    case ir::Scalar::F64: { double v; std::memcpy(&v, p, sizeof v); return v; }
    case ir::Scalar::F32: { float v; std::memcpy(&v, p, sizeof v); return v; }
    case ir::Scalar::F16: { half v; std::memcpy(&v, p, sizeof v); return double(float(v)); }
    case ir::Scalar::BF16: { bfloat16 v; std::memcpy(&v, p, sizeof v); return double(float(v)); }
    default: return 0;  // not floating: components() lists none
  }
}

void write(ir::Scalar kind, unsigned char* p, double x) {
  switch (kind) {
    case ir::Scalar::F64: std::memcpy(p, &x, sizeof x); break;
    case ir::Scalar::F32: { float v = float(x); std::memcpy(p, &v, sizeof v); break; }
    case ir::Scalar::F16: { half v{float(x)}; std::memcpy(p, &v, sizeof v); break; }
    case ir::Scalar::BF16: { bfloat16 v{float(x)}; std::memcpy(p, &v, sizeof v); break; }
    default: break;
  }
}

}  // namespace

void ValueSums::add(void** slot, void* destination, const ir::Type& type) {
  sums_.push_back(Sum{slot, destination, type.element(), 0});
}

void ValueSums::add_field(void** slot, const ir::Type& type, size_t offset, size_t bytes, void* destination) {
  sums_.push_back(Sum{slot, destination, type.element(), 0, offset, bytes});
}

void ValueSums::prepare(int64_t size) {
  partials_ = kj::reduce_partials(size);
  size_t bytes = 0;
  for (size_t i = 0; i < sums_.size(); ++i) {
    Sum& s = sums_[i];
    // A struct's fields asked for one by one share the struct's partials.
    const auto same = std::find_if(sums_.begin(), sums_.begin() + std::ptrdiff_t(i),
                                   [&](const Sum& o) { return o.slot == s.slot; });
    if (same != sums_.begin() + std::ptrdiff_t(i)) {
      s.offset = same->offset;
      continue;
    }
    s.offset = bytes;
    const size_t each = size_t(ir::adjoint_sum_type(s.type).element_bytes());
    bytes += (size_t(partials_) * each + 7) / 8 * 8;
  }
  storage_.assign(bytes / 8, 0.0);
  auto* base = reinterpret_cast<unsigned char*>(storage_.data());
  for (Sum& s : sums_) *s.slot = base + s.offset;
}

void ValueSums::finish() {
  const auto* base = reinterpret_cast<const unsigned char*>(storage_.data());
  for (const Sum& s : sums_) {
    std::vector<Component>& comps = components_;  // kept: a handler's calls allocate nothing
    comps.clear();
    components(s.type, 0, 0, false, comps);
    const size_t each = size_t(ir::adjoint_sum_type(s.type).element_bytes());
    auto* dst = static_cast<unsigned char*>(s.destination);
    for (const Component& c : comps) {
      if (c.dst_offset < s.field_offset || c.dst_offset - s.field_offset >= s.field_bytes) continue;
      double total = 0;
      for (int64_t k = 0; k < partials_; ++k) total += read(c.sum_kind, base + s.offset + size_t(k) * each + c.sum_offset);
      unsigned char* at = dst + (c.dst_offset - s.field_offset);
      write(c.dst_kind, at, read(c.dst_kind, at) + total);
    }
  }
}

}  // namespace kjit::detail
