// kjit/ir/type.hpp — IR value types: scalars, vectors, matrices, quaternions, transforms,
// structs, and arrays of any of them (defined in kjit/ir_vocab.hpp, which kernel headers
// reach; IR code includes this header and gets <string> for Type::str() and Type::cpp()).
#pragma once

#include <cstdint>
#include <string>

#include "kjit/ir_vocab.hpp"

namespace kjit::ir {

/// The type in which sums over a launch's threads of a value parameter's adjoint are kept:
/// `t` with float16 and bfloat16 components widened to float32 (a sum of thousands of
/// float16 adjoints kept in float16 would keep about three digits); structs as they are.
Type adjoint_sum_type(const Type& t);

}  // namespace kjit::ir
