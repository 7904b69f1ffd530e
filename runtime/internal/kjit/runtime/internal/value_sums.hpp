// The sums over a launch's threads of value parameters' adjoints on the cpu: the partial sums a
// cpu adjoint entry writes per block of threads (kjit/abi.h, value_t) and their merge, in
// block order, into the caller's destinations. The runtime's launches and the XLA FFI
// handlers both use it (internal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kjit/abi.h"
#include "kjit/ir/type.hpp"

namespace kjit::detail {

/// The value sums one cpu adjoint launch asked for. Reusable: clear() keeps the storage, so
/// a handler that keeps one allocates only when a launch needs more than any before.
class ValueSums {
 public:
  /// One floating component of a value: its kind and byte offset in the destination's type
  /// and in the sum's (they differ where float16 and bfloat16 sums are kept in float32).
  struct Component {
    ir::Scalar dst_kind, sum_kind;
    size_t dst_offset, sum_offset;
  };
  /// Asks for the sum of the adjoint of a value parameter of `type` whose slot in the packed
  /// parameters is `*slot`, to be added to the `type` at host address `destination`.
  void add(void** slot, void* destination, const ir::Type& type);
  /// Asks for one field of the sum of a struct parameter's adjoint (struct `type`, slot
  /// `*slot`): the `bytes` bytes at `offset` in the struct (a leaf the XLA FFI passes as a
  /// parameter of its own), added to the field's type at `destination`. Fields of one slot
  /// share its partial sums, taken once.
  void add_field(void** slot, const ir::Type& type, size_t offset, size_t bytes, void* destination);
  bool empty() const { return sums_.empty(); }
  size_t size() const { return sums_.size(); }
  /// The alignment run_cpu_entry must keep for a launch of `size` threads: every call's range
  /// starts at a multiple of kj::reduce_block(size) (1 when no sum is asked for).
  int64_t align(int64_t size) const { return sums_.empty() ? 1 : kj::reduce_block(size); }
  /// Points each sum's slot at zeroed partial sums for a launch of `size` threads.
  void prepare(int64_t size);
  /// After the launch: adds each sum's partials, in order and in double precision, to its
  /// destination (one rounding to the destination's type per component).
  void finish();
  /// Points sum `i` at another destination (a vmap batch item's); its slot stays.
  void retarget(size_t i, void* destination) { sums_.at(i).destination = destination; }
  /// Forgets every sum (keeps the storage).
  void clear() { sums_.clear(); }

 private:
  struct Sum {
    void** slot;
    void* destination;
    ir::Type type;
    size_t offset = 0;  ///< of its partials in storage_, in bytes
    /// The part of the value that goes to `destination` (all of it, or one struct field).
    size_t field_offset = 0, field_bytes = SIZE_MAX;
  };
  std::vector<Sum> sums_;
  std::vector<double> storage_;  ///< every sum's partials (8-byte aligned)
  std::vector<Component> components_;  ///< finish()'s work list, kept between calls
  int64_t partials_ = 0;
};

}  // namespace kjit::detail
