// NdArray: allocation, views, gradient buffers, copies between devices.
#include "kjit/runtime/ndarray.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "array_memory.hpp"
#include "checked_size.hpp"
#include "memory.hpp"
#include "graph_capture.hpp"
#include "memory_footprint.hpp"
#include "write_log.hpp"

namespace kjit {

namespace {

/// Checks the extents, and that the array's bytes fit in int64 (so that every product of its
/// extents, and each row-major stride, does too); returns the bytes.
int64_t check_shape(const Shape& shape, const ir::Type& element) {
  if (shape.empty() || shape.size() > size_t(kj::kMaxDims))
    throw Error(ErrorKind::User, "arrays have 1 to 4 dimensions, not " + std::to_string(shape.size()));
  std::string text = detail::shape_text(shape.data(), shape.size());
  for (int64_t e : shape) {
    if (e < 0) throw Error(ErrorKind::User, "array of shape " + text + ": extents must not be negative");
    if (e > INT32_MAX)
      throw Error(ErrorKind::User, "array of shape " + text + ": extent " + std::to_string(e) +
                                       " exceeds the 2^31-1 per dimension");
  }
  int64_t bytes = 0;
  if (!detail::checked_product(shape.data(), shape.size(), std::max<int64_t>(element.element_bytes(), 1), &bytes))
    throw Error(ErrorKind::User, "array of shape " + text + " of " + element.str() +
                                     ": its size in bytes overflows 64 bits");
  return bytes;
}

/// Calls f(offset in the first layout, offset in the second) for every element of `shape` in
/// row-major order, offsets from two layouts' byte strides.
template <class F>
void for_each_element(int ndim, const int64_t* shape, const int64_t* strides, const int64_t* other_strides, int64_t count, F f) {
  int64_t index[kj::kMaxDims] = {};
  for (int64_t n = count; n > 0; --n) {
    int64_t at = 0, other = 0;
    for (int d = 0; d < ndim; ++d) {
      at += index[d] * strides[d];
      other += index[d] * other_strides[d];
    }
    f(at, other);
    for (int d = ndim - 1; d >= 0 && ++index[d] == shape[d]; --d) index[d] = 0;
  }
}

std::vector<int64_t> row_major(const Shape& shape, int64_t element_bytes) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = element_bytes;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

}  // namespace

int64_t NdArray::size() const {
  if (ndim_ == 0) return 0;
  int64_t n = 1;
  for (int d = 0; d < ndim_; ++d) n *= shape_[size_t(d)];
  return n;
}

int64_t NdArray::shape(int dim) const {
  if (dim < 0 || dim >= ndim_)
    throw Error(ErrorKind::User, "shape(" + std::to_string(dim) + ") of a " + std::to_string(ndim_) + "-D array");
  return shape_[size_t(dim)];
}

bool NdArray::is_contiguous() const {
  int64_t s = int64_t(element_bytes());
  for (int d = ndim_ - 1; d >= 0; --d) {
    if (strides_[size_t(d)] != s) return false;
    s *= shape_[size_t(d)];
  }
  return true;
}

void NdArray::set_layout(const Shape& shape, const std::vector<int64_t>& strides) {
  ndim_ = int(shape.size());
  for (size_t d = 0; d < size_t(kj::kMaxDims); ++d) shape_[d] = strides_[d] = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    shape_[d] = shape[d];
    strides_[d] = strides[d];
  }
}

NdArray NdArray::empty(ir::Type element, const Shape& shape, const Device& device) {
  if (element.is_void() || element.is_array())
    throw Error(ErrorKind::User, "array elements are values, not " + element.str());
  int64_t bytes = check_shape(shape, element);
  NdArray a;
  a.element_ = element;
  a.set_layout(shape, row_major(shape, element.element_bytes()));
  a.device_ = device;
  a.memory_ = detail::allocate_array(device, size_t(bytes), &a.data_, element, shape, false);
  return a;
}

NdArray NdArray::zeros(ir::Type element, const Shape& shape, const Device& device) {
  NdArray a = empty(element, shape, device);
  a.zero();
  return a;
}

NdArray NdArray::view(void* data, ir::Type element, const Shape& shape, const Device& device,
                      std::vector<int64_t> strides, void* grad) {
  check_shape(shape, element);
  NdArray a;
  a.element_ = element;
  if (strides.empty()) strides = row_major(shape, element.element_bytes());
  if (strides.size() != shape.size())
    throw Error(ErrorKind::User, "view: " + std::to_string(strides.size()) + " strides for " +
                                     std::to_string(shape.size()) + " dimensions");
  a.set_layout(shape, strides);
  a.device_ = device;
  a.data_ = data;
  a.grad_ = grad;
  return a;
}

void* NdArray::gradient_data() const {
  if (grad_) return grad_;
  char* base = static_cast<char*>(memory_.companion_resource());
  return base ? base + (static_cast<char*>(data_) - static_cast<char*>(memory_.resource())) : nullptr;
}

NdArray NdArray::grad() const {
  void* g_data = gradient_data();
  if (!g_data) return NdArray();
  NdArray g = *this;
  g.data_ = g_data;
  g.memory_ = grad_ ? (grad_memory_ ? grad_memory_ : memory_) : memory_.companion();
  g.grad_ = nullptr;
  g.grad_memory_.reset();
  return g;
}

NdArray& NdArray::requires_grad() {
  if (has_grad()) return *this;
  const size_t owned = memory_.bytes();
  if (owned > 0 && memory_.resource()) {
    // The memory's buffer, as large as the memory: every handle of it finds its elements at its
    // own offset, whatever its view. Described as this array's when it covers all of it.
    const bool whole = data_ == memory_.resource() && size_t(size()) * element_bytes() == owned;
    void* g = nullptr;
    detail::SharedResource buffer = detail::allocate_array(
        device_, owned, &g, element_, whole ? shape() : Shape{int64_t(owned / element_bytes())}, true);
    detail::zero_bytes(device_, g, owned, Stream::default_for(device_));
    memory_.set_companion(buffer);  // another thread's, when it won the race: equally zero
    return *this;
  }
  if (!is_contiguous())
    throw Error(ErrorKind::User, "requires_grad: a view of memory kjit does not own gets a gradient buffer only when it is contiguous");
  size_t bytes = size_t(size()) * element_bytes();
  grad_memory_ = detail::allocate_array(device_, bytes, &grad_, element_, shape(), true);
  detail::zero_bytes(device_, grad_, bytes, Stream::default_for(device_));
  return *this;
}

void NdArray::zero_grad(const Stream& stream) {
  if (!has_grad()) return;
  if (detail::capture_array_step("NdArray::zero_grad", {*this}, [a = *this]() mutable { a.zero_grad(); })) return;
  NdArray g = grad();
  if (g.is_contiguous()) detail::zero_bytes(device_, g.data_, size_t(size()) * element_bytes(), stream);
  else g.copy_from(NdArray::zeros(element_, g.shape(), device_));
}

void NdArray::zero(const Stream& stream) {
  check_writable_view("zero");
  if (detail::capture_array_step("NdArray::zero", {*this}, [a = *this]() mutable { a.zero(); })) return;
  if (is_contiguous()) {
    detail::zero_bytes(device_, data_, size_t(size()) * element_bytes(), stream);
  } else {
    const std::vector<unsigned char> zero(element_bytes(), 0);
    store_each(zero.data());
  }
  detail::note_write(*this, [](const void*) { return std::string("NdArray::zero"); });
}

void NdArray::check_writable_view(const char* what) const {
  if (!is_contiguous() && !device_.is_cpu())
    throw Error(ErrorKind::User, std::string(what) + ": a non-contiguous array is written element by element on the cpu "
                                 "only (write a contiguous array and copy_from it on the cpu)");
}

void NdArray::store_each(const void* value) {
  const size_t bytes = element_bytes();
  for_each_element(ndim_, shape_, strides_, strides_, size(), [&](int64_t at, int64_t) {
    std::memcpy(static_cast<char*>(data_) + at, value, bytes);
  });
}

void NdArray::fill_bytes(const void* value, const Stream& stream) {
  check_writable_view("fill");
  const size_t n = size_t(size()), bytes = element_bytes();
  if (detail::open_capture()) {  // the value as it is now, as a launch's scalar argument
    std::vector<unsigned char> value_now(static_cast<const unsigned char*>(value), static_cast<const unsigned char*>(value) + bytes);
    if (detail::capture_array_step("NdArray::fill", {*this}, [a = *this, value_now]() mutable {
          a.fill_bytes(value_now.data(), Stream());
        }))
      return;
  }
  if (!is_contiguous()) {
    store_each(value);
  } else if (device_.is_cpu()) {
    for (size_t i = 0; i < n; ++i) std::memcpy(static_cast<char*>(data_) + i * bytes, value, bytes);
  } else {
    std::vector<unsigned char> host(n * bytes);
    for (size_t i = 0; i < n; ++i) std::memcpy(host.data() + i * bytes, value, bytes);
    detail::copy_bytes(device_, data_, Device::cpu(), host.data(), host.size(), stream);
    (stream.device() == device_ ? stream : Stream::default_for(device_)).synchronize();  // the host buffer goes now
  }
  detail::note_write(*this, [](const void*) { return std::string("NdArray::fill"); });
}

void NdArray::copy_strided(const NdArray& src) {
  // Element by element in row-major order; both on the cpu.
  const size_t bytes = element_bytes();
  for_each_element(ndim_, shape_, strides_, src.strides_, size(), [&](int64_t to, int64_t from) {
    std::memcpy(static_cast<char*>(data_) + to, static_cast<const char*>(src.data_) + from, bytes);
  });
}

NdArray NdArray::reshape(const Shape& shape) const {
  if (!defined()) throw Error(ErrorKind::User, "reshape of an empty handle");
  if (!is_contiguous()) throw Error(ErrorKind::User, "reshape: the array is not contiguous (copy() it first)");
  Shape target = shape;
  int64_t known = 1;
  bool overflow = false;  // extents whose product passes int64 fit no array
  int inferred = -1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == -1 && inferred < 0) inferred = int(d);
    else if (target[d] < 0) throw Error(ErrorKind::User, "reshape to " + detail::shape_text(shape.data(), shape.size()) +
                                                           ": extents must not be negative (one may be -1)");
    else overflow = overflow || __builtin_mul_overflow(known, target[d], &known);
  }
  bool fits = !overflow && (inferred < 0 ? known == size() : known > 0 && size() % known == 0);
  if (inferred >= 0 && fits) target[size_t(inferred)] = size() / known;
  if (!fits)
    throw Error(ErrorKind::User, "reshape of an array of shape " + detail::shape_text(shape_, size_t(ndim_)) + " to " +
                                     detail::shape_text(shape.data(), shape.size()) + ": " + std::to_string(size()) +
                                     " elements do not fit");
  check_shape(target, element_);
  NdArray v = *this;
  v.set_layout(target, row_major(target, int64_t(element_bytes())));
  return v;
}

NdArray NdArray::slice(int64_t begin, int64_t end) const {
  if (!defined()) throw Error(ErrorKind::User, "slice of an empty handle");
  if (begin < 0 || end < begin || end > shape_[0])
    throw Error(ErrorKind::User, "slice [" + std::to_string(begin) + ", " + std::to_string(end) + ") of an array of shape " +
                                     detail::shape_text(shape_, size_t(ndim_)) + ": out of range");
  NdArray v = *this;
  const int64_t offset = begin * strides_[0];
  v.data_ = static_cast<char*>(data_) + offset;
  if (grad_) v.grad_ = static_cast<char*>(grad_) + offset;
  v.shape_[0] = end - begin;
  return v;
}

NdArray NdArray::operator[](int64_t i) const {
  if (ndim_ < 2)
    throw Error(ErrorKind::User, "operator[] of a " + std::to_string(ndim_) +
                                     "-D array: subarrays are of 2-D to 4-D arrays (read elements with to_vector)");
  if (i < 0 || i >= shape_[0])
    throw Error(ErrorKind::User, "index " + std::to_string(i) + " of an array of shape " +
                                     detail::shape_text(shape_, size_t(ndim_)) + ": out of range");
  NdArray v = slice(i, i + 1);
  Shape shape(shape_ + 1, shape_ + ndim_);
  std::vector<int64_t> strides(strides_ + 1, strides_ + ndim_);
  v.set_layout(shape, strides);
  return v;
}

NdArray NdArray::transpose(std::vector<int> axes) const {
  if (!defined()) throw Error(ErrorKind::User, "transpose of an empty handle");
  if (axes.empty())
    for (int d = ndim_ - 1; d >= 0; --d) axes.push_back(d);
  std::vector<bool> seen(size_t(ndim_), false);
  if (int(axes.size()) != ndim_) seen.clear();
  for (int a : axes) {
    if (seen.empty() || a < 0 || a >= ndim_ || seen[size_t(a)]) {
      throw Error(ErrorKind::User, "transpose of a " + std::to_string(ndim_) +
                                       "-D array: the axes must be a permutation of 0.." + std::to_string(ndim_ - 1));
    }
    seen[size_t(a)] = true;
  }
  Shape shape;
  std::vector<int64_t> strides;
  for (int a : axes) {
    shape.push_back(shape_[size_t(a)]);
    strides.push_back(strides_[size_t(a)]);
  }
  NdArray v = *this;
  v.set_layout(shape, strides);
  return v;
}

NdArray NdArray::to(const Device& device, const Stream& stream) const {
  NdArray out = empty(element_, shape(), device);
  out.copy_from(*this, stream);
  return out;
}

void NdArray::copy_from(const NdArray& src, const Stream& stream) {
  if (src.element_ != element_ || !same_shape(src))
    throw Error(ErrorKind::User, "copy_from: " + src.element_.str() + " array of another shape or type "
                                     "than this " + element_.str() + " array");
  if (detail::capture_array_step("NdArray::copy_from", {*this, src}, [a = *this, src]() mutable { a.copy_from(src); })) return;
  if (!is_contiguous() || !src.is_contiguous()) {
    if (!device_.is_cpu() || !src.device_.is_cpu())
      throw Error(ErrorKind::User, "copy_from: a non-contiguous array is copied on the cpu only (copy it to the cpu first)");
    copy_strided(src);
  } else {
    detail::copy_bytes(device_, data_, src.device_, src.data_, size_t(size()) * element_bytes(), stream);
  }
  detail::note_write(*this, [](const void*) { return std::string("NdArray::copy_from"); });
}

void NdArray::copy_from_host(const void* src, size_t bytes) {
  detail::copy_bytes(device_, data_, Device::cpu(), src, bytes, Stream::default_for(device_));
}

void NdArray::copy_to_host(void* dst, size_t bytes) const {
  if (is_contiguous()) {
    detail::copy_bytes(Device::cpu(), dst, device_, data_, bytes, Stream::default_for(device_));
    return;
  }
  // A strided view: its elements in row-major order, from the bytes they span (brought over
  // first from a device).
  const detail::MemoryFootprint f = detail::footprint_of(*this);
  const char* from = static_cast<const char*>(data_);
  int64_t base = 0;  // the offset of `from`'s byte 0 from data_
  std::vector<char> staged;
  if (!device_.is_cpu() && !f.empty()) {
    staged.resize(size_t(f.end - f.begin));
    base = f.begin - f.data;
    detail::copy_bytes(Device::cpu(), staged.data(), device_, static_cast<const char*>(data_) + base, staged.size(),
                       Stream::default_for(device_));
    from = staged.data();
  }
  const std::vector<int64_t> dense = row_major(shape(), int64_t(element_bytes()));
  const size_t element = element_bytes();
  for_each_element(ndim_, shape_, dense.data(), strides_, size(), [&](int64_t to, int64_t at) {
    std::memcpy(static_cast<char*>(dst) + to, from + (at - base), element);
  });
}

bool NdArray::same_shape(const NdArray& o) const {
  return ndim_ == o.ndim_ && std::equal(shape_, shape_ + ndim_, o.shape_);
}

void NdArray::check_value_count(size_t count, const char* what) const {
  if (int64_t(count) != size())
    throw Error(ErrorKind::User, std::string(what) + ": " + std::to_string(count) +
                                     " values for an array of " + std::to_string(size()) + " elements");
}

void NdArray::check_element(const ir::Type& t, const char* what) const {
  if (t != element_)
    throw Error(ErrorKind::User, std::string(what) + ": the array holds " + element_.str() +
                                     ", not " + t.str());
}

void NdArray::check_field(const ir::Type& element, int ndim) const {
  if (!defined()) return;  // no array: a null field
  if (element != element_ || ndim != ndim_)
    throw Error(ErrorKind::User, "a struct field Array<" + element.str() + ", " + std::to_string(ndim) +
                                     "> cannot hold an array of " + std::to_string(ndim_) + " dimension" +
                                     (ndim_ == 1 ? "" : "s") + " of " + element_.str());
}

kj::array_t<void> NdArray::descriptor() const {
  kj::array_t<void> d{};
  if (!defined()) return d;
  d.data = data_;
  d.grad = gradient_data();
  d.ndim = kj_int32(ndim_);
  for (size_t i = 0; i < size_t(ndim_); ++i) {
    d.shape[i] = kj_int32(shape_[i]);
    d.strides[i] = strides_[i];
  }
  return d;
}

}  // namespace kjit
