// kjit/dsl/launch_index.hpp — tid(): which launch index this kernel thread computes.
#pragma once

#include "kjit/dsl/tuple.hpp"
#include "kjit/dsl/value.hpp"

namespace kjit::dsl {

/// The flat launch index of this thread, 0 <= tid() < launch size, for launches of any
/// dimensionality.
Int tid(Loc loc = Loc::here());

/// The N-dimensional launch index: `auto [i, j] = tid<2>();`. A kernel that uses it must be
/// launched with exactly N dimensions.
template <int N>
FixedArray<Int, N> tid(Loc loc = Loc::here()) {
  static_assert(N >= 1 && N <= 4, "kjit: launches have 1 to 4 dimensions");
  detail::use_launch_dims(N, loc);
  FixedArray<Int, N> out;
  for (int k = 0; k < N; ++k)
    out[size_t(k)] = detail::wrap<int32_t>(
        detail::emit(ir::Op::ThreadId, ir::Type::scalar_of(ir::Scalar::I32), {}, k, loc));
  return out;
}

/// The extent of launch dimension `dim`.
Int launch_dim(int dim, Loc loc = Loc::here());

}  // namespace kjit::dsl
