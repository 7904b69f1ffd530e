// examples/torch_dlpack/main.cpp — kjit kernels on libtorch tensors through DLPack, without
// copies: torch -> kjit (at::toDLPack / toDLPackVersioned, kjit::from_dlpack), kjit -> torch
// (to_dlpack, at::fromDLPack), a non-contiguous torch view written in place. Each result is checked
// against torch's own arithmetic; the ctest asserts the printed lines.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <cstdio>

#include "kjit/kjit.hpp"
#include "kjit/runtime/dlpack.hpp"

namespace torch_example {
KJIT_MODULE(torch_dlpack_example)
using namespace kjit::dsl;

KJIT_KERNEL(squared_lengths, (Array<Vec3f> points, Array<Float> out)) {
  Int i = tid();
  out[i] = length_sq(points[i]);
}

KJIT_KERNEL(add_grid_index, (Array<Float, 2> a)) {
  auto [i, j] = tid<2>();
  a(i, j) = a(i, j) + Float(10 * i + j);
}
}  // namespace torch_example

namespace {

int failures = 0;

void print_row(const char* what, const at::Tensor& t, bool ok) {
  at::Tensor flat = t.contiguous().reshape({-1});
  std::printf("%s:", what);
  for (int64_t i = 0; i < flat.numel(); ++i) std::printf(" %g", flat[i].item<float>());
  std::printf("  (%s)\n", ok ? "matches torch" : "DIFFERS FROM TORCH");
  failures += !ok;
}

}  // namespace

int main() {
  // torch -> kjit: an (n, 3) float32 tensor is an array of n vec3f; the kernel writes into a
  // torch tensor's memory.
  at::Tensor points = at::arange(12, at::kFloat).reshape({4, 3});
  at::Tensor lengths = at::empty({4}, at::kFloat);
#if DLPACK_MAJOR_VERSION >= 1  // a torch whose dlpack.h is 1.x exports the versioned struct too
  kjit::NdArray lengths_k = kjit::from_dlpack(at::toDLPackVersioned(lengths));
#else
  kjit::NdArray lengths_k = kjit::from_dlpack(at::toDLPack(lengths));
#endif
  kjit::launch(torch_example::squared_lengths, 4, kjit::from_dlpack<kjit::vec3f>(at::toDLPack(points)), lengths_k);
  print_row("squared lengths", lengths, at::equal(lengths, (points * points).sum(1)));

  // kjit -> torch: the tensor views kjit's memory, which lives until torch lets go of it.
  kjit::NdArray grid = kjit::zeros<float>({2, 3});
  at::Tensor grid_t = at::fromDLPack(grid.to_dlpack());
  kjit::launch(torch_example::add_grid_index, kjit::Dims{2, 3}, grid);
  grid = kjit::NdArray();  // torch's tensor still holds the memory
  print_row("kjit array seen by torch", grid_t,
            at::equal(grid_t, at::tensor({0.f, 1.f, 2.f, 10.f, 11.f, 12.f}).reshape({2, 3})));

  // A transposed (non-contiguous) torch view, written in place through its strides.
  at::Tensor base = at::zeros({3, 2}, at::kFloat);
  at::Tensor view = base.t();  // 2 x 3, strides (1, 2)
  kjit::launch(torch_example::add_grid_index, kjit::Dims{2, 3}, kjit::from_dlpack(at::toDLPack(view)));
  print_row("transposed torch view", base,
            at::equal(base, at::tensor({0.f, 10.f, 1.f, 11.f, 2.f, 12.f}).reshape({3, 2})));

  std::printf("%s\n", failures ? "FAILED" : "all results match torch");
  return failures ? 1 : 0;
}
