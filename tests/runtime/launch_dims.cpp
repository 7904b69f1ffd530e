// 1-D to 4-D launches visit every index exactly once, with the coordinates tid<N> gives.
#include <doctest/doctest.h>

#include "kjit/kjit.hpp"

using namespace kjit;

namespace ld_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_dims)

KJIT_KERNEL(count1, (Array<Int> hits)) { atomic_add(hits, tid(), 1); }
KJIT_KERNEL(count2, (Array<Int, 2> hits)) {
  auto [i, j] = tid<2>();
  atomic_add(hits, i, j, 1);
}
KJIT_KERNEL(count3, (Array<Int, 3> hits)) {
  auto [i, j, k] = tid<3>();
  atomic_add(hits, i, j, k, 1);
}
KJIT_KERNEL(count4, (Array<Int, 4> hits, Array<Int> flat)) {
  auto [i, j, k, l] = tid<4>();
  atomic_add(hits, i, j, k, l, 1);
  // The flat index is row-major over the launch: ((i*J + j)*K + k)*L + l.
  Int f = ((i * launch_dim(1) + j) * launch_dim(2) + k) * launch_dim(3) + l;
  flat[f] = f + 1;
}
KJIT_KERNEL(flat_over_3d, (Array<Int> hits)) { atomic_add(hits, tid(), 1); }
}  // namespace ld_tests

namespace {
void all_ones(const NdArray& a) {
  auto v = a.to_vector<int32_t>();
  for (size_t i = 0; i < v.size(); ++i) REQUIRE_MESSAGE(v[i] == 1, "index " << i << " hit " << v[i] << " times");
}
}  // namespace

TEST_CASE("1-D, 2-D, 3-D and 4-D launches touch every index exactly once") {
  auto h1 = zeros<int32_t>({100003});
  launch(ld_tests::count1, 100003, h1);
  all_ones(h1);
  auto h2 = zeros<int32_t>({37, 211});
  launch(ld_tests::count2, Dims{37, 211}, h2);
  all_ones(h2);
  auto h3 = zeros<int32_t>({7, 13, 29});
  launch(ld_tests::count3, Dims{7, 13, 29}, h3);
  all_ones(h3);
  auto h4 = zeros<int32_t>({3, 5, 7, 11});
  auto flat = zeros<int32_t>({3 * 5 * 7 * 11});
  launch(ld_tests::count4, Dims{3, 5, 7, 11}, h4, flat);
  all_ones(h4);
  auto f = flat.to_vector<int32_t>();
  for (size_t i = 0; i < f.size(); ++i) REQUIRE(f[i] == int32_t(i) + 1);
  auto hf = zeros<int32_t>({4 * 6 * 9});
  launch(ld_tests::flat_over_3d, Dims{4, 6, 9}, hf);  // tid() is flat for any launch
  all_ones(hf);
}

TEST_CASE("empty launches run nothing") {
  auto h = zeros<int32_t>({4});
  launch(ld_tests::count1, 0, h);
  CHECK(h.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 0});
}
