// kjit/ir/serializer.hpp — a stable, versioned encoding of IR, hashed into module keys.
#pragma once

#include <string>

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// Version of the encoding below; changes whenever the encoding does.
constexpr int kSerialVersion = 1;

/// Encodes `fn` completely and deterministically: the same kernel gives the same bytes in
/// every process and build folder (source files appear by base name). Any change to the
/// kernel's types, statements, constants or lines changes the bytes.
std::string serialize(const Function& fn);

}  // namespace kjit::ir
