// DLPack in C++: NdArray <-> DLManagedTensor(Versioned) round trips share memory for every
// element type and 1-4 dimensions, strided, transposed and empty; kernels read and write a
// producer's memory; the producer's deleter runs exactly once (fake producers count it); every
// tensor kjit cannot read is a User error naming what is wrong, after which the deleter has run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/dlpack.hpp"
#include "user_error.hpp"

using namespace kjit;
using kjit::test::error_of;

namespace dlpack_tests {
KJIT_MODULE(runtime_dlpack)
using namespace kjit::dsl;
KJIT_KERNEL(axpy_into, (Array<Float> x, Float a, Array<Float> out)) {
  Int i = tid();
  out[i] = a * x[i] + out[i];
}
KJIT_KERNEL(add_index2, (Array<Float, 2> a)) {
  auto [i, j] = tid<2>();
  a(i, j) = a(i, j) + Float(10 * i + j);
}
KJIT_KERNEL(twice_vec, (Array<Vec3f> v)) {
  Int i = tid();
  v[i] = v[i] * Float(2.0f);
}
KJIT_KERNEL(row_sums, (Array<Mat22d> m, Array<Double> out)) {
  Int i = tid();
  out[i] = m[i](0, 0) + m[i](0, 1) * Double(10.0) + m[i](1, 0) * Double(100.0) + m[i](1, 1) * Double(1000.0);
}
KJIT_STRUCT(DlpackPt, (Float, m), (Vec3f, p));
}  // namespace dlpack_tests
using dlpack_tests::DlpackPt;

namespace {

/// A producer's tensor: its own memory, extents and element strides, and a count of the calls
/// of its deleter.
template <class Managed>
struct Fake {
  Managed managed{};
  std::vector<unsigned char> bytes;
  std::vector<int64_t> shape, strides;
  int* deleted;
};

struct Spec {
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape{4};
  std::vector<int64_t> strides;  ///< in elements; empty: the strides pointer is null
  size_t bytes = 64;              ///< memory to allocate (0: a null data pointer)
  uint64_t byte_offset = 0;
  DLDevice device{kDLCPU, 0};
};

template <class Managed>
Managed* fake(int* deleted, const Spec& s = Spec()) {
  auto* f = new Fake<Managed>();
  f->bytes.assign(s.bytes, 0);
  f->shape = s.shape;
  f->strides = s.strides;
  f->deleted = deleted;
  DLTensor& t = f->managed.dl_tensor;
  t.data = s.bytes ? f->bytes.data() : nullptr;
  t.device = s.device;
  t.ndim = int32_t(s.shape.size());
  t.dtype = s.dtype;
  t.shape = f->shape.data();
  t.strides = s.strides.empty() ? nullptr : f->strides.data();
  t.byte_offset = s.byte_offset;
  f->managed.manager_ctx = f;
  f->managed.deleter = [](Managed* self) {
    auto* me = static_cast<Fake<Managed>*>(self->manager_ctx);
    ++*me->deleted;
    delete me;
  };
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) f->managed.version = {1, 1};
  return &f->managed;
}

/// DLPack's dtype of each kjit scalar, restated from the specification.
DLDataType expected_dtype(ir::Scalar s) {
  using S = ir::Scalar;
  switch (s) {
    case S::Bool: return {6, 8, 1};
    case S::I8: return {0, 8, 1};
    case S::U8: return {1, 8, 1};
    case S::I16: return {0, 16, 1};
    case S::U16: return {1, 16, 1};
    case S::I32: return {0, 32, 1};
    case S::U32: return {1, 32, 1};
    case S::I64: return {0, 64, 1};
    case S::U64: return {1, 64, 1};
    case S::F16: return {2, 16, 1};
    case S::BF16: return {4, 16, 1};
    case S::F32: return {2, 32, 1};
    case S::F64: return {2, 64, 1};
  }
  return {};
}

std::vector<int64_t> dims_of(const DLTensor& t) { return std::vector<int64_t>(t.shape, t.shape + t.ndim); }
std::vector<int64_t> strides_of(const DLTensor& t) { return std::vector<int64_t>(t.strides, t.strides + t.ndim); }

}  // namespace

TEST_CASE("dlpack: every scalar type in 1 to 4 dimensions round-trips, sharing the memory") {
  const std::vector<Shape> shapes = {{5}, {2, 3}, {2, 1, 3}, {2, 3, 1, 2}};
  for (int k = 0; k < ir::kScalarCount; ++k) {
    const auto s = ir::Scalar(k);
    for (const Shape& shape : shapes) {
      CAPTURE(ir::scalar_name(s));
      CAPTURE(shape.size());
      NdArray a = NdArray::zeros(ir::Type::scalar_of(s), shape);
      DLManagedTensor* m = a.to_dlpack();
      const DLTensor& t = m->dl_tensor;
      const DLDataType want = expected_dtype(s);
      CHECK(int(t.dtype.code) == int(want.code));
      CHECK(int(t.dtype.bits) == int(want.bits));
      CHECK(t.dtype.lanes == 1);
      CHECK(t.device.device_type == kDLCPU);
      CHECK(t.device.device_id == 0);
      CHECK(t.data == a.data());
      CHECK(t.byte_offset == 0);
      CHECK(dims_of(t) == shape);
      std::vector<int64_t> row_major(shape.size());
      int64_t step = 1;
      for (size_t d = shape.size(); d-- > 0;) row_major[d] = step, step *= shape[d];
      CHECK(strides_of(t) == row_major);

      NdArray b = from_dlpack(m);
      CHECK(b.element() == a.element());
      CHECK(b.shape() == a.shape());
      CHECK(b.strides() == a.strides());
      CHECK(b.data() == a.data());
      // Writes through one are reads of the other.
      const size_t bytes = size_t(a.size()) * a.element_bytes();
      for (size_t i = 0; i < bytes; ++i) static_cast<unsigned char*>(b.data())[i] = static_cast<unsigned char>(i * 7 + 1);
      for (size_t i = 0; i < bytes; ++i) CHECK(static_cast<unsigned char*>(a.data())[i] == static_cast<unsigned char>(i * 7 + 1));
    }
  }
}

TEST_CASE("dlpack: the versioned struct says DLPack 1.1, flags 0, and round-trips") {
  NdArray a = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2});
  DLManagedTensorVersioned* m = a.to_dlpack_versioned();
  CHECK(m->version.major == 1);
  CHECK(m->version.minor == 1);
  CHECK(m->flags == 0);
  CHECK(m->dl_tensor.dtype.code == kDLFloat);
  CHECK(m->dl_tensor.dtype.bits == 64);
  CHECK(dims_of(m->dl_tensor) == std::vector<int64_t>{3, 2});
  NdArray b = from_dlpack(m);
  CHECK(b.data() == a.data());
  CHECK(b.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("dlpack: vector, quaternion, transform and matrix elements are extra dimensions") {
  NdArray v = from_vector(std::vector<vec3f>{vec3f{{1, 2, 3}}, vec3f{{4, 5, 6}}});
  DLManagedTensor* m = v.to_dlpack();
  CHECK(dims_of(m->dl_tensor) == std::vector<int64_t>{2, 3});
  CHECK(strides_of(m->dl_tensor) == std::vector<int64_t>{3, 1});
  CHECK(m->dl_tensor.dtype.code == kDLFloat);
  NdArray flat = from_dlpack(m);  // no element type asked: float32 in 2 dimensions
  CHECK(flat.element() == ir_type_of<float>());
  CHECK(flat.shape() == Shape{2, 3});
  CHECK(flat.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  NdArray back = from_dlpack<vec3f>(flat.to_dlpack());
  CHECK(back.element() == ir_type_of<vec3f>());
  CHECK(back.shape() == Shape{2});
  CHECK(back.strides() == std::vector<int64_t>{12});
  CHECK(back.to_vector<vec3f>()[1][2] == 6);

  NdArray mats = zeros<mat22d>({3, 2});
  DLManagedTensorVersioned* mm = mats.to_dlpack_versioned();
  CHECK(dims_of(mm->dl_tensor) == std::vector<int64_t>{3, 2, 2, 2});
  CHECK(strides_of(mm->dl_tensor) == std::vector<int64_t>{8, 4, 2, 1});
  CHECK(mm->dl_tensor.dtype.bits == 64);
  NdArray mats_back = from_dlpack<mat22d>(mm);
  CHECK(mats_back.shape() == Shape{3, 2});
  CHECK(mats_back.data() == mats.data());

  for (const auto& [element, inner] : std::vector<std::pair<ir::Type, int64_t>>{
           {ir_type_of<quatf>(), 4}, {ir_type_of<transformf>(), 7}, {ir_type_of<vec2h>(), 2}, {ir_type_of<vec4i>(), 4}}) {
    CAPTURE(element.str());
    NdArray a = NdArray::zeros(element, {5});
    DLManagedTensor* t = a.to_dlpack();
    CHECK(dims_of(t->dl_tensor) == std::vector<int64_t>{5, inner});
    NdArray b = from_dlpack(t, element);
    CHECK(b.element() == element);
    CHECK(b.shape() == Shape{5});
  }
}

TEST_CASE("dlpack: strided, transposed, sliced and reversed views keep their layout") {
  NdArray a = from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
  DLManagedTensor* t = a.transpose().to_dlpack();
  CHECK(dims_of(t->dl_tensor) == std::vector<int64_t>{3, 2});
  CHECK(strides_of(t->dl_tensor) == std::vector<int64_t>{1, 3});
  NdArray tt = from_dlpack(t);
  CHECK_FALSE(tt.is_contiguous());
  CHECK(tt.copy().to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});

  DLManagedTensor* row = a[1].to_dlpack();
  CHECK(row->dl_tensor.data == static_cast<float*>(a.data()) + 3);
  CHECK(from_dlpack(row).to_vector<float>() == std::vector<float>{3, 4, 5});

  // A producer's view: every other column of a 3x4 float32 matrix, another reversed (a
  // negative stride from the last element, reached through byte_offset), a broadcast row.
  int deleted = 0;
  Spec s;
  s.shape = {3, 2};
  s.strides = {4, 2};
  s.bytes = 12 * sizeof(float);
  DLManagedTensor* cols = fake<DLManagedTensor>(&deleted, s);
  float* mem = static_cast<float*>(cols->dl_tensor.data);
  for (int i = 0; i < 12; ++i) mem[i] = float(i);
  NdArray c = from_dlpack(cols);
  CHECK(c.strides() == std::vector<int64_t>{16, 8});
  CHECK(c.copy().to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});

  s.shape = {4};
  s.strides = {-1};
  s.bytes = 4 * sizeof(float);
  s.byte_offset = 3 * sizeof(float);
  DLManagedTensorVersioned* rev = fake<DLManagedTensorVersioned>(&deleted, s);
  float* rmem = static_cast<float*>(rev->dl_tensor.data);
  for (int i = 0; i < 4; ++i) rmem[i] = float(10 + i);
  NdArray r = from_dlpack(rev);
  CHECK(r.strides() == std::vector<int64_t>{-4});
  CHECK(r.data() == rmem + 3);
  CHECK(r.copy().to_vector<float>() == std::vector<float>{13, 12, 11, 10});
  DLManagedTensor* again = r.to_dlpack();  // exported as it is: stride -1 from the last element
  CHECK(again->dl_tensor.data == rmem + 3);
  CHECK(strides_of(again->dl_tensor) == std::vector<int64_t>{-1});
  again->deleter(again);

  s.shape = {3, 2};
  s.strides = {0, 1};
  s.bytes = 2 * sizeof(float);
  s.byte_offset = 0;
  DLManagedTensor* bcast = fake<DLManagedTensor>(&deleted, s);
  static_cast<float*>(bcast->dl_tensor.data)[1] = 7;
  CHECK(from_dlpack(bcast).copy().to_vector<float>() == std::vector<float>{0, 7, 0, 7, 0, 7});
  c = NdArray();
  r = NdArray();
  CHECK(deleted == 3);
}

TEST_CASE("dlpack: random producer layouts read as an oracle reads the memory, and export unchanged") {
  // Layouts a producer can have: dimensions permuted, stepped and reversed over a buffer of
  // distinct values; each element of the view against the buffer at its strided offset.
  std::mt19937 rng(33);
  for (int trial = 0; trial < 300; ++trial) {
    const int ndim = 1 + int(rng() % 4);
    const size_t n = static_cast<size_t>(ndim);
    std::vector<int64_t> shape(n, 0), step(n, 0), order(n, 0);
    for (size_t d = 0; d < n; ++d) {
      shape[d] = int64_t(rng() % 4);
      step[d] = 1 + int64_t(rng() % 2);
      order[d] = int64_t(d);
    }
    std::shuffle(order.begin(), order.end(), rng);
    // Compact strides in the permuted order, times each dimension's step.
    std::vector<int64_t> strides(n, 0);
    int64_t span = 1;
    for (int k = ndim - 1; k >= 0; --k) {
      const size_t d = size_t(order[size_t(k)]);
      strides[d] = span * step[d];
      span *= std::max<int64_t>(shape[d], 1) * step[d];
    }
    // Reversed dimensions start at their last element.
    int64_t offset = 0;
    for (int d = 0; d < ndim; ++d)
      if (rng() % 3 == 0 && shape[size_t(d)] > 0) offset += (shape[size_t(d)] - 1) * strides[size_t(d)], strides[size_t(d)] = -strides[size_t(d)];
    int deleted = 0;
    Spec sp;
    sp.shape = shape;
    sp.strides = strides;
    sp.bytes = size_t(span) * sizeof(float);
    sp.byte_offset = uint64_t(offset) * sizeof(float);
    DLManagedTensor* m = fake<DLManagedTensor>(&deleted, sp);
    const float* mem = static_cast<const float*>(m->dl_tensor.data);
    for (int64_t i = 0; i < span; ++i) const_cast<float*>(mem)[i] = float(i);
    NdArray a = from_dlpack(m);
    std::vector<float> want;
    std::vector<int64_t> index(n, 0);
    int64_t count = 1;
    for (int64_t e : shape) count *= e;
    for (int64_t n = 0; n < count; ++n) {
      int64_t at = offset;
      for (int d = 0; d < ndim; ++d) at += index[size_t(d)] * strides[size_t(d)];
      want.push_back(mem[at]);
      for (int d = ndim - 1; d >= 0 && ++index[size_t(d)] == shape[size_t(d)]; --d) index[size_t(d)] = 0;
    }
    CAPTURE(trial);
    CHECK(a.copy().to_vector<float>() == want);
    DLManagedTensorVersioned* back = a.to_dlpack_versioned();
    CHECK(back->dl_tensor.data == mem + offset);
    CHECK(dims_of(back->dl_tensor) == shape);
    CHECK(strides_of(back->dl_tensor) == strides);
    a = NdArray();
    CHECK(deleted == 0);  // the export holds the producer
    back->deleter(back);
    CHECK(deleted == 1);
  }
}

TEST_CASE("dlpack: kernels read and write a producer's memory (cpu)") {
  int deleted = 0;
  Spec s;
  s.shape = {5};
  s.bytes = 5 * sizeof(float);
  DLManagedTensor* x = fake<DLManagedTensor>(&deleted, s);
  DLManagedTensorVersioned* out = fake<DLManagedTensorVersioned>(&deleted, s);
  float* xm = static_cast<float*>(x->dl_tensor.data);
  float* om = static_cast<float*>(out->dl_tensor.data);
  for (int i = 0; i < 5; ++i) xm[i] = float(i), om[i] = 100.0f * float(i);
  {
    NdArray xa = from_dlpack(x), oa = from_dlpack(out);
    launch(dlpack_tests::axpy_into, 5, xa, 3.0f, oa);
    for (int i = 0; i < 5; ++i) CHECK(om[i] == 103.0f * float(i));
  }
  CHECK(deleted == 2);

  // A transposed producer view: element (i, j) of the view is (j, i) of the memory, which
  // (2 x 3, row-major) then holds 10 i + j at [j][i].
  s.shape = {3, 2};
  s.strides = {1, 3};
  s.bytes = 6 * sizeof(float);
  DLManagedTensor* t = fake<DLManagedTensor>(&deleted, s);
  float* tm = static_cast<float*>(t->dl_tensor.data);
  NdArray view = from_dlpack(t);
  launch(dlpack_tests::add_index2, Dims{3, 2}, view);
  CHECK(std::vector<float>(tm, tm + 6) == std::vector<float>{0, 10, 20, 1, 11, 21});
  view = NdArray();
  CHECK(deleted == 3);
  // A temporary view as a launch argument: the producer goes with the launch's statement.
  launch(dlpack_tests::add_index2, Dims{3, 2}, from_dlpack(fake<DLManagedTensor>(&deleted, s)));
  CHECK(deleted == 4);

  // (n, 3) float32 as an array of vec3f; (n, 2, 2) float64 as mat22d.
  s.shape = {4, 3};
  s.strides = {};
  s.bytes = 12 * sizeof(float);
  DLManagedTensor* v = fake<DLManagedTensor>(&deleted, s);
  float* vm = static_cast<float*>(v->dl_tensor.data);
  for (int i = 0; i < 12; ++i) vm[i] = float(i);
  NdArray va = from_dlpack<vec3f>(v);
  launch(dlpack_tests::twice_vec, 4, va);
  for (int i = 0; i < 12; ++i) CHECK(vm[i] == 2.0f * float(i));

  s.dtype = {kDLFloat, 64, 1};
  s.shape = {2, 2, 2};
  s.bytes = 8 * sizeof(double);
  DLManagedTensorVersioned* mt = fake<DLManagedTensorVersioned>(&deleted, s);
  double* mtm = static_cast<double*>(mt->dl_tensor.data);
  for (int i = 0; i < 8; ++i) mtm[i] = double(i + 1);
  NdArray sums = zeros<double>({2});
  launch(dlpack_tests::row_sums, 2, from_dlpack<mat22d>(mt), sums);
  CHECK(sums.to_vector<double>() == std::vector<double>{1 + 20 + 300 + 4000, 5 + 60 + 700 + 8000});
}

TEST_CASE("dlpack: empty tensors") {
  int deleted = 0;
  Spec s;
  s.shape = {0};
  s.bytes = 0;  // a null data pointer, as the specification asks of empty tensors
  NdArray e = from_dlpack(fake<DLManagedTensor>(&deleted, s));
  CHECK(e.size() == 0);
  CHECK(e.shape() == Shape{0});
  s.shape = {0, 3};
  NdArray ev = from_dlpack<vec3f>(fake<DLManagedTensorVersioned>(&deleted, s));
  CHECK(ev.shape() == Shape{0});
  CHECK(ev.element() == ir_type_of<vec3f>());
  launch(dlpack_tests::twice_vec, 0, ev);  // a launch of no threads over it is fine

  NdArray z = zeros<float>({3, 0});
  DLManagedTensor* m = z.to_dlpack();
  CHECK(dims_of(m->dl_tensor) == std::vector<int64_t>{3, 0});
  NdArray zb = from_dlpack(m);
  CHECK(zb.size() == 0);
  e = ev = NdArray();
  CHECK(deleted == 2);
}

TEST_CASE("dlpack: the producer's deleter runs once, when the last view of its memory goes") {
  int deleted = 0;
  Spec s;
  s.shape = {4, 2};
  s.bytes = 8 * sizeof(float);
  NdArray a = from_dlpack(fake<DLManagedTensor>(&deleted, s));
  {
    NdArray copy = a;
    NdArray row = a[1], t = a.transpose(), sl = a.slice(1, 3), flat = a.reshape({8});
    a = NdArray();
    CHECK(deleted == 0);
    copy = NdArray();
    row = t = sl = NdArray();
    CHECK(deleted == 0);
    CHECK(flat.to_vector<float>() == std::vector<float>(8, 0.0f));
  }
  CHECK(deleted == 1);

  // Re-exported: kjit's tensor keeps the producer's alive until its own deleter runs.
  NdArray b = from_dlpack(fake<DLManagedTensorVersioned>(&deleted, s));
  DLManagedTensor* re = b.to_dlpack();
  b = NdArray();
  CHECK(deleted == 1);
  static_cast<float*>(re->dl_tensor.data)[7] = 1;  // still the producer's memory (ASan checks)
  re->deleter(re);
  CHECK(deleted == 2);

  // A copy() owns kjit's memory: the producer goes with the view.
  NdArray c = from_dlpack(fake<DLManagedTensor>(&deleted, s));
  NdArray owned = c.copy();
  c = NdArray();
  CHECK(deleted == 3);
  CHECK(owned.size() == 8);

  // Dropped on another thread.
  NdArray d = from_dlpack(fake<DLManagedTensor>(&deleted, s));
  std::thread([d]() mutable { d = NdArray(); }).join();
  CHECK(deleted == 3);
  d = NdArray();
  CHECK(deleted == 4);

  // A tensor without a deleter is fine: nothing to call.
  float mem[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  DLManagedTensor bare{};
  bare.dl_tensor = DLTensor{mem, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  CHECK(from_dlpack(&bare).to_vector<float>() == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("dlpack: an exported array stays alive until the consumer calls the deleter") {
  DLManagedTensor* m;
  DLManagedTensorVersioned* mv;
  {
    NdArray a = from_vector(std::vector<int32_t>{5, 6, 7});
    m = a.to_dlpack();
    mv = a.to_dlpack_versioned();
  }
  CHECK(static_cast<int32_t*>(m->dl_tensor.data)[2] == 7);  // ASan: no use after free
  CHECK(static_cast<int32_t*>(mv->dl_tensor.data)[0] == 5);
  m->deleter(m);
  CHECK(static_cast<int32_t*>(mv->dl_tensor.data)[1] == 6);
  mv->deleter(mv);
  // The gradient buffer is exported on request, as its own array.
  NdArray g = zeros<float>({2}).requires_grad();
  DLManagedTensor* gm = g.grad().to_dlpack();
  CHECK(gm->dl_tensor.data == g.grad().data());
  CHECK(gm->dl_tensor.data != g.data());
  gm->deleter(gm);
}

TEST_CASE("dlpack: CUDA and pinned tensors map to kjit's devices (no GPU touched)") {
  // The CUDA path is checked for its mapping only: no memory is read here.
  int deleted = 0;
  Spec s;
  s.device = {kDLCUDA, 1};
  NdArray a = from_dlpack(fake<DLManagedTensor>(&deleted, s));
  CHECK(a.device() == Device::cuda(1));
  DLManagedTensor* m = a.to_dlpack();
  CHECK(m->dl_tensor.device.device_type == kDLCUDA);
  CHECK(m->dl_tensor.device.device_id == 1);
  m->deleter(m);
  s.device = {kDLCUDAHost, 0};
  CHECK(from_dlpack(fake<DLManagedTensor>(&deleted, s)).device() == Device::cpu());
  a = NdArray();
  CHECK(deleted == 2);
}

TEST_CASE("dlpack: tensors kjit cannot read are User errors naming what is wrong; the deleter has run") {
  CHECK(error_of([] { from_dlpack(static_cast<DLManagedTensor*>(nullptr)); }) == "from_dlpack: the tensor is null");
  CHECK(error_of([] { from_dlpack(static_cast<DLManagedTensorVersioned*>(nullptr)); }) == "from_dlpack: the tensor is null");

  struct Case {
    Spec spec;
    ir::Type element;
    std::string message;
  };
  auto with = [](auto change) {
    Spec s;
    change(s);
    return s;
  };
  const ir::Type none;
  const std::vector<Case> cases = {
      {with([](Spec& s) { s.dtype = {kDLComplex, 64, 1}; }), none,
       "from_dlpack: complex64 tensors are not supported: kjit has no such element type"},
      {with([](Spec& s) { s.dtype = {kDLFloat8_e4m3fn, 8, 1}; }), none,
       "from_dlpack: float8_e4m3fn tensors are not supported: kjit has no such element type"},
      {with([](Spec& s) { s.dtype = {kDLOpaqueHandle, 64, 1}; }), none,
       "from_dlpack: opaque handle64 tensors are not supported: kjit has no such element type"},
      {with([](Spec& s) { s.dtype = {42, 8, 1}; }), none,
       "from_dlpack: type code 42 of 8 bits tensors are not supported: kjit has no such element type"},
      {with([](Spec& s) { s.dtype = {kDLInt, 24, 1}; }), none,
       "from_dlpack: int24 tensors are not supported: kjit has no such element type"},
      {with([](Spec& s) { s.dtype = {kDLBool, 1, 1}; }), none,
       "from_dlpack: bool1 tensors are not supported: kjit has no such element type"},
      {with([](Spec& s) { s.dtype = {kDLFloat, 32, 4}; }), none,
       "from_dlpack: the dtype float32x4 has 4 lanes; kjit reads tensors of one lane (give the components as the "
       "last dimension and ask for a vector element type)"},
      {with([](Spec& s) { s.device = {kDLOpenCL, 0}; }), none,
       "from_dlpack: the tensor is on OpenCL (kDLOpenCL = 4); kjit reads cpu (kDLCPU), pinned host (kDLCUDAHost) "
       "and CUDA (kDLCUDA) memory"},
      {with([](Spec& s) { s.device = {kDLCUDAManaged, 0}; }), none,
       "from_dlpack: the tensor is on CUDA managed memory (kDLCUDAManaged = 13); kjit reads cpu (kDLCPU), pinned host "
       "(kDLCUDAHost) and CUDA (kDLCUDA) memory"},
      {with([](Spec& s) { s.device = {DLDeviceType(99), 0}; }), none,
       "from_dlpack: the tensor is on device type 99 (not one of DLPack 1.1's); kjit reads cpu (kDLCPU), pinned "
       "host (kDLCUDAHost) and CUDA (kDLCUDA) memory"},
      {with([](Spec& s) { s.device = {kDLCUDA, -1}; }), none, "from_dlpack: a CUDA tensor of device_id -1"},
      {with([](Spec& s) { s.shape = {}; }), none, "from_dlpack: a 0-D tensor; kjit arrays have 1 to 4 dimensions"},
      {with([](Spec& s) { s.shape = {1, 1, 1, 1, 2}; }), none,
       "from_dlpack: a 5-D tensor; kjit arrays have 1 to 4 dimensions"},
      {with([](Spec& s) { s.shape = {3}; }), ir_type_of<vec3f>(),
       "from_dlpack: a 1-D tensor as an array of vec3f (whose elements take the last 1 dimension) leaves 0 array "
       "dimensions; kjit arrays have 1 to 4 dimensions"},
      {with([](Spec& s) { s.shape = {1, 1, 1, 1, 1, 2, 2}; }), ir_type_of<mat22f>(),
       "from_dlpack: a 7-D tensor as an array of mat22f (whose elements take the last 2 dimensions) leaves 5 array "
       "dimensions; kjit arrays have 1 to 4 dimensions"},
      {with([](Spec& s) { s.shape = {4, 4}; }), ir_type_of<vec3f>(),
       "from_dlpack: a tensor of shape {4, 4} as an array of vec3f needs 3 components in its last dimension, not 4"},
      {with([](Spec& s) { s.shape = {2, 3}; s.strides = {1, 2}; }), ir_type_of<vec3f>(),
       "from_dlpack: a tensor of shape {2, 3} as an array of vec3f needs its components adjacent (element stride 1 "
       "in the last dimension), not 2"},
      {with([](Spec& s) { s.shape = {2, 2, 3}; }), ir_type_of<mat22f>(),
       "from_dlpack: a tensor of shape {2, 2, 3} as an array of mat22f needs its last two dimensions 2 x 2, not 2 x 3"},
      {with([](Spec& s) { s.shape = {2, 2, 2}; s.strides = {4, 1, 2}; }), ir_type_of<mat22f>(),
       "from_dlpack: a tensor of shape {2, 2, 2} as an array of mat22f needs its components row-major and compact "
       "(element strides (2, 1) in the last two dimensions), not (1, 2)"},
      {with([](Spec& s) { s.shape = {2, 2, 2}; s.strides = {8, 4, 1}; }), ir_type_of<mat22f>(),
       "from_dlpack: a tensor of shape {2, 2, 2} as an array of mat22f needs its components row-major and compact "
       "(element strides (2, 1) in the last two dimensions), not (4, 1)"},
      {Spec(), ir_type_of<double>(), "from_dlpack: a float32 tensor cannot be an array of float64"},
      {with([](Spec& s) { s.shape = {2, 3}; }), ir_type_of<vec3d>(),
       "from_dlpack: a float32 tensor cannot be an array of vec3d (float64 components)"},
      {Spec(), ir::Type::array(ir_type_of<float>(), 1), "from_dlpack: the element type array1d<float32> is an array type"},
      {Spec(), ir_type_of<DlpackPt>(),
       "from_dlpack: an array of dlpack_tests::DlpackPt cannot view a tensor: struct elements have no DLPack dtype"},
      {with([](Spec& s) { s.byte_offset = 2; }), none, "not aligned to the 4 bytes of a float32"},
      {with([](Spec& s) { s.shape = {3, -1}; }), none,
       "from_dlpack: array of shape {3, -1}: extents must not be negative"},
      {with([](Spec& s) { s.shape = {int64_t(1) << 31}; }), none,
       "from_dlpack: array of shape {2147483648}: extent 2147483648 exceeds the 2^31-1 per dimension"},
      {with([](Spec& s) { s.bytes = 0; }), none, "from_dlpack: a tensor of shape {4} has 4 elements but no data (a null pointer)"},
      {with([](Spec& s) { s.strides = {int64_t(1) << 62}; }), none,
       "from_dlpack: the stride of 4611686018427387904 elements in dimension 0 of a tensor of shape {4} overflows 64 "
       "bits in bytes"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    // The whole message, or (where it holds an address) its end.
    auto matches = [&](const std::string& got, const char* what) {
      const std::string want = c.message.rfind("from_dlpack: ", 0) == 0
                                   ? what + c.message.substr(std::string("from_dlpack").size()) : c.message;
      CAPTURE(got);
      return c.message.rfind("from_dlpack: ", 0) == 0 ? got == want : got.find(want) != std::string::npos;
    };
    int deleted = 0;
    CHECK(matches(error_of([&] { from_dlpack(fake<DLManagedTensor>(&deleted, c.spec), c.element); }), "from_dlpack"));
    CHECK(deleted == 1);
    // The versioned struct says the same, and its deleter has run too.
    CHECK(matches(error_of([&] { from_dlpack(fake<DLManagedTensorVersioned>(&deleted, c.spec), c.element); }),
                  "from_dlpack"));
    CHECK(deleted == 2);
    // A non-owning view says it under its own name, and calls nothing.
    DLManagedTensor* m = fake<DLManagedTensor>(&deleted, c.spec);
    CHECK(matches(error_of([&] { dlpack_view(m->dl_tensor, c.element); }), "dlpack_view"));
    CHECK(deleted == 2);
    m->deleter(m);
  }
  // The message names where a misaligned pointer is.
  int deleted = 0;
  Spec s;
  s.byte_offset = 6;
  DLManagedTensor* m = fake<DLManagedTensor>(&deleted, s);
  char at[160];
  std::snprintf(at, sizeof at, "from_dlpack: the data (%p + byte_offset 6) is not aligned to the 4 bytes of a float32",
                m->dl_tensor.data);
  CHECK(error_of([&] { from_dlpack(m); }) == at);
}

TEST_CASE("dlpack: versioned tensors of another major version, and read-only ones") {
  int deleted = 0;
  DLManagedTensorVersioned* v2 = fake<DLManagedTensorVersioned>(&deleted);
  v2->version = {2, 0};
  CHECK(error_of([&] { from_dlpack(v2); }) ==
        "from_dlpack: a DLPack 2.0 tensor; kjit reads DLPack 1.x (the tensor's deleter has been called)");
  CHECK(deleted == 1);

  DLManagedTensorVersioned* later = fake<DLManagedTensorVersioned>(&deleted);
  later->version = {1, 7};  // a later minor version keeps the layout
  CHECK(from_dlpack(later).size() == 4);
  CHECK(deleted == 2);

  DLManagedTensorVersioned* ro = fake<DLManagedTensorVersioned>(&deleted);
  ro->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  CHECK(error_of([&] { from_dlpack(ro); }) ==
        "from_dlpack: the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) and kjit cannot stop a kernel writing an "
        "array; pass allow_read_only = true if only kernels that read it will see it");
  CHECK(deleted == 3);
  DLManagedTensorVersioned* ro_ok = fake<DLManagedTensorVersioned>(&deleted);
  ro_ok->flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  NdArray r = from_dlpack(ro_ok, ir::Type(), true);
  CHECK(r.size() == 4);
  DLManagedTensorVersioned* ro_t = fake<DLManagedTensorVersioned>(&deleted);
  ro_t->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  NdArray rt = from_dlpack<float>(ro_t, true);
  r = rt = NdArray();
  CHECK(deleted == 5);
}

TEST_CASE("dlpack: arrays kjit cannot export are User errors") {
  CHECK(error_of([] { NdArray().to_dlpack(); }) == "to_dlpack: an empty handle (no array)");
  CHECK(error_of([] { zeros<DlpackPt>({2}).to_dlpack_versioned(); }) ==
        "to_dlpack_versioned: an array of dlpack_tests::DlpackPt: struct elements have no DLPack dtype");
  std::vector<unsigned char> mem(64);
  NdArray odd = NdArray::view(mem.data(), ir_type_of<float>(), {3}, Device::cpu(), {6});
  CHECK(error_of([&] { odd.to_dlpack(); }) ==
        "to_dlpack: the stride of 6 bytes in dimension 0 is not a whole number of float32 (4 bytes): DLPack counts "
        "strides in elements");
}
