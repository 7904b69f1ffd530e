// shares_memory (the tape's test of whether a write reaches a recorded read) against brute
// force over every byte of random strided arrays: negative, zero and interleaved strides,
// mixed element sizes, empty arrays.
#include <doctest/doctest.h>

#include <random>
#include <set>

#include "memory_footprint.hpp"

using kjit::detail::footprint;
using kjit::detail::MemoryFootprint;
using kjit::detail::shares_memory;

namespace {

std::set<intptr_t> bytes_of(const MemoryFootprint& f) {
  std::set<intptr_t> out;
  if (f.empty()) return out;
  int64_t index[4] = {};
  for (;;) {
    intptr_t at = f.data;
    for (int d = 0; d < f.ndim; ++d) at += index[d] * f.strides[d];
    for (int64_t b = 0; b < f.element_bytes; ++b) out.insert(at + b);
    int d = f.ndim - 1;
    for (; d >= 0 && ++index[d] == f.shape[d]; --d) index[d] = 0;
    if (d < 0) return out;
  }
}

MemoryFootprint random_footprint(std::mt19937& rng) {
  std::uniform_int_distribution<int> dims(0, 3), extent(0, 6), stride(-48, 48), bytes(0, 4), offset(0, 160);
  const int64_t element_bytes[] = {1, 2, 4, 8, 12};
  const int ndim = dims(rng);
  int64_t shape[4], strides[4];
  for (int d = 0; d < ndim; ++d) {
    shape[d] = extent(rng) == 0 && rng() % 4 == 0 ? 0 : 1 + extent(rng);
    strides[d] = stride(rng);
  }
  return footprint(1000 + offset(rng), ndim, shape, strides, element_bytes[bytes(rng)]);
}

}  // namespace

TEST_CASE("shares_memory is exact on random strided arrays") {
  std::mt19937 rng(20261207);
  int sharing = 0, apart_in_range = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const MemoryFootprint a = random_footprint(rng), b = random_footprint(rng);
    const std::set<intptr_t> ab = bytes_of(a), bb = bytes_of(b);
    bool common = false;
    for (intptr_t x : ab) common = common || bb.count(x);
    INFO("trial " << trial);
    REQUIRE(shares_memory(a, b) == common);
    REQUIRE(shares_memory(b, a) == common);
    sharing += common;
    apart_in_range += !common && !a.empty() && !b.empty() && a.begin < b.end && b.begin < a.end;
  }
  CHECK(sharing > 2000);         // both answers are exercised,
  CHECK(apart_in_range > 1000);  // and arrays that interleave without meeting
}

TEST_CASE("columns of one buffer do not share memory; a row and a column do") {
  const int64_t shape[] = {1000000}, stride[] = {12}, row_shape[] = {3}, row_stride[] = {4};
  const MemoryFootprint x = footprint(4096, 1, shape, stride, 4), y = footprint(4100, 1, shape, stride, 4),
                        row = footprint(4096 + 12 * 5, 1, row_shape, row_stride, 4);
  CHECK_FALSE(shares_memory(x, y));
  CHECK(shares_memory(x, row));
  CHECK(shares_memory(y, row));
}
