// Array footprints and an exact, bounded test of whether two strided arrays share memory.
#include "memory_footprint.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace kjit::detail {

namespace {

/// One index of the equation: `coef` times an integer in [0, count - 1], coef > 0.
struct Term {
  int64_t coef;
  int64_t count;
};

/// Floor division for a positive divisor.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// Whether sum(terms[k..] values) can lie strictly between lo and hi; `reach[k]` is the
/// largest sum of terms k.., `step[k]` the gcd of their coefficients (every such sum is a
/// multiple of it). Gives up (true) once `budget` nodes are spent.
bool solvable(const std::vector<Term>& terms, const std::vector<int64_t>& reach, const std::vector<int64_t>& step,
              size_t k, int64_t lo, int64_t hi, int64_t& budget) {
  if (--budget < 0) return true;
  if (k == terms.size()) return lo < 0 && 0 < hi;
  if (floor_div(hi - 1, step[k]) * step[k] <= lo) return false;  // no multiple of the gcd between
  const Term& t = terms[k];
  const int64_t rest = reach[k + 1];
  // c*v + [0, rest] must meet (lo, hi): c*v > lo - rest and c*v < hi.
  const int64_t first = std::max<int64_t>(0, floor_div(lo - rest, t.coef) + 1);
  const int64_t last = std::min<int64_t>(t.count - 1, floor_div(hi - 1, t.coef));
  for (int64_t v = first; v <= last; ++v)
    if (solvable(terms, reach, step, k + 1, lo - t.coef * v, hi - t.coef * v, budget)) return true;
  return false;
}

}  // namespace

bool MemoryFootprint::same(const MemoryFootprint& o) const {
  if (data != o.data || ndim != o.ndim || element_bytes != o.element_bytes) return false;
  for (int d = 0; d < ndim; ++d)
    if (shape[d] != o.shape[d] || strides[d] != o.strides[d]) return false;
  return true;
}

MemoryFootprint footprint(intptr_t data, int ndim, const int64_t* shape, const int64_t* strides, int64_t element_bytes) {
  MemoryFootprint f;
  int64_t low = 0, high = 0;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] <= 0) return f;
    f.shape[d] = shape[d];
    f.strides[d] = strides[d];
    const int64_t span = (shape[d] - 1) * strides[d];
    (span < 0 ? low : high) += span;
  }
  f.data = data;
  f.ndim = ndim;
  f.element_bytes = element_bytes;
  f.begin = data + low;
  f.end = data + high + element_bytes;
  return f;
}

MemoryFootprint footprint_of(const kj::array_t<void>& d, int64_t element_bytes) {
  if (!d.data || d.ndim < 1 || d.ndim > kj::kMaxDims) return {};
  int64_t shape[kj::kMaxDims];
  for (int k = 0; k < d.ndim; ++k) shape[k] = d.shape[k];
  return footprint(reinterpret_cast<intptr_t>(d.data), d.ndim, shape, d.strides, element_bytes);
}

MemoryFootprint footprint_of(const NdArray& a) {
  return a.defined() ? footprint_of(a.descriptor(), int64_t(a.element_bytes())) : MemoryFootprint{};
}

bool shares_memory(const MemoryFootprint& a, const MemoryFootprint& b) {
  if (a.empty() || b.empty() || a.end <= b.begin || b.end <= a.begin) return false;
  // Element x of a and element y of b share a byte when x - y lies in (-a.bytes, b.bytes):
  // x - y = (a.data - b.data) + sum a.strides*i - sum b.strides*j. Each term is turned to a
  // positive coefficient over [0, count - 1] (a negative one by counting its index down).
  std::vector<Term> terms;
  int64_t base = a.data - b.data;
  auto add = [&](int64_t coef, int64_t count) {
    if (count <= 1 || coef == 0) return;
    if (coef < 0) {
      base += coef * (count - 1);
      coef = -coef;
    }
    terms.push_back({coef, count});
  };
  for (int d = 0; d < a.ndim; ++d) add(a.strides[d], a.shape[d]);
  for (int d = 0; d < b.ndim; ++d) add(-b.strides[d], b.shape[d]);
  std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) { return x.coef > y.coef; });
  // Indices of one coefficient add up to any value in [0, sum of (count - 1)]: one term.
  std::vector<Term> merged;
  for (const Term& t : terms)
    if (!merged.empty() && merged.back().coef == t.coef) merged.back().count += t.count - 1;
    else merged.push_back(t);
  std::vector<int64_t> reach(merged.size() + 1, 0), step(merged.size() + 1, 0);
  for (size_t k = merged.size(); k-- > 0;) {
    reach[k] = reach[k + 1] + merged[k].coef * (merged[k].count - 1);
    step[k] = std::gcd(step[k + 1], merged[k].coef);
  }
  int64_t budget = 1 << 16;
  // base + sum in (-a.bytes, b.bytes)  <=>  sum in (-a.bytes - base, b.bytes - base).
  return solvable(merged, reach, step, 0, -a.element_bytes - base, b.element_bytes - base, budget);
}

}  // namespace kjit::detail
