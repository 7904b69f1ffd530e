// Overflow-checked products of extents: every size the runtime computes goes through these.
#pragma once

#include <cstdint>
#include <string>

namespace kjit::detail {

/// `a * b` into `out`; false when the product does not fit in int64.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

/// The product of `n` non-negative extents times `unit` into `out`; false on overflow.
inline bool checked_product(const int64_t* dims, size_t n, int64_t unit, int64_t* out) {
  int64_t p = unit;
  for (size_t d = 0; d < n; ++d)
    if (!checked_mul(p, dims[d], &p)) return false;
  *out = p;
  return true;
}

/// A shape as users write it: "{4323, 1119412321, 7623851}".
inline std::string shape_text(const int64_t* dims, size_t n) {
  std::string s = "{";
  for (size_t d = 0; d < n; ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
  return s + "}";
}

}  // namespace kjit::detail
