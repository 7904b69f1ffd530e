// Reading and writing the scalar components ("lanes") of array elements of any kjit type,
// as doubles, for table-driven tests (structs are walked field by field).
#pragma once

#include <vector>

#include "kjit/runtime/ndarray.hpp"

namespace kjit::test {

/// Number of scalar lanes of an element of type `t` (struct fields summed).
int lane_count(const ir::Type& t);
/// The lanes of element `i` of a contiguous host array, converted to double.
std::vector<double> read_lanes(const NdArray& a, int64_t i);
/// Writes lanes of element `i` (converting to each lane's scalar type).
void write_lanes(NdArray& a, int64_t i, const std::vector<double>& lanes);

}  // namespace kjit::test
