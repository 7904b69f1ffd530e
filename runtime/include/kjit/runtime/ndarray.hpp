// kjit/runtime/ndarray.hpp — n-dimensional arrays on a device, with an optional gradient
// buffer: the runtime's values for Array<T, N> kernel parameters.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kjit/abi.h"
#include "kjit/error.hpp"
#include "kjit/runtime/device.hpp"
#include "kjit/runtime/shared_resource.hpp"
#include "kjit/runtime/stream.hpp"
#include "kjit/types.hpp"

struct DLManagedTensor;  // DLPack's (kjit/runtime/dlpack.hpp, or any dlpack.h)
struct DLManagedTensorVersioned;

namespace kjit {

namespace detail {
struct DlpackAccess;  // from_dlpack gives a view the producer's tensor as its owner
struct MemoryAccess;  // the tape's gradient buffers of intermediates, one per memory
}

/// Extents of an array or a launch, outermost first.
using Shape = std::vector<int64_t>;

/// An array of up to four dimensions of one element type (float32, vec3f, ...), living on
/// one device. Copies share the memory (like a shared pointer); `copy()` duplicates it.
/// Strides are in bytes. An array may carry a gradient buffer of the same layout, which
/// adjoint launches accumulate into.
class NdArray {
 public:
  /// An empty handle (no memory); as a launch argument it means "absent".
  NdArray() = default;

  /// Uninitialised memory for `shape` elements of `element` on `device`.
  static NdArray empty(ir::Type element, const Shape& shape, const Device& device = Device::cpu());
  /// Zero-filled memory.
  static NdArray zeros(ir::Type element, const Shape& shape, const Device& device = Device::cpu());
  /// A view of memory owned elsewhere (an XLA buffer, a user allocation). `strides` in bytes;
  /// empty means contiguous row-major. The memory must outlive every use of the view.
  static NdArray view(void* data, ir::Type element, const Shape& shape, const Device& device,
                      std::vector<int64_t> strides = {}, void* grad = nullptr);
  /// Copies `values` into a new array of `shape` (default: one dimension of values.size()).
  template <class T>
  static NdArray from_vector(const std::vector<T>& values, Shape shape = {},
                             const Device& device = Device::cpu()) {
    if (shape.empty()) shape = {int64_t(values.size())};
    NdArray a = empty(ir_type_of<T>(), shape, device);
    a.check_value_count(values.size(), "from_vector");
    a.copy_from_host(values.data(), values.size() * sizeof(T));
    return a;
  }
  /// The elements, copied to the host in row-major order. T must be the element type.
  template <class T>
  std::vector<T> to_vector() const {
    check_element(ir_type_of<T>(), "to_vector");
    std::vector<T> out(static_cast<size_t>(size()));
    copy_to_host(out.data(), out.size() * sizeof(T));
    return out;
  }

  /// Whether this handle names an array (false for a default-constructed one).
  bool defined() const { return element_.shape != ir::Shape::Void; }
  const ir::Type& element() const { return element_; }
  int ndim() const { return ndim_; }
  /// The extents, outermost first.
  Shape shape() const { return Shape(shape_, shape_ + ndim_); }
  int64_t shape(int dim) const;
  /// Byte strides per dimension.
  std::vector<int64_t> strides() const { return std::vector<int64_t>(strides_, strides_ + ndim_); }
  /// Whether `o` has the same dimensionality and extents.
  bool same_shape(const NdArray& o) const;
  /// Number of elements.
  int64_t size() const;
  /// Bytes of one element.
  size_t element_bytes() const { return size_t(element_.element_bytes()); }
  const Device& device() const { return device_; }
  void* data() const { return data_; }
  /// Whether elements are laid out densely in row-major order.
  bool is_contiguous() const;

  /// The gradient buffer as an array of the same shape (an empty handle when there is none).
  NdArray grad() const;
  /// Gives the array a zeroed gradient buffer if it has none; returns *this. The buffer belongs
  /// to the memory, as in Warp: every handle of it sees it — copies and views made before the
  /// call too (a kjit::Mesh's points, a struct field), each at its own offset. (A view of
  /// memory kjit does not own, NdArray::view or DLPack, gets a buffer of its own: contiguous
  /// only.)
  NdArray& requires_grad();
  bool has_grad() const { return gradient_data() != nullptr; }
  /// Sets the gradient buffer to zero (gradients accumulate across adjoint launches).
  void zero_grad(const Stream& stream = Stream());
  /// Sets every element to zero (Warp's zero_); a strided view's on the cpu only.
  void zero(const Stream& stream = Stream());
  /// Sets every element to `value`, of the element type (Warp's fill_): `a.fill(1.0f)`,
  /// `v.fill(kjit::vec3f(0, 1, 0))`; a strided view's on the cpu only.
  template <class T>
  void fill(const T& value, const Stream& stream = Stream()) {
    check_element(ir_type_of<T>(), "fill");
    fill_bytes(&value, stream);
  }

  /// Views of the same memory and gradient buffer (Warp's array views). A view keeps the memory
  /// alive; writes through it are writes of the array.
  ///
  /// The same elements in row-major order under another shape of as many elements; one extent
  /// may be -1 (inferred). Contiguous arrays only.
  NdArray reshape(const Shape& shape) const;
  /// reshape({size()}).
  NdArray flatten() const { return reshape({size()}); }
  /// Elements [begin, end) along the outermost dimension (Warp's a[begin:end]).
  NdArray slice(int64_t begin, int64_t end) const;
  /// Element `i` of the outermost dimension of a 2-D to 4-D array: an array of one dimension
  /// less (Warp's a[i]).
  NdArray operator[](int64_t i) const;
  /// The dimensions in the order `axes` gives (default: reversed), strides permuted with them.
  NdArray transpose(std::vector<int> axes = {}) const;
  /// A new array with the same contents on `device`.
  NdArray to(const Device& device, const Stream& stream = Stream()) const;
  /// A new (contiguous) array with the same contents on the same device.
  NdArray copy(const Stream& stream = Stream()) const { return to(device_, stream); }
  /// Copies `src` (same element type and shape, any device) into this array; strided arrays
  /// (views) are copied element by element, on the cpu.
  void copy_from(const NdArray& src, const Stream& stream = Stream());

  /// This array as a DLPack tensor that keeps the memory alive until the consumer calls its
  /// deleter (kjit/runtime/dlpack.hpp says how elements and errors are mapped).
  DLManagedTensor* to_dlpack() const;
  DLManagedTensorVersioned* to_dlpack_versioned() const;

  /// The descriptor a kernel receives (kjit/abi.h).
  kj::array_t<void> descriptor() const;

  /// This array as a KJIT_STRUCT's array field (`queue.buffer = buffer;`, Warp's assignment of
  /// an array to a struct member): its element type and dimensionality must be the field's (a
  /// User error otherwise). The field records the memory and the gradient buffer; it does not
  /// keep them alive, and a kernel cannot tell which device they are on.
  template <class T, int N>
  operator ArrayRef<T, N>() const {  // NOLINT: implicit, as an assignment to the field
    check_field(ir_type_of<T>(), N);
    const kj::array_t<void> d = descriptor();
    static_assert(sizeof(ArrayRef<T, N>) == sizeof(d), "kjit: ArrayRef is laid out as array_t");
    ArrayRef<T, N> field;
    std::memcpy(static_cast<void*>(&field), &d, sizeof d);
    return field;
  }

 private:
  void copy_from_host(const void* src, size_t bytes);
  /// Sets every element to the element_bytes() at `value`.
  void fill_bytes(const void* value, const Stream& stream);
  void copy_strided(const NdArray& src);
  void store_each(const void* value);  // every element of a strided array on the cpu
  void check_writable_view(const char* what) const;
  void copy_to_host(void* dst, size_t bytes) const;
  void check_element(const ir::Type& t, const char* what) const;
  void check_value_count(size_t count, const char* what) const;
  /// Throws unless this array (or an empty handle) fits an Array<element, ndim> field.
  void check_field(const ir::Type& element, int ndim) const;
  void set_layout(const Shape& shape, const std::vector<int64_t>& strides);
  /// Where this handle's gradient elements start: its own buffer, or the memory's (set by
  /// requires_grad on any handle of it) at this handle's offset; null when there is none.
  void* gradient_data() const;
  friend struct detail::DlpackAccess;
  friend struct detail::MemoryAccess;

  detail::SharedResource memory_;       ///< owns data_ (empty for views)
  detail::SharedResource grad_memory_;  ///< owns grad_ (views of foreign memory: their own buffer)
  void* data_ = nullptr;
  void* grad_ = nullptr;  ///< a foreign view's gradient; the memory's is memory_'s companion
  ir::Type element_;
  // Fixed-size extents and strides: copying an array (every launch argument is a copy)
  // allocates nothing.
  int64_t shape_[kj::kMaxDims] = {};
  int64_t strides_[kj::kMaxDims] = {};
  int ndim_ = 0;
  Device device_;
};

/// A zero-filled array of element type T: `kjit::zeros<kjit::vec3f>({n})`.
template <class T>
NdArray zeros(const Shape& shape, const Device& device = Device::cpu()) {
  return NdArray::zeros(ir_type_of<T>(), shape, device);
}
/// An uninitialised array of element type T.
template <class T>
NdArray empty(const Shape& shape, const Device& device = Device::cpu()) {
  return NdArray::empty(ir_type_of<T>(), shape, device);
}
/// An array holding `values` (1-D unless `shape` says otherwise).
template <class T>
NdArray from_vector(const std::vector<T>& values, const Shape& shape = {},
                    const Device& device = Device::cpu()) {
  return NdArray::from_vector(values, shape, device);
}

}  // namespace kjit
