// The XLA FFI handlers that build a triangle mesh's BVH for kjit.jax.mesh: kjit::Mesh's host
// builder over XLA buffers, into fixed-size results (their sizes depend on the face count only).
#include <cstring>
#include <vector>

#include "frame.hpp"
#include "kjit/ffi/ffi.hpp"
#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/mesh_bvh_into.hpp"

namespace kjit::ffi::detail {

namespace {

constexpr const char* kWhat = "kjit.jax.mesh";

/// The buffers of a BVH call, checked: points (P, 3) float32, indices (3 F,) int32, bounds
/// (2 C, 3) float32, links (2 C + F,) int32.
struct BvhCall {
  const xla::Buffer *points, *indices, *bounds, *links;
  int64_t n_points = 0, n_indices = 0, faces = 0, capacity = 0;
};

void expect(const xla::Buffer& b, const char* name, xla::DataType dtype, std::initializer_list<int64_t> dims) {
  bool ok = b.dtype == dtype && b.rank == int64_t(dims.size());
  int d = 0;
  for (int64_t want : dims) {
    ok = ok && (want < 0 || b.dims[d] == want);
    ++d;
  }
  if (!ok) {
    std::string shape = "(";
    d = 0;
    for (int64_t want : dims) shape += (d++ ? ", " : "") + (want < 0 ? std::string("n") : std::to_string(want));
    invalid(std::string(kWhat) + ": " + name + " must be " + dtype_name(dtype) + " of shape " + shape +
            (dims.size() == 1 ? ",)" : ")") + ", got " + dtype_name(b.dtype) + " of shape " + shape_str(b.dims, b.rank));
  }
}

BvhCall decode(const xla::CallFrame* f) {
  if (f->args.size != 2 || f->rets.size != 2)
    invalid(std::string(kWhat) + ": the BVH call takes points and indices and gives bvh_bounds and bvh_nodes, got " +
            std::to_string(f->args.size) + " operands and " + std::to_string(f->rets.size) + " results");
  BvhCall c{&arg_buffer(f, 0), &arg_buffer(f, 1), &ret_buffer(f, 0), &ret_buffer(f, 1)};
  expect(*c.points, "points", xla::kF32, {-1, 3});
  expect(*c.indices, "indices", xla::kS32, {-1});
  c.n_points = c.points->dims[0];
  c.n_indices = c.indices->dims[0];
  c.faces = c.n_indices / 3;
  c.capacity = kjit::detail::bvh_node_capacity(c.faces);
  expect(*c.bounds, "bvh_bounds", xla::kF32, {2 * c.capacity, 3});
  expect(*c.links, "bvh_nodes", xla::kS32, {2 * c.capacity + c.faces});
  return c;
}

void build(const BvhCall& c, const void* points, const void* indices, void* bounds, void* links) {
  kjit::detail::mesh_bvh_into(kWhat, static_cast<const vec3f*>(points), c.n_points,
                              static_cast<const int32_t*>(indices), c.n_indices, static_cast<vec3f*>(bounds),
                              static_cast<int32_t*>(links));
}

void run_cpu(const xla::CallFrame* f) {
  const BvhCall c = decode(f);
  build(c, c.points->data, c.indices->data, c.bounds->data, c.links->data);
}

/// On CUDA the build runs on the host: the inputs come over, the results go back, and the
/// stream is waited for twice (before the build, and before the host copies are freed).
void run_cuda(const xla::CallFrame* f) {
  const BvhCall c = decode(f);
  int ordinal = device_ordinal_of(f);
  if (ordinal < 0) ordinal = 0;
  void* stream = stream_of(f);
  std::vector<vec3f> points(size_t(c.n_points)), bounds(size_t(2 * c.capacity));
  std::vector<int32_t> indices(size_t(c.n_indices)), links(size_t(2 * c.capacity + c.faces));
  using cuda::CopyKind;
  cuda::copy(ordinal, points.data(), c.points->data, points.size() * sizeof(vec3f), CopyKind::DeviceToHost, stream);
  cuda::copy(ordinal, indices.data(), c.indices->data, indices.size() * sizeof(int32_t), CopyKind::DeviceToHost,
             stream);
  cuda::stream_synchronize(ordinal, stream);
  build(c, points.data(), indices.data(), bounds.data(), links.data());
  cuda::copy(ordinal, c.bounds->data, bounds.data(), bounds.size() * sizeof(vec3f), CopyKind::HostToDevice, stream);
  cuda::copy(ordinal, c.links->data, links.data(), links.size() * sizeof(int32_t), CopyKind::HostToDevice, stream);
  cuda::stream_synchronize(ordinal, stream);
}

}  // namespace

}  // namespace kjit::ffi::detail

using kjit::ffi::detail::guarded;

extern "C" {

KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_mesh_bvh_cpu(kjit::xla::CallFrame* frame) {
  return guarded(frame, 0, "kjit_mesh_bvh", [&] { kjit::ffi::detail::run_cpu(frame); });
}

KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_mesh_bvh_cuda(kjit::xla::CallFrame* frame) {
  return guarded(frame, 0, "kjit_mesh_bvh", [&] { kjit::ffi::detail::run_cuda(frame); });
}

}  // extern "C"
