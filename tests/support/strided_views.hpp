// Arrays for tests that run a kernel both ways the cpu runs it: dense (lane blocks) and strided
// (one thread at a time, the path any non-dense array sends a launch down).
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/kjit.hpp"

namespace kjit::test {

/// A dense array of `v`, or (`strided`) a view taking every other element of a buffer twice as
/// long, which `keep` holds.
template <class T>
NdArray make_array(const std::vector<T>& v, bool strided, std::vector<NdArray>& keep) {
  if (!strided) return NdArray::from_vector(v, {int64_t(v.size())});
  std::vector<T> wide(v.size() * 2, T{});
  for (size_t k = 0; k < v.size(); ++k) wide[2 * k] = v[k];
  NdArray buffer = NdArray::from_vector(wide, {int64_t(wide.size())});
  keep.push_back(buffer);
  return NdArray::view(buffer.data(), ir_type_of<T>(), {int64_t(v.size())}, Device::cpu(), {int64_t(2 * sizeof(T))});
}

/// The elements of 1-D array `a`, whatever its stride.
template <class T>
std::vector<T> read_array(const NdArray& a) {
  std::vector<T> out(size_t(a.size()));
  const char* base = static_cast<const char*>(a.data());
  for (int64_t k = 0; k < a.size(); ++k) out[size_t(k)] = *reinterpret_cast<const T*>(base + k * a.strides()[0]);
  return out;
}

}  // namespace kjit::test
