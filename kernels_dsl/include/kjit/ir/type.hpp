// kjit/ir/type.hpp — IR value types: scalars, vectors, matrices, quaternions, transforms,
// structs, and arrays of any of them (defined in kjit/ir_vocab.hpp, which kernel headers
// reach; IR code includes this header and gets <string> for Type::str() and Type::cpp()).
#pragma once

#include <cstdint>
#include <string>

#include "kjit/ir_vocab.hpp"
