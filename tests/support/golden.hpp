// Golden-file comparison for generated text (IR listings, generated source).
#pragma once

#include <string>

namespace kjit::test {

/// Compares `actual` with tests/golden/<name>. With KJIT_UPDATE_GOLDEN=1 in the environment
/// the file is (re)written instead and the check passes. Returns "" when they match, else a
/// message with the first differing line and how to update.
std::string compare_golden(const std::string& name, const std::string& actual);

}  // namespace kjit::test
